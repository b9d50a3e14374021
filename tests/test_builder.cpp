//===- tests/test_builder.cpp - builder rules, hash-consing, user errors --===//
#include "ir/Graph.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <limits>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {
bool sameShape(Value V, std::initializer_list<Dim> Dims) {
  return llvm::ArrayRef<Dim>(V.shape()) == llvm::ArrayRef<Dim>(Dims);
}
} // namespace

TEST_CASE("broadcasting aligns from the right and keeps dynamic dims",
          "[builder]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 4});
  Value Col = G.input("col", f32, {"B", 1});
  Value Row = G.input("row", f32, {4});
  Value One = G.input("one", f32, {1, 4});
  Value Tall = G.input("tall", f32, {3, 1});
  Value Wide = G.input("wide", f32, {1, 5});
  Value DynOnly = G.input("dyn", f32, {"B"});
  Value Unit = G.input("unit", f32, {1});

  CHECK(shapeStr((X + Row).shape()) == "[B,4]");
  CHECK(shapeStr((Col + Row).shape()) == "[B,4]");
  CHECK(shapeStr((X + One).shape()) == "[B,4]");
  CHECK(shapeStr((One + X).shape()) == "[B,4]");
  CHECK(shapeStr((Tall * Wide).shape()) == "[3,5]");
  // A dynamic dim meets a static 1 from either side.
  CHECK(shapeStr((DynOnly + Unit).shape()) == "[B]");
  CHECK(shapeStr((Unit + DynOnly).shape()) == "[B]");
  // Rank-0 constants broadcast to anything.
  CHECK(shapeStr((X * 2.0).shape()) == "[B,4]");
  CHECK(shapeStr(where(gt(X, Row), X, G.constant(0.0)).shape()) == "[B,4]");
  CHECK(sameShape(fma(Col, Row, G.constant(1.0)), {"B", 4}));
  CHECK(G.dynamicDims().size() == 1);
  CHECK(G.dynamicDims().front() == "B");
  G.verify();
}

TEST_CASE("dtype promotion and weak scalars", "[builder]") {
  Graph G;
  Value B16 = G.input("b16", bf16, {4});
  Value H16 = G.input("h16", f16, {4});
  Value F = G.input("f", f32, {4});
  Value D = G.input("d", f64, {4});
  Value I = G.input("i", i32, {4});
  Value L = G.input("l", i64, {4});
  Value Bo = G.input("bo", boolean, {4});
  Value S = G.scalar("s", f32);

  CHECK((B16 + F).dtype() == f32);
  CHECK((H16 + B16).dtype() == f32);
  CHECK((F + D).dtype() == f64);
  CHECK((I + L).dtype() == i64);
  CHECK((I + F).dtype() == f32);
  CHECK((I + B16).dtype() == bf16);
  // Constants and scalars are weak: same category keeps the tensor's type.
  CHECK((B16 * 2.0).dtype() == bf16);
  CHECK((2.0 * H16).dtype() == f16);
  CHECK((B16 * S).dtype() == bf16);
  CHECK((D - 1.0).dtype() == f64);
  // Beside f64 a literal keeps full precision instead of rounding to f32.
  auto LiteralType = [&](Value Product) {
    return G.node(Product.node().Operands[1]).Type;
  };
  CHECK(LiteralType(D * 0.1) == f64);
  CHECK(LiteralType(F * 0.1) == f32);
  CHECK(LiteralType(B16 * 0.1) == f32);
  CHECK(LiteralType(I * 0.1) == f32);
  // ... but a float constant lifts an integer tensor to f32.
  CHECK((I * 2.0).dtype() == f32);
  CHECK((I * G.constant(2.0, i64)).dtype() == i32);
  // Comparisons and logic give bool; division and transcendentals are float.
  CHECK(lt(B16, F).dtype() == boolean);
  CHECK(eq(I, L).dtype() == boolean);
  CHECK(logicalAnd(Bo, Bo).dtype() == boolean);
  CHECK(logicalNot(F).dtype() == boolean);
  CHECK((I / I).dtype() == f32);
  CHECK(exp(I).dtype() == f32);
  CHECK(exp(B16).dtype() == bf16);
  CHECK(abs(I).dtype() == i32);
  CHECK(rint(I).dtype() == i32);
  CHECK(rint(B16).dtype() == bf16);
  // Reductions: mean of ints is float, sum of ints widens.
  CHECK(mean(I).dtype() == f32);
  CHECK(sum(I).dtype() == i64);
  CHECK(sum(Bo).dtype() == i64);
  CHECK(reduceMax(B16).dtype() == bf16);
  CHECK(where(Bo, B16, 0.0 * B16).dtype() == bf16);
  CHECK(where(Bo, B16, G.constant(0.0)).dtype() == bf16);
  CHECK(where(Bo, B16, F).dtype() == f32);
  CHECK(cast(I, f16).dtype() == f16);
}

