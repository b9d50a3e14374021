//===- tests/RopeGraph.h - the RoPE graph the concat-row tests share -*- C++ -*-===//
#ifndef JITFUSE_TESTS_ROPEGRAPH_H
#define JITFUSE_TESTS_ROPEGRAPH_H

#include "ir/Graph.h"
#include "ir/NN.h"

namespace jitfuse::test {

/// q [T, Heads, D] rotated by halves with cos, sin [T, D / 2]: an
/// element-wise row that is a concat of two equal pieces.
inline Graph ropeGraph(DType T, int64_t Heads, int64_t D) {
  Graph G;
  Value Q = G.input("q", T, {"T", Heads, D});
  Value Cos = G.input("cos", T, {"T", D / 2});
  Value Sin = G.input("sin", T, {"T", D / 2});
  G.output("half", nn::rope(Q, Cos, Sin, nn::RopeStyle::HalfRotation));
  return G;
}

} // namespace jitfuse::test

#endif // JITFUSE_TESTS_ROPEGRAPH_H
