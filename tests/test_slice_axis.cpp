//===- tests/test_slice_axis.cpp - slices of any axis ---------------------===//
//
// Issue 14, item 2: slice(x, start, stop, axis) on any axis. An outer axis
// is sliced as the last axis of [outer..., axis * inner] between two
// reshapes, so kernels read the elements in place. Checked: shapes and
// errors, the reference against hand-computed values, one kernel with the
// element-wise work, and with a GPU fused vs unfused vs reference.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "compiler/Planner.h"
#include "ir/Printer.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using Catch::Matchers::Contains;

TEST_CASE("slice of an axis: shapes and errors", "[slice-axis]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", 12, 8, 64});
  CHECK(shapeStr(slice(X, 2, 5, 1).shape()) == "[B,3,8,64]");
  CHECK(shapeStr(slice(X, 2, 5, -3).shape()) == "[B,3,8,64]");
  CHECK(shapeStr(slice(X, 0, 4, 2).shape()) == "[B,12,4,64]");
  CHECK(shapeStr(slice(X, 1, 9, -1).shape()) == "[B,12,8,8]");
  CHECK(slice(X, 0, 12, 1).id() == X.id());
  CHECK_THROWS_WITH(slice(X, 0, 1, 4), Contains("axis 4 is out of range"));
  CHECK_THROWS_WITH(slice(X, 0, 1, 0), Contains("axis 0 of") && Contains("is dynamic ('B')"));
  CHECK_THROWS_WITH(slice(X, 3, 13, 1), Contains("[3, 13) is out of range for axis 1"));
  Value Y = G.input("y", f32, {4, "T"});
  CHECK_THROWS_WITH(slice(Y, 0, 2, 0), Contains("dynamic dims inside it ([T])"));
}

TEST_CASE("slice of an axis: reference against hand-computed values", "[slice-axis]") {
  Graph G;
  Value X = G.input("x", f64, {2, 3, 4});
  G.output("a", slice(X, 1, 3, 1)); // a[i][j][k] = x[i][j + 1][k]
  G.output("b", slice(X, 1, 2, 0)); // b[0][j][k] = x[1][j][k]
  Bindings B;
  B.Inputs["x"] = HostTensor{DType::F64, {2, 3, 4}, {}};
  for (int I = 0; I < 24; ++I)
    B.Inputs["x"].Data.push_back(I);
  auto Out = interpret(G, B);
  const HostTensor &A = Out.at("a");
  REQUIRE(A.Dims == std::vector<int64_t>{2, 2, 4});
  for (int I = 0; I < 2; ++I)
    for (int J = 0; J < 2; ++J)
      for (int K = 0; K < 4; ++K)
        CHECK(A.Data[(I * 2 + J) * 4 + K] == I * 12 + (J + 1) * 4 + K);
  const HostTensor &Bo = Out.at("b");
  REQUIRE(Bo.Dims == std::vector<int64_t>{1, 3, 4});
  for (int J = 0; J < 12; ++J)
    CHECK(Bo.Data[J] == 12 + J);
}

TEST_CASE("slice of an axis: one kernel with its element-wise work", "[slice-axis][fusion]") {
  // The first 16 positions of a [B, 64, 8, 128] KV block, scaled and added.
  Graph G;
  Value K = G.input("k", bf16, {"B", 64, 8, 128});
  Value Y = G.input("y", bf16, {"B", 16, 8, 128});
  G.output("out", slice(K, 0, 16, 1) * 0.5 + Y);
  GraphPlan P = planGraph(G, PlanOptions{});
  CHECK(P.Kernels.size() == 1);
}

TEST_CASE("slice of an axis: fused vs unfused vs reference", "[gpu][slice-axis]") {
  test::haveGpu();
  for (DType T : {f32, bf16, f16}) {
    INFO(dtypeName(T).str());
    Graph G;
    Value K = G.input("k", T, {"B", 13, 5, 24});
    Value Y = G.input("y", T, {"B", 6, 5, 24});
    G.output("out", slice(K, 3, 9, 1) * 0.5 + Y);
    G.output("first", slice(K, 0, 2, -2) - 1.0);
    Value X = G.input("x", T, {9, 37});
    Value S = cast(slice(X, 2, 7, 0), f32);
    G.output("sm", exp(S - reduceMax(S)));
    test::CheckOptions O;
    test::checkGraph(G, test::randomBindings(G, {{"B", 3}}, {}, O), O);
    O.MisalignEach = {1, 3, 2};
    test::checkGraph(G, test::randomBindings(G, {{"B", 2}}, {}, O), O);
  }
}
