//===- tests/test_interpreter.cpp - the fp64 reference interpreter --------===//
#include "ir/Graph.h"
#include "ir/Half.h"
#include "reference/Interpreter.h"
#include "ir/Philox.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <numbers>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {
constexpr double Inf = std::numeric_limits<double>::infinity();
const double NaN = std::numeric_limits<double>::quiet_NaN();

HostTensor tensor(DType T, std::vector<int64_t> Dims, std::vector<double> D) {
  return HostTensor{T, std::move(Dims), std::move(D)};
}

/// Evaluates output "y" of G with the given bindings.
HostTensor run(const Graph &G, Bindings B, const InterpretOptions &Opts = {}) {
  return interpret(G, B, Opts).at("y");
}

/// y = Fn(x) for a 1-D input of dtype T holding Xs.
template <typename Fn>
HostTensor unaryOn(DType T, std::vector<double> Xs, Fn F) {
  Graph G;
  auto N = static_cast<int64_t>(Xs.size());
  Value X = G.input("x", T, {N});
  G.output("y", F(X));
  Bindings B;
  B.Inputs["x"] = tensor(T, {N}, std::move(Xs));
  return run(G, B);
}

/// y = Fn(a, b) for two 1-D inputs of equal length.
template <typename Fn>
HostTensor binaryOn(DType T, std::vector<double> As, std::vector<double> Bs,
                    Fn F, DType TB = DType::F64) {
  Graph G;
  auto N = static_cast<int64_t>(As.size());
  DType Second = TB == DType::F64 ? T : TB;
  Value A = G.input("a", T, {N});
  Value Bv = G.input("b", Second, {N});
  G.output("y", F(A, Bv));
  Bindings B;
  B.Inputs["a"] = tensor(T, {N}, std::move(As));
  B.Inputs["b"] = tensor(Second, {N}, std::move(Bs));
  return run(G, B);
}

/// Element-wise equality where NaN equals NaN.
bool sameValues(const std::vector<double> &Got,
                const std::vector<double> &Want) {
  if (Got.size() != Want.size())
    return false;
  for (size_t I = 0; I < Got.size(); ++I)
    if (!(Got[I] == Want[I] || (std::isnan(Got[I]) && std::isnan(Want[I]))))
      return false;
  return true;
}
} // namespace

#define CHECK_VALUES(Got, ...)                                                 \
  do {                                                                         \
    std::vector<double> Want_ = __VA_ARGS__;                                   \
    INFO("got " << Catch::Detail::stringify((Got)) << " want "                 \
                << Catch::Detail::stringify(Want_));                           \
    CHECK(sameValues((Got), Want_));                                           \
  } while (0)

