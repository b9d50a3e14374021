//===- tests/test_boundary_reasons.cpp - each boundary states its own reason -===//
//
// One graph per BoundaryReason the fusion pass (or the unfused partition)
// produces, checking the reason and the detail on the exact edge, and the
// FP8-scale pattern whose real reasons a cluster-wide "read by 2 kernels"
// once overwrote.
//
//===----------------------------------------------------------------------===//
#include "compiler/Fusion.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {

const FusionBoundary &boundary(const Partition &P, NodeId From, NodeId To) {
  for (const FusionBoundary &B : P.Boundaries)
    if (B.Producer == From && B.Consumer == To)
      return B;
  FAIL("no boundary %" << From << " -> %" << To);
  throw; // unreachable: FAIL throws
}

} // namespace

TEST_CASE("boundary reason: an FP8 scale's edges keep their own reasons", "[fusion][boundary]") {
  // x32 = exp(sin(cast(x))); amax = reduceMax(abs(x32), All);
  // y = x32 * (448 / amax). Three kernels: {cast, sin, exp, abs}, {amax},
  // {div, mul}. The abs -> amax edge exists because the full reduction
  // cannot take the prologue (x32 is also read by the second pass); x32 ->
  // mul because joining would make a cycle. The prologue costs more than
  // the recompute budget (with a plain cast it is recomputed in both
  // passes, test_recompute.cpp), so it stays shared, and its edges keep
  // their own reasons.
  Graph G;
  Value X = G.input("x", bf16, {"N"});
  Value X32 = exp(sin(cast(X, f32)));
  Value Abs = abs(X32);
  Value Amax = reduceMax(Abs, ReduceScope::All);
  Value Scale = 448.0 / Amax;
  Value Y = X32 * Scale;
  G.output("y", Y);
  // With FullReduceEpilogue (the default) the scale is computed once by
  // the reduction's last block and read by the second pass: still three
  // kernels. Without it, each thread of the second pass computes it.
  {
    Partition P = fuseGraph(G);
    REQUIRE(P.Clusters.size() == 3);
    CHECK(P.ClusterOf[Scale.id()] == P.ClusterOf[Amax.id()]);
    CHECK(boundary(P, Scale.id(), Y.id()).Reason == BoundaryReason::ReductionResult);
  }
  FusionOptions NoEpilogue;
  NoEpilogue.FullReduceEpilogue = false;
  Partition P = fuseGraph(G, NoEpilogue);
  REQUIRE(P.Clusters.size() == 3);
  CHECK(P.ClusterOf[X32.id()] == P.ClusterOf[Abs.id()]);
  CHECK(P.ClusterOf[Scale.id()] == P.ClusterOf[Y.id()]);

  const FusionBoundary &Prologue = boundary(P, Abs.id(), Amax.id());
  CHECK(Prologue.Reason == BoundaryReason::MultipleConsumers);
  CHECK(Prologue.Detail ==
        fmt::format("%{} is also used by %{}", X32.id(), Y.id()));
  const FusionBoundary &Cast = boundary(P, X32.id(), Y.id());
  CHECK(Cast.Reason == BoundaryReason::WouldCycle);
  CHECK(boundary(P, Amax.id(), Scale.id()).Reason == BoundaryReason::ReductionResult);
  for (const FusionBoundary &B : P.Boundaries)
    CHECK_THAT(B.Detail, !Contains("read by 2 kernels"));
  CHECK(P.Boundaries.size() == 3);
}

TEST_CASE("boundary reason: DomainMismatch", "[fusion][boundary]") {
  // A stored [8] value cannot be recomputed in the [4,8] consumer's kernel.
  Graph G;
  Value W = exp(G.input("w", f32, {8}));
  G.output("w_exp", W);
  Value Y = G.input("x", f32, {4, 8}) * W;
  G.output("y", Y);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 2);
  const FusionBoundary &B = boundary(P, W.id(), Y.id());
  CHECK(B.Reason == BoundaryReason::DomainMismatch);
  CHECK(B.Detail == "[8] vs [4,8]");
}

TEST_CASE("boundary reason: ReductionResult", "[fusion][boundary]") {
  Graph G;
  Value X = G.input("x", f32, {"N"});
  Value S = sum(X, ReduceScope::All);
  Value Y = X - S;
  G.output("y", Y);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 2);
  CHECK(boundary(P, S.id(), Y.id()).Reason == BoundaryReason::ReductionResult);
}

TEST_CASE("boundary reason: RowDomainMismatch", "[fusion][boundary]") {
  Graph G;
  Value M = reduceMax(G.input("x", f32, {"B", 128}));
  Value Y = G.input("z", f32, {"B", 64}) - M;
  G.output("y", Y);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 2);
  const FusionBoundary &B = boundary(P, M.id(), Y.id());
  CHECK(B.Reason == BoundaryReason::RowDomainMismatch);
  // [B,64] has the rows of [B,128]: it could join as a part of each row,
  // but it is a graph output and a row kernel stores whole rows.
  CHECK(B.Detail == "[B,64] is a part of the row [B,128] whose values leave the kernel "
                    "(a row kernel stores whole rows)");

  Graph H;
  Value HM = reduceMax(H.input("x", f32, {"B", 128}));
  Value HY = H.input("z", f32, {3, "B", 128}) - HM;
  H.output("y", HY);
  Partition HP = fuseGraph(H);
  const FusionBoundary &HB = boundary(HP, HM.id(), HY.id());
  CHECK(HB.Reason == BoundaryReason::RowDomainMismatch);
  CHECK(HB.Detail == "[3,B,128] is neither the row [B,128], its reduced shape, nor a "
                     "relabeling of the row's elements");
}

