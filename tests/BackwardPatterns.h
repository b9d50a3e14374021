//===- tests/BackwardPatterns.h - backward-pass graphs the fusion tests share -*- C++ -*-===//
//
// The graphs the reduction fusions of session 28 target (bench W21, W22),
// and the plan's total line, for the [stored], [siblings] and [prologue]
// tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Planner.h"
#include "examples/ExampleGraphs.h"
#include "ir/Graph.h"

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
