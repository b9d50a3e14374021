//===- tests/test_fast_math.cpp - CompileOptions::FastMath ----------------===//
//
// FastMath spells f32 sigmoid/silu with __expf and __fdividef. The CPU part
// checks what is emitted and that the error bound stays tight where the
// intrinsics are accurate; the GPU part runs fused and unfused against the
// fp64 reference with the FastMath error bound (reference/ErrorBound.h).
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "reference/ErrorBound.h"
#include "ir/Half.h"
#include "ir/NN.h"
#include "reference/Tolerance.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

Graph activations(DType T) {
  Graph G;
  Value X = G.input("x", T, {"N"});
  Value U = G.input("u", T, {"N"});
  G.output("sigmoid", sigmoid(X));
  G.output("silu", silu(X));
  G.output("swiglu", silu(X) * U);
  return G;
}

/// x over the whole range where the intrinsics differ from libm, the
/// __fdividef cut-off near -87.3, the __expf overflow, and NaN/Inf.
Bindings sweep(DType T, int64_t N) {
  Bindings B;
  B.Dims["N"] = N;
  std::vector<double> X(N), U(N);
  std::uniform_real_distribution<double> Ux(-2, 2);
  for (int64_t I = 0; I < N; ++I) {
    X[I] = -100.0 + 200.0 * static_cast<double>(I) / static_cast<double>(N - 1);
    U[I] = Ux(rng());
  }
  const double Special[] = {NAN, INFINITY, -INFINITY, -87.3, -87.4, -88.7, -88.8, 0.0, -0.0};
  for (size_t K = 0; K < std::size(Special) && K < X.size(); ++K)
    X[rng()() % X.size()] = Special[K];
  // Values exact in the dtype, as the GPU sees them.
  for (std::vector<double> *V : {&X, &U})
    for (double &E : *V)
      E = roundToDType(E, T);
  B.Inputs["x"] = HostTensor{T, {N}, X};
  B.Inputs["u"] = HostTensor{T, {N}, U};
  return B;
}

} // namespace

TEST_CASE("FastMath spells f32 sigmoid/silu with intrinsics, and only when asked",
          "[fastmath]") {
  for (DType T : {DType::F32, DType::BF16, DType::F64}) {
    INFO("dtype " << dtypeName(T).str());
    Graph G = activations(T);
    CompileOptions Precise, Fast;
    Precise.Arch = Fast.Arch = "sm_90";
    Fast.FastMath = true;
    Executable P = testCompiler().compile(G, Precise);
    Executable F = testCompiler().compile(G, Fast);
    bool Intrinsics = T != DType::F64; // f64 has no __expf / __fdividef
    std::string FK = kernelSource(F), PK = kernelSource(P);
    bool HasExp = FK.find("__expf") != std::string::npos;
    bool HasDiv = FK.find("__fdividef") != std::string::npos;
    CHECK(HasExp == Intrinsics);
    CHECK(HasDiv == Intrinsics);
    CHECK(PK.find("__expf") == std::string::npos);
    CHECK(PK.find("__fdividef") == std::string::npos);
    CHECK(F.plan().find("fast math") != std::string::npos);
    CHECK(P.plan().find("fast math") == std::string::npos);
  }
}

TEST_CASE("FastMath error bound: tight where __expf is accurate, loose only past -87",
          "[fastmath]") {
  Graph G;
  Value X = G.input("x", DType::F32, {6});
  G.output("s", sigmoid(X));
  G.output("y", silu(X));
  Bindings B;
  B.Inputs["x"] = HostTensor{DType::F32, {6}, {0.5, 1.0, -4.0, 10.0, -80.0, -88.0}};
  ReferenceResult Precise = interpretWithBounds(G, B);
  ReferenceResult Fast = interpretWithBounds(G, B, true);
  const double U = std::ldexp(1.0, -24);
  for (const char *Out : {"s", "y"}) {
    const HostTensor &V = Fast.Values.at(Out);
    const HostTensor &BF = Fast.Bounds.at(Out), &BP = Precise.Bounds.at(Out);
    for (size_t I = 0; I < 5; ++I) {
      INFO(Out << " x = " << B.Inputs["x"].Data[I]);
      // A handful of ulp of the value plus the output rounding: 2 + 1.17|x|
      // ulp of exp, scaled by sigmoid(-x) <= 1, 2 ulp of __fdividef.
      double X0 = std::fabs(B.Inputs["x"].Data[I]);
      double Ulps = 2 * (2 + std::floor(1.173 * X0)) + 1 + 5 + 2;
      CHECK(BF.Data[I] <= Ulps * U * std::fabs(V.Data[I]) * 1.01 + 1e-44);
      CHECK(BF.Data[I] >= BP.Data[I]);
    }
    // x = -88: __fdividef may return 0, so the whole value is allowed.
    CHECK(BF.Data[5] >= std::fabs(V.Data[5]));
    CHECK(BP.Data[5] < 1e-3 * std::fabs(V.Data[5]));
  }
}

TEST_CASE("GPU: FastMath sigmoid/silu within their error bound, fused and unfused",
          "[gpu][fastmath]") {
  bool Gpu = haveGpu();
  for (DType T : {DType::F32, DType::F16, DType::BF16}) {
    Graph G = activations(T);
    for (int64_t N : {int64_t(1), int64_t(4097), int64_t(200003)}) {
      INFO("dtype " << dtypeName(T).str() << " N=" << N);
      Bindings B = sweep(T, N);
      for (bool Fuse : {true, false}) {
        CompileOptions Opts;
        Opts.Fuse = Fuse;
        Opts.FastMath = true;
        if (!Gpu)
          Opts.Arch = "sm_90";
        Executable E = testCompiler().compile(G, Opts);
        if (!Gpu)
          continue;
        ReferenceResult Ref = interpretWithBounds(G, B, true);
        HostRunOptions RO;
        RO.MisalignElems = N > 1 ? 1 : 0;
        std::map<std::string, HostTensor> Got = runOnDevice(E, B, RO);
        for (const GraphOutput &O : G.outputs()) {
          double Tol = pathTolerance(G, O.Id, B.Dims);
          CompareResult C = compareTensors(
              Got.at(O.Name), Ref.Values.at(O.Name), Ref.Bounds.at(O.Name), Tol,
              fmt::format("{} fast-math output '{}'", Fuse ? "fused" : "unfused", O.Name));
          INFO(C.Message);
          CHECK(C.Ok);
        }
      }
    }
  }
}