TEST_CASE("every unary and binary op of ir/Ops.def follows its dtype rule",
          "[builder]") {
  // Enumerates the table, so a new op is covered without a test edit. The
  // rules (docs/NUMERICS.md): floats keep their dtype, predicates give bool,
  // FloatPromote ops give f32 for integers, bool is rejected by arithmetic.
  Graph G;
  const DType Floats[] = {f16, bf16, f32, f64};
  const DType Ints[] = {i32, i64};
  Value Bo = G.input("bo", boolean, {4});
  unsigned Unary = 0, Binary = 0;
  for (Op O : AllOps) {
    OpKind K = opKind(O);
    if ((K != OpKind::Unary && K != OpKind::Binary) || O == Op::Cast)
      continue;
    INFO("op " << opName(O).str());
    ResultRule R = opInfo(O).Result;
    bool Pred = R == ResultRule::Bool;
    auto Build = [&](Value X) {
      return K == OpKind::Unary ? unary(O, X) : binary(O, X, X);
    };
    (K == OpKind::Unary ? Unary : Binary)++;
    for (DType T : Floats) {
      Value X = G.input(fmt::format("x{}_{}", static_cast<int>(O), dtypeName(T).str()), T, {4});
      CHECK(Build(X).dtype() == (Pred ? boolean : T));
    }
    for (DType T : Ints) {
      Value X = G.input(fmt::format("x{}_{}", static_cast<int>(O), dtypeName(T).str()), T, {4});
      DType Want = Pred ? boolean : R == ResultRule::FloatPromote ? f32 : T;
      CHECK(Build(X).dtype() == Want);
    }
    if (Pred)
      CHECK(Build(Bo).dtype() == boolean);
    else
      CHECK_THROWS_WITH(Build(Bo), Contains(opName(O).str()) && Contains("bool"));
  }
  CHECK(Unary >= 21);
  CHECK(Binary == 16);
}

TEST_CASE("reductions, views and no-op views", "[builder]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 8});
  CHECK(shapeStr(sum(X).shape()) == "[B,1]");
  CHECK(sum(X, ReduceScope::All).rank() == 0);
  CHECK(sum(X).node().scope() == ReduceScope::LastAxis);
  CHECK(shapeStr(slice(X, 2, 5).shape()) == "[B,3]");
  CHECK(shapeStr(concat({X, slice(X, 0, 3)}).shape()) == "[B,11]");
  CHECK(shapeStr(reshape(X, {"B", 2, 4}).shape()) == "[B,2,4]");
  CHECK(shapeStr(broadcastTo(sum(X), {"B", 8}).shape()) == "[B,8]");
  CHECK(shapeStr(randUniform(G.scalar("seed", i64), {"B", 8}, 1).shape()) ==
        "[B,8]");

  // Views that change nothing return their operand instead of a node.
  size_t Before = G.size();
  CHECK(cast(X, f32).id() == X.id());
  CHECK(slice(X, 0, 8).id() == X.id());
  CHECK(reshape(X, {"B", 8}).id() == X.id());
  CHECK(broadcastTo(X, {"B", 8}).id() == X.id());
  CHECK(concat({X}).id() == X.id());
  CHECK(G.size() == Before);
  G.verify();
}

