//===- tests/RowPatterns.h - the row patterns the row tests share -*- C++ -*-===//
//
// Graphs of the sweep's row patterns over a static row of H elements and a
// dynamic row count "B", for the tests of the row schedules (rows in
// shared memory, rows re-read per stage, their other forms) and of
// element-wise kernels over rows, and the check those tests run on each.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "GraphCheck.h"

#include "compiler/Planner.h"
#include "ir/Graph.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>

namespace jitfuse::test {

/// residual_out = x + residual; y = rmsNorm(residual_out, weight, eps).
inline Graph addRmsNorm(DType T, int64_t H) {
  Graph G;
  Value X = G.input("x", T, {"B", H});
  Value Res = G.input("residual", T, {"B", H});
  Value W = G.input("weight", T, {H});
  Value R = X + Res;
  G.output("residual_out", R);
  G.output("y", nn::rmsNorm(R, W, G.scalar("eps", DType::F32)));
  return G;
}

/// y = layerNorm(x, weight, bias, eps).
inline Graph layerNorm(DType T, int64_t H) {
  Graph G;
  Value X = G.input("x", T, {"B", H});
  Value W = G.input("weight", T, {H});
  Value Bias = G.input("bias", T, {H});
  G.output("y", nn::layerNorm(X, W, Bias, G.scalar("eps", DType::F32)));
  return G;
}

/// p = softmax(x) over the row.
inline Graph softmax(DType T, int64_t H) {
  Graph G;
  G.output("p", nn::softmax(G.input("x", T, {"B", H})));
  return G;
}

/// out = gelu_tanh(x + bias), the bias broadcast over the rows.
inline Graph biasGelu(DType T, int64_t H) {
  Graph G;
  Value X = G.input("x", T, {"B", H});
  Value Bias = G.input("bias", T, {H});
  G.output("out", nn::geluBias(X, Bias, /*TanhApprox=*/true));
  return G;
}

/// s = sum(|x|), m = max(|x|) over every element: a row read once.
inline Graph sumAbsAmax(DType T, int64_t H) {
  Graph G;
  Value X = G.input("x", T, {"B", H});
  G.output("s", sum(abs(X)));
  G.output("m", reduceMax(abs(X)));
  return G;
}

/// \p G at \p Dims fused and unfused against the reference under \p
/// Base's options, aligned and misaligned by one element (the misaligned
/// run with NaN and Inf); "eps" is bound when G has that scalar (binding a
/// scalar the graph lacks is an error).
inline void checkAlignedAndMisaligned(const Graph &G, const std::map<std::string, int64_t> &Dims,
                                      const CheckOptions &Base) {
  for (unsigned Misalign : {0u, 1u}) {
    INFO("misaligned by " << Misalign);
    CheckOptions CO = Base;
    CO.MisalignElems = Misalign;
    CO.SpecialValues = Misalign == 1;
    std::map<std::string, double> Scalars;
    if (!G.scalars().empty())
      Scalars["eps"] = 1e-5;
    checkGraph(G, randomBindings(G, Dims, Scalars), CO);
  }
}

/// A row pattern and the rows to run it at.
struct RowCase {
  Graph G;
  int64_t Rows;
};

/// For each case: \p Takes holds of its single fused kernel as \p Plan
/// schedules it (so the schedule under test is the one that runs), then
/// checkAlignedAndMisaligned at its rows under \p Check.
inline void checkRowCases(const std::vector<RowCase> &Cases, const PlanOptions &Plan,
                          const std::function<bool(const KernelPlan &)> &Takes,
                          const CheckOptions &Check) {
  for (const RowCase &C : Cases) {
    INFO("case " << (&C - Cases.data()));
    GraphPlan P = planGraph(C.G, Plan);
    REQUIRE(P.Kernels.size() == 1);
    INFO(P.Kernels.front().Why);
    REQUIRE(Takes(P.Kernels.front()));
    checkAlignedAndMisaligned(C.G, {{"B", C.Rows}}, Check);
  }
}

} // namespace jitfuse::test
