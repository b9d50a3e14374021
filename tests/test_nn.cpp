//===- tests/test_nn.cpp - nn composites: structure, errors, values -------===//
//
// Structure tests pin what the fusion pass will see (how many reductions, in
// which dtype); value tests run each composite on the reference interpreter
// and compare with the textbook formula written as a plain loop.
//
//===----------------------------------------------------------------------===//
#include "reference/Interpreter.h"
#include "ir/NN.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {

int countOps(const Graph &G, Op O) {
  int N = 0;
  for (const Node &Nd : G.nodes())
    N += Nd.Kind == O;
  return N;
}

bool hasShape(Value V, llvm::StringRef Expected) {
  return shapeStr(V.shape()) == Expected;
}

} // namespace

//===----------------------------------------------------------------------===//
// Graph structure and errors.
//===----------------------------------------------------------------------===//

TEST_CASE("rmsNorm: one mean, computed in f32, result in X's dtype", "[nn]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", 64});
  Value W = G.input("w", bf16, {64});
  Value Y = nn::rmsNorm(X, W, G.scalar("eps", f32));
  CHECK(Y.dtype() == bf16);
  CHECK(hasShape(Y, "[B,64]"));
  CHECK(countOps(G, Op::ReduceMean) == 1);
  CHECK(countOps(G, Op::Rsqrt) == 1);
  for (const Node &N : G.nodes())
    if (N.Kind == Op::ReduceMean)
      CHECK(N.Type == f32);
  CHECK(Y.node().Kind == Op::Cast);

  Graph F;
  Value XF = F.input("x", f32, {3, 8});
  Value YF = nn::rmsNorm(XF, F.input("w", f32, {8}), F.constant(1e-6));
  CHECK(YF.dtype() == f32);
  CHECK(countOps(F, Op::Cast) == 0);
  CHECK(countOps(F, Op::ReduceMean) == 1);
  // A [1] or rank-0 weight broadcasts to the last dim too.
  CHECK_NOTHROW(nn::rmsNorm(XF, F.input("w1", f32, {1}), F.constant(1e-6)));
}

TEST_CASE("rmsNorm errors name both operands", "[nn]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 64});
  Value Eps = G.constant(1e-6);
  CHECK_THROWS_WITH(nn::rmsNorm(X, G.input("w", f32, {32}), Eps),
                    Contains("rmsNorm") && Contains("weight") &&
                        Contains("'w' f32[32]") && Contains("'x' f32[B,64]") &&
                        Contains("[64]"));
  CHECK_THROWS_WITH(nn::rmsNorm(X, G.input("w2", f32, {"B", 64}), Eps),
                    Contains("rmsNorm") && Contains("[B,64]"));
  CHECK_THROWS_WITH(
      nn::rmsNorm(X, G.input("w3", f32, {64}), G.input("e", f32, {1})),
      Contains("rmsNorm") && Contains("eps") && Contains("rank 0"));
  CHECK_THROWS_WITH(
      nn::rmsNorm(G.input("xi", i32, {4}), G.input("wi", f32, {4}), Eps),
      Contains("rmsNorm") && Contains("'xi' i32[4]") && Contains("float"));
  CHECK_THROWS_WITH(nn::rmsNorm(G.scalar("s", f32), G.constant(1.0), Eps),
                    Contains("rmsNorm") && Contains("rank 0"));
}

TEST_CASE("layerNorm: two means, centred variance", "[nn]") {
  Graph G;
  Value X = G.input("x", f16, {"B", 32});
  Value Y = nn::layerNorm(X, G.input("w", f32, {32}), G.input("b", f32, {32}),
                          G.scalar("eps", f32));
  CHECK(Y.dtype() == f16);
  CHECK(hasShape(Y, "[B,32]"));
  CHECK(countOps(G, Op::ReduceMean) == 2);
  CHECK(countOps(G, Op::Sub) == 1);
  CHECK(countOps(G, Op::Rsqrt) == 1);

  CHECK_THROWS_WITH(nn::layerNorm(X, G.inputNamed("w"),
                                  G.input("b2", f32, {16}), G.constant(1e-5)),
                    Contains("layerNorm") && Contains("bias") &&
                        Contains("'b2' f32[16]") && Contains("f16[B,32]"));
}

