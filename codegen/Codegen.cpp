//===- codegen/Codegen.cpp - kernel skeletons for the three kinds ---------===//
//
// Each kernel kind is a loop skeleton; the per-element code inside comes from
// the Emitter. Every kernel is emitted once per vector width in Plan.Vecs so
// the runtime can pick the widest one the pointers allow, without compiling
// again.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "codegen/ColumnReduce.h"

#include "codegen/Emitter.h"
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
    Out.push_back({KernelParam::Partials, 0, G.node(P.Outputs[0]).Type});
    Out.push_back({KernelParam::Counter, 0, DType::I32});
  }
  return Out;
}

namespace {

/// Writes one variant of one kernel.
class KernelWriter {
public:
  KernelWriter(const Graph &G, const KernelPlan &P, int Vec, bool Peeled)
      : G(G), P(P), Vec(Vec), E(G, P, Vec, Peeled), Peel(Peeled && Vec > 1) {}

  std::string write();

private:
  std::string signature();
  std::string threads() const {
    return std::to_string(P.ThreadsX * P.RowsPerBlock);
  }
  std::string rowsExpr() const;
  void outerCoords(const std::string &Row);
  void storeOutputs(bool Vector, const std::string &Base);
  /// The storage-type expression of whole-domain output N at the current
  /// lane.
  std::string storedValue(NodeId N);
  void elementwiseBody();
  /// One chunk of Vec elements at `chunk`; \p Exit leaves when it is past
  /// the end ("return", or "break" inside the scalar variant's loop; "" when
  /// the caller knows the chunk is inside).
  void elementwiseChunk(llvm::StringRef Exit);
  void rowBody();
  void fullBody();
  /// Peeled kernels: `const int jf_off`, the lead tensor's element phase.
  void leadPhase();
  /// Peeled kernels: `jf_lo`/`jf_hi`, the lanes of the chunk at `col` inside
  /// [0, \p Extent).
  void chunkLanes(const std::string &Extent);
  /// Accumulates lane values into a reduction, masked in peeled kernels.
  void accumulate(const std::string &Acc, Op Kind, const std::string &V);
  /// Iterations of a static row loop over the row's chunks (a peeled row's
  /// whole chunks are never more).
  int64_t staticRowIters() const;
  /// The row chunk index of the chunk loop's iteration j for this thread.
  std::string rowChunk() const;
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
  void flatTail(const std::string &N, const std::function<void(int)> &PerLane);
  std::string numelExpr() const;
  /// Loops over the thread's chunks of the row; peeled rows then over their
  /// head and tail elements, one per thread, unless \p OwnChunks (the
  /// register cache holds the whole chunks only).
  void rowLoop(const std::function<void()> &Body, bool OwnChunks = false);
  void rowStages(const std::map<NodeId, int> &Stages);
  void epilogueValues();

  const Graph &G;
  const KernelPlan &P;
  int Vec;
  Emitter E;
  bool Peel;
  /// Peeled rows: emitting the head/tail elements (one lane, scalar
  /// accesses) rather than a chunk.
  bool ScalarPart = false;
  /// Cached rows: registers holding a thread's head/tail element of each
  /// input (element expression -> variable), loaded with the chunks.
  std::map<std::string, std::string> ScalarCache;
  /// Values of P.CachedValues not yet stored by a stage's loop.
  std::vector<NodeId> KeepPending;
  /// Emits \p Body for the chunk at `col`: once for a whole chunk (no lane
  /// checks: the common case, kept free of per-lane selects that made long
  /// bf16 rows issue-bound) and once for a partial one (guarded lanes).
  /// \p MayBePartial: a static condition (on the unrolled j) outside which
  /// no chunk is partial, so the partial copy folds away there.
  void wholeOrPartial(const std::function<void()> &Body,
                      const std::string &MayBePartial = "true");
};

std::string KernelWriter::signature() {
  std::string S = fmt::format(
      "extern \"C\" __global__ void __launch_bounds__({}){} {}(", threads(),
      P.ClusterX > 1 ? fmt::format(" __cluster_dims__({}, 1, 1)", P.ClusterX) : "",
      P.variantName(Vec, Peel));
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
                                                E.value(Nd.Operands[0], E.domainCoords())));
  }
  return storeConvert(Nd.Type, E.value(N, E.domainCoords()));
}

