//===- tests/test_op_table.cpp - ir/Ops.def read by every layer -----------===//
//
// The op table is the one place an op is described; these check that what
// the layers read from it (CUDA spelling, library ulps, flags, arity) is what
// they used to hold by hand, and that every row is complete for its kind.
//
//===----------------------------------------------------------------------===//
#include "codegen/Spelling.h"
#include "reference/ErrorBound.h"
#include "ir/Graph.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

using namespace jitfuse;
using namespace jitfuse::codegen;

TEST_CASE("opExpr spells each op from its table row as before", "[optable]") {
  using S = std::vector<std::string>;
  const S X = {"x"}, AB = {"a", "b"}, CAB = {"c", "a", "b"};
  // The strings the hand-written spellings produced (the golden kernels
  // pin the rest).
  CHECK(opExpr(Op::Neg, DType::F32, X) == "(-x)");
  CHECK(opExpr(Op::Exp, DType::F32, X) == "expf(x)");
  CHECK(opExpr(Op::Exp, DType::F64, X) == "exp(x)");
  CHECK(opExpr(Op::Rsqrt, DType::BF16, X) == "rsqrtf(x)");
  CHECK(opExpr(Op::Abs, DType::F16, X) == "fabsf(x)");
  CHECK(opExpr(Op::Abs, DType::I32, X) == "(x < 0 ? -x : x)");
  CHECK(opExpr(Op::Reciprocal, DType::F64, X) == "(1.0 / x)");
  CHECK(opExpr(Op::Sigmoid, DType::F32, X) == "(1.0f / (1.0f + expf(-x)))");
  CHECK(opExpr(Op::Silu, DType::F64, X) == "(x / (1.0 + exp(-x)))");
  CHECK(opExpr(Op::Relu, DType::F32, X) == "jf_max(x, (0.0f))");
  CHECK(opExpr(Op::Relu, DType::I64, X) == "jf_max(x, 0LL)");
  CHECK(opExpr(Op::Gelu, DType::F32, X) ==
        "(0.5f * x * (1.0f + erff(x * " + literal(M_SQRT1_2, DType::F32) + ")))");
  // The two forms of gelu_tanh live in codegen/device/jitfuse_device.cuh.
  CHECK(opExpr(Op::GeluTanh, DType::F64, X) == "jf_gelu_tanh(x)");
  CHECK(opExpr(Op::GeluTanh, DType::BF16, X) == "jf_gelu_tanhf(x)");
  CHECK(opExpr(Op::Floor, DType::F32, X) == "floorf(x)");
  CHECK(opExpr(Op::Floor, DType::I32, X) == "x");
  CHECK(opExpr(Op::Ceil, DType::F64, X) == "ceil(x)");
  CHECK(opExpr(Op::Rint, DType::F32, X) == "rintf(x)");
  CHECK(opExpr(Op::Rint, DType::BF16, X) == "rintf(x)");
  CHECK(opExpr(Op::Rint, DType::F64, X) == "rint(x)");
  CHECK(opExpr(Op::Rint, DType::I64, X) == "x");
  CHECK(opExpr(Op::Not, DType::Bool, X) == "(!x)");
  CHECK(opExpr(Op::Div, DType::F32, AB) == "(a / b)");
  CHECK(opExpr(Op::Max, DType::I32, AB) == "jf_max(a, b)");
  CHECK(opExpr(Op::Pow, DType::F32, AB) == "powf(a, b)");
  CHECK(opExpr(Op::Mod, DType::F64, AB) == "fmod(a, b)");
  CHECK(opExpr(Op::Mod, DType::I64, AB) == "jf_imod(a, b)");
  CHECK(opExpr(Op::Le, DType::F32, AB) == "(a <= b)");
  CHECK(opExpr(Op::Ne, DType::Bool, AB) == "(a != b)");
  CHECK(opExpr(Op::Or, DType::Bool, AB) == "(a || b)");
  CHECK(opExpr(Op::Where, DType::F32, CAB) == "(c ? a : b)");
  CHECK(opExpr(Op::Fma, DType::F32, CAB) == "fmaf(c, a, b)");
  CHECK(opExpr(Op::Fma, DType::I32, CAB) == "(c * a + b)");
  CHECK(opExpr(Op::Sigmoid, DType::F32, X, /*FastMath=*/true) ==
        "__fdividef(1.0f, 1.0f + __expf(-x))");
  CHECK(opExpr(Op::Silu, DType::F64, X, /*FastMath=*/true) ==
        "(x / (1.0 + exp(-x)))");
  CHECK(reduceFunctor(Op::ReduceSum) == "jf_add_op()");
  CHECK(reduceFunctor(Op::ReduceMean) == "jf_add_op()");
  CHECK(reduceFunctor(Op::ReduceMax) == "jf_max_op()");
  CHECK(reduceFunctor(Op::ReduceMin) == "jf_min_op()");
}