TEST_CASE("softmax: a max and a sum reduction", "[nn]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", 4, 128});
  Value Y = nn::softmax(X);
  CHECK(Y.dtype() == bf16);
  CHECK(hasShape(Y, "[B,4,128]"));
  CHECK(countOps(G, Op::ReduceMax) == 1);
  CHECK(countOps(G, Op::ReduceSum) == 1);
  CHECK(countOps(G, Op::Exp) == 1);
  for (const Node &N : G.nodes())
    if (isReduction(N.Kind))
      CHECK((N.Type == f32 && N.scope() == ReduceScope::LastAxis));
  CHECK_THROWS_WITH(nn::softmax(G.constant(1.0)),
                    Contains("softmax") && Contains("rank 0"));
}

TEST_CASE("swiglu splits the last axis into gate and up", "[nn]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", 16});
  Value Y = nn::swiglu(X);
  CHECK(Y.dtype() == bf16);
  CHECK(hasShape(Y, "[B,8]"));
  CHECK(countOps(G, Op::Slice) == 2);
  CHECK(countOps(G, Op::Silu) == 1);
  for (const Node &N : G.nodes())
    if (N.Kind == Op::Slice)
      CHECK(((N.A0 == 0 && N.A1 == 8) || (N.A0 == 8 && N.A1 == 16)));

  CHECK(hasShape(
      nn::siluMul(G.input("g", f32, {"B", 8}), G.input("u", f32, {"B", 8})),
      "[B,8]"));
  CHECK_THROWS_WITH(nn::swiglu(G.input("odd", f32, {"B", 7})),
                    Contains("swiglu") && Contains("'odd' f32[B,7]") &&
                        Contains("even"));
  CHECK_THROWS_WITH(nn::swiglu(G.input("dyn", f32, {4, "I"})),
                    Contains("swiglu") && Contains("static even"));
  CHECK_THROWS_WITH(
      nn::siluMul(G.input("g2", f32, {4, 8}), G.input("u2", f32, {4, 6})),
      Contains("siluMul") && Contains("'g2' f32[4,8]") &&
          Contains("'u2' f32[4,6]"));
}

TEST_CASE("rope shapes and validation", "[nn]") {
  Graph G;
  Value X3 = G.input("x3", bf16, {"T", 4, 16});
  Value X4 = G.input("x4", f32, {2, "T", 4, 16});
  Value Cos = G.input("cos", f32, {"T", 8});
  Value Sin = G.input("sin", f32, {"T", 8});

  Value H3 = nn::rope(X3, Cos, Sin, nn::RopeStyle::HalfRotation);
  CHECK(H3.dtype() == bf16);
  CHECK(hasShape(H3, "[T,4,16]"));
  CHECK(H3.node().Kind == Op::Cast);
  Value H4 = nn::rope(X4, Cos, Sin, nn::RopeStyle::HalfRotation);
  CHECK(H4.dtype() == f32);
  CHECK(hasShape(H4, "[2,T,4,16]"));
  Value I3 = nn::rope(X3, Cos, Sin, nn::RopeStyle::Interleaved);
  CHECK(hasShape(I3, "[T,4,16]"));
  CHECK(I3.dtype() == bf16);
  G.verify();

  CHECK_THROWS_WITH(nn::rope(X4, Cos, Sin, nn::RopeStyle::Interleaved),
                    Contains("rope") && Contains("interleaved") &&
                        Contains("rank-3") && Contains("'x4' f32[2,T,4,16]"));
  CHECK_THROWS_WITH(nn::rope(G.input("odd", f32, {"T", 4, 15}), Cos, Sin),
                    Contains("rope") && Contains("'odd' f32[T,4,15]") &&
                        Contains("even"));
  CHECK_THROWS_WITH(nn::rope(G.input("dyn", f32, {"T", 4, "D"}), Cos, Sin),
                    Contains("rope") && Contains("head dim D"));
  CHECK_THROWS_WITH(nn::rope(G.input("r2", f32, {"T", 16}), Cos, Sin),
                    Contains("rope") && Contains("rank 2"));
  CHECK_THROWS_WITH(nn::rope(X3, G.input("cos16", f32, {"T", 16}), Sin),
                    Contains("rope") && Contains("cos") &&
                        Contains("'cos16' f32[T,16]") && Contains("[T,8]"));
  CHECK_THROWS_WITH(nn::rope(X3, Cos, G.input("sinS", f32, {"S", 8})),
                    Contains("rope") && Contains("sin") &&
                        Contains("'sinS' f32[S,8]"));
  CHECK_THROWS_WITH(nn::rope(X3, Cos, G.input("sin3", f32, {"T", 1, 8})),
                    Contains("rope") && Contains("f32[T,1,8]"));
}