TEST_CASE("boundary reason: RowDomainMismatch (a relabeled row reads a per-row value)",
          "[fusion][boundary]") {
  // [2,4,3] relabels the rows of [1,4,6] (same 24 elements in order), but
  // the per-row sums [1,4,1] broadcast over it pair element (1,0,0), which
  // is in row 2, with row 0's sum.
  Graph G;
  Value X = G.input("x", f32, {1, 4, 6});
  Value S = sum(X);
  Value R = reshape(X - S, {2, 4, 3});
  Value Y = R * S;
  G.output("y", Y);
  Partition P = fuseGraph(G);
  const FusionBoundary &B = boundary(P, S.id(), Y.id());
  CHECK(B.Reason == BoundaryReason::RowDomainMismatch);
  CHECK_THAT(B.Detail, Contains("relabels the row [1,4,6] but reads %1 [1,4,1]"));
}

TEST_CASE("boundary reason: MultipleConsumers (a reduction's prologue)", "[fusion][boundary]") {
  // A full reduction stores a prologue output itself unless
  // FullReducePrologueOutputs is off; a column reduction unless
  // ColumnReducePrologueOutputs is.
  Graph G;
  Value E = exp(G.input("x", f32, {"N"}));
  Value S = sum(E, ReduceScope::All);
  G.output("e", E);
  G.output("s", S);
  CHECK(fuseGraph(G).Clusters.size() == 1);
  FusionOptions Off;
  Off.FullReducePrologueOutputs = false;
  Partition P = fuseGraph(G, Off);
  REQUIRE(P.Clusters.size() == 2);
  const FusionBoundary &B = boundary(P, E.id(), S.id());
  CHECK(B.Reason == BoundaryReason::MultipleConsumers);
  CHECK(B.Detail == fmt::format("%{} is a graph output", E.id()));

  Graph C;
  Value CE = exp(C.input("x", f32, {"N", 8}));
  Value CS = sum(CE, llvm::ArrayRef<int64_t>{0});
  C.output("e", CE);
  C.output("s", CS);
  CHECK(fuseGraph(C).Clusters.size() == 1);
  FusionOptions ColumnOff;
  ColumnOff.ColumnReducePrologueOutputs = false;
  Partition CP = fuseGraph(C, ColumnOff);
  REQUIRE(CP.Clusters.size() == 2);
  const FusionBoundary &CB = boundary(CP, CE.id(), CS.id());
  CHECK(CB.Reason == BoundaryReason::MultipleConsumers);
  CHECK(CB.Detail == fmt::format("%{} is a graph output", CE.id()));
}

TEST_CASE("boundary reason: WouldCycle", "[fusion][boundary]") {
  // y = e * g(sum(e)) over one domain: merging e's kernel with y's would put
  // the full reduction between two halves of one kernel. (e costs more than
  // the recompute budget; a cheaper e is computed by both kernels.)
  Graph G;
  Value E = exp(sin(exp(G.input("x", f32, {"N"}))));
  Value S = sum(E, ReduceScope::All);
  Value Y = E * broadcastTo(sqrt(S), {Dim("N")});
  G.output("y", Y);
  Partition P = fuseGraph(G);
  const FusionBoundary &B = boundary(P, E.id(), Y.id());
  CHECK(B.Reason == BoundaryReason::WouldCycle);
}

TEST_CASE("boundary reason: ClusterTooLarge", "[fusion][boundary]") {
  // 300 chained element-wise nodes; a kernel holds at most 256.
  Graph G;
  std::vector<Value> Chain{G.input("x", f32, {64})};
  for (int I = 0; I < 300; ++I)
    Chain.push_back(I % 2 ? exp(Chain.back()) : neg(Chain.back()));
  G.output("y", Chain.back());
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 2);
  const FusionBoundary &B = boundary(P, Chain[256].id(), Chain[257].id());
  CHECK(B.Reason == BoundaryReason::ClusterTooLarge);
  CHECK(B.Detail == "cap 256 nodes");
}

TEST_CASE("boundary reason: SecondRowDomain", "[fusion][boundary]") {
  // Two row reductions over different rows meet in one [B,1] node.
  Graph G;
  Value M1 = reduceMax(G.input("x", f32, {"B", 128}));
  Value M2 = reduceMax(G.input("z", f32, {"B", 64}));
  Value Y = M1 + M2;
  G.output("y", Y);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 2);
  const FusionBoundary &B = boundary(P, M2.id(), Y.id());
  CHECK(B.Reason == BoundaryReason::SecondRowDomain);
  CHECK(B.Detail == "rows [B,128] and [B,64]");
}

TEST_CASE("boundary reason: Unfused", "[fusion][boundary]") {
  Graph G;
  Value A = exp(G.input("x", f32, {4}));
  Value Y = neg(A);
  G.output("y", Y);
  Partition P = partitionUnfused(G);
  REQUIRE(P.Clusters.size() == 2);
  CHECK(boundary(P, A.id(), Y.id()).Reason == BoundaryReason::Unfused);
}
