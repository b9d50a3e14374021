//===- tests/test_roofline.cpp - per-kernel bytes, time and bandwidth -----===//
//
// The roofline arithmetic against hand-computed values; the timing itself
// (Executable::profileKernels) is exercised on the GPU.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "exec/HostRun.h"
#include "exec/Roofline.h"
#include "ir/NN.h"
#include "reference/Tolerance.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// y = x * 2 + 1 over f32 [B, 64], plus a row sum: unfused, three kernels.
Graph smallGraph() {
  Graph G;
  Value X = G.input("x", DType::F32, {"B", 64});
  Value Y = X * 2.0 + 1.0;
  G.output("y", Y);
  G.output("s", sum(Y));
  return G;
}

} // namespace

TEST_CASE("roofline: predicted bytes, GB/s and % of ceiling per kernel", "[roofline]") {
  Graph G = smallGraph();
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.Fuse = false;
  Executable X = testCompiler().compile(G, Opts);
  REQUIRE(X.numKernels() == 3);
  int64_t B = 1000;
  int64_t Dims[] = {B};

  // Prediction only: mul reads x and writes x*2, add reads x*2 and writes y,
  // the sum reads y and writes one float per row.
  std::vector<KernelRoofline> P = kernelRoofline(X, Dims);
  REQUIRE(P.size() == 3);
  CHECK(P[0].Bytes == 2 * B * 64 * 4);
  CHECK(P[1].Bytes == 2 * B * 64 * 4);
  CHECK(P[2].Bytes == B * 64 * 4 + B * 4);
  CHECK(P[0].MedianUs == 0);
  CHECK(P[0].GBs == 0);
  std::string Text = formatRoofline(P);
  CHECK(Text.find(P[0].Name) != std::string::npos);
  CHECK(Text.find(" - ") != std::string::npos);

  // Timed: 512000 bytes in 0.5 us is 1024 GB/s; 25.6% of a 4000 GB/s ceiling.
  double Us[] = {0.5, 1.0, 0.0};
  std::vector<KernelRoofline> T = kernelRoofline(X, Dims, Us, 4000);
  CHECK(T[0].GBs == Approx(1024.0));
  CHECK(T[0].PctCeiling == Approx(25.6));
  CHECK(T[1].GBs == Approx(512.0));
  CHECK(T[2].GBs == 0); // not timed (a kernel with no elements)
  std::string Timed = formatRoofline(T, 4000);
  CHECK(Timed.find("1024") != std::string::npos);
  CHECK(Timed.find("26%") != std::string::npos);
  CHECK(Timed.find("ceiling 4000 GB/s") != std::string::npos);

  double Short[] = {1.0};
  CHECK_THROWS_WITH(kernelRoofline(X, Dims, Short), Catch::Contains("got 1 kernel times"));
  double Negative[] = {1.0, -1.0, 1.0};
  CHECK_THROWS_WITH(kernelRoofline(X, Dims, Negative), Catch::Contains("expected >= 0"));
}

TEST_CASE("roofline: kernels sharing a launch report the launch's time and bandwidth once",
          "[roofline][horizontal]") {
  // Two independent element-wise kernels: one horizontal launch.
  Graph G;
  Value X = G.input("x", f32, {"B", 64});
  Value Y = G.input("y", f32, {"B", 32});
  G.output("x2", X * 2.0);
  G.output("y3", Y * 3.0);
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.ExpectKernels = 2;
  Opts.ExpectLaunches = 1;
  Executable E = testCompiler().compile(G, Opts);
  int64_t B = 1000;
  int64_t Dims[] = {B};
  // profileKernels gives both kernels the launch's time.
  double Us[] = {0.5, 0.5};
  std::vector<KernelRoofline> T = kernelRoofline(E, Dims, Us, 4000);
  REQUIRE(T.size() == 2);
  CHECK(T[0].Bytes == 2 * B * 64 * 4);
  CHECK(T[1].Bytes == 2 * B * 32 * 4);
  // The launch moved 768000 bytes in 0.5 us: 1536 GB/s, for both rows.
  CHECK(T[0].GBs == Approx(1536.0));
  CHECK(T[1].GBs == Approx(1536.0));
  CHECK(T[0].Launch == T[1].Launch);
  // The total counts the launch's time once: 768000 bytes in 0.5 us.
  std::string Timed = formatRoofline(T, 4000);
  CHECK_THAT(Timed, Catch::Contains("0.5") && Catch::Contains("1536"));
  CHECK_THAT(Timed, !Catch::Contains("1.0 "));
  CHECK_THAT(Timed, Catch::Contains("share launch"));
}

