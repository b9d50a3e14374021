//===- bench/SweepSchedule.cpp - The benchmarks' schedule flags -----------===//
#include "SweepSchedule.h"

#include "codegen/LaunchRule.h"

namespace jitfuse::bench {

/// A rule that is on by default: `--NAME` (kept for the recorded commands;
/// it changes nothing) and `--no-NAME`, CompileOptions::OPTION = false, \p
/// OffHelp saying what runs then.
static void addRuleFlags(CLI::App &App, const std::string &Name, const std::string &Option,
                         bool &On, bool &Off, const std::string &OffHelp) {
  App.add_flag("--" + Name, On,
               "CompileOptions::" + Option +
                   ", the default (the flag is kept for the recorded commands)");
  App.add_flag("--no-" + Name, Off, "CompileOptions::" + Option + " = false: " + OffHelp)
      ->excludes("--" + Name);
}

void addScheduleFlags(CLI::App &App, ScheduleFlags &S) {
  App.add_flag("--row-shared-memory", S.RowShared,
               "CompileOptions::RowSharedMemory (opt-in schedule, for comparisons)");
  App.add_flag("--no-read-back", S.NoReadBack,
               "CompileOptions::RowReadBack = false (rows re-read per stage, for comparisons)");
  App.add_flag("--welford", S.Welford,
               "CompileOptions::RowWelford = true (every LayerNorm row re-read per stage; "
               "default: rows beyond their L2 share)");
  App.add_flag("--no-welford", S.NoWelford,
               "CompileOptions::RowWelford = false (mean then variance, for comparisons)")
      ->excludes("--welford");
  App.add_flag("--row-threads-at-launch", S.ThreadsAtLaunch,
               "CompileOptions::RowThreadsAtLaunch (opt-in until measured: rows of run-time "
               "length take the threads their launch picks, 64-512; e.g. with jitfuse_sweep "
               "--dynamic-row)");
  App.add_option("--dynamic-row-threads", S.DynamicRowThreads,
                 "CompileOptions::RowDynamicThreads (experiment: a fixed thread count a row "
                 "for rows of run-time length, e.g. with jitfuse_sweep --dynamic-row; the "
                 "rule: 256, or with --row-threads-at-launch picked at launch)");
  App.add_option("--reread-threads", S.RereadThreads,
                 "CompileOptions::RowRereadThreads (experiment: threads a row for rows re-read "
                 "per stage)");
  App.add_option("--row-chunks-per-thread", S.RowChunksPerThread,
                 "CompileOptions::RowChunksPerThread (experiment: chunks a thread from which a "
                 "static row gets its threads; the rule: 2)");
  App.add_flag("--no-few-rows", S.NoFewRows,
               "CompileOptions::RowFewRowsClusters = false (long rows: no cluster form for few "
               "rows, for comparisons)");
  App.add_flag("--no-concat-groups", S.NoConcatGroups,
               "CompileOptions::ConcatRowGroups = false (RoPE's halves in natural chunk order, "
               "for comparisons)");
  App.add_flag("--aligned-row-copy", S.AlignedRowCopy,
               "CompileOptions::AlignedRowCopy (experiment: peeled row kernels' plain wide copy "
               "of the chunk loops for rows whose tensors sit at the lead's alignment)");
  App.add_flag("--no-wide-rows", S.NoWideRows,
               "CompileOptions::RowWideRows = false (long re-read rows: no form of 1024 threads "
               "a row for runs of at most one block an SM, for comparisons)");
  App.add_flag("--no-flat-tail-threads", S.NoFlatTailThreads,
               "CompileOptions::FlatTailThreads = false (a flat kernel's last partial chunk "
               "looped by one thread, for comparisons)");
  App.add_flag("--no-peeled-row-occupancy", S.NoPeeledRowOccupancy,
               "CompileOptions::PeeledRowOccupancy = false (a kept row's peeled variant "
               "without the 64-register bound, for comparisons)");
  App.add_flag("--no-flat-row-broadcast", S.NoFlatRowBroadcast,
               "CompileOptions::FlatRowBroadcast = false (odd rows with a broadcast bias run "
               "row by row with a per-row head and tail, for comparisons)");
  App.add_flag("--whole-chunk-paths", S.WholeChunkPaths,
               "CompileOptions::WholeChunkPaths (experiment: whole and partial chunks of "
               "element-wise rows with a broadcast 16-bit input take separate paths)");
  App.add_flag("--no-group-stores", S.NoGroupStores,
               "CompileOptions::GroupStores = false (misaligned 16-bit output chunks of concat "
               "rows stored in partial stores a lane, for comparisons)");
  App.add_flag("--no-piece-wrap-chunks", S.NoPieceWrapChunks,
               "CompileOptions::PieceWrapChunks = false (concat rows' peeled chunks at the row "
               "start, every misaligned tensor through a byte window, for comparisons)");
  App.add_flag("--row-phase-loop", S.RowPhaseLoop,
               "CompileOptions::RowPhaseLoop (experiment: a kept row's peeled variant loops "
               "over rows of one phase, its 16-bit row vector loaded once a block)");
  App.add_flag("--no-prefix-coords", S.NoPrefixCoords,
               "CompileOptions::PrefixCoords = false (reshapes of the domain divide the whole "
               "linear index, for comparisons)");
  App.add_flag("--no-output-led-variant", S.NoOutputLedVariant,
               "CompileOptions::OutputLedVariant = false (one peeled variant of a row kernel, "
               "led by its input at any output phase, for comparisons)");
  App.add_flag("--no-row-cache-values", S.NoRowCacheValues,
               "CompileOptions::RowCacheValues = false (a row whose stage inputs do not fit the "
               "register budget is re-read, not kept as its computed values, for comparisons)");
  App.add_flag("--row-stats-width", S.RowStatsWidth,
               "CompileOptions::RowStatsSetWidth = true: a row kernel's per-row inputs ([rows, "
               "1] statistics) set its vector width, as before session 40 (for comparisons)");
  App.add_flag("--no-row-cache-read-once", S.NoRowCacheReadOnce,
               "CompileOptions::RowCacheReadOnce = false (a row read once is reduced where it is "
               "loaded, for comparisons)");
  App.add_flag("--no-row-cache-wide-threads", S.NoRowCacheWideThreads,
               "CompileOptions::RowCacheWideThreads = false (a kept row over half the register "
               "budget stays at 512 threads a row, for comparisons)");
  App.add_flag("--row-cache-late-epilogue", S.RowCacheLateEpilogue,
               "CompileOptions::RowCacheLateEpilogue (rows that fit whole keep only their "
               "stage inputs in the form for many rows; experiment)");
  addRuleFlags(App, "mix-order-columns", "MixOrderColumns", S.MixOrderColumns,
               S.NoMixOrderColumns,
               "the norm backwards' column sums in kernels of their own (for comparisons)");
  App.add_option("--mix-combine-unroll", S.MixCombineUnroll,
                 "CompileOptions::MixCombineUnroll (experiment; 0: the rule's 4): loads a mixed "
                 "kernel's combining thread has in flight")
      ->check(CLI::IsMember({0, 1, 2, 4, 8, 16, 32, 64}));
  App.add_option("--column-combine-unroll", S.ColumnCombineUnroll,
                 "CompileOptions::ColumnCombineUnroll (experiment; 0: the rule's 8)")
      ->check(CLI::Range(0, 64));
  App.add_option("--mix-max-groups", S.MixMaxGroups,
                 "CompileOptions::MixMaxGroups (experiment; 0: the rule's, 256-512 by the "
                 "block's threads)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 20));
  App.add_option("--mix-min-rows", S.MixMinRows,
                 "CompileOptions::MixMinRows: with --mix-order-columns, runs of fewer rows take "
                 "the plan without the mixed kernel (-1: the rule's 128; 0: never)")
      ->check(CLI::Range(int64_t(-1), int64_t(1) << 40));
  App.add_option("--mix-min-group-rows", S.MixMinGroupRows,
                 "CompileOptions::MixMinGroupRows (experiment, timing only): the fewest rows a "
                 "group of the mixed kernel (0: the rule's, a block's rows)")
      ->check(CLI::Range(int64_t(0), int64_t(4096)));
  App.add_option("--mix-block-rows", S.MixBlockRows,
                 "CompileOptions::MixBlockRows (experiment): rows a block of the mixed kernel "
                 "works on side by side, each with its own accumulators (0: the rule's)")
      ->check(CLI::Range(int64_t(0), int64_t(codegen::launch::MixBlockRowsMax)));
  App.add_flag("--mix-threads-round-up", S.MixThreadsRoundUp,
               "CompileOptions::MixThreadsRoundUp (experiment): a mixed kernel's row at most one "
               "chunk a thread, its thread count rounded up to a power of two");
  App.add_flag("--no-mix-combine-batches", S.NoMixCombineBatches,
               "CompileOptions::MixCombineBatches = false: a mixed kernel's combine loads its "
               "partials in the unrolled loop alone, without batches of 16 first");
  App.add_flag("--mix-phase-slots", S.MixPhaseSlots,
               "CompileOptions::MixPhaseSlots (experiment): a mixed kernel's peeled variants "
               "index their column accumulators from the column shifted by the lead's phase");
  addRuleFlags(App, "mix-row-start-chunks", "MixRowStartChunks", S.MixRowStartChunks,
               S.NoMixRowStartChunks,
               "a mixed kernel's peeled variants of one-chunk rows aligned to the lead tensor (a "
               "row an iteration, a slot a column)");
  App.add_flag("--row-start-chunks", S.RowStartChunks,
               "CompileOptions::RowStartChunks (experiment): every row kernel's peeled variants "
               "keep each row's chunks at the row's start, every tensor at its own alignment");
  App.add_flag("--no-mix-peeled-bound", S.NoMixPeeledBound,
               "CompileOptions::MixPeeledBound = false: a mixed kernel's peeled variants of rows "
               "of more chunks than threads without the bound of 1024 resident threads an SM "
               "(for comparisons)");
  App.add_option("--mix-max-shared-bytes", S.MixMaxSharedBytes,
                 "CompileOptions::MixMaxSharedBytes (experiment): the most bytes of column "
                 "accumulators a mixed kernel keeps, past 32768 in dynamic shared memory (0: the "
                 "rule's 65536)")
      ->check(CLI::Range(int64_t(0), codegen::launch::MixMaxSharedBytesAllowed));
  App.add_flag("--mix-rows-known", S.MixRowsKnown,
               "CompileOptions::MixRowsKnown (experiment): the mixed row kernel's rows known to "
               "be rows (with --mix-order-columns)");
  App.add_option("--mix-min-columns", S.MixMinColumns,
                 "CompileOptions::MixMinColumns (experiment, timing only): the fewest columns a "
                 "row kernel takes column reductions of (0: the rule's 256; else 256 or more)")
      ->check(CLI::Range(int64_t(0), int64_t(1) << 20));
  addRuleFlags(App, "mix-two-rows", "MixTwoRows", S.MixTwoRows, S.NoMixTwoRows,
               "the mixed row kernel a row an iteration (for comparisons; with "
               "--mix-order-columns)");
  App.add_flag("--row-ok-known", S.RowOkKnown,
               "CompileOptions::RowOkKnown (experiment): row kernels of a block a row declare "
               "their row to exist");
  App.add_flag("--row-cache-late-peeled", S.RowCacheLatePeeled,
               "CompileOptions::RowCacheLatePeeled (RowCacheLateEpilogue in the peeled "
               "variants only; experiment)");
  App.add_flag("--no-row-cache-stage-inputs", S.NoRowCacheStageInputs,
               "CompileOptions::RowCacheStageInputs = false (a row's register cache counts "
               "every row input, a norm's weight too, for comparisons)");
  App.add_flag("--no-joint-reduce", S.NoJointReduce,
               "CompileOptions::JointReduce = false (three barriers per block reduction, for "
               "comparisons)");
  App.add_flag("--no-online-softmax", S.NoOnlineSoftmax,
               "CompileOptions::RowOnlineSoftmax = false (max then sum, for comparisons)");
  App.add_flag("--l2-hints", S.RowL2Hints,
               "CompileOptions::RowL2Hints (rows re-read per stage, for comparisons)");
  App.add_flag("--stream-loads", S.StreamLoads,
               "CompileOptions::StreamLoads (inputs read once loaded with evict_first)");
  App.add_flag("--no-stream-read-only-rows", S.NoStreamReadOnlyRows,
               "CompileOptions::StreamReadOnlyRows = false (rows with per-row outputs load "
               "plainly at every row count, for comparisons)");
  App.add_option("--row-blocks-per-sm", S.RowBlocksPerSm,
                 "CompileOptions::RowBlocksPerSm (rows re-read per stage, for comparisons)");
  App.add_flag("--row-clusters", S.RowClusters,
               "CompileOptions::RowClusters (opt-in schedule, for comparisons)");
  App.add_flag("--row-clusters-aligned", S.ClustersAligned,
               "CompileOptions::RowClustersAligned = true, the default (the flag is kept "
               "for the recorded commands)");
  App.add_flag("--no-row-clusters-aligned", S.NoClustersAligned,
               "CompileOptions::RowClustersAligned = false (long re-read rows: no cluster "
               "split's aligned variant for aligned pointers, for comparisons)");
  App.add_flag("--row-clusters-aligned-over-wide", S.ClustersAlignedOverWide,
               "CompileOptions::RowClustersAlignedOverWide (experiment: the aligned split runs "
               "in place of the wide form's aligned variant too)");
  App.add_flag("--no-row-clusters-peeled", S.NoClustersPeeled,
               "CompileOptions::RowClustersPeeled = false (the split's aligned variant only; "
               "f32 offset and odd rows re-read, for comparisons)");
  addRuleFlags(App, "row-clusters-peeled-narrow", "RowClustersPeeledNarrow",
               S.ClustersPeeledNarrow, S.NoClustersPeeledNarrow,
               "16-bit rows split at their aligned variant only (for comparisons)");
  addRuleFlags(App, "row-clusters-peeled-bound", "RowClustersPeeledBound", S.ClustersPeeledBound,
               S.NoClustersPeeledBound, "the split's peeled variants unbounded (for comparisons)");
  addRuleFlags(App, "peeled-same-phase", "PeeledSamePhase", S.PeeledSamePhase,
               S.NoPeeledSamePhase,
               "the input-led peeled variant checks every other tensor (for comparisons)");
  App.add_flag("--no-row-clusters-two-blocks", S.NoClustersTwoBlocks,
               "CompileOptions::RowClustersTwoBlocks = false (the split over the fewest "
               "blocks that keep the row, for comparisons)");
  addRuleFlags(App, "row-clusters-stage-inputs", "RowClustersStageInputs", S.ClustersStageInputs,
               S.NoClustersStageInputs,
               "a split past the stage bound is not retried keeping only its stages' inputs "
               "(for comparisons)");
  addRuleFlags(App, "row-clusters-values", "RowClustersValues", S.ClustersValues,
               S.NoClustersValues,
               "the aligned split keeps its inputs, not the values covering them (for "
               "comparisons)");
  App.add_flag("--row-cluster-pairs", S.ClusterPairs,
               "CompileOptions::RowClusterPairs (experiment: a split row's Welford and "
               "online-softmax pairs in one stage, combined across the cluster)");
  App.add_option("--row-cluster", S.RowCluster,
                 "CompileOptions::RowCluster (experiment): split every static row over this "
                 "many blocks of a cluster (1, 2, 4 or 8; 0: the rule)")
      ->check(CLI::IsMember({0, 1, 2, 4, 8}));
}

CompileOptions scheduleCompileOptions(const ScheduleFlags &S) {
  CompileOptions CO;
  CO.RowSharedMemory = S.RowShared;
  CO.RowClusters = S.RowClusters;
  if (S.ClustersAligned || S.NoClustersAligned)
    CO.RowClustersAligned = S.ClustersAligned;
  CO.RowClustersAlignedOverWide = S.ClustersAlignedOverWide;
  CO.RowClustersPeeled = !S.NoClustersPeeled;
  CO.RowClustersPeeledNarrow = !S.NoClustersPeeledNarrow;
  CO.RowClustersPeeledBound = !S.NoClustersPeeledBound;
  CO.PeeledSamePhase = !S.NoPeeledSamePhase;
  CO.RowClustersTwoBlocks = !S.NoClustersTwoBlocks;
  CO.RowClustersStageInputs = !S.NoClustersStageInputs;
  CO.RowClustersValues = !S.NoClustersValues;
  CO.RowThreadsAtLaunch = S.ThreadsAtLaunch;
  CO.RowClusterPairs = S.ClusterPairs;
  if (S.RowCluster > 0)
    CO.RowCluster = static_cast<unsigned>(S.RowCluster);
  CO.RowL2Hints = S.RowL2Hints;
  CO.StreamLoads = S.StreamLoads;
  CO.StreamReadOnlyRows = !S.NoStreamReadOnlyRows;
  CO.RowReadBack = !S.NoReadBack;
  CO.RowOnlineSoftmax = !S.NoOnlineSoftmax;
  if (S.Welford || S.NoWelford)
    CO.RowWelford = S.Welford;
  CO.RowFewRowsClusters = !S.NoFewRows;
  CO.ConcatRowGroups = !S.NoConcatGroups;
  CO.AlignedRowCopy = S.AlignedRowCopy;
  CO.JointReduce = !S.NoJointReduce;
  CO.RowWideRows = !S.NoWideRows;
  CO.RowCacheStageInputs = !S.NoRowCacheStageInputs;
  CO.RowCacheLateEpilogue = S.RowCacheLateEpilogue;
  CO.RowCacheLatePeeled = S.RowCacheLatePeeled;
  CO.MixOrderColumns = !S.NoMixOrderColumns;
  CO.MixMaxGroups = S.MixMaxGroups;
  CO.MixRowsKnown = S.MixRowsKnown;
  CO.MixMinRows = S.MixMinRows;
  CO.MixMinGroupRows = S.MixMinGroupRows;
  CO.MixBlockRows = S.MixBlockRows;
  CO.MixThreadsRoundUp = S.MixThreadsRoundUp;
  CO.MixPhaseSlots = S.MixPhaseSlots;
  CO.MixRowStartChunks = !S.NoMixRowStartChunks;
  CO.RowStartChunks = S.RowStartChunks;
  CO.MixCombineBatches = !S.NoMixCombineBatches;
  CO.MixPeeledBound = !S.NoMixPeeledBound;
  CO.MixMaxSharedBytes = S.MixMaxSharedBytes;
  CO.MixTwoRows = !S.NoMixTwoRows;
  CO.MixMinColumns = S.MixMinColumns;
  CO.RowOkKnown = S.RowOkKnown;
  CO.ColumnCombineUnroll = S.ColumnCombineUnroll;
  CO.MixCombineUnroll = S.MixCombineUnroll;
  CO.RowCacheWideThreads = !S.NoRowCacheWideThreads;
  CO.RowCacheReadOnce = !S.NoRowCacheReadOnce;
  CO.GroupStores = !S.NoGroupStores;
  CO.PieceWrapChunks = !S.NoPieceWrapChunks;
  CO.RowPhaseLoop = S.RowPhaseLoop;
  CO.PrefixCoords = !S.NoPrefixCoords;
  CO.OutputLedVariant = !S.NoOutputLedVariant;
  CO.WholeChunkPaths = S.WholeChunkPaths;
  CO.FlatRowBroadcast = !S.NoFlatRowBroadcast;
  CO.FlatTailThreads = !S.NoFlatTailThreads;
  CO.PeeledRowOccupancy = !S.NoPeeledRowOccupancy;
  CO.RowCacheValues = !S.NoRowCacheValues;
  CO.RowStatsSetWidth = S.RowStatsWidth;
  if (S.DynamicRowThreads > 0)
    CO.RowDynamicThreads = S.DynamicRowThreads;
  if (S.RereadThreads > 0)
    CO.RowRereadThreads = S.RereadThreads;
  if (S.RowChunksPerThread > 0)
    CO.RowChunksPerThread = S.RowChunksPerThread;
  if (S.RowBlocksPerSm > 0)
    CO.RowBlocksPerSm = S.RowBlocksPerSm;
  return CO;
}

} // namespace jitfuse::bench