TEST_CASE("hash-consing shares identical nodes", "[builder]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 4});
  Value Y = G.input("y", f32, {4});

  Value A = X + Y;
  size_t Size = G.size();
  Value B = X + Y;
  CHECK(A.id() == B.id());
  CHECK(G.size() == Size);
  CHECK(exp(X + Y).id() == exp(A).id());
  CHECK(sum(A).id() == sum(B).id());

  // Different op, attribute or constant value: different nodes.
  CHECK((X - Y).id() != A.id());
  CHECK(sum(A).id() != sum(A, ReduceScope::All).id());
  CHECK(slice(X, 0, 2).id() != slice(X, 1, 3).id());
  CHECK(G.constant(1.0).id() == G.constant(1.0).id());
  CHECK(G.constant(1.0).id() != G.constant(2.0).id());
  CHECK(G.constant(1.0, f32).id() != G.constant(1.0, f16).id());
  CHECK(G.constant(0.0).id() != G.constant(-0.0).id());
  double NaN = std::numeric_limits<double>::quiet_NaN();
  CHECK(G.constant(NaN).id() == G.constant(NaN).id());
  CHECK((X * 2.0).id() == (X * 2.0).id());
  CHECK((X * 2.0).id() != (X * 3.0).id());
  Value Seed = G.scalar("seed", i64);
  CHECK(randUniform(Seed, {4}, 0).id() == randUniform(Seed, {4}, 0).id());
  CHECK(randUniform(Seed, {4}, 0).id() != randUniform(Seed, {4}, 1).id());

  // Inputs and scalars are never shared, even when structurally equal.
  Value P = G.input("p", f32, {4});
  Value Q = G.input("q", f32, {4});
  CHECK(P.id() != Q.id());
  CHECK((P + Y).id() != (Q + Y).id());
  CHECK(G.scalar("s1", f32).id() != G.scalar("s2", f32).id());
  CHECK(G.inputs().size() == 4);
  CHECK(G.scalars().size() == 3);
}

TEST_CASE("lookup by name", "[builder]") {
  Graph G;
  Value X = G.input("x", f32, {4});
  Value S = G.scalar("eps", f32);
  G.output("y", exp(X));
  CHECK(G.inputNamed("x").id() == X.id());
  CHECK(G.scalarNamed("eps").id() == S.id());
  CHECK(G.outputNamed("y") == exp(X).id());
  CHECK(G.node(X.id()).A0 == 0);
}

TEST_CASE("shape and dtype errors name the op and the operands",
          "[builder]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 4});
  Value Three = G.input("three", f32, {3});
  Value C = G.input("c", f32, {"C", 4});
  Value H = G.input("h", bf16, {"B", 4});
  Value Bo = G.input("bo", boolean, {4});

  CHECK_THROWS_AS(X + Three, Error);
  CHECK_THROWS_WITH(X + Three, Contains("add") && Contains("'x' f32[B,4]") &&
                                   Contains("'three' f32[3]") &&
                                   Contains("do not broadcast"));
  CHECK_THROWS_WITH(X * C,
                    Contains("mul") && Contains("[B,4]") && Contains("[C,4]"));
  CHECK_THROWS_WITH(where(X, X, X), Contains("where") &&
                                        Contains("'x' f32[B,4]") &&
                                        Contains("must be bool"));
  CHECK_THROWS_WITH(where(Bo, X, Three), Contains("where") &&
                                             Contains("'three' f32[3]"));
  CHECK_THROWS_WITH(fma(X, Three, X), Contains("fma") && Contains("[3]"));
  CHECK_THROWS_WITH(concat({X, H}), Contains("concat") &&
                                        Contains("'h' bf16[B,4]") &&
                                        Contains("'x' f32[B,4]") &&
                                        Contains("same dtype"));
  CHECK_THROWS_WITH(concat({X, C}), Contains("concat") && Contains("dim 0"));
  CHECK_THROWS_WITH(Bo + Bo, Contains("add") && Contains("bool"));
  CHECK_THROWS_WITH(exp(Bo), Contains("exp") && Contains("'bo' bool[4]"));
  CHECK_THROWS_WITH(reduceMax(Bo),
                    Contains("reduce_max") && Contains("'bo' bool[4]"));
  CHECK_THROWS_WITH(broadcastTo(Three, {"B", 4}),
                    Contains("broadcast") && Contains("'three' f32[3]") &&
                        Contains("[B,4]"));
}

