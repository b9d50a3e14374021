//===- compiler/ReduceAxes.h - reductions over axes as row reductions -*- C++ -*-===//
//
// A reduction over a set of axes (ReduceScope::Axes) is planned as a row
// reduction when its axes are contiguous and innermost ("inner": {-2,-1} of
// [N, G, C/G, HW]): the trailing reduced dims merge into one row of their
// product, [N, G, C/G * HW], and every tensor of the graph is seen through
// that reshape. The view keeps node ids, so partition, schedule, codegen and
// the fusion contract work on it unchanged and the prologue and epilogue
// fuse into the row kernel as for a last-axis reduction.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/ReduceForm.h"

#include <optional>

namespace jitfuse {

/// A reduction over axis 0 of a rank-2 tensor ([R, C] -> [1, C]): planned as
/// a column reduction (KernelKind::ColumnReduce) on the graph as it is.
bool isColumnReduction(const Node &N);

/// nullopt when G has no ReduceScope::Axes reduction; else G seen with the
/// reduced trailing dims merged into one dim (a product: "64*HW" when one is
/// dynamic; same node ids, every Axes reduction turned into a last-axis
/// one). G's outer and mixed reductions are lowered before
/// (compiler/LowerAxes.h). Throws jitfuse::Error naming the node when inner
/// reductions of one graph merge different trailing dims, or when a tensor
/// cannot be seen through the merge (its trailing dims are neither the
/// reduced dims nor all 1, or a last-axis op works inside the merged dims).
std::optional<Graph> rowViewOfAxes(const Graph &G);

} // namespace jitfuse