TEST_CASE("interp: unary float ops", "[interp]") {
  std::vector<double> Xs = {-2, -0.5, 0, 0.5, 4, NaN, Inf};
  auto On = [&](auto F) { return unaryOn(DType::F64, Xs, F).Data; };
  CHECK_VALUES(On([](Value X) { return neg(X); }),
               {2, 0.5, -0.0, -0.5, -4, NaN, -Inf});
  CHECK_VALUES(On([](Value X) { return abs(X); }),
               {2, 0.5, 0, 0.5, 4, NaN, Inf});
  CHECK_VALUES(On([](Value X) { return relu(X); }),
               {0, 0, 0, 0.5, 4, NaN, Inf});
  CHECK_VALUES(On([](Value X) { return floor(X); }),
               {-2, -1, 0, 0, 4, NaN, Inf});
  CHECK_VALUES(On([](Value X) { return ceil(X); }),
               {-2, -0.0, 0, 1, 4, NaN, Inf});
  CHECK_VALUES(unaryOn(DType::F64, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999999999999994, 3.7, NaN, -Inf},
                       [](Value X) { return rint(X); })
                   .Data,
               {-2, -2, -0.0, 0, 2, 2, 0, 4, NaN, -Inf});
  CHECK(std::signbit(unaryOn(DType::F64, {-0.5}, [](Value X) { return rint(X); }).Data[0]));
  CHECK_VALUES(unaryOn(DType::I32, {-7, 0, 5}, [](Value X) { return rint(X); }).Data,
               {-7, 0, 5});
  CHECK_VALUES(On([](Value X) { return sqrt(X); }),
               {NaN, NaN, 0, std::sqrt(0.5), 2, NaN, Inf});
  CHECK_VALUES(On([](Value X) { return rsqrt(X); }),
               {NaN, NaN, Inf, 1 / std::sqrt(0.5), 0.5, NaN, 0});
  CHECK_VALUES(On([](Value X) { return reciprocal(X); }),
               {-0.5, -2, Inf, 2, 0.25, NaN, 0});
  CHECK_VALUES(On([](Value X) { return exp2(X); }),
               {0.25, std::exp2(-0.5), 1, std::exp2(0.5), 16, NaN, Inf});
  CHECK_VALUES(On([](Value X) { return log2(X); }),
               {NaN, NaN, -Inf, -1, 2, NaN, Inf});
  CHECK_VALUES(On([](Value X) { return exp(X); }),
               {std::exp(-2.0), std::exp(-0.5), 1, std::exp(0.5), std::exp(4.0),
                NaN, Inf});
  CHECK_VALUES(On([](Value X) { return log(X); }),
               {NaN, NaN, -Inf, std::log(0.5), std::log(4.0), NaN, Inf});
  CHECK_VALUES(On([](Value X) { return tanh(X); }),
               {std::tanh(-2.0), std::tanh(-0.5), 0, std::tanh(0.5),
                std::tanh(4.0), NaN, 1});
  CHECK_VALUES(On([](Value X) { return erf(X); }),
               {std::erf(-2.0), std::erf(-0.5), 0, std::erf(0.5),
                std::erf(4.0), NaN, 1});
  CHECK_VALUES(On([](Value X) { return logicalNot(X); }),
               {0, 0, 1, 0, 0, 0, 0});

  // Formulas checked at hand-computed points.
  std::vector<double> Ys = {0, 1, -1};
  auto At = [&](auto F) { return unaryOn(DType::F64, Ys, F).Data; };
  HostTensor S = unaryOn(DType::F64, Ys, [](Value X) { return sigmoid(X); });
  CHECK(S.Data[0] == 0.5);
  CHECK(S.Data[1] == Approx(0.7310585786300049).epsilon(1e-15));
  CHECK(S.Data[2] == Approx(0.2689414213699951).epsilon(1e-15));
  std::vector<double> Silu = At([](Value X) { return silu(X); });
  CHECK(Silu[0] == 0);
  CHECK(Silu[1] == Approx(0.7310585786300049).epsilon(1e-15));
  CHECK(Silu[2] == Approx(-0.2689414213699951).epsilon(1e-15));
  std::vector<double> Gelu = At([](Value X) { return gelu(X); });
  CHECK(Gelu[0] == 0);
  CHECK(Gelu[1] == Approx(0.8413447460685429).epsilon(1e-15));
  CHECK(Gelu[2] == Approx(-0.15865525393145707).epsilon(1e-14));
  std::vector<double> GeluT = At([](Value X) { return geluTanh(X); });
  CHECK(GeluT[0] == 0);
  CHECK(GeluT[1] == Approx(0.8411919906082768).epsilon(1e-15));
  CHECK(GeluT[2] == Approx(-0.15880800939172324).epsilon(1e-14));
  // Far left 1 + tanh(z) is 0 in double; the value is x e^2z / (1 + e^2z).
  std::vector<double> GeluTFar =
      unaryOn(DType::F64, {-7, -10}, [](Value X) { return geluTanh(X); }).Data;
  CHECK(GeluTFar[0] == Approx(-2.3154422620725384e-15).epsilon(1e-12));
  CHECK(GeluTFar[1] == Approx(-1.2040923482098023e-37).epsilon(1e-12));
  std::vector<double> Trig = At([](Value X) { return sin(X) + cos(X); });
  CHECK(Trig[1] == Approx(std::sin(1.0) + std::cos(1.0)).epsilon(1e-15));
  // Saturation of sigmoid without NaN.
  CHECK_VALUES(unaryOn(DType::F64, {-1000, 1000},
                       [](Value X) { return sigmoid(X); })
                   .Data,
               {0, 1});
}

