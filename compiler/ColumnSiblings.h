//===- compiler/ColumnSiblings.h - sibling column reductions, one kernel -*- C++ -*-===//
#pragma once

#include "compiler/Partition.h"

#include <set>
#include <vector>

namespace jitfuse {

/// Most reductions one column kernel computes (each keeps W accumulators a
/// thread and a [NY][tile] shared array).
inline constexpr unsigned MaxColumnSiblings = 4;

/// FusionOptions::SiblingColumnReductions (on by default): two column
/// reduction clusters over one [R, C] domain that load a common tensor and
/// do not read each other become one kernel with several reductions
/// (codegen/ColumnReduce.h), so the tensor is loaded once: LayerNorm
/// backward's dw and db both read dy. Only clusters whose outputs are their
/// reductions' results (or reshapes of them) merge: an epilogue reads one
/// result. The merged cluster takes the position of one of the two where
/// every cluster between them allows it. Moves the nodes into it and leaves
/// the other cluster empty (the caller drops empty clusters); \p Recomputed
/// (per cluster, Cluster::Recomputed's sets) moves along.
void mergeColumnSiblings(const Graph &G, std::vector<Cluster> &Clusters,
                         std::vector<std::set<NodeId>> &Recomputed);

} // namespace jitfuse
