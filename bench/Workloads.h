//===- bench/Workloads.h - the benchmark workloads W1-W22 -------*- C++ -*-===//
//
// Each workload is a graph builder plus the sizes it is timed at and the small
// sizes it is checked at against the reference interpreter before timing.
// Row/outer dims are dynamic (one binary serves the check and the timed
// size); eps and alpha are run-time scalars.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace jitfuse::bench {

struct Workload {
  std::string Id;    // unique, e.g. "W3-bf16-H4096"; matches torch_bench.py
  std::string Group; // "W3": what --only selects
  std::string Desc;
  std::function<void(Graph &)> Build;
  std::map<std::string, int64_t> Dims;      // timed size
  std::map<std::string, int64_t> CheckDims; // small size for the correctness check
  std::map<std::string, double> Scalars;
  /// W8, W9: time per call back-to-back (host overhead) instead of bandwidth.
  bool PerCall = false;
  /// Compiled with CompileOptions::FastMath (fused and unfused).
  bool FastMath = false;
  /// Instead of Build: returns the whole graph (W9 takes an example graph,
  /// which builds its own).
  std::function<Graph()> Make = nullptr;
};

/// W1..W22 in issue order.
std::vector<Workload> allWorkloads();

/// W's graph, from Make or Build.
Graph buildWorkloadGraph(const Workload &W);

/// r = x + residual; y = rmsNorm(r, weight, eps): the graph of W3, W8, C1, C2.
void buildAddRmsNorm(Graph &G, DType T, const Dim &H);

} // namespace jitfuse::bench
