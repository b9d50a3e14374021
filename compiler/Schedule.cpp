//===- compiler/Schedule.cpp - cluster -> kernel plan ---------------------===//
//
// Launch shapes follow the measurements in docs/MEASUREMENTS.md: one vector
// chunk per thread over a large grid for element-wise work; for rows, enough
// threads that each holds 2-4 chunks so the row stays in registers. The
// thread counts are codegen's (codegen/LaunchRule.h): the kernels index by
// them and the reference's error bounds assume them.
//
//===----------------------------------------------------------------------===//
#include "compiler/Schedule.h"
#include "compiler/MixColumns.h"
#include "compiler/ReduceAxes.h"
#include "compiler/RowForms.h"
#include "compiler/ScheduleRows.h"

#include "codegen/LaunchRule.h"
#include "codegen/Spelling.h"
#include "support/Error.h"

#include <llvm/ADT/STLExtras.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <map>
#include <set>

namespace jitfuse {

static bool sameShape(llvm::ArrayRef<Dim> A, llvm::ArrayRef<Dim> B) {
  return A == B;
}

static bool isNumelOne(llvm::ArrayRef<Dim> S) {
  return staticNumel(S) == std::optional<int64_t>(1);
}

/// True when every access in the cluster is the identity over Domain (or a
/// one-element tensor), so the domain can be walked as one flat range.
/// A strided tensor is addressed by coordinates, which a flat range would
/// divide out of its linear index per element.
static bool hasStridedTensor(const Graph &G, const Cluster &C) {
  for (const std::vector<NodeId> *Ts : {&C.Inputs, &C.Outputs})
    for (NodeId N : *Ts)
      if (!G.stridesOf(N).empty())
        return true;
  return false;
}

static bool canFlatten(const Graph &G, const Cluster &C,
                       llvm::ArrayRef<Dim> Domain) {
  if (hasStridedTensor(G, C))
    return false;
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    if (Nd.Kind == Op::Slice || Nd.Kind == Op::Concat || Nd.Kind == Op::Permute)
      return false;
    bool Reduction = isReduction(Nd.Kind);
    if (!Reduction && !sameShape(Nd.Dims, Domain) && !isNumelOne(Nd.Dims))
      return false;
    if (Nd.Kind == Op::Reshape)
      continue; // the linear index is the same on both sides
    for (NodeId Op : Nd.Operands) {
      const Node &O = G.node(Op);
      if (O.Kind == Op::Scalar || O.Kind == Op::Constant || isNumelOne(O.Dims))
        continue;
      llvm::ArrayRef<Dim> Want = Reduction ? Domain : llvm::ArrayRef<Dim>(Nd.Dims);
      if (!sameShape(O.Dims, Want))
        return false;
    }
  }
  return true;
}

/// ScheduleOptions::FlatRowBroadcast: an element-wise cluster over a
/// [..., H] domain (H static, at least 2 dims) whose nodes all have the
/// domain's shape, and whose operands of another shape are inputs broadcast
/// over the leading dims (dims [1, ..., 1, H] or [H]). H, or 0.
static int64_t flatRowBroadcast(const Graph &G, const Cluster &C, llvm::ArrayRef<Dim> Domain) {
  if (C.Kind != KernelKind::Elementwise || Domain.size() < 2 || Domain.back().isDynamic() ||
      hasStridedTensor(G, C))
    return 0;
  auto RowVector = [&](const Node &O) {
    if (O.Kind != Op::Input || O.Dims.empty() || O.Dims.back() != Domain.back())
      return false;
    return llvm::all_of(llvm::ArrayRef<Dim>(O.Dims).drop_back(),
                        [](const Dim &D) { return D.isStatic(1); });
  };
  bool Any = false;
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    if (Nd.Kind == Op::Slice || Nd.Kind == Op::Concat || Nd.Kind == Op::Permute ||
        Nd.Kind == Op::Reshape || isReduction(Nd.Kind) || !sameShape(Nd.Dims, Domain))
      return 0;
    for (NodeId Op : Nd.Operands) {
      const Node &O = G.node(Op);
      if (O.Kind == Op::Scalar || O.Kind == Op::Constant || isNumelOne(O.Dims) ||
          sameShape(O.Dims, Domain))
        continue;
      if (!RowVector(O))
        return 0;
      Any = true;
    }
  }
  return Any ? Domain.back().Size : 0;
}

