//===- codegen/LaunchRule.cpp - how a generated kernel is launched --------===//
#include "codegen/LaunchRule.h"

#include "support/Error.h"

#include <algorithm>
#include <climits>

namespace jitfuse::codegen {

int64_t columnSplits(int64_t Rows, int64_t Cols) {
  if (Rows <= 0 || Cols <= 0)
    return 1;
  int64_t Combine = std::max(launch::ColumnCombineSplits,
                             (launch::ColumnMinSplitColumns + Cols - 1) / Cols);
  int64_t S = std::min({launch::ColumnSplitWork / Cols, launch::ColumnMaxSplits,
                        Rows / launch::ColumnMinSplitRows, Combine});
  return std::max<int64_t>(S, 1);
}

static unsigned gridBlocks(int64_t Work, int64_t PerBlock) {
  int64_t R = (Work + PerBlock - 1) / PerBlock;
  if (R > INT32_MAX)
    fail("run: {} blocks exceed the CUDA grid limit; the tensor is too large", R);
  return static_cast<unsigned>(R);
}

LaunchRule::LaunchRule(const KernelPlan &P)
    : Kind(P.Kind), Flat(P.Flat), ThreadsX(P.ThreadsX), RowsPerBlock(P.RowsPerBlock),
      ClusterX(P.ClusterX),
      PeeledIndex(P.Peel ? static_cast<int>(P.firstPeeled()) : -1),
      ColumnWidth(P.ColumnWidth), ColumnReductions(P.ColumnReductions),
      Tiled(P.TransposeNode >= 0) {
  if (Kind == KernelKind::ColumnReduce && P.Domain.size() == 2 && !P.Domain[0].isDynamic() &&
      !P.Domain[1].isDynamic()) {
    StaticRows = P.Domain[0].Size;
    StaticCols = P.Domain[1].Size;
  }
  if (P.RowSharedElemBytes > 0) {
    StaticRowLen = P.Domain.back().Size;
    RowSharedElemBytes = P.RowSharedElemBytes;
  }
  RowPadBytes = P.RowPadSharedBytes;
  ThreadsAtLaunch = P.ThreadsAtLaunch;
  JITFUSE_CHECK(!ThreadsAtLaunch || (P.Kind == KernelKind::RowReduce && RowsPerBlock == 1 &&
                                     ClusterX == 1 && P.MixColumns.empty() &&
                                     ThreadsX == launch::MaxRowThreads),
                "threads picked at launch: one block a row of at most MaxRowThreads");
  ConcatPiece = P.ConcatPiece;
  PieceWrap = P.PieceWrapChunks;
  PhaseLoop = P.RowPhaseLoop;
  FlatTail = P.FlatTailThreads;
  if (!P.MixColumns.empty()) {
    JITFUSE_CHECK(P.Kind == KernelKind::RowReduce && !P.Domain.back().isDynamic(),
                  "column partials ride on a row kernel of a static row length");
    MixReductions = static_cast<int>(P.MixColumns.size());
    MixCols = P.Domain.back().Size;
    MixAccBytes = P.MixAccBytes;
    MixGroupsMax = P.MixMaxGroups;
    MixGroupRows = P.MixMinGroupRows;
    MixDynamic = P.MixDynamicShared;
  }
}


unsigned LaunchRule::maxBlocks(int SmCount) const {
  if (Kind != KernelKind::FullReduce)
    return 0;
  return static_cast<unsigned>(std::max(1, launch::FullReduceBlocksPerSm * SmCount));
}

/// Bytes of one partial: the widest accumulator (f64, i64).
static constexpr size_t PartialBytes = 8;

size_t LaunchRule::partialsBytes(int SmCount) const {
  if (MixReductions > 0)
    return size_t(MixGroupsMax * MixCols * MixReductions * MixAccBytes);
  if (Kind == KernelKind::FullReduce)
    return size_t(maxBlocks(SmCount)) * PartialBytes;
  if (Kind != KernelKind::ColumnReduce)
    return 0;
  int64_t Tile = columnTile();
  if (StaticRows >= 0) {
    int64_t S = columnSplits(StaticRows, StaticCols);
    if (S == 1)
      return 0; // one block a tile writes the output directly
    return size_t(S * ((StaticCols + Tile - 1) / Tile) * Tile) * PartialBytes *
           ColumnReductions;
  }
  // Any shape: a split needs S * C <= ColumnSplitWork, and the tiles cover
  // less than C + Tile columns.
  return size_t(launch::ColumnSplitWork + launch::ColumnMaxSplits * Tile) * PartialBytes *
         ColumnReductions;
}

size_t LaunchRule::counters() const {
  if (MixReductions > 0)
    return 3; // block tickets, groups stored, combiners done
  if (Kind == KernelKind::FullReduce)
    return 1;
  if (Kind != KernelKind::ColumnReduce || partialsBytes(0) == 0)
    return 0;
  int64_t Tile = columnTile();
  if (StaticRows >= 0)
    return size_t((StaticCols + Tile - 1) / Tile);
  // A split means C <= ColumnSplitWork / 2.
  return size_t(launch::ColumnSplitWork / 2 / Tile + 1);
}

std::optional<LaunchShape> LaunchRule::shape(const LaunchSizes &S, int Vec, int SmCount,
                                             bool Peel) const {
  LaunchShape L;
  L.BlockX = static_cast<unsigned>(ThreadsX);
  // Vector chunks of the domain: a flat kernel walks one range, the others
  // whole rows. A peeled kernel starts each range or row at the lead
  // tensor's phase (0..Vec-1 elements before it), so it may need one chunk
  // more; the ladder's variants divide the row (the scheduler makes Vec
  // divide it).
  int64_t Extra = Peel ? Vec - 1 : 0;
  // Rows ordered piece by piece come in groups (concatRowGroup): the last
  // group is launched whole, its rows past the end exit.
  int64_t Group = concatRowGroup(ConcatPiece, Vec);
  auto Chunks = [&] {
    // FlatTailThreads' aligned variant: whole chunks, then one thread an
    // element of the last partial chunk.
    if (Flat && FlatTail && !Peel && Vec > 1)
      return S.Numel / Vec + S.Numel % Vec;
    // PieceWrapChunks' peeled variant: a thread a slot of every piece
    // (codegen: KernelWriter::pieceWrapRow).
    if (PieceWrap && Peel && Vec > 1)
      return S.Rows * (ConcatPiece / Vec);
    return Flat ? (S.Numel + Extra + Vec - 1) / Vec
                : (S.Rows + Group - 1) / Group * Group *
                      (Peel ? (S.RowLen + Extra + Vec - 1) / Vec : S.RowLen / Vec);
  };
  switch (Kind) {
  case KernelKind::Elementwise: {
    if (S.Numel == 0)
      return std::nullopt;
    if (Tiled) {
      // One block of TileDim x TileRows threads per tile of rows x columns.
      L.BlockX = launch::TileWarp;
      L.BlockY = launch::TileRows;
      int64_t T = Vec > 1 ? launch::VecTileDim : launch::TileDim;
      L.GridX = gridBlocks(((S.Rows + T - 1) / T) * ((S.RowLen + T - 1) / T), 1);
      return L;
    }
    // The scalar variant loops over up to ScalarElemsPerThread elements a
    // grid apart, so either grid covers every element: the tiled one once it
    // still has ScalarTileMinBlocksPerSm blocks per SM.
    int64_t Block = ThreadsX;
    if (Vec == 1 && SmCount > 0) {
      int64_t Tile = Block * launch::ScalarElemsPerThread;
      if ((Chunks() + Tile - 1) / Tile >= int64_t(launch::ScalarTileMinBlocksPerSm) * SmCount)
        Block = Tile;
    }
    L.GridX = gridBlocks(Chunks(), Block);
    return L;
  }
  case KernelKind::RowReduce:
    if (MixReductions > 0) {
      // Launched with no rows too: an empty column still writes its
      // identity. A block a group of rows (RowsPerBlock of them at a
      // time), then the combining blocks.
      JITFUSE_CHECK(ClusterX == 1 && !PhaseLoop, "column partials take rows of a block");
      L.BlockY = static_cast<unsigned>(RowsPerBlock);
      L.SharedBytes = static_cast<unsigned>(dynamicSharedBytes(Vec));
      L.GridX = gridBlocks(launch::mixGroups(S.Rows, MixGroupsMax, MixGroupRows) +
                               launch::mixCombiners(MixCols, MixReductions),
                           1);
      return L;
    }
    if (S.Rows == 0)
      return std::nullopt;
    L.BlockY = static_cast<unsigned>(RowsPerBlock);
    L.SharedBytes = static_cast<unsigned>(dynamicSharedBytes(Vec));
    if (ThreadsAtLaunch)
      L.BlockX = static_cast<unsigned>(
          launch::dynamicRowThreads((S.RowLen + Extra + Vec - 1) / Vec, S.Rows, SmCount));
    // A row split over a cluster takes ClusterX consecutive blocks.
    L.GridX = gridBlocks((S.Rows + RowsPerBlock - 1) / RowsPerBlock * ClusterX, 1);
    L.RowLoop = PhaseLoop && Peel && Vec > 1;
    return L;
  case KernelKind::ColumnReduce: {
    // Launched with no rows too: an empty column still writes its identity.
    // Blocks are split-major (block = split * tiles + tile): the blocks
    // that run together read the same rows. The kernel derives the split
    // count from gridDim.x, the width does not change the grid.
    if (S.RowLen == 0)
      return std::nullopt;
    L.BlockY = static_cast<unsigned>(RowsPerBlock);
    int64_t Tiles = gridBlocks(S.RowLen, columnTile());
    L.GridX = gridBlocks(Tiles * columnSplits(S.Rows, S.RowLen), 1);
    return L;
  }
  case KernelKind::FullReduce: {
    // Always launched: an empty reduction still writes its identity.
    int64_t Blocks = std::min<int64_t>((Chunks() + ThreadsX - 1) / ThreadsX, maxBlocks(SmCount));
    L.GridX = static_cast<unsigned>(std::max<int64_t>(Blocks, 1));
    return L;
  }
  }
  JITFUSE_UNREACHABLE("unknown kernel kind");
}

} // namespace jitfuse::codegen