TEST_CASE("dropout structure and validation", "[nn]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", 64});
  Value Seed = G.scalar("seed", i64);
  CHECK(nn::dropout(X, 0.0, Seed).id() == X.id());

  size_t Before = countOps(G, Op::RandUniform);
  Value Y = nn::dropout(X, 0.25, Seed, 7);
  CHECK(Y.dtype() == bf16);
  CHECK(hasShape(Y, "[B,64]"));
  CHECK(countOps(G, Op::RandUniform) == static_cast<int>(Before) + 1);
  for (const Node &N : G.nodes())
    if (N.Kind == Op::RandUniform) {
      CHECK(N.A0 == 7);
      CHECK(shapeStr(N.Dims) == "[B,64]");
    }
  CHECK(countOps(G, Op::Where) == 1);

  CHECK_THROWS_WITH(nn::dropout(X, 1.0, Seed), Contains("dropout") &&
                                                   Contains("0 <= p < 1") &&
                                                   Contains("'x' bf16[B,64]"));
  CHECK_THROWS_WITH(nn::dropout(X, -0.1, Seed), Contains("0 <= p < 1"));
  CHECK_THROWS_WITH(nn::dropout(X, std::nan(""), Seed), Contains("0 <= p < 1"));
  CHECK_THROWS_WITH(nn::dropout(X, 0.5, G.scalar("fseed", f32)),
                    Contains("rand_uniform") && Contains("'fseed'"));
  CHECK_THROWS_WITH(nn::dropout(G.input("xi", i32, {4}), 0.5, Seed),
                    Contains("dropout") && Contains("'xi' i32[4]"));
}

TEST_CASE("geluBias picks the erf or tanh form", "[nn]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", 32});
  Value B = G.input("b", bf16, {32});
  Value E = nn::geluBias(X, B);
  Value T = nn::geluBias(X, B, /*TanhApprox=*/true);
  CHECK(E.node().Kind == Op::Gelu);
  CHECK(T.node().Kind == Op::GeluTanh);
  CHECK(E.dtype() == bf16);
  CHECK(hasShape(T, "[B,32]"));
  CHECK(countOps(G, Op::Add) == 1);
  // The bias must not grow the input's shape.
  CHECK_THROWS_WITH(nn::geluBias(G.input("x2", f32, {32}), X),
                    Contains("geluBias") && Contains("'x' bf16[B,32]") &&
                        Contains("'x2' f32[32]"));
}

//===----------------------------------------------------------------------===//
// Values on the reference interpreter against hand-written loops.
//===----------------------------------------------------------------------===//

namespace {

HostTensor randomF32(llvm::ArrayRef<int64_t> Dims, uint64_t SeedValue,
                     double Lo = -2, double Hi = 2) {
  std::mt19937_64 Rng(SeedValue);
  return randomTensor(f32, Dims, Rng, Lo, Hi);
}

void checkClose(const std::vector<double> &Got, const std::vector<double> &Want,
                double Rel = 1e-5, double Abs = 1e-6) {
  REQUIRE(Got.size() == Want.size());
  for (size_t I = 0; I < Got.size(); ++I) {
    INFO("element " << I);
    CHECK(std::abs(Got[I] - Want[I]) <= Abs + Rel * std::abs(Want[I]));
  }
}

} // namespace

