//===- codegen/KernelWriter.h - one variant of one kernel -------*- C++ -*-===//
//
// Internal to codegen: the kernel skeletons' shared state. Codegen.cpp holds
// the signature, the element-wise and full-reduction skeletons and the
// stores; RowKernel.cpp the row skeleton (stages, register caches, peeled
// rows, clusters), RowCombine.cpp the end of each of its stages.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Codegen.h"
#include "codegen/Emitter.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace jitfuse::codegen {

/// A paired reduction's accumulator type, jf_wf<T> (Welford's count, mean
/// and M2) or jf_ms<T> (online softmax's max and rescaled sum), and its
/// identity (codegen/RowCombine.cpp).
std::string pairType(bool Welford, DType T);
std::string pairIdentity(bool Welford, DType T);

/// Writes one variant of one kernel.
class KernelWriter {
public:
  /// \p OutputLed: the peeled variant whose chunks follow the first output
  /// (KernelPlan::OutputLedVariant; KernelWriter::leadPhase).
  KernelWriter(const Graph &G, const KernelPlan &P, int Vec, bool Peeled, bool OutputLed = false)
      : G(G), P(P), Vec(Vec), E(G, P, Vec, Peeled), Peel(Peeled && Vec > 1),
        OutputLed(OutputLed) {}

