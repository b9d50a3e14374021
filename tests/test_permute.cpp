//===- tests/test_permute.cpp - permute and transpose ---------------------===//
//
// Issue 14, item 2: permute(x, perm) reorders axes (torch.permute); a kernel
// reads the operand's elements in place. Checked: the builder's shapes and
// errors, the reference against hand-computed values, the plan (one kernel
// with its element-wise work; a permute of a row kernel's values is a
// boundary), and with a GPU fused vs unfused vs reference at odd sizes and
// misaligned pointers.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "compiler/Fusion.h"
#include "compiler/Planner.h"
#include "ir/Printer.h"
#include "reference/Interpreter.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using Catch::Matchers::Contains;

TEST_CASE("permute: shapes, negative axes, identity, transpose", "[permute]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", "T", 32, 128});
  Value P = permute(X, {0, 2, 1, 3});
  CHECK(shapeStr(P.shape()) == "[B,32,T,128]");
  CHECK(shapeStr(permute(X, {-1, 0, 1, 2}).shape()) == "[128,B,T,32]");
  CHECK(permute(X, {0, 1, 2, 3}).id() == X.id());
  CHECK(shapeStr(transpose(X, -1, -2).shape()) == "[B,T,128,32]");
  CHECK_THAT(printNode(G, P.id()), Contains("permute(%0) : bf16[B,32,T,128] perm=[0,2,1,3]"));
}

TEST_CASE("permute: errors name the operand and what was expected", "[permute]") {
  Graph G;
  Value X = G.input("x", f32, {4, 5, 6});
  CHECK_THROWS_WITH(permute(X, {0, 1}), Contains("2 axes given for") && Contains("one per axis (3)"));
  CHECK_THROWS_WITH(permute(X, {0, 1, 1}), Contains("axis 1 appears twice"));
  CHECK_THROWS_WITH(permute(X, {0, 1, 3}), Contains("axis 3 is out of range"));
  CHECK_THROWS_WITH(transpose(X, 0, 5), Contains("axes 0 and 5 are out of range"));
}

TEST_CASE("permute: reference values against hand-computed ones", "[permute]") {
  Graph G;
  Value X = G.input("x", f64, {2, 3, 4});
  G.output("y", permute(X, {2, 0, 1})); // y[i][j][k] = x[j][k][i]
  Bindings B;
  B.Inputs["x"] = HostTensor{DType::F64, {2, 3, 4}, {}};
  for (int I = 0; I < 24; ++I)
    B.Inputs["x"].Data.push_back(I);
  HostTensor Y = interpret(G, B).at("y");
  REQUIRE(Y.Dims == std::vector<int64_t>{4, 2, 3});
  for (int I = 0; I < 4; ++I)
    for (int J = 0; J < 2; ++J)
      for (int K = 0; K < 3; ++K)
        CHECK(Y.Data[(I * 2 + J) * 3 + K] == J * 12 + K * 4 + I);
}

TEST_CASE("permute: with its element-wise work, one kernel", "[permute][fusion]") {
  Graph G;
  Value Q = G.input("q", bf16, {"B", "T", 8, 64});
  Value Y = G.input("y", bf16, {"B", 8, "T", 64});
  G.output("out", permute(Q, {0, 2, 1, 3}) * 0.125 + Y);
  Partition P = fuseGraph(G);
  CHECK(P.Clusters.size() == 1);
}

TEST_CASE("permute: a permute of a row kernel's values is a boundary", "[permute][fusion]") {
  // Square rows: the permuted shape is the row shape, but element (i, j)
  // needs row j's maximum.
  Graph G;
  Value X = G.input("x", f32, {64, 64});
  Value D = X - reduceMax(X);
  Value T = transpose(D, 0, 1);
  G.output("t", T);
  Partition P = fuseGraph(G);
  bool Named = false;
  for (const FusionBoundary &B : P.Boundaries)
    Named |= B.Reason == BoundaryReason::RowDomainMismatch &&
             B.Detail.find("a permute of [64,64] moves elements across the rows") !=
                 std::string::npos;
  CHECK(Named);
  test::checkGraph(G, test::randomBindings(G, {}, {}));
}

