//===- codegen/Emitter.cpp - values at coordinates, as CUDA statements ----===//
//
// Values at coordinates (loads, element-wise ops, reshapes, concats);
// the index arithmetic behind them is codegen/EmitterCoords.cpp.
//
//===----------------------------------------------------------------------===//
#include "codegen/Emitter.h"
#include "codegen/Codegen.h"

#include "codegen/Spelling.h"
#include "ir/Half.h"
#include "support/Error.h"

#include <fmt/format.h>

namespace jitfuse::codegen {

void Emitter::setLeadInput(int I) {
  LeadInput = I;
  SamePhaseInputs.clear();
  SamePhaseOutputs.clear();
  if (I < 0 || !P.SamePhasePeeled)
    return;
  SamePhaseTensors S = samePhaseTensors(G, P);
  SamePhaseInputs = std::move(S.Inputs);
  SamePhaseOutputs = std::move(S.Outputs);
}

Emitter::Emitter(const Graph &G, const KernelPlan &P, int Vec, bool Peeled)
    : G(G), P(P), Vec(Vec), Peel(Peeled && Vec > 1) {
  Scopes.emplace_back();
}

void Emitter::line(const std::string &S) {
  Body.append(Indent * 2, ' ');
  Body += S;
  Body += '\n';
}

void Emitter::open(const std::string &Header) {
  line(Header + " {");
  ++Indent;
  Scopes.emplace_back();
}

void Emitter::close(const std::string &Trailer) {
  JITFUSE_CHECK(Scopes.size() > 1, "unbalanced scopes");
  --Indent;
  Scopes.pop_back();
  line("}" + Trailer);
}

std::string Emitter::takeText() {
  std::string S = std::move(Body);
  Body.clear();
  return S;
}

int Emitter::inputIndex(NodeId N) const {
  for (size_t I = 0; I < P.Inputs.size(); ++I)
    if (P.Inputs[I] == N)
      return static_cast<int>(I);
  return -1;
}
int Emitter::outputIndex(NodeId N) const {
  for (size_t I = 0; I < P.Outputs.size(); ++I)
    if (P.Outputs[I] == N)
      return static_cast<int>(I);
  return -1;
}
int Emitter::scalarIndex(NodeId N) const {
  for (size_t I = 0; I < P.Scalars.size(); ++I)
    if (P.Scalars[I] == N)
      return static_cast<int>(I);
  return -1;
}
int Emitter::dimIndex(llvm::StringRef Name) const {
  for (size_t I = 0; I < P.DynDims.size(); ++I)
    if (P.DynDims[I] == Name)
      return static_cast<int>(I);
  return -1;
}

std::string Emitter::dimExpr(const Dim &D) const {
  if (D.isDynamic()) {
    llvm::SmallVector<llvm::StringRef, 2> Factors = D.factors();
    std::string Out;
    for (llvm::StringRef F : Factors) {
      int I = dimIndex(F);
      JITFUSE_CHECK(I >= 0, "dynamic dim missing from the plan");
      Out += (Out.empty() ? "d_" : " * d_") + std::to_string(I);
    }
    if (int64_t K = D.scale(); K != 1)
      return "(" + Out + " * " + dimExpr(Dim(K)) + ")";
    return Factors.size() == 1 ? Out : "(" + Out + ")";
  }
  return D.Size > INT32_MAX ? std::to_string(D.Size) + "LL"
                            : std::to_string(D.Size);
}

std::string Emitter::strideExpr(llvm::ArrayRef<Dim> S, unsigned I) const {
  int64_t Static = 1;
  std::string Dyn;
  for (unsigned K = I + 1; K < S.size(); ++K) {
    if (S[K].isDynamic())
      Dyn += (Dyn.empty() ? "" : " * ") + dimExpr(S[K]);
    else
      Static *= S[K].Size;
  }
  if (Dyn.empty())
    return dimExpr(Dim(Static));
  if (Static == 1)
    return "(" + Dyn + ")";
  return "(" + Dyn + " * " + dimExpr(Dim(Static)) + ")";
}

std::string Emitter::laneValid() const {
  if (Lane == 0)
    return "(jf_lo == 0)"; // jf_hi > 0 in every chunk that runs
  return fmt::format("(jf_lo <= {0} && {0} < jf_hi)", Lane);
}

std::string Emitter::lastExpr(const Coords &C) const {
  if (!C.Flat && !C.ColRel)
    return C.Last;
  int64_t Add = Lane + C.Off;
  std::string Base = C.base();
  if (PieceWrap && !C.Flat && C.ColBase.empty())
    Base = fmt::format("(col + ({} < jf_w ? {} : 0))", Lane, PieceWrap);
  if (Add == 0)
    return Base;
  return Add > 0 ? fmt::format("({} + {})", Base, Add)
                 : fmt::format("({} - {})", Base, -Add);
}

std::string Emitter::key(NodeId N, const Coords &C) const {
  std::string K = std::to_string(N) + (C.Relabeled ? "|R" : "|");
  if (C.Rank0)
    return K + "r0";
  if (C.Flat)
    return K + "f" + std::to_string(Lane);
  for (const std::string &O : C.Outer)
    K += O + ",";
  // '#' never occurs in an index expression: a column-relative lane
  // ("#c1") and a last coordinate spelled by a variable ("c1", an outer
  // coordinate moved there by a transpose) must not share a key.
  if (C.ColRel)
    return K + "#c" + (C.ColBase.empty() ? "" : C.ColBase + "+") + std::to_string(Lane + C.Off);
  return K + "#=" + C.Last + (C.LaneDep ? "|l" + std::to_string(Lane) : "");
}

std::string Emitter::lookup(const std::string &K) const {
  for (auto It = Scopes.rbegin(); It != Scopes.rend(); ++It) {
    auto F = It->find(K);
    if (F != It->end())
      return F->second;
  }
  return "";
}

void Emitter::remember(const std::string &K, const std::string &V) {
  Scopes.back()[K] = V;
}

std::string Emitter::bind(DType T, const std::string &Expr) {
  std::string Name = fresh("v");
  line("const " + computeType(T) + " " + Name + " = " + Expr + ";");
  return Name;
}

std::string Emitter::load(NodeId N, const Coords &At) {
  const Node &Nd = G.node(N);
  std::string K = key(N, At);
  if (std::string V = lookup(K); !V.empty())
    return V;
  // A strided tensor is read at its own coordinates: its strides do not
  // follow the domain's linear index.
  bool Strided = !G.stridesOf(N).empty();
  Coords C = Strided ? ownCoords(N, At) : At;
  // Relabeled: the input's element of the domain's linear index.
  llvm::ArrayRef<Dim> Dims = C.Relabeled ? llvm::ArrayRef<Dim>(P.Domain) : Nd.Dims;
  // An input, or an output read back (readBack): its own buffer.
  int Idx = inputIndex(N);
  std::string Param = Idx >= 0 ? "in_" + std::to_string(Idx)
                               : "out_" + std::to_string(outputIndex(N));
  std::string ST = storageType(Nd.Type);
  if (C.Rank0 || staticNumel(Nd.Dims) == std::optional<int64_t>(1)) {
    std::string V = bind(Nd.Type, loadConvert(Nd.Type, Param + "[0]"));
    remember(K, V);
    return V;
  }
  // FlatRowBroadcast: the row vector's Vec elements from column jf_m0, the
  // chunk's flat index mod H (a chunk that crosses a row wraps per lane).
  if (C.ColRel && C.ColBase == RowBroadcastBase) {
    std::string GroupKey = fmt::format("{}|wrap", Param);
    std::string VecVar = lookup(GroupKey);
    if (VecVar.empty()) {
      VecVar = fresh("lv");
      line(fmt::format("const jf_vec<{0}, {1}> {2} = jf_load_wrap<{0}, {1}>({3}, {4}, {5});", ST,
                       Vec, VecVar, Param, RowBroadcastBase, P.FlatRowBroadcast));
      remember(GroupKey, VecVar);
    }
    std::string V =
        bind(Nd.Type, loadConvert(Nd.Type, fmt::format("{}.V[{}]", VecVar, Lane)));
    remember(K, V);
    return V;
  }
  std::string Outer;
  bool Vectorizable = VectorLoads && Vec > 1;
  if (!C.Flat) {
    Outer = outerOffset(C, N, Dims);
    const Dim &Last = Dims.back();
    // A peeled kernel checks each chunk's alignment at run time, so any
    // row-contiguous access may try the wide load; the ladder's variants
    // need it aligned for every row.
    bool RowsAligned = Strided ? stridedRowsAligned(N)
                               : !Last.isDynamic() && Last.Size % Vec == 0;
    Vectorizable = Vectorizable && C.ColRel &&
                   (!Strided || G.stridesOf(N).back().isStatic(1)) &&
                   (Peel || (C.Off % Vec == 0 && (Outer.empty() || RowsAligned)));
  }
  if (!Vectorizable) {
    std::string Addr = address(N, C, Dims);
    std::string Elem = Param + "[" + Addr + "]";
    // An address that is the same for every lane (a row's broadcast value)
    // is inside the tensor whenever the row is, and its value is shared by
    // the lanes: only lane addresses are guarded.
    bool LaneFree = !C.Flat && !C.ColRel && !C.LaneDep;
    // LoadGuard: only an element of the row's own coordinates (a [R, 1]
    // statistic) is left unguarded; an address that may follow the column
    // in any other way (a relabeled or permuted one) is read under it.
    auto RowOnly = [&] {
      Coords D = domainCoords();
      return !C.Flat && !C.ColRel && !C.LaneDep && !C.Relabeled && C.Last == "0" &&
             llvm::all_of(C.Outer, [&](const std::string &O) {
               return O == "0" || llvm::is_contained(D.Outer, O);
             });
    };
    if (!LoadGuard.empty() && !RowOnly())
      Elem = fmt::format("({} ? {} : ({})0)", LoadGuard, Elem, ST);
    else if (LaneGuard && Chunk != ChunkKind::Whole && !LaneFree)
      Elem = fmt::format("({} ? {} : ({})0)", laneValid(), Elem, ST);
    if (RecordScalar && C.ColRel && !C.Flat) {
      bool Known = false;
      for (const ScalarLoad &L : SeenScalar)
        Known |= L.Elem == Elem;
      if (!Known)
        SeenScalar.push_back({Elem, Nd.Type});
    }
    if (ScalarCache)
      if (auto F = ScalarCache->find(Elem); F != ScalarCache->end())
        Elem = F->second;
    std::string V = bind(Nd.Type, loadConvert(Nd.Type, Elem));
    remember(K, V);
    return V;
  }
  // One vector load serves the Vec lanes of this chunk.
  std::string Rel = Outer.empty() ? "" : "(" + Outer + ")";
  if (C.Off)
    Rel += (Rel.empty() ? "" : " + ") + std::to_string(C.Off);
  // The lead input at the domain's own coordinates is aligned in every
  // whole chunk: the chunks were aligned to it.
  bool Lead = Idx >= 0 && Idx == LeadInput && C.Off == 0 && !C.Flat && C.ColBase.empty() &&
              Dims == llvm::ArrayRef<Dim>(P.Domain) &&
              C.Outer == domainCoords().Outer;
  Lead |= Idx >= 0 && Idx == LeadInput && C.Flat;
  // So is the lead a whole number of chunks along its row (RoPE's partner
  // half, PieceWrapChunks' later pieces).
  // So is, in the same-phase variant (KernelPlan::SamePhasePeeled), a
  // tensor of the lead's layout whose pointer's phase the launch checked
  // against the lead's, and a row vector of it at the row's column.
  const bool SamePhase = Idx >= 0 && llvm::is_contained(SamePhaseInputs, Idx);
  if (Idx >= 0 && (Idx == LeadInput || SamePhase) && C.Off % Vec == 0 && !C.Flat &&
      C.ColBase.empty()) {
    Lead |= Dims == llvm::ArrayRef<Dim>(P.Domain) && C.Outer == domainCoords().Outer;
    Lead |= SamePhase && Dims.size() == 1 && Dims[0] == P.Domain.back() && C.ColRel &&
            C.Outer.empty() && !C.Relabeled && !C.LaneDep && P.Domain.size() >= 2;
  }
  std::string GroupKey = fmt::format("{}|{}", Param, Rel);
  if (!C.ColBase.empty())
    GroupKey += "|" + C.ColBase;
  std::string VecVar;
  if (Cached) {
    auto F = Cached->find(GroupKey);
    if (F != Cached->end())
      VecVar = F->second + "[j]";
  }
  if (VecVar.empty())
    VecVar = lookup(GroupKey);
  if (VecVar.empty()) {
    VecVar = fresh("lv");
    std::string Addr = Param + (Rel.empty() ? "" : " + " + Rel) + " + " + C.base();
    // The template arguments: type, width and, for a row-shaped input of a
    // kernel that re-reads its row, the L2 hint.
    std::string TA = fmt::format("{}, {}", ST, Vec);
    if (int H = l2HintFor(Dims))
      TA += fmt::format(", {}", H);
    if (Peel && PieceWrap && Chunk == ChunkKind::Whole && C.ColBase.empty()) {
      // The lead is aligned in every chunk (the chunks follow it), the
      // others in the copy KernelWriter::pieceWrapAlignedFlag's check guards.
      bool Aligned = Lead || alignedWide(ST, Addr);
      line(fmt::format("const jf_vec<{0}, {1}> {2} = jf_load_rot<{0}, {1}, {3}, {4}>({5}, {6}, "
                       "jf_w);",
                       ST, Vec, VecVar, l2HintFor(Dims), Aligned, Addr, PieceWrap));
    } else if (Peel && Chunk == ChunkKind::Whole && (Lead || alignedWide(ST, Addr)))
      line(fmt::format("const jf_vec<{0}, {1}> {2} = jf_load<{3}>({4});", ST, Vec, VecVar, TA,
                       Addr));
    else if (Peel && Chunk == ChunkKind::Whole)
      line(fmt::format("const jf_vec<{0}, {1}> {2} = jf_load_whole<{3}>({4});", ST, Vec, VecVar,
                       TA, Addr));
    else if (Peel)
      line(fmt::format("const jf_vec<{0}, {1}> {2} = jf_load_{3}<{4}>({5}, jf_lo, jf_hi);", ST,
                       Vec, VecVar, chunkSuffix(Chunk), TA, Addr));
    else
      line(fmt::format("const jf_vec<{0}, {1}> {2} = jf_load<{3}>({4});", ST, Vec, VecVar, TA,
                       Addr));
    remember(GroupKey, VecVar);
    bool Known = false;
    for (const RowLoad &L : Seen)
      Known |= L.Key == GroupKey;
    // Row caches reload what they saw at `col`; a chunk at another base
    // is loaded where it is used.
    if (!Known && C.ColBase.empty() && Idx >= 0)
      Seen.push_back({GroupKey, static_cast<unsigned>(Idx), Rel, Lead});
  }
  std::string V = bind(Nd.Type, loadConvert(Nd.Type, fmt::format("{}.V[{}]", VecVar, Lane),
                                            pinConversion(Nd.Type)));
  remember(K, V);
  return V;
}

bool Emitter::pinConversion(DType T) const {
  // A row kept in registers widens bf16 at each use; the move made bf16
  // RoPE 1.2x slower, so element-wise rows keep the shift. An f16 value
  // under a concat piece's branch keeps its cvt in the branch (1.12x f16
  // RoPE); in row kernels the pinned cvt gained nothing. Measurements:
  // jitfuse_device.cuh and BENCHMARKS.md's schedule log.
  if (T == DType::BF16)
    return P.CacheRow;
  if (T == DType::F16)
    return P.ConcatPiece > 0;
  return false;
}

std::string Emitter::elementwise(NodeId N, const Coords &C) {
  const Node &Nd = G.node(N);
  llvm::SmallVector<std::string, 3> Vals;
  llvm::SmallVector<DType, 3> Types;
  for (NodeId O : Nd.Operands) {
    Vals.push_back(value(O, operandCoords(C, Nd, G.node(O))));
    Types.push_back(G.node(O).Type);
  }
  if (Nd.Kind == Op::Cast)
    return bind(Nd.Type, castValue(Types[0], Nd.Type, Vals[0]));
  DType OT = Nd.Type;
  if (isComparison(Nd.Kind))
    OT = promoteTypes(Types[0], Types[1]);
  else if (isLogical(Nd.Kind))
    OT = DType::Bool;
  for (size_t I = 0; I < Vals.size(); ++I) {
    if (Nd.Kind == Op::Where && I == 0)
      continue; // the condition stays bool
    Vals[I] = promoteValue(Types[I], OT, Vals[I]);
  }
  // A per-element division by a row's reduction result (softmax's sum):
  // IEEE division cost about 8 instructions per element, a third of a bf16
  // softmax row's (BENCHMARKS.md schedule log).
  if (Nd.Kind == Op::Div && OT == DType::F32 && Reduced.count(Nd.Operands[1]) &&
      llvm::ArrayRef<Dim>(Nd.Dims) == llvm::ArrayRef<Dim>(P.Domain))
    return bind(Nd.Type, fmt::format("jf_div_row({}, {})", Vals[0], Vals[1]));
  return bind(Nd.Type, opExpr(Nd.Kind, OT, Vals, P.FastMath));
}

std::string Emitter::concatValue(NodeId N, const Coords &C) {
  const Node &Nd = G.node(N);
  JITFUSE_CHECK(!C.Flat, "flat kernels hold no concat");
  std::string Var = fresh("v");
  line(computeType(Nd.Type) + " " + Var + ";");
  std::string Last = lastExpr(C);
  bool SavedVL = VectorLoads;
  VectorLoads = false; // branches differ per lane
  // A piece's loads are inside the tensor only in its branch (a part of a
  // row shifted by its slice): none is hoisted into the loads a peeled row
  // makes before its branches.
  bool SavedRecord = RecordScalar;
  RecordScalar = false;
  int64_t Lo = 0;
  for (size_t I = 0; I < Nd.Operands.size(); ++I) {
    const Node &Op = G.node(Nd.Operands[I]);
    int64_t Hi = Lo + Op.Dims.back().Size;
    bool LastOne = I + 1 == Nd.Operands.size();
    std::string Header = LastOne ? (I ? "else" : "")
                                 : fmt::format("{}if ({} < {})", I ? "else " : "",
                                               Last, Hi);
    open(Header.empty() ? "" : Header);
    Coords Ci = C;
    if (Ci.ColRel)
      Ci.Off -= Lo;
    else
      Ci.Last = fmt::format("({} - {})", C.Last, Lo);
    line(Var + " = " + promoteValue(Op.Type, Nd.Type, value(Nd.Operands[I], Ci)) +
         ";");
    close();
    Lo = Hi;
  }
  VectorLoads = SavedVL;
  RecordScalar = SavedRecord;
  return Var;
}

std::string Emitter::reshapeValue(NodeId N, const Coords &C) {
  const Node &Nd = G.node(N);
  NodeId OpId = Nd.Operands[0];
  llvm::ArrayRef<Dim> S = G.node(OpId).Dims;
  // An operand of one element is at coordinates 0 whatever the reshape's
  // own: so a slice under it offsets real coordinates, also in a flat
  // kernel of one element (a slice of one element reshaped to a scalar;
  // found by fuzz_graph_builder: "flat kernels hold no slice").
  if (!S.empty() && staticNumel(S) == std::optional<int64_t>(1)) {
    Coords Z;
    Z.Outer.assign(S.size() - 1, "0");
    Z.ColRel = false;
    Z.Last = "0";
    return value(OpId, Z);
  }
  if (C.Flat || C.Relabeled)
    return value(OpId, C); // same linear index on both sides
  // A reshape to the domain of a tensor of another shape (per-head rows of
  // [T, 4096] seen as [T, 32, 128]): the operand's element of the same
  // linear index, at relabeled coordinates, so its loads stay vectors.
  if (isDomainCoords(C) && llvm::ArrayRef<Dim>(Nd.Dims) == llvm::ArrayRef<Dim>(P.Domain)) {
    Coords R = C;
    R.Relabeled = true;
    return value(OpId, R);
  }
  // Adding or dropping unit dims ([T,64] -> [T,1,64]) relabels coordinates:
  // no div/mod, and the last coordinate stays chunk-relative, so the loads
  // behind it stay vectorized.
  auto NonUnit = [](llvm::ArrayRef<Dim> D) {
    llvm::SmallVector<unsigned, 4> Idx;
    for (unsigned I = 0; I < D.size(); ++I)
      if (!D[I].isStatic(1))
        Idx.push_back(I);
    return Idx;
  };
  auto From = NonUnit(Nd.Dims), To = NonUnit(S);
  bool Relabel = From.size() == To.size() && !S.empty() &&
                 !S.back().isStatic(1) && !Nd.Dims.back().isStatic(1);
  for (size_t I = 0; Relabel && I < From.size(); ++I)
    Relabel = Nd.Dims[From[I]] == S[To[I]];
  if (Relabel) {
    Coords R;
    R.Outer.assign(S.size() - 1, "0");
    for (size_t I = 0; I + 1 < From.size(); ++I)
      R.Outer[To[I]] = C.Outer[From[I]];
    R.ColRel = C.ColRel;
    R.Off = C.Off;
    R.ColBase = C.ColBase;
    R.Last = C.Last;
    R.LaneDep = C.LaneDep;
    return value(OpId, R);
  }
  std::string Lin = fresh("t");
  line("const " + indexType() + " " + Lin + " = " + linearIndex(C, Nd.Dims) + ";");
  return value(OpId, unflatten(Lin, S, C.Flat || C.ColRel || C.LaneDep));
}

std::string Emitter::value(NodeId N, const Coords &C) {
  const Node &Nd = G.node(N);
  if (Nd.Kind == Op::Constant) {
    // A constant holds its value rounded to its dtype (as the reference
    // does): a bf16 constant 0.1 is 0.10009765625, computed on in f32.
    if (Nd.Type == DType::F16 || Nd.Type == DType::BF16)
      return literal(roundToDType(Nd.F, Nd.Type), DType::F32);
    return literal(Nd.F, Nd.Type);
  }
  if (Nd.Kind == Op::Scalar) {
    int I = scalarIndex(N);
    JITFUSE_CHECK(I >= 0, "scalar missing from the plan");
    return "s_" + std::to_string(I);
  }
  if (C.Relabeled && llvm::ArrayRef<Dim>(Nd.Dims) == llvm::ArrayRef<Dim>(P.Domain)) {
    Coords D = C;
    D.Relabeled = false;
    return value(N, D);
  }
  if (inputIndex(N) >= 0 || (ReadBack.count(N) && isDomainCoords(C)))
    return load(N, C);
  if (auto R = Reduced.find(N); R != Reduced.end()) {
    JITFUSE_CHECK(!C.Relabeled, "a row's reduced value is read at the row's coordinates");
    return R->second.size() == 1 ? R->second.front() : R->second[static_cast<size_t>(Lane)];
  }
  if (auto It = Kept.find(N); It != Kept.end() && KeptActive && isDomainCoords(C))
    return fmt::format("{}[j].V[{}]", It->second, Lane);
  std::string K = key(N, C);
  if (std::string V = lookup(K); !V.empty())
    return V;
  std::string V;
  if (C.Rank0 && Nd.rank() > 0 &&
      (Nd.Kind == Op::Slice || Nd.Kind == Op::Concat || Nd.Kind == Op::Reshape ||
       Nd.Kind == Op::Permute)) {
    // A one-element view: spell its coordinates out, or the view's offset
    // (slice start, concat branch) would be lost.
    Coords Zero;
    Zero.Outer.assign(Nd.rank() - 1, "0");
    Zero.ColRel = false;
    Zero.Last = "0";
    V = value(N, Zero);
    remember(K, V);
    return V;
  }
  OpKind Kind = opInfo(Nd.Kind).Kind;
  if (C.Relabeled && Nd.Kind != Op::Reshape && Nd.Kind != Op::Broadcast && Kind != OpKind::Unary &&
      Kind != OpKind::Binary && Kind != OpKind::Ternary) {
    // Views that move elements and random draws: at real coordinates.
    V = value(N, realCoords(C, Nd.Dims));
    remember(K, V);
    return V;
  }
  switch (Nd.Kind) {
  case Op::Broadcast:
    V = value(Nd.Operands[0], operandCoords(C, Nd, G.node(Nd.Operands[0])));
    break;
  case Op::Slice: {
    JITFUSE_CHECK(!C.Flat, "flat kernels hold no slice");
    Coords C2 = C;
    if (C2.ColRel)
      C2.Off += Nd.A0;
    else
      C2.Last = fmt::format("({} + {})", C.Last, Nd.A0);
    V = value(Nd.Operands[0], C2);
    break;
  }
  case Op::Concat:
    if (ConcatChoice.second >= 0 && ConcatChoice.first == N && !C.Flat && C.ColBase.empty() &&
        C.ColRel && C.Off == DomainOff) {
      // The kernel already branched on the chunk: no per-lane select, and
      // the chosen operand's loads stay vectorized.
      int64_t Lo = 0;
      for (int I = 0; I < ConcatChoice.second; ++I)
        Lo += G.node(Nd.Operands[I]).Dims.back().Size;
      Coords Ci = C;
      Ci.Off -= Lo;
      const Node &Op = G.node(Nd.Operands[ConcatChoice.second]);
      V = promoteValue(Op.Type, Nd.Type, value(Nd.Operands[ConcatChoice.second], Ci));
      break;
    }
    V = concatValue(N, C);
    break;
  case Op::Reshape:
    V = reshapeValue(N, C);
    break;
  case Op::Permute:
    V = value(Nd.Operands[0], permutedCoords(Nd, C));
    break;
  case Op::RandUniform: {
    Coords Scalar;
    Scalar.Rank0 = true;
    std::string Seed = value(Nd.Operands[0], Scalar);
    std::string U = fmt::format("jf_philox_uniform((long long){}, {}LL, (long long){})",
                                linearIndex(C, Nd.Dims), Nd.A0, Seed);
    V = bind(Nd.Type, promoteValue(DType::F32, Nd.Type, U));
    break;
  }
  // Every element-wise op.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_LEAF(...)
#define JITFUSE_REDUCE(...)
#define JITFUSE_VIEW(...)
#define JITFUSE_RANDOM(...)
#include "ir/Ops.def"
    V = elementwise(N, C);
    break;
  // Every leaf and reduction.
#define JITFUSE_OP(...)
#define JITFUSE_LEAF(Name, ...) case Op::Name:
#define JITFUSE_REDUCE(Name, ...) case Op::Name:
#define JITFUSE_VIEW(...)
#define JITFUSE_RANDOM(...)
#include "ir/Ops.def"
    JITFUSE_UNREACHABLE("reductions and leaves are loaded or reduced, never recomputed");
  }
  remember(K, V);
  return V;
}

} // namespace jitfuse::codegen
