//===- tests/BackwardPatterns.h - backward-pass graphs the fusion tests share -*- C++ -*-===//
//
// The graphs the reduction fusions of session 28 target (bench W21, W22),
// the norm backwards and column statistics of the mixed row kernel's tests
// ([mix-columns], [mix-few]), and the plan's total line, for the [stored],
// [siblings] and [prologue] tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Planner.h"
#include "examples/ExampleGraphs.h"
#include "ir/Graph.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>

#include <string>

namespace jitfuse::test {

/// ReLU backward with the bias gradient: dz = dy * (z > 0) stored, and the
/// column sum of its f32 cast.
inline Graph reluBackward(Dim H) {
  Graph G;
  Value Dy = G.input("dy", bf16, {"B", H});
  Value Z = G.input("z", bf16, {"B", H});
  Value Dz = Dy * cast(gt(Z, G.constant(0.0)), bf16);
  G.output("dz", Dz);
  G.output("db", sum(cast(Dz, f32), llvm::ArrayRef<int64_t>{0}));
  return G;
}

/// LayerNorm backward from the saved mean and rstd: dx per row, dw and db
/// column sums over the rows (nn::layerNormBackward; bench W21's graph).
inline Graph layerNormBackward(Dim H) {
  Graph G;
  examples::addNormBackward(G, bf16, H, /*LayerNorm=*/true);
  return G;
}

/// RMSNorm backward from the saved rstd: dx per row, the weight gradient
/// a column sum of dy * x * rstd (one reduction: rows up to 8192 fit).
inline Graph rmsNormBackward(DType T, Dim H) {
  Graph G;
  examples::addNormBackward(G, T, H, /*LayerNorm=*/false);
  return G;
}

/// LayerNorm backward of \p T rows (layerNormBackward: bf16).
inline Graph layerNormBackwardOf(DType T, Dim H) {
  Graph G;
  examples::addNormBackward(G, T, H, /*LayerNorm=*/true);
  return G;
}

/// An RMSNorm forward with column statistics of its input beside it: the
/// max of |x|, the mean and the min of x over the rows (the combine's other
/// functors, and a mean's division by the rows).
inline Graph normWithColumnStats(DType T, Dim H) {
  Graph G;
  Value X = G.input("x", T, {"B", H});
  Value W = G.input("w", T, {H});
  G.output("y", nn::rmsNorm(X, W, G.constant(1e-6)));
  G.output("amax", reduceMax(abs(X), llvm::ArrayRef<int64_t>{0}));
  G.output("mean", mean(cast(X, f32), llvm::ArrayRef<int64_t>{0}));
  G.output("min", reduceMin(X, llvm::ArrayRef<int64_t>{0}));
  return G;
}

/// The plan's "total: K kernels, BYTES bytes" under fusion options \p F.
inline std::string planTotal(const Graph &G, const FusionOptions &F) {
  PlanOptions O;
  O.Fusion = F;
  std::string Text = planGraph(G, O).PlanText;
  size_t At = Text.find("total: ");
  REQUIRE(At != std::string::npos);
  return Text.substr(At, Text.find(';', At) - At);
}

} // namespace jitfuse::test
