//===- tests/GraphCheck.h - fused vs unfused vs reference -------*- C++ -*-===//
//
// The one oracle loop of the GPU tier: compile a graph fused and unfused
// (NVRTC runs everywhere, so codegen bugs show on CPU-only machines too),
// and where a GPU exists run both on fresh random inputs with poisoned
// outputs and compare every output to the fp64 reference interpreter.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "driver/Compiler.h"
#include "exec/HostRun.h"
#include "reference/Interpreter.h"
#include "support/Error.h"

#include <random>
#include <string>

namespace jitfuse::test {

/// True when a CUDA device is present; otherwise prints one line saying why
/// the GPU part is skipped.
bool haveGpu();

/// A Compiler whose cache lives in a per-process temp directory.
Compiler &testCompiler();

/// The generated program after the device helpers it starts with
/// (codegen/device/jitfuse_device.cuh): the kernels alone, for tests of
/// what they call.
std::string kernelSource(const Executable &E);

/// The text of the kernel named \p Name in \p Kernels (kernelSource), its
/// first variant on, or of the one variant \p Name names ("jf_k0_mul_v8"):
/// from its signature to the next kernel's; "" if absent.
std::string kernelText(const std::string &Kernels, const std::string &Name);

/// Fresh seed per check, printed on failure.
std::mt19937_64 &rng();

struct CheckOptions {
  bool Fused = true;
  bool Unfused = true;
  unsigned MisalignElems = 0;
  /// Per-tensor offsets (HostRunOptions::MisalignEach).
  std::vector<unsigned> MisalignEach;
  /// CompileOptions::PeelAlignment (false: the ladder of vector variants).
  bool Peel = true;
  /// Inject NaN/+Inf/-Inf into float inputs.
  bool SpecialValues = false;
  double Lo = -2, Hi = 2;
  /// Extra factor on the documented tolerance (1 = the rule as written).
  double TolScale = 1;
  /// CompileOptions::RowClusters.
  bool RowClusters = false;
  /// CompileOptions::RowClustersAligned (the default) and
  /// RowClustersAlignedOverWide.
  bool RowClustersAligned = true;
  bool RowClustersAlignedOverWide = false;
  /// CompileOptions::RowClustersPeeled and RowClustersTwoBlocks.
  bool RowClustersPeeled = true, RowClustersTwoBlocks = true;
  /// CompileOptions::RowClusterPairs.
  bool RowClusterPairs = false;
  /// CompileOptions::RowSharedMemory.
  bool RowShared = false;
  /// CompileOptions::RowL2Hints and RowBlocksPerSm (0: unset).
  bool RowL2Hints = false;
  unsigned RowBlocksPerSm = 0;
  /// CompileOptions::RowWideRows.
  bool WideRows = true;
  /// CompileOptions::RowCacheStageInputs.
  bool RowCacheStageInputs = true;
  /// CompileOptions::RowCacheWideThreads.
  bool RowCacheWideThreads = true;
  /// CompileOptions::PrefixCoords.
  bool PrefixCoords = true;
  /// CompileOptions::RowCacheReadOnce.
  bool RowCacheReadOnce = true;
  /// CompileOptions::GroupStores.
  bool GroupStores = true;
  /// CompileOptions::PieceWrapChunks.
  bool PieceWrapChunks = true;
  /// CompileOptions::RowPhaseLoop.
  bool RowPhaseLoop = false;
  /// CompileOptions::OutputLedVariant.
  bool OutputLedVariant = true;
  /// CompileOptions::FullReducePrologueOutputs.
  bool FullReducePrologueOutputs = true;
  /// CompileOptions::ColumnReduceEpilogue.
  bool ColumnReduceEpilogue = true;
  /// CompileOptions::FullReduceEpilogue.
  bool FullReduceEpilogue = true;
  /// CompileOptions::RecomputeStoredValues.
  bool RecomputeStoredValues = true;
  /// CompileOptions::SiblingColumnReductions.
  bool SiblingColumnReductions = true;
  /// CompileOptions::ColumnReducePrologueOutputs.
  bool ColumnReducePrologueOutputs = true;
  /// CompileOptions::MixOrderColumns (its default).
  bool MixOrderColumns = true;
  /// CompileOptions::MixRowsKnown.
  bool MixRowsKnown = false;
  /// CompileOptions::MixTwoRows (its default).
  bool MixTwoRows = true;
  /// CompileOptions::MixMinRows (its default; 0: the mixed kernel at any
  /// rows, for its own tests).
  int64_t MixMinRows = -1;
  /// CompileOptions::MixMinGroupRows.
  int64_t MixMinGroupRows = 0;
  /// CompileOptions::MixBlockRows.
  int64_t MixBlockRows = 0;
  /// CompileOptions::MixThreadsRoundUp.
  bool MixThreadsRoundUp = false;
  /// CompileOptions::MixPhaseSlots.
  bool MixPhaseSlots = false;
  /// CompileOptions::MixRowStartChunks (its default).
  bool MixRowStartChunks = true;
  /// CompileOptions::RowStartChunks.
  bool RowStartChunks = false;
  /// CompileOptions::MixPeeledBound.
  bool MixPeeledBound = true;
  /// CompileOptions::MixMinColumns.
  int64_t MixMinColumns = 0;
  /// CompileOptions::MixMaxSharedBytes.
  int64_t MixMaxSharedBytes = 0;
  /// CompileOptions::RowOkKnown.
  bool RowOkKnown = false;
  /// CompileOptions::WholeChunkPaths.
  bool WholeChunkPaths = false;
  /// CompileOptions::FlatRowBroadcast.
  bool FlatRowBroadcast = true;
  /// CompileOptions::FlatTailThreads.
  bool FlatTailThreads = true;
  /// CompileOptions::RowCacheValues.
  bool RowCacheValues = true;
  /// CompileOptions::RowStatsSetWidth.
  bool RowStatsSetWidth = false;
  /// CompileOptions::RowCacheLateEpilogue.
  bool RowCacheLateEpilogue = false;
  /// CompileOptions::RowCacheLatePeeled.
  bool RowCacheLatePeeled = false;
  /// CompileOptions::PeeledRowOccupancy.
  bool PeeledRowOccupancy = true;
  /// CompileOptions::StreamLoads and StreamReadOnlyRows (their defaults).
  bool StreamLoads = false;
  bool StreamReadOnlyRows = true;
  /// CompileOptions::AlignedRowCopy and JointReduce (their defaults).
  bool AlignedRowCopy = false;
  bool JointReduce = true;
  /// CompileOptions::RowOnlineSoftmax and RowWelford (the defaults).
  bool RowOnlineSoftmax = true;
  std::optional<bool> RowWelford;
  /// Expected kernel count of the fused plan, when set.
  int ExpectFusedKernels = -1;
  /// Expected launch count of the fused plan (horizontal fusion), when set.
  int ExpectFusedLaunches = -1;
};

/// Random bindings for every input (values exact in their dtype) and the
/// given scalars/dims.
Bindings randomBindings(const Graph &G, const std::map<std::string, int64_t> &Dims,
                        const std::map<std::string, double> &Scalars,
                        const CheckOptions &Opts = {});

/// Compiles (and on a GPU runs and compares) G; returns the number of
/// outputs compared on the GPU (0 without one). An output element passes
/// the rtol rule (toleranceFor) or, failing it, the reference's per-element
/// error bound (reference/ErrorBound.h), as in the random-graph tier: a sum
/// that cancels to a small result carries the rounding of its terms. On a GPU, a fused plan with
/// horizontal launches is also run with one launch per kernel
/// (CompileOptions::HorizontalFusion off), so each form has the reference
/// as its oracle. Fails the current Catch2
/// test with the mismatch description.
int checkGraph(const Graph &G, const Bindings &B, const CheckOptions &Opts = {});

/// The coarsest float dtype computed on any path into Out. A partition may
/// materialize (round) any computed node at a kernel boundary, and the
/// unfused run rounds them all, so a correct run is only as exact as that.
DType coarsestComputed(const Graph &G, NodeId Out);

/// The random tier's rtol for output Out: toleranceFor the coarsest computed
/// dtype on its path and its longest reduction.
double pathTolerance(const Graph &G, NodeId Out, const std::map<std::string, int64_t> &Dims);

/// The message of the jitfuse::Error \p F throws ("" when it does not
/// throw).
template <typename Fn> std::string errorOf(Fn &&F) {
  try {
    F();
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

} // namespace jitfuse::test