void KernelWriter::storeOutputs(bool Vector, const std::string &Base) {
  for (size_t O = 0; O < P.Outputs.size(); ++O) {
    NodeId N = P.Outputs[O];
    const Node &Nd = G.node(N);
    if (llvm::ArrayRef<Dim>(Nd.Dims) != llvm::ArrayRef<Dim>(P.Domain))
      continue; // per-row outputs are stored after the row loop
    std::string ST = storageType(Nd.Type);
    if (ScalarPart) {
      lanes(false, [&](int) {
        E.line(fmt::format("out_{}[{}] = {};", O, Base, storedValue(N)));
      });
      continue;
    }
    if (Vector && Vec > 1) {
      std::string SV = E.fresh("sv");
      E.line(fmt::format("jf_vec<{}, {}> {};", ST, Vec, SV));
      lanes(true, [&](int K) {
        E.line(fmt::format("{}.V[{}] = {};", SV, K, storedValue(N)));
      });
      if (Peel)
        E.line(fmt::format("jf_store_{}<{}, {}>(out_{} + {}, {}{});", chunkSuffix(E.chunk()), ST,
                           Vec, O, Base, SV,
                           E.chunk() == ChunkKind::Whole ? "" : ", jf_lo, jf_hi"));
      else
        E.line(fmt::format("jf_store<{}, {}>(out_{} + {}, {});", ST, Vec, O, Base, SV));
      continue;
    }
    lanes(false, [&](int K) {
      std::string Idx = K ? fmt::format("{} + {}", Base, K) : Base;
      E.line(fmt::format("out_{}[{}] = {};", O, Idx, storedValue(N)));
    });
  }
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
  switch (P.Kind) {
  case KernelKind::Elementwise: elementwiseBody(); break;
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
  if (P.Flat) {
    std::string N = numelExpr();
    E.line(fmt::format("const {} n = {};", IT, N));
    E.line(fmt::format("const {} col = chunk * {}{};", IT, Vec, Peel ? " - jf_off" : ""));
    if (!Exit.empty())
      E.line(fmt::format("if (col >= n) {};", Exit.str()));
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
    // The last, partial chunk: its elements one at a time in a loop, one
    // copy of the body. A copy per lane (Vec of them, guarded) doubled the
    // NVRTC time of long element-wise chains (docs/MEASUREMENTS.md: a 50-op
    // chain's aligned variant 1267 -> 556 ms without it).
    E.open("else");
    E.open("for (int jf_k = 0; col + jf_k < n; ++jf_k)");
    E.line(fmt::format("const {} jf_tcol = col + jf_k;", IT));
    E.open("");
    E.line(fmt::format("const {} col = jf_tcol; // this element", IT));
    ScalarPart = true;
    storeOutputs(true, "col");
    ScalarPart = false;
    E.close();
    E.close();
    E.close();
    return;
  }
  std::string L = E.dimExpr(P.Domain.back());
  // Peeled: a row starts at its own phase, so it spans up to one chunk more.
  E.line(Peel ? fmt::format("const {} cpr = ({} + {}) / {};", IT, L, 2 * Vec - 2, Vec)
              : fmt::format("const {} cpr = {} / {};", IT, L, Vec));
  if (!Exit.empty())
    E.line(fmt::format("if (chunk >= ({})({}) * cpr) {};", IT, rowsExpr(), Exit.str()));
  E.line(fmt::format("const {} row = chunk / cpr;", IT));
  if (Peel) {
    // Chunks aligned to the lead's phase would straddle the pieces of a
    // row-wide concat whose pieces are Vec-aligned (RoPE's halves) and send
    // every lane down the per-lane concat path (0.61x of torch.compile on
    // offset pointers, BENCHMARKS.md run 5): such rows keep chunks at the
    // row start, and the misaligned tensors fall back per access instead.
    E.line(hoistableConcat() ? std::string("const int jf_o = 0;")
                             : fmt::format("const int jf_o = (int)((jf_off + row * {}) % {});",
                                           L, Vec));
    E.line(fmt::format("const {} col = (chunk - row * cpr) * {} - jf_o;", IT, Vec));
    if (!Exit.empty())
      E.line(fmt::format("if (col >= {}) {};", L, Exit.str()));
    chunkLanes(L);
  } else {
    E.line(fmt::format("const {} col = (chunk - row * cpr) * {};", IT, Vec));
  }
  outerCoords("row");
  std::string Base = fmt::format("row * {} + col", L);
  // A concat over the whole row whose pieces are Vec-aligned picks one
  // operand per chunk: branch once here instead of per lane (RoPE's halves).
  for (NodeId N : P.Nodes) {
    if (!isHoistableConcat(N))
      continue;
    const Node &Nd = G.node(N);
    int64_t Lo = 0, Hi = 0;
    for (size_t I = 0; I < Nd.Operands.size(); ++I) {
      Hi += G.node(Nd.Operands[I]).Dims.back().Size;
      bool Last = I + 1 == Nd.Operands.size();
      // Peeled: a chunk off the operands' boundaries (a misaligned row)
      // takes the per-lane path below.
      if (Peel)
        E.open(fmt::format("{}if (col >= {} && col + {} <= {})", I ? "else " : "", Lo, Vec, Hi));
      else
        E.open(Last ? "else" : fmt::format("{}if (col < {})", I ? "else " : "", Hi));
      E.setConcatChoice(N, static_cast<int>(I));
      storeOutputs(true, Base);
      E.close();
      Lo = Hi;
    }
    E.setConcatChoice(N, -1);
    if (Peel) {
      E.open("else");
      storeOutputs(true, Base);
      E.close();
      E.setLaneGuard(false);
    }
    return;
  }
  storeOutputs(true, Base);
  E.setLaneGuard(false);
}

void KernelWriter::leadPhase() {
  if (!Peel)
    return;
  // The lead is the tensor whose accesses the chunks align to: the first
  // input over the whole domain (loads are most of the traffic), else such
  // an output. The others check their own alignment per chunk.
  auto Whole = [&](NodeId N) {
    const Node &Nd = G.node(N);
    return llvm::ArrayRef<Dim>(Nd.Dims) == llvm::ArrayRef<Dim>(P.Domain) ||
           (P.Flat && staticNumel(Nd.Dims) != std::optional<int64_t>(1));
  };
  for (size_t I = 0; I < P.Inputs.size(); ++I)
    if (Whole(P.Inputs[I])) {
      E.line(fmt::format("const int jf_off = jf_phase<{}, {}>(in_{});",
                         storageType(G.node(P.Inputs[I]).Type), Vec, I));
      E.setLeadInput(static_cast<int>(I));
      return;
    }
  for (size_t O = 0; O < P.Outputs.size(); ++O)
    if (Whole(P.Outputs[O])) {
      E.line(fmt::format("const int jf_off = jf_phase<{}, {}>(out_{});",
                         storageType(G.node(P.Outputs[O]).Type), Vec, O));
      return;
    }
  E.line("const int jf_off = 0;");
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

std::string KernelWriter::rowChunk() const {
  // A row split over a cluster: block `jf_rank` takes every ClusterX-th span
  // of ThreadsX chunks.
  std::string IT = E.indexType();
  if (P.ClusterX > 1)
    return fmt::format("((({0})j * {1} + jf_rank) * {2} + tx)", IT, P.ClusterX, P.ThreadsX);
  return fmt::format("(({0})j * {1} + tx)", IT, P.ThreadsX);
}

int64_t KernelWriter::staticRowIters() const {
  int64_t Span = int64_t(P.ThreadsX) * Vec * P.ClusterX;
  return (P.Domain.back().Size + Span - 1) / Span;
}

std::string KernelWriter::numelExpr() const {
  if (P.Domain.empty())
    return "1";
  Shape S(P.Domain.begin(), P.Domain.end());
  S.insert(S.begin(), Dim(1));
  return E.strideExpr(S, 0);
}

/// Reduction stages of a row cluster: a reduction runs in the stage after
/// every reduction its operand depends on.
static std::map<NodeId, int> reductionStages(const Graph &G,
                                             const KernelPlan &P) {
  std::map<NodeId, int> Avail, Stage;
  for (NodeId N : P.Nodes) {
    int A = 0;
    for (NodeId O : G.node(N).Operands)
      if (auto It = Avail.find(O); It != Avail.end())
        A = std::max(A, It->second);
    if (isReduction(G.node(N).Kind)) {
      Stage[N] = A;
      A += 1;
    }
    Avail[N] = A;
  }
  return Stage;
}

void KernelWriter::rowLoop(const std::function<void()> &Body, bool OwnChunks) {
  std::string IT = E.indexType();
  int64_t Span = int64_t(P.ThreadsX) * Vec * P.ClusterX;
  const Dim &R = P.Domain.back();
  if (Peel) {
    // Whole chunks only, aligned to the lead (no lane checks, no partial
    // copy of the body: a warp holding a row's first or last chunk ran both
    // copies, and the chunk a shifted row adds was re-read in every stage);
    // the row's head and tail elements follow, one per thread.
    std::string Guard = fmt::format("const {} jf_c = {};", IT, rowChunk());
    E.setChunk(ChunkKind::Whole);
    if (R.isDynamic()) {
      E.open(fmt::format("for ({0} j = 0; ({0})j * {1} + tx < jf_nw; ++j)", IT, P.ThreadsX));
      E.line(fmt::format("const {0} col = jf_h + (({0})j * {1} + tx) * {2};", IT, P.ThreadsX,
                         Vec));
      Body();
      E.close();
    } else {
      int64_t Iters = staticRowIters();
      if (Iters <= 16)
        E.line("#pragma unroll");
      E.open(fmt::format("for (int j = 0; j < {}; ++j)", Iters));
      E.line(Guard);
      E.open("if (jf_c < jf_nw)");
      E.line(fmt::format("const {} col = jf_h + jf_c * {};", IT, Vec));
      Body();
      E.close();
      E.close();
    }
    E.setChunk(ChunkKind::Either);
    if (OwnChunks)
      return;
    const std::map<std::string, std::string> *Cache = E.rowCache();
    E.setRowCache(nullptr);
    ScalarPart = true;
    E.setKeptActive(false);
    E.setScalarLoads(true, ScalarCache.empty() ? nullptr : &ScalarCache);
    // With enough threads each takes at most one element (the cached case).
    if (P.ThreadsX >= 2 * (Vec - 1))
      E.open("if (" + rankZero("tx < jf_ns") + ")");
    else
      E.open(fmt::format("for (int jf_e = tx; jf_e < jf_ns; jf_e += {})", P.ThreadsX));
    if (P.ThreadsX >= 2 * (Vec - 1))
      E.line("const int jf_e = tx;");
    E.line(fmt::format("const {0} col = jf_e < jf_h ? ({0})jf_e : jf_e + jf_nw * {1};", IT,
                       Vec));
    Body();
    E.close();
    ScalarPart = false;
    E.setScalarLoads(false, nullptr);
    E.setKeptActive(true);
    E.setRowCache(Cache);
    return;
  }
  if (R.isDynamic()) {
    E.open(fmt::format("for ({0} j = 0; (({0})j * {1} + tx) * {2} < R; ++j)", IT,
                       P.ThreadsX, Vec));
    E.line(fmt::format("const {0} col = (({0})j * {1} + tx) * {2};", IT, P.ThreadsX, Vec));
    Body();
    E.close();
    return;
  }
  int64_t Iters = staticRowIters();
  if (Iters <= 16)
    E.line("#pragma unroll");
  E.open(fmt::format("for (int j = 0; j < {}; ++j)", Iters));
  E.line(fmt::format("const {} col = {} * {};", IT, rowChunk(), Vec));
  if (R.Size % Span != 0) {
    E.open("if (col < R)");
    Body();
    E.close();
  } else {
    Body();
  }
  E.close();
}

void KernelWriter::rowStages(const std::map<NodeId, int> &Stages) {
  int NumStages = 0;
  for (auto &[N, S] : Stages)
    NumStages = std::max(NumStages, S + 1);
  for (int S = 0; S < NumStages; ++S) {
    std::vector<NodeId> Reds;
    for (NodeId N : P.Nodes)
      if (auto It = Stages.find(N); It != Stages.end() && It->second == S)
        Reds.push_back(N);
    for (NodeId N : Reds) {
      const Node &Nd = G.node(N);
      E.line(fmt::format("{} acc{} = {};", computeType(Nd.Type), N,
                         reduceIdentity(Nd.Kind, Nd.Type)));
    }
    E.open("if (rowOk)");
    std::set<NodeId> StoredNow;
    rowLoop([&] {
      lanes(true, [&](int K) {
        for (NodeId N : Reds) {
          const Node &Nd = G.node(N);
          const Node &Op = G.node(Nd.Operands[0]);
          std::string V = promoteValue(
              Op.Type, Nd.Type,
              E.value(Nd.Operands[0], E.domainCoords()));
          accumulate("acc" + std::to_string(N), Nd.Kind, V);
        }
        // The first loop that computes a kept value stores it for the
        // later ones.
        if (ScalarPart)
          return;
        for (NodeId N : KeepPending)
          if (E.emitted(N, E.domainCoords())) {
            E.line(fmt::format("kv{}[j].V[{}] = {};", N, K, E.value(N, E.domainCoords())));
            StoredNow.insert(N);
          }
      });
    });
    E.close();
    for (NodeId N : StoredNow) {
      E.keepValue(N, "kv" + std::to_string(N));
      KeepPending.erase(std::find(KeepPending.begin(), KeepPending.end(), N));
    }
    for (NodeId N : Reds) {
      const Node &Nd = G.node(N);
      std::string AT = computeType(Nd.Type);
      std::string Red =
          P.ThreadsX <= 32
              ? fmt::format("jf_group_reduce<{}>(acc{}, {})", P.ThreadsX, N,
                            reduceFunctor(Nd.Kind))
              : fmt::format("jf_block_reduce<{}>(acc{}, {}, {}, jf_smem{})",
                            P.ThreadsX, N, reduceFunctor(Nd.Kind),
                            reduceIdentity(Nd.Kind, Nd.Type), N);
      if (P.ClusterX > 1) {
        // Each block's result to its slot; after the cluster barrier every
        // block combines all slots in rank order (the same value in each).
        E.line(fmt::format("const {} blk{} = {};", AT, N, Red));
        E.line(fmt::format("if (tx == 0) jf_cl{0} = blk{0};", N));
        continue;
      }
      if (Nd.Kind == Op::ReduceMean)
        Red = fmt::format("{} / ({})R", Red, AT);
      E.line(fmt::format("const {} red{} = {};", AT, N, Red));
      E.setReduced(N, "red" + std::to_string(N));
    }
    if (P.ClusterX > 1) {
      E.line("jf_cluster_sync();");
      for (NodeId N : Reds) {
        const Node &Nd = G.node(N);
        std::string AT = computeType(Nd.Type);
        E.line(fmt::format("{} red{} = jf_dsm_load(&jf_cl{}, 0u);", AT, N, N));
        for (int K = 1; K < P.ClusterX; ++K)
          E.line(fmt::format("red{0} = {1}(red{0}, jf_dsm_load(&jf_cl{0}, {2}u));", N,
                             reduceFunctor(Nd.Kind), K));
        if (Nd.Kind == Op::ReduceMean)
          E.line(fmt::format("red{0} = red{0} / ({1})R;", N, AT));
        E.setReduced(N, "red" + std::to_string(N));
      }
    }
  }
}

void KernelWriter::rowBody() {
  std::string IT = E.indexType();
  std::map<NodeId, int> Stages = reductionStages(G, P);
  if (P.ThreadsX > 32)
    for (auto &[N, S] : Stages)
      E.line(fmt::format("__shared__ {} jf_smem{}[{}];",
                         computeType(G.node(N).Type), N, P.ThreadsX / 32 + 1));
  if (P.ClusterX > 1)
    for (auto &[N, S] : Stages)
      E.line(fmt::format("__shared__ {} jf_cl{};", computeType(G.node(N).Type), N));
  E.line("const int tx = threadIdx.x;");
  if (P.ClusterX > 1) {
    E.line(fmt::format("const {0} row = ({0})(blockIdx.x / {1});", IT, P.ClusterX));
    E.line("const unsigned jf_rank = jf_cluster_rank();");
  } else {
    E.line(fmt::format("const {0} row = ({0})blockIdx.x * {1} + threadIdx.y;", IT,
                       P.RowsPerBlock));
  }
  E.line(fmt::format("const bool rowOk = row < ({})({});", IT, rowsExpr()));
  E.line(fmt::format("const {} rowc = rowOk ? row : 0;", IT));
  E.line(fmt::format("const {} R = {};", IT, E.dimExpr(P.Domain.back())));
  if (Peel) {
    leadPhase();
    E.line(fmt::format("const int jf_o = (int)((jf_off + rowc * R) % {});", Vec));
    // The row's whole chunks start jf_h elements in, where the lead is
    // aligned; the jf_ns elements before and after them go one per thread.
    E.line(fmt::format("const int jf_h0 = ({0} - jf_o) % {0};", Vec));
    E.line("const int jf_h = jf_h0 < R ? jf_h0 : (int)R;");
    E.line(fmt::format("const {} jf_nw = (R - jf_h) / {};", IT, Vec));
    E.line(fmt::format("const int jf_ns = (int)(R - jf_nw * {});", Vec));
  }
  outerCoords("rowc");

  // Keep the row's loads in registers between stages when they fit: a dry
  // run of the stages finds which loads there are.
  std::map<std::string, std::string> CacheVars;
  if (P.CacheRow && !P.Domain.back().isDynamic()) {
    KernelWriter Dry(G, P, Vec, Peel);
    Dry.E.setLeadInput(E.leadInput());
    Dry.KeepPending = P.CachedValues;
    Dry.rowStages(Stages);
    Dry.rowLoop([&] { Dry.lanes(true, [&](int) { Dry.epilogueValues(); }); });
    int64_t Iters = staticRowIters();
    for (const RowLoad &L : Dry.E.seenRowLoads()) {
      std::string Var = "cv" + std::to_string(CacheVars.size());
      E.line(fmt::format("jf_vec<{}, {}> {}[{}];",
                         storageType(G.node(P.Inputs[L.InputIdx]).Type), Vec,
                         Var, Iters));
      CacheVars[L.Key] = Var;
    }
    if (!CacheVars.empty()) {
      E.open("if (rowOk)");
      rowLoop([&] {
        for (const RowLoad &L : Dry.E.seenRowLoads()) {
          std::string ST = storageType(G.node(P.Inputs[L.InputIdx]).Type);
          std::string Fn = "jf_load";
          if (Peel && !(L.Lead && E.chunk() == ChunkKind::Whole))
            Fn += std::string("_") + chunkSuffix(E.chunk());
          bool Lanes = Peel && E.chunk() != ChunkKind::Whole;
          E.line(fmt::format("{}[j] = {}<{}, {}>(in_{}{} + col{});", CacheVars[L.Key], Fn, ST,
                             Vec, L.InputIdx, L.Address.empty() ? "" : " + " + L.Address,
                             Lanes ? ", jf_lo, jf_hi" : ""));
        }
      }, /*OwnChunks=*/true);
      E.close();
      E.setRowCache(&CacheVars);
    }
    // A peeled row's head and tail elements (one a thread when there are
    // enough threads) are loaded with the chunks too: read in each stage,
    // they put a memory round trip before every block-wide reduction (f32
    // rows of 4096 at +4 B ran 1.2x the aligned time).
    if (Peel && P.ThreadsX >= 2 * (Vec - 1) && !Dry.E.seenScalarLoads().empty()) {
      for (const Emitter::ScalarLoad &L : Dry.E.seenScalarLoads()) {
        std::string Var = "cs" + std::to_string(ScalarCache.size());
        E.line(fmt::format("{} {} = 0;", storageType(L.Type), Var));
        ScalarCache[L.Elem] = Var;
      }
      E.open("if (rowOk && " + rankZero("tx < jf_ns") + ")");
      E.line(fmt::format("const {0} col = tx < jf_h ? ({0})tx : tx + jf_nw * {1};", IT, Vec));
      for (const Emitter::ScalarLoad &L : Dry.E.seenScalarLoads())
        E.line(fmt::format("{} = {};", ScalarCache[L.Elem], L.Elem));
      E.close();
    }
    for (NodeId N : P.CachedValues)
      E.line(fmt::format("jf_vec<{}, {}> kv{}[{}];", computeType(G.node(N).Type), Vec, N, Iters));
    KeepPending = P.CachedValues;
  }
  rowStages(Stages);
  E.open("if (rowOk)");
  rowLoop([&] { storeOutputs(true, "rowc * R + col"); });
  // Per-row outputs ([outer..., 1]) are written once per row.
  Coords PerRow = E.domainCoords();
  PerRow.ColRel = false;
  PerRow.Last = "0";
  bool Any = false;
  for (size_t O = 0; O < P.Outputs.size(); ++O) {
    const Node &Nd = G.node(P.Outputs[O]);
    if (llvm::ArrayRef<Dim>(Nd.Dims) == llvm::ArrayRef<Dim>(P.Domain))
      continue;
    if (!Any)
      E.open("if (" + rankZero("tx == 0") + ")");
    Any = true;
    std::string V = E.value(P.Outputs[O], PerRow);
    E.line(fmt::format("out_{}[rowc] = {};", O, storeConvert(Nd.Type, V)));
  }
  if (Any)
    E.close();
  E.close();
  // No block of the cluster leaves while another may still read its
  // shared memory.
  if (P.ClusterX > 1)
    E.line("jf_cluster_sync();");
}

void KernelWriter::epilogueValues() {
  for (NodeId N : P.Outputs)
    if (llvm::ArrayRef<Dim>(G.node(N).Dims) == llvm::ArrayRef<Dim>(P.Domain))
      E.value(N, E.domainCoords());
}

void KernelWriter::fullBody() {
  std::string IT = E.indexType();
  NodeId Red = P.Outputs[0];
  const Node &Nd = G.node(Red);
  const Node &Op = G.node(Nd.Operands[0]);
  std::string AT = computeType(Nd.Type);
  std::string Ident = reduceIdentity(Nd.Kind, Nd.Type);
  int NT = P.ThreadsX;
  E.line(fmt::format("__shared__ {} jf_smem[{}];", AT, NT / 32 + 1));
  E.line("__shared__ bool jf_last;");
  E.line(fmt::format("{} acc = {};", AT, Ident));
  std::string N = numelExpr();
  E.line(fmt::format("const {} n = {};", IT, N));
  auto Accumulate = [&](int) {
    std::string V = promoteValue(Op.Type, Nd.Type,
                                 E.value(Nd.Operands[0], E.domainCoords()));
    accumulate("acc", Nd.Kind, V);
  };
  std::string L = P.Domain.empty() ? "1" : E.dimExpr(P.Domain.back());
  leadPhase();
  if (P.Flat) {
    E.line(fmt::format("const {} nchunks = (n + {}{}) / {};", IT, Peel ? "jf_off + " : "",
                       Vec - 1, Vec));
  } else {
    E.line(Peel ? fmt::format("const {} cpr = ({} + {}) / {};", IT, L, 2 * Vec - 2, Vec)
                : fmt::format("const {} cpr = {} / {};", IT, L, Vec));
    E.line(fmt::format("const {} nchunks = ({})({}) * cpr;", IT, IT, rowsExpr()));
  }
  E.open(fmt::format("for ({0} chunk = ({0})blockIdx.x * {1} + threadIdx.x; "
                     "chunk < nchunks; chunk += ({0})gridDim.x * {1})",
                     IT, NT));
  if (Peel && P.Flat) {
    E.line(fmt::format("const {} col = chunk * {} - jf_off;", IT, Vec));
    chunkLanes("n");
    wholeOrPartial([&] { lanes(true, Accumulate); });
    E.setLaneGuard(false);
  } else if (Peel) {
    E.line(fmt::format("const {} row = chunk / cpr;", IT));
    E.line(fmt::format("const int jf_o = (int)((jf_off + row * {}) % {});", L, Vec));
    E.line(fmt::format("const {} col = (chunk - row * cpr) * {} - jf_o;", IT, Vec));
    E.open(fmt::format("if (col < {})", L));
    chunkLanes(L);
    outerCoords("row");
    wholeOrPartial([&] { lanes(true, Accumulate); });
    E.setLaneGuard(false);
    E.close();
  } else if (P.Flat) {
    E.line(fmt::format("const {} col = chunk * {};", IT, Vec));
    if (Vec == 1) {
      lanes(false, Accumulate);
    } else {
      E.open(fmt::format("if (col + {} <= n)", Vec));
      lanes(true, Accumulate);
      E.close();
      E.open("else");
      flatTail("n", Accumulate);
      E.close();
    }
  } else {
    E.line(fmt::format("const {} row = chunk / cpr;", IT));
    E.line(fmt::format("const {} col = (chunk - row * cpr) * {};", IT, Vec));
    outerCoords("row");
    lanes(true, Accumulate);
  }
  E.close();
  // Stage 2, deterministic: fixed per-block partials, summed in a fixed
  // order by the last block to finish.
  std::string F = reduceFunctor(Nd.Kind);
  E.line(fmt::format("acc = jf_block_reduce<{}>(acc, {}, {}, jf_smem);", NT, F, Ident));
  E.open("if (threadIdx.x == 0)");
  E.line("jf_partials[blockIdx.x] = acc;");
  E.line("__threadfence();");
  E.line("jf_last = atomicAdd(jf_counter, 1u) == gridDim.x - 1;");
  E.close();
  E.line("__syncthreads();");
  E.line("if (!jf_last) return;");
  E.line("__threadfence();");
  E.line(fmt::format("{} tot = {};", AT, Ident));
  E.open(fmt::format("for (unsigned i = threadIdx.x; i < gridDim.x; i += {})", NT));
  E.line(fmt::format("tot = {}(tot, ((volatile {}*)jf_partials)[i]);", F, AT));
  E.close();
  E.line(fmt::format("tot = jf_block_reduce<{}>(tot, {}, {}, jf_smem);", NT, F, Ident));
  E.open("if (threadIdx.x == 0)");
  if (Nd.Kind == Op::ReduceMean)
    E.line(fmt::format("tot = tot / ({})n;", AT));
  E.line(fmt::format("out_0[0] = {};", storeConvert(Nd.Type, "tot")));
  E.line("*jf_counter = 0u; // ready for the next launch");
  E.close();
}

} // namespace

/// The comment block naming what kernel P computes and its parameters.
static std::string kernelHeader(const Graph &G, const KernelPlan &P) {
  std::string Out = fmt::format("// kernel {} ({}): computes\n", P.Name,
                                kernelKindNameImpl(P.Kind).str());
  for (NodeId N : P.Nodes)
    Out += "//   " + sanitizeComment(printNode(G, N)) + "\n";
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
  EmittedKernel K{kernelHeader(G, P), {}, kernelParams(G, P), LaunchRule(P)};
  for (size_t I = 0; I < P.Vecs.size(); ++I) {
    bool Peeled = P.peeledVariant(I);
    int V = P.Vecs[I];
    K.Variants.push_back({V, P.variantName(V, Peeled), KernelWriter(G, P, V, Peeled).write()});
  }
  return K;
}

} // namespace jitfuse::codegen

llvm::StringRef jitfuse::kernelKindName(KernelKind K) {
  return codegen::kernelKindNameImpl(K);
}
