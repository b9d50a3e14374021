//===- compiler/Recompute.h - cheap producers computed by each reader -*- C++ -*-===//
#pragma once

#include "codegen/LaunchRule.h"
#include "compiler/Partition.h"

namespace jitfuse {

/// Per-element cost of computing node kind O again, in simple-op units:
/// views and broadcasts 0 (index arithmetic only), casts and arithmetic 1,
/// library calls (exp, log, sin, tanh, erf, pow, ...) 4. Random draws and
/// reductions are never recomputed.
unsigned recomputeCost(Op O);

/// The recompute rule, in one place. A producer read by k >= 2 kernels is
/// computed again inside each instead of being materialized when
///   - it is element-wise (views included), stores no graph output, and
///   - every node has one element (an expression of scalars, constants and
///     one-element tensors: computed once per thread, whatever it costs), or
///     each reader's part costs at most MaxRecomputeOps per element and the
///     recomputed traffic (each reader loading the producer's inputs) is not
///     more than the materialized traffic (the producer's kernel plus each
///     reader loading its values), term by term in the dynamic dims.
/// Why 8: an element-wise kernel is memory-bound; the H200 does ~60 f32
/// TFLOP/s against 4.8 TB/s, about 25 simple ops per byte moved, so 8 ops
/// per element of a reader that moves at least 2 bytes per element stay
/// hidden behind its loads, while each launch saved is 2-4 us at decode
/// sizes. A first bound from the peaks, not yet a sweep.
inline constexpr unsigned MaxRecomputeOps = 8;
/// Larger producers are left alone (the recomputed code grows each reader).
inline constexpr size_t MaxRecomputeNodes = 64;

/// Dissolves every producer cluster of \p P the rule above accepts into its
/// readers (Cluster::Recomputed), records each as a Recomputation, and
/// explains the refused ones on their boundaries (MultipleConsumers). Runs on
/// a partition whose clusters hold only Nodes, before finalizePartition;
/// rebuilds Boundaries and ClusterOf.
/// \p StoredValues (FusionOptions::RecomputeStoredValues, on by default):
/// also an intermediate that a kernel stores only for other kernels is
/// computed by each reader instead, from what the kernel loads or stores
/// anyway, when that moves fewer bytes.
/// \p SiblingColumns (FusionOptions::SiblingColumnReductions, an
/// experiment): then sibling column reductions share a kernel
/// (compiler/ColumnSiblings.h).
/// \p MixColumns (FusionOptions::MixOrderColumns): then a
/// row cluster takes the column reductions of its loads
/// (compiler/MixColumns.h); and a row kernel's value read by one column
/// kernel of its domain is recomputed there, bytes saved or not, when the
/// copy reads only what the row kernel loads (the column kernel can then
/// join it).
/// \p MixLimits: FusionOptions::MixMinColumns and MixMaxSharedBytes.
void recomputeCheapProducers(const Graph &G, Partition &P, bool StoredValues = false,
                             bool SiblingColumns = false, bool MixColumns = false,
                             const codegen::launch::MixLimits &MixLimits = {});

} // namespace jitfuse