TEST_CASE("interp: every unary op of ir/Ops.def evaluates, NaN in, NaN out",
          "[interp]") {
  // Enumerates the table, so a new op is covered without a test edit: each
  // float unary op has a reference value and propagates NaN; an op that keeps
  // integer dtypes has integer semantics (integers stay integers).
  unsigned Count = 0;
  for (Op O : AllOps) {
    if (opKind(O) != OpKind::Unary || O == Op::Cast || O == Op::Not)
      continue;
    INFO("op " << opName(O).str());
    ++Count;
    HostTensor Y = unaryOn(DType::F64, {NaN, 0.25, -3, 2},
                           [O](Value X) { return unary(O, X); });
    REQUIRE(Y.Data.size() == 4);
    CHECK(std::isnan(Y.Data[0]));
    if (opInfo(O).Result != ResultRule::Same)
      continue;
    HostTensor I = unaryOn(DType::I64, {-3, 0, 7},
                           [O](Value X) { return unary(O, X); });
    CHECK(I.Type == DType::I64);
    for (double V : I.Data)
      CHECK(V == std::trunc(V));
  }
  CHECK(Count >= 20);
}

TEST_CASE("interp: binary ops, NaN propagation and comparisons", "[interp]") {
  std::vector<double> A = {NaN, 1, 3, -7, 7, 5.5, 2};
  std::vector<double> B = {1, NaN, 2, 3, -3, 2, 10};
  auto On = [&](auto F) { return binaryOn(DType::F64, A, B, F).Data; };
  CHECK_VALUES(On([](Value X, Value Y) { return max(X, Y); }),
               {NaN, NaN, 3, 3, 7, 5.5, 10});
  CHECK_VALUES(On([](Value X, Value Y) { return min(X, Y); }),
               {NaN, NaN, 2, -7, -3, 2, 2});
  CHECK_VALUES(On([](Value X, Value Y) { return mod(X, Y); }),
               {NaN, NaN, 1, -1, 1, 1.5, 2});
  CHECK_VALUES(On([](Value X, Value Y) { return X + Y; }),
               {NaN, NaN, 5, -4, 4, 7.5, 12});
  CHECK_VALUES(On([](Value X, Value Y) { return X - Y; }),
               {NaN, NaN, 1, -10, 10, 3.5, -8});
  CHECK_VALUES(On([](Value X, Value Y) { return X * Y; }),
               {NaN, NaN, 6, -21, -21, 11, 20});
  CHECK_VALUES(On([](Value X, Value Y) { return X / Y; }),
               {NaN, NaN, 1.5, -7.0 / 3, -7.0 / 3, 2.75, 0.2});
  CHECK_VALUES(On([](Value X, Value Y) { return pow(X, Y); }),
               {NaN, 1, 9, -343, std::pow(7.0, -3.0), 30.25, 1024});
  // C pow: 1^y and x^0 are 1 even for NaN y or x (CUDA's powf agrees).
  CHECK_VALUES(binaryOn(DType::F64, {NaN, 1, -8}, {0, Inf, 1.0 / 3},
                        [](Value X, Value Y) { return pow(X, Y); })
                   .Data,
               {1, 1, NaN});
  CHECK_VALUES(On([](Value X, Value Y) { return lt(X, Y); }),
               {0, 0, 0, 1, 0, 0, 1});
  CHECK_VALUES(On([](Value X, Value Y) { return le(X, Y); }),
               {0, 0, 0, 1, 0, 0, 1});
  CHECK_VALUES(On([](Value X, Value Y) { return gt(X, Y); }),
               {0, 0, 1, 0, 1, 1, 0});
  CHECK_VALUES(On([](Value X, Value Y) { return ge(X, Y); }),
               {0, 0, 1, 0, 1, 1, 0});
  CHECK_VALUES(On([](Value X, Value Y) { return eq(X, Y); }),
               {0, 0, 0, 0, 0, 0, 0});
  CHECK_VALUES(On([](Value X, Value Y) { return ne(X, Y); }),
               {1, 1, 1, 1, 1, 1, 1});
  CHECK_VALUES(binaryOn(DType::F64, {1, 2}, {1, 3},
                        [](Value X, Value Y) { return eq(X, Y); })
                   .Data,
               {1, 0});
  CHECK_VALUES(binaryOn(DType::F64, {0, 0, 2, NaN}, {0, 1, -1, 0},
                        [](Value X, Value Y) { return logicalAnd(X, Y); })
                   .Data,
               {0, 0, 1, 0});
  CHECK_VALUES(binaryOn(DType::F64, {0, 0, 2, NaN}, {0, 1, -1, 0},
                        [](Value X, Value Y) { return logicalOr(X, Y); })
                   .Data,
               {0, 1, 1, 1});
  CHECK(binaryOn(DType::F64, {1}, {2}, [](Value X, Value Y) {
          return lt(X, Y);
        }).Type == DType::Bool);
  // Float mod by zero and of Inf is NaN (C fmod); mod by Inf is the dividend.
  CHECK_VALUES(binaryOn(DType::F64, {1, Inf, -2.5}, {0, 2, Inf},
                        [](Value X, Value Y) { return mod(X, Y); })
                   .Data,
               {NaN, NaN, -2.5});
}

