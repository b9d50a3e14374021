//===- tests/test_gelu_tanh.cpp - gelu_tanh's f32 form --------------------===//
//
// gelu_tanh computed in f32 (every non-f64 float dtype) is
// x / (1 + exp2f(x (A + B x^2))) with __fdividef (jf_gelu_tanhf in
// codegen/device/jitfuse_device.cuh), f64 keeps 0.5 x (1 + tanh(z)). The CPU
// part checks what is emitted and that the error model covers the formula
// evaluated on the host with every documented step error at its extremes;
// the GPU part runs it fused and unfused against the fp64 reference.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "ir/Half.h"
#include "ir/NN.h"
#include "reference/ErrorBound.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

Graph biasGelu(DType T) {
  Graph G;
  Value X = G.input("x", T, {"B", 1021});
  Value Bias = G.input("bias", T, {1021});
  G.output("y", nn::geluBias(X, Bias, /*TanhApprox=*/true));
  G.output("g", geluTanh(X));
  return G;
}

/// x over [-100, 100] (the __fdividef cut-off near -10 included) with
/// NaN/Inf, the bias small so x + bias covers the same range.
Bindings sweep(DType T, int64_t Rows) {
  Bindings B;
  B.Dims["B"] = Rows;
  const int64_t N = Rows * 1021;
  std::vector<double> X(N), Bias(1021);
  for (int64_t I = 0; I < N; ++I)
    X[I] = -100.0 + 200.0 * static_cast<double>(I) / static_cast<double>(N - 1);
  std::uniform_real_distribution<double> Ub(-0.5, 0.5);
  for (double &E : Bias)
    E = Ub(rng());
  const double Special[] = {NAN, INFINITY, -INFINITY, -9.9, -10.0, -10.1, 0.0, -0.0, 1e-3};
  for (size_t K = 0; K < std::size(Special); ++K)
    X[rng()() % X.size()] = Special[K];
  for (std::vector<double> *V : {&X, &Bias})
    for (double &E : *V)
      E = roundToDType(E, T);
  B.Inputs["x"] = HostTensor{T, {Rows, 1021}, X};
  B.Inputs["bias"] = HostTensor{T, {1021}, Bias};
  return B;
}

/// The f32 value \p F moved by \p Ulps units in the last place.
float moveUlps(float F, int Ulps) {
  for (; Ulps > 0; --Ulps)
    F = std::nextafter(F, INFINITY);
  for (; Ulps < 0; ++Ulps)
    F = std::nextafter(F, -INFINITY);
  return F;
}

} // namespace

TEST_CASE("gelu_tanh: f32 as x / (1 + exp2f(a)), f64 as the tanh form",
          "[numerics][gelu]") {
  for (DType T : {DType::F32, DType::BF16, DType::F64}) {
    INFO("dtype " << dtypeName(T).str());
    Graph G;
    G.output("g", geluTanh(G.input("x", T, {"N"})));
    CompileOptions Opts;
    Opts.Arch = "sm_90";
    Executable E = testCompiler().compile(G, Opts);
    std::string K = kernelSource(E);
    bool F32Form = T != DType::F64;
    CHECK((K.find("jf_gelu_tanhf(") != std::string::npos) == F32Form);
    CHECK((K.find("jf_gelu_tanh(") != std::string::npos) == !F32Form);
  }
}

TEST_CASE("gelu_tanh f32: the bound covers the formula at every step's worst error",
          "[numerics][gelu]") {
  // The host runs the device's steps in f32 and moves exp2f's and
  // __fdividef's results by their documented 2 ulp either way; the fp64
  // reference with its bound must hold all four. A sign or a literal wrong
  // in the model (or in the device formula mirrored here) fails.
  const float A = -0x1.26aec2p+1f, B = -0x1.a5a7d0p-4f;
  const int64_t N = 40001;
  Graph G;
  G.output("g", geluTanh(G.input("x", DType::F32, {N})));
  Bindings Bd;
  std::vector<double> X(N);
  for (int64_t I = 0; I < N; ++I)
    X[I] = static_cast<double>(static_cast<float>(-12.0 + 24.0 * I / double(N - 1)));
  Bd.Inputs["x"] = HostTensor{DType::F32, {N}, X};
  ReferenceResult R = interpretWithBounds(G, Bd);
  const std::vector<double> &V = R.Values.at("g").Data, &Bnd = R.Bounds.at("g").Data;
  const double U = std::ldexp(1.0, -24);
  int64_t Checked = 0;
  for (int64_t I = 0; I < N; ++I) {
    float Xf = static_cast<float>(X[I]);
    float Arg = Xf * std::fma(B, Xf * Xf, A);
    for (int DE : {-2, 2})
      for (int DD : {-2, 2}) {
        float E = moveUlps(std::exp2(Arg), DE);
        float D = 1.0f + E;
        // __fdividef returns 0 past 2^126.
        float Got = D > 0x1p126f ? 0.0f : moveUlps(Xf / D, DD);
        INFO("x = " << X[I] << " ref " << V[I] << " got " << Got << " bound " << Bnd[I]);
        REQUIRE(std::fabs(Got - V[I]) <= Bnd[I]);
        ++Checked;
      }
    // Positive x: within 10 u of the value (the tanh form allowed 3-4.5 u):
    // 2 ulp of __fdividef (5 u), exp2f's 5 u scaled by e / (1 + e) <= 1/2.
    if (X[I] > 0)
      CHECK(Bnd[I] <= 10 * U * std::fabs(V[I]) + 1e-44);
    // Negative x down to -9: relative, where the tanh form's 1 + tanh(z)
    // cancels and allowed 2.5 u |x| (absolute) on a value that falls as
    // exp(-1.6 x^2).
    if (X[I] < -1 && X[I] > -9)
      CHECK(Bnd[I] <= 500 * U * std::fabs(V[I]) + 1e-44);
  }
  CHECK(Checked == 4 * N);
}

TEST_CASE("GPU: gelu_tanh and bias + GELU within their error bound, fused and unfused",
          "[gpu][gelu]") {
  for (DType T : {DType::F32, DType::F16, DType::BF16}) {
    Graph G = biasGelu(T);
    for (int64_t Rows : {int64_t(1), int64_t(197)}) {
      INFO("dtype " << dtypeName(T).str() << " rows " << Rows);
      CheckOptions CO;
      CO.MisalignElems = 1;
      checkGraph(G, sweep(T, Rows), CO);
    }
  }
}