TEST_CASE("rmsNorm matches the formula", "[nn]") {
  const int64_t Rows = 3, H = 16;
  const double Eps = 1e-5;
  Graph G;
  Value X = G.input("x", f32, {"B", H});
  G.output("y", nn::rmsNorm(X, G.input("w", f32, {H}), G.scalar("eps", f32)));

  Bindings B;
  B.Inputs["x"] = randomF32({Rows, H}, 1);
  B.Inputs["w"] = randomF32({H}, 2);
  B.Scalars["eps"] = Eps;
  B.Dims["B"] = Rows;
  HostTensor Y = interpret(G, B).at("y");
  CHECK(Y.Type == f32);
  CHECK(Y.Dims == std::vector<int64_t>{Rows, H});

  const auto &XD = B.Inputs["x"].Data, &WD = B.Inputs["w"].Data;
  std::vector<double> Want(Rows * H);
  for (int64_t R = 0; R < Rows; ++R) {
    double Ms = 0;
    for (int64_t I = 0; I < H; ++I)
      Ms += XD[R * H + I] * XD[R * H + I];
    double Inv = 1.0 / std::sqrt(Ms / H + Eps);
    for (int64_t I = 0; I < H; ++I)
      Want[R * H + I] = XD[R * H + I] * Inv * WD[I];
  }
  checkClose(Y.Data, Want);
}

TEST_CASE("rmsNorm on bf16 rounds once at the end", "[nn]") {
  const int64_t Rows = 2, H = 32;
  Graph G;
  Value X = G.input("x", bf16, {Rows, H});
  G.output("y", nn::rmsNorm(X, G.input("w", bf16, {H}), G.constant(1e-6)));
  Bindings B;
  std::mt19937_64 Rng(3);
  B.Inputs["x"] = randomTensor(bf16, {Rows, H}, Rng);
  B.Inputs["w"] = randomTensor(bf16, {H}, Rng);
  HostTensor Y = interpret(G, B).at("y");
  CHECK(Y.Type == bf16);

  const auto &XD = B.Inputs["x"].Data, &WD = B.Inputs["w"].Data;
  std::vector<double> Want(Rows * H);
  for (int64_t R = 0; R < Rows; ++R) {
    double Ms = 0;
    for (int64_t I = 0; I < H; ++I)
      Ms += XD[R * H + I] * XD[R * H + I];
    double Inv = 1.0 / std::sqrt(Ms / H + 1e-6);
    for (int64_t I = 0; I < H; ++I)
      Want[R * H + I] = XD[R * H + I] * Inv * WD[I];
  }
  // One bf16 rounding of the result: 2^-8 relative.
  checkClose(Y.Data, Want, 1.0 / 256, 1e-6);
}

TEST_CASE("layerNorm matches the formula", "[nn]") {
  const int64_t Rows = 4, H = 24;
  const double Eps = 1e-5;
  Graph G;
  Value X = G.input("x", f32, {Rows, H});
  G.output("y", nn::layerNorm(X, G.input("w", f32, {H}), G.input("b", f32, {H}),
                              G.constant(Eps)));
  Bindings B;
  // An offset far from zero is where a one-pass variance would lose digits.
  B.Inputs["x"] = randomF32({Rows, H}, 4, 100, 104);
  B.Inputs["w"] = randomF32({H}, 5);
  B.Inputs["b"] = randomF32({H}, 6);
  HostTensor Y = interpret(G, B).at("y");

  const auto &XD = B.Inputs["x"].Data, &WD = B.Inputs["w"].Data,
             &BD = B.Inputs["b"].Data;
  std::vector<double> Want(Rows * H);
  for (int64_t R = 0; R < Rows; ++R) {
    double Mu = 0, Var = 0;
    for (int64_t I = 0; I < H; ++I)
      Mu += XD[R * H + I];
    Mu /= H;
    for (int64_t I = 0; I < H; ++I)
      Var += (XD[R * H + I] - Mu) * (XD[R * H + I] - Mu);
    Var /= H;
    for (int64_t I = 0; I < H; ++I)
      Want[R * H + I] =
          (XD[R * H + I] - Mu) / std::sqrt(Var + Eps) * WD[I] + BD[I];
  }
  checkClose(Y.Data, Want, 1e-4, 1e-4);
}

