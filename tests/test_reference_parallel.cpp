//===- tests/test_reference_parallel.cpp - the reference over threads -----===//
//
// The reference's element and row loops run in pieces over threads
// (reference/Parallel.h). These cases use tensors large enough to split and
// check every element against values computed here, in one plain loop:
// broadcasts whose pieces start mid-row (the odometer's restart), row
// reductions split by rows, and the error bounds' loops.
//
//===----------------------------------------------------------------------===//
#include "ir/Graph.h"
#include "reference/ErrorBound.h"
#include "reference/Interpreter.h"
#include "reference/Parallel.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

using namespace jitfuse;

TEST_CASE("parallelFor: every index once, pieces in order, errors rethrown", "[reference]") {
  for (int64_t N : {int64_t(0), int64_t(1), int64_t(7), int64_t(1) << 20, (int64_t(1) << 20) + 13}) {
    INFO("N " << N);
    std::vector<std::atomic<int>> Seen(static_cast<size_t>(N));
    std::atomic<int> Calls{0};
    parallelFor(N, 1000, [&](int64_t Begin, int64_t End) {
      CHECK(Begin < End);
      ++Calls;
      for (int64_t I = Begin; I < End; ++I)
        ++Seen[static_cast<size_t>(I)];
    });
    int Once = 0;
    for (std::atomic<int> &S : Seen)
      Once += S.load() == 1;
    CHECK(Once == N);
    // Pieces of at least 1000 indices, one call below 2000.
    if (N < 2000)
      CHECK(Calls.load() == (N > 0 ? 1 : 0));
  }
  CHECK_THROWS_WITH(parallelFor(int64_t(1) << 20, 1,
                                [](int64_t Begin, int64_t) {
                                  if (Begin > 0)
                                    throw std::runtime_error("piece failed");
                                }),
                    "piece failed");
}

TEST_CASE("reference over threads: broadcasts, element-wise ops and row sums, element by element",
          "[reference]") {
  // 3 x 5 x 30011 = 450165 elements: pieces of 2^16 start inside rows and
  // inside the middle axis.
  const int64_t A = 3, B = 5, C = 30011;
  Graph G;
  Value X = G.input("x", DType::F32, {A, B, C});
  Value W = G.input("w", DType::F32, {C});
  Value S = G.input("s", DType::F32, {A, B, 1});
  Value Y = X * W + S;
  G.output("y", Y);
  G.output("r", sum(Y));
  Bindings Bd;
  std::vector<double> XD(static_cast<size_t>(A * B * C)), WD(static_cast<size_t>(C)),
      SD(static_cast<size_t>(A * B));
  for (size_t I = 0; I < XD.size(); ++I)
    XD[I] = static_cast<double>(static_cast<int64_t>(I % 1009) - 504) / 64;
  for (size_t I = 0; I < WD.size(); ++I)
    WD[I] = static_cast<double>(static_cast<int64_t>(I % 97) - 48) / 16;
  for (size_t I = 0; I < SD.size(); ++I)
    SD[I] = static_cast<double>(I) * 0.5 - 3;
  Bd.Inputs["x"] = HostTensor{DType::F32, {A, B, C}, XD};
  Bd.Inputs["w"] = HostTensor{DType::F32, {C}, WD};
  Bd.Inputs["s"] = HostTensor{DType::F32, {A, B, 1}, SD};
  // Products of these values are exact in f32 and f64, so rounding the
  // fp64 results to f32 changes nothing an expected value here would not.
  std::map<std::string, HostTensor> Out = interpret(G, Bd);
  const std::vector<double> &YD = Out.at("y").Data, &RD = Out.at("r").Data;
  REQUIRE(YD.size() == XD.size());
  REQUIRE(RD.size() == SD.size());
  int64_t Wrong = 0;
  for (int64_t R = 0; R < A * B; ++R) {
    double Sum = 0;
    for (int64_t I = 0; I < C; ++I) {
      double V = XD[static_cast<size_t>(R * C + I)] * WD[static_cast<size_t>(I)] +
                 SD[static_cast<size_t>(R)];
      Wrong += YD[static_cast<size_t>(R * C + I)] != V;
      Sum += V;
    }
    Wrong += RD[static_cast<size_t>(R)] != static_cast<double>(static_cast<float>(Sum));
  }
  CHECK(Wrong == 0);

  // The error bounds: the same with and without outputs rounded (both
  // loops over threads), and every element of an exact product bounded by
  // its own rounding only: |y| u + tiny at most a few units of it.
  ReferenceResult R = interpretWithBounds(G, Bd);
  const std::vector<double> &E = R.Bounds.at("y").Data;
  REQUIRE(E.size() == YD.size());
  int64_t Bad = 0;
  for (size_t I = 0; I < E.size(); ++I)
    Bad += !(E[I] >= 0 && E[I] <= 8 * 0x1p-24 * (std::fabs(YD[I]) + 1));
  CHECK(Bad == 0);
  CHECK(R.Values.at("y").Data == YD);
}
