//===- compiler/RowValues.h - per-element values a row kernel keeps -*- C++ -*-===//
#pragma once

#include "compiler/Partition.h"

#include <vector>

namespace jitfuse {

/// Bytes an element of per-element value \p N takes kept in registers (its
/// compute type: f32 for 16-bit floats, f64 for f64).
int64_t keptValueBytes(const Graph &G, NodeId N);

/// Per-element nodes of row cluster \p C over \p Domain that more than one
/// of its loops evaluates (a reduction stage's loop, or the epilogue's) and
/// that cost more to recompute than to keep: the first loop keeps them,
/// later loops read them back.
std::vector<NodeId> valuesToKeep(const Graph &G, const Cluster &C, llvm::ArrayRef<Dim> Domain);

/// CompileOptions::RowCacheValues: the per-element values (graph order)
/// whose registers spare a row kernel every second read of its stage
/// inputs (\p Staged, indices into C.Inputs), where keeping the inputs
/// themselves would not fit: each is computed in two or more loops and
/// reads a stage input directly (add + RMSNorm's x + residual). Empty when
/// some later loop would still read a stage input, or when the values are
/// no fewer bytes an element than the inputs they replace.
std::vector<NodeId> valuesCoveringInputs(const Graph &G, const Cluster &C,
                                         llvm::ArrayRef<Dim> Domain,
                                         llvm::ArrayRef<unsigned> Staged);

} // namespace jitfuse
