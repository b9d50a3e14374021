//===- compiler/Planner.h - stage 1 of compile(): the plan ------*- C++ -*-===//
//
// Everything jitfuse decides about a graph before any CUDA text exists:
// partition, schedule, byte counts, the texts a user reads, and the fusion
// contract. Pure: no CUDA, no cache, no environment.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/KernelPlan.h"
#include "compiler/Fusion.h"
#include "compiler/Partition.h"
#include "compiler/Schedule.h"
#include "compiler/SizeExpr.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace jitfuse {

/// The planning part of CompileOptions (driver/Compiler.h documents them).
struct PlanOptions {
  bool Fuse = true;
  /// The fusion pass's options (compiler/Fusion.h).
  FusionOptions Fusion;
  bool Horizontal = true;
  /// CompileOptions::HorizontalMaxBytes, resolved (< 0: never split).
  int64_t HorizontalMaxBytes = 0;
  std::optional<unsigned> ExpectKernels, ExpectLaunches;
  std::vector<std::vector<NodeId>> SameKernel;
  /// CompileOptions::StreamLoads / StreamReadOnlyRows on an sm_80+ target.
  bool StreamLoads = false;
  bool StreamReadOnlyRows = false;
  /// Every cluster's schedule options, resolved for the target (row
  /// clusters only on sm_90, L2 hints on sm_80, the L2 share of the device
  /// compiled for): each option is declared once, in compiler/Schedule.h.
  ScheduleOptions Schedule;
};

struct GraphPlan {
  Partition Part;
  std::vector<KernelPlan> Kernels;  // one per cluster, in launch order
  std::vector<SizeSum> KernelBytes; // minimal traffic of each kernel
  /// The launches, in order: each the kernels (indices into Kernels) it
  /// runs, more than one when horizontally fused (compiler/Horizontal.h).
  std::vector<std::vector<unsigned>> Launches;
  /// Per launch: its kernels' bytes together, and whether it also runs
  /// them one by one above PlanOptions::HorizontalMaxBytes
  /// (compiler/Horizontal.h splitsWhenLarge).
  std::vector<SizeSum> LaunchBytes;
  std::vector<bool> Splits;
  std::string GraphText, PlanText, PlanDot;
  /// The graph the plan was made for when it is not the user's: reductions
  /// over outer or mixed axes lowered to row or column reductions of a
  /// permuted view (compiler/LowerAxes.h; later node ids shift), then
  /// reductions over inner axes seen as row reductions
  /// (compiler/ReduceAxes.h; same node ids). Codegen and the launch table
  /// read it; null: the user's graph.
  std::shared_ptr<const Graph> View;
  bool Lowered = false, RowView = false;

  const Graph &planned(const Graph &G) const { return View ? *View : G; }
};

/// Verifies \p G, partitions it (fused or one kernel per op), schedules each
/// cluster and writes the plan. Throws jitfuse::Error for an invalid graph
/// and, with the plan in the message, when the fusion contract is broken.
GraphPlan planGraph(const Graph &G, const PlanOptions &Opts);

} // namespace jitfuse
