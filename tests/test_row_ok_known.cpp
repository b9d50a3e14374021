//===- tests/test_row_ok_known.cpp - CompileOptions::RowOkKnown -----------===//
//
// An experiment (off): a row kernel of a block a row launches a block per
// row (per row and cluster rank), so every block's row exists and the row
// test can be a constant, letting the compiler share what each stage's
// `if (rowOk)` repeated. The plan and the kernel text here; on the GPU the
// kernels against the fp64 reference at odd rows and offsets.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

Executable compileKnown(const Graph &G, bool On) {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.DeferVariants = false;
  Opts.RowOkKnown = On;
  return testCompiler().compile(G, Opts);
}

} // namespace

TEST_CASE("RowOkKnown: a block a row declares its row, several rows a block do not",
          "[codegen][rowokknown]") {
  for (DType T : {DType::F32, DType::BF16}) {
    INFO(dtypeName(T).str());
    Executable On = compileKnown(layerNorm(T, 4095), true);
    Executable Off = compileKnown(layerNorm(T, 4095), false);
    REQUIRE(On.kernels().size() == 1);
    REQUIRE(On.kernels()[0].RowsPerBlock == 1);
    CHECK(On.plan().find("(RowOkKnown)") != std::string::npos);
    CHECK(Off.plan().find("RowOkKnown") == std::string::npos);
    std::string K = kernelSource(On);
    CHECK(K.find("constexpr bool rowOk = true;") != std::string::npos);
    CHECK(K.find("const bool rowOk") == std::string::npos);
    CHECK(kernelSource(Off).find("constexpr bool rowOk") == std::string::npos);
    CHECK(On.compileLog().find("warning") == std::string::npos);
  }
  // Short rows take several a block (threadIdx.y): the last block's rows
  // past the end keep their test.
  Executable Short = compileKnown(softmax(DType::F32, 64), true);
  REQUIRE(Short.kernels().size() == 1);
  REQUIRE(Short.kernels()[0].RowsPerBlock > 1);
  CHECK(Short.plan().find("RowOkKnown") == std::string::npos);
  CHECK(kernelSource(Short).find("const bool rowOk = row <") != std::string::npos);
}

TEST_CASE("GPU: RowOkKnown rows match the reference, odd rows, offsets, few rows",
          "[gpu][rowokknown]") {
  if (!haveGpu())
    return;
  // Few rows take the few-rows forms (a row over a cluster, or 1024
  // threads a row), whose grids are the rows too; long rows only at few
  // rows (the fp64 reference of many is most of a case's time).
  for (DType T : {DType::F32, DType::BF16, DType::F16}) {
    for (int64_t H : {int64_t(1021), int64_t(4096), int64_t(32064)}) {
      Graph Gs[] = {layerNorm(T, H), addRmsNorm(T, H), softmax(T, H)};
      for (const Graph &G : Gs) {
        for (int64_t Rows : {int64_t(1), int64_t(7), int64_t(H > 4096 ? 3 : 600)}) {
          INFO(dtypeName(T).str() << " x " << H << ", rows " << Rows);
          CheckOptions CO;
          CO.RowOkKnown = true;
          checkAlignedAndMisaligned(G, {{"B", Rows}}, CO);
        }
      }
    }
  }
}