  std::string write();

private:
  std::string signature();
  std::string threads() const {
    return std::to_string(P.ThreadsX * P.RowsPerBlock);
  }
  std::string rowsExpr() const;
  void outerCoords(const std::string &Row);
  void storeOutputs(bool Vector, const std::string &Base);
  /// Element-wise chunks: the wide loads of the inputs (and of slices of an
  /// input, as a merged gate_up's halves) read at the chunk's own
  /// coordinates, all before any arithmetic. Emitted at first use, a
  /// load that came after an IEEE division (whose slow path is a call)
  /// waited for it: silu(g)*u issued u's load after g's value and its first
  /// quotient, two memory latencies a thread instead of one (SASS,
  /// BENCHMARKS.md schedule log).
  void hoistInputLoads();
  /// storeOutputs of output O, declared strided: at its strides.
  void storeStrided(size_t O, bool Vector);
  /// Output O's Vec lanes as one wide store at element \p Base.
  void storeWide(size_t O, const std::string &Base);
  /// The storage-type expression of whole-domain output N at the current
  /// lane.
  std::string storedValue(NodeId N);
  void elementwiseBody();
  /// One chunk of Vec elements at `chunk`; \p Exit leaves when it is past
  /// the end ("return", or "break" inside the scalar variant's loop; "" when
  /// the caller knows the chunk is inside).
  void elementwiseChunk(llvm::StringRef Exit);
  /// elementwiseChunk of a flat aligned variant under FlatTailThreads.
  void flatChunkOrTailElement(llvm::StringRef Exit);
  /// FlatRowBroadcast: `jf_m0`, the column of `col`.
  void rowBroadcastColumn();
  /// PieceWrapChunks (peeled rows of a concat of equal pieces): a thread's
  /// row, slot, lead phase jf_o, wrapped lanes jf_w and `col`, then its
  /// chunk of every piece (pieceWrapPieces), in a copy for tensors at the
  /// lead's phase when there are others (pieceWrapAlignedFlag, jf_al).
  void pieceWrapRow(llvm::StringRef Exit, const std::string &L);
  void pieceWrapPieces(const std::string &Base, ChunkKind Kind);
  bool pieceWrapAlignedFlag(const std::string &Base);
  void rowBody();
  void fullBody();
  /// Peeled kernels: `const int jf_off`, the lead tensor's element phase.
  void leadPhase();
  /// Peeled kernels: the expression of the lead tensor's element phase;
  /// \p LeadInput, when given, gets the lead's input index if an input
  /// leads (leadPhase makes it the emitter's lead).
  std::string leadPhaseExpr(int *LeadInput = nullptr) const;
  /// Peeled kernels: `jf_lo`/`jf_hi`, the lanes of the chunk at `col` inside
  /// [0, \p Extent).
  void chunkLanes(const std::string &Extent);
  /// Accumulates lane values into a reduction, masked in peeled kernels.
  void accumulate(const std::string &Acc, Op Kind, const std::string &V);
  /// Iterations of a static row loop over the row's chunks (a peeled row's
  /// whole chunks are never more).
  int64_t staticRowIters() const;
  /// The guard prefix "j < S || " of a static row loop whose first S
  /// iterations lie wholly among the row's first \p MinChunks chunks (and
  /// need no check), or empty.
  std::string inRangeIters(int64_t MinChunks) const;
  /// The row chunk index of the chunk loop's iteration j for this thread.
  std::string rowChunk() const;
  /// The unroll pragma of a loop over a run-time row, or nothing.
  void dynamicLoopUnroll();
  /// Threads a row in a row kernel's loops: ThreadsX, or with
  /// KernelPlan::ThreadsAtLaunch the launch's (`jf_nt`, blockDim.x).
  std::string rowThreads() const {
    return P.ThreadsAtLaunch ? "jf_nt" : std::to_string(P.ThreadsX);
  }
  /// Row kernels: "" or the condition that this block owns the row's
  /// head/tail elements and per-row outputs (rank 0 of a split row).
  std::string rankZero(llvm::StringRef Then) const {
    return P.ClusterX > 1 ? "jf_rank == 0 && " + Then.str() : Then.str();
  }
  /// A concat over the whole domain row whose pieces are multiples of Vec:
  /// the element-wise skeleton branches once per chunk on its operand.
  bool isHoistableConcat(NodeId N) const {
    const Node &Nd = G.node(N);
    if (Vec == 1 || Nd.Kind != Op::Concat || P.Flat ||
        llvm::ArrayRef<Dim>(Nd.Dims) != llvm::ArrayRef<Dim>(P.Domain))
      return false;
    for (NodeId O : Nd.Operands)
      if (G.node(O).Dims.back().Size % Vec != 0)
        return false;
    return true;
  }
  bool hoistableConcat() const {
    for (NodeId N : P.Nodes)
      if (isHoistableConcat(N))
        return true;
    return false;
  }
  void lanes(bool Vector, const std::function<void(int)> &PerLane);
  /// Stores the outputs of the chunk at `col` (element \p Base): once per
  /// piece of a hoistable concat, so each branch loads its piece's vectors.
  void storeChunk(const std::string &Base);
  /// Whether output \p N holds the domain's elements (a relabeling of it),
  /// stored by the row or element loop. Not an empty output: an empty row
  /// domain holds as many elements as its row reductions (0 = 0), which are
  /// no elements of the row (found by fuzz_graph_builder: [3, 5, 0] summed
  /// over axis 1, an internal error); an empty output stores nothing. Nor
  /// a mixed kernel's column reduction: over one row ([1, C] reduced over
  /// axis 0) it holds as many elements as the domain, but the combining
  /// blocks store it (found by the random graphs: an internal error).
  bool domainOutput(NodeId N) const {
    return sameNumel(G.node(N).Dims, P.Domain) && !emptyShape(G.node(N).Dims) &&
           !llvm::is_contained(P.MixColumns, N);
  }
  /// A flat domain's last, partial chunk (`col` to `n`), element by
  /// element: \p Body emitted once with ScalarPart set, `col` each element.
  void tailElements(const std::function<void()> &Body);
  void flatTail(const std::string &N, const std::function<void(int)> &PerLane);
  std::string numelExpr() const;
  /// Loops over the thread's chunks of the row; peeled rows then over their
  /// head and tail elements, one per thread, unless \p OwnChunks (the
  /// register cache holds the whole chunks only).
  void rowLoop(const std::function<void()> &Body, bool OwnChunks = false);
  void rowStages(const std::map<NodeId, int> &Stages);
  /// The end of a row stage (codegen/RowCombine.cpp): the accumulators of
  /// its reductions \p Reds combined over the block, then over the
  /// cluster's blocks in rank order; each reduction's row value set.
  void rowStageResults(llvm::ArrayRef<NodeId> Reds);
  /// Elementwise with KernelPlan::TransposeNode (codegen/TransposeKernel.cpp).
  void transposeBody();
  void transposeVectorBody();
  void epilogueValues();
  /// KernelPlan::MixColumns (codegen/MixColumns.cpp): the block's ticket,
  /// the combining blocks' body, the group's accumulators and its row loop
  /// (opened); each chunk's terms; the group's partials (after the loop).
  void mixBegin();
  void mixAdds();
  void mixEnd();
  void mixCombine();
  /// The accumulator slot of column \p Col (an expression), and the slots
  /// each lane's columns take (ceil(C / Vec), a reduction's Vec times that).
  std::string mixSlot(const std::string &Col) const;
  int64_t mixLaneSlots() const;
  /// The aligned variant's slots in 16-byte groups (mixAdds' read-modify-
  /// writes of 4 columns at once): 4-byte accumulators, Vec a multiple of 4.
  bool mixVecSlots() const;
  /// KernelPlan::MixPhaseSlots in a peeled variant of rows of whole chunks
  /// (C % Vec == 0: every row at the lead's phase): column col's slot is
  /// that of column (col + jf_mph) % C, jf_mph the lead's phase, so a whole
  /// chunk's lanes take the aligned variant's slots (constant offsets from
  /// one index) and the head and tail elements share slot chunk 0.
  bool mixPhaseSlots() const;
  /// \p Col (an expression of a column) as the slot's column: itself, or
  /// under mixPhaseSlots its shift by the lead's phase, modulo C.
  std::string mixSlotColumn(const std::string &Col) const;
  /// KernelPlan::MixTwoRows, in the variants that apply it: the aligned
  /// one, and the peeled ones of row-start chunks (a lead-aligned row's
  /// chunks move with its phase).
  bool twoRows() const { return P.MixTwoRows && (!Peel || rowStartChunks()); }
  /// KernelPlan::RowStartChunks in a peeled variant: every row's chunks
  /// at its start (jf_h = 0), no lead tensor, so a thread's chunk is the
  /// same columns every row.
  bool rowStartChunks() const { return Peel && P.RowStartChunks && Vec > 1; }
  /// A mixed row kernel of several rows a block (KernelPlan::RowsPerBlock >
  /// 1, threadIdx.y the row): each row its own accumulators (mixAcc) and
  /// block reductions' scratch (rowScratch); the block's threads in one
  /// numbering for what the block does as a whole (mixTid, mixThreads).
  bool mixSubRows() const { return !P.MixColumns.empty() && P.RowsPerBlock > 1; }
  std::string mixAcc() const { return mixSubRows() ? "jf_mrow" : "jf_macc"; }
  std::string mixTid() const { return mixSubRows() ? "jf_tid" : "threadIdx.x"; }
  int mixThreads() const { return P.ThreadsX * P.RowsPerBlock; }
  /// Block reduction \p N's scratch for this thread's row.
  std::string rowScratch(NodeId N) const;
  /// Emits \p Body, a row's code; with twoRows() then its copy for the
  /// second row (row_1, its own accumulators, kept chunks and scratch).
  void rowSegment(const std::function<void()> &Body);
  /// The second row's copy of the text emitted since \p Mark (twoRows()).
  void secondRowFrom(size_t Mark);

