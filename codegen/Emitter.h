//===- codegen/Emitter.h - values at coordinates, as CUDA statements -*- C++ -*-===//
//
// The Emitter turns "node N at these coordinates" into CUDA statements,
// sharing work (CSE) within a C++ scope and grouping contiguous loads of a
// thread's chunk into one vector load. Kernel skeletons (codegen/Codegen.cpp)
// decide the loops; this file decides the per-element code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/KernelPlan.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace jitfuse::codegen {

/// Where an element sits, in the shape of the node being evaluated (or,
/// when Relabeled, in the kernel's domain: see below).
struct Coords {
  bool Rank0 = false; // the node has one element
  bool Flat = false;  // linear index = Col + lane (every access identity)
  llvm::SmallVector<std::string, 4> Outer; // one expression per dim but last
  bool ColRel = true;  // last coordinate = Col + lane + Off
  int64_t Off = 0;
  /// ColRel: the chunk's first column when it is not the kernel's `col` (a
  /// relabeled chunk whose lanes share their outer coordinates: realCoords);
  /// a multiple of the vector width in the aligned variant.
  std::string ColBase;
  /// The expression lanes count from (ColRel): ColBase, or `col`.
  std::string base() const { return ColBase.empty() ? "col" : ColBase; }
  std::string Last; // the last coordinate when !ColRel
  /// !ColRel: Outer or Last depend on the lane (a reshape or concat of
  /// lane coordinates). Values there are per lane (never shared between
  /// lanes), and loads there are guarded in peeled kernels.
  bool LaneDep = false;
  /// The kernel domain's own coordinates (domainCoords()), applied to a node
  /// of another shape with as many elements: a reshape of the domain lists
  /// the same elements in the same order, so the node's element is the
  /// domain's element of the same linear index (loads keep their vectors).
  /// Operands of the node's own shape keep them; a broadcast operand gets
  /// real coordinates, unflattened from the linear index.
  bool Relabeled = false;
};

/// Peeled kernels: what is known of the chunk being emitted.
enum class ChunkKind {
  Either,  // whole or partial, checked per access (jf_load_chunk)
  Whole,   // all lanes inside: no lane checks (jf_load_whole)
  Partial, // a row's head or tail: every lane checked (jf_load_part)
};
/// The device helper suffix for accesses of a chunk of kind \p K.
inline const char *chunkSuffix(ChunkKind K) {
  return K == ChunkKind::Whole ? "whole" : K == ChunkKind::Partial ? "part" : "chunk";
}

/// A contiguous load of Vec elements that the row kernel may keep in
/// registers across its stages.
struct RowLoad {
  std::string Key;
  unsigned InputIdx;
  std::string Address; // element offset expression relative to Col
  bool Lead = false;   // the lead input at the domain's coordinates
};

/// A whole chunk's access of a tensor other than the lead that the aligned
/// copy of a peeled row's chunk loop makes plain wide (KernelPlan::
/// AlignedRowCopy): its storage type and its address at `col`.
struct AlignedAccess {
  std::string Type;
  std::string Addr;
};

class Emitter {
public:
  Emitter(const Graph &G, const KernelPlan &P, int Vec, bool Peeled);

  // Output buffer with indentation.
  void line(const std::string &S);
  void open(const std::string &Header); // "header {" and a new CSE scope
  void close(const std::string &Trailer = "");
  std::string &text() { return Body; }
  std::string takeText();

