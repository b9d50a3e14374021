//===- tests/test_row_stats_width.cpp - per-row inputs and the width -----===//
//
// CompileOptions::RowStatsSetWidth (off, the rule since session 40; on for
// comparisons): on, a row kernel's per-row inputs ([rows, 1], read once a
// row as scalars, as a norm backward's saved f32 mean and rstd) set its
// vector width like every other input, so a bf16 row of the norm
// backwards' row kernel moves 16-byte chunks of 4 f32 elements: 8 bytes of
// the row a load. Off, only the chunked tensors set it (as in mixed
// kernels; row reductions only), unless the row's own chunks would be too
// few for a few-rows form that the narrower ones get. The plans and code on
// the CPU; the reference on a GPU.
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"

#include "driver/Compiler.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

CompileOptions statsOptions(bool StatsSetWidth) {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixOrderColumns = false; // the norm backward's row kernel alone
  O.RowStatsSetWidth = StatsSetWidth;
  O.DeferVariants = false;
  return O;
}

} // namespace

TEST_CASE("RowStatsSetWidth: f32 statistics and a 16-bit row's width", "[row-stats-width]") {
  for (const Graph &G : {layerNormBackward(Dim(11008)), rmsNormBackward(bf16, Dim(4099))}) {
    GraphPlan On = Compiler::plan(G, statsOptions(true));
    GraphPlan Off = Compiler::plan(G, statsOptions(false));
    REQUIRE(!On.Kernels.empty());
    REQUIRE(On.Kernels.size() == Off.Kernels.size());
    // The row kernel is the first; its row is bf16 either way.
    CHECK(On.Kernels[0].Vecs.front() == 4);
    CHECK(Off.Kernels[0].Vecs.front() == 8);
    CHECK_THAT(Off.Kernels[0].Why, Contains("2 B elements in 16-byte chunks of 8"));
    // Compiled: no warning, no spill in any variant.
    Executable E = testCompiler().compile(G, statsOptions(false));
    CHECK(E.compileLog().find("warning") == std::string::npos);
    for (const rt::KernelResources &K : E.kernelResources()) {
      INFO("kernel " << K.Name << ": " << K.Registers << " registers");
      CHECK(K.SpillStoreBytes == 0);
      CHECK(K.StackBytes == 0);
    }
  }
  // An f32 row keeps its width (4) either way.
  CHECK(Compiler::plan(rmsNormBackward(f32, Dim(4096)), statsOptions(false)).Kernels[0]
            .Vecs.front() == 4);
  // Element-wise kernels by rows keep theirs: the option is the row
  // kernels' (a [B, 1] operand of an element-wise kernel is read per chunk).
  Graph G;
  Value X = G.input("x", bf16, {"B", Dim(4096)});
  G.output("y", cast(cast(X, f32) * G.input("rstd", f32, {"B", 1}), bf16));
  CHECK(Compiler::plan(G, statsOptions(false)).Kernels[0].Vecs.front() == 4);
  // The default is off.
  CHECK(!CompileOptions().RowStatsSetWidth);
}

TEST_CASE("RowStatsSetWidth off: a row keeps the statistics' width where its own chunks "
          "would lose the few-rows form",
          "[row-stats-width]") {
  // bf16 x 32064: 8016 chunks of 4 (a few-rows form: launch::fewRowsChunks)
  // against 4008 of 8 (none); x 14336: too few either way, so the row's
  // own width; x 128256: enough either way, the row's own width.
  struct Case {
    int64_t H;
    int Vec;
    bool Kept;
  };
  for (Case C : {Case{32064, 4, true}, Case{14336, 8, false}, Case{128256, 8, false}})
    for (const Graph &G : {layerNormBackward(Dim(C.H)), rmsNormBackward(bf16, Dim(C.H))}) {
      INFO("x " << C.H);
      GraphPlan P = Compiler::plan(G, statsOptions(false));
      REQUIRE(!P.Kernels.empty());
      const KernelPlan &K = P.Kernels[0];
      CHECK(K.Vecs.front() == C.Vec);
      CHECK((K.Why.find("too few for a few-rows form") != std::string::npos) == C.Kept);
      // Where the width was kept, the few-rows form is there; with the
      // row's own width, a row of 32064 has none.
      if (C.Kept)
        CHECK(K.FewRows != nullptr);
      if (C.H == 128256)
        CHECK(K.FewRows != nullptr);
    }
}

TEST_CASE("GPU: rows whose statistics do not set the width match the reference",
          "[gpu][row-stats-width]") {
  if (!haveGpu())
    return;
  struct Case {
    const char *Name;
    Graph G;
  };
  std::vector<Case> Cases;
  Cases.push_back({"LayerNorm backward bf16 x 1021", layerNormBackward(Dim(1021))});
  Cases.push_back({"RMSNorm backward f16 x 4096", rmsNormBackward(f16, Dim(4096))});
  Cases.push_back({"RMSNorm backward bf16 x 4099", rmsNormBackward(bf16, Dim(4099))});
  Cases.push_back({"LayerNorm backward bf16 x 11008", layerNormBackward(Dim(11008))});
  for (Case &C : Cases)
    for (int64_t B : {1, 7, 300})
      for (unsigned Off : {0u, 1u, 3u}) {
        INFO(C.Name << " B=" << B << " offset " << Off);
        CheckOptions O;
        O.MixOrderColumns = false;
        O.RowStatsSetWidth = false;
        O.MisalignElems = Off;
        checkGraph(C.G, randomBindings(C.G, {{"B", B}}, {}, O), O);
      }
}