TEST_CASE("roofline: an input read only through slices counts the sliced columns",
          "[roofline]") {
  // Hand-computed: f32 [B, 16]; the fused kernel reads columns [0, 12) once
  // (slices [0, 8) and [4, 12) overlap) and writes [B, 8].
  Graph G;
  Value X = G.input("x", DType::F32, {"B", 16});
  G.output("y", slice(X, 0, 8) * slice(X, 4, 12));
  CompileOptions O;
  O.Arch = "sm_90";
  Executable F = testCompiler().compile(G, O);
  REQUIRE(F.numKernels() == 1);
  CHECK(F.kernelBytes({5}) == std::vector<int64_t>{5 * 12 * 4 + 5 * 8 * 4});
  // Unfused: each slice kernel reads its 8 columns and writes them; the
  // multiply reads both slices and writes y.
  O.Fuse = false;
  Executable U = testCompiler().compile(G, O);
  CHECK(U.kernelBytes({5}) ==
        std::vector<int64_t>{5 * 8 * 4 * 2, 5 * 8 * 4 * 2, 5 * 8 * 4 * 3});
  // A use that is not a slice reads the whole tensor, here beside two slices
  // of one kernel.
  Graph H;
  Value Z = H.input("z", DType::F32, {"B", 16});
  H.output("v", concat({slice(Z, 8, 16), slice(Z, 0, 8)}) + Z);
  O.Fuse = true;
  Executable FH = testCompiler().compile(H, O);
  REQUIRE(FH.numKernels() == 1);
  CHECK(FH.kernelBytes({5}) == std::vector<int64_t>{5 * 16 * 4 * 2});
}

TEST_CASE("GPU: profileKernels times every kernel", "[gpu][roofline]") {
  Graph G = smallGraph();
  CompileOptions Opts;
  Opts.Fuse = false;
  Executable X = testCompiler().compile(G, Opts);
  if (!haveGpu())
    return;
  Bindings B;
  B.Dims["B"] = 4099;
  std::mt19937_64 Rng(7);
  B.Inputs["x"] = randomTensor(DType::F32, {4099, 64}, Rng);
  std::vector<double> Us;
  HostRunOptions HO;
  HO.ProfileReps = 5;
  HO.KernelMedianUs = &Us;
  std::map<std::string, HostTensor> Got = runOnDevice(X, B, HO);
  REQUIRE(Us.size() == 3);
  for (double U : Us) {
    CHECK(U > 0);
    CHECK(U < 1e5); // a kernel over 1 MB: far below 100 ms
  }
  // Profiling reran the kernels with the same arguments: outputs still right.
  std::map<std::string, HostTensor> Ref = interpret(G, B);
  CHECK(compareTensors(Got.at("y"), Ref.at("y"), toleranceFor(DType::F32, 1), "y").Ok);

  // A dim of 0 skips every kernel: all times are 0.
  int64_t Zero[] = {0};
  CUdeviceptr Null[] = {0};
  CUdeviceptr Outs[] = {0, 0};
  std::vector<double> None = X.profileKernels(Null, Outs, {}, Zero, nullptr, 2);
  CHECK(None == std::vector<double>{0, 0, 0});
  CHECK_THROWS_WITH(X.profileKernels(Null, Outs, {}, Zero, nullptr, 0),
                    Catch::Contains("Reps is 0"));
}
