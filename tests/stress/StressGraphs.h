//===- tests/stress/StressGraphs.h - graphs of the stress tests -*- C++ -*-===//
//
// The cache stress test and its helper process must build byte-identical
// graphs so they agree on the cache keys; both include this header.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/NN.h"

namespace jitfuse::test {

/// Graph K of a small family: distinct sources, so distinct cache keys.
inline Graph stressGraph(unsigned K) {
  Graph G;
  Value X = G.input("x", bf16, {"B", 64 + 32 * static_cast<int64_t>(K % 4)});
  Value R = G.input("res", bf16, X.shape());
  Value W = G.input("w", bf16, {X.shape().back()});
  Value S = X + R * static_cast<double>(K + 1);
  G.output("r", S);
  G.output("y", nn::rmsNorm(S, W, G.constant(1e-5)));
  return G;
}

} // namespace jitfuse::test
