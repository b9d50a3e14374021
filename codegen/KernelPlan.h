//===- codegen/KernelPlan.h - what codegen needs to write a kernel -*- C++ -*-===//
//
// A KernelPlan is the scheduler's decision for one cluster: which nodes it
// computes, what it loads and stores, its iteration domain, and the launch
// shape. Codegen is a pure function of (Graph, KernelPlan).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace jitfuse {

enum class KernelKind : uint8_t {
  Elementwise, // Level 1: one thread per chunk of Vec elements
  RowReduce,   // Level 2: a thread group per row, reductions over the last axis
  FullReduce,  // all elements to one value, deterministic two-stage
  ColumnReduce, // axis 0 of [R, C] to [1, C]: threads own columns
};

llvm::StringRef kernelKindName(KernelKind K);

/// Row kernels: the stage of each reduction among \p Nodes (topological
/// order), 0 first: a reduction runs in the stage after every reduction its
/// operand depends on. Codegen emits one loop per stage; the scheduler
/// reads the same numbering to find values later loops need again.
std::map<NodeId, int> reductionStages(const Graph &G, llvm::ArrayRef<NodeId> Nodes);

/// Two row reductions one loop computes together (KernelPlan::RowPairs):
/// online softmax, First = reduce_max(A) and Second = sum(exp(A - First));
/// Welford, First = mean(A) and Second = mean((A - First)^2). Both over the
/// row's last axis, in f32 or f64.
struct RowPair {
  NodeId First = 0, Second = 0;
  bool Welford = false;
};

/// The pairs among \p Nodes: online softmax when \p Online, Welford when
/// \p Welford for means that are not in \p Outputs (Welford's running mean
/// differs from sum / R where an Inf meets a finite value).
std::vector<RowPair> rowPairs(const Graph &G, llvm::ArrayRef<NodeId> Nodes,
                              llvm::ArrayRef<NodeId> Outputs, bool Online, bool Welford);
/// reductionStages with each pair's Second in its First's stage (the later
/// reductions moving up with it).
std::map<NodeId, int> reductionStages(const Graph &G, llvm::ArrayRef<NodeId> Nodes,
                                      llvm::ArrayRef<RowPair> Pairs);
/// How many stages (loops) a reductionStages numbering has.
int stageCount(const std::map<NodeId, int> &Stages);

struct KernelPlan {
  std::string Name; // C identifier prefix; variants append _v<Vec>
  KernelKind Kind = KernelKind::Elementwise;
  std::vector<NodeId> Nodes;   // computed nodes, topological order
  std::vector<NodeId> Inputs;  // tensors read from device memory
  std::vector<NodeId> Outputs; // nodes written to device memory
  std::vector<NodeId> Scalars; // run-time scalar params used
  std::vector<std::string> DynDims; // dynamic dims used by any shape above

  /// Iteration domain. Elementwise/FullReduce: the shape iterated over
  /// (Flat: treated as 1-D because every access is the identity).
  /// RowReduce: [outer..., R], reductions run over R.
  Shape Domain;
  bool Flat = false;
  bool Index64 = false;

  /// Vector widths (elements) compiled, widest first; the runtime runs the
  /// first every pointer's alignment allows, else the last. With Peel the
  /// last is a peeled variant of the same width that serves any alignment
  /// and row length (before it, when the row allows, the aligned one: no
  /// per-chunk checks); without, the ladder of widths down to 1.
  std::vector<int> Vecs = {1};
  /// The last variant aligns its chunks to a lead tensor at run time (a
  /// partial head and tail chunk per range, head and tail elements per row); see codegen/Codegen.cpp and codegen/RowKernel.cpp.
  bool Peel = false;

