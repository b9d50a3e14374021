//===- codegen/LaunchRule.h - how a generated kernel is launched -*- C++ -*-===//
//
// The launch geometry is part of a kernel's interface, like its parameter
// list: the skeletons in Codegen.cpp and RowKernel.cpp index with
// blockIdx/threadIdx under exactly these rules, so they live beside them.
// The scheduler picks among the thread counts below, execution (exec/) asks shape() for each launch and
// never re-derives a grid, and the reference's error bounds
// (reference/ErrorBound.cpp) read the same constants for the summation
// order they bound.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/KernelPlan.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>

namespace jitfuse::codegen {

/// The thread counts the schedules are built from.
namespace launch {
/// Element-wise and full-reduction blocks: one vector chunk per thread.
inline constexpr int FlatThreads = 256;
/// Rows whose length is only known at run time, with
/// ScheduleOptions::RowThreadsAtLaunch off (and the scheduled thread count
/// of the kernel that picks its own, below).
inline constexpr int DynamicRowThreads = 256;
/// Static rows get pow2Floor(chunks / 2) threads clamped to this range, so a
/// thread holds 2 to 4 chunks until the row exceeds 4 * MaxRowThreads chunks.
inline constexpr int MinRowThreads = 32, MaxRowThreads = 512;
inline constexpr int MaxChunksPerThread = 4;
/// Rows of at most 32 chunks share a block of this many threads.
inline constexpr int ShortRowBlockThreads = 128;
/// The scalar variant of an element-wise kernel gives each thread up to this
/// many elements, a grid's width apart (codegen/Codegen.cpp) ...
inline constexpr int ScalarElemsPerThread = 8;
/// ... when the smaller grid still has this many blocks per SM; below, one
/// element per thread (measured: 8 per thread doubled the time of
/// single-row kernels, 4 -> 8 us).
inline constexpr int ScalarTileMinBlocksPerSm = 4;
/// Widest access, in bytes.
inline constexpr int MaxVectorBytes = 16;
/// Full reductions launch at most this many blocks per SM (fixed per device,
/// so the two-stage sum is bitwise reproducible): 2 per SM left HBM idle
/// (W2 at 54% of the copy ceiling); 8 keeps enough loads in flight.
inline constexpr int FullReduceBlocksPerSm = 8;
/// A row kernel whose row length is known only at run time and whose
/// threads the launch picks (KernelPlan::ThreadsAtLaunch): a block a row of
/// \p Chunks vector chunks (the peeled variant's count, which may be one
/// more), \p Rows rows, on \p SmCount SMs. The kernel is compiled for
/// MaxRowThreads and loops with a stride of blockDim.x. Measured on the H100
/// (BENCHMARKS.md, session 51: the sweep's dynamic-row points at 64, 128,
/// 256 and 512 threads a row): with more rows than SMs, the best count
/// keeps about 4 chunks a thread (rows of 768-2048 bf16: 64 threads,
/// 1.25-1.47x the fixed 256; 11008-128256: 512, up to 1.17x); with rows at
/// most the SMs, one block is most of an SM's loads in flight, and 512
/// threads from 384 chunks on (softmax f32 1 x 128256 1.79x; 256 below).
/// Over those points this rule is within 0.99x (many rows, geometric mean,
/// worst 0.86x) and 0.994x (few rows, worst 0.90x) of the best of the four.
/// A thread so holds at most DynamicRowMaxChunks chunks below MaxRowThreads
/// threads (the reference's summation depth reads that bound).
inline constexpr int DynamicRowMinThreads = 64;
inline constexpr int DynamicRowMaxChunks = 8;
inline constexpr int64_t DynamicFewRowsWideChunks = 384;
inline int dynamicRowThreads(int64_t Chunks, int64_t Rows, int SmCount) {
  if (SmCount > 0 && Rows <= SmCount)
    return Chunks >= DynamicFewRowsWideChunks ? MaxRowThreads : MaxRowThreads / 2;
  uint64_t Quarter = static_cast<uint64_t>(std::max<int64_t>(Chunks / 4, 1));
  return static_cast<int>(std::clamp<uint64_t>(std::bit_floor(Quarter), DynamicRowMinThreads,
                                               MaxRowThreads));
}
/// Rows longer than MaxChunksPerThread chunks a thread at MaxRowThreads are
/// split over up to this many blocks of a cluster (portable cluster size).
inline constexpr int MaxClusterBlocks = 8;
/// Blocks of MaxRowThreads an SM holds at once (2048 threads an SM on
/// sm_80 and sm_90): the L2 share of a resident long row
/// (ScheduleOptions::RowL2ShareBytes) and the few-rows line below.
inline constexpr int ResidentRowBlocksPerSm = 2048 / MaxRowThreads;
/// A long-row kernel with a few-rows form (KernelPlan::FewRows, each row
/// split over a cluster of K blocks) launches it when all its blocks are
/// resident at once: Rows * K <= SMs * ResidentRowBlocksPerSm. Measured on
/// the H200 (BENCHMARKS.md, session 11): 1-8 rows of 128256 ran 3-8x
/// faster split; 128-132 rows (two waves of split blocks) from 1.30x
/// faster (softmax) to 0.85x (add + RMSNorm).
inline bool useFewRows(int64_t Rows, int ClusterX, int SmCount) {
  return SmCount > 0 && Rows * ClusterX <= int64_t(SmCount) * ResidentRowBlocksPerSm;
}
/// Threads a row of a long row's wide form (KernelPlan::WideRows), one
/// block an SM (its KernelPlan::MinBlocksPerSm is 1, so ptxas may use 64
/// registers a thread).
inline constexpr int WideRowThreads = 1024;
/// A re-read long-row kernel with a wide form (KernelPlan::WideRows)
/// launches it when its few-rows form does not run and the
/// rows are at most one wide block an SM: there one 512-thread block a row
/// leaves each SM three quarters of its threads, and the wide block twice
/// the loads in flight; from SMs + 1 rows on, two 512-thread blocks share
/// an SM anyway. Forced for every row count on the H200 (BENCHMARKS.md,
/// session 11), 1024 threads a row took softmax bf16 128 x 128256 66.0 ->
/// 45.6 us, but lost where rows come in many waves (LayerNorm 16-bit x
/// 50257 over 2670 rows 0.82x).
inline bool useWideRows(int64_t Rows, int SmCount) {
  return SmCount > 0 && Rows <= int64_t(SmCount);
}
/// KernelPlan::RowPhaseLoop's peeled variant, one block a row of \p Rows
/// (LaunchShape::RowLoop): the blocks resident at once (\p ResidentPerSm
/// an SM, as the driver reports for the loaded kernel), rounded down to a
/// multiple of the vector width \p Vec so that rows gridDim.x apart sit at
/// one phase; \p Rows when that is not fewer (or nothing is known). One
/// wave: a block's rows run back to back, so blocks beyond the resident
/// ones would wait for a whole block's rows, not for one row.
inline unsigned rowLoopGrid(unsigned Rows, int Vec, int SmCount, int ResidentPerSm) {
  if (SmCount <= 0 || ResidentPerSm <= 0 || Vec <= 0)
    return Rows;
  int64_t Slots = int64_t(SmCount) * ResidentPerSm;
  Slots -= Slots % Vec;
  return Slots > 0 && Slots < int64_t(Rows) ? static_cast<unsigned>(Slots) : Rows;
}
/// Row chunks a thread at MaxRowThreads from which a row gets a few-rows
/// form (split over MaxClusterBlocks blocks, a thread keeps >= 1 chunk).
inline constexpr int FewRowsMinChunksPerThread = 8;
/// Whether a row of \p Chunks chunks is long enough for a few-rows form.
inline bool fewRowsChunks(int64_t Chunks) {
  return Chunks >= int64_t(FewRowsMinChunksPerThread) * MaxRowThreads;
}
/// Column reductions (codegen/ColumnReduce.h): a block is ColumnThreads
/// threads across a tile of columns, each owning ColumnWidth adjacent columns
/// (KernelPlan::ColumnWidth: one 16-byte vector of the widest input, so a
/// warp reads 512 contiguous bytes of a row), times ColumnRowThreads threads
/// down the rows (each sums every ColumnRowThreads-th row of its split, with
/// ColumnUnroll rows' loads issued before their adds).
inline constexpr int ColumnThreads = 32;
inline constexpr int ColumnRowThreads = 8;
inline constexpr int ColumnUnroll = 4;
/// The reduced axis is split across blocks (columnSplits) until columns x
/// splits reaches this: 2^17 = 512 blocks of 256 bf16 columns (1024 of
/// 128 f32 ones), about 4 a SM of the H200, enough bytes in flight when a
/// thread's loop issues its 4 rows' loads back to back, with splits long
/// enough that each thread's loop, not the block's start and the combine
/// (the last block of a tile adds the splits in sequence), dominates.
/// Measured (BENCHMARKS.md, sessions 27, 30, 31): 2^19 -> 2^18 sped up W10
/// 4.7%, W18 3.3%; 2^18 -> 2^17 sped up the column sums it changes by 2.3%
/// median (0.976x-1.10x over 51 shapes, the wide 16-bit ones most), W10 and
/// W21 2-3%, once reshapes of the domain kept their leading coordinates
/// (CompileOptions::PrefixCoords): before that W18, whose loop divided a
/// 64-bit index each row, lost 14-16% with it.
inline constexpr int64_t ColumnSplitWork = int64_t(1) << 17;
/// ... with at least this many rows a split (16 rows a thread) ...
inline constexpr int64_t ColumnMinSplitRows = 128;
/// ... and at most this many splits while splits x columns reach
/// ColumnMinSplitColumns: each tile's last block adds the splits' partials
/// in sequence, 8 L2 round trips in flight, after every block of the tile
/// is done, so the combine is a tail on a few SMs that grows with the
/// split count. ncu (col_sum f16 16384 x 2048, 8 tiles, BENCHMARKS.md
/// session 30): at 128 splits the busiest SM is active 11.3K cycles longer
/// than the mean, at 64 splits 6.6K. Measured over the column-sum sweep
/// (session 30): 128-256 -> 64 splits sped up rows of 768-2048 columns by
/// 5-14%, except 16-bit rows of 768 (3 tiles: 192 blocks, 4% slower) ...
inline constexpr int64_t ColumnCombineSplits = 64;
/// ... which this floor avoids: more splits while splits x C < 2^16 (86
/// at C = 768: 256 blocks of 256 16-bit columns), enough blocks for the
/// bytes in flight (16-bit x 768 then 1.02x, 14 shapes the rule was not
/// built from 1.11x median, 0.998x at worst).
inline constexpr int64_t ColumnMinSplitColumns = int64_t(1) << 16;
/// At most this many splits in any case (the scratch buffer's bound).
inline constexpr int64_t ColumnMaxSplits = 256;
/// A column tile's last block adds the splits' partials this many loads at
/// a time (the loop's unroll): 8 is 8 L2 round trips for 64 splits, after
/// every other block of the tile is done. CompileOptions::ColumnCombineUnroll
/// (an experiment) sets it; at 32 ptxas issues 15-31 of the loads before
/// their adds (static SASS, session 32), registers unchanged.
inline constexpr int ColumnCombineUnroll = 8;
/// Column reductions computed by a row kernel (KernelPlan::MixColumns): the
/// rows are cut into at most MixMaxGroups groups of consecutive rows
/// (mixRowsPerGroup, mixGroups); a block takes a group, adding each row's
/// terms to its columns' accumulators in shared memory in row order, and
/// stores them as the group's partials ([reduction][group][column]). Then
/// mixCombiners(C, reductions) more blocks of the same launch, each one
/// reduction's tile of MixCombineLanes columns, add the groups' partials:
/// MixCombineRows threads down a column (thread y the groups y, y + 8, ...
/// in order, whatever the block's size), then those in order. A function
/// of the shape alone, as columnSplits is, so every bit is reproducible.
/// How many groups: about one wave of the groups' blocks at the mixed
/// kernels' launch bound of 1024 threads an SM (MixBlockRowsResidentThreads,
/// MixTwoRowsResidentThreads) on 128 SMs, mixGroupsFor: MixGroupThreads /
/// the block's threads, within MixMinGroups..MixMaxGroups. A group's rows
/// are at least the block's rows (KernelPlan::RowsPerBlock), so no row slot
/// of a block idles. Fewer groups than a wave leave SMs idle (128 rows: 32
/// groups of 4 ran 0.84-0.97x 128 groups of 1); more add partials (2 x C x
/// 4 bytes a group and reduction, written and read once) and a second
/// wave: blocks of 512 threads ran 1.07-1.32x faster at 256 groups than at
/// 512 over 512-4096 rows (0.97x at 128-256 rows, where both are one group
/// a row), blocks of 256 threads 0.73-0.96x slower at 256 than at 512 past
/// 4096 rows (H100, session 38, BENCHMARKS.md). A function of the plan and
/// the row count, not of the GPU, so every bit is reproducible anywhere.
inline constexpr int64_t MixGroupThreads = 131072;
inline constexpr int64_t MixMinGroups = 256;
inline constexpr int64_t MixMaxGroups = 512;
/// The most groups of a mixed kernel whose blocks have \p BlockThreads
/// threads (KernelPlan::ThreadsX x RowsPerBlock).
inline int64_t mixGroupsFor(int BlockThreads) {
  return std::clamp<int64_t>(MixGroupThreads / std::max(BlockThreads, 1), MixMinGroups,
                             MixMaxGroups);
}
inline constexpr int MixCombineLanes = 32;
inline constexpr int MixCombineRows = 8;
/// A mixed kernel's combining thread adds its groups' partials (every
/// MixCombineRows-th) this many loads at a time (the loop's unroll): at
/// 512 groups, 64 loads a thread in 16 L2 round trips after every group
/// is done. CompileOptions::MixCombineUnroll (an experiment) sets another;
/// the sum's order is the same.
inline constexpr int MixCombineUnroll = 4;
/// ... after batches of this many loads, each batch's loads before its adds
/// (CompileOptions::MixCombineBatches): unrolled 16, the loop alone ran
/// 1.13-1.25x faster at 1024-16384 rows (256-512 groups) but 0.79-0.88x at
/// 256 rows, where a thread's 8-16 partials fell to the serial remainder
/// (H100, session 40). A thread of fewer partials than a batch runs the
/// loop alone.
inline constexpr int MixCombineBatch = 16;
/// Threads a mixed row kernel of one chunk a thread keeps resident an SM
/// (its aligned variant's launch bound: MixResidentThreads / threads a
/// block blocks; KernelPlan::AlignedMinBlocksPerSm). Its groups' blocks
/// are the whole launch, so other blocks cannot hide a block's wait: W21's
/// kernel ran 3 blocks of 512 an SM at 40 registers, RMSNorm backward
/// 16-bit x 4096's at 49-53 (2 blocks; 40 under the bound, no spill); with
/// CompileOptions::MixRowsKnown W21's needs 56 without the bound, 40 with
/// it (no spill, 264 instructions a row against 341; static SASS, session
/// 34).
inline constexpr int MixResidentThreads = 1536;
/// ... and with two rows an iteration (CompileOptions::MixTwoRows), whose
/// kept chunks and accumulators are twice a row's: the probe's hand-written
/// form of W21 took 61 registers (bench/probes/mix_w21.cu, session 34).
inline constexpr int MixTwoRowsResidentThreads = 1024;
/// ... and with several rows a block (CompileOptions::MixBlockRows), whose
/// rows' scratch and accumulators are indexed by threadIdx.y: RMSNorm
/// backward 16-bit x 1024 (4 rows of 128 threads) spilled 16 B at
/// MixResidentThreads' 40 registers (ptxas, session 37).
inline constexpr int MixBlockRowsResidentThreads = 1024;
/// The accumulators of a mixed row kernel, reductions x C x the
/// accumulator's size, are at most this many bytes of static shared memory
/// (the block reductions' scratch beside them stays under the 48 KB a
/// kernel may declare statically).
inline constexpr int64_t MixMaxSharedBytes = 32768;
/// The most bytes of accumulators the mixed kernel takes by the rule: past
/// MixMaxSharedBytes they are dynamic shared memory (KernelPlan::
/// MixDynamicShared). Up to 64 KiB (LayerNorm backward 4097-8192 columns,
/// RMSNorm backward 8193-16384) the mixed kernel ran 1.29x (LayerNorm) and
/// 1.42x (RMSNorm) the default plan's 2-3 kernels median, 0.84x at worst
/// (LayerNorm f32 1024 x 4999); at 88 KB (LayerNorm bf16 x 11008) it lost
/// (0.68-0.86x), at 44-128 KB of RMSNorm it won (H100, session 38).
inline constexpr int64_t MixRuleSharedBytes = 65536;
/// Column reductions a row kernel may take: rows of at least 256 columns
/// (MixMinColumnsAllowed, 16 chunks of any element size) whose
/// accumulators, \p Reductions x \p Cols x \p AccBytes, fit
/// MixRuleSharedBytes. Rows under 2048 columns run several rows a block
/// (MixBlockRowsRule); the norm backwards at 768-1536 columns ran 1.09-1.89x
/// their 2-3 kernels there (H100, session 38); at 256-767 columns 1.52x
/// (LayerNorm) and 1.20x (RMSNorm) median, 0.95x at worst (LayerNorm bf16
/// 16384 x 767), and at 128-1000 rows of 768-4096 columns 1.27x median
/// (H100, session 39, BENCHMARKS.md). Shorter rows are not measured.
inline constexpr int64_t MixMinColumns = 256;
/// (\p MinColumns: CompileOptions::MixMinColumns, an experiment for timing
/// only.)
/// (\p MaxBytes: CompileOptions::MixMaxSharedBytes, an experiment, else
/// MixRuleSharedBytes: past MixMaxSharedBytes the accumulators go in
/// dynamic shared memory.)
inline bool mixFits(int64_t Cols, int64_t Reductions, int64_t AccBytes,
                    int64_t MinColumns = MixMinColumns, int64_t MaxBytes = MixRuleSharedBytes) {
  return Cols >= MinColumns && Reductions * Cols * AccBytes <= MaxBytes;
}
/// The most bytes of accumulators CompileOptions::MixMaxSharedBytes may
/// allow (dynamic shared memory; an sm_90 block may opt in to 227 KiB, the
/// block reductions' and the combine's static scratch beside them).
inline constexpr int64_t MixMaxSharedBytesAllowed = 200 * 1024;
/// The row lengths and accumulator bytes the mixed kernel takes
/// (FusionOptions::MixMinColumns and MixMaxSharedBytes).
struct MixLimits {
  int64_t MinColumns = MixMinColumns;
  int64_t MaxSharedBytes = MixRuleSharedBytes;
};
/// Threads a block of a mixed row kernel with several rows a block, at
/// most: a block a row of 512 threads is the form measured best at
/// 2048-8192 columns.
inline constexpr int MixBlockThreads = 512;
/// Rows a block of a mixed row kernel wanted (CompileOptions::MixBlockRows
/// 0), within mixBlockRows' caps: rows of 768-1536 columns, a block a row
/// a quarter to a half of the GPU's threads, ran 1.14x faster median at 4
/// rows of a group side by side than at one (0.90x at f32 x 1536 x 4096
/// rows, 2.0x at bf16 x 768; norm backwards at 512 groups, H100, session
/// 38); up to 32 rows (512 threads) ran 0.76-1.02x the speed of 4. At
/// 128-512 rows of 384-1536 columns (32-128 groups) 1 row a block ran
/// 0.74x median, 2 rows 0.97x, and groups of 1 row in blocks of 4 0.84x
/// (H200, session 40): more groups cost more than the SMs they fill.
inline constexpr int MixBlockRowsRule = 4;
/// The most rows a block CompileOptions::MixBlockRows may ask for.
inline constexpr int MixBlockRowsMax = 32;
/// Rows a block of a mixed row kernel: \p Wanted (at least 1), at most
/// MixBlockThreads / \p ThreadsX, and no more rows than whose accumulators
/// (\p RowAccBytes each) fit MixMaxSharedBytes together.
inline int mixBlockRows(int ThreadsX, int64_t RowAccBytes, int64_t Wanted) {
  int64_t S = std::min<int64_t>(Wanted, MixBlockThreads / std::max(ThreadsX, 1));
  S = std::min<int64_t>(S, MixMaxSharedBytes / std::max<int64_t>(RowAccBytes, 1));
  return static_cast<int>(std::max<int64_t>(S, 1));
}
/// Bytes of a mixed row kernel's accumulators in its variant of width
/// \p Vec: \p Rows rows a block, each \p Reductions x Vec x ceil(Cols /
/// Vec) slots (codegen/MixColumns.cpp) of \p AccBytes.
inline int64_t mixAccumulatorBytes(int64_t Cols, int Vec, int64_t Reductions, int64_t Rows,
                                   int64_t AccBytes) {
  return Rows * Reductions * Vec * ((Cols + Vec - 1) / Vec) * AccBytes;
}
/// The column lengths of any such kernel (one f32 accumulator a column).
inline bool mixColumns(int64_t Cols) { return mixFits(Cols, 1, 4); }
/// The fewest columns CompileOptions::MixMinColumns may set: 16 chunks of
/// any element size (KernelPlan::RowsPerBlock takes rows of a warp or
/// less several to a block).
inline constexpr int64_t MixMinColumnsAllowed = 256;
/// ... and the column lengths of any such kernel with it (the error bound
/// covers them: reference/SummationDepth.cpp).
inline bool mixColumnsAny(int64_t Cols) {
  return mixFits(Cols, 1, 4, MixMinColumnsAllowed, MixMaxSharedBytesAllowed);
}
/// Runs of fewer rows than this take the plan without the mixed kernel
/// (CompileOptions::MixMinRows): the mixed kernel's wait for its groups
/// costs a constant 1-2 us, so at 1-64 rows it ran 0.78-0.98x the default
/// plan's kernels in 16 bits, at 128-256 rows 1.0-1.2x (H100, sessions 35
/// and 36, BENCHMARKS.md).
inline constexpr int64_t MixMinRows = 128;
/// Rows a group: ceil(Rows / MaxGroups), at least 1. \p MaxGroups other
/// than MixMaxGroups: CompileOptions::MixMaxGroups, an experiment (the
/// error bound assumes MixMaxGroups).
/// \p MinRows: CompileOptions::MixMinGroupRows, an experiment (timing
/// only, like MaxGroups): at least this many rows a group.
inline int64_t mixRowsPerGroup(int64_t Rows, int64_t MaxGroups = MixMaxGroups,
                               int64_t MinRows = 1) {
  return std::max(MinRows, Rows <= MaxGroups ? 1 : (Rows + MaxGroups - 1) / MaxGroups);
}
/// Groups that hold rows: ceil(Rows / mixRowsPerGroup(Rows)) (0 for none).
inline int64_t mixGroups(int64_t Rows, int64_t MaxGroups = MixMaxGroups, int64_t MinRows = 1) {
  if (Rows <= 0)
    return 0;
  int64_t K = mixRowsPerGroup(Rows, MaxGroups, MinRows);
  return (Rows + K - 1) / K;
}
/// The combining blocks: a tile of MixCombineLanes columns a reduction.
inline int64_t mixCombiners(int64_t Cols, int Reductions) {
  return Reductions * ((Cols + MixCombineLanes - 1) / MixCombineLanes);
}
/// Transpose tiles (KernelPlan::TransposeNode): TileDim x TileDim elements,
/// TileWarp x TileRows threads, each (TileDim / TileWarp) x (TileDim /
/// TileRows) elements a phase. Measured on W15 (BENCHMARKS.md schedule
/// log): 32x32 tiles 117.6 us, 64x64 tiles (16 loads in flight a thread
/// instead of 4) 123.6 us.
inline constexpr int TileDim = 32;
/// The wide variant's tiles (codegen/TransposeKernel.cpp): Vec consecutive
/// elements a thread a step, VecTileDim^2 / Vec / (TileWarp * TileRows)
/// steps a phase.
inline constexpr int VecTileDim = 64;
inline constexpr int TileWarp = 32;
inline constexpr int TileRows = 8;
} // namespace launch

/// Rows whose chunks an element-wise kernel orders piece by piece
/// (KernelPlan::ConcatPiece): a warp's 32 threads then take chunks of one
/// piece of 32 / (Piece / Vec) rows instead of both pieces of fewer rows, and
/// never branch apart on the piece. RoPE bf16, head dim 128: 8 chunks a
/// half, so a warp held the two halves of 2 heads and ran both branches
/// (20 of 32 threads active, ncu; 132 us against torch.compile's 112,
/// BENCHMARKS.md schedule log). 1: natural order (no concat, a piece of at
/// least a warp's chunks, or one that is no power of two).
inline int64_t concatRowGroup(int64_t Piece, int Vec) {
  if (Piece <= 0 || Vec <= 1 || Piece % Vec != 0)
    return 1;
  int64_t Chunks = Piece / Vec;
  if (Chunks >= 32 || 32 % Chunks != 0)
    return 1;
  return 32 / Chunks;
}

/// How many blocks share each column tile of a column reduction of [R, C]:
/// min(ColumnSplitWork / C, R / ColumnMinSplitRows, ColumnMaxSplits,
/// max(ColumnCombineSplits, ceil(ColumnMinSplitColumns / C))), at least 1;
/// split s sums rows [s * K, min(R, (s + 1) * K)), K = ceil(R / splits).
/// A function of the shape and the constants above only (not of the
/// device, the dtype or the variant), so the summation order, and with it
/// every result bit, is the same run to run and on any GPU
/// (docs/NUMERICS.md, "Reduction order over axes").
int64_t columnSplits(int64_t Rows, int64_t Cols);

/// Grid, block and dynamic shared memory of one launch (the three launch
/// sites: exec/Executable.cpp, ExecutableProfile.cpp, ExecutableGraph.cpp).
struct LaunchShape {
  unsigned GridX = 1;
  unsigned BlockX = 1, BlockY = 1;
  /// Row kernels keeping their row in shared memory (rowSharedBytes); the
  /// executable sets each such kernel's opt-in limit to it at load.
  unsigned SharedBytes = 0;
  /// One block a row whose blocks may loop over rows gridDim.x apart
  /// (KernelPlan::RowPhaseLoop): the launch takes launch::rowLoopGrid of
  /// GridX once it knows the loaded kernel's resident blocks.
  bool RowLoop = false;
};

/// Dynamic shared memory a row kernel may keep its row in on sm_XY: the
/// device's opt-in limit per block (CUDA C++ Programming Guide, "Technical
/// Specifications per Compute Capability": 227 KB on 9.0 and 10.x, 163 KB
/// on 8.0 and 8.7, 99 KB on 8.6, 8.9 and 12.x, 96 KB on 7.0, 64 KB on 7.5)
/// less 4 KB for the kernel's static shared memory (block-reduction
/// scratch, 32 values a reduction).
inline int64_t maxRowSharedBytes(int SmMajor, int SmMinor) {
  int64_t Kb = 48;
  if (SmMajor == 9 || SmMajor == 10 || SmMajor == 11)
    Kb = 227;
  else if (SmMajor == 8)
    Kb = SmMinor == 0 || SmMinor == 7 ? 163 : 99;
  else if (SmMajor >= 12)
    Kb = 99;
  else if (SmMajor == 7)
    Kb = SmMinor == 5 ? 64 : 96;
  return (Kb - 4) * 1024;
}

/// Dynamic shared memory a block requests (and leaves unused) so that at
/// most \p Blocks blocks share an SM of sm_XY: a little over the SM's
/// shared memory over Blocks + 1 (each block also holds 1 KB the driver
/// reserves and up to 1 KB of static scratch, and the SM's capacity is the
/// per-block limit of maxRowSharedBytes' table plus 1 KB, except 7.x).
inline int64_t occupancyPadBytes(int SmMajor, int SmMinor, int Blocks) {
  int64_t PerSm = maxRowSharedBytes(SmMajor, SmMinor) + 5 * 1024;
  if (SmMajor == 7)
    PerSm -= 1024;
  return (PerSm + Blocks) / (Blocks + 1);
}

/// Dynamic shared memory of a row kept in shared memory, one block a row
/// (KernelPlan::RowSharedInputs): each input's part holds
/// ceil(RowLen / (Threads * Vec)) x Threads chunks of Vec elements, and
/// \p ElemBytes sums the parts' element sizes. The schedule's limit check,
/// codegen's layout and the launch all read this one rule.
inline int64_t rowSharedBytes(int64_t RowLen, int Threads, int Vec, int64_t ElemBytes) {
  int64_t Span = int64_t(Threads) * Vec;
  return (RowLen + Span - 1) / Span * Span * ElemBytes;
}

/// The sizes a launch depends on, evaluated for the run's dims.
struct LaunchSizes {
  int64_t Numel = 0;  // the whole iteration domain
  int64_t Rows = 0;   // every domain dim but the last
  int64_t RowLen = 0; // the last domain dim
};

/// A kernel's launch rule, fixed when it is emitted.
class LaunchRule {
public:
  explicit LaunchRule(const KernelPlan &P);

