//===- codegen/Codegen.cpp - kernel skeletons for the three kinds ---------===//
//
// Each kernel kind is a loop skeleton (the row kind's in RowKernel.cpp, the
// column kind's in ColumnReduce.cpp, the full reduction's in FullReduce.cpp);
// the per-element code inside comes from the Emitter. Every kernel is
// emitted once per vector width in Plan.Vecs so the runtime can pick the
// widest one the pointers allow, without compiling again.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "codegen/ColumnReduce.h"

#include "codegen/KernelWriter.h"
#include "codegen/Spelling.h"
#include "ir/Printer.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include <functional>
#include <map>
#include <set>

namespace jitfuse::codegen {

llvm::StringRef kernelKindNameImpl(KernelKind K) {
  switch (K) {
  case KernelKind::Elementwise: return "elementwise";
  case KernelKind::RowReduce: return "row-reduction";
  case KernelKind::FullReduce: return "full-reduction";
  case KernelKind::ColumnReduce: return "column-reduction";
  }
  JITFUSE_UNREACHABLE("unknown kernel kind");
  return "";
}

static std::vector<KernelParam> kernelParams(const Graph &G, const KernelPlan &P) {
  std::vector<KernelParam> Out;
  for (unsigned I = 0; I < P.Inputs.size(); ++I)
    Out.push_back({KernelParam::Input, I, G.node(P.Inputs[I]).Type});
  for (unsigned I = 0; I < P.Outputs.size(); ++I)
    Out.push_back({KernelParam::Output, I, G.node(P.Outputs[I]).Type});
  for (unsigned I = 0; I < P.Scalars.size(); ++I)
    Out.push_back({KernelParam::Scalar, I, G.node(P.Scalars[I]).Type});
  for (unsigned I = 0; I < P.DynDims.size(); ++I)
    Out.push_back({KernelParam::DynDim, I, DType::I64});
  if (P.Kind == KernelKind::FullReduce || P.Kind == KernelKind::ColumnReduce) {
    Out.push_back({KernelParam::Partials, 0, G.node(reductionOf(G, P)).Type});
    Out.push_back({KernelParam::Counter, 0, DType::I32});
  } else if (!P.MixColumns.empty()) {
    Out.push_back({KernelParam::Partials, 0, G.node(P.MixColumns.front()).Type});
    Out.push_back({KernelParam::Counter, 0, DType::I32});
  }
  return Out;
}

std::string kernelOpening(const KernelPlan &P, const std::string &VariantName, bool Peeled) {
  const int MinBlocks = std::max(P.MinBlocksPerSm,
                                 Peeled ? P.PeeledMinBlocksPerSm : P.AlignedMinBlocksPerSm);
  return fmt::format("extern \"C\" __global__ void __launch_bounds__({}{}){} {}(",
                     P.ThreadsX * P.RowsPerBlock,
                     MinBlocks > 0 ? fmt::format(", {}", MinBlocks) : "",
                     P.ClusterX > 1 ? fmt::format(" __cluster_dims__({}, 1, 1)", P.ClusterX)
                                    : "",
                     VariantName);
}

std::string KernelWriter::signature() {
  std::string S = kernelOpening(P, P.variantName(Vec, Peel, OutputLed), Peel);
  std::vector<std::string> Ps;
  for (const KernelParam &K : kernelParams(G, P)) {
    switch (K.K) {
    case KernelParam::Input:
      Ps.push_back(fmt::format("const {}* __restrict__ in_{}",
                               storageType(K.Type), K.Index));
      break;
    case KernelParam::Output:
      Ps.push_back(fmt::format("{}* __restrict__ out_{}", storageType(K.Type),
                               K.Index));
      break;
    case KernelParam::Scalar:
      Ps.push_back(fmt::format("{} s_{}", computeType(K.Type), K.Index));
      break;
    case KernelParam::DynDim:
      Ps.push_back(fmt::format("long long d_{}", K.Index));
      break;
    case KernelParam::Partials:
      Ps.push_back(fmt::format("{}* __restrict__ jf_partials", computeType(K.Type)));
      break;
    case KernelParam::Counter:
      Ps.push_back("unsigned* __restrict__ jf_counter");
      break;
    case KernelParam::BlockOffset:
      break; // horizontal launches only (codegen/Horizontal.cpp)
    }
  }
  for (size_t I = 0; I < Ps.size(); ++I)
    S += (I ? ",\n    " : "\n    ") + Ps[I];
  return S + ")";
}

std::string KernelWriter::rowsExpr() const {
  // Product of every domain dim but the last.
  Shape Outer(P.Domain.begin(), P.Domain.end() - 1);
  Outer.push_back(Dim(1));
  return E.strideExpr(Outer, static_cast<unsigned>(-1));
}

void KernelWriter::outerCoords(const std::string &Row) {
  std::string IT = E.indexType();
  size_t R = P.Domain.size();
  for (size_t I = 0; I + 1 < R; ++I) {
    Shape Rest(P.Domain.begin() + I + 1, P.Domain.end() - 1);
    Rest.insert(Rest.begin(), Dim(1));
    Rest.push_back(Dim(1));
    std::string Div = E.strideExpr(Rest, 0); // product of dims I+1 .. R-2
    std::string Q = Div == "1" ? Row : "(" + Row + " / " + Div + ")";
    std::string V = I == 0 ? Q : "(" + Q + " % " + E.dimExpr(P.Domain[I]) + ")";
    E.line(fmt::format("const {} c{} = {};", IT, I, V));
  }
}

void KernelWriter::lanes(bool Vector, const std::function<void(int)> &PerLane) {
  E.setVectorLoads(Vector && !ScalarPart);
  for (int K = 0; K < (ScalarPart ? 1 : Vec); ++K) {
    E.setLane(K);
    PerLane(K);
  }
  E.setLane(0);
  E.setVectorLoads(true);
}

std::string KernelWriter::storedValue(NodeId N) {
  const Node &Nd = G.node(N);
  // A cast to f16/bf16 of an f32-computed value is stored from its operand:
  // rounding once gives the bits that rounding, widening back to f32 (the
  // cast's value) and rounding again give, without the 3-4 instructions
  // per element of the round trip (softmax's bf16 output).
  if (Nd.Kind == Op::Cast && (Nd.Type == DType::BF16 || Nd.Type == DType::F16)) {
    const Node &Src = G.node(Nd.Operands[0]);
    if (isFloat(Src.Type) && Src.Type != DType::F64 &&
        llvm::ArrayRef<Dim>(Src.Dims) == llvm::ArrayRef<Dim>(Nd.Dims))
      return storeConvert(Nd.Type, promoteValue(Src.Type, DType::F32,
                                                E.value(Nd.Operands[0], E.domainCoordsOf(N))));
  }
  return storeConvert(Nd.Type, E.value(N, E.domainCoordsOf(N)));
}

void KernelWriter::hoistInputLoads() {
  if (P.Kind != KernelKind::Elementwise || Vec == 1 || ScalarPart || hoistableConcat())
    return;
  llvm::ArrayRef<Dim> Domain(P.Domain);
  // An unstrided input of the domain's shape, or a slice of an unstrided
  // input to that shape (the halves of a merged gate_up projection): its
  // load is the chunk's own.
  auto Unstrided = [&](NodeId In) {
    return llvm::is_contained(P.Inputs, In) && G.stridesOf(In).empty();
  };
  llvm::SmallVector<NodeId, 8> Sources;
  for (NodeId In : P.Inputs)
    if (Unstrided(In) && llvm::ArrayRef<Dim>(G.node(In).Dims) == Domain)
      Sources.push_back(In);
  for (NodeId N : P.Nodes) {
    const Node &Nd = G.node(N);
    if (Nd.Kind == Op::Slice && llvm::ArrayRef<Dim>(Nd.Dims) == Domain &&
        Unstrided(Nd.Operands[0]))
      Sources.push_back(N);
  }
  for (NodeId N : Sources) {
    // Only a load that an element-wise node of the domain's shape reads
    // directly: it is read at the chunk's own coordinates, so the load
    // emitted here is the one that node's lanes use.
    bool ReadHere = llvm::any_of(P.Nodes, [&](NodeId M) {
      const Node &Md = G.node(M);
      OpKind K = opKind(Md.Kind);
      return (K == OpKind::Unary || K == OpKind::Binary || K == OpKind::Ternary) &&
             llvm::ArrayRef<Dim>(Md.Dims) == Domain && llvm::is_contained(Md.Operands, N);
    });
    if (ReadHere)
      E.value(N, E.domainCoordsOf(N));
  }
}

void KernelWriter::storeOutputs(bool Vector, const std::string &Base) {
  if (Vector)
    hoistInputLoads();
  for (size_t O = 0; O < P.Outputs.size(); ++O) {
    NodeId N = P.Outputs[O];
    if (!domainOutput(N))
      continue; // per-row outputs are stored after the row loop
    if (!StoreOnly.empty() && !StoreOnly[O])
      continue;
    if (!G.stridesOf(N).empty()) {
      storeStrided(O, Vector);
      continue;
    }
    if (ScalarPart) {
      lanes(false, [&](int) {
        E.line(fmt::format("out_{}[{}] = {};", O, Base, storedValue(N)));
      });
      continue;
    }
    if (Vector && Vec > 1) {
      storeWide(O, Base);
      continue;
    }
    lanes(false, [&](int K) {
      std::string Idx = K ? fmt::format("{} + {}", Base, K) : Base;
      E.line(fmt::format("out_{}[{}] = {};", O, Idx, storedValue(N)));
    });
  }
}

void KernelWriter::storeWide(size_t O, const std::string &Base) {
  NodeId N = P.Outputs[O];
  std::string ST = storageType(G.node(N).Type);
  std::string SV = E.fresh("sv");
  E.line(fmt::format("jf_vec<{}, {}> {};", ST, Vec, SV));
  lanes(true, [&](int K) { E.line(fmt::format("{}.V[{}] = {};", SV, K, storedValue(N))); });
  // KernelPlan::GroupStores (set only for rows of concat pieces in 16-byte
  // chunks of 8): the lanes of a piece's row hold consecutive chunks
  // (elementwiseChunk: lane jf_q, chunk jf_q % the piece's chunks), a row's
  // lanes are all here or all gone, and a warp takes one piece, so no lane
  // of a group is in another branch. Per output: 16-bit and contiguous.
  bool Group = P.GroupStores && Peel && E.chunk() == ChunkKind::Whole && hoistableConcat() &&
               dtypeBytes(G.node(N).Type) == 2 && G.stridesOf(N).empty();
  if (Peel && E.pieceWrap()) {
    // Stored with the row's other pieces (pieceWrapPieces).
    std::string Addr = fmt::format("out_{} + {}", O, Base);
    bool Aligned = E.alignedWide(ST, Addr);
    WrapStores.push_back({O, ST, Addr, SV, Aligned});
  } else if (Group) {
    int64_t PieceChunks = P.ConcatPiece / Vec;
    E.line(fmt::format("jf_store_group<{}, {}, {}>(out_{} + {}, {}, jf_q % {});", ST, Vec,
                       PieceChunks, O, Base, SV, PieceChunks));
  } else if (Peel && E.chunk() == ChunkKind::Whole &&
             (E.alignedWide(ST, fmt::format("out_{} + {}", O, Base)) ||
              E.samePhaseOutput(O))) {
    E.line(fmt::format("jf_store_wide<{}, {}>(out_{} + {}, {});", ST, Vec, O, Base, SV));
  } else if (Peel) {
    E.line(fmt::format("jf_store_{}<{}, {}>(out_{} + {}, {}{});", chunkSuffix(E.chunk()), ST,
                       Vec, O, Base, SV, E.chunk() == ChunkKind::Whole ? "" : ", jf_lo, jf_hi"));
  } else {
    // A concat's branches store to the same address: NVVM sank both stores
    // past the branch and split them into 2-byte stores once the chunks of
    // RoPE's halves went piece by piece (bf16 3x slower, BENCHMARKS.md
    // schedule log); the PTX store keeps each branch's one wide store.
    E.line(fmt::format("jf_store{}<{}, {}>(out_{} + {}, {});",
                       hoistableConcat() ? "_wide" : "", ST, Vec, O, Base, SV));
  }
}

void KernelWriter::storeStrided(size_t O, bool Vector) {
  NodeId N = P.Outputs[O];
  const Node &Nd = G.node(N);
  Coords C = E.domainCoordsOf(N);
  // Consecutive lanes are consecutive elements when the last stride is 1
  // and the output has the domain's shape: one wide store, checked for
  // alignment per chunk (peeled) or guaranteed by the launch (aligned
  // variant: exec/LaunchTable.cpp checks dynamic strides).
  bool Wide = Vector && Vec > 1 && !ScalarPart && !C.Flat && !C.Relabeled && !C.Rank0 &&
              G.stridesOf(N).back().isStatic(1) && (Peel || E.stridedRowsAligned(N));
  if (Wide) {
    storeWide(O, E.address(N, C, Nd.Dims)); // lane 0's offset
    return;
  }
  // One element a lane, at the output's own coordinates; lanes outside a
  // peeled chunk store nothing.
  bool Guard = Peel && !ScalarPart && E.chunk() != ChunkKind::Whole;
  lanes(Vector, [&](int) {
    std::string Addr = E.address(N, E.ownCoords(N, C), Nd.Dims);
    std::string St = fmt::format("out_{}[{}] = {};", O, Addr, storedValue(N));
    E.line(Guard ? fmt::format("if {} {}", E.laneValid(), St) : St);
  });
}

void KernelWriter::tailElements(const std::function<void()> &Body) {
  // The last, partial chunk of a flat domain: its elements one at a time in
  // a loop, one copy of the body. A copy per lane (Vec of them, guarded)
  // doubled the NVRTC time of long element-wise chains (docs/MEASUREMENTS.md:
  // a 50-op chain's aligned variant 1267 -> 556 ms without it).
  std::string IT = E.indexType();
  E.open("for (int jf_k = 0; col + jf_k < n; ++jf_k)");
  E.line(fmt::format("const {} jf_tcol = col + jf_k;", IT));
  E.open("");
  E.line(fmt::format("[[maybe_unused]] const {} col = jf_tcol; // this element", IT));
  ScalarPart = true;
  Body();
  ScalarPart = false;
  E.close();
  E.close();
}

void KernelWriter::flatTail(const std::string &N,
                            const std::function<void(int)> &PerLane) {
  // The last chunk of a flat domain may be partial: guard each lane.
  E.setVectorLoads(false);
  for (int K = 0; K < Vec; ++K) {
    E.setLane(K);
    E.open(fmt::format("if (col + {} < {})", K, N));
    PerLane(K);
    E.close();
  }
  E.setLane(0);
  E.setVectorLoads(true);
}

std::string KernelWriter::write() {
  std::string Out = signature() + " {\n";
  if (P.StreamLoads)
    E.setL2Hint(2);
  switch (P.Kind) {
  case KernelKind::Elementwise:
    if (P.TransposeNode >= 0)
      transposeBody();
    else
      elementwiseBody();
    break;
  case KernelKind::RowReduce: rowBody(); break;
  case KernelKind::FullReduce: fullBody(); break;
  case KernelKind::ColumnReduce: columnReduceBody(G, P, E); break;
  }
  return Out + E.takeText() + "}\n";
}

void KernelWriter::elementwiseBody() {
  std::string IT = E.indexType();
  if (Vec > 1) {
    leadPhase();
    E.line(fmt::format("const {0} chunk = ({0})blockIdx.x * {1} + threadIdx.x;", IT,
                       threads()));
    elementwiseChunk("return");
    return;
  }
  // The scalar variant takes up to ScalarElemsPerThread elements per thread,
  // a grid's width apart (so every access stays coalesced), and keeps their
  // loads in flight together: one 2-byte element per thread left too few
  // bytes in flight (1.31 TB/s on a misaligned silu*mul, BENCHMARKS.md
  // "Shape sweep"). The launch rule picks the grid: large tensors get a
  // grid an 8th the size, small ones one element per thread (8 per thread
  // there would leave SMs idle). A full tile is straight-line code
  // (unrolled, no bound checks, so the loads can be issued before the first
  // store); a partial tile checks each element.
  int PerThread = launch::ScalarElemsPerThread;
  int Block = P.ThreadsX * P.RowsPerBlock;
  E.line(fmt::format("const {0} jf_stride = ({0})gridDim.x * {1};", IT, Block));
  E.line(fmt::format("const {0} jf_base = ({0})blockIdx.x * {1} + threadIdx.x;", IT, Block));
  E.open(fmt::format("if (jf_base + {} * jf_stride < ({})({}))", PerThread - 1, IT,
                     P.Flat ? numelExpr() : fmt::format("({}) * {}", rowsExpr(),
                                                        E.dimExpr(P.Domain.back()))));
  E.line("#pragma unroll");
  E.open(fmt::format("for (int jf_k = 0; jf_k < {}; ++jf_k)", PerThread));
  E.line(fmt::format("const {0} chunk = jf_base + ({0})jf_k * jf_stride;", IT));
  elementwiseChunk("");
  E.close();
  E.close();
  E.open("else");
  E.open(fmt::format("for (int jf_k = 0; jf_k < {}; ++jf_k)", PerThread));
  E.line(fmt::format("const {0} chunk = jf_base + ({0})jf_k * jf_stride;", IT));
  elementwiseChunk("break");
  E.close();
  E.close();
}

void KernelWriter::elementwiseChunk(llvm::StringRef Exit) {
  std::string IT = E.indexType();
  if (P.Flat && P.FlatTailThreads && !Peel && Vec > 1) {
    flatChunkOrTailElement(Exit);
    return;
  }
  if (P.Flat) {
    std::string N = numelExpr();
    E.line(fmt::format("const {} n = {};", IT, N));
    E.line(fmt::format("[[maybe_unused]] const {} col = chunk * {}{};", IT, Vec, Peel ? " - jf_off" : ""));
    if (!Exit.empty())
      E.line(fmt::format("if (col >= n) {};", Exit.str()));
    rowBroadcastColumn();
    if (Peel) {
      chunkLanes("n");
      storeOutputs(true, "col");
      E.setLaneGuard(false);
      return;
    }
    if (Vec == 1) {
      storeOutputs(false, "col");
      return;
    }
    E.open(fmt::format("if (col + {} <= n)", Vec));
    storeOutputs(true, "col");
    E.close();
    E.open("else");
    tailElements([&] {
      rowBroadcastColumn();
      storeOutputs(true, "col");
    });
    E.close();
    return;
  }
  std::string L = E.dimExpr(P.Domain.back());
  if (Peel && P.PieceWrapChunks && hoistableConcat()) {
    pieceWrapRow(Exit, L);
    return;
  }
  // Peeled: a row starts at its own phase, so it spans up to one chunk more
  // (not when its chunks stay at the row start, below).
  bool RowStartChunks = Peel && hoistableConcat();
  if (!Peel)
    E.line(fmt::format("const {} cpr = {} / {};", IT, L, Vec));
  else
    E.line(fmt::format("const {} cpr = ({} + {}) / {};", IT, L,
                       RowStartChunks ? Vec - 1 : 2 * Vec - 2, Vec));
  // Rows whose chunks go piece by piece (concatRowGroup, the launch rule's
  // own test): chunk = group, piece, row in the group, chunk in the piece.
  int64_t Group = concatRowGroup(P.ConcatPiece, Vec);
  int64_t PieceChunks = Group > 1 ? P.ConcatPiece / Vec : 0;
  if (Group > 1) {
    E.line(fmt::format("const {0} jf_g = chunk / ({1} * cpr);", IT, Group));
    E.line(fmt::format("const int jf_r = (int)(chunk - jf_g * ({} * cpr));", Group));
    E.line(fmt::format("const int jf_q = jf_r % {};", Group * PieceChunks));
    E.line(fmt::format("const {} row = jf_g * {} + jf_q / {};", IT, Group, PieceChunks));
    if (!Exit.empty())
      E.line(fmt::format("if (row >= ({})({})) {};", IT, rowsExpr(), Exit.str()));
  } else {
    if (!Exit.empty())
      E.line(fmt::format("if (chunk >= ({})({}) * cpr) {};", IT, rowsExpr(), Exit.str()));
    E.line(fmt::format("const {} row = chunk / cpr;", IT));
  }
  std::string RowChunk =
      Group > 1 ? fmt::format("(jf_r / {0} * {1} + jf_q % {1})", Group * PieceChunks, PieceChunks)
                : std::string("(chunk - row * cpr)");
  if (Peel) {
    // Chunks aligned to the lead's phase would straddle the pieces of a
    // row-wide concat whose pieces are Vec-aligned (RoPE's halves) and send
    // every lane down the per-lane concat path (0.61x of torch.compile on
    // offset pointers, BENCHMARKS.md run 5): such rows keep chunks at the
    // row start, and the misaligned tensors fall back per access instead.
    // Such chunks are not aligned to the lead either: no access may assume
    // it.
    if (RowStartChunks)
      E.setLeadInput(-1);
    E.line(RowStartChunks ? std::string("const int jf_o = 0;")
                             : fmt::format("const int jf_o = (int)((jf_off + row * {}) % {});",
                                           L, Vec));
    E.line(fmt::format("[[maybe_unused]] const {} col = {} * {} - jf_o;", IT, RowChunk, Vec));
    if (!Exit.empty())
      E.line(fmt::format("if (col >= {}) {};", L, Exit.str()));
    chunkLanes(L);
  } else {
    E.line(fmt::format("[[maybe_unused]] const {} col = {} * {};", IT, RowChunk, Vec));
  }
  outerCoords("row");
  std::string Base = fmt::format("row * {} + col", L);
  if (Peel && P.WholeChunkPaths && !RowStartChunks)
    wholeOrPartial([&] { storeChunk(Base); }, "true");
  else
    storeChunk(Base);
  E.setLaneGuard(false);
}

void KernelWriter::rowBroadcastColumn() {
  // FlatRowBroadcast: the column of `col` (down to 1 - Vec in the peeled
  // head chunk; H >= Vec), which the emitter's row-vector loads start at.
  if (P.FlatRowBroadcast)
    E.line(fmt::format("const {0} jf_m0 = (col + {1}) % {1};", E.indexType(),
                       P.FlatRowBroadcast));
}

void KernelWriter::flatChunkOrTailElement(llvm::StringRef Exit) {
  // FlatTailThreads: threads [0, n / Vec) take whole chunks; the next
  // n % Vec threads one element each of the last partial chunk (the launch
  // rule counts them), so no thread loops over the tail.
  std::string IT = E.indexType();
  E.line(fmt::format("const {} n = {};", IT, numelExpr()));
  E.line(fmt::format("const {} jf_full = n / {};", IT, Vec));
  E.line(fmt::format("[[maybe_unused]] const {0} col = chunk < jf_full ? chunk * {1} : jf_full * "
                     "{1} + (chunk - jf_full);",
                     IT, Vec));
  E.line(fmt::format("if (col >= n) {};", Exit.empty() ? "return" : Exit.str()));
  rowBroadcastColumn();
  E.open("if (chunk < jf_full)");
  storeOutputs(true, "col");
  E.close();
  E.open("else");
  ScalarPart = true;
  storeOutputs(true, "col");
  ScalarPart = false;
  E.close();
}

void KernelWriter::storeChunk(const std::string &Base) {
  // A concat over the whole row whose pieces are Vec-aligned picks one
  // operand per chunk: branch once here instead of per lane (RoPE's halves).
  for (NodeId N : P.Nodes) {
    if (ScalarPart || !isHoistableConcat(N))
      continue;
    const Node &Nd = G.node(N);
    int64_t Lo = 0, Hi = 0;
    ChunkKind Saved = E.chunk();
    bool MarkWhole = Peel && Saved == ChunkKind::Either && P.Kind == KernelKind::Elementwise;
    for (size_t I = 0; I < Nd.Operands.size(); ++I) {
      Hi += G.node(Nd.Operands[I]).Dims.back().Size;
      bool Last = I + 1 == Nd.Operands.size();
      // Peeled: a chunk off the operands' boundaries (a misaligned row)
      // takes the per-lane path below; in an element-wise kernel one inside
      // a piece is whole (col is in [0, row length - Vec]), so its accesses
      // are wide at any address (jf_load_whole, jf_store_whole) and never
      // branch per tensor.
      if (Peel)
        E.open(fmt::format("{}if (col >= {} && col + {} <= {})", I ? "else " : "", Lo, Vec, Hi));
      else
        E.open(Last ? "else" : fmt::format("{}if (col < {})", I ? "else " : "", Hi));
      if (MarkWhole)
        E.setChunk(ChunkKind::Whole);
      E.setConcatChoice(N, static_cast<int>(I));
      storeOutputs(true, Base);
      E.setChunk(Saved);
      E.close();
      Lo = Hi;
    }
    E.setConcatChoice(N, -1);
    if (Peel) {
      E.open("else");
      storeOutputs(true, Base);
      E.close();
    }
    return;
  }
  storeOutputs(true, Base);
}


std::string KernelWriter::leadPhaseExpr(int *LeadInput) const {
  // The lead is the tensor whose accesses the chunks align to (peelLeads);
  // the others check their own alignment per chunk.
  PeelLeads L = peelLeads(G, P);
  auto Phase = [&](llvm::StringRef Param, NodeId N) {
    return fmt::format("jf_phase<{}, {}>({})", storageType(G.node(N).Type), Vec, Param);
  };
  if (L.Output >= 0 && (OutputLed || L.Input < 0))
    return Phase(fmt::format("out_{}", L.Output), P.Outputs[L.Output]);
  if (L.Input < 0)
    return "0";
  if (LeadInput)
    *LeadInput = L.Input;
  return Phase(fmt::format("in_{}", L.Input), P.Inputs[L.Input]);
}

void KernelWriter::leadPhase() {
  if (!Peel)
    return;
  int LeadInput = -1;
  E.line(fmt::format("const int jf_off = {};", leadPhaseExpr(&LeadInput)));
  if (LeadInput >= 0)
    E.setLeadInput(LeadInput);
}

void KernelWriter::chunkLanes(const std::string &Extent) {
  E.line(fmt::format("const int jf_lo = col < 0 ? (int)-col : 0;"));
  E.line(fmt::format("const int jf_hi = col + {0} > {1} ? (int)({1} - col) : {0};", Vec,
                     Extent));
  E.setLaneGuard(true);
}

void KernelWriter::wholeOrPartial(const std::function<void()> &Body,
                                  const std::string &MayBePartial) {
  E.open(fmt::format("if ({} && (jf_lo != 0 || jf_hi != {}))", MayBePartial, Vec));
  E.setChunk(ChunkKind::Partial);
  Body();
  E.close();
  E.open("else");
  E.setChunk(ChunkKind::Whole);
  Body();
  E.close();
  E.setChunk(ChunkKind::Either);
}

void KernelWriter::accumulate(const std::string &Acc, Op Kind, const std::string &V) {
  std::string Next = Kind == Op::ReduceSum || Kind == Op::ReduceMean
                         ? fmt::format("{} + {}", Acc, V)
                         : fmt::format("{}({}, {})", Kind == Op::ReduceMax ? "jf_max" : "jf_min",
                                       Acc, V);
  // A lane outside the domain holds a value computed from zeros: keep the
  // accumulator as it was (adding 0 would turn a -0 sum into +0).
  if (E.chunk() == ChunkKind::Partial)
    E.line(fmt::format("{0} = {1} ? {2} : {0};", Acc, E.laneValid(), Next));
  else
    E.line(fmt::format("{} = {};", Acc, Next));
}

std::string KernelWriter::numelExpr() const {
  if (P.Domain.empty())
    return "1";
  Shape S(P.Domain.begin(), P.Domain.end());
  S.insert(S.begin(), Dim(1));
  return E.strideExpr(S, 0);
}

/// The comment block naming what kernel P computes and its parameters.
static std::string kernelHeader(const Graph &G, const KernelPlan &P) {
  std::string Out = fmt::format("// kernel {} ({}): computes\n", P.Name,
                                kernelKindNameImpl(P.Kind).str());
  for (NodeId N : P.Nodes)
    Out += "//   " + sanitizeComment(printNode(G, N)) + "\n";
  for (NodeId N : P.MixColumns)
    Out += "//   " + sanitizeComment(printNode(G, N)) + " (column partials)\n";
  for (size_t I = 0; I < P.Inputs.size(); ++I) {
    const Node &Nd = G.node(P.Inputs[I]);
    Out += fmt::format("// in_{} <- %{}{}\n", I, P.Inputs[I],
                       Nd.Kind == Op::Input
                           ? " input \"" + sanitizeComment(Nd.Name) + "\""
                           : "");
  }
  for (size_t I = 0; I < P.Outputs.size(); ++I)
    Out += fmt::format("// out_{} -> %{}\n", I, P.Outputs[I]);
  for (size_t I = 0; I < P.Scalars.size(); ++I)
    Out += fmt::format("// s_{} = scalar \"{}\"\n", I,
                       sanitizeComment(G.node(P.Scalars[I]).Name));
  for (size_t I = 0; I < P.DynDims.size(); ++I)
    Out += fmt::format("// d_{} = dim \"{}\"\n", I, sanitizeComment(P.DynDims[I]));
  return Out;
}

EmittedKernel emitKernel(const Graph &G, const KernelPlan &P) {
  EmittedKernel K{kernelHeader(G, P), {}, kernelParams(G, P), LaunchRule(P), std::nullopt,
                  std::nullopt, std::nullopt};
  using Variant = EmittedKernel::Variant;
  auto AddVariants = [&](const KernelPlan &Form, Variant::Form F, size_t Count) {
    for (size_t I = 0; I < Count; ++I) {
      bool Peeled = Form.peeledVariant(I), Led = Form.outputLedVariant(I);
      int V = Form.Vecs[I];
      K.Variants.push_back({V, Form.variantNameAt(I), KernelWriter(G, Form, V, Peeled, Led).write(),
                            F, Peeled, Led});
    }
  };
  // The launch fills one argument list for any form: same parameters.
  auto CheckTwin = [&](const KernelPlan &T) {
    std::vector<KernelParam> TP = kernelParams(G, T);
    JITFUSE_CHECK(TP.size() == K.Params.size() && T.Vecs == P.Vecs &&
                      std::equal(TP.begin(), TP.end(), K.Params.begin(),
                                 [](const KernelParam &A, const KernelParam &B) {
                                   return A.K == B.K && A.Index == B.Index && A.Type == B.Type;
                                 }),
                  "a kernel's other form has its parameters and variants");
  };
  AddVariants(P, Variant::Plain, P.Vecs.size());
  if (P.FewRows) {
    CheckTwin(*P.FewRows);
    K.FewRowsLaunch = LaunchRule(*P.FewRows);
    AddVariants(*P.FewRows, Variant::FewRows, P.Vecs.size());
  }
  if (P.WideRows) {
    CheckTwin(*P.WideRows);
    K.WideRowsLaunch = LaunchRule(*P.WideRows);
    AddVariants(*P.WideRows, Variant::WideRows, P.Vecs.size());
  }
  if (P.AlignedCluster) {
    CheckTwin(*P.AlignedCluster);
    JITFUSE_CHECK(P.AlignedClusterPeeled || !P.AlignedCluster->peeledVariant(0),
                  "a cluster split's one variant is aligned");
    K.AlignedClusterLaunch = LaunchRule(*P.AlignedCluster);
    K.AlignedClusterOverWide = P.AlignedClusterOverWide;
    AddVariants(*P.AlignedCluster, Variant::AlignedCluster, P.alignedClusterVariants());
  }
  return K;
}

} // namespace jitfuse::codegen

llvm::StringRef jitfuse::kernelKindName(KernelKind K) {
  return codegen::kernelKindNameImpl(K);
}