  const Graph &G;
  const KernelPlan &P;
  int Vec;
  Emitter E;
  bool Peel;
  bool OutputLed;
  /// Peeled rows: emitting the head/tail elements (one lane, scalar
  /// accesses) rather than a chunk.
  bool ScalarPart = false;
  /// Cached rows: registers holding a thread's head/tail element of each
  /// input (element expression -> variable), loaded with the chunks.
  std::map<std::string, std::string> ScalarCache;
  /// Peeled rows with KernelPlan::AlignedRowCopy: the kernel computed
  /// jf_al, and rowLoop emits each chunk loop twice, plainly wide for the
  /// accesses at AlignedAddrs when jf_al holds.
  bool AlignedCopy = false;
  std::set<std::string> AlignedAddrs;
  /// PieceWrapChunks: the current chunk's stores, one an output and piece
  /// (piece order), made together by pieceWrapPieces.
  struct WrapStore {
    size_t Output;
    std::string Type, Addr, Value;
    bool Aligned;
  };
  std::vector<WrapStore> WrapStores;
  /// Emits jf_al from the accesses a dry run of the row's loops would
  /// shift or split (KernelPlan::AlignedRowCopy); sets AlignedCopy.
  void alignedRowFlag(const std::map<NodeId, int> &Stages);
  /// Values of P.CachedValues not yet stored by a stage's loop.
  std::vector<NodeId> KeepPending;
  /// storeOutputs: which outputs this loop stores (KernelPlan::RowReadBack:
  /// the read-back outputs in the first loop, the others in the last);
  /// empty: all.
  std::vector<bool> StoreOnly;
  /// KernelPlan::RowPairs: the pair whose First is \p N, or null.
  const RowPair *pairOf(NodeId N) const {
    for (const RowPair &RP : P.RowPairs)
      if (RP.First == N)
        return &RP;
    return nullptr;
  }
  /// Whether \p N is a pair's Second (reduced with its First).
  bool pairSecond(NodeId N) const {
    return llvm::any_of(P.RowPairs, [&](const RowPair &RP) { return RP.Second == N; });
  }
  /// StoreOnly for the read-back outputs (\p Back) or all the others.
  std::vector<bool> readBackMask(bool Back) const {
    std::vector<bool> M(P.Outputs.size(), !Back);
    for (unsigned O : P.RowReadBack)
      M[O] = Back;
    return M;
  }
  /// Emits \p Body for the chunk at `col`: once for a whole chunk (no lane
  /// checks: the common case, kept free of per-lane selects that made long
  /// bf16 rows issue-bound) and once for a partial one (guarded lanes).
  /// \p MayBePartial: a static condition (on the unrolled j) outside which
  /// no chunk is partial, so the partial copy folds away there.
  void wholeOrPartial(const std::function<void()> &Body,
                      const std::string &MayBePartial = "true");
};

} // namespace jitfuse::codegen