TEST_CASE("softmax matches the formula and rows sum to 1", "[nn]") {
  const int64_t Rows = 5, N = 33;
  Graph G;
  G.output("y", nn::softmax(G.input("x", f32, {Rows, N})));
  Bindings B;
  // Large logits: without the max subtraction exp() would overflow.
  B.Inputs["x"] = randomF32({Rows, N}, 7, 50, 90);
  HostTensor Y = interpret(G, B).at("y");

  const auto &XD = B.Inputs["x"].Data;
  std::vector<double> Want(Rows * N);
  for (int64_t R = 0; R < Rows; ++R) {
    double M = -INFINITY, S = 0, RowSum = 0;
    for (int64_t I = 0; I < N; ++I)
      M = std::max(M, XD[R * N + I]);
    for (int64_t I = 0; I < N; ++I)
      S += std::exp(XD[R * N + I] - M);
    for (int64_t I = 0; I < N; ++I) {
      Want[R * N + I] = std::exp(XD[R * N + I] - M) / S;
      RowSum += Y.Data[R * N + I];
    }
    CHECK(RowSum == Approx(1.0).epsilon(1e-5));
  }
  checkClose(Y.Data, Want);
}

TEST_CASE("swiglu and geluBias match the formulas", "[nn]") {
  const int64_t Rows = 3, I2 = 20, I = I2 / 2;
  Graph G;
  Value X = G.input("x", f32, {Rows, I2});
  G.output("swiglu", nn::swiglu(X));
  Value Bias = G.input("bias", f32, {I2});
  G.output("gelu", nn::geluBias(X, Bias));
  G.output("gelu_tanh", nn::geluBias(X, Bias, true));
  Bindings B;
  B.Inputs["x"] = randomF32({Rows, I2}, 8, -4, 4);
  B.Inputs["bias"] = randomF32({I2}, 9);
  auto Out = interpret(G, B);
  CHECK(Out.at("swiglu").Dims == std::vector<int64_t>{Rows, I});

  const auto &XD = B.Inputs["x"].Data, &BD = B.Inputs["bias"].Data;
  std::vector<double> Sw(Rows * I), Ge(Rows * I2), Gt(Rows * I2);
  for (int64_t R = 0; R < Rows; ++R) {
    for (int64_t J = 0; J < I; ++J) {
      double Gate = XD[R * I2 + J], Up = XD[R * I2 + I + J];
      Sw[R * I + J] = Gate / (1 + std::exp(-Gate)) * Up;
    }
    for (int64_t J = 0; J < I2; ++J) {
      double V = XD[R * I2 + J] + BD[J];
      Ge[R * I2 + J] = 0.5 * V * (1 + std::erf(V / std::sqrt(2.0)));
      double K = std::sqrt(2.0 / M_PI);
      Gt[R * I2 + J] =
          0.5 * V * (1 + std::tanh(K * (V + 0.044715 * V * V * V)));
    }
  }
  checkClose(Out.at("swiglu").Data, Sw);
  checkClose(Out.at("gelu").Data, Ge);
  checkClose(Out.at("gelu_tanh").Data, Gt);
}

namespace {

/// The rotation both styles apply, with pair (A, B) taken per style.
std::vector<double> ropeLoop(const HostTensor &X, const HostTensor &Cos,
                             const HostTensor &Sin, nn::RopeStyle Style) {
  int64_t D = X.Dims.back(), Heads = X.Dims[X.Dims.size() - 2],
          T = X.Dims[X.Dims.size() - 3], Half = D / 2;
  int64_t Outer = X.numel() / (T * Heads * D);
  std::vector<double> Out(X.Data.size());
  for (int64_t O = 0; O < Outer; ++O)
    for (int64_t Tt = 0; Tt < T; ++Tt)
      for (int64_t Hh = 0; Hh < Heads; ++Hh) {
        int64_t Base = ((O * T + Tt) * Heads + Hh) * D;
        for (int64_t I = 0; I < Half; ++I) {
          double C = Cos.Data[Tt * Half + I], S = Sin.Data[Tt * Half + I];
          int64_t IA = Style == nn::RopeStyle::HalfRotation ? I : 2 * I;
          int64_t IB =
              Style == nn::RopeStyle::HalfRotation ? I + Half : 2 * I + 1;
          double A = X.Data[Base + IA], B = X.Data[Base + IB];
          Out[Base + IA] = A * C - B * S;
          Out[Base + IB] = B * C + A * S;
        }
      }
  return Out;
}

} // namespace