TEST_CASE("permute: a swap of the last two axes runs in transpose tiles", "[permute][fusion]") {
  auto Tiled = [](const Graph &G) {
    GraphPlan P = planGraph(G, PlanOptions{});
    REQUIRE(P.Kernels.size() == 1);
    return P.Kernels[0].TransposeNode >= 0;
  };
  Graph A; // K^T of [B, H, T, D], scaled
  Value K = A.input("k", bf16, {"B", 8, "T", 64});
  A.output("kt", transpose(K, -1, -2) * 0.125);
  CHECK(Tiled(A));
  CHECK_THAT(planGraph(A, PlanOptions{}).PlanText, Contains("32x32 tiles of scalar accesses"));
  Graph B; // the innermost axis lands on axis 1 of 4: per-lane reads
  Value X = B.input("x", f32, {"B", "T", 8, 64});
  B.output("y", permute(X, {0, 3, 1, 2}) + 1.0);
  CHECK_FALSE(Tiled(B));
  Graph C; // a slice of the transpose reads it at other coordinates
  Value Z = C.input("z", f32, {64, "R"});
  C.output("s", slice(transpose(Z, 0, 1), 0, 8) * 2.0);
  CHECK_FALSE(Tiled(C));
}

TEST_CASE("permute: transposes have a wide variant where the width divides the last two "
          "dims",
          "[permute][fusion]") {
  auto Vecs = [](DType T, Shape Dims) {
    Graph G;
    Value X = G.input("x", T, Dims);
    G.output("t", transpose(X, -1, -2) + 1.0);
    GraphPlan P = planGraph(G, PlanOptions{});
    REQUIRE(P.Kernels.size() == 1);
    REQUIRE(P.Kernels[0].TransposeNode >= 0);
    CHECK(test::errorOf([&] { test::testCompiler().compile(G, CompileOptions{}); }).empty());
    return P.Kernels[0].Vecs;
  };
  CHECK(Vecs(bf16, {"R", 8192}) == std::vector<int>{8, 1});
  CHECK(Vecs(f32, {3, 72, 200}) == std::vector<int>{4, 1});
  CHECK(Vecs(f16, {72, 200}) == std::vector<int>{8, 1});
  CHECK(Vecs(bf16, {45, 70}) == std::vector<int>{1});
  CHECK(Vecs(f32, {"R", 6}) == std::vector<int>{1});
}

/// x [1, N] against its own transpose [N, 1]: the result [N, N] reads x
/// once along the row (a vector) and once per row (one element). The
/// emitter's value keys spelled a column-relative lane "c<lane>" and a last
/// coordinate by its variable, and the transpose moves the row variable
/// c0 there: lane 0's vector element stood for every lane's per-row value
/// (random graph seed 1224690256, H200 session 21).
static Graph selfTranspose(DType T, int64_t N) {
  Graph G;
  Value X = G.input("x0", T, {int64_t(1), N});
  G.output("y0", binary(Op::Min, X, permute(X, {1, 0})));
  return G;
}

TEST_CASE("permute: a row vector against its own transpose reads x per row",
          "[permute]") {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Executable E = test::testCompiler().compile(selfTranspose(bf16, 3), Opts);
  std::string K = test::kernelSource(E);
  INFO(K);
  // The per-row element is its own load at the row's coordinate.
  CHECK_THAT(K, Contains("in_0[(c0)]"));
}