  /// The launch of the variant with vector width \p Vec on a device with
  /// \p SmCount SMs; nullopt when there is nothing to do (no elements).
  /// Throws jitfuse::Error when the grid would exceed CUDA's limit.
  /// \p Peeled: the peeled variant (KernelPlan::Peel), whose ranges and rows
  /// may span one chunk more.
  std::optional<LaunchShape> shape(const LaunchSizes &S, int Vec, int SmCount,
                                   bool Peeled = false) const;
  /// Whether variant \p I of the kernel is the peeled one.
  bool peeled(size_t I) const { return PeeledIndex >= 0 && static_cast<int>(I) >= PeeledIndex; }

  /// Full reductions: the most blocks shape() launches on \p SmCount SMs
  /// (the size of the per-block partials buffer). 0 for other kinds.
  unsigned maxBlocks(int SmCount) const;
  /// Bytes of the partials buffer a launch needs on \p SmCount SMs (full
  /// reductions: one value a block; column reductions: one value a column
  /// a split, for the largest split any run can make; a row kernel with
  /// column partials: one value a column, reduction and group, for
  /// MixMaxGroups groups), allocated once;
  /// 0 when the kernel takes none.
  size_t partialsBytes(int SmCount) const;
  /// How many zeroed unsigned counters it needs beside them (full
  /// reductions: 1; column reductions: one a column tile; a row kernel
  /// with column partials: 3, codegen/MixColumns.cpp).
  size_t counters() const;
  /// A row kernel computing column reductions (KernelPlan::MixColumns).
  bool mixesColumns() const { return MixReductions > 0; }
  /// Column reductions: columns a block covers.
  int64_t columnTile() const { return int64_t(ThreadsX) * ColumnWidth; }
  /// Row kernels with KernelPlan::RowSharedInputs: the dynamic shared memory
  /// of the variant with vector width \p Vec (0 for other kernels).
  int64_t rowSharedBytes(int Vec) const {
    return codegen::rowSharedBytes(StaticRowLen, ThreadsX, Vec, RowSharedElemBytes);
  }
  /// The dynamic shared memory a launch of variant \p Vec requests: the row
  /// kept in shared memory and the occupancy padding
  /// (KernelPlan::RowPadSharedBytes); each such kernel opts in to it at load.
  /// A mixed kernel's accumulators past the static limit
  /// (KernelPlan::MixDynamicShared) are dynamic shared memory too.
  int64_t dynamicSharedBytes(int Vec) const {
    return rowSharedBytes(Vec) + RowPadBytes +
           (MixDynamic ? launch::mixAccumulatorBytes(MixCols, Vec, MixReductions, RowsPerBlock,
                                                     MixAccBytes)
                       : 0);
  }

