//===- compiler/ClusterMerge.h - two clusters into one -----------*- C++ -*-===//
//
// What the late merging passes (compiler/ColumnSiblings.h,
// compiler/MixColumns.h) share: whether one cluster reads another, and the
// move of one cluster's nodes into the other at a place the clusters in
// between allow.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Partition.h"

#include <set>
#include <vector>

namespace jitfuse {

/// Whether cluster \p C reads a value computed in cluster \p From (and not
/// computed by \p C itself). \p C's nodes are sorted.
bool clusterReads(const Graph &G, const Cluster &C, const Cluster &From);

/// Merges clusters \p A < \p B, which do not read each other: at B's place
/// when no cluster between reads A, else at A's when B reads none of them.
/// Moves the nodes and Recomputed's set (per cluster) and leaves the other
/// cluster empty (the caller drops empty clusters). False, changing
/// nothing, when neither place is allowed, or when one of them reads the
/// other through a third cluster (merged, they would form a cycle with it).
bool mergeClusters(const Graph &G, std::vector<Cluster> &Clusters,
                   std::vector<std::set<NodeId>> &Recomputed, unsigned A, unsigned B);

} // namespace jitfuse