TEST_CASE("permute: fused vs unfused vs reference", "[gpu][permute]") {
  test::haveGpu();
  for (DType T : {f32, bf16, f16}) {
    INFO(dtypeName(T).str());
    // A row vector against its own transpose, odd sizes, any offset.
    for (int64_t N : {int64_t(3), int64_t(37)})
      for (unsigned Off : {0u, 5u}) {
        Graph G = selfTranspose(T, N);
        test::CheckOptions O;
        O.MisalignElems = Off;
        test::checkGraph(G, test::randomBindings(G, {}, {}, O), O);
      }
    // Heads to the front, the innermost axis kept (vector loads).
    {
      Graph G;
      Value Q = G.input("q", T, {"B", "T", 5, 40});
      Value Y = G.input("y", T, {"B", 5, "T", 40});
      G.output("out", permute(Q, {0, 2, 1, 3}) * 0.5 + Y);
      test::CheckOptions O;
      O.ExpectFusedKernels = 1;
      test::checkGraph(G, test::randomBindings(G, {{"B", 2}, {"T", 7}}, {}, O), O);
      O.MisalignEach = {3, 1};
      test::checkGraph(G, test::randomBindings(G, {{"B", 1}, {"T", 9}}, {}, O), O);
    }
    // A transpose of the innermost axis, odd sizes.
    {
      Graph G;
      Value X = G.input("x", T, {"R", 37});
      G.output("xt", transpose(X, 0, 1) + 1.0);
      test::CheckOptions O;
      O.ExpectFusedKernels = 1;
      test::checkGraph(G, test::randomBindings(G, {{"R", 53}}, {}, O), O);
      O.MisalignEach = {1};
      test::checkGraph(G, test::randomBindings(G, {{"R", 20}}, {}, O), O);
    }
    // Batched transposes in tiles (edges on both axes), with another input
    // in the result's layout; and a permute that cannot tile.
    {
      Graph G;
      Value X = G.input("x", T, {"B", 45, 70});
      Value Y = G.input("y", T, {"B", 70, 45});
      G.output("out", cast(transpose(X, 1, 2), f32) * 2.0 + cast(Y, f32));
      G.output("p", permute(X, {2, 0, 1}) - 1.0);
      test::CheckOptions O;
      test::checkGraph(G, test::randomBindings(G, {{"B", 3}}, {}, O), O);
      O.MisalignEach = {1, 3};
      test::checkGraph(G, test::randomBindings(G, {{"B", 2}}, {}, O), O);
      O.MisalignEach = {};
      O.SpecialValues = true;
      test::checkGraph(G, test::randomBindings(G, {{"B", 1}}, {}, O), O);
    }
    // The wide variant (64x64 tiles of 16-byte chunks): dims multiples of
    // the width but not of the tile (edge tiles), batched, an input in each
    // layout; a dynamic dim bound to a multiple runs it, one bound to
    // another size or a misaligned pointer runs the scalar tiles.
    {
      Graph G;
      Value X = G.input("x", T, {"B", 72, "N"});
      Value Y = G.input("y", T, {"B", "N", 72});
      Value Z = G.input("z", T, {"B", 72, "N"});
      G.output("out", cast(transpose(X * Z, 1, 2), f32) * 2.0 + cast(Y, f32));
      test::CheckOptions O;
      O.ExpectFusedKernels = 1;
      test::checkGraph(G, test::randomBindings(G, {{"B", 3}, {"N", 200}}, {}, O), O);
      test::checkGraph(G, test::randomBindings(G, {{"B", 1}, {"N", 8}}, {}, O), O);
      test::checkGraph(G, test::randomBindings(G, {{"B", 2}, {"N", 131}}, {}, O), O);
      O.MisalignEach = {0, 0, 1};
      test::checkGraph(G, test::randomBindings(G, {{"B", 2}, {"N", 64}}, {}, O), O);
      O.MisalignEach = {};
      O.SpecialValues = true;
      test::checkGraph(G, test::randomBindings(G, {{"B", 1}, {"N", 136}}, {}, O), O);
    }
    // A permuted prologue of a row reduction (softmax over the other axis).
    {
      Graph G;
      Value X = G.input("x", T, {29, "C"});
      Value XT = cast(transpose(X, 0, 1), f32);
      Value E = exp(XT - reduceMax(XT));
      G.output("p", E / sum(E));
      test::CheckOptions O;
      O.ExpectFusedKernels = 1;
      test::checkGraph(G, test::randomBindings(G, {{"C", 11}}, {}, O), O);
    }
  }
}