  KernelKind kind() const { return Kind; }
  int clusterX() const { return ClusterX; }

private:
  KernelKind Kind;
  bool Flat;
  int ThreadsX, RowsPerBlock, ClusterX;
  bool ThreadsAtLaunch = false; // KernelPlan::ThreadsAtLaunch
  int PeeledIndex;
  int ColumnWidth;
  int ColumnReductions = 1; // KernelPlan::ColumnReductions
  bool Tiled; // KernelPlan::TransposeNode: one block a tile
  bool FlatTail = false; // KernelPlan::FlatTailThreads
  /// Column reductions: R and C when static (-1 when a dim is dynamic), so
  /// the partials buffer is sized for the one shape that runs.
  int64_t StaticRows = -1, StaticCols = -1;
  /// Row kernels keeping their row in shared memory: the static row length
  /// and the bytes of one row element over the cached inputs (0: none).
  int64_t StaticRowLen = 0, RowSharedElemBytes = 0;
  int64_t RowPadBytes = 0; // KernelPlan::RowPadSharedBytes
  int64_t ConcatPiece = 0; // KernelPlan::ConcatPiece
  bool PieceWrap = false;   // KernelPlan::PieceWrapChunks
  bool PhaseLoop = false;   // KernelPlan::RowPhaseLoop
  /// KernelPlan::MixColumns: their count, the static row length and the
  /// accumulator's bytes (0 reductions: none).
  int MixReductions = 0;
  int64_t MixCols = 0, MixAccBytes = 0, MixGroupsMax = 0;
  bool MixDynamic = false;    // KernelPlan::MixDynamicShared
  int64_t MixGroupRows = 1; // KernelPlan::MixMinGroupRows
};

} // namespace jitfuse::codegen