TEST_CASE("every row is complete for its kind", "[optable]") {
  // Each element-wise op (but cast) spells at every compute type its dtype
  // rule allows, using each operand; each reduction has a combine functor.
  for (Op O : AllOps) {
    INFO("op " << opName(O).str());
    const OpInfo &I = opInfo(O);
    switch (I.Kind) {
    case OpKind::Leaf: CHECK(I.Arity == 0); break;
    case OpKind::Unary: CHECK(I.Arity == 1); break;
    case OpKind::Binary: CHECK(I.Arity == 2); break;
    case OpKind::Ternary: CHECK(I.Arity == 3); break;
    case OpKind::Reduce:
      CHECK(I.Arity == 1);
      CHECK(I.Cuda != nullptr);
      break;
    case OpKind::View: CHECK((I.Arity == 1 || I.Arity == -1)); break;
    case OpKind::Random: CHECK(I.Arity == 1); break;
    }
    bool Elementwise = I.Kind == OpKind::Unary || I.Kind == OpKind::Binary ||
                       I.Kind == OpKind::Ternary;
    if (!Elementwise || O == Op::Cast)
      continue;
    REQUIRE(I.Cuda != nullptr);
    std::vector<std::string> Operands = {"p", "q", "r"};
    Operands.resize(static_cast<size_t>(I.Arity));
    bool FloatOnly = I.Result == ResultRule::FloatPromote;
    for (DType T : {DType::F32, DType::F64, DType::I32, DType::I64}) {
      if (FloatOnly && !isFloat(T))
        continue;
      std::string E = opExpr(O, T, Operands);
      for (const std::string &Operand : Operands)
        CHECK(E.find(Operand) != std::string::npos);
    }
  }
}

TEST_CASE("flags and library ulps come from the table", "[optable]") {
  std::set<Op> Comparisons, Logical;
  for (Op O : AllOps) {
    if (isComparison(O))
      Comparisons.insert(O);
    if (isLogical(O))
      Logical.insert(O);
  }
  CHECK(Comparisons ==
        std::set<Op>{Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne});
  CHECK(Logical == std::set<Op>{Op::Not, Op::And, Op::Or});
  // CUDA C++ Programming Guide, Mathematical Functions (the values the
  // error bound always used).
  CHECK(libraryUlps(Op::Exp, DType::F32) == 2);
  CHECK(libraryUlps(Op::Exp2, DType::F64) == 1);
  CHECK(libraryUlps(Op::Log, DType::F32) == 1);
  CHECK(libraryUlps(Op::Rsqrt, DType::F32) == 2);
  CHECK(libraryUlps(Op::Rsqrt, DType::F64) == 1);
  CHECK(libraryUlps(Op::Sin, DType::F64) == 2);
  CHECK(libraryUlps(Op::Tanh, DType::F64) == 2);
  CHECK(libraryUlps(Op::Erf, DType::F32) == 2);
  CHECK(libraryUlps(Op::Pow, DType::F32) == 8);
  CHECK(libraryUlps(Op::Pow, DType::F64) == 2);
  for (Op O : {Op::Sqrt, Op::Reciprocal, Op::Add, Op::Div, Op::Fma, Op::Mod,
               Op::Sigmoid, Op::Floor, Op::Rint})
    CHECK(libraryUlps(O, DType::F32) == 0);
}

TEST_CASE("rint: exact, but unconstrained where its operand's error spans a half",
          "[optable][numerics]") {
  // Bound Step reads the interpreter's rint: 3 * 0.5 = 1.5 is one f32
  // rounding away from either side of the jump; 3 * 0.25 = 0.75 is not.
  Graph G;
  Value X = G.input("x", f32, {2});
  G.output("y", rint(X * 3.0));
  Bindings B;
  B.Inputs["x"] = HostTensor{DType::F32, {2}, {0.25, 0.5}};
  ReferenceResult R = interpretWithBounds(G, B);
  CHECK(R.Values.at("y").Data == std::vector<double>{1, 2});
  const std::vector<double> &E = R.Bounds.at("y").Data;
  CHECK(E[0] == std::ldexp(1.0, -24) + std::ldexp(1.0, -149)); // output rounding only
  CHECK(std::isinf(E[1]));
}
