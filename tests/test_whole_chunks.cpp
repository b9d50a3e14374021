//===- tests/test_whole_chunks.cpp - CompileOptions::WholeChunkPaths ------===//
//
// An element-wise row kernel whose 16-bit input is broadcast over the rows
// (x + bias, then GELU) under odd-length or offset rows: the bias sits at
// another phase than the chunks, row by row. With WholeChunkPaths the
// peeled variant has a path for whole chunks (the bias as two aligned
// 16-byte blocks, jf_load_whole) and one for a row's partial chunks (per
// lane). An experiment, off by default until measured on the H200. The CPU
// case reads the plan and the kernel text; the GPU case runs odd rows and
// offsets against the reference, fused and unfused.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"
#include "TestEnv.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace jitfuse;
using namespace jitfuse::test;

TEST_CASE("WholeChunkPaths: a broadcast 16-bit input is read 16 bytes at a time in whole "
          "chunks",
          "[codegen][wholechunks]") {
  for (DType T : {DType::BF16, DType::F16, DType::F32}) {
    INFO("dtype " << dtypeName(T).str());
    CompileOptions On, Off;
    On.Arch = Off.Arch = "sm_90";
    On.WholeChunkPaths = true;
    // The by-rows kernel WholeChunkPaths changes (odd rows with a bias run
    // flat by default).
    On.FlatRowBroadcast = Off.FlatRowBroadcast = false;
    Executable E = testCompiler().compile(biasGelu(T, 4095), On);
    INFO(E.plan());
    bool Half = T != DType::F32; // 16-byte chunks of 2-byte elements only
    CHECK((E.plan().find("(WholeChunkPaths)") != std::string::npos) == Half);
    std::string ST = T == DType::BF16 ? "jf_bf16" : "jf_f16";
    CHECK(countOf(E.source(), fmt::format("jf_load_whole<{}, 8>(in_1 + col)", ST)) ==
          (Half ? 1u : 0u));
    CHECK(countOf(E.source(), fmt::format("jf_load_part<{}, 8>(in_1 + col", ST)) ==
          (Half ? 1u : 0u));
    CHECK(!E.ptx().empty());
    // Off (the default): one path, the bias through jf_load_chunk.
    Executable Plain = testCompiler().compile(biasGelu(T, 4095), Off);
    CHECK(Plain.plan().find("WholeChunkPaths") == std::string::npos);
    CHECK(Plain.source().find("jf_load_whole<") == std::string::npos);
  }
  // Not without a broadcast input: x * y over the same rows.
  Graph G;
  Value X = G.input("x", DType::BF16, {"B", 4095});
  Value Y = G.input("y", DType::BF16, {"B", 4095});
  G.output("p", X * Y);
  CompileOptions On;
  On.Arch = "sm_90";
  On.WholeChunkPaths = true;
  CHECK(testCompiler().compile(G, On).plan().find("WholeChunkPaths") == std::string::npos);
}

TEST_CASE("GPU: WholeChunkPaths bias + GELU matches the reference at odd rows and offsets",
          "[gpu][wholechunks]") {
  // Rows of 4095 and 1021 (every row at a new phase), 4096 with offsets;
  // offsets in elements per tensor (x, bias, out).
  std::vector<std::vector<unsigned>> Layouts = {{0}, {1}, {3, 0, 3}, {0, 5, 0}, {2, 7, 1}};
  for (DType T : {DType::BF16, DType::F16})
    for (int64_t H : {int64_t(4095), int64_t(1021), int64_t(4096), int64_t(13)})
      for (int64_t Rows : {int64_t(1), int64_t(37)}) {
        Graph G = biasGelu(T, H);
        for (const std::vector<unsigned> &L : Layouts) {
          INFO("dtype " << dtypeName(T).str() << ", rows of " << H << ", " << Rows
                        << " rows, offsets " << fmt::format("{}", fmt::join(L, "/")));
          CheckOptions Opts;
          Opts.WholeChunkPaths = true;
          Opts.FlatRowBroadcast = false; // odd rows by rows, not flat
          Opts.MisalignEach = L;
          checkGraph(G, randomBindings(G, {{"B", Rows}}, {}), Opts);
        }
      }
}
