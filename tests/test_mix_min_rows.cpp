//===- tests/test_mix_min_rows.cpp - few rows take the plan without mixing ===//
//
// CompileOptions::MixMinRows: with MixOrderColumns, a mixed row kernel of
// fewer rows than launch::MixMinRows is not built when its rows are known
// (the plan without it), and when they are dynamic both plans are compiled
// and each run takes one (Executable::planAt). The dispatch, the plans,
// the option's range, and on a GPU the reference and the unmixed plan's
// bits across the threshold, in direct and CUDA graph runs.
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"

#include "codegen/LaunchRule.h"
#include "driver/Compiler.h"
#include "exec/HostRun.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

CompileOptions mixOptions(int64_t MinRows = -1) {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixOrderColumns = true;
  O.MixMinRows = MinRows;
  return O;
}

/// An RMSNorm of \p Rows known rows beside the column sums of its input.
Graph staticRowsNorm(int64_t Rows) {
  Graph G;
  Value X = G.input("x", f32, {Dim(Rows), Dim(4096)});
  Value W = G.input("w", f32, {Dim(4096)});
  G.output("y", nn::rmsNorm(X, W, G.constant(1e-6)));
  G.output("s", sum(X, llvm::ArrayRef<int64_t>{0}));
  return G;
}

} // namespace

TEST_CASE("MixMinRows: dynamic rows compile both plans and each run takes one",
          "[mix-min-rows]") {
  CHECK(codegen::launch::MixMinRows == 128);
  Graph G = layerNormBackward(Dim(4096));
  Executable X = testCompiler().compile(G, mixOptions());
  REQUIRE(X.numKernels() == 1);
  const Executable *U = X.unmixed();
  REQUIRE(U);
  CHECK(U->numKernels() == 2);
  CHECK(!U->unmixed());
  CHECK_THAT(X.plan(), Contains("runs of fewer than 128 rows take the plan without "
                                "MixOrderColumns (2 kernels"));
  // The rows are B (the graph's one dynamic dim).
  for (int64_t B : {0, 1, 127})
    CHECK(&X.planAt({B}) == U);
  for (int64_t B : {128, 129, 16384})
    CHECK(&X.planAt({B}) == &X);
  // Dims the run would refuse: this plan (run() reports them).
  CHECK(&X.planAt({}) == &X);
  CHECK(&X.planAt({1, 2}) == &X);
  CHECK(&X.planAt({-1}) == &X);

  // Another threshold; 0: the mixed kernel at any rows; off: one plan.
  Executable X1000 = testCompiler().compile(G, mixOptions(1000));
  REQUIRE(X1000.unmixed());
  CHECK(&X1000.planAt({999}) == X1000.unmixed());
  CHECK(&X1000.planAt({1000}) == &X1000);
  CHECK(!testCompiler().compile(G, mixOptions(0)).unmixed());
  CompileOptions Off = mixOptions();
  Off.MixOrderColumns = false;
  Executable XOff = testCompiler().compile(G, Off);
  CHECK(!XOff.unmixed());
  CHECK(&XOff.planAt({1}) == &XOff);
  CHECK_THROWS_AS(testCompiler().compile(G, mixOptions(-2)), Error);
  CHECK_THROWS_AS(Compiler::plan(G, mixOptions(-2)), Error);
}

TEST_CASE("MixMinRows: known rows below it plan without the mixed kernel", "[mix-min-rows]") {
  for (int64_t Rows : {1, 64, 127}) {
    INFO("rows " << Rows);
    Graph G = staticRowsNorm(Rows);
    CHECK(Compiler::plan(G, mixOptions()).Kernels.size() == 2);
    CHECK(Compiler::plan(G, mixOptions(0)).Kernels.size() == 1);
    Executable X = testCompiler().compile(G, mixOptions());
    CHECK(X.numKernels() == 2);
    CHECK(!X.unmixed());
    // The kernel counts expected of the mixed plan do not bind the other.
    CompileOptions Expect = mixOptions();
    Expect.ExpectKernels = 1;
    CHECK(testCompiler().compile(G, Expect).numKernels() == 2);
  }
  for (int64_t Rows : {128, 5000}) {
    INFO("rows " << Rows);
    Graph G = staticRowsNorm(Rows);
    CHECK(Compiler::plan(G, mixOptions()).Kernels.size() == 1);
    Executable X = testCompiler().compile(G, mixOptions());
    CHECK(X.numKernels() == 1);
    CHECK(!X.unmixed());
  }
}