TEST_CASE("rope matches a hand loop in both styles", "[nn]") {
  const int64_t T = 3, Heads = 2, D = 8;
  Graph G;
  Value X3 = G.input("x3", f32, {"T", Heads, D});
  Value X4 = G.input("x4", f32, {2, "T", Heads, D});
  Value Cos = G.input("cos", f32, {"T", D / 2});
  Value Sin = G.input("sin", f32, {"T", D / 2});
  G.output("half3", nn::rope(X3, Cos, Sin, nn::RopeStyle::HalfRotation));
  G.output("half4", nn::rope(X4, Cos, Sin, nn::RopeStyle::HalfRotation));
  G.output("inter3", nn::rope(X3, Cos, Sin, nn::RopeStyle::Interleaved));

  Bindings B;
  B.Inputs["x3"] = randomF32({T, Heads, D}, 10);
  B.Inputs["x4"] = randomF32({2, T, Heads, D}, 11);
  B.Inputs["cos"] = randomF32({T, D / 2}, 12, -1, 1);
  B.Inputs["sin"] = randomF32({T, D / 2}, 13, -1, 1);
  B.Dims["T"] = T;
  auto Out = interpret(G, B);

  const HostTensor &C = B.Inputs["cos"], &S = B.Inputs["sin"];
  CHECK(Out.at("half3").Dims == B.Inputs["x3"].Dims);
  CHECK(Out.at("inter3").Dims == B.Inputs["x3"].Dims);
  checkClose(Out.at("half3").Data,
             ropeLoop(B.Inputs["x3"], C, S, nn::RopeStyle::HalfRotation));
  checkClose(Out.at("half4").Data,
             ropeLoop(B.Inputs["x4"], C, S, nn::RopeStyle::HalfRotation));
  checkClose(Out.at("inter3").Data,
             ropeLoop(B.Inputs["x3"], C, S, nn::RopeStyle::Interleaved));
}

TEST_CASE("dropout zeroes about p of the elements and scales the rest",
          "[nn]") {
  const int64_t Rows = 100, N = 100;
  const double P = 0.3;
  Graph G;
  Value X = G.input("x", f32, {Rows, N});
  Value Seed = G.scalar("seed", i64);
  G.output("y", nn::dropout(X, P, Seed, 5));
  // The same draw, hash-consed with the one inside dropout.
  G.output("u", randUniform(Seed, {Rows, N}, 5));
  G.output("y_other", nn::dropout(X, P, Seed, 6));

  Bindings B;
  B.Inputs["x"] = randomF32({Rows, N}, 14, 1, 2); // never 0
  B.Scalars["seed"] = 1234;
  auto Out = interpret(G, B);
  const auto &XD = B.Inputs["x"].Data, &Y = Out.at("y").Data,
             &U = Out.at("u").Data, &YO = Out.at("y_other").Data;

  int64_t Kept = 0, Differ = 0;
  for (size_t I = 0; I < XD.size(); ++I) {
    bool Keep = Y[I] != 0;
    Kept += Keep;
    Differ += Keep != (YO[I] != 0);
    CHECK(Keep == (U[I] >= P));
    if (Keep)
      CHECK(Y[I] == Approx(XD[I] / (1 - P)).epsilon(1e-6));
  }
  double Fraction = static_cast<double>(Kept) / static_cast<double>(XD.size());
  CHECK(Fraction == Approx(1 - P).margin(0.03));
  // Another stream draws another mask.
  CHECK(Differ > 1000);

  // Same seed, same stream: the same mask.
  auto Again = interpret(G, B);
  CHECK(Again.at("y").Data == Y);
}