  /// Lane being emitted (0..Vec-1) and whether vector loads are allowed.
  void setLane(int L) { Lane = L; }
  /// Peeled kernels, inside a chunk: the chunk's valid lanes are
  /// [jf_lo, jf_hi), so a per-lane load is guarded (the lane may sit before
  /// the tensor or past its end).
  void setLaneGuard(bool On) { LaneGuard = On; }
  /// Scalar loads read only where \p Cond holds (0 elsewhere): a column
  /// kernel's last tile, whose columns past the row's end compute on zeros
  /// that the identity then replaces. Only a value at the row's own
  /// coordinates (a [R, 1] statistic, inside the tensor with its row) is
  /// read unguarded. Empty: none.
  void setLoadGuard(std::string Cond) { LoadGuard = std::move(Cond); }
  /// Peeled kernels: the chunk kind; Whole also lifts the lane guard, and
  /// the lead tensor's own accesses in a whole chunk are plain wide loads.
  void setChunk(ChunkKind K) { Chunk = K; }
  ChunkKind chunk() const { return Chunk; }
  /// The input (index into P.Inputs) the peeled chunks align to, -1 for
  /// none; with KernelPlan::SamePhasePeeled the tensors of
  /// samePhaseTensors then share its alignment (the input-led variant).
  void setLeadInput(int I);
  /// Whether output \p O's whole chunks at the domain's coordinates are
  /// aligned with the lead's (KernelPlan::SamePhasePeeled).
  bool samePhaseOutput(size_t O) const {
    return llvm::is_contained(SamePhaseOutputs, static_cast<int>(O));
  }
  /// The domain coordinates' column offset (domainCoords().Off): a piece of
  /// a PieceWrapChunks row at col + Off.
  void setDomainOff(int64_t Off) { DomainOff = Off; }
  /// KernelPlan::PieceWrapChunks: lanes below jf_w sit \p Piece columns
  /// after `col` (0: off). Lane columns, chunk loads and stores follow.
  void setPieceWrap(int64_t Piece) { PieceWrap = Piece; }
  int64_t pieceWrap() const { return PieceWrap; }
  /// Peeled row kernels (KernelPlan::AlignedRowCopy): inside the aligned
  /// copy of a chunk loop, a whole chunk's access of another tensor than the
  /// lead whose address is in \p Aligned is a plain wide load or store (the
  /// kernel's jf_al holds only when each of those addresses is aligned);
  /// \p Record, when set, collects every access that would otherwise be
  /// shifted or split. Both null: off.
  void setAlignedCopy(const std::set<std::string> *Aligned, std::vector<AlignedAccess> *Record) {
    AlignedSet = Aligned;
    AlignedRecord = Record;
  }
  /// Whether the whole-chunk access of type \p ST at \p Addr is plain wide
  /// (setAlignedCopy); records it.
  bool alignedWide(const std::string &ST, const std::string &Addr) {
    if (AlignedRecord)
      AlignedRecord->push_back({ST, Addr});
    bool Wide = AlignedSet && AlignedSet->count(Addr);
    AlignedHits += Wide;
    return Wide;
  }
  /// How many accesses alignedWide made plain wide so far.
  unsigned alignedHits() const { return AlignedHits; }
  int leadInput() const { return LeadInput; }
  bool peeled() const { return Peel; }
  void setVectorLoads(bool On) { VectorLoads = On; }
  /// Row kernels re-reading their row (KernelPlan::RowL2Hints) and kernels
  /// streaming data read once (KernelPlan::StreamLoads): the L2 eviction
  /// priority of the wide loads of row-shaped inputs (jf_load's H: 0 none,
  /// 1 evict_last, 2 evict_first); broadcast inputs (a weight every row
  /// reads) keep none.
  void setL2Hint(int H) { L2Hint = H; }
  /// The hint a wide load of a tensor of \p Dims carries now.
  int l2HintFor(llvm::ArrayRef<Dim> Dims) const {
    return sameNumel(Dims, P.Domain) ? L2Hint : 0;
  }
  /// Row kernels: loads matching a key of Cached come from register arrays
  /// indexed by J; every vectorizable load is recorded in Seen.
  void setRowCache(const std::map<std::string, std::string> *C) { Cached = C; }
  const std::map<std::string, std::string> *rowCache() const { return Cached; }
  const std::vector<RowLoad> &seenRowLoads() const { return Seen; }
  /// Peeled rows' head and tail elements: scalar loads over the row
  /// (ColRel) are recorded while recording is on, and read from the
  /// registers of ScalarCache (element expression -> variable) when set.
  void setScalarLoads(bool Record, const std::map<std::string, std::string> *Cache) {
    RecordScalar = Record;
    ScalarCache = Cache;
  }
  struct ScalarLoad {
    std::string Elem; // "in_0[(c0 * 4095 + col)]"
    DType Type;
  };
  const std::vector<ScalarLoad> &seenScalarLoads() const { return SeenScalar; }
  /// Row kernels: per-element values kept in register arrays (indexed by
  /// j, the chunk loop's counter) by an earlier stage; read back at the
  /// domain's own coordinates while active (whole chunks, not a peeled
  /// row's head and tail elements).
  void keepValue(NodeId N, std::string Array) { Kept[N] = std::move(Array); }
  /// Row kernels (KernelPlan::RowReadBack): from now on output N's value at
  /// the domain's own coordinates is read back from its buffer (out_I),
  /// where an earlier loop of this thread stored it, instead of computed
  /// again from the inputs.
  void readBack(NodeId N) { ReadBack.insert(N); }
  void setKeptActive(bool On) { KeptActive = On; }
  /// Whether N's value at C was already emitted in the current scope.
  bool emitted(NodeId N, const Coords &C) const { return !lookup(key(N, C)).empty(); }
  /// Row kernels: reduction results available to later stages.
  void setReduced(NodeId N, std::string Var) { Reduced[N] = {std::move(Var)}; }
  /// One value a lane (a wide transpose tile's row: codegen/TransposeKernel.cpp).
  void setReducedLanes(NodeId N, std::vector<std::string> Lanes) {
    Reduced[N] = std::move(Lanes);
  }
  /// Inside a branch the kernel hoisted per chunk, concat N at the domain's
  /// own coordinates is operand I for every lane (-1: no choice).
  void setConcatChoice(NodeId N, int I) { ConcatChoice = {N, I}; }