TEST_CASE("MixMinGroupRows sets the fewest rows a group (an experiment)", "[mix-min-rows]") {
  using codegen::launch::mixGroups;
  using codegen::launch::mixRowsPerGroup;
  CHECK(mixRowsPerGroup(512) == 1);
  CHECK(mixRowsPerGroup(512, 512, 8) == 8);
  CHECK(mixGroups(512, 512, 8) == 64);
  CHECK(mixGroups(513, 512, 8) == 65);
  CHECK(mixRowsPerGroup(16384, 512, 8) == 32); // the rule's count is more
  CHECK(mixGroups(5, 512, 8) == 1);
  Graph G = layerNormBackward(Dim(4096));
  CompileOptions O = mixOptions(0);
  O.MixMinGroupRows = 8;
  GraphPlan P = Compiler::plan(G, O);
  REQUIRE(P.Kernels.size() == 1);
  CHECK(P.Kernels[0].MixMinGroupRows == 8);
  codegen::LaunchRule L(P.Kernels[0]);
  auto S = L.shape({int64_t(512) * 4096, 512, 4096}, 8, 132, false);
  REQUIRE(S);
  CHECK(S->GridX == 64 + 256);
  Executable X = testCompiler().compile(G, O);
  CHECK_THAT(X.source(), Contains("const long long jf_rg = jf_rg0 < 8 ? (long long)8 : jf_rg0;"));
  // The rule's: one row a group up to 512 rows, and the expression as before.
  CHECK(Compiler::plan(G, mixOptions(0)).Kernels[0].MixMinGroupRows == 1);
  CHECK_THAT(testCompiler().compile(G, mixOptions(0)).source(),
             !Contains("jf_rg0"));
  O.MixMinGroupRows = -1;
  CHECK_THROWS_AS(Compiler::plan(G, O), Error);
  O.MixMinGroupRows = 4097;
  CHECK_THROWS_AS(Compiler::plan(G, O), Error);
}

TEST_CASE("GPU: groups of several rows match the reference", "[gpu][mix-min-rows]") {
  if (!haveGpu())
    return;
  Graph G = layerNormBackward(Dim(4096));
  for (int64_t B : {5, 512, 1001}) {
    INFO("B=" << B);
    CheckOptions O;
    O.MixOrderColumns = true;
    O.MixMinRows = 0;
    O.MixMinGroupRows = 8;
    O.ExpectFusedKernels = 1;
    checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
  }
}

// Across the threshold: the reference, and below it the bits of the plan
// compiled without MixOrderColumns, in direct and CUDA graph runs whose
// dims move between the two plans.
TEST_CASE("GPU: runs below MixMinRows take the unmixed plan's bits", "[gpu][mix-min-rows]") {
  if (!haveGpu())
    return;
  Graph G = layerNormBackward(Dim(4096));
  CompileOptions Off = mixOptions();
  Off.MixOrderColumns = false;
  Executable Mixed = testCompiler().compile(G, mixOptions());
  Executable Plain = testCompiler().compile(G, Off);
  for (int64_t B : {1, 127, 128, 700}) {
    INFO("B=" << B);
    CheckOptions O;
    O.MixOrderColumns = true;
    O.ExpectFusedKernels = 1;
    checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
    Bindings In = randomBindings(G, {{"B", B}}, {});
    std::map<std::string, HostTensor> A = runOnDevice(Mixed, In), P = runOnDevice(Plain, In);
    if (B < 128)
      for (const char *Out : {"dx", "dw", "db"})
        CHECK(A.at(Out).Data == P.at(Out).Data);
  }
  // Graph mode follows the plan each run takes.
  std::vector<std::pair<int64_t, Bindings>> Runs;
  for (int64_t B : {3, 300, 3})
    Runs.emplace_back(B, randomBindings(G, {{"B", B}}, {}));
  std::vector<std::map<std::string, HostTensor>> Direct;
  for (auto &[B, In] : Runs)
    Direct.push_back(runOnDevice(Mixed, In));
  Mixed.setCudaGraph(true);
  REQUIRE(Mixed.unmixed());
  CHECK(Mixed.unmixed()->cudaGraph());
  for (size_t I = 0; I < Runs.size(); ++I) {
    INFO("graph run " << I << " B=" << Runs[I].first);
    std::map<std::string, HostTensor> Got = runOnDevice(Mixed, Runs[I].second);
    for (const char *Out : {"dx", "dw", "db"})
      CHECK(Got.at(Out).Data == Direct[I].at(Out).Data);
  }
}
