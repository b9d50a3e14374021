//===- tests/SweepPatterns.h - the shape sweep's forward patterns -*- C++ -*-===//
//
// The forward patterns of bench/jitfuse_sweep at a row length and dtype, for
// the tests that compile or run them over the sweep's shapes
// ([resources], [mix-row-start]).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/NN.h"

#include <map>
#include <string>

namespace jitfuse::test {

/// \p Name (add_rmsnorm, layernorm, softmax, sum_abs_amax, bias_gelu, or
/// silu_mul otherwise) over rows of \p H elements of \p T.
inline Graph sweepPattern(const std::string &Name, DType T, int64_t H) {
  Graph G;
  Value X = G.input("x", T, {"B", H});
  if (Name == "add_rmsnorm") {
    Value R = X + G.input("residual", T, {"B", H});
    G.output("residual_out", R);
    G.output("y", nn::rmsNorm(R, G.input("w", T, {H}), G.scalar("eps", DType::F32)));
  } else if (Name == "layernorm") {
    G.output("y", nn::layerNorm(X, G.input("w", T, {H}), G.input("b", T, {H}),
                                G.scalar("eps", DType::F32)));
  } else if (Name == "softmax") {
    G.output("p", nn::softmax(X));
  } else if (Name == "sum_abs_amax") {
    G.output("s", sum(abs(X)));
    G.output("m", reduceMax(abs(X)));
  } else if (Name == "bias_gelu") {
    G.output("y", nn::geluBias(X, G.input("bias", T, {H}), true));
  } else {
    G.output("y", nn::siluMul(X, G.input("up", T, {"B", H})));
  }
  return G;
}

/// Every scalar of \p G (the forward norms' eps) at 1e-5, for
/// randomBindings.
inline std::map<std::string, double> epsScalars(const Graph &G) {
  std::map<std::string, double> Scalars;
  for (NodeId N : G.scalars())
    Scalars[G.node(N).Name] = 1e-5;
  return Scalars;
}

} // namespace jitfuse::test
