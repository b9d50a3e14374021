//===- codegen/ColumnReduce.h - the column reduction kernel body -*- C++ -*-===//
#pragma once

#include "codegen/Emitter.h"
#include "codegen/KernelPlan.h"

#include <llvm/ADT/STLExtras.h>

#include <vector>

namespace jitfuse::codegen {

/// The body of a KernelKind::ColumnReduce kernel: axis 0 of the domain
/// [R, C] reduced to [1, C], with the element-wise prologue computed per
/// element. A block of ColumnThreads x ColumnRowThreads threads owns a tile
/// of ColumnThreads * ColumnWidth adjacent columns and one split of the rows
/// (columnSplits(R, C) splits; blocks are split-major): thread x owns one
/// 16-byte vector of columns (the aligned variant) or ColumnWidth columns
/// ColumnThreads apart (the scalar variant, any pointer offset or C); thread
/// y sums rows y, y + ColumnRowThreads, ... of the split in order,
/// ColumnUnroll rows' loads at a time; one thread a column adds the
/// ColumnRowThreads partials in order y = 0, 1, .... With one split it
/// stores the result; with several, each block stores its split's partials
/// (jf_partials, one a column) and the last block of the tile to arrive
/// (jf_counter, one a tile, reset by that block) adds them in split order.
/// The order depends on (R, C) only: bitwise reproducible run to run
/// (docs/NUMERICS.md, "Reduction order over axes").
void columnReduceBody(const Graph &G, const KernelPlan &P, Emitter &E);

/// The reduction a KernelKind::FullReduce or ColumnReduce kernel computes
/// (its outputs may also hold reshapes of the result, epilogue or prologue
/// values).
NodeId reductionOf(const Graph &G, const KernelPlan &P);

/// Every reduction of a kernel, in node order: one, or a ColumnReduce
/// kernel's sibling reductions (SiblingColumnReductions).
std::vector<NodeId> reductionsOf(const Graph &G, const KernelPlan &P);

/// Whether node O is the reduction Red's result or computed from it through
/// nodes InKernel accepts: the epilogue of a column or full reduction
/// (ColumnReduceEpilogue, FullReduceEpilogue), which the last block
/// evaluates after the combine. A prologue value never is, even where its
/// shape is the result's (a full reduction over one element).
bool readsResult(const Graph &G, NodeId O, NodeId Red,
                 llvm::function_ref<bool(NodeId)> InKernel);

} // namespace jitfuse::codegen
