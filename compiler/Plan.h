//===- compiler/Plan.h - the fusion plan a user reads -----------*- C++ -*-===//
#pragma once

#include "compiler/Partition.h"
#include "compiler/SizeExpr.h"

#include <string>

namespace jitfuse {

/// Minimal bytes a cluster moves: each input read once, each output written
/// once. An input the cluster reads only through slices counts the union of
/// the sliced column ranges, not the whole tensor (the unfused `slice`
/// kernels of a merged gate_up read half of it).
SizeSum clusterTraffic(const Graph &G, const Cluster &C);

/// Kernel level as the plan names it: L1, L2 or "reduction".
llvm::StringRef clusterLevel(KernelKind K);

/// The plan: each kernel with its level, nodes, inputs, outputs and
/// predicted bytes (KernelBytes[I] = clusterTraffic of cluster I); why each
/// boundary exists; totals fused vs unfused.
std::string explainPlan(const Graph &G, const Partition &P,
                        llvm::ArrayRef<KernelPlan> Plans,
                        llvm::ArrayRef<SizeSum> KernelBytes, bool Fused);

/// The launches when some share one (horizontal fusion): one line each
/// with its parts, and for those that \p Splits, the bytes above which they
/// run their parts on their own (\p MaxBytes) and \p LaunchBytes; "" when
/// every kernel has its own launch, so such plans read as before.
std::string explainLaunches(llvm::ArrayRef<KernelPlan> Plans,
                            llvm::ArrayRef<std::vector<unsigned>> Launches,
                            llvm::ArrayRef<SizeSum> LaunchBytes, const std::vector<bool> &Splits,
                            int64_t MaxBytes, llvm::ArrayRef<std::string> DynNames);

/// Graphviz DOT of the plan, one subgraph per kernel; kernels sharing a
/// launch (\p Launches, may be empty) sit in a subgraph of the launch.
std::string planToDot(const Graph &G, const Partition &P,
                      llvm::ArrayRef<std::vector<unsigned>> Launches = {});

} // namespace jitfuse
