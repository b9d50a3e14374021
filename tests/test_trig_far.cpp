//===- tests/test_trig_far.cpp - sin/cos with their far path out of line --===//
//
// sin and cos are spelled jf_sinf/jf_cosf/jf_sin/jf_cos (ir/Ops.def): the
// library function in both branches, with the far-argument reduction
// (Payne-Hanek, |x| >= 105615 in f32, 2^31 in f64) called out of line. The
// CPU part reads the PTX: no kernel keeps an inlined copy of the slow path
// (its local array), and each far function is one .func. The GPU part runs
// arguments on both sides of each threshold, Inf and NaN against the fp64
// reference, fused and unfused.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "TestEnv.h"

#include "codegen/Codegen.h"
#include "ir/Half.h"
#include "runtime/Nvrtc.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <regex>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

Graph trigGraph(DType T) {
  Graph G;
  Value X = G.input("x", T, {"N"});
  Value U = G.input("u", T, {"N"});
  // Two chains per op so every kernel holds several calls.
  G.output("s", sin(X) * U + sin(X + U));
  G.output("c", cos(X) * U + cos(X - U));
  return G;
}

/// Values exact in \p T on both sides of the far threshold, far, special.
std::vector<double> trigArguments(DType T, int64_t N) {
  const double Threshold = T == DType::F64 ? 2147483648.0 : 105615.0;
  std::vector<double> Edge = {0.0,       -0.0,           1e-40,     3.14159265,
                              -1e4,      Threshold,      -Threshold, Threshold * 2,
                              1e6,       -3.0e7,         1e30,       INFINITY,
                              -INFINITY, NAN};
  if (T == DType::F64)
    Edge.push_back(1e300);
  // The largest values below the threshold, where the near branch still runs.
  Edge.push_back(std::nextafter(static_cast<float>(Threshold), 0.0f));
  Edge.push_back(-std::nextafter(static_cast<float>(Threshold), 0.0f));
  std::vector<double> X(N);
  std::uniform_real_distribution<double> Near(-2e5, 2e5), Log(0, 38);
  for (int64_t I = 0; I < N; ++I)
    X[I] = I < static_cast<int64_t>(Edge.size())
               ? Edge[I]
               : (I % 2 ? Near(rng()) : std::pow(10.0, Log(rng())) * (I % 4 ? 1 : -1));
  for (double &V : X)
    V = roundToDType(V, T);
  return X;
}

} // namespace

TEST_CASE("sin and cos keep the far-argument reduction out of every kernel",
          "[codegen][trig]") {
  for (DType T : {DType::F32, DType::BF16, DType::F64}) {
    for (bool Fuse : {true, false}) {
      INFO("dtype " << dtypeName(T).str() << (Fuse ? " fused" : " unfused"));
      CompileOptions Opts;
      Opts.Arch = "sm_90";
      Opts.Fuse = Fuse;
      Executable E = testCompiler().compile(trigGraph(T), Opts);
      const char *Sin = T == DType::F64 ? "jf_sin(" : "jf_sinf(";
      CHECK(E.source().find(Sin) != std::string::npos);
      std::map<std::string, std::string> Kernels = ptxEntries(E.ptx());
      REQUIRE_FALSE(Kernels.empty());
      for (const auto &[Name, Body] : Kernels) {
        INFO("kernel " << Name);
        // libdevice's Payne-Hanek loop keeps its 7 words in a local array:
        // inlined, every kernel had a __local_depot per call site.
        CHECK(Body.find(".local") == std::string::npos);
        CHECK(Body.find("__local_depot") == std::string::npos);
      }
      // One out-of-line copy of each far path the program uses (a C++
      // function: its PTX name is mangled, e.g. _Z11jf_sinf_farf).
      std::string Far = T == DType::F64 ? "jf_sin_far" : "jf_sinf_far";
      std::regex Func("\\.func[^\\n]*" + Far + "[fd]\\(");
      CHECK(std::distance(std::sregex_iterator(E.ptx().begin(), E.ptx().end(), Func),
                          std::sregex_iterator()) == 1);
    }
  }
}

TEST_CASE("f32 sin and cos: the near branch written out is the library's, to the PTX register",
          "[codegen][trig]") {
  // jf_sinf/jf_cosf spell out libdevice's fast path (jitfuse_device.cuh,
  // jf_trigf_near) so NVVM need not inline the library's slow path in every
  // call only to fold it away. The same kernel with the library call in the
  // near branch must compile to the same PTX: the same instructions on the
  // same registers, hence the same results. A new libdevice that changed
  // its fast path fails here.
  for (const char *Fn : {"sin", "cos"}) {
    INFO(Fn);
    auto Program = [&](const std::string &Near) {
      return codegen::deviceHelpers() +
             fmt::format("extern \"C\" __global__ void k(const float *x, float *y) {{\n"
                         "  const float v = x[threadIdx.x];\n"
                         "  y[threadIdx.x] = fabsf(v) >= 105615.0f ? jf_{0}f_far(v) : {1};\n"
                         "}}\n",
                         Fn, Near);
    };
    std::vector<std::string> Options = rt::defaultNvrtcOptions(9, 0);
    std::string Library =
        rt::compileCuda(Program(fmt::format("{}f(v)", Fn)), "library", Options, true).Ptx;
    std::string Ours = rt::compileCuda(
        Program(fmt::format("jf_trigf_near(v, {})", Fn[0] == 's' ? 0 : 1)), "ours", Options,
        true).Ptx;
    std::map<std::string, std::string> L = ptxEntries(Library), O = ptxEntries(Ours);
    REQUIRE(L.count("k"));
    REQUIRE(O.count("k"));
    CHECK(L["k"] == O["k"]);
    // And jf_sinf/jf_cosf are that branch.
    std::string Jf = rt::compileCuda(Program(fmt::format("jf_{}f(v)", Fn)), "jf", Options,
                                     true).Ptx;
    CHECK(ptxEntries(Jf)["k"].find("__local_depot") == std::string::npos);
  }
}

TEST_CASE("GPU: sin and cos on both sides of the far threshold, fused and unfused",
          "[gpu][trig]") {
  for (DType T : {DType::F32, DType::BF16, DType::F16, DType::F64}) {
    for (int64_t N : {int64_t(17), int64_t(4099)}) {
      INFO("dtype " << dtypeName(T).str() << " N=" << N);
      Graph G = trigGraph(T);
      Bindings B;
      B.Dims["N"] = N;
      B.Inputs["x"] = HostTensor{T, {N}, trigArguments(T, N)};
      std::vector<double> U(N);
      std::uniform_real_distribution<double> Uu(-2, 2);
      for (double &V : U)
        V = roundToDType(Uu(rng()), T);
      B.Inputs["u"] = HostTensor{T, {N}, U};
      CheckOptions CO;
      CO.MisalignElems = 1;
      checkGraph(G, B, CO);
    }
  }
}