/// The permute of an element-wise cluster that swaps the domain's last two
/// axes, when the kernel can run in transpose tiles: it is the only permute
/// that moves the innermost axis, and only element-wise nodes of the
/// domain's shape read it (directly or not), so the kernel needs its value
/// only at each output's own coordinates. -1 otherwise.
static int64_t tiledTranspose(const Graph &G, const Cluster &C, llvm::ArrayRef<Dim> Domain) {
  size_t R = Domain.size();
  int64_t Found = -1;
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    if (Nd.Kind != Op::Permute)
      continue;
    llvm::SmallVector<unsigned, 4> Perm = Nd.permutation();
    if (Perm.back() == Nd.rank() - 1)
      continue; // the innermost axis stays: vector loads already
    if (Found >= 0 || !sameShape(Nd.Dims, Domain) || R < 2 || Perm[R - 2] != R - 1)
      return -1;
    Found = N;
  }
  if (Found < 0)
    return -1;
  std::set<NodeId> Reads{static_cast<NodeId>(Found)};
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    bool Uses = llvm::any_of(Nd.Operands, [&](NodeId O) { return Reads.count(O) != 0; });
    if (!Uses)
      continue;
    OpKind K = opKind(Nd.Kind);
    if ((K != OpKind::Unary && K != OpKind::Binary && K != OpKind::Ternary) ||
        !sameShape(Nd.Dims, Domain))
      return -1;
    Reads.insert(N);
  }
  return Found;
}


/// Whether a tensor of shape \p Dims is one value a row of \p Domain (an
/// [R, 1] beside [R, C]): read at the row's coordinates, one scalar load
/// shared by a thread's columns. A width choice only: the launch still
/// checks such a pointer for the kernel's widest vector.
static bool valueARow(llvm::ArrayRef<Dim> Dims, llvm::ArrayRef<Dim> Domain) {
  return Dims.size() == Domain.size() && !Dims.empty() && Dims.back().isStatic(1) &&
         !Domain.back().isStatic(1);
}

/// A column reduction of [R, C] (codegen/ColumnReduce.h). Each thread owns
/// 16 bytes of adjacent columns of the widest input that varies along the
/// columns (the [C] output is stored once, and a value a row such as
/// LayerNorm backward's f32 [R, 1] mean and rstd is one scalar load a row
/// shared by the thread's columns: neither sets the width), so a warp reads
/// 512 contiguous bytes of a row. The aligned variant needs C to
/// be a static multiple of that width and every pointer 16-byte aligned;
/// the other one reads the same columns with scalar loads (a thread's
/// columns 32 apart, still coalesced across the warp) and serves any offset
/// and any C. Both cover the same tiles with the same split, so they sum in
/// the same order.
static KernelPlan scheduleColumns(const Graph &G, const Cluster &C, KernelPlan P) {
  namespace launch = codegen::launch;
  unsigned Bytes = 1;
  for (NodeId N : C.Inputs)
    if (!isNumelOne(G.node(N).Dims) && !valueARow(G.node(N).Dims, P.Domain))
      Bytes = std::max(Bytes, dtypeBytes(G.node(N).Type));
  int Width = std::max(1, launch::MaxVectorBytes / static_cast<int>(Bytes));
  P.ThreadsX = launch::ColumnThreads;
  P.RowsPerBlock = launch::ColumnRowThreads;
  P.ColumnWidth = Width;
  P.ColumnReductions = static_cast<int>(llvm::count_if(
      C.Nodes, [&](NodeId N) { return isReduction(G.node(N).Kind); }));
  const Dim &R = P.Domain[0], &Cols = P.Domain[1];
  bool Aligned = Width > 1 && !Cols.isDynamic() && Cols.Size % Width == 0;
  P.Vecs = Aligned ? std::vector<int>{Width, 1} : std::vector<int>{1};
  int64_t Tile = int64_t(P.ThreadsX) * Width;
  P.Why = fmt::format("column tiles of {} = {} threads x {} adjacent columns ({}-byte "
                      "chunks of {} B elements); {} threads down each column, {} rows' loads "
                      "in flight each; variants: {}",
                      Tile, P.ThreadsX, Width, Width * Bytes, Bytes, P.RowsPerBlock,
                      launch::ColumnUnroll,
                      Aligned ? "aligned (16-byte vectors) and scalar (any other offset)"
                              : fmt::format("scalar only ({} {} a multiple of {})", Cols.str(),
                                            Cols.isDynamic() ? "not known to be" : "not",
                                            Width));
  std::string Rule = fmt::format("min({} / C, R / {}, {}, max({}, ceil({} / C)))",
                                 launch::ColumnSplitWork, launch::ColumnMinSplitRows,
                                 launch::ColumnMaxSplits, launch::ColumnCombineSplits,
                                 launch::ColumnMinSplitColumns);
  if (R.isDynamic() || Cols.isDynamic()) {
    P.Why += fmt::format("; the reduced axis split across max(1, {}) blocks a tile "
                         "(a function of R and C alone)",
                         Rule);
  } else {
    int64_t S = codegen::columnSplits(R.Size, Cols.Size);
    int64_t Tiles = (Cols.Size + Tile - 1) / Tile;
    P.Why += S == 1 ? fmt::format("; {} tile{}, no split of the {} rows (split rule max(1, "
                                  "{}))",
                                  Tiles, Tiles == 1 ? "" : "s", R.Size, Rule)
                    : fmt::format("; {} tiles x {} splits of {} rows (split rule {}, a "
                                  "function of R and C alone)",
                                  Tiles, S, (R.Size + S - 1) / S, Rule);
  }
  P.Why += "; each split's partials combined by the tile's last block in split order "
           "0, 1, ... (bitwise reproducible)";
  if (G.node(P.Outputs.front()).Kind == Op::ReduceMean)
    P.Why += "; the mean divides by R once, at the end";
  return P;
}

