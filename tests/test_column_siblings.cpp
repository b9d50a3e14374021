//===- tests/test_column_siblings.cpp - sibling column reductions ---------===//
//
// FusionOptions::SiblingColumnReductions (on by default since session 29):
// column reductions over one [R, C] domain that share a load become one
// kernel with several reductions (compiler/ColumnSiblings.h,
// codegen/ColumnReduce.h). Plans and bytes, the refusals, the launch
// rule's partials, the source through NVRTC, and on a GPU fused vs unfused
// vs the fp64 reference (the split path and misaligned pointers included).
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"

#include "codegen/Codegen.h"
#include "codegen/LaunchRule.h"
#include "compiler/Fusion.h"
#include "compiler/Planner.h"
#include "compiler/Schedule.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

/// Four column reductions of x and y (sum, mean, max, min): every pair
/// shares x or y.
Graph fourReductions(DType T, Dim C) {
  Graph G;
  Value X = G.input("x", T, {"R", C});
  Value Y = G.input("y", T, {"R", C});
  G.output("sum", sum(cast(X, f32), {0}));
  G.output("mean", mean(X * Y, {0}));
  G.output("max", reduceMax(X, {0}));
  G.output("min", reduceMin(Y, {0}));
  return G;
}

FusionOptions siblings(bool StoredValues = false) {
  FusionOptions O;
  O.SiblingColumnReductions = true;
  O.RecomputeStoredValues = StoredValues;
  O.MixOrderColumns = false; // the column sums in kernels of their own
  return O;
}

/// The defaults with SiblingColumnReductions off.
FusionOptions apart() {
  FusionOptions O;
  O.SiblingColumnReductions = false;
  return O;
}

CompileOptions cpuOptions() {
  CompileOptions O;
  O.Arch = "sm_90";
  O.SiblingColumnReductions = true;
  O.MixOrderColumns = false; // the column sums in kernels of their own
  return O;
}

} // namespace

TEST_CASE("SiblingColumnReductions: four column reductions of x and y are one kernel",
          "[column-reduce][siblings]") {
  Graph G = fourReductions(bf16, Dim(4096));
  CHECK(fuseGraph(G, apart()).Clusters.size() == 4);
  CHECK(fuseGraph(G).Clusters.size() == 1); // on by default
  Partition P = fuseGraph(G, siblings());
  REQUIRE(P.Clusters.size() == 1);
  CHECK(P.Clusters[0].Kind == KernelKind::ColumnReduce);
  CHECK(P.Clusters[0].Outputs.size() == 4);
  // x and y read once: 4 B an element instead of 2 + 4 + 2 + 2.
  CHECK(planTotal(G, apart()) == "total: 4 kernels, 40960*R + 40960 bytes");
  CHECK(planTotal(G, siblings()) == "total: 1 kernel, 16384*R + 40960 bytes");

  KernelPlan K = scheduleCluster(G, P.Clusters[0], 0);
  CHECK(K.ColumnReductions == 4);
  codegen::EmittedKernel E = codegen::emitKernel(G, K);
  // Each reduction its partials: four times one reduction's (any R).
  Graph One;
  One.output("s", sum(cast(One.input("x", bf16, {"R", 4096}), f32), {0}));
  KernelPlan K1 = scheduleCluster(One, fuseGraph(One).Clusters[0], 0);
  CHECK(K1.ColumnReductions == 1);
  codegen::EmittedKernel E1 = codegen::emitKernel(One, K1);
  CHECK(E.Launch.partialsBytes(132) == 4 * E1.Launch.partialsBytes(132));
  CHECK(E.Launch.counters() == E1.Launch.counters());
  // Accumulators, shared partials and split partials by reduction; one
  // reduction keeps its spellings.
  for (const codegen::EmittedKernel::Variant &V : E.Variants) {
    CHECK_THAT(V.Text, Contains("acc[3]["));
    CHECK_THAT(V.Text, Contains("__shared__ float jf_col[4][8]"));
    CHECK_THAT(V.Text, Contains("jf_partials[(3 * ("));
  }
  CHECK_THAT(E1.Variants[0].Text, Contains("__shared__ float jf_col[8]"));
}

TEST_CASE("SiblingColumnReductions: the merged kernel compiles with NVRTC for odd shapes",
          "[column-reduce][siblings]") {
  for (DType T : {f32, bf16})
    for (Dim C : {Dim(7), Dim(4096), Dim(4097), Dim("C")}) {
      INFO("dtype " << dtypeName(T).str() << " C=" << C.str());
      Graph G = fourReductions(T, C);
      Executable F = testCompiler().compile(G, cpuOptions());
      REQUIRE(F.numKernels() == 1);
      CHECK(F.kernels()[0].Kind == KernelKind::ColumnReduce);
    }
}