  /// The domain coordinates of the current chunk (lane applied later).
  Coords domainCoords() const;
  /// Where node N's element of the current chunk sits: the domain's
  /// coordinates, relabeled when N is a reshape of the domain (a row
  /// kernel's output written back as [N, C, HW]).
  Coords domainCoordsOf(NodeId N) const;
  /// Coordinates of a permute's operand for the permute's element at C.
  Coords permutedCoords(const Node &Nd, const Coords &C) const;
  /// Emits the value of N at C; returns an expression of N's compute type.
  std::string value(NodeId N, const Coords &C);
  /// Whether a loaded element of dtype \p T is converted where it is used
  /// (loadConvert's Pinned) rather than where the compiler would hoist it.
  bool pinConversion(DType T) const;
  /// The linear index of C in shape S (an IndexT expression).
  std::string linearIndex(const Coords &C, llvm::ArrayRef<Dim> S);
  /// The element offset of tensor N's element at C in its buffer: the
  /// linear index in Dims, or through N's strides (C then in N's own
  /// coordinates: ownCoords).
  std::string address(NodeId N, const Coords &C, llvm::ArrayRef<Dim> Dims);
  /// Coordinates of shape S of the element at linear index Lin.
  Coords coordsOfIndex(const std::string &Lin, llvm::ArrayRef<Dim> S) const {
    return unflatten(Lin, S, /*LaneDep=*/false);
  }
  /// Coordinates of N's own shape for C: a flat or relabeled C made real
  /// (per lane).
  Coords ownCoords(NodeId N, const Coords &C);
  /// The stride of dim I of tensor N in memory: declared (Graph::stridesOf)
  /// or contiguous in Dims.
  std::string memStride(NodeId N, llvm::ArrayRef<Dim> Dims, unsigned I) const;
  /// Strided N: whether the aligned variant's chunks of its rows are whole
  /// vectors (a last stride of 1, static outer strides multiples of Vec).
  bool stridedRowsAligned(NodeId N) const;