TEST_CASE("interp: integer ops are exact and wrap like the GPU", "[interp]") {
  auto I32 = [](std::vector<double> A, std::vector<double> B, auto F) {
    return binaryOn(DType::I32, std::move(A), std::move(B), F);
  };
  HostTensor M = I32({-7, 7, 7, -7, 5, -2147483648.0}, {3, -3, 0, 0, 5, -1},
                     [](Value X, Value Y) { return mod(X, Y); });
  CHECK(M.Type == DType::I32);
  CHECK_VALUES(M.Data, {-1, 1, 0, 0, 0, 0});
  CHECK_VALUES(I32({2147483647}, {1}, [](Value X, Value Y) { return X + Y; })
                   .Data,
               {-2147483648.0});
  CHECK_VALUES(I32({65536}, {65536}, [](Value X, Value Y) { return X * Y; })
                   .Data,
               {0});
  CHECK_VALUES(I32({-3, 4}, {2, -9},
                   [](Value X, Value Y) { return max(X, Y); })
                   .Data,
               {2, 4});
  // Integer division is true division in f32.
  HostTensor D = I32({7, -7}, {2, 2}, [](Value X, Value Y) { return X / Y; });
  CHECK(D.Type == DType::F32);
  CHECK_VALUES(D.Data, {3.5, -3.5});
  // i64 arithmetic is exact beyond 2^24 (where f32 would round).
  HostTensor L = binaryOn(DType::I64, {16777217}, {2},
                          [](Value X, Value Y) { return X * Y; });
  CHECK(L.Type == DType::I64);
  CHECK_VALUES(L.Data, {33554434});
  HostTensor N = unaryOn(DType::I32, {-2147483648.0, -5, 5},
                         [](Value X) { return abs(X); });
  CHECK_VALUES(N.Data, {-2147483648.0, 5, 5});
  CHECK_VALUES(unaryOn(DType::I32, {-3, 0, 3}, [](Value X) { return relu(X); })
                   .Data,
               {0, 0, 3});
  // Transcendentals of ints give f32.
  HostTensor E = unaryOn(DType::I32, {0, 4}, [](Value X) { return sqrt(X); });
  CHECK(E.Type == DType::F32);
  CHECK_VALUES(E.Data, {0, 2});
}

