//===- tests/test_group_stores.cpp - CompileOptions::GroupStores ----------===//
//
// An element-wise row whose chunks stay at the row start and go piece by
// piece over a concat's pieces (RoPE's halves) stores a misaligned 16-bit
// output chunk a piece's lanes at a time: one aligned 16-byte block a lane
// built with the previous lane's chunk by shuffle, and the group's edges
// (jf_store_group). On by default, but only where PieceWrapChunks (also on)
// is off: that option keeps the chunks at the lead's phase instead, so these
// cases turn it off. The CPU case reads the plan, the kernel text and the PTX; the GPU
// case runs RoPE at every offset against the reference, fused and unfused.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RopeGraph.h"
#include "TestEnv.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace jitfuse;
using namespace jitfuse::test;

TEST_CASE("GroupStores: RoPE's misaligned 16-bit chunks are stored through shuffles",
          "[codegen][groupstores]") {
  for (DType T : {DType::BF16, DType::F16, DType::F32}) {
    for (int64_t D : {int64_t(64), int64_t(128)}) {
      INFO("dtype " << dtypeName(T).str() << ", head dim " << D);
      CompileOptions On, Off;
      On.Arch = Off.Arch = "sm_90";
      On.GroupStores = true; // the default
      Off.GroupStores = false;
      On.PieceWrapChunks = Off.PieceWrapChunks = false;
      Executable E = testCompiler().compile(ropeGraph(T, 5, D), On);
      INFO(E.plan());
      bool Half = T != DType::F32; // 16-byte chunks of 2-byte elements only
      CHECK((E.plan().find("(GroupStores)") != std::string::npos) == Half);
      // Both pieces' branches of the peeled variant, a group of D / 2 / 8
      // lanes each.
      std::string Call = fmt::format("jf_store_group<{}, 8, {}>(", T == DType::BF16 ? "jf_bf16"
                                                                                  : "jf_f16",
                                     D / 2 / 8);
      CHECK(countOf(E.source(), Call) == (Half ? 2u : 0u));
      std::map<std::string, std::string> K = ptxEntries(E.ptx());
      size_t Shuffles = 0;
      for (const auto &[Name, Body] : K)
        Shuffles += countOf(Body, "shfl.sync.up");
      CHECK((Shuffles > 0) == Half);
      Executable Plain = testCompiler().compile(ropeGraph(T, 5, D), Off);
      CHECK(Plain.source().find("jf_store_group<") == std::string::npos);
      CHECK(Plain.plan().find("GroupStores") == std::string::npos);
    }
  }
}

TEST_CASE("GroupStores: not for pieces of one chunk", "[codegen][groupstores]") {
  // Head dim 16: halves of 8 bf16 elements, one chunk a piece, no
  // neighbour lane (a random graph's jf_store_group<..., 1> failed its
  // static_assert in NVRTC).
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.PieceWrapChunks = false;
  Executable E = testCompiler().compile(ropeGraph(DType::BF16, 4, 16), Opts);
  INFO(E.plan());
  CHECK(E.plan().find("GroupStores") == std::string::npos);
  CHECK(E.source().find("jf_store_group<") == std::string::npos);
  CHECK(!E.ptx().empty());
}

TEST_CASE("GPU: GroupStores RoPE matches the reference at every offset",
          "[gpu][groupstores]") {
  // Offsets in elements per tensor (q, cos, sin, out): all at one phase,
  // the output at another phase than q, odd ones; 7 and 133 rows leave the
  // last group of rows part empty.
  std::vector<std::vector<unsigned>> Layouts = {
      {0}, {1}, {3}, {7}, {3, 0, 1, 2}, {0, 0, 0, 5}, {6, 2, 2, 1}};
  for (DType T : {DType::BF16, DType::F16})
    for (auto [Heads, D] : {std::pair<int64_t, int64_t>{5, 64}, {3, 128}, {1, 32}})
      for (int64_t Rows : {int64_t(7), int64_t(133)}) {
        Graph G = ropeGraph(T, Heads, D);
        for (const std::vector<unsigned> &L : Layouts) {
          INFO("dtype " << dtypeName(T).str() << ", " << Heads << " heads of " << D << ", "
                        << Rows << " rows, offsets " << fmt::format("{}", fmt::join(L, "/")));
          CheckOptions Opts;
          Opts.GroupStores = true;
          Opts.PieceWrapChunks = false;
          Opts.MisalignEach = L;
          checkGraph(G, randomBindings(G, {{"T", Rows}}, {}), Opts);
        }
      }
}
