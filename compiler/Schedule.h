//===- compiler/Schedule.h - cluster -> kernel plan -------------*- C++ -*-===//
#pragma once

#include "codegen/LaunchRule.h"
#include "compiler/Partition.h"

#include <optional>

namespace jitfuse {

struct ScheduleOptions {
  /// Registers (bytes per thread) a row kernel may spend keeping its row.
  int RowCacheBytes = 256;
  /// CompileOptions::RowCacheStageInputs: a row read again whose inputs do
  /// not all fit RowCacheBytes keeps only the inputs a reduction stage
  /// reads, when those fit; the epilogue loads the others (a norm's weight
  /// and bias) once.
  bool RowCacheStageInputs = true;
  /// CompileOptions::RowCacheLateEpilogue: a row kept whole in registers
  /// keeps only its stage inputs in the form for many rows as well.
  bool RowCacheLateEpilogue = false;
  /// CompileOptions::RowCacheLatePeeled: the same for the peeled variants
  /// only (KernelPlan::LatePeeledOnly).
  bool RowCacheLatePeeled = false;
  /// CompileOptions::RowCacheWideThreads.
  bool RowCacheWideThreads = true;
  /// CompileOptions::PeeledRowOccupancy, for rows kept at these bytes a thread.
  bool PeeledRowOccupancy = true;
  static constexpr int64_t PeeledOccupancyBytes = 128, PeeledOccupancyMaxBytes = 192;
  /// CompileOptions::RowCacheReadOnce: a row read once keeps its loads in
  /// registers when they fit ReadOnceCacheBytes a thread.
  bool RowCacheReadOnce = true;
  static constexpr int64_t ReadOnceCacheBytes = 64;
  /// CompileOptions::GroupStores.
  bool GroupStores = true;
  /// CompileOptions::PieceWrapChunks.
  bool PieceWrapChunks = true;
  /// CompileOptions::RowPhaseLoop.
  bool RowPhaseLoop = false;
  /// CompileOptions::PrefixCoords (KernelPlan::PrefixCoords).
  bool PrefixCoords = true;
  /// CompileOptions::OutputLedVariant.
  bool OutputLedVariant = true;
  /// KernelPlan::SamePhasePeeled (CompileOptions::PeeledSamePhase).
  bool PeeledSamePhase = false;
  /// CompileOptions::WholeChunkPaths.
  bool WholeChunkPaths = false;
  /// CompileOptions::FlatRowBroadcast.
  bool FlatRowBroadcast = true;
  /// CompileOptions::FlatTailThreads.
  bool FlatTailThreads = true;
  /// CompileOptions::RowCacheValues.
  bool RowCacheValues = true;
  /// A row kernel's per-row inputs ([outer..., 1], read once a row as
  /// scalars) set its vector width like every other input; false: only
  /// chunked tensors do (a row kernel with column partials, whose f32
  /// statistics otherwise halve a 16-bit row's width).
  bool PerRowInputsSetWidth = true;
  /// CompileOptions::MixMaxGroups (0: launch::mixGroupsFor the block).
  int64_t MixMaxGroups = 0;
  /// CompileOptions::MixRowsKnown.
  bool MixRowsKnown = false;
  /// CompileOptions::MixTwoRows.
  bool MixTwoRows = true;
  /// CompileOptions::MixMinGroupRows (0: the block's rows).
  int64_t MixMinGroupRows = 0;
  /// CompileOptions::MixBlockRows (0: launch::MixBlockRowsRule).
  int64_t MixBlockRows = 0;
  /// CompileOptions::MixThreadsRoundUp.
  bool MixThreadsRoundUp = false;
  /// CompileOptions::MixPhaseSlots.
  bool MixPhaseSlots = false;
  /// CompileOptions::MixRowStartChunks.
  bool MixRowStartChunks = true;
  /// CompileOptions::RowStartChunks.
  bool RowStartChunks = false;
  /// CompileOptions::MixCombineBatches.
  bool MixCombineBatches = true;
  /// CompileOptions::MixPeeledBound.
  bool MixPeeledBound = true;
  /// CompileOptions::RowOkKnown.
  bool RowOkKnown = false;
  /// CompileOptions::ColumnCombineUnroll (0: launch::ColumnCombineUnroll).
  int ColumnCombineUnroll = 0;
  /// CompileOptions::MixCombineUnroll (0: launch::MixCombineUnroll).
  int MixCombineUnroll = 0;
  /// CompileOptions::FastMath, recorded in each plan for codegen.
  bool FastMath = false;
  /// CompileOptions::PeelAlignment: one vector variant aligned at run time
  /// (default) instead of the ladder of widths the pointers select.
  bool Peel = true;
  /// CompileOptions::RowCache: force keeping (true) or re-reading (false)
  /// a row kernel's row instead of the RowCacheBytes rule.
  std::optional<bool> ForceRowCache;
  /// Row clusters allowed (sm_90+); CompileOptions::RowCluster forces a size.
  bool Clusters = false;
  std::optional<unsigned> ForceCluster;
  /// With Clusters: a split row accumulates its Welford and online-softmax
  /// pairs (RowPairs) too, each block's pair combined across the cluster
  /// in rank order: one cluster barrier for the two reductions
  /// (CompileOptions::RowClusterPairs).
  bool ClusterPairs = false;
  /// With Clusters: the bytes a thread the split's block count is chosen
  /// by (the fewest blocks that keep the row within them); 0: RowCacheBytes.
  int ClusterCacheBytes = 0;
  /// With Clusters: a row whose stage inputs (RowCacheStageInputs) fit the
  /// budget only split, not in one block, keeps just those in the split
  /// (its weights loaded by the epilogue), not every input of the row's
  /// length (AlignedClustersStageInputs asks it of the split it retries).
  bool ClusterStageInputs = false;
  /// With Clusters: a split whose inputs do not fit ClusterCacheBytes keeps
  /// the values its loops compute from them where those do (RowCacheValues
  /// in a split: add + RMSNorm's x + residual, one f32 value for two f32
  /// inputs), its block count chosen by them (AlignedClustersValues asks
  /// it of the split it tries).
  bool ClusterValues = false;
  /// Dynamic shared memory a block may use to keep a row read again that
  /// does not fit RowCacheBytes (CompileOptions::RowSharedMemory); 0: never.
  int64_t RowSharedBytes = 0;
  /// A row read again from memory per stage: L2 eviction hints on its loads
  /// (CompileOptions::RowL2Hints, sm_80+) and the dynamic shared memory a
  /// block requests to limit blocks per SM (CompileOptions::RowBlocksPerSm;
  /// 0: none).
  bool RowL2Hints = false;
  int64_t RowPadSharedBytes = 0;
  /// CompileOptions::RowReadBack and RowOnlineSoftmax.
  bool RowReadBack = true;
  bool RowOnlineSoftmax = true;
  /// CompileOptions::RowRereadThreads: threads a row for rows re-read per
  /// stage that have at least 2 chunks a thread at that many (0: MaxRowThreads).
  unsigned RowRereadThreads = 0;
  /// CompileOptions::RowDynamicThreads: threads a row for rows of run-time
  /// length (0: the launch's, or codegen::launch::DynamicRowThreads).
  unsigned RowDynamicThreads = 0;
  /// CompileOptions::RowThreadsAtLaunch (KernelPlan::ThreadsAtLaunch).
  bool RowThreadsAtLaunch = false;
  /// CompileOptions::RowChunksPerThread (0: the rule's 2).
  unsigned RowChunksPerThread = 0;
  /// A row's thread count is its chunks a thread's count rounded up to a
  /// power of two (some threads idle), not down (some threads a chunk
  /// more): CompileOptions::MixThreadsRoundUp, in mixed kernels only.
  bool RowThreadsRoundUp = false;
  /// Long rows get a few-rows form split over a cluster (sm_90;
  /// CompileOptions::RowFewRowsClusters).
  bool FewRowsClusters = false;
  /// Long re-read rows also get a form of WideRowThreads a row
  /// (KernelPlan::WideRows; CompileOptions::RowWideRows).
  bool WideRows = true;
  /// A long row re-read per stage with a peeled variant also gets the
  /// aligned variant of its cluster split (KernelPlan::AlignedCluster;
  /// CompileOptions::RowClustersAligned; sm_90+).
  bool AlignedClusters = false;
  /// KernelPlan::AlignedClusterOverWide (CompileOptions::
  /// RowClustersAlignedOverWide).
  bool AlignedClustersOverWide = false;
  /// KernelPlan::AlignedClusterPeeled, for rows of 4-byte elements
  /// (CompileOptions::RowClustersPeeled).
  bool AlignedClustersPeeled = false;
  /// AlignedClustersPeeled for rows of 16-bit elements too
  /// (CompileOptions::RowClustersPeeledNarrow).
  bool AlignedClustersPeeledNarrow = false;
  /// The split's peeled variants bounded to two blocks an SM
  /// (CompileOptions::RowClustersPeeledBound).
  bool AlignedClustersPeeledBound = false;
  /// The split's block count chosen for two blocks an SM first (compiler/
  /// RowForms.cpp; CompileOptions::RowClustersTwoBlocks).
  bool AlignedClustersTwoBlocks = false;
  /// A split that keeps every input and exceeds the stage bound is retried
  /// keeping only the stages' inputs (ClusterStageInputs; compiler/
  /// RowForms.cpp; CompileOptions::RowClustersStageInputs).
  bool AlignedClustersStageInputs = false;
  /// The split first tried keeping its values at two blocks an SM
  /// (ClusterValues at SplitTwoBlocksBytes; compiler/RowForms.cpp;
  /// CompileOptions::RowClustersValues).
  bool AlignedClustersValues = false;
  /// Element-wise rows of a concat: chunks piece by piece over groups of
  /// rows (CompileOptions::ConcatRowGroups).
  bool ConcatRowGroups = true;
  /// Peeled row kernels: an aligned copy of the chunk loops
  /// (CompileOptions::AlignedRowCopy).
  bool AlignedRowCopy = false;
  /// Row kernels: a stage's block reductions share their barriers
  /// (CompileOptions::JointReduce).
  bool JointReduce = true;
  /// CompileOptions::RowWelford; unset: Welford where a row's stage inputs
  /// exceed RowL2ShareBytes.
  std::optional<bool> RowWelford;
  /// The L2 bytes each resident row block has on the target: L2 size over
  /// (SMs x codegen::launch::ResidentRowBlocksPerSm). A re-read row longer
  /// than this is evicted before its next read, so a read saved is an HBM
  /// read saved.
  int64_t RowL2ShareBytes = DefaultRowL2ShareBytes;
  /// The H200's share: 60 MiB / (132 SMs x 4 blocks of 512 threads).
  static constexpr int64_t DefaultRowL2ShareBytes =
      (60ll << 20) / (132 * codegen::launch::ResidentRowBlocksPerSm);
};

/// Chooses domain, vector widths, block shape and index width for one
/// cluster. Pure and deterministic.
KernelPlan scheduleCluster(const Graph &G, const Cluster &C, unsigned Index,
                           const ScheduleOptions &Opts = {});

} // namespace jitfuse