  /// RowReduce with Peel: the peeled variant is compiled twice, Vecs' last
  /// two entries: led by the first input over the whole domain, then by the
  /// first such output (codegen::peelLeads). The launch runs the second when
  /// the peeled one is picked and the two tensors' phases differ (a sliced
  /// input, aligned outputs: stores at another phase cost more than loads;
  /// CompileOptions::OutputLedVariant).
  bool OutputLedVariant = false;
  /// With OutputLedVariant: the input-led peeled variant assumes every
  /// tensor of samePhaseTensors (codegen/PeelLead.cpp) at the lead input's
  /// phase, and the launch runs the output-led one unless they all are
  /// (CompileOptions::PeeledSamePhase). Cleared for kernels of horizontal
  /// launches, whose shared variants must serve any pointers.
  bool SamePhasePeeled = false;
  /// The first peeled variant's index in Vecs, or Vecs.size() without Peel.
  size_t firstPeeled() const {
    return Peel ? Vecs.size() - 1 - size_t(OutputLedVariant) : Vecs.size();
  }
  bool peeledVariant(size_t I) const { return Peel && I >= firstPeeled(); }
  /// Whether variant \p I is the peeled one led by the output.
  bool outputLedVariant(size_t I) const { return OutputLedVariant && I + 1 == Vecs.size(); }
  /// Elementwise/FullReduce: threads per block. RowReduce: threads per row.
  /// ColumnReduce: threads across a column tile (RowsPerBlock: threads
  /// down each column).
  int ThreadsX = 256;
  /// RowReduce over a row of run-time length (ScheduleOptions::
  /// RowThreadsAtLaunch): the launch picks the threads a row from the run's
  /// row length and rows (launch::dynamicRowThreads); ThreadsX is the most
  /// it picks (the launch bound and the reductions' scratch), and the
  /// kernel's loops and reductions follow blockDim.x.
  bool ThreadsAtLaunch = false;
  /// ColumnReduce: adjacent columns per thread (16 bytes of the widest
  /// input), in every variant; the tile is ThreadsX * ColumnWidth columns.
  int ColumnWidth = 1;
  /// ColumnReduce: the unroll of the last block's loop over the splits'
  /// partials (launch::ColumnCombineUnroll, or CompileOptions::
  /// ColumnCombineUnroll for experiments); a mixed row kernel's combining
  /// blocks, theirs (launch::MixCombineUnroll, or CompileOptions::
  /// MixCombineUnroll).
  int CombineUnroll = 0;
  /// ColumnReduce: reductions the kernel computes (more than one:
  /// SiblingColumnReductions), each with its own partials.
  int ColumnReductions = 1;
  /// RowReduce with FusionOptions::MixOrderColumns (compiler/MixColumns.h):
  /// column reductions (axis 0 of the row domain [R, C]) whose operands the
  /// row kernel computes from its own loads. Not in Nodes; their results
  /// are the last entries of Outputs. Each block sums a group of
  /// consecutive rows' terms per column in shared memory; the launch's last
  /// blocks add the groups' partials in group order (codegen/MixColumns.cpp,
  /// launch::mixGroups).
  std::vector<NodeId> MixColumns;
  /// Bytes of their accumulator type (4: f32, 8: f64 or i64).
  int MixAccBytes = 0;
  /// The most groups of rows (launch::mixGroupsFor the block, or
  /// CompileOptions::MixMaxGroups for experiments).
  int64_t MixMaxGroups = 0;
  /// The fewest rows a group (RowsPerBlock, or CompileOptions::
  /// MixMinGroupRows for experiments): launch::mixRowsPerGroup's MinRows.
  int64_t MixMinGroupRows = 1;
  /// The accumulators exceed launch::MixMaxSharedBytes (CompileOptions::
  /// MixMaxSharedBytes, an experiment): they are the launch's dynamic
  /// shared memory (LaunchRule::dynamicSharedBytes), not a static array.
  bool MixDynamicShared = false;
  /// Every block's row exists, so the row kernel declares rowOk constant:
  /// a block a row (its grid the rows, or the rows x ClusterX;
  /// CompileOptions::RowOkKnown), or a group's rows of a mixed kernel
  /// (CompileOptions::MixRowsKnown).
  bool RowOkKnown = false;
  /// A mixed row kernel's aligned variant takes two rows of its group an
  /// iteration (CompileOptions::MixTwoRows; KernelWriter::rowSegment).
  bool MixTwoRows = false;
  /// A mixed row kernel's peeled variants of rows of whole chunks index
  /// their column accumulators from the column shifted by the lead's phase
  /// (CompileOptions::MixPhaseSlots; KernelWriter::mixPhaseSlots).
  bool MixPhaseSlots = false;
  /// A row kernel's peeled variants keep each row's chunks at the row's
  /// start, every tensor read and written at its own alignment, instead of
  /// aligning them to a lead tensor (CompileOptions::RowStartChunks, and
  /// MixRowStartChunks for a mixed kernel; KernelWriter::rowStartChunks).
  bool RowStartChunks = false;
  /// A mixed row kernel's combining threads load their partials in
  /// batches (CompileOptions::MixCombineBatches; codegen/MixColumns.cpp).
  bool MixCombineBatches = true;
  /// RowReduce: rows per block (ThreadsX * RowsPerBlock <= 1024; > 1 only
  /// when ThreadsX <= 32).
  int RowsPerBlock = 1;
  /// RowReduce: blocks of a thread-block cluster that share each row (1: a
  /// row is one block). A split row's blocks combine their block results
  /// through distributed shared memory, in rank order.
  int ClusterX = 1;
  /// Elementwise by rows: the length of each piece when the domain row is a
  /// concat of equal pieces (RoPE's halves), else 0. When a piece is fewer
  /// chunks than a warp has threads, warps take chunks of one piece from
  /// several rows (codegen::concatRowGroup), so the branch on the piece does
  /// not split a warp.
  int64_t ConcatPiece = 0;
  /// RowReduce with a peeled variant: each chunk loop of that variant has a
  /// second copy with plain wide accesses, run by a warp whose rows have
  /// every chunked tensor at the lead's alignment (jf_al;
  /// CompileOptions::AlignedRowCopy).
  bool AlignedRowCopy = false;
  /// Reshapes of the domain that keep its leading dims keep their
  /// coordinates (Emitter::realCoords; CompileOptions::PrefixCoords).
  bool PrefixCoords = false;
  /// RowReduce, one block a row of more than a warp: the block reductions
  /// of each stage share two barriers (jf_block_partial, jf_block_combine;
  /// CompileOptions::JointReduce).
  bool JointReduce = false;
  /// RowReduce: keep the row's loads in registers between stages.
  bool CacheRow = false;
  /// With CacheRow: the inputs (indices into Inputs) whose loads are kept;
  /// empty: every row load the kernel makes (ScheduleOptions::
  /// RowCacheStageInputs leaves out the inputs only the epilogue reads).
  std::vector<unsigned> RowCacheInputs;
  /// RowCacheInputs were chosen by ScheduleOptions::RowCacheLateEpilogue
  /// (the whole row would fit): WideRows holds the kernel the default rule
  /// makes, for runs of at most SMs rows.
  bool LateEpilogue = false;
  /// ... for the peeled variants only (ScheduleOptions::RowCacheLatePeeled):
  /// the aligned variant keeps every row load, as without LateEpilogue.
  bool LatePeeledOnly = false;
  /// With CacheRow: the row is read once (ScheduleOptions::RowCacheReadOnce):
  /// the cache only puts its loads ahead of the reduction.
  bool CacheReadOnce = false;
  /// With CacheRow: no input load is kept, only CachedValues, which the
  /// first loop computes from the inputs and no later loop reads again
  /// (ScheduleOptions::RowCacheValues).
  bool RowCacheValuesOnly = false;
  /// Elementwise rows whose chunks go piece by piece over a concat
  /// (ConcatPiece, concatRowGroup > 1): misaligned 16-bit outputs are stored
  /// a group of lanes at a time through shuffles (CompileOptions::
  /// GroupStores; peeled variant).
  bool GroupStores = false;
  /// Elementwise rows of a concat of equal pieces (ConcatPiece), peeled
  /// variant: chunks aligned to the lead inside each piece; a thread takes
  /// one whole slot of every piece of its row, and a thread a row the
  /// pieces' first and last elements (KernelWriter::pieceWrapRow). Replaces
  /// GroupStores' row-start chunks (CompileOptions::PieceWrapChunks).
  bool PieceWrapChunks = false;
  /// RowReduce keeping its row in registers, one block a row, peeled
  /// variant: each block loops over rows gridDim.x apart, and loads the
  /// cached inputs broadcast over the rows (a norm's weight) once, before
  /// the loop. The launch makes gridDim.x the blocks resident at once, a
  /// multiple of the vector width, so a block's rows share their phase
  /// (codegen::launch::rowLoopGrid; CompileOptions::RowPhaseLoop).
  bool RowPhaseLoop = false;
  /// Elementwise by rows, peeled, no concat pieces: the chunk body is
  /// emitted for whole chunks and for partial ones (KernelWriter::
  /// wholeOrPartial), so a broadcast 16-bit input at another phase is read
  /// as two aligned blocks, not per lane (CompileOptions::WholeChunkPaths).
  bool WholeChunkPaths = false;
  /// Flat element-wise kernel over a [..., H] domain whose other inputs
  /// are broadcast over its leading dims (a bias [H]): H. Those inputs are
  /// read at the chunk's flat index mod H (jf_m0, jf_load_wrap), so odd rows
  /// keep whole-chunk accesses of the domain's tensors
  /// (ScheduleOptions::FlatRowBroadcast). 0: none.
  int64_t FlatRowBroadcast = 0;
  /// Flat element-wise kernel, aligned variant: the last partial chunk's
  /// elements go to one thread each (ScheduleOptions::FlatTailThreads)
  /// instead of one thread's loop; the launch adds those threads.
  bool FlatTailThreads = false;
  /// RowReduce with CacheRow: per-element values (not loads) computed in one
  /// stage and kept in registers for the later stages and the epilogue
  /// instead of being computed again (softmax's exp), in graph order.
  std::vector<NodeId> CachedValues;
  /// RowReduce without CacheRow: the inputs (indices into Inputs) whose
  /// row loads a thread keeps in dynamic shared memory between stages
  /// instead of reading them again (CompileOptions::RowSharedMemory), and
  /// their element sizes summed (0: none); a block's bytes are
  /// LaunchRule::rowSharedBytes. Each thread reads back only the chunks it
  /// stored, so the stages need no barrier for them.
  std::vector<unsigned> RowSharedInputs;
  int64_t RowSharedElemBytes = 0;
  /// RowReduce re-reading its row from memory in each stage: the wide loads
  /// of row-shaped inputs carry L2 eviction hints, evict_last in the stages
  /// (the next loop reads them again) and evict_first in the last loop
  /// (CompileOptions::RowL2Hints).
  bool RowL2Hints = false;
  /// Elementwise, or RowReduce with CacheRow (each input read once): the
  /// wide loads of inputs of the domain's size carry evict_first
  /// (CompileOptions::StreamLoads).
  bool StreamLoads = false;
  /// RowReduce re-reading its row: whole-row outputs (indices into Outputs)
  /// that need no reduction and that later loops read again. The first loop
  /// stores them and the later loops read them back from the output buffer
  /// (each thread reads only the chunks it stored) instead of reading the
  /// inputs they are computed from (add + RMSNorm: the sum, one tensor,
  /// instead of x and the residual).
  std::vector<unsigned> RowReadBack;
  /// RowReduce re-reading its row: dynamic shared memory a block requests
  /// and never uses, so that fewer blocks share an SM and the rows being
  /// read again fit in L2 (CompileOptions::RowBlocksPerSm); 0: none.
  int64_t RowPadSharedBytes = 0;
  /// RowReduce re-reading its row: reductions computed in pairs in one loop
  /// (rowPairs), so the row is read once less: softmax's max and sum of
  /// exp(x - max), the sum rescaled whenever a thread's running max grows
  /// (CompileOptions::RowOnlineSoftmax), and LayerNorm's mean and variance
  /// with Welford's update (CompileOptions::RowWelford); docs/NUMERICS.md.
  std::vector<RowPair> RowPairs;
  /// Elementwise: a permute that swaps the domain's last two axes (the
  /// operand's innermost axis becomes the second-to-last), or -1. The kernel
  /// then works in tiles of TileDim x TileDim (rows x columns): the permute's
  /// operand is read along its innermost axis into shared memory and the
  /// outputs are written along theirs (codegen/TransposeKernel.cpp).
  int64_t TransposeNode = -1;
  /// CompileOptions::FastMath: f32 sigmoid/silu with __expf/__fdividef.
  bool FastMath = false;
  /// __launch_bounds__'s blocks an SM (0: none given). Rows of
  /// codegen::launch::WideRowThreads (the wide form, a kept row at 1024
  /// threads) set 1: with the thread bound alone ptxas kept 32 registers and
  /// spilled an f32 Welford row.
  int MinBlocksPerSm = 0;
  /// The peeled variant's __launch_bounds__ blocks an SM when larger than
  /// MinBlocksPerSm (ScheduleOptions::PeeledRowOccupancy): 64 registers a
  /// thread at most, the occupancy the aligned variant of a kept row has.
  int PeeledMinBlocksPerSm = 0;
  /// A row kept in registers (CacheRow): the bytes of its loads a thread
  /// (what ScheduleOptions::PeeledOccupancyBytes bounds); 0 otherwise.
  int64_t KeptLoadBytes = 0;
  /// The aligned variants' __launch_bounds__ blocks an SM when larger than
  /// MinBlocksPerSm: a mixed row kernel of one chunk a thread
  /// (codegen::launch::MixResidentThreads).
  int AlignedMinBlocksPerSm = 0;
  /// The scheduler's reasons, one clause per decision, for the plan text.
  std::string Why;
  /// RowReduce of long rows, one block a row: the same kernel with each row
  /// split over a cluster (ClusterX > 1), launched instead when a run's
  /// split blocks are all resident at once (codegen::launch::useFewRows),
  /// where one block a row would leave most SMs idle. Its variants follow this plan's in the
  /// emitted kernel (codegen), in the same order.
  std::shared_ptr<const KernelPlan> FewRows;
  /// RowReduce of long rows re-read per stage, one block of MaxRowThreads
  /// a row (ScheduleOptions::WideRows): the same kernel at
  /// WideRowThreads a row, launched instead when FewRows is not and the
  /// run's rows fit one wave (codegen::launch::useWideRows); or, for a row
  /// the rule gave 4 chunks a thread, the same kernel at 2, launched for
  /// such runs too (compiler/RowForms.cpp). Its variants follow FewRows'
  /// (or this plan's), in the same order.
  std::shared_ptr<const KernelPlan> WideRows;
  /// RowReduce of long rows re-read per stage with a peeled variant
  /// (ScheduleOptions::AlignedClusters): the same kernel with each row
  /// split over the cluster blocks that keep it in registers
  /// (ScheduleOptions::Clusters' plan), of which only the aligned variant
  /// (Vecs' first) is emitted; the launch runs it instead of this plan's
  /// aligned variant when neither FewRows nor WideRows runs. Its peeled
  /// variants lost where the aligned one gained (BENCHMARKS.md, session
  /// 42), so a misaligned or odd row keeps this plan's re-read variant.
  /// Same Vecs and Peel as this plan; its one variant follows WideRows'.
  std::shared_ptr<const KernelPlan> AlignedCluster;
  /// The launch runs AlignedCluster in place of WideRows' aligned variant
  /// too (ScheduleOptions::AlignedClustersOverWide).
  bool AlignedClusterOverWide = false;
  /// With AlignedCluster: every variant of the split, not only the aligned
  /// one, each run in place of the plain form's variant of the same index
  /// (the same pointers pick it) (ScheduleOptions::AlignedClustersPeeled).
  bool AlignedClusterPeeled = false;
  /// The cluster split's variants the kernel carries: none, its aligned
  /// one, or all of them (AlignedClusterPeeled).
  size_t alignedClusterVariants() const {
    return !AlignedCluster ? 0 : AlignedClusterPeeled ? AlignedCluster->Vecs.size() : 1;
  }

  std::string variantName(int Vec, bool Peeled = false, bool OutputLed = false) const {
    return Name + (OutputLed ? "_o" : Peeled ? "_p" : "_v") + std::to_string(Vec);
  }
  /// The name of variant \p I (an index into Vecs).
  std::string variantNameAt(size_t I) const {
    return variantName(Vecs[I], peeledVariant(I), outputLedVariant(I));
  }
};

} // namespace jitfuse
