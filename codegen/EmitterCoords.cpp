//===- codegen/EmitterCoords.cpp - coordinates and addresses -------------===//
//
// The Emitter's index arithmetic: a node's coordinates in the domain and in
// its operands (broadcasts, reshapes, permutes, slices), and the element
// offset and address they give in a tensor's memory (strides included).
// Values at coordinates are codegen/Emitter.cpp's.
//
//===----------------------------------------------------------------------===//
#include "codegen/Emitter.h"

#include "support/Error.h"

#include <fmt/format.h>

namespace jitfuse::codegen {

Coords Emitter::domainCoords() const {
  Coords C;
  if (P.Flat)
    C.Flat = true;
  else if (P.Domain.empty())
    C.Rank0 = true;
  else
    for (unsigned I = 0; I + 1 < P.Domain.size(); ++I)
      C.Outer.push_back("c" + std::to_string(I));
  C.Off = DomainOff;
  return C;
}

Coords Emitter::domainCoordsOf(NodeId N) const {
  Coords C = domainCoords();
  llvm::ArrayRef<Dim> D = G.node(N).Dims;
  if (!C.Flat && !C.Rank0 && D != llvm::ArrayRef<Dim>(P.Domain)) {
    JITFUSE_CHECK(sameNumel(D, P.Domain), "a node stored over the domain must relabel it");
    C.Relabeled = true;
  }
  return C;
}

bool Emitter::isDomainCoords(const Coords &C) const {
  return !C.Rank0 && !C.Flat && !C.Relabeled && C.ColRel && C.Off == 0 && !C.LaneDep &&
         C.ColBase.empty() && C.Outer == domainCoords().Outer;
}

Coords Emitter::unflatten(const std::string &Lin, llvm::ArrayRef<Dim> S, bool LaneDep) const {
  Coords R;
  if (S.empty()) {
    R.Rank0 = true;
    return R;
  }
  for (size_t I = 0; I + 1 < S.size(); ++I) {
    std::string Q = "(" + Lin + " / " + strideExpr(S, I) + ")";
    R.Outer.push_back(I == 0 ? Q : "(" + Q + " % " + dimExpr(S[I]) + ")");
  }
  R.ColRel = false;
  R.Last = S.size() == 1 ? Lin : "(" + Lin + " % " + dimExpr(S.back()) + ")";
  R.LaneDep = LaneDep;
  return R;
}

Coords Emitter::realCoords(const Coords &C, llvm::ArrayRef<Dim> S) {
  Coords D = C;
  D.Relabeled = false;
  // KernelPlan::PrefixCoords: the leading dims S shares with the domain
  // take the domain's coordinates; the rest are unflattened from the linear
  // index of the domain's remaining dims alone (row-major: the full index
  // is the prefix's times the suffix's element count plus the suffix's).
  size_t K = 0;
  if (P.PrefixCoords && !C.Flat && !C.Rank0)
    while (K + 1 < S.size() && K + 1 < P.Domain.size() && S[K] == P.Domain[K])
      ++K;
  llvm::ArrayRef<Dim> SS = S.drop_front(K), DS = llvm::ArrayRef<Dim>(P.Domain).drop_front(K);
  // (No erase of an empty range: llvm::SmallVector::erase moves the tail
  // onto itself, and a self-moved std::string is left empty.)
  Coords DSuffix = D;
  if (K > 0)
    DSuffix.Outer.erase(DSuffix.Outer.begin(), DSuffix.Outer.begin() + K);
  auto WithPrefix = [&](Coords R) {
    if (K > 0)
      R.Outer.insert(R.Outer.begin(), C.Outer.begin(), C.Outer.begin() + K);
    return R;
  };
  std::string Tag = K ? fmt::format("{}|", K) : std::string();
  // A whole chunk of the aligned variant starts at a multiple of Vec of the
  // linear index (the row length is one too); when S's last dim is also a
  // multiple, the chunk's lanes share every coordinate but the last. Then
  // only the last coordinate is per lane, and a broadcast operand (GroupNorm's
  // [C, 1] weight) is one load a chunk instead of one a lane, without a
  // division per lane.
  if (!Peel && Vec > 1 && VectorLoads && C.ColRel && C.Off == 0 && !C.LaneDep &&
      !S.empty() && !S.back().isDynamic() && S.back().Size % Vec == 0) {
    std::string Key = "lin0|" + Tag;
    for (const std::string &O : DSuffix.Outer)
      Key += O + ",";
    std::string Lin0 = lookup(Key);
    if (Lin0.empty()) {
      int Saved = Lane;
      Lane = 0;
      Lin0 = fresh("t");
      line("const " + indexType() + " " + Lin0 + " = " + linearIndex(DSuffix, DS) + ";");
      Lane = Saved;
      remember(Key, Lin0);
    }
    // The lanes' last coordinates are consecutive from a multiple of Vec:
    // column-relative, so loads along it (through a permute that keeps the
    // innermost axis) stay vectors.
    Coords R = WithPrefix(unflatten(Lin0, SS, /*LaneDep=*/false));
    R.ColRel = true;
    R.Off = 0;
    R.ColBase = R.Last;
    R.Last.clear();
    return R;
  }
  // One linear index per lane and coordinates, shared by the node's
  // broadcast operands (GroupNorm's weight and bias).
  std::string LinKey = "lin|" + Tag + key(0, C);
  std::string Lin = lookup(LinKey);
  if (Lin.empty()) {
    Lin = fresh("t");
    line("const " + indexType() + " " + Lin + " = " + linearIndex(DSuffix, DS) + ";");
    remember(LinKey, Lin);
  }
  return WithPrefix(unflatten(Lin, SS, /*LaneDep=*/true));
}

Coords Emitter::operandCoords(const Coords &C, const Node &Nd, const Node &O) {
  if (!C.Relabeled)
    return adjust(C, Nd.Dims, O.Dims);
  if (llvm::ArrayRef<Dim>(O.Dims) == llvm::ArrayRef<Dim>(Nd.Dims))
    return C;
  return adjust(realCoords(C, Nd.Dims), Nd.Dims, O.Dims);
}

Coords Emitter::permutedCoords(const Node &Nd, const Coords &C) const {
  JITFUSE_CHECK(!C.Flat && !C.Relabeled, "a permute is read at coordinates of its shape");
  llvm::SmallVector<unsigned, 4> Perm = Nd.permutation();
  unsigned R = Nd.rank(), Last = R - 1;
  Coords D;
  D.Outer.assign(Last, "0");
  if (Perm[Last] == Last) {
    // The innermost axis stays ([B,T,H,D] -> [B,H,T,D]): the outer
    // coordinates move, the chunk-relative last one (and its vectors) stays.
    for (unsigned I = 0; I < Last; ++I)
      D.Outer[Perm[I]] = C.Outer[I];
    D.ColRel = C.ColRel;
    D.Off = C.Off;
    D.ColBase = C.ColBase;
    D.Last = C.Last;
    D.LaneDep = C.LaneDep;
    return D;
  }
  // A transpose of the innermost axis: the result's last coordinate (the
  // lane's) lands on an outer axis of the operand.
  for (unsigned I = 0; I < R; ++I) {
    std::string X = I < Last ? C.Outer[I] : lastExpr(C);
    if (Perm[I] == Last)
      D.Last = X;
    else
      D.Outer[Perm[I]] = X;
  }
  D.ColRel = false;
  D.LaneDep = C.LaneDep || C.ColRel;
  return D;
}

Coords Emitter::adjust(const Coords &C, llvm::ArrayRef<Dim> From,
                       llvm::ArrayRef<Dim> To) const {
  JITFUSE_CHECK(!C.Relabeled, "relabeled coordinates are made real before a broadcast");
  Coords R;
  if (C.Rank0 || To.empty() || staticNumel(To) == std::optional<int64_t>(1)) {
    R.Rank0 = true;
    return R;
  }
  if (C.Flat) {
    if (From == To)
      return C;
    // FlatRowBroadcast: a row vector ([1, ..., 1, H] or [H]) at the chunk's
    // column jf_m0; load() reads it with jf_load_wrap.
    JITFUSE_CHECK(P.FlatRowBroadcast > 0 && !To.empty() && To.back().isStatic(P.FlatRowBroadcast),
                  "flat kernels only hold same-shape operands or row vectors");
    JITFUSE_CHECK(C.Off == 0, "a flat chunk starts at col");
    R.Outer.assign(To.size() - 1, "0");
    R.ColRel = true;
    R.ColBase = RowBroadcastBase;
    return R;
  }
  size_t Shift = From.size() - To.size();
  for (size_t I = 0; I + 1 < To.size(); ++I) {
    bool Broadcast = To[I].isStatic(1) && !From[I + Shift].isStatic(1);
    R.Outer.push_back(Broadcast ? "0" : C.Outer[I + Shift]);
  }
  R.LaneDep = C.LaneDep;
  if (To.back().isStatic(1) && !From.back().isStatic(1)) {
    R.ColRel = false;
    R.Last = "0";
  } else {
    R.ColRel = C.ColRel;
    R.Off = C.Off;
    R.ColBase = C.ColBase;
    R.Last = C.Last;
  }
  return R;
}

std::string Emitter::outerOffset(const Coords &C, NodeId N, llvm::ArrayRef<Dim> S) const {
  std::string Out;
  for (size_t I = 0; I + 1 < S.size(); ++I)
    if (C.Outer[I] != "0")
      Out += (Out.empty() ? "" : " + ") + C.Outer[I] + " * " + memStride(N, S, I);
  return Out;
}

std::string Emitter::offsetOf(const Coords &C, NodeId N, llvm::ArrayRef<Dim> S) {
  if (C.Rank0 || S.empty())
    return "0";
  if (C.Flat)
    return lastExpr(C);
  std::string Out = outerOffset(C, N, S);
  llvm::ArrayRef<Dim> St = N == NoNode ? llvm::ArrayRef<Dim>() : G.stridesOf(N);
  std::string Last = lastExpr(C);
  if (Last != "0")
    Out += (Out.empty() ? "" : " + ") + Last +
           (St.empty() || St.back().isStatic(1) ? "" : " * " + dimExpr(St.back()));
  return Out.empty() ? "0" : "(" + Out + ")";
}

std::string Emitter::linearIndex(const Coords &C, llvm::ArrayRef<Dim> S) {
  return offsetOf(C, NoNode, S);
}

Coords Emitter::ownCoords(NodeId N, const Coords &C) {
  const Node &Nd = G.node(N);
  if (C.Flat)
    return unflatten(lastExpr(C), Nd.Dims, /*LaneDep=*/true);
  if (C.Relabeled)
    return realCoords(C, Nd.Dims);
  return C;
}

std::string Emitter::memStride(NodeId N, llvm::ArrayRef<Dim> Dims, unsigned I) const {
  llvm::ArrayRef<Dim> S = N == NoNode ? llvm::ArrayRef<Dim>() : G.stridesOf(N);
  return S.empty() ? strideExpr(Dims, I) : dimExpr(S[I]);
}

bool Emitter::stridedRowsAligned(NodeId N) const {
  llvm::ArrayRef<Dim> S = G.stridesOf(N);
  if (!S.back().isStatic(1))
    return false;
  // Dynamic strides: the launch runs a wide variant only when they are
  // multiples of its width (exec/LaunchTable.cpp, stride alignment).
  for (size_t I = 0; I + 1 < S.size(); ++I)
    if (!S[I].isDynamic() && S[I].Size % Vec != 0)
      return false;
  return true;
}

std::string Emitter::address(NodeId N, const Coords &C, llvm::ArrayRef<Dim> Dims) {
  JITFUSE_CHECK(G.stridesOf(N).empty() || (!C.Flat && !C.Relabeled),
                "strided tensors are addressed at their own coordinates");
  return offsetOf(C, N, Dims);
}

} // namespace jitfuse::codegen