  std::string dimExpr(const Dim &D) const;
  std::string strideExpr(llvm::ArrayRef<Dim> S, unsigned I) const;
  std::string indexType() const { return P.Index64 ? "long long" : "int"; }
  std::string fresh(const char *Prefix) { return Prefix + std::to_string(Tmp++); }

  int inputIndex(NodeId N) const;
  int outputIndex(NodeId N) const;
  int scalarIndex(NodeId N) const;
  int dimIndex(llvm::StringRef Name) const;
  int vec() const { return Vec; }
  /// Peeled kernels: whether the current lane is inside the domain.
  std::string laneValid() const;

private:
  std::string key(NodeId N, const Coords &C) const;
  std::string lookup(const std::string &K) const;
  void remember(const std::string &K, const std::string &V);
  std::string bind(DType T, const std::string &Expr);
  Coords adjust(const Coords &C, llvm::ArrayRef<Dim> From,
                llvm::ArrayRef<Dim> To) const;
  std::string lastExpr(const Coords &C) const;
  std::string load(NodeId N, const Coords &C);
  /// No tensor: offsets in a contiguous shape (linearIndex).
  static constexpr NodeId NoNode = ~NodeId(0);
  /// FlatRowBroadcast's chunk column (Codegen.cpp elementwiseChunk).
  static constexpr const char *RowBroadcastBase = "jf_m0";
  /// The offset of C's outer coordinates in tensor N's memory of shape S
  /// ("" when all are 0): sum of Outer[I] * memStride(N, S, I).
  std::string outerOffset(const Coords &C, NodeId N, llvm::ArrayRef<Dim> S) const;
  /// The whole element offset: outerOffset plus the last coordinate times
  /// N's last stride (1 when contiguous).
  std::string offsetOf(const Coords &C, NodeId N, llvm::ArrayRef<Dim> S);
  std::string elementwise(NodeId N, const Coords &C);
  std::string concatValue(NodeId N, const Coords &C);
  std::string reshapeValue(NodeId N, const Coords &C);
  /// Whether C is exactly domainCoords() (lane applied later).
  bool isDomainCoords(const Coords &C) const;
  /// Relabeled coordinates as coordinates of shape S: the linear index,
  /// unflattened (per lane).
  Coords realCoords(const Coords &C, llvm::ArrayRef<Dim> S);
  /// Coordinates of operand O of node Nd evaluated at C.
  Coords operandCoords(const Coords &C, const Node &Nd, const Node &O);
  /// Coordinates of shape S of the element at linear index Lin.
  Coords unflatten(const std::string &Lin, llvm::ArrayRef<Dim> S, bool LaneDep) const;

  const Graph &G;
  const KernelPlan &P;
  int Vec;
  int Lane = 0;
  bool Peel;
  bool LaneGuard = false;
  std::string LoadGuard;
  ChunkKind Chunk = ChunkKind::Either;
  int LeadInput = -1;
  std::vector<int> SamePhaseInputs, SamePhaseOutputs; // setLeadInput
  int64_t DomainOff = 0;
  int64_t PieceWrap = 0;
  bool VectorLoads = true;
  int L2Hint = 0;
  int Tmp = 0;
  int Indent = 1;
  std::string Body;
  std::vector<std::map<std::string, std::string>> Scopes;
  const std::map<std::string, std::string> *Cached = nullptr;
  std::vector<RowLoad> Seen;
  std::map<NodeId, std::vector<std::string>> Reduced; // one, or one a lane
  std::map<NodeId, std::string> Kept;
  std::set<NodeId> ReadBack;
  bool RecordScalar = false;
  const std::map<std::string, std::string> *ScalarCache = nullptr;
  std::vector<ScalarLoad> SeenScalar;
  bool KeptActive = true;
  std::pair<NodeId, int> ConcatChoice{0, -1};
  const std::set<std::string> *AlignedSet = nullptr;
  std::vector<AlignedAccess> *AlignedRecord = nullptr;
  unsigned AlignedHits = 0;
};

} // namespace jitfuse::codegen