/// The piece length when the kernel's domain row is a concat of equal
/// pieces over the whole domain (RoPE's halves), else 0
/// (KernelPlan::ConcatPiece).
static int64_t equalConcatPiece(const Graph &G, const KernelPlan &P) {
  for (NodeId N : P.Nodes) {
    const Node &Nd = G.node(N);
    if (Nd.Kind != Op::Concat || llvm::ArrayRef<Dim>(Nd.Dims) != llvm::ArrayRef<Dim>(P.Domain))
      continue;
    const Dim &First = G.node(Nd.Operands.front()).Dims.back();
    if (First.isDynamic())
      return 0;
    for (NodeId O : Nd.Operands)
      if (G.node(O).Dims.back().isDynamic() || G.node(O).Dims.back().Size != First.Size)
        return 0;
    return First.Size;
  }
  return 0;
}

/// Whether the peeled variant can take PieceWrapChunks: pieces of whole
/// chunks (ConcatPiece), and every access of the chunk follows the domain's
/// column, so the wrapped lanes' columns (col + CP) reach every load and
/// store: no strided tensor (read at its own coordinates) and no random draw
/// (its stream index is the linear index).
static bool pieceWrapApplies(const Graph &G, const Cluster &C, const KernelPlan &P, int Vec) {
  if (P.ConcatPiece <= 0 || Vec <= 1 || P.ConcatPiece % Vec != 0)
    return false;
  for (NodeId N : C.Inputs)
    if (!G.stridesOf(N).empty())
      return false;
  for (NodeId N : C.Outputs)
    if (!G.stridesOf(N).empty())
      return false;
  return llvm::none_of(P.Nodes, [&](NodeId N) { return opKind(G.node(N).Kind) == OpKind::Random; });
}

/// Whether an input of \p C is 16-bit, not strided, and broadcast over the
/// rows of \p Domain (a bias [H] beside [B, H]): under odd-length or offset
/// rows it sits at another phase than the chunks, row by row
/// (KernelPlan::WholeChunkPaths).
static bool broadcastHalfInput(const Graph &G, const Cluster &C, llvm::ArrayRef<Dim> Domain) {
  for (NodeId I : C.Inputs) {
    const Node &Nd = G.node(I);
    if (dtypeBytes(Nd.Type) != 2 || !G.stridesOf(I).empty() || Nd.Dims.empty() ||
        sameShape(Nd.Dims, Domain) || Nd.Dims.back() != Domain.back())
      continue;
    return true;
  }
  return false;
}

