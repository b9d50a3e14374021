//===- examples/ExampleGraphs.h - the named example graphs ------*- C++ -*-===//
//
// The graphs the example programs, the `jitfuse` tool and the tests share:
// each is what a model would hand to jitfuse for one piece of a transformer
// layer, with default run-time dims and scalars so it can run as is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/NN.h"

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace jitfuse::examples {

struct ExampleGraph {
  std::string Name;
  std::string Description;
  /// Behind a pointer because Values keep the Graph's address.
  std::unique_ptr<Graph> G;
  /// A value for every dynamic dim of G: realistic but quick to run.
  std::map<std::string, int64_t> Dims;
  /// A value for every run-time scalar of G.
  std::map<std::string, double> Scalars;
  /// Groups of nodes a good fusion pass puts in one kernel. Shaped like
  /// CompileOptions::SameKernel so a caller can turn it into a contract;
  /// the examples only report whether the plan meets it.
  std::vector<std::vector<NodeId>> SameKernel;
};

/// Every example name, in the order `jitfuse list` shows them.
const std::vector<std::string> &exampleNames();

/// Builds the named example. Throws jitfuse::Error listing the known names
/// when there is no such example.
ExampleGraph buildExample(llvm::StringRef Name);

// One builder per example, for callers that want a specific one.
ExampleGraph buildL1Chain();
ExampleGraph buildSumAbs();
ExampleGraph buildAddRmsNorm();
ExampleGraph buildAddLayerNorm();
ExampleGraph buildSoftmaxMask();
ExampleGraph buildSwiglu();
ExampleGraph buildRope();
ExampleGraph buildLlamaBlock();
ExampleGraph buildDropout();
ExampleGraph buildGroupNorm();
ExampleGraph buildBiasGrad();
ExampleGraph buildHeadRmsNorm();
ExampleGraph buildQkNormRope();
ExampleGraph buildLayerNormBackward();

/// A norm's gradients from its forward's saved f32 statistics
/// (nn::layerNormBackward when \p LayerNorm, else nn::rmsNormBackward), added
/// to \p G with inputs x and dy [B, H] and w [H] of dtype \p T, then mean
/// (LayerNorm) and rstd [B, 1], created in that order; outputs dx, dw and
/// (LayerNorm) db. The example, bench W21, the sweep's norm-backward
/// patterns and the tests build their graphs here.
nn::NormGrads addNormBackward(Graph &G, DType T, Dim H, bool LayerNorm);

/// Non-leaf nodes that \p Roots depend on, Roots included, in id order:
/// the whole expression behind them, up to inputs, scalars and constants.
std::vector<NodeId> expressionNodes(const Graph &G, llvm::ArrayRef<NodeId> Roots);

} // namespace jitfuse::examples