TEST_CASE("interp: casts round, truncate and saturate", "[interp]") {
  std::vector<double> Xs = {3.7, -3.7, 3e9, -3e9, NaN, Inf, 0};
  auto CastTo = [&](DType T) {
    return unaryOn(DType::F64, Xs, [T](Value X) { return cast(X, T); });
  };
  CHECK_VALUES(CastTo(DType::I32).Data,
               {3, -3, 2147483647.0, -2147483648.0, 0, 2147483647.0, 0});
  CHECK_VALUES(CastTo(DType::I64).Data,
               {3, -3, 3e9, -3e9, 0, std::ldexp(1, 63), 0});
  CHECK_VALUES(CastTo(DType::Bool).Data, {1, 1, 1, 1, 1, 1, 0});
  CHECK_VALUES(unaryOn(DType::F64, {1e5, 65519, 1 + std::ldexp(1, -11)},
                       [](Value X) { return cast(X, DType::F16); })
                   .Data,
               {Inf, 65504, 1});
  CHECK_VALUES(unaryOn(DType::F64,
                       {1 + std::ldexp(1, -8), 1 + 3 * std::ldexp(1, -8)},
                       [](Value X) { return cast(X, DType::BF16); })
                   .Data,
               {1, 1 + std::ldexp(1, -6)});
  // A cast rounds even as an intermediate: cast to bf16 and back to f64.
  CHECK_VALUES(unaryOn(DType::F64, {1 + std::ldexp(1, -9)},
                       [](Value X) {
                         return cast(cast(X, DType::BF16), DType::F64) - 1.0;
                       })
                   .Data,
               {0});
}

TEST_CASE("interp: intermediates are not rounded, outputs, constants and "
          "scalars are",
          "[interp]") {
  // bf16 x; (x + 2^-9) - 1. Fused: the intermediate 1 + 2^-9 is kept, so the
  // result is 2^-9. Unfused (every node rounded to bf16): 1 + 2^-9 -> 1 -> 0.
  Graph G;
  Value X = G.input("x", DType::BF16, {1});
  G.output("y", (X + std::ldexp(1, -9)) - 1.0);
  Bindings B;
  B.Inputs["x"] = tensor(DType::BF16, {1}, {1});
  HostTensor Fused = run(G, B);
  CHECK(Fused.Type == DType::BF16);
  CHECK_VALUES(Fused.Data, {std::ldexp(1, -9)});
  InterpretOptions Unfused;
  Unfused.RoundEveryNode = true;
  CHECK_VALUES(run(G, B, Unfused).Data, {0});

  // The output is rounded to its dtype.
  Graph G2;
  Value X2 = G2.input("x", DType::F32, {1});
  G2.output("y", X2 / 3.0);
  Bindings B2;
  B2.Inputs["x"] = tensor(DType::F32, {1}, {1});
  CHECK_VALUES(run(G2, B2).Data, {static_cast<double>(1.0f / 3.0f)});

  // An f32 constant holds (float)0.1 even in an f64 expression; a literal
  // beside an f64 operand is an f64 constant and stays 0.1.
  Graph G3;
  Value X3 = G3.input("x", DType::F64, {1});
  G3.output("y", X3 + G3.constant(0.1, DType::F32));
  G3.output("lit", X3 + 0.1);
  Bindings B3;
  B3.Inputs["x"] = tensor(DType::F64, {1}, {0});
  auto C = interpret(G3, B3);
  CHECK(C.at("y").Type == DType::F64);
  CHECK_VALUES(C.at("y").Data, {static_cast<double>(0.1f)});
  CHECK_VALUES(C.at("lit").Data, {0.1});

  // A scalar is rounded to its own dtype: an f32 eps holds (float)eps.
  Graph G4;
  Value X4 = G4.input("x", DType::F64, {2});
  Value Eps = G4.scalar("eps", DType::F32);
  G4.output("y", X4 * Eps);
  Bindings B4;
  B4.Inputs["x"] = tensor(DType::F64, {2}, {1, 2});
  B4.Scalars["eps"] = 0.1;
  CHECK_VALUES(run(G4, B4).Data,
               {static_cast<double>(0.1f), 2 * static_cast<double>(0.1f)});
}

TEST_CASE("interp: where and fma", "[interp]") {
  Graph G;
  Value C = G.input("c", DType::Bool, {3});
  Value A = G.input("a", DType::F32, {3});
  Value Bv = G.input("b", DType::F32, {3});
  G.output("y", where(C, A, Bv));
  G.output("f", fma(A, Bv, A));
  Bindings B;
  B.Inputs["c"] = tensor(DType::Bool, {3}, {1, 0, 1});
  B.Inputs["a"] = tensor(DType::F32, {3}, {1, 2, NaN});
  B.Inputs["b"] = tensor(DType::F32, {3}, {10, 20, 30});
  auto R = interpret(G, B);
  CHECK_VALUES(R.at("y").Data, {1, 20, NaN});
  CHECK_VALUES(R.at("f").Data, {11, 42, NaN});
}