TEST_CASE("SiblingColumnReductions: LayerNorm backward's dw and db share a kernel",
          "[column-reduce][siblings]") {
  Graph G = layerNormBackward(Dim(4096));
  // Alone the sums read two different stored values: nothing is shared.
  CHECK(planTotal(G, siblings()) == "total: 3 kernels, 90120*B + 40960 bytes");
  // With RecomputeStoredValues both read x and dy: one kernel, dy once.
  CHECK(planTotal(G, siblings(true)) == "total: 2 kernels, 40976*B + 40960 bytes");
  Partition P = fuseGraph(G, siblings(true));
  REQUIRE(P.Clusters.size() == 2);
  CHECK(P.Clusters[1].Kind == KernelKind::ColumnReduce);
  CHECK(P.Clusters[1].Outputs.size() == 2);
  // The f32 [B, 1] mean and rstd are scalars a row: bf16 x and dy set 8
  // columns a thread (16-byte loads), not 4.
  {
    CompileOptions O = cpuOptions();
    O.RecomputeStoredValues = true;
    Executable F = testCompiler().compile(G, O);
    REQUIRE(F.numKernels() == 2);
    CHECK(F.kernels()[1].Kind == KernelKind::ColumnReduce);
    CHECK(F.kernels()[1].Vecs == std::vector<int>{8, 1});
    CHECK_THAT(F.kernels()[1].Source, Contains("jf_load<jf_bf16, 8>"));
  }

  Graph Odd = layerNormBackward(Dim(1001));
  CompileOptions O = cpuOptions();
  O.RecomputeStoredValues = true;
  Executable F = testCompiler().compile(Odd, O);
  CHECK(F.numKernels() == 2);
}

TEST_CASE("SiblingColumnReductions: what does not merge", "[column-reduce][siblings]") {
  // Different domains ([R, 64] and [K, 64]) sharing the [64] weight.
  {
    Graph G;
    Value W = G.input("w", f32, {64});
    G.output("a", sum(G.input("x", f32, {"R", 64}) * W, {0}));
    G.output("b", sum(G.input("z", f32, {"K", 64}) * W, {0}));
    CHECK(fuseGraph(G).Clusters.size() == 2);
    CHECK(fuseGraph(G, siblings()).Clusters.size() == 2);
  }
  // The second reads the first's result.
  {
    Graph G;
    Value X = G.input("x", f32, {"R", 64});
    Value S = sum(X, {0});
    G.output("s", S);
    G.output("t", sum(X * S, {0}));
    Partition P = fuseGraph(G, siblings());
    CHECK(P.Clusters.size() == 2);
  }
  // An epilogue on one result (a column logsumexp's log): it reads one
  // reduction, so that kernel keeps one. The max (no epilogue) and the
  // total, both of x, do merge.
  {
    Graph G;
    Value X = G.input("x", f32, {"R", 64});
    Value M = reduceMax(X, {0});
    Value Lse = M + log(sum(exp(X - M), {0}));
    G.output("lse", Lse);
    G.output("total", sum(X, {0}));
    CHECK(fuseGraph(G, apart()).Clusters.size() == 3);
    Partition P = fuseGraph(G, siblings());
    REQUIRE(P.Clusters.size() == 2);
    for (const Cluster &C : P.Clusters) {
      size_t Reductions = 0;
      for (NodeId N : C.Nodes)
        Reductions += isReduction(G.node(N).Kind);
      bool HasLse = std::find(C.Outputs.begin(), C.Outputs.end(), Lse.id()) != C.Outputs.end();
      CHECK(Reductions == (HasLse ? 1u : 2u));
    }
    CHECK_NOTHROW(testCompiler().compile(G, cpuOptions()));
  }
}

TEST_CASE("GPU: sibling column reductions match the reference", "[gpu][column-reduce][siblings]") {
  if (!haveGpu())
    return;
  for (DType T : {f32, bf16})
    for (int64_t C : {7, 4096, 4097}) {
      INFO("dtype " << dtypeName(T).str() << " C=" << C);
      Graph G = fourReductions(T, Dim(C));
      std::vector<int64_t> Rs = {1, 3, 1000};
      if (C < 100)
        Rs.push_back(65537); // the most splits over one tile
      for (int64_t R : Rs) {
        INFO("R=" << R);
        CheckOptions O;
        O.SiblingColumnReductions = true;
        O.ExpectFusedKernels = 1;
        checkGraph(G, randomBindings(G, {{"R", R}}, {}, O), O);
        O.MisalignEach = {1, 3};
        checkGraph(G, randomBindings(G, {{"R", R}}, {}, O), O);
      }
    }
  // LayerNorm backward with both options: one tile-split path (B large);
  // without MixOrderColumns, which takes rows of 1001 columns since
  // session 38 (one kernel, checked as well).
  Graph G = layerNormBackward(Dim(1001));
  for (int64_t B : {37, 20011}) {
    CheckOptions O;
    O.SiblingColumnReductions = O.RecomputeStoredValues = true;
    O.MixOrderColumns = false;
    O.ExpectFusedKernels = 2;
    checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
    O.MixOrderColumns = true;
    O.ExpectFusedKernels = 1;
    checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
  }
}
