//===- codegen/PieceWrap.cpp - KernelPlan::PieceWrapChunks' rows ----------===//
//
// The peeled variant of an element-wise row that is a concat of equal pieces
// (RoPE's halves): chunks at the lead's phase inside each piece, a thread a
// slot of every piece, the pieces' stores made together
// (CompileOptions::PieceWrapChunks; docs/ARCHITECTURE.md "Piece-wrapped
// chunks"; device helpers in device/jitfuse_piece_wrap.cuh).
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelWriter.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace jitfuse::codegen {

void KernelWriter::pieceWrapRow(llvm::StringRef Exit, const std::string &L) {
  // A thread takes slot K of every piece of its row: the piece's chunk
  // K + 1 at the lead's phase O (whole); the last slot takes chunk 0, whose
  // first O lanes (before the piece) are replaced by the piece's last O
  // elements, one piece later (jf_w lanes). At phase 0 the slots are the
  // piece's chunks rotated by one. The pieces' chunks are emitted one after
  // another in one scope, so the loads they share (RoPE's halves read the
  // same q, cos and sin chunks) are made once, and no warp branches on its
  // piece.
  std::string IT = E.indexType();
  int64_t PieceChunks = P.ConcatPiece / Vec;
  if (!Exit.empty())
    E.line(fmt::format("if (chunk >= ({})({}) * {}) {};", IT, rowsExpr(), PieceChunks,
                       Exit.str()));
  E.line(fmt::format("const {} row = chunk / {};", IT, PieceChunks));
  E.line(fmt::format("const int jf_k = (int)(chunk - row * {});", PieceChunks));
  E.line(fmt::format("const int jf_o = (int)((jf_off + row * {}) % {});", L, Vec));
  E.line(fmt::format("const int jf_w = jf_k == {} ? jf_o : 0;", PieceChunks - 1));
  E.line(fmt::format("[[maybe_unused]] const {} col = ({})((jf_k + 1) % {} * {} - jf_o);", IT,
                     IT, PieceChunks, Vec));
  E.setPieceWrap(P.ConcatPiece);
  outerCoords("row");
  std::string Base = fmt::format("row * {} + col", L);
  if (pieceWrapAlignedFlag(Base)) {
    // Every tensor at the lead's phase: a copy whose loads and stores do
    // not branch on their alignment, so all of them are in flight before
    // the first use (a branch per tensor kept each tensor's use, and so the
    // next tensor's load, behind its own load).
    E.open("if (jf_al)");
    E.setAlignedCopy(&AlignedAddrs, nullptr);
    pieceWrapPieces(Base, ChunkKind::Whole);
    E.setAlignedCopy(nullptr, nullptr);
    E.close();
    E.open("else");
    pieceWrapPieces(Base, ChunkKind::Whole);
    E.close();
  } else {
    pieceWrapPieces(Base, ChunkKind::Whole);
  }
  E.setPieceWrap(0);
}

void KernelWriter::pieceWrapPieces(const std::string &Base, ChunkKind Kind) {
  for (NodeId N : P.Nodes) {
    if (!isHoistableConcat(N))
      continue;
    const Node &Nd = G.node(N);
    ChunkKind Saved = E.chunk();
    E.setChunk(Kind);
    int64_t Lo = 0;
    for (size_t I = 0; I < Nd.Operands.size(); ++I) {
      // Piece I at domain column col + Lo: the concat takes operand I there.
      E.setDomainOff(Lo);
      E.setConcatChoice(N, static_cast<int>(I));
      storeOutputs(true, Lo ? fmt::format("{} + {}", Base, Lo) : Base);
      Lo += G.node(Nd.Operands[I]).Dims.back().Size;
    }
    // Each output's chunks of every piece in one store: a piece's wrapped
    // last elements and the next piece's first ones share an aligned
    // block, written once instead of as two edges (jf_store_rot_row).
    for (size_t O = 0; O < P.Outputs.size(); ++O) {
      std::vector<const WrapStore *> Of;
      for (const WrapStore &S : WrapStores)
        if (S.Output == O)
          Of.push_back(&S);
      if (Of.empty())
        continue;
      std::string Arr = E.fresh("svs");
      std::string List;
      for (const WrapStore *S : Of)
        List += (List.empty() ? "" : ", ") + S->Value;
      E.line(fmt::format("const jf_vec<{}, {}> {}[{}] = {{{}}};", Of[0]->Type, Vec, Arr,
                         Of.size(), List));
      // Known aligned (the jf_al copy): the rows' shared blocks by shuffle.
      // A row's lanes are PC consecutive threads and its output follows the
      // last row's (unstrided, the domain's length).
      E.line(fmt::format("jf_store_rot_row<{}, {}, {}, {}, {}>({}, {}, jf_w, {});", Of[0]->Type,
                         Vec, Of[0]->Aligned, Of.size(),
                         Of[0]->Aligned && P.ThreadsX % 32 == 0 ? P.ConcatPiece / Vec : 0,
                         Of[0]->Addr, P.ConcatPiece, Arr));
    }
    WrapStores.clear();
    E.setDomainOff(0);
    E.setConcatChoice(N, -1);
    E.setChunk(Saved);
    return;
  }
  JITFUSE_UNREACHABLE("PieceWrapChunks without a hoistable concat");
}

bool KernelWriter::pieceWrapAlignedFlag(const std::string &Base) {
  // A dry run of the chunks finds every wide access but the lead's.
  KernelWriter Dry(G, P, Vec, Peel);
  Dry.E.setLeadInput(E.leadInput());
  Dry.E.setPieceWrap(P.ConcatPiece);
  std::vector<AlignedAccess> Found;
  Dry.E.setAlignedCopy(nullptr, &Found);
  Dry.outerCoords("row");
  Dry.pieceWrapPieces(Base, ChunkKind::Whole);
  AlignedAddrs.clear();
  std::string All;
  for (const AlignedAccess &A : Found)
    if (AlignedAddrs.insert(A.Addr).second)
      All += fmt::format("{}jf_chunk_wide<{}, {}>({}, 0, {})", All.empty() ? "" : " &&\n    ",
                         A.Type, Vec, A.Addr, Vec);
  if (All.empty())
    return false; // only the lead's accesses: one copy serves
  E.line("const bool jf_al = " + All + ";");
  return true;
}

} // namespace jitfuse::codegen