TEST_CASE("axis, slice and reshape errors", "[builder]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 8});
  Value Scalar = G.scalar("s", f32);

  CHECK_THROWS_WITH(sum(Scalar), Contains("sum") && Contains("rank 0") &&
                                     Contains("'s' f32[]") &&
                                     Contains("ReduceScope::All"));
  CHECK_THROWS_WITH(mean(G.constant(1.0)),
                    Contains("mean") && Contains("rank 0"));
  CHECK_NOTHROW(sum(Scalar, ReduceScope::All));

  CHECK_THROWS_WITH(slice(X, 2, 9), Contains("slice") &&
                                        Contains("[2, 9) is out of range") &&
                                        Contains("'x' f32[B,8]") &&
                                        Contains("<= 8"));
  CHECK_THROWS_WITH(slice(X, -1, 2), Contains("out of range"));
  CHECK_THROWS_WITH(slice(X, 5, 3), Contains("out of range"));
  CHECK_THROWS_WITH(slice(G.input("d", f32, {4, "T"}), 0, 1),
                    Contains("slice") && Contains("dynamic ('T')"));
  CHECK_THROWS_WITH(slice(Scalar, 0, 1), Contains("slice") &&
                                             Contains("rank 0"));

  CHECK_THROWS_WITH(reshape(X, {"B", 3}),
                    Contains("reshape") && Contains("'x' f32[B,8]") &&
                        Contains("[B,3]") && Contains("same number"));
  CHECK_THROWS_WITH(reshape(X, {"C", 8}),
                    Contains("reshape") && Contains("[C,8]"));
  CHECK_THROWS_WITH(concat({}), Contains("concat"));
}

TEST_CASE("rank above MaxRank is rejected everywhere", "[builder]") {
  Graph G;
  CHECK_THROWS_WITH(G.input("big", f32, {1, 2, 3, 4, 5}),
                    Contains("input 'big'") && Contains("rank 5"));
  Value X = G.input("x", f32, {2, 3, 4, 5});
  CHECK_THROWS_WITH(reshape(X, {2, 3, 2, 2, 5}),
                    Contains("reshape") && Contains("rank 5 > 4"));
  CHECK_THROWS_WITH(broadcastTo(X, {1, 2, 3, 4, 5}),
                    Contains("broadcast") && Contains("rank 5 > 4"));
  CHECK_THROWS_WITH(randUniform(G.scalar("seed", i64), {1, 1, 1, 1, 1}),
                    Contains("rand_uniform") && Contains("rank 5 > 4"));
  CHECK_THROWS_WITH(G.input("neg", f32, {2, -1}),
                    Contains("input 'neg'") && Contains("negative"));
  // Negative target dims would otherwise pass the element-count check in
  // pairs ([-2,-4] has 8 elements).
  Value Eight = G.input("eight", f32, {8});
  CHECK_THROWS_WITH(reshape(Eight, {-2, -4}),
                    Contains("reshape") && Contains("negative dim -2"));
  CHECK_THROWS_WITH(broadcastTo(G.input("one", f32, {1}), {-3}),
                    Contains("broadcast") && Contains("negative dim -3"));
  CHECK_THROWS_WITH(randUniform(G.scalar("seed2", i64), {-4}),
                    Contains("rand_uniform") && Contains("negative dim -4"));
}

