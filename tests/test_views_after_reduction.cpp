//===- tests/test_views_after_reduction.cpp - reshapes of a row kernel's rows ===//
//
// Issue 14, item 2: a view after a reduction stays in the row kernel when it
// relabels the rows' elements (same elements, same order): GroupNorm's
// output back in [N, C, HW] with its per-channel affine, per-head norms
// written back as [T, H*D]. The kernel computes such nodes at the row's own
// coordinates; broadcast operands of the new shape (GroupNorm's weight
// [C, 1]) are read at coordinates unflattened from the linear index. Plans
// are checked on the CPU; with a GPU every graph runs fused and unfused
// against the fp64 reference, at odd sizes and misaligned pointers.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "compiler/Fusion.h"
#include "compiler/Planner.h"
#include "examples/ExampleGraphs.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {

/// rmsNorm over each head of D of x [T, H*D], written back as [T, H*D].
Value headRmsNorm(Graph &G, Value X, int64_t H, int64_t D) {
  Value W = G.input("w", X.dtype(), {D});
  Value Eps = G.constant(1e-6, f32);
  Value Heads = reshape(X, {"T", H, D});
  return reshape(nn::rmsNorm(Heads, W, Eps), {"T", H * D});
}

/// GroupNorm(Groups) of x [N, C, HW] with weight and bias [C, 1].
Value groupNorm(Graph &G, Value X, int64_t Groups) {
  int64_t C = X.shape()[1].Size, HW = X.shape()[2].Size;
  Value W = G.input("w", X.dtype(), {C, 1});
  Value B = G.input("b", X.dtype(), {C, 1});
  Value XF = cast(reshape(X, {"N", Groups, C / Groups, HW}), f32);
  Value D = XF - mean(XF, {-2, -1});
  Value Norm = D * rsqrt(mean(D * D, {-2, -1}) + 1e-5);
  return cast(reshape(Norm, {"N", C, HW}) * cast(W, f32) + cast(B, f32), X.dtype());
}

} // namespace

TEST_CASE("views after a reduction: per-head norm back to [T, H*D] is one row kernel",
          "[fusion][views]") {
  Graph G;
  Value X = G.input("x", bf16, {"T", 4096});
  G.output("y", headRmsNorm(G, X, 32, 128));
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 1);
  CHECK(P.Clusters[0].Kind == KernelKind::RowReduce);
  CHECK(P.Clusters[0].Outputs.size() == 1);
  CHECK(P.Boundaries.empty());
}

TEST_CASE("views after a reduction: GroupNorm with its affine is one kernel",
          "[fusion][views]") {
  Graph G;
  Value X = G.input("x", f16, {"N", 320, 4096});
  G.output("y", groupNorm(G, X, 32));
  GraphPlan P = planGraph(G, PlanOptions{});
  CHECK(P.Kernels.size() == 1);
  CHECK_THAT(P.PlanText, Contains("plan (fused): 1 kernel"));
}

TEST_CASE("views after a reduction: the relabeled epilogue reads more inputs",
          "[fusion][views]") {
  // A residual over the written-back shape joins the epilogue.
  Graph G;
  Value X = G.input("x", f32, {"T", 96});
  Value R = G.input("r", f32, {"T", 96});
  G.output("y", headRmsNorm(G, X, 3, 32) + R);
  Partition P = fuseGraph(G);
  CHECK(P.Clusters.size() == 1);
}

