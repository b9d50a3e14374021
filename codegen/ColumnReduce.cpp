//===- codegen/ColumnReduce.cpp - the column reduction kernel body --------===//
//
// Bandwidth: a column sum reads every element once, so what matters is bytes
// in flight. A thread's columns are one 16-byte vector (a warp reads 512
// contiguous bytes of a row), it issues ColumnUnroll rows' loads before
// their adds, and the reduced axis is split across blocks whenever the
// column tiles alone would leave the GPU idle (columnSplits). Partials go
// through a scratch buffer, and the last block of each column tile to
// arrive adds them in split order 0, 1, ...: which block arrives last only
// picks who adds, never the order, so results are bitwise reproducible (no
// atomics on values; a second kernel would cost a launch and a grid sync
// for the same order).
//
//===----------------------------------------------------------------------===//
#include "codegen/ColumnReduce.h"

#include "codegen/LaunchRule.h"
#include "codegen/Spelling.h"
#include "support/Error.h"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>

#include <functional>

namespace jitfuse::codegen {

NodeId reductionOf(const Graph &G, const KernelPlan &P) {
  for (NodeId N : P.Nodes)
    if (isReduction(G.node(N).Kind))
      return N;
  JITFUSE_UNREACHABLE("a reduction kernel without its reduction");
}

std::vector<NodeId> reductionsOf(const Graph &G, const KernelPlan &P) {
  std::vector<NodeId> Out;
  for (NodeId N : P.Nodes)
    if (isReduction(G.node(N).Kind))
      Out.push_back(N);
  JITFUSE_CHECK(!Out.empty(), "a reduction kernel without its reduction");
  return Out;
}

bool readsResult(const Graph &G, NodeId O, NodeId Red,
                 llvm::function_ref<bool(NodeId)> InKernel) {
  if (O == Red)
    return true;
  return llvm::any_of(G.node(O).Operands, [&](NodeId A) {
    return InKernel(A) && readsResult(G, A, Red, InKernel);
  });
}

void columnReduceBody(const Graph &G, const KernelPlan &P, Emitter &E) {
  // The outputs are the reductions' [1, C] results, reshapes of them
  // (compiler/Fusion.cpp: the same values at the same linear index) and,
  // with one reduction, element-wise work on it (ColumnReduceEpilogue).
  // Sibling reductions (SiblingColumnReductions) share the loads, the tile
  // and the split; each has its own accumulators, partials and combine.
  std::vector<NodeId> Reds = reductionsOf(G, P);
  NodeId Red = Reds.front();
  size_t NR = Reds.size();
  JITFUSE_CHECK(P.Domain.size() == 2 && !P.Outputs.empty(),
                "a column reduction reduces axis 0 of [R, C] to its outputs");
  JITFUSE_CHECK(P.ThreadsX == launch::ColumnThreads &&
                    P.RowsPerBlock == launch::ColumnRowThreads,
                "column reductions launch ColumnThreads x ColumnRowThreads");
  int W = P.ColumnWidth, Vec = E.vec();
  JITFUSE_CHECK(W >= 1 && (Vec == 1 || Vec == W),
                "a column reduction's variants are its column width and scalar");
  std::string IT = E.indexType();
  const Node &Nd = G.node(Red);
  std::string AT = computeType(Nd.Type);
  for (NodeId R : Reds)
    JITFUSE_CHECK(computeType(G.node(R).Type) == AT,
                  "sibling column reductions share one accumulator type (jf_partials)");
  auto Ident = [&](size_t R) { return reduceIdentity(G.node(Reds[R]).Kind, G.node(Reds[R]).Type); };
  auto F = [&](size_t R) { return reduceFunctor(G.node(Reds[R]).Kind); };
  int NX = P.ThreadsX, NY = P.RowsPerBlock, U = launch::ColumnUnroll;
  int Tile = NX * W, Threads = NX * NY;
  // The row threads' partials, by reduction and column of the tile.
  // One reduction keeps the one-reduction spellings (acc[j], not acc[0][j]).
  auto Ix = [&](size_t R) { return NR == 1 ? std::string() : fmt::format("[{}]", R); };
  std::string PerRed = Ix(NR); // the arrays' leading extent
  E.line(fmt::format("__shared__ {} jf_col{}[{}][{}];", AT, PerRed, NY, Tile));
  E.line("__shared__ bool jf_last;");
  E.line(fmt::format("const {} nrows = {};", IT, E.dimExpr(P.Domain[0])));
  E.line(fmt::format("const {} ncols = {};", IT, E.dimExpr(P.Domain[1])));
  // The launch rule's grid: split-major blocks, columnSplits(R, C) splits.
  E.line(fmt::format("const {0} tiles = (ncols + {1}) / {2};", IT, Tile - 1, Tile));
  E.line(fmt::format("const {0} nsplit = ({0})gridDim.x / tiles;", IT));
  E.line(fmt::format("const {0} tile = ({0})blockIdx.x % tiles;", IT));
  E.line(fmt::format("const {0} split = ({0})blockIdx.x / tiles;", IT));
  E.line(fmt::format("const {} rps = (nrows + nsplit - 1) / nsplit;", IT));
  E.line(fmt::format("const {} r0 = split * rps;", IT));
  E.line(fmt::format("const {} r1 = nrows - r0 < rps ? nrows : r0 + rps;", IT));
  // The thread's columns: one vector (aligned variant) or W columns NX
  // apart (scalar variant); either way the tile's columns, so both
  // variants add each column's terms in the same order.
  E.line(Vec > 1 ? fmt::format("const {0} jf_c = tile * {1} + ({0})threadIdx.x * {2};", IT,
                               Tile, W)
                 : fmt::format("const {0} jf_c = tile * {1} + ({0})threadIdx.x;", IT, Tile));
  auto ColExpr = [&](int J) {
    if (J == 0)
      return std::string("jf_c");
    return fmt::format("jf_c + {}", Vec > 1 ? J : J * NX);
  };
  E.line(fmt::format("{} acc{}[{}];", AT, PerRed, W));
  for (size_t R = 0; R < NR; ++R)
    for (int J = 0; J < W; ++J)
      E.line(fmt::format("acc{}[{}] = {};", Ix(R), J, Ident(R)));
  // ColumnReducePrologueOutputs: outputs of the domain's shape computed
  // before the reductions (not from a result) are stored as the rows go by;
  // every element of [R, C] is visited once, by one thread. The aligned
  // variant stores a thread's W columns as one vector (exec checks the
  // output's pointer for W elements, as for a vectorized input; wider than
  // 16 bytes when the output's elements are wider than the input's).
  auto InKernel = [&](NodeId A) { return llvm::is_contained(P.Nodes, A); };
  std::vector<size_t> Prologue;
  for (size_t O = 0; O < P.Outputs.size(); ++O) {
    NodeId N = P.Outputs[O];
    if (llvm::any_of(Reds, [&](NodeId R) { return readsResult(G, N, R, InKernel); }))
      continue;
    JITFUSE_CHECK(G.node(N).Dims == G.node(G.node(Red).Operands[0]).Dims &&
                      G.stridesOf(N).empty(),
                  "a column kernel's prologue output is an unstrided [R, C] tensor");
    Prologue.push_back(O);
  }
  auto PrologueValue = [&](size_t O) {
    NodeId N = P.Outputs[O];
    return storeConvert(G.node(N).Type, E.value(N, E.domainCoords()));
  };
  auto Operand = [&](size_t R) {
    const Node &RN = G.node(Reds[R]);
    return promoteValue(G.node(RN.Operands[0]).Type, RN.Type,
                        E.value(RN.Operands[0], E.domainCoords()));
  };
  // Rows r0 + y, r0 + y + NY, ... of the split, in increasing order; U of
  // them loaded (and their prologue computed) before any is added.
  auto Rows = [&](int Count, bool Whole) {
    E.line(fmt::format("{} jf_v{}[{}][{}];", AT, PerRed, Count, W));
    for (int K = 0; K < Count; ++K) {
      E.open("");
      E.line(fmt::format("const {} c0 = r{};", IT, K ? fmt::format(" + {}", K * NY) : ""));
      if (Vec > 1) {
        E.line(fmt::format("[[maybe_unused]] const {} col = jf_c;", IT));
        for (size_t O : Prologue)
          E.line(fmt::format("jf_vec<{}, {}> jf_sv{};", storageType(G.node(P.Outputs[O]).Type),
                             Vec, O));
        for (int L = 0; L < Vec; ++L) {
          E.setLane(L);
          for (size_t R = 0; R < NR; ++R)
            E.line(fmt::format("jf_v{}[{}][{}] = {};", Ix(R), K, L, Operand(R)));
          for (size_t O : Prologue)
            E.line(fmt::format("jf_sv{}.V[{}] = {};", O, L, PrologueValue(O)));
        }
        E.setLane(0);
        for (size_t O : Prologue)
          E.line(fmt::format("jf_store<{}, {}>(out_{} + c0 * ncols + col, jf_sv{});",
                             storageType(G.node(P.Outputs[O]).Type), Vec, O, O));
      } else {
        // No `if` around a column's loads and arithmetic: under one,
        // ptxas issued each column's loads after the previous column's
        // arithmetic (a memory latency each of a thread's 32 columns;
        // session 33: LayerNorm backward's column sums at C = 4095 or a
        // 2-byte offset, 2.4-2.9x the time). A whole tile's columns need
        // no check; in the row's last tile each load is predicated on its
        // column (a column past the row's end computes on zeros, and the
        // identity replaces its terms). A clamped column index instead
        // cost a 64-bit address computation a load (col_sum bf16 x 1021
        // took twice the time with it in every tile).
        for (int J = 0; J < W; ++J) {
          E.open("");
          if (!Whole) {
            E.line(fmt::format("const bool jf_in = {} < ncols;", ColExpr(J)));
            E.setLoadGuard("jf_in");
          }
          E.line(fmt::format("[[maybe_unused]] const {} col = {};", IT, ColExpr(J)));
          E.setVectorLoads(false);
          for (size_t R = 0; R < NR; ++R) {
            std::string V = Operand(R);
            E.line(fmt::format("jf_v{}[{}][{}] = {};", Ix(R), K, J,
                               Whole ? V : fmt::format("jf_in ? {} : {}", V, Ident(R))));
          }
          for (size_t O : Prologue) {
            std::string V = PrologueValue(O);
            E.line(fmt::format("{}out_{}[c0 * ncols + col] = {};", Whole ? "" : "if (jf_in) ", O,
                               V));
          }
          E.setVectorLoads(true);
          E.setLoadGuard("");
          E.close();
        }
      }
      E.close();
    }
    for (size_t R = 0; R < NR; ++R)
      for (int K = 0; K < Count; ++K)
        for (int J = 0; J < W; ++J)
          E.line(fmt::format("acc{0}[{1}] = {2}(acc{0}[{1}], jf_v{0}[{3}][{1}]);", Ix(R), J,
                             F(R), K));
  };
  auto RowLoops = [&](bool Whole) {
    E.line(fmt::format("{} r = r0 + ({})threadIdx.y;", IT, IT));
    E.open(fmt::format("for (; r + {} < r1; r += {})", (U - 1) * NY, U * NY));
    Rows(U, Whole);
    E.close();
    E.open(fmt::format("for (; r < r1; r += {})", NY));
    Rows(1, Whole);
    E.close();
  };
  if (Vec > 1) {
    // The aligned variant's columns are whole vectors (C % W == 0).
    E.open("if (jf_c < ncols)");
    RowLoops(true);
    E.close();
  } else {
    // The scalar variant: the row's last tile (when partial) checks its
    // columns, the other tiles do not.
    E.open(fmt::format("if (tile * {0} + {0} <= ncols)", Tile));
    RowLoops(true);
    E.close();
    E.open("else");
    RowLoops(false);
    E.close();
  }
  for (size_t R = 0; R < NR; ++R)
    for (int J = 0; J < W; ++J)
      E.line(fmt::format("jf_col{}[threadIdx.y][{}] = acc{}[{}];", Ix(R),
                         Vec > 1 ? fmt::format("threadIdx.x * {} + {}", W, J)
                                 : fmt::format("threadIdx.x + {}", J * NX),
                         Ix(R), J));
  E.line("__syncthreads();");
  // One thread a column of the tile adds the row threads' partials in order
  // y = 0, 1, ...; then, with one split, stores; with several, stores its
  // split's partial and the tile's last block adds the splits in order.
  E.line(fmt::format("const int jf_t = threadIdx.y * {} + threadIdx.x;", NX));
  E.line(fmt::format("{} tot{}[{}];", AT, PerRed, (Tile + Threads - 1) / Threads));
  // \p Oc: the body reads the output column oc (an unused one is an NVRTC
  // warning users read: LayerNorm backward f32 x 32064's column kernel).
  auto EachColumn = [&](const std::function<void(int)> &Body, bool Oc) {
    for (int I = 0; I * Threads < Tile; ++I) {
      std::string LC = I ? fmt::format("jf_t + {}", I * Threads) : "jf_t";
      E.open(Tile % Threads == 0 || (I + 1) * Threads <= Tile
                 ? std::string("")
                 : fmt::format("if ({} < {})", LC, Tile));
      E.line(fmt::format("const int lc = {};", LC));
      if (Oc)
        E.line(fmt::format("const {0} oc = tile * {1} + lc;", IT, Tile));
      Body(I);
      E.close();
    }
  };
  auto Tot = [&](size_t R, int I) { return fmt::format("tot{}[{}]", Ix(R), I); };
  EachColumn([&](int I) {
    for (size_t R = 0; R < NR; ++R) {
      E.line(fmt::format("{} = jf_col{}[0][lc];", Tot(R, I), Ix(R)));
      E.open(fmt::format("for (int i = 1; i < {}; ++i)", NY));
      E.line(fmt::format("{0} = {1}({0}, jf_col{2}[i][lc]);", Tot(R, I), F(R), Ix(R)));
      E.close();
    }
  }, /*Oc=*/false);
  // Each output's element oc: its linear index, or for a strided output
  // the element at oc's coordinates of its shape.
  auto OutIndex = [&](NodeId O) -> std::string {
    if (G.stridesOf(O).empty())
      return "oc";
    return E.address(O, E.coordsOfIndex("oc", G.node(O).Dims), G.node(O).Dims);
  };
  // The reduction whose values output O lists (O is the result or a
  // reshape of it), or -1: element-wise work on the result
  // (ColumnReduceEpilogue, one reduction only), evaluated at column oc.
  auto ResultOf = [&](NodeId O) -> int {
    while (G.node(O).Kind == Op::Reshape)
      O = G.node(O).Operands[0];
    auto It = llvm::find(Reds, O);
    return It == Reds.end() ? -1 : static_cast<int>(It - Reds.begin());
  };
  auto IsPrologue = [&](size_t O) { return llvm::is_contained(Prologue, O); };
  bool Epilogue = false;
  for (size_t O = 0; O < P.Outputs.size(); ++O)
    Epilogue |= !IsPrologue(O) && ResultOf(P.Outputs[O]) < 0;
  JITFUSE_CHECK(!Epilogue || NR == 1, "a column epilogue reads the one reduction's result");
  auto Store = [&](int I) {
    E.open("if (oc < ncols)");
    std::vector<std::string> V;
    for (size_t R = 0; R < NR; ++R)
      V.push_back(G.node(Reds[R]).Kind == Op::ReduceMean
                      ? fmt::format("{} / ({})nrows", Tot(R, I), AT)
                      : Tot(R, I));
    if (Epilogue) {
      E.line(fmt::format("const {} jf_r = {};", AT, V[0]));
      E.setReduced(Red, "jf_r");
      V[0] = "jf_r";
    }
    E.setVectorLoads(false);
    for (size_t O = 0; O < P.Outputs.size(); ++O) {
      if (IsPrologue(O))
        continue;
      NodeId N = P.Outputs[O];
      int R = ResultOf(N);
      std::string Value =
          R >= 0 ? storeConvert(G.node(Reds[R]).Type, V[R])
                 : storeConvert(G.node(N).Type,
                                E.value(N, E.coordsOfIndex("oc", G.node(N).Dims)));
      E.line(fmt::format("out_{}[{}] = {};", O, OutIndex(N), Value));
    }
    E.setVectorLoads(true);
    E.close();
  };
  E.open("if (nsplit == 1)");
  EachColumn(Store, /*Oc=*/true);
  E.line("return;");
  E.close();
  // Reduction R's partials follow reduction R - 1's: gridDim.x * Tile each.
  auto PartialAt = [&](size_t R, const std::string &Block) {
    return R ? fmt::format("({} * ({})gridDim.x + {}) * {} + lc", R, IT, Block, Tile)
             : fmt::format("{} * {} + lc", Block, Tile);
  };
  EachColumn([&](int I) {
    for (size_t R = 0; R < NR; ++R)
      E.line(fmt::format("jf_partials[{}] = {};", PartialAt(R, fmt::format("({})blockIdx.x", IT)),
                         Tot(R, I)));
  }, /*Oc=*/false);
  E.line("__threadfence();");
  E.line("__syncthreads();");
  E.open("if (jf_t == 0)");
  E.line("jf_last = atomicAdd(jf_counter + tile, 1u) == (unsigned)(nsplit - 1);");
  E.close();
  E.line("__syncthreads();");
  E.line("if (!jf_last) return;");
  E.line("__threadfence();");
  EachColumn([&](int I) {
    for (size_t R = 0; R < NR; ++R) {
      E.line(fmt::format("{} = ((volatile {}*)jf_partials)[{}];", Tot(R, I), AT,
                         PartialAt(R, "tile")));
      E.line(fmt::format("#pragma unroll {}", P.CombineUnroll > 0 ? P.CombineUnroll
                                                              : launch::ColumnCombineUnroll));
      E.open(fmt::format("for ({} s = 1; s < nsplit; ++s)", IT));
      E.line(fmt::format("{0} = {1}({0}, ((volatile {2}*)jf_partials)[{3}]);", Tot(R, I), F(R),
                         AT, PartialAt(R, "(s * tiles + tile)")));
      E.close();
    }
    Store(I);
  }, /*Oc=*/true);
  E.line("if (jf_t == 0) jf_counter[tile] = 0u; // ready for the next launch");
}

} // namespace jitfuse::codegen