static KernelPlan scheduleOne(const Graph &G, const Cluster &C, unsigned Index,
                              const ScheduleOptions &Opts) {
  KernelPlan P;
  P.Kind = C.Kind;
  P.Nodes = C.Nodes;
  P.Inputs = C.Inputs;
  P.Outputs = C.Outputs;
  P.Scalars = C.Scalars;
  // Named after its first output; a column or full reduction after its
  // reduction (its outputs may be reshapes of the result, or a full
  // reduction's prologue values: FullReducePrologueOutputs).
  NodeId Named = C.Outputs.front();
  if (C.Kind == KernelKind::ColumnReduce || C.Kind == KernelKind::FullReduce)
    for (NodeId N : C.Nodes)
      if (isReduction(G.node(N).Kind))
        Named = N;
  P.Name = "jf_k" + std::to_string(Index) + "_" + std::string(opName(G.node(Named).Kind));
  P.FastMath = Opts.FastMath;

  // Domain.
  if (C.Kind == KernelKind::Elementwise) {
    P.Domain = G.node(C.Outputs.front()).Dims;
  } else {
    NodeId Red = 0;
    for (NodeId N : C.Nodes)
      if (isReduction(G.node(N).Kind)) {
        Red = N;
        break;
      }
    P.Domain = G.node(G.node(Red).Operands[0]).Dims;
  }

  // Dynamic dims used anywhere in the kernel, in graph order.
  std::set<std::string> Used;
  auto Note = [&](llvm::ArrayRef<Dim> S) {
    for (const Dim &D : S)
      if (D.isDynamic())
        for (llvm::StringRef F : D.factors())
          Used.insert(F.str());
  };
  Note(P.Domain);
  int64_t MaxNumel = 1;
  unsigned MaxBytes = 1;
  // Vector width follows what moves through memory; intermediates live in
  // registers whatever their type.
  auto Account = [&](NodeId N, bool Moves, bool SetsWidth = true) {
    const Node &Nd = G.node(N);
    Note(Nd.Dims);
    auto Num = staticNumel(Nd.Dims);
    MaxNumel = std::max<int64_t>(MaxNumel, Num ? *Num : INT64_MAX);
    // A strided tensor's offsets reach its span, not its element count.
    if (llvm::ArrayRef<Dim> S = G.stridesOf(N); Moves && !S.empty()) {
      Note(S);
      auto Sizes = staticSizes(Nd.Dims), Steps = staticSizes(S);
      std::optional<int64_t> Span = Sizes && Steps ? stridedSpan(*Sizes, *Steps) : std::nullopt;
      MaxNumel = std::max<int64_t>(MaxNumel, Span.value_or(INT64_MAX));
    }
    if (Moves && SetsWidth && !isNumelOne(Nd.Dims))
      MaxBytes = std::max(MaxBytes, dtypeBytes(Nd.Type));
  };
  for (NodeId N : C.Nodes)
    Account(N, false);
  // Per-row inputs ([outer..., 1], read once a row) of a row reduction do
  // not set the width (PerRowInputsSetWidth off, the rule): f32 statistics
  // halved a 16-bit row's chunks to 8 bytes of the row (BENCHMARKS.md,
  // session 40). PerRowBytes: their widest element.
  unsigned PerRowBytes = 0;
  for (NodeId N : C.Inputs) {
    const Node &Nd = G.node(N);
    bool PerRow = C.Kind == KernelKind::RowReduce && !Opts.PerRowInputsSetWidth &&
                  !Nd.Dims.empty() && Nd.Dims.back().isStatic(1) && !P.Domain.back().isStatic(1) &&
                  G.stridesOf(N).empty();
    Account(N, true, !PerRow);
    if (PerRow)
      PerRowBytes = std::max(PerRowBytes, dtypeBytes(Nd.Type));
  }
  // ... unless the wider chunks would cost a static row its few-rows form
  // (launch::fewRowsChunks; RowForms.cpp): LayerNorm backward bf16 1-8 x
  // 32064 ran 0.78-0.83x at 16-byte chunks of the row (4008 chunks, no
  // cluster form) against 8-byte ones (8016 chunks, split over a cluster).
  bool PerRowKeptWidth = false;
  if (PerRowBytes > MaxBytes && Opts.FewRowsClusters && !P.Domain.empty() &&
      !P.Domain.back().isDynamic()) {
    const int64_t Len = P.Domain.back().Size;
    auto Chunks = [&](unsigned Bytes) {
      int64_t V = std::max(1u, codegen::launch::MaxVectorBytes / Bytes);
      return (Len + V - 1) / V;
    };
    if (codegen::launch::fewRowsChunks(Chunks(PerRowBytes)) &&
        !codegen::launch::fewRowsChunks(Chunks(MaxBytes))) {
      MaxBytes = PerRowBytes;
      PerRowKeptWidth = true;
    }
  }
  // A row kernel's per-row outputs ([outer..., 1]) are stored once a row,
  // not in chunks: they do not set the width (an f32 statistic of a bf16
  // row kept bf16 loads at 8 bytes, W17 at 38% of the copy ceiling).
  for (NodeId N : C.Outputs)
    Account(N, true, C.Kind != KernelKind::RowReduce || sameNumel(G.node(N).Dims, P.Domain));
  for (const std::string &D : G.dynamicDims())
    if (Used.count(D))
      P.DynDims.push_back(D);
  P.Index64 = !P.DynDims.empty() || MaxNumel > INT32_MAX / 2;
  P.PrefixCoords = Opts.PrefixCoords;
  P.CombineUnroll = Opts.ColumnCombineUnroll;

  if (C.Kind == KernelKind::ColumnReduce)
    return scheduleColumns(G, C, std::move(P));
  P.Flat = C.Kind != KernelKind::RowReduce &&
           (P.Domain.empty() || canFlatten(G, C, P.Domain));

  // Widest vector: 16 bytes of the widest element. A peeled kernel aligns
  // its chunks at run time, so that width serves any row length, dynamic
  // rows and any pointer offset with one variant (BENCHMARKS.md "Schedule
  // log": the ladder fell to 2-byte accesses on odd rows and offsets). The
  // ladder needs the width to divide the row.
  int Vec = std::max(1u, codegen::launch::MaxVectorBytes / MaxBytes);
  // FlatRowBroadcast, where the by-rows kernel would be peeled only (the
  // width does not divide the row) and a chunk wraps at most once.
  if (!P.Flat && Opts.FlatRowBroadcast && Opts.Peel && Vec > 1) {
    int64_t H = flatRowBroadcast(G, C, P.Domain);
    if (H >= Vec && H % Vec != 0) {
      P.Flat = true;
      P.FlatRowBroadcast = H;
    }
  }
  const Dim &Last = P.Domain.empty() ? Dim(1) : P.Domain.back();
  if (P.Domain.empty())
    Vec = 1;
  // The aligned variant (no per-chunk checks) exists when the width divides
  // the row; measured on the H200, the peeled one alone cost aligned bf16
  // kernels up to 2.3x (BENCHMARKS.md "Schedule log"), so it only runs when
  // a pointer is off alignment or the row is odd.
  int Aligned = Vec;
  if (!P.Flat) {
    if (Last.isDynamic())
      Aligned = 1;
    else
      while (Aligned > 1 && Last.Size % Aligned != 0)
        Aligned /= 2;
  }
  P.Peel = Opts.Peel && Vec > 1;
  P.Vecs.clear();
  std::string Elems = fmt::format("{} B elements in {}-byte chunks of {}", MaxBytes,
                                  Vec * MaxBytes, Vec);
  if (PerRowKeptWidth)
    Elems += fmt::format(" (the width of its {} B per-row inputs: chunks of the row's own "
                         "elements would be too few for a few-rows form)",
                         MaxBytes);
  if (P.Peel) {
    if (Aligned == Vec)
      P.Vecs.push_back(Vec);
    P.Vecs.push_back(Vec);
    P.Why = Aligned == Vec
                ? Elems + "; variants: aligned (every pointer 16-byte aligned) and peeled (any "
                          "other offset)"
                : Elems + fmt::format("; variant: peeled only ({} does not divide the row)",
                                      Vec);
  } else {
    for (int V = Aligned; V >= 1; V /= 2)
      P.Vecs.push_back(V);
    Vec = Aligned;
    P.Why = fmt::format("ladder of widths {} down to 1 (PeelAlignment off)", Vec);
  }
  if (P.Domain.empty())
    P.Why = "one element";

  if (C.Kind == KernelKind::Elementwise && !P.Flat) {
    P.TransposeNode = tiledTranspose(G, C, P.Domain);
    if (P.TransposeNode >= 0) {
      // Two variants: 16-byte chunks of the widest element in 64x64 tiles,
      // run when the domain's last two dims are multiples of the width and
      // every pointer is aligned (exec/LaunchTable.cpp); scalar 32x32 tiles
      // for any other shape or offset.
      int Wide = std::max(1u, codegen::launch::MaxVectorBytes / MaxBytes);
      for (const Dim &D : llvm::ArrayRef<Dim>(P.Domain).take_back(2))
        if (!D.isDynamic() && D.Size % Wide != 0)
          Wide = 1;
      P.Vecs = Wide > 1 ? std::vector<int>{Wide, 1} : std::vector<int>{1};
      P.Peel = false;
      P.ThreadsX = codegen::launch::TileWarp;
      P.RowsPerBlock = codegen::launch::TileRows;
      P.Why = fmt::format("transpose tiles through shared memory: %{0}'s operand read along "
                          "its innermost axis, the outputs written along theirs; variants: "
                          "{1}{2}x{2} tiles of scalar accesses (any shape and alignment); "
                          "{3}x{4} threads a block",
                          P.TransposeNode,
                          Wide > 1 ? fmt::format("{0}x{0} tiles of {1}-element vectors (the "
                                                 "last two dims multiples of {1}, aligned "
                                                 "pointers) and ",
                                                 codegen::launch::VecTileDim, Wide)
                                   : "",
                          codegen::launch::TileDim, codegen::launch::TileWarp,
                          codegen::launch::TileRows);
      return P;
    }
  }
  if (C.Kind != KernelKind::RowReduce) {
    P.ThreadsX = codegen::launch::FlatThreads;
    P.Why += fmt::format("; {}, {} threads a block", P.Flat ? "one flat range" : "by rows",
                         P.ThreadsX);
    if (P.FlatRowBroadcast)
      P.Why += fmt::format("; inputs broadcast over the rows read at the flat index mod {} "
                           "(FlatRowBroadcast)",
                           P.FlatRowBroadcast);
    if (Opts.FlatTailThreads && P.Flat && C.Kind == KernelKind::Elementwise && Vec > 1) {
      P.FlatTailThreads = true;
      P.Why += "; the aligned variant's last partial chunk one element a thread "
               "(FlatTailThreads)";
    }
    if (C.Kind == KernelKind::Elementwise && !P.Flat && Opts.ConcatRowGroups) {
      P.ConcatPiece = equalConcatPiece(G, P);
      if (Opts.PieceWrapChunks && P.Peel && pieceWrapApplies(G, C, P, Vec)) {
        P.PieceWrapChunks = true;
        P.Why += fmt::format("; the peeled variant's chunks are aligned to the lead inside each "
                             "piece of {}, one chunk a piece takes its first and last elements "
                             "(PieceWrapChunks)",
                             P.ConcatPiece);
      }
      if (int64_t Rows = codegen::concatRowGroup(P.ConcatPiece, Vec); Rows > 1) {
        P.Why += fmt::format("; the row is a concat of pieces of {}: a warp takes one piece of "
                             "{} rows",
                             P.ConcatPiece, Rows);
        // GroupStores: 16-byte chunks of 16-bit outputs only.
        bool Half = llvm::all_of(C.Outputs, [&](NodeId O) {
          DType T = G.node(O).Type;
          return T == DType::BF16 || T == DType::F16;
        });
        // A piece of one chunk has no neighbour lane to shuffle with.
        if (Opts.GroupStores && Opts.Peel && Half && Vec == 8 && P.ConcatPiece / Vec > 1 &&
            !P.PieceWrapChunks) {
          P.GroupStores = true;
          P.Why += "; a misaligned output chunk is stored a piece's lanes at a time through "
                   "shuffles (GroupStores)";
        }
      }
    }
    if (Opts.WholeChunkPaths && C.Kind == KernelKind::Elementwise && !P.Flat && Opts.Peel &&
        P.ConcatPiece == 0 && Vec == 8 && broadcastHalfInput(G, C, P.Domain)) {
      P.WholeChunkPaths = true;
      P.Why += "; whole and partial chunks take separate paths, so the 16-bit input "
               "broadcast over the rows is read 16 bytes at a time at any phase "
               "(WholeChunkPaths)";
    }
    if (C.Kind == KernelKind::FullReduce)
      P.Why += "; two stages, per-block partials combined in a fixed order";
    return P;
  }

  return scheduleRows(G, C, std::move(P), Vec, Opts);
}

