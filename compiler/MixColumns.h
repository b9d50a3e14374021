//===- compiler/MixColumns.h - column reductions inside a row kernel -*- C++ -*-===//
#pragma once

#include "codegen/LaunchRule.h"
#include "compiler/Partition.h"

#include <set>
#include <vector>

namespace jitfuse {

/// FusionOptions::MixOrderColumns (on by default since session 36): a column
/// reduction cluster over [R, C] whose loads a row-reduction cluster over
/// the same [R, C] domain loads too joins that cluster, which then computes
/// the column terms from the rows it holds (KernelPlan::MixColumns,
/// codegen/MixColumns.cpp): LayerNorm backward's dw and db from the dx
/// kernel's reads of x and dy, one read of each instead of two (W21: 640 ->
/// 384 MiB plus the groups' partials). Only column clusters whose outputs
/// are their reductions (sum, mean, max, min; no prologue outputs, views or
/// epilogue), of a static C whose accumulators launch::mixFits allows
/// (from 768 columns, within launch::MixRuleSharedBytes), and neither
/// cluster reading the other. Moves
/// the nodes into the row cluster's place or the column cluster's, where
/// every cluster between allows it, and leaves the other empty (the caller
/// drops empty clusters); \p Recomputed moves along.
/// \p Limits: FusionOptions::MixMinColumns and MixMaxSharedBytes.
void mergeRowColumns(const Graph &G, std::vector<Cluster> &Clusters,
                     std::vector<std::set<NodeId>> &Recomputed,
                     const codegen::launch::MixLimits &Limits = {});

/// The shape part of that rule: \p Row's reductions are all row
/// reductions over one [R, C] domain, \p Column's all column reductions
/// over it whose accumulators fit (launch::mixFits). The recompute pass
/// asks it too (compiler/Recompute.h).
bool mixShapesFit(const Graph &G, const Cluster &Row, const Cluster &Column,
                  const codegen::launch::MixLimits &Limits = {});

/// Whether \p Nodes (a cluster) hold both row and column reductions: a row
/// kernel with column partials.
bool mixesColumns(const Graph &G, llvm::ArrayRef<NodeId> Nodes);

} // namespace jitfuse
