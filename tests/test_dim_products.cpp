//===- tests/test_dim_products.cpp - dynamic dims that are products -------===//
//
// Issue 14, item 2: `[B, T, H] -> [B*T, H]` with dynamic B and T. A dynamic
// dim may be a product of names ("B*T"); its size is the product of their
// bound sizes, and only the names are dims of the graph (bound at run time).
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "compiler/Planner.h"
#include "ir/NN.h"
#include "reference/Interpreter.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using Catch::Matchers::Contains;

TEST_CASE("dim products: canonical names, equality, reshape both ways", "[dims]") {
  CHECK(Dim("T*B") == Dim("B*T"));
  CHECK(Dim("T*B").str() == "B*T");
  CHECK(Dim("B*T").factors().size() == 2);
  CHECK(Dim("B") != Dim("B*T"));
  Graph G;
  Value X = G.input("x", bf16, {"B", "T", 64});
  Value Flat = reshape(X, {"T*B", 64});
  CHECK(shapeStr(Flat.shape()) == "[B*T,64]");
  CHECK(reshape(Flat, {"B", "T", 64}).shape() == X.shape());
  CHECK(G.dynamicDims() == llvm::ArrayRef<std::string>({"B", "T"}));
  CHECK_THROWS_WITH(reshape(X, {"B*B", 64}), Contains("expected the same number of elements"));
  CHECK_THROWS_WITH(reshape(X, {"B**T", 64}), Contains("has an empty factor"));
  CHECK_THROWS_WITH(G.input("y", f32, {"*T", 4}), Contains("has an empty factor"));
}

TEST_CASE("dim products: numbers among the factors scale the names", "[dims]") {
  CHECK(Dim("B*64") == Dim("64*B"));
  CHECK(Dim("64*B").scale() == 64);
  CHECK(Dim("2*B*3*T").scale() == 6);
  CHECK(Dim("B").scale() == 1);
  CHECK(Dim("64*B").factors().size() == 1);
  CHECK(Dim("64*B").validName());
  CHECK_FALSE(Dim("64").validName());   // no name: a number is a static dim
  CHECK_FALSE(Dim("2*3").validName());
  CHECK_FALSE(Dim("0*B").validName());
  CHECK_FALSE(Dim("281474976710656*2*B").validName()); // a scale past 2^48
  // Numbers fold into one, first: equal products are one dim.
  CHECK(Dim("2*B*3") == Dim("6*B"));
  CHECK(Dim("2*B*3").str() == "6*B");
  CHECK(Dim("1*B") == Dim("B"));
  CHECK(productDim({7, Dim("64*B")}) == Dim("448*B"));
  CHECK(productDim({Dim("T"), 1, Dim("2*B")}) == Dim("2*B*T"));
  Graph G;
  Value X = G.input("x", f64, {6, "B", 64});
  Value Flat = reshape(X, {6, "64*B"});
  CHECK(shapeStr(Flat.shape()) == "[6,64*B]");
  CHECK(G.dynamicDims() == llvm::ArrayRef<std::string>({"B"}));
  CHECK_THROWS_WITH(reshape(X, {6, "32*B"}), Contains("expected the same number of elements"));
  CHECK_THROWS_WITH(G.input("y", f32, {"64", 4}), Contains("has an empty factor"));
  // The reference multiplies the number in: row-major order is kept.
  G.output("f", Flat);
  Bindings B;
  B.Dims = {{"B", 2}};
  B.Inputs["x"] = HostTensor{DType::F64, {6, 2, 64}, {}};
  for (int I = 0; I < 6 * 2 * 64; ++I)
    B.Inputs["x"].Data.push_back(I);
  HostTensor F = interpret(G, B).at("f");
  REQUIRE(F.Dims == std::vector<int64_t>{6, 128});
  for (int I = 0; I < 6 * 128; ++I)
    CHECK(F.Data[I] == I);
}

TEST_CASE("dim products: the reference multiplies the bound sizes", "[dims]") {
  Graph G;
  Value X = G.input("x", f64, {"B", "T", 4});
  Value Y = G.input("y", f64, {"T*B", 1});
  G.output("s", sum(reshape(X, {"B*T", 4})) + Y);
  Bindings B;
  B.Dims = {{"B", 2}, {"T", 3}};
  B.Inputs["x"] = HostTensor{DType::F64, {2, 3, 4}, {}};
  for (int I = 0; I < 24; ++I)
    B.Inputs["x"].Data.push_back(I);
  B.Inputs["y"] = HostTensor{DType::F64, {6, 1}, {100, 200, 300, 400, 500, 600}};
  HostTensor S = interpret(G, B).at("s");
  REQUIRE(S.Dims == std::vector<int64_t>{6, 1});
  for (int R = 0; R < 6; ++R)
    CHECK(S.Data[R] == (4 * R + 0) + (4 * R + 1) + (4 * R + 2) + (4 * R + 3) + 100 * (R + 1));
}

TEST_CASE("dim products: a norm over [B*T, H] is one kernel, fused vs unfused vs reference",
          "[gpu][dims]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", "T", 96});
  Value R = G.input("r", bf16, {"B*T", 96});
  Value W = G.input("w", bf16, {96});
  Value H = reshape(X, {"B*T", 96}) + R;
  G.output("h", H);
  G.output("y", nn::rmsNorm(H, W, G.constant(1e-6)));
  GraphPlan P = planGraph(G, PlanOptions{});
  CHECK(P.Kernels.size() == 1);
  CHECK(P.Kernels[0].DynDims == std::vector<std::string>{"B", "T"});
  test::CheckOptions O;
  O.ExpectFusedKernels = 1;
  test::checkGraph(G, test::randomBindings(G, {{"B", 3}, {"T", 5}}, {}, O), O);
  O.MisalignEach = {1, 3, 0};
  test::checkGraph(G, test::randomBindings(G, {{"B", 2}, {"T", 7}}, {}, O), O);
}