/// scheduleCluster but the output-led variant.
static KernelPlan scheduleForms(const Graph &G, const Cluster &C, unsigned Index,
                                const ScheduleOptions &Opts) {
  KernelPlan P = scheduleOne(G, C, Index, Opts);
  if (P.LateEpilogue) {
    // Runs of at most SMs rows launch what the default rule makes (its own
    // few-rows and wide forms, or the kernel itself as the wide form).
    ScheduleOptions Rule = Opts;
    Rule.RowCacheLateEpilogue = Rule.RowCacheLatePeeled = false;
    KernelPlan Old = scheduleCluster(G, C, Index, Rule);
    P.FewRows = Old.FewRows;
    std::string Wide;
    if (Old.WideRows) {
      P.WideRows = Old.WideRows;
      Wide = Old.WideRows->Name;
    } else {
      Old.FewRows = nullptr;
      Old.Name += "_all";
      Wide = Old.Name;
      P.WideRows = std::make_shared<const KernelPlan>(std::move(Old));
    }
    P.Why += fmt::format("; the epilogue loads the other inputs where it uses them "
                         "({}); when a run's rows <= SMs{}: kernel {} "
                         "instead, the default rule's",
                         P.LatePeeledOnly ? "RowCacheLatePeeled, peeled variants"
                                          : "RowCacheLateEpilogue",
                         P.FewRows ? " and the few-rows form does not run" : "", Wide);
    return P;
  }
  // The few-rows forms keep the default rule's register cache.
  attachRowForms(G, P, Opts, [&](const ScheduleOptions &O) {
    ScheduleOptions Rule = O;
    Rule.RowCacheLateEpilogue = Rule.RowCacheLatePeeled = false;
    return scheduleOne(G, C, Index, Rule);
  });
  return P;
}