TEST_CASE("views after a reduction: fused vs unfused vs reference", "[gpu][views]") {
  test::haveGpu();
  // Per-head norms: vector-wide heads, odd heads, one head.
  struct HeadCase {
    int64_t H, D;
  };
  for (DType T : {f32, bf16, f16})
    for (HeadCase C : {HeadCase{32, 128}, HeadCase{5, 40}, HeadCase{3, 37}, HeadCase{1, 33}}) {
      Graph G;
      Value X = G.input("x", T, {"T", C.H * C.D});
      Value R = G.input("r", T, {"T", C.H * C.D});
      Value Y = headRmsNorm(G, X, C.H, C.D);
      G.output("y", Y);
      G.output("z", Y * 2.0 + R);
      INFO("heads " << C.H << " x " << C.D << " " << dtypeName(T).str());
      test::CheckOptions O;
      O.ExpectFusedKernels = 1;
      test::checkGraph(G, test::randomBindings(G, {{"T", 7}}, {}, O), O);
      O.MisalignEach = {1, 3, 2};
      test::checkGraph(G, test::randomBindings(G, {{"T", 5}}, {}, O), O);
      O.MisalignEach = {};
      O.SpecialValues = true;
      test::checkGraph(G, test::randomBindings(G, {{"T", 3}}, {}, O), O);
    }
  // GroupNorm with a per-channel affine: HW a multiple of 8 and odd.
  for (DType T : {f32, bf16, f16})
    for (int64_t HW : {64, 37}) {
      Graph G;
      Value X = G.input("x", T, {"N", 12, HW});
      G.output("y", groupNorm(G, X, 4));
      INFO("group norm HW " << HW << " " << dtypeName(T).str());
      test::CheckOptions O;
      O.ExpectFusedKernels = 1;
      test::checkGraph(G, test::randomBindings(G, {{"N", 3}}, {}, O), O);
      O.MisalignEach = {3, 1, 1};
      test::checkGraph(G, test::randomBindings(G, {{"N", 2}}, {}, O), O);
    }
}

//===----------------------------------------------------------------------===//
// Parts of rows: slices of a row kernel's rows put back together by a concat
// (RoPE after QK-norm).
//===----------------------------------------------------------------------===//

namespace {

/// concat(slice(x, 0, A) - max, exp(slice(x, A, C) - max) * 2) over rows of C:
/// the parts read the row's reduced value.
Value partsOfRows(Graph &G, Value X, int64_t A) {
  int64_t C = X.shape().back().Size;
  Value M = reduceMax(X);
  return concat({slice(X, 0, A) - M, exp(slice(X, A, C) - M) * 2.0});
}

} // namespace

TEST_CASE("parts of rows: QK-norm + RoPE is one row kernel per tensor, one launch",
          "[fusion][views]") {
  examples::ExampleGraph E = examples::buildExample("qk_norm_rope");
  GraphPlan P = planGraph(*E.G, PlanOptions{});
  CHECK(P.Kernels.size() == 2);
  CHECK(P.Launches.size() == 1);
  for (const KernelPlan &K : P.Kernels)
    CHECK(K.Kind == KernelKind::RowReduce);
}

TEST_CASE("parts of rows: a part that leaves the kernel is refused, the rest fuses",
          "[fusion][views]") {
  Graph G;
  Value X = G.input("x", f32, {"T", 100});
  Value M = reduceMax(X);
  Value Head = slice(X, 0, 40) - M;
  G.output("head", Head); // a part of each row, stored: not in the row kernel
  G.output("y", concat({Head * 2.0, slice(X, 40, 100) - M}));
  Partition P = fuseGraph(G);
  bool Refused = false;
  for (const FusionBoundary &B : P.Boundaries)
    Refused |= B.Reason == BoundaryReason::RowDomainMismatch &&
               B.Detail.find("whose values leave the kernel") != std::string::npos;
  CHECK(Refused);
  test::CheckOptions O;
  test::checkGraph(G, test::randomBindings(G, {{"T", 5}}, {}, O), O);
}

TEST_CASE("parts of rows: fused vs unfused vs reference", "[gpu][views]") {
  test::haveGpu();
  for (DType T : {f32, bf16, f16})
    for (int64_t C : {int64_t(128), int64_t(100), int64_t(37 * 2 + 1)}) {
      Graph G;
      Value X = G.input("x", T, {"T", C});
      G.output("y", partsOfRows(G, X, C / 2 - 3));
      INFO("row " << C << " " << dtypeName(T).str());
      test::CheckOptions O;
      O.ExpectFusedKernels = 1;
      test::checkGraph(G, test::randomBindings(G, {{"T", 7}}, {}, O), O);
      O.MisalignEach = {3};
      test::checkGraph(G, test::randomBindings(G, {{"T", 4}}, {}, O), O);
    }
  examples::ExampleGraph E = examples::buildExample("qk_norm_rope");
  for (int64_t Tokens : {1, 5}) {
    INFO("qk_norm_rope T=" << Tokens);
    test::CheckOptions O;
    O.ExpectFusedKernels = 2;
    test::checkGraph(*E.G, test::randomBindings(*E.G, {{"T", Tokens}}, E.Scalars, O), O);
    O.MisalignEach = {1, 2, 0, 0, 3, 1};
    test::checkGraph(*E.G, test::randomBindings(*E.G, {{"T", Tokens}}, E.Scalars, O), O);
  }
}
