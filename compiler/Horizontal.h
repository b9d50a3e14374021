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
#include <optional>
#include <vector>

namespace jitfuse {

/// A kernel joins a horizontal launch only when it moves at most this many
/// bytes with every dynamic dim at 1 (its static size when it has none):
/// decode-size kernels, whose cost is the launch itself. A larger kernel
/// keeps its own launch until a same-run measurement shows the combined
/// launch neutral at large sizes (issue 13); the rule is deliberately
/// conservative.
inline constexpr int64_t HorizontalMaxPartBytes = int64_t(2) << 20;

/// A horizontal launch whose parts move more than this many bytes together
/// at a run's dims launches each part on its own instead (the program holds
/// both forms; exec prepareDims chooses per dims). Measured on the H200
/// (BENCHMARKS.md, session 18), llama_block's 4-part launch against its
/// kernels launched one by one: 5.7 vs 15.9 us at T = 16 (2.2 MB), 51.0 vs
/// 53.0 us at T = 1024 (141 MB), 187.4 vs 162.4 us at T = 4096 (564 MB);
/// linear in between, they cross near 180 MB.
inline constexpr int64_t HorizontalMaxLaunchBytes = int64_t(160) << 20;

/// Whether a horizontal launch moving \p Bytes (at any dims) needs its parts
/// as launches of their own as well, for dims where it moves more than
/// \p MaxBytes (< 0: never).
inline bool splitsWhenLarge(const SizeSum &Bytes, int64_t MaxBytes) {
  if (MaxBytes < 0)
    return false;
  std::optional<int64_t> Static = Bytes.staticValue();
  return !Static || *Static > MaxBytes;
}

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
