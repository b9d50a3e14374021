//===- bench/SweepSchedule.h - The benchmarks' schedule flags ---*- C++ -*-===//
//
// The CompileOptions a sweep or benchmark run compares (opt-in schedules,
// experiments and the defaults turned off), their command-line flags and the
// CompileOptions they give (jitfuse_sweep and jitfuse_bench). One struct,
// one flag table, one mapping: a new experiment adds a field, its flag and
// its line here, not in the drivers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "driver/Compiler.h"

#include <CLI/CLI.hpp>

namespace jitfuse::bench {

struct ScheduleFlags {
  /// CompileOptions for same-binary comparisons of opt-in schedules.
  int RowCluster = 0;
  bool ClustersAligned = false, NoClustersAligned = false, ClustersAlignedOverWide = false;
  bool NoClustersPeeled = false, NoClustersTwoBlocks = false, ClusterPairs = false;
  bool ClustersPeeledNarrow = false, ClustersPeeledBound = false, PeeledSamePhase = false;
  bool NoClustersPeeledNarrow = false, NoClustersPeeledBound = false, NoPeeledSamePhase = false;
  bool ClustersStageInputs = false, NoClustersStageInputs = false;
  bool ClustersValues = false, NoClustersValues = false;
  bool ThreadsAtLaunch = false;
  bool RowShared = false, RowClusters = false, RowL2Hints = false, StreamLoads = false,
       NoStreamReadOnlyRows = false;
  unsigned RowBlocksPerSm = 0;
  unsigned RereadThreads = 0;
  unsigned DynamicRowThreads = 0;
  unsigned RowChunksPerThread = 0;
  bool NoFewRows = false;
  bool NoConcatGroups = false;
  bool AlignedRowCopy = false;
  bool NoJointReduce = false;
  bool NoWideRows = false;
  bool NoRowCacheStageInputs = false;
  bool RowCacheLateEpilogue = false;
  bool RowCacheLatePeeled = false;
  bool MixOrderColumns = false, NoMixOrderColumns = false;
  int64_t MixMaxGroups = 0;
  bool MixRowsKnown = false;
  int64_t MixMinRows = -1;
  int64_t MixMinGroupRows = 0;
  int64_t MixBlockRows = 0;
  bool MixThreadsRoundUp = false;
  bool MixPhaseSlots = false;
  bool MixRowStartChunks = false, NoMixRowStartChunks = false;
  bool RowStartChunks = false;
  bool NoMixCombineBatches = false;
  bool NoMixPeeledBound = false;
  int64_t MixMaxSharedBytes = 0;
  bool MixTwoRows = false, NoMixTwoRows = false;
  int64_t MixMinColumns = 0;
  bool RowOkKnown = false;
  int ColumnCombineUnroll = 0;
  int MixCombineUnroll = 0;
  bool NoRowCacheWideThreads = false;
  bool NoRowCacheReadOnce = false;
  bool NoGroupStores = false;
  bool NoPieceWrapChunks = false;
  bool RowPhaseLoop = false;
  bool NoPrefixCoords = false;
  bool NoOutputLedVariant = false;
  bool WholeChunkPaths = false;
  bool NoFlatRowBroadcast = false;
  bool NoPeeledRowOccupancy = false;
  bool NoFlatTailThreads = false;
  bool NoRowCacheValues = false;
  bool RowStatsWidth = false;
  bool NoReadBack = false, NoOnlineSoftmax = false, Welford = false, NoWelford = false;
};

/// Adds the flags of \p S to \p App (their names are the sweep's --help).
void addScheduleFlags(CLI::App &App, ScheduleFlags &S);

/// The CompileOptions \p S selects (every other option its default).
CompileOptions scheduleCompileOptions(const ScheduleFlags &S);

} // namespace jitfuse::bench
