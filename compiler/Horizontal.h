//===- compiler/Horizontal.h - independent kernels in one launch -*- C++ -*-===//
//
// Horizontal fusion: kernels with no path between them in the kernel DAG
// launch as one kernel whose blocks are dispatched over the parts by
// block-index ranges (codegen emitHorizontal). This pass only decides which
// kernels share a launch; the kernels themselves (the parts) are unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/KernelPlan.h"
#include "compiler/Partition.h"
#include "compiler/SizeExpr.h"

#include <cstdint>
#include <vector>

namespace jitfuse {

/// A kernel joins a horizontal launch only when it moves at most this many
/// bytes with every dynamic dim at 1 (its static size when it has none):
/// decode-size kernels, whose cost is the launch itself. A larger kernel
/// keeps its own launch until a same-run measurement shows the combined
/// launch neutral at large sizes (issue 13); the rule is deliberately
/// conservative.
inline constexpr int64_t HorizontalMaxPartBytes = int64_t(2) << 20;

/// Most kernels one launch holds: the dispatch is a chain of block-range
/// tests, and ...
inline constexpr size_t HorizontalMaxParts = 16;
/// ... most parameters (8 bytes each): far below CUDA's 4 KiB of kernel
/// arguments.
inline constexpr size_t HorizontalMaxParams = 256;

/// Whether kernel \p K (moving \p Bytes) may share a launch: element-wise
/// and row kernels whose block is whole warps (so a smaller part's spare
/// threads exit as whole warps before any barrier or full-mask shuffle),
/// and small by HorizontalMaxPartBytes. Full reductions never do: their
/// last-block pass counts the whole grid.
bool horizontalCandidate(const KernelPlan &K, const SizeSum &Bytes, size_t NumDynDims);

/// The launches of a partition: each a list of kernel indices (parts, in
/// kernel order), the launches in an order where every kernel's producers
/// launch earlier. Greedy over the kernels in launch order: a candidate
/// joins the first launch holding only candidates, after every launch
/// holding one of its producers (direct or not), with room for it under
/// HorizontalMaxParts and HorizontalMaxParams; otherwise it starts a new
/// launch. \p Enable false: one launch per kernel.
std::vector<std::vector<unsigned>> groupLaunches(const Partition &P,
                                                 llvm::ArrayRef<KernelPlan> Plans,
                                                 llvm::ArrayRef<SizeSum> Bytes,
                                                 size_t NumDynDims, bool Enable);

} // namespace jitfuse