TEST_CASE("layerNormBackward and rmsNormBackward are the gradients of the forward", "[nn]") {
  // The oracle: central differences of L(x) = sum(dy * norm(x)) in double,
  // the statistics recomputed from x each time; dw and db from the forward's
  // definition. The graphs take the statistics the forward would save.
  const int64_t Rows = 3, H = 8;
  const double Eps = 1e-5;
  for (bool Ln : {true, false}) {
    INFO((Ln ? "layerNormBackward" : "rmsNormBackward"));
    Bindings B;
    B.Inputs["x"] = randomF32({Rows, H}, 11);
    B.Inputs["dy"] = randomF32({Rows, H}, 12);
    B.Inputs["w"] = randomF32({H}, 13);
    const std::vector<double> &X = B.Inputs["x"].Data, &Dy = B.Inputs["dy"].Data,
                              &W = B.Inputs["w"].Data;
    auto Stats = [&](const std::vector<double> &V, int64_t R) {
      double Mu = 0, Sq = 0;
      for (int64_t I = 0; I < H; ++I)
        Mu += V[R * H + I];
      Mu = Ln ? Mu / H : 0;
      for (int64_t I = 0; I < H; ++I)
        Sq += (V[R * H + I] - Mu) * (V[R * H + I] - Mu);
      return std::pair<double, double>(Mu, 1 / std::sqrt(Sq / H + Eps));
    };
    auto Loss = [&](const std::vector<double> &V) {
      double L = 0;
      for (int64_t R = 0; R < Rows; ++R) {
        auto [Mu, Rs] = Stats(V, R);
        for (int64_t I = 0; I < H; ++I)
          L += Dy[R * H + I] * (V[R * H + I] - Mu) * Rs * W[I];
      }
      return L;
    };
    HostTensor Mean{f32, {Rows, 1}, {}}, Rstd{f32, {Rows, 1}, {}};
    for (int64_t R = 0; R < Rows; ++R) {
      auto [Mu, Rs] = Stats(X, R);
      Mean.Data.push_back(static_cast<float>(Mu));
      Rstd.Data.push_back(static_cast<float>(Rs));
    }
    Graph G;
    Value XV = G.input("x", f32, {Rows, H}), DyV = G.input("dy", f32, {Rows, H});
    Value WV = G.input("w", f32, {H}), RstdV = G.input("rstd", f32, {Rows, 1});
    nn::NormGrads Gr = Ln ? nn::layerNormBackward(XV, DyV, WV, G.input("mean", f32, {Rows, 1}),
                                                  RstdV)
                          : nn::rmsNormBackward(XV, DyV, WV, RstdV);
    G.output("dx", Gr.Dx);
    G.output("dw", Gr.Dw);
    CHECK(hasShape(Gr.Dw, "[1,8]"));
    CHECK(Gr.Db.valid() == Ln);
    if (Ln)
      G.output("db", Gr.Db);
    B.Inputs["rstd"] = Rstd;
    if (Ln)
      B.Inputs["mean"] = Mean;
    std::map<std::string, HostTensor> Out = interpret(G, B);

    std::vector<double> Dx(Rows * H), Dw(H, 0.0), Db(H, 0.0);
    for (int64_t K = 0; K < Rows * H; ++K) {
      std::vector<double> Up = X, Down = X;
      const double Step = 1e-5;
      Up[K] += Step;
      Down[K] -= Step;
      Dx[K] = (Loss(Up) - Loss(Down)) / (2 * Step);
    }
    for (int64_t R = 0; R < Rows; ++R) {
      auto [Mu, Rs] = Stats(X, R);
      for (int64_t I = 0; I < H; ++I) {
        Dw[I] += Dy[R * H + I] * (X[R * H + I] - Mu) * Rs;
        Db[I] += Dy[R * H + I];
      }
    }
    checkClose(Out.at("dx").Data, Dx, 1e-4, 1e-5);
    checkClose(Out.at("dw").Data, Dw, 1e-5, 1e-6);
    if (Ln)
      checkClose(Out.at("db").Data, Db, 1e-5, 1e-6);
  }
}

TEST_CASE("norm backward errors name the operand", "[nn]") {
  Graph G;
  Value X = G.input("x", f32, {4, 8}), Dy = G.input("dy", f32, {4, 8});
  Value W = G.input("w", f32, {8}), Rstd = G.input("rstd", f32, {4, 1});
  CHECK_THROWS_WITH(nn::rmsNormBackward(X, G.input("dy2", f32, {4, 7}), W, Rstd),
                    Contains("rmsNormBackward: dy") && Contains("not shaped like input"));
  CHECK_THROWS_WITH(nn::rmsNormBackward(X, Dy, W, G.input("r2", f32, {4})),
                    Contains("statistic") && Contains("[4,1]"));
  CHECK_THROWS_WITH(nn::layerNormBackward(X, Dy, G.input("w2", f32, {7}),
                                          G.input("mean", f32, {4, 1}), Rstd),
                    Contains("weight"));
  CHECK_THROWS_WITH(nn::rmsNormBackward(G.input("v", f32, {8}), G.input("dv", f32, {8}), W,
                                        Rstd),
                    Contains("rank 1"));
}