TEST_CASE("rand_uniform needs an integer run-time scalar seed", "[builder]") {
  Graph G;
  Value T = G.input("t", i64, {4});
  CHECK_THROWS_WITH(randUniform(T, {4}),
                    Contains("rand_uniform") && Contains("'t' i64[4]") &&
                        Contains("integer run-time scalar"));
  CHECK_THROWS_WITH(randUniform(G.scalar("fs", f32), {4}),
                    Contains("'fs' f32[]"));
  CHECK_THROWS_WITH(randUniform(G.constant(7.0, i64), {4}),
                    Contains("rand_uniform") && Contains("constant"));
  CHECK_THROWS_WITH(randUniform(G.scalar("seed", i64), {4}, 0, i32),
                    Contains("rand_uniform") && Contains("i32") &&
                        Contains("float"));
}

TEST_CASE("names: unknown, duplicate and empty", "[builder]") {
  Graph G;
  Value X = G.input("x", f32, {4});
  G.input("w", f32, {4});
  G.scalar("eps", f32);
  G.output("y", exp(X));

  CHECK_THROWS_WITH(G.inputNamed("z"), Contains("unknown input 'z'") &&
                                           Contains("'x', 'w'"));
  CHECK_THROWS_WITH(G.scalarNamed("x"), Contains("unknown scalar 'x'") &&
                                            Contains("'eps'"));
  CHECK_THROWS_WITH(G.outputNamed("q"),
                    Contains("unknown output 'q'") && Contains("'y'"));
  Graph Empty;
  CHECK_THROWS_WITH(Empty.inputNamed("x"), Contains("inputs: none"));
  CHECK_THROWS_WITH(Empty.outputNamed("x"), Contains("outputs: none"));

  CHECK_THROWS_WITH(G.input("x", f32, {4}),
                    Contains("input 'x'") && Contains("already used"));
  CHECK_THROWS_WITH(G.scalar("w", f32),
                    Contains("scalar 'w'") && Contains("already used"));
  CHECK_THROWS_WITH(G.input("eps", f32, {4}), Contains("already used"));
  CHECK_THROWS_WITH(G.output("y", X),
                    Contains("output 'y'") && Contains("already used"));
  CHECK_THROWS_WITH(G.input("", f32, {4}), Contains("non-empty name"));
  CHECK_THROWS_WITH(G.scalar("", f32), Contains("non-empty name"));
  CHECK_THROWS_WITH(G.output("", X), Contains("non-empty name"));
  // A failed declaration leaves no trace.
  CHECK(G.inputs().size() == 2);
  CHECK(G.scalars().size() == 1);
  CHECK(G.outputs().size() == 1);
}

TEST_CASE("outputs and operands must belong to the graph", "[builder]") {
  Graph G, Other;
  Value X = G.input("x", f32, {4});
  Value Y = Other.input("y", f32, {4});
  CHECK_THROWS_WITH(G.output("o", exp(Y)),
                    Contains("output 'o'") &&
                        Contains("does not belong to this graph"));
  CHECK_THROWS_WITH(G.output("e", Value()), Contains("does not belong"));
  CHECK_THROWS_WITH(X + Y, Contains("add") && Contains("different graphs") &&
                               Contains("'x'") && Contains("'y'"));
  CHECK_THROWS_WITH(concat({X, Y}), Contains("different graphs"));
  CHECK_THROWS_WITH(exp(Value()), Contains("exp") && Contains("empty Value"));
  CHECK_THROWS_WITH(Value() * 2.0, Contains("empty Value"));
  CHECK_THROWS_WITH(G.output("s", G.scalar("s", f32)),
                    Contains("output 's'") && Contains("scalar"));
  CHECK_THROWS_WITH(G.output("k", G.constant(1.0)),
                    Contains("output 'k'") && Contains("constant"));
  CHECK(G.outputs().empty());
}