/// A row cluster with column reductions (compiler/MixColumns.h): the row
/// kernel as the rule schedules the cluster without them, a block a row of
/// registers or re-reads and no other form, then the column reductions
/// (KernelPlan::MixColumns) and their results as the last outputs.
static KernelPlan scheduleMixed(const Graph &G, const Cluster &C, unsigned Index,
                                const ScheduleOptions &Opts) {
  Cluster Rows = C;
  std::vector<NodeId> Columns;
  Rows.Nodes.clear();
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    if (isReduction(Nd.Kind) && isColumnReduction(Nd))
      Columns.push_back(N);
    else
      Rows.Nodes.push_back(N);
  }
  Rows.Outputs.clear();
  for (NodeId N : C.Outputs)
    if (!llvm::is_contained(Columns, N))
      Rows.Outputs.push_back(N);
  JITFUSE_CHECK(!Rows.Outputs.empty(), "a row kernel with column partials stores its rows");
  ScheduleOptions O = Opts;
  O.RowCacheLateEpilogue = O.RowCacheLatePeeled = false;
  O.RowPhaseLoop = O.AlignedRowCopy = O.Clusters = O.FewRowsClusters = O.WideRows = false;
  O.AlignedClusters = false;
  O.ForceCluster.reset();
  O.RowSharedBytes = O.RowPadSharedBytes = 0;
  // Accumulators past the static limit (launch::MixRuleSharedBytes or
  // MixMaxSharedBytes allowed them): at most 512 threads a row, and half the
  // register budget for a kept row. Under the row rule's 1024 threads
  // (RowCacheWideThreads) the column terms did not fit 64 registers
  // (LayerNorm backward f32 x 14336 spilled 4-32 B); at 512 threads its
  // kept row (224 B a thread) spilled 4 B at 128 registers.
  // (The fusion pass's test, launch::mixFits, on the same bytes.)
  const int64_t AccBytes = codegen::computeBytes(G.node(Columns.front()).Type);
  const int64_t Cols = G.node(G.node(Columns.front()).Operands[0]).Dims.back().Size;
  const bool LongRow =
      int64_t(Columns.size()) * AccBytes * Cols > codegen::launch::MixMaxSharedBytes;
  if (LongRow) {
    O.RowCacheWideThreads = false;
    O.RowCacheBytes /= 2;
  }
  // A chunk a thread (up to MaxRowThreads): the groups' blocks are the
  // launch's threads (launch::MixMinColumns); 16-byte chunks of the rows'
  // own elements (f32 [R, 1] statistics of a bf16 row halved them: W21's
  // kernel 54 registers at 4 columns a chunk).
  O.RowChunksPerThread = 1;
  O.RowThreadsRoundUp = Opts.MixThreadsRoundUp;
  O.PerRowInputsSetWidth = false;
  // Two rows an iteration test their second row (RowOkKnown would declare
  // it to exist).
  if (Opts.MixTwoRows)
    O.RowOkKnown = false;
  KernelPlan P = scheduleOne(G, Rows, Index, O);
  P.MixColumns = Columns;
  P.MixAccBytes = static_cast<int>(AccBytes);
  // Rows a block: the rule's (launch::MixBlockRowsRule) or MixBlockRows,
  // within the block's threads and shared memory. Each row of a block
  // keeps its own accumulators.
  P.RowsPerBlock = codegen::launch::mixBlockRows(
      P.ThreadsX,
      codegen::launch::mixAccumulatorBytes(Cols, P.Vecs.front(), int64_t(Columns.size()), 1,
                                           AccBytes),
      Opts.MixBlockRows > 0 ? Opts.MixBlockRows : codegen::launch::MixBlockRowsRule);
  // Past the static limit (the fusion pass allowed them) the accumulators
  // are dynamic shared memory, one row's a block (mixBlockRows).
  P.MixDynamicShared = LongRow;
  // Without PeeledRowOccupancy's 64-register bound there: RMSNorm
  // backward bf16 x 11008's peeled variants spilled 96 B under it with the
  // column terms (ptxas, session 37).
  if (P.MixDynamicShared)
    P.PeeledMinBlocksPerSm = 0;
  JITFUSE_CHECK(P.Kind == KernelKind::RowReduce && P.ClusterX == 1 && !P.RowPhaseLoop &&
                    !P.FewRows && !P.WideRows && !P.AlignedCluster &&
                    P.RowSharedElemBytes == 0 &&
                    !P.Domain.back().isDynamic() &&
                    P.ThreadsX * P.RowsPerBlock % codegen::launch::MixCombineLanes == 0,
                "a row kernel with column partials is rows of a block of a static length");
  const int SubRows = P.RowsPerBlock;
  // About a wave of groups, each at least a block's rows
  // (launch::mixGroupsFor); MixMaxGroups and MixMinGroupRows: experiments.
  P.MixMaxGroups = Opts.MixMaxGroups > 0 ? Opts.MixMaxGroups
                                         : codegen::launch::mixGroupsFor(P.ThreadsX * SubRows);
  P.MixMinGroupRows = Opts.MixMinGroupRows > 0 ? Opts.MixMinGroupRows : SubRows;
  // The combine's unroll (0: launch::MixCombineUnroll): an experiment.
  P.CombineUnroll = Opts.MixCombineUnroll;
  // Rows of one chunk a thread: the aligned variant's registers bounded
  // (sweep shapes: RMSNorm backward 16-bit x 4096 53 -> 40 registers, 2 -> 3
  // blocks an SM, no spill; more chunks, or the peeled variants' head and
  // tail, spilled under it: RMSNorm backward 16-bit x 8192, any x 4099).
  bool OneChunk = P.Domain.back().Size <= int64_t(P.ThreadsX) * P.Vecs.front();
  // Several rows a block of more chunks than threads (some threads two):
  // the peeled variants bounded for launch::MixBlockRowsResidentThreads
  // (1024 an SM, 64 registers; CompileOptions::MixPeeledBound).
  // Unbounded, 16-bit rows of 384-1536 columns took 79-82 registers there,
  // 3 blocks of 256 an SM against the aligned variant's 4, and ran 1.85x
  // the aligned time at +2 B; bounded (24-68 B spilled) 1.17-1.41x faster
  // at 16-bit offsets, 0.96-0.98x at x 768 x 1024 rows +2 B (H100, session
  // 39); on an H200 over x 384-1536, 1.33-1.41x at 16384 rows, 0.93-1.00x
  // at 256-1024 rows (session 40). Not rows of one chunk a thread (peeled
  // variants of 32-48 registers would take up to 64), nor a row a block
  // (RMSNorm backward 16-bit x 4099 spills under it, not measured), nor
  // dynamic shared accumulators (see above).
  const bool PeeledBound = Opts.MixPeeledBound && !OneChunk && SubRows > 1 && !P.MixDynamicShared;
  if (PeeledBound)
    P.PeeledMinBlocksPerSm = std::max(1, codegen::launch::MixBlockRowsResidentThreads /
                                             (P.ThreadsX * SubRows));
  // MixTwoRows (an experiment): two rows an iteration, of one chunk a
  // thread; the second row's test stays (a group's row count may be odd).
  // Several rows a block test each row against the group's end.
  P.MixTwoRows = Opts.MixTwoRows && OneChunk && SubRows == 1;
  // MixRowStartChunks (the rule): where the aligned variant takes two rows
  // an iteration, so do the peeled ones, their chunks at each row's start.
  // Measured (H100, session 42) 1.15-1.31x on 16-bit rows of 4095, 1.04-1.16x
  // at +2 B x 4096, 1.12-1.18x f32 x 2048 +4 B; elsewhere (a row of more
  // chunks than threads, several rows a block) the shifted loads of every
  // tensor cost 0.78-0.96x.
  {
    ScheduleOptions Start = O;
    Start.RowStartChunks |= Opts.MixRowStartChunks && P.MixTwoRows;
    outputLedVariants(G, P, Start);
  }
  P.MixPhaseSlots = Opts.MixPhaseSlots;
  P.MixCombineBatches = Opts.MixCombineBatches;
  if (OneChunk)
    P.AlignedMinBlocksPerSm = std::max(
        1, (P.MixTwoRows  ? codegen::launch::MixTwoRowsResidentThreads
            : SubRows > 1 ? codegen::launch::MixBlockRowsResidentThreads
                          : codegen::launch::MixResidentThreads) /
               (P.ThreadsX * SubRows));
  // Chunks at the row start: the peeled variants run the aligned variant's
  // column slots and rows an iteration, so they take its register bound
  // too (unbounded they would keep PeeledRowOccupancy's).
  if (P.RowStartChunks && P.AlignedMinBlocksPerSm > 0)
    P.PeeledMinBlocksPerSm = P.AlignedMinBlocksPerSm;
  bool RowsKnown = Opts.MixRowsKnown && OneChunk && !P.MixTwoRows && SubRows == 1;
  P.RowOkKnown |= RowsKnown;
  if (SubRows > 1)
    P.RowOkKnown = false;
  for (NodeId N : Columns)
    P.Outputs.push_back(N);
  P.Why += fmt::format("; column reductions {} of the same rows (MixOrderColumns): a block "
                       "a group of ceil(R / max({}, ceil(R / {}))) consecutive rows, {}adding "
                       "each row's terms to its columns in shared memory; then {} more blocks, each "
                       "{} columns of one reduction, add the groups' partials in group order{}{}{}{}",
                       fmt::format("%{}", fmt::join(Columns, ", %")), P.MixMinGroupRows,
                       P.MixMaxGroups,
                       SubRows > 1 ? fmt::format("{} rows at a time (threadIdx.y; {} threads a "
                                                 "row), each row its own accumulators, ",
                                                 SubRows, P.ThreadsX)
                                   : "",
                       codegen::launch::mixCombiners(P.Domain.back().Size,
                                                     static_cast<int>(Columns.size())),
                       codegen::launch::MixCombineLanes,
                       OneChunk ? fmt::format("; the aligned variant's registers bounded for {} "
                                              "blocks an SM",
                                              P.AlignedMinBlocksPerSm)
                                : "",
                       PeeledBound
                           ? fmt::format("; the peeled variants' registers bounded for {} blocks "
                                         "an SM (MixPeeledBound)",
                                         P.PeeledMinBlocksPerSm)
                           : "",
                       RowsKnown ? "; its rows known to be rows (MixRowsKnown)" : "",
                       P.MixTwoRows ? "; the aligned variant two rows an iteration (MixTwoRows)"
                                    : "");
  if (P.RowStartChunks)
    P.Why += fmt::format("; the peeled variant's column slots the aligned variant's{}",
                         P.MixTwoRows ? " and two rows an iteration" : "");
  return P;
}

KernelPlan scheduleCluster(const Graph &G, const Cluster &C, unsigned Index,
                           const ScheduleOptions &Opts) {
  if (C.Kind == KernelKind::RowReduce && mixesColumns(G, C.Nodes))
    return scheduleMixed(G, C, Index, Opts);
  KernelPlan P = scheduleForms(G, C, Index, Opts);
  outputLedVariants(G, P, Opts);
  return P;
}

} // namespace jitfuse
