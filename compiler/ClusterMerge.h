//===- compiler/ClusterMerge.h - two clusters into one -----------*- C++ -*-===//
//
// What the late merging passes (compiler/ColumnSiblings.h,
// compiler/MixColumns.h) share: the move of one cluster's nodes into
// another when neither depends on the other.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Partition.h"

#include <set>
#include <vector>

namespace jitfuse {

/// Merges cluster \p A into \p B when neither reads a value of the other,
/// directly or through other clusters (a cluster reads a value it does not
/// compute itself). Moves the nodes and Recomputed's set (per cluster) and
/// leaves A empty (the caller drops empty clusters). False, changing
/// nothing, when one depends on the other.
bool mergeClusters(const Graph &G, std::vector<Cluster> &Clusters,
                   std::vector<std::set<NodeId>> &Recomputed, unsigned A, unsigned B);

} // namespace jitfuse