TEST_CASE("interp: NumPy broadcasting", "[interp]") {
  Graph G;
  Value A = G.input("a", DType::F32, {3, 1});
  Value Bv = G.input("b", DType::F32, {4});
  G.output("y", A * 10.0 + Bv);
  G.output("z", broadcastTo(Bv, {2, 3, 4}));
  Bindings B;
  B.Inputs["a"] = tensor(DType::F32, {3, 1}, {1, 2, 3});
  B.Inputs["b"] = tensor(DType::F32, {4}, {0, 1, 2, 3});
  auto R = interpret(G, B);
  CHECK(R.at("y").Dims == std::vector<int64_t>{3, 4});
  CHECK_VALUES(R.at("y").Data,
               {10, 11, 12, 13, 20, 21, 22, 23, 30, 31, 32, 33});
  CHECK(R.at("z").Dims == std::vector<int64_t>{2, 3, 4});
  std::vector<double> Z;
  for (int I = 0; I < 6; ++I)
    Z.insert(Z.end(), {0, 1, 2, 3});
  CHECK_VALUES(R.at("z").Data, Z);
}

TEST_CASE("interp: reductions", "[interp]") {
  Graph G;
  Value X = G.input("x", DType::F32, {2, 3});
  G.output("sum", sum(X));
  G.output("max", reduceMax(X));
  G.output("min", reduceMin(X));
  G.output("mean", mean(X));
  G.output("all", sum(X, ReduceScope::All));
  G.output("allmax", reduceMax(X, ReduceScope::All));
  Bindings B;
  B.Inputs["x"] = tensor(DType::F32, {2, 3}, {1, 2, 3, 4, NaN, -6});
  auto R = interpret(G, B);
  CHECK(R.at("sum").Dims == std::vector<int64_t>{2, 1});
  CHECK_VALUES(R.at("sum").Data, {6, NaN});
  CHECK_VALUES(R.at("max").Data, {3, NaN});
  CHECK_VALUES(R.at("min").Data, {1, NaN});
  CHECK_VALUES(R.at("mean").Data, {2, NaN});
  CHECK(R.at("all").Dims.empty());
  CHECK(R.at("all").numel() == 1);
  CHECK_VALUES(R.at("all").Data, {NaN});
  CHECK_VALUES(R.at("allmax").Data, {NaN});

  B.Inputs["x"] = tensor(DType::F32, {2, 3}, {1, 2, 3, 4, 5, -6});
  R = interpret(G, B);
  CHECK_VALUES(R.at("all").Data, {9});
  CHECK_VALUES(R.at("allmax").Data, {5});
  CHECK_VALUES(R.at("min").Data, {1, -6});
}

TEST_CASE("interp: empty reductions give the identities", "[interp]") {
  Graph G;
  Value X = G.input("x", DType::F32, {"B", "N"});
  G.output("sum", sum(X));
  G.output("max", reduceMax(X));
  G.output("min", reduceMin(X));
  G.output("mean", mean(X));
  G.output("all", mean(X, ReduceScope::All));
  Bindings B;
  B.Dims = {{"B", 2}, {"N", 0}};
  B.Inputs["x"] = tensor(DType::F32, {2, 0}, {});
  auto R = interpret(G, B);
  CHECK(R.at("sum").Dims == std::vector<int64_t>{2, 1});
  CHECK_VALUES(R.at("sum").Data, {0, 0});
  CHECK_VALUES(R.at("max").Data, {-Inf, -Inf});
  CHECK_VALUES(R.at("min").Data, {Inf, Inf});
  CHECK_VALUES(R.at("mean").Data, {NaN, NaN});
  CHECK_VALUES(R.at("all").Data, {NaN});
  // No rows at all: empty results.
  B.Dims = {{"B", 0}, {"N", 5}};
  B.Inputs["x"] = tensor(DType::F32, {0, 5}, {});
  R = interpret(G, B);
  CHECK(R.at("sum").Dims == std::vector<int64_t>{0, 1});
  CHECK(R.at("sum").Data.empty());
}

TEST_CASE("interp: integer reductions", "[interp]") {
  Graph G;
  Value X = G.input("x", DType::I32, {2, 2});
  G.output("sum", sum(X));
  G.output("mean", mean(X));
  G.output("max", reduceMax(X));
  Bindings B;
  B.Inputs["x"] =
      tensor(DType::I32, {2, 2}, {2147483647.0, 2147483647.0, -3, 2});
  auto R = interpret(G, B);
  CHECK(R.at("sum").Type == DType::I64); // no i32 wrap: sums are i64
  CHECK_VALUES(R.at("sum").Data, {4294967294.0, -1});
  CHECK(R.at("mean").Type == DType::F32);
  CHECK_VALUES(R.at("mean").Data, {2147483648.0, -0.5});
  CHECK(R.at("max").Type == DType::I32);
  CHECK_VALUES(R.at("max").Data, {2147483647.0, 2});
}

TEST_CASE("interp: views", "[interp]") {
  Graph G;
  Value X = G.input("x", DType::F32, {2, 4});
  Value Y = G.input("y", DType::F32, {2, 1});
  G.output("slice", slice(X, 1, 3));
  G.output("concat", concat({X, Y, slice(X, 0, 1)}));
  G.output("reshape", reshape(X, {4, 2}));
  G.output("flat", reshape(X, {8}) + 0.0);
  Bindings B;
  B.Inputs["x"] = tensor(DType::F32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  B.Inputs["y"] = tensor(DType::F32, {2, 1}, {-1, -2});
  auto R = interpret(G, B);
  CHECK(R.at("slice").Dims == std::vector<int64_t>{2, 2});
  CHECK_VALUES(R.at("slice").Data, {1, 2, 5, 6});
  CHECK(R.at("concat").Dims == std::vector<int64_t>{2, 6});
  CHECK_VALUES(R.at("concat").Data,
               {0, 1, 2, 3, -1, 0, 4, 5, 6, 7, -2, 4});
  CHECK(R.at("reshape").Dims == std::vector<int64_t>{4, 2});
  CHECK_VALUES(R.at("reshape").Data, {0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(R.at("flat").Dims == std::vector<int64_t>{8});
}

TEST_CASE("interp: dynamic dims bound at run time", "[interp]") {
  Graph G;
  Value X = G.input("x", DType::F32, {"B", 3});
  Value W = G.input("w", DType::F32, {3});
  G.output("y", sum(X * W));
  for (int64_t Batch : {1, 2, 5}) {
    Bindings B;
    B.Dims["B"] = Batch;
    std::vector<double> Data;
    for (int64_t I = 0; I < Batch * 3; ++I)
      Data.push_back(static_cast<double>(I));
    B.Inputs["x"] = tensor(DType::F32, {Batch, 3}, Data);
    B.Inputs["w"] = tensor(DType::F32, {3}, {1, 10, 100});
    HostTensor Y = run(G, B);
    REQUIRE(Y.Dims == std::vector<int64_t>{Batch, 1});
    for (int64_t R = 0; R < Batch; ++R)
      CHECK(Y.Data[R] == 3 * R + 10 * (3 * R + 1) + 100 * (3 * R + 2));
  }
  CHECK(resolveShape({Dim("B"), Dim(4)}, {{"B", 7}}) ==
        std::vector<int64_t>{7, 4});
  CHECK_THROWS_WITH(resolveShape({Dim("T"), Dim(4)}, {{"B", 7}}),
                    Contains("'T'") && Contains("[T,4]"));
}

TEST_CASE("interp: binding errors name the binding and what was expected",
          "[interp]") {
  Graph G;
  Value X = G.input("x", DType::F32, {"B", 4});
  Value S = G.scalar("eps", DType::F32);
  G.output("y", X + S);
  auto Good = [] {
    Bindings B;
    B.Dims["B"] = 2;
    B.Inputs["x"] = tensor(DType::F32, {2, 4}, std::vector<double>(8, 1.0));
    B.Scalars["eps"] = 1e-5;
    return B;
  };
  CHECK(run(G, Good()).Data.size() == 8);

  Bindings B = Good();
  B.Inputs.erase("x");
  CHECK_THROWS_WITH(run(G, B), Contains("input 'x'") &&
                                   Contains("not bound") &&
                                   Contains("f32[B,4]"));
  B = Good();
  B.Scalars.clear();
  CHECK_THROWS_WITH(run(G, B),
                    Contains("scalar 'eps'") && Contains("not bound"));
  B = Good();
  B.Dims.clear();
  CHECK_THROWS_WITH(run(G, B), Contains("input 'x'") && Contains("'B'") &&
                                   Contains("unbound"));
  B = Good();
  B.Dims["B"] = -1;
  CHECK_THROWS_WITH(run(G, B), Contains("'B'") && Contains("-1"));
  B = Good();
  B.Inputs["x"].Dims = {4, 2};
  CHECK_THROWS_WITH(run(G, B), Contains("input 'x'") &&
                                   Contains("shape [4,2]") &&
                                   Contains("expected [B,4] = [2,4]"));
  B = Good();
  B.Inputs["x"].Type = DType::BF16;
  CHECK_THROWS_WITH(run(G, B), Contains("input 'x'") && Contains("bf16") &&
                                   Contains("expected f32"));
  B = Good();
  B.Inputs["x"].Data.pop_back();
  CHECK_THROWS_WITH(run(G, B), Contains("input 'x'") && Contains("7 values") &&
                                   Contains("expected 8"));
  B = Good();
  B.Inputs["z"] = tensor(DType::F32, {1}, {0});
  CHECK_THROWS_WITH(run(G, B),
                    Contains("input 'z'") && Contains("inputs: 'x'"));
  B = Good();
  B.Scalars["epsilon"] = 1;
  CHECK_THROWS_WITH(run(G, B), Contains("scalar 'epsilon'"));
  B = Good();
  B.Dims["T"] = 3;
  CHECK_THROWS_WITH(run(G, B), Contains("dim 'T'") && Contains("'B'"));
}

TEST_CASE("interp: rand_uniform is Philox keyed by index, stream and seed",
          "[interp]") {
  Graph G;
  Value Seed = G.scalar("seed", DType::I64);
  Value X = G.input("x", DType::F32, {"B", 33});
  G.output("y", randUniform(Seed, {"B", 33}, /*Stream=*/3));
  G.output("z", randUniform(Seed, {"B", 33}, /*Stream=*/4) + X);
  Bindings B;
  B.Dims["B"] = 5;
  B.Scalars["seed"] = 1234567;
  B.Inputs["x"] = tensor(DType::F32, {5, 33}, std::vector<double>(165, 0.0));
  auto R = interpret(G, B);
  const HostTensor &Y = R.at("y");
  REQUIRE(Y.Dims == std::vector<int64_t>{5, 33});
  for (int64_t I = 0; I < 165; ++I) {
    REQUIRE(Y.Data[I] >= 0);
    REQUIRE(Y.Data[I] < 1);
    REQUIRE(Y.Data[I] == philoxUniform(I, 3, 1234567));
    REQUIRE(R.at("z").Data[I] == philoxUniform(I, 4, 1234567));
  }
  CHECK(Y.Data != R.at("z").Data);
  // A negative seed is used as its two's-complement 64-bit pattern.
  B.Scalars["seed"] = -1;
  CHECK(interpret(G, B).at("y").Data[7] == philoxUniform(7, 3, -1));
}

TEST_CASE("interp: an output may be an input, f16 outputs round",
          "[interp]") {
  Graph G;
  Value X = G.input("x", DType::F16, {2});
  G.output("y", X);
  G.output("y2", X / 3.0);
  Bindings B;
  B.Inputs["x"] = tensor(DType::F16, {2}, {1.5, -0.25});
  auto R = interpret(G, B);
  CHECK_VALUES(R.at("y").Data, {1.5, -0.25});
  CHECK(R.at("y2").Type == DType::F16);
  CHECK_VALUES(R.at("y2").Data, {roundToDType(0.5, DType::F16),
                                 roundToDType(-0.25 / 3, DType::F16)});
  CHECK(R.at("y2").Data[1] != -0.25 / 3);
}
