//===- codegen/MixColumns.cpp - column partials in a row kernel -----------===//
//
// KernelPlan::MixColumns: the row kernel also reduces columns of its rows.
// Blocks take their role from a ticket (atomicAdd at their start), not from
// blockIdx: tickets below the group count each sum a group of consecutive
// rows, the others combine. A combining block waits until every group has
// stored its partials; the groups' tickets were all taken before its own,
// by blocks already running, which never wait, so the wait ends (the
// argument of decoupled look-back scans). Which block gets which ticket
// picks who adds, never the order: each column's sum runs over the rows of
// a group in row order, then over the groups in a fixed order
// (launch::mixGroups), so the bits are reproducible.
//
// A group's accumulators live in shared memory, one a column and
// reduction, at slot (col % Vec) * ceil(C / Vec) + col / Vec: the threads of
// a warp adding lane K of consecutive chunks hit consecutive words (no bank
// conflict), at any phase of the peeled variants. The aligned variant, whose
// threads add to the same chunk's columns every row, groups them by 4:
// lanes 4h..4h+3 of chunk t at 4 ceil(C / Vec) h + 4t, one 16-byte shared
// load and store for 4 columns (consecutive threads' 16 bytes apart: no
// conflict), the adds in the same order (W21's aligned variant: 32 scalar
// shared accesses a row become 8).
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelWriter.h"
#include "codegen/LaunchRule.h"
#include "codegen/Spelling.h"
#include "support/Error.h"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>

namespace jitfuse::codegen {

namespace {
/// Output index of \p N among the plan's outputs.
size_t outputIndex(const KernelPlan &P, NodeId N) {
  auto It = llvm::find(P.Outputs, N);
  JITFUSE_CHECK(It != P.Outputs.end(), "a column partial's result is an output");
  return static_cast<size_t>(It - P.Outputs.begin());
}

/// Whether identifier \p Id names a row's own value in a row kernel's
/// text: the row and its test, its outer coordinates (c<N>), kept chunks
/// (cv, cs), kept values (kv), accumulators and results (acc, accp, red,
/// rp, blk), the emitter's values (v, lv, sv, svs, t) and the block
/// reductions' scratch (jf_smem). Everything else (parameters, R, tx,
/// jf_macc, the group's loop, helpers, types) the rows share.
bool perRowName(llvm::StringRef Id) {
  if (Id == "row" || Id == "rowOk" || Id == "rowc")
    return true;
  for (llvm::StringRef Prefix :
       {"jf_smem", "accp", "acc", "red", "blk", "svs", "sv", "lv", "cv", "cs", "kv", "rp", "c",
        "v", "t"})
    if (Id.size() > Prefix.size() && Id.startswith(Prefix) &&
        llvm::all_of(Id.drop_front(Prefix.size()), llvm::isDigit))
      return true;
  return false;
}

/// \p Text, a row's code, for the second row of a MixTwoRows iteration:
/// each per-row name gets the suffix _1. The generated code has no string
/// literals; a number's letters (1e-6f, 0x7f) stay part of the number.
std::string secondRowText(llvm::StringRef Text) {
  std::string Out;
  Out.reserve(Text.size() + Text.size() / 8);
  auto IdChar = [](char C) { return llvm::isAlnum(C) || C == '_'; };
  for (size_t I = 0; I < Text.size();) {
    char C = Text[I];
    if (!IdChar(C)) {
      Out += C;
      ++I;
      continue;
    }
    size_t J = I;
    while (J < Text.size() && (IdChar(Text[J]) || (llvm::isDigit(C) && Text[J] == '.')))
      ++J;
    llvm::StringRef Word = Text.slice(I, J);
    Out += Word;
    if (!llvm::isDigit(C) && perRowName(Word))
      Out += "_1";
    I = J;
  }
  return Out;
}
} // namespace

int64_t KernelWriter::mixLaneSlots() const { return (P.Domain.back().Size + Vec - 1) / Vec; }

bool KernelWriter::mixVecSlots() const {
  // Under the aligned variant's register bound only (rows of one chunk a
  // thread): f32 RMSNorm backward x 6144, 3 chunks a thread unbounded, took
  // 70 registers for them, from 64. Not with rows known (MixRowsKnown):
  // under the bound its shared values and the 16-byte groups spilled (W21
  // 16 B).
  return (!Peel || mixPhaseSlots() || rowStartChunks()) && Vec % 4 == 0 && P.MixAccBytes == 4 &&
         P.AlignedMinBlocksPerSm > 0 && !P.RowOkKnown;
}

bool KernelWriter::mixPhaseSlots() const {
  return Peel && P.MixPhaseSlots && !rowStartChunks() && Vec > 1 && !P.Domain.back().isDynamic() &&
         P.Domain.back().Size % Vec == 0;
}

std::string KernelWriter::mixSlotColumn(const std::string &Col) const {
  if (!mixPhaseSlots())
    return Col;
  // Under C: the head's elements and the whole chunks; the tail's wrap to
  // slot chunk 0, beside the head's (together one chunk's columns).
  int64_t C = P.Domain.back().Size;
  return fmt::format("(({0}) + jf_mph < {1} ? ({0}) + jf_mph : ({0}) + jf_mph - {1})", Col, C);
}

std::string KernelWriter::mixSlot(const std::string &Col) const {
  int64_t CV = mixLaneSlots();
  if (Vec == 1)
    return fmt::format("(int)({})", Col);
  if (mixVecSlots())
    return fmt::format("(int)(((unsigned)({0}) % {1}u / 4u) * {2}u + (unsigned)({0}) / {1}u * 4u + "
                       "(unsigned)({0}) % 4u)",
                       Col, Vec, 4 * CV);
  // Unsigned: Vec is a power of two, so a mask and a shift.
  return fmt::format("(int)(((unsigned)({0}) % {1}u) * {2}u + (unsigned)({0}) / {1}u)", Col, Vec,
                     CV);
}

void KernelWriter::mixBegin() {
  std::string IT = E.indexType();
  int64_t CV = mixLaneSlots();
  size_t NR = P.MixColumns.size();
  std::string AT = computeType(G.node(P.MixColumns.front()).Type);
  const int S = P.RowsPerBlock;
  JITFUSE_CHECK(S >= 1 && (S == 1 || !P.MixTwoRows) && P.ClusterX == 1 && !P.RowPhaseLoop &&
                    P.MixMaxGroups > 0,
                "column partials take rows of a block and a group count");
  const int64_t Stride = int64_t(NR) * Vec * CV; // a row's accumulators
  JITFUSE_CHECK(launch::mixAccumulatorBytes(P.Domain.back().Size, Vec, int64_t(NR), S,
                                            P.MixAccBytes) == Stride * S * P.MixAccBytes,
                "the launch's accumulator bytes are the kernel's");
  if (P.MixDynamicShared) {
    // Past the static limit: the launch's dynamic shared memory, opted in
    // to at load (LaunchRule::dynamicSharedBytes).
    E.line("extern __shared__ __align__(16) unsigned char jf_dyn[];");
    E.line(fmt::format("{0} *const jf_macc = reinterpret_cast<{0} *>(jf_dyn);", AT));
  } else {
    E.line(fmt::format("__shared__ __align__(16) {} jf_macc[{}];", AT, Stride * S));
  }
  if (mixSubRows())
    E.line(fmt::format("const int jf_tid = threadIdx.y * {} + threadIdx.x;", P.ThreadsX));
  if (mixPhaseSlots())
    E.line(fmt::format("const int jf_mph = {};", leadPhaseExpr()));
  E.line("__shared__ unsigned jf_ticket;");
  E.line(fmt::format("const {} nrows = {};", IT, rowsExpr()));
  // launch::mixRowsPerGroup and mixGroups.
  std::string PerGroup = fmt::format("nrows <= {1} ? ({0})1 : (nrows + {2}) / {1}", IT,
                                     P.MixMaxGroups, P.MixMaxGroups - 1);
  if (P.MixMinGroupRows > 1) {
    E.line(fmt::format("const {} jf_rg0 = {};", IT, PerGroup));
    E.line(fmt::format("const {0} jf_rg = jf_rg0 < {1} ? ({0}){1} : jf_rg0;", IT,
                       P.MixMinGroupRows));
  } else {
    E.line(fmt::format("const {} jf_rg = {};", IT, PerGroup));
  }
  E.line(fmt::format("const {0} jf_ng = nrows > 0 ? (nrows + jf_rg - 1) / jf_rg : ({0})0;", IT));
  E.line(fmt::format("if ({} == 0) jf_ticket = atomicAdd(jf_counter, 1u);", mixTid()));
  E.line("__syncthreads();");
  E.line(fmt::format("const {0} jf_b = ({0})jf_ticket;", IT));
  E.open("if (jf_b >= jf_ng)");
  mixCombine();
  E.line("return;");
  E.close();
  for (int Y = 0; Y < S; ++Y)
    for (size_t R = 0; R < NR; ++R) {
      const Node &Red = G.node(P.MixColumns[R]);
      E.line(fmt::format("for (int i = {}; i < {}; i += {}) jf_macc[{} + i] = {};", mixTid(),
                         int64_t(Vec) * CV, mixThreads(), Y * Stride + int64_t(R) * Vec * CV,
                         reduceIdentity(Red.Kind, Red.Type)));
    }
  if (mixSubRows())
    E.line(fmt::format("{} *const jf_mrow = jf_macc + threadIdx.y * {};", AT, Stride));
  E.line("__syncthreads();");
  E.line(fmt::format("const {} jf_r1 = nrows - jf_b * jf_rg < jf_rg ? nrows : (jf_b + 1) * jf_rg;",
                     IT));
  E.open(fmt::format("for ({} jf_mr = jf_b * jf_rg; jf_mr < jf_r1; {})", IT,
                     twoRows() ? "jf_mr += 2"
                     : S > 1   ? fmt::format("jf_mr += {}", S)
                               : "++jf_mr"));
}

void KernelWriter::mixAdds() {
  int64_t CV = mixLaneSlots();
  // The aligned variant's chunk starts at a multiple of Vec: lane K's slot
  // is K * CV + col / Vec, one base and constant offsets (ptxas, W21 with
  // the terms in the store loop: 54 registers, 56 through the general form).
  // So is a whole chunk's of a peeled variant under mixPhaseSlots: its
  // shifted column (col + jf_mph, jf_mph the lead's phase) is a multiple of
  // Vec under C.
  // Row-start chunks (rowStartChunks) are too: col is a multiple of Vec.
  bool Aligned = (!Peel || mixPhaseSlots() || rowStartChunks()) && !ScalarPart && Vec > 1;
  if (Aligned)
    E.line(fmt::format("const int jf_s = (int)((col{}) / {});", mixPhaseSlots() ? " + jf_mph" : "",
                       Vec));
  if (Aligned && mixVecSlots()) {
    // Each lane's terms, then per reduction 4 lanes at a time: a 16-byte
    // read-modify-write of their slots.
    size_t NR = P.MixColumns.size();
    std::vector<std::vector<std::string>> Terms(NR);
    lanes(true, [&](int) {
      for (size_t R = 0; R < NR; ++R) {
        const Node &Red = G.node(P.MixColumns[R]);
        Terms[R].push_back(promoteValue(G.node(Red.Operands[0]).Type, Red.Type,
                                        E.value(Red.Operands[0], E.domainCoordsOf(Red.Operands[0]))));
      }
    });
    static const char *const Field[] = {"x", "y", "z", "w"};
    for (size_t R = 0; R < NR; ++R) {
      const Node &Red = G.node(P.MixColumns[R]);
      for (int H = 0; H < Vec / 4; ++H) {
        std::string Slots = fmt::format("jf_q{}_{}", R, H), Acc = fmt::format("jf_a{}_{}", R, H);
        E.line(fmt::format("float4 &{} = reinterpret_cast<float4 *>({} + {})[jf_s];", Slots,
                           mixAcc(), int64_t(R) * Vec * CV + int64_t(H) * 4 * CV));
        E.line(fmt::format("float4 {} = {};", Acc, Slots));
        for (int L = 0; L < 4; ++L)
          E.line(fmt::format("{0}.{1} = {2}({0}.{1}, {3});", Acc, Field[L],
                             reduceFunctor(Red.Kind), Terms[R][4 * H + L]));
        E.line(fmt::format("{} = {};", Slots, Acc));
      }
    }
    return;
  }
  lanes(true, [&](int K) {
    for (size_t R = 0; R < P.MixColumns.size(); ++R) {
      const Node &Red = G.node(P.MixColumns[R]);
      std::string V = promoteValue(G.node(Red.Operands[0]).Type, Red.Type,
                                   E.value(Red.Operands[0], E.domainCoordsOf(Red.Operands[0])));
      int64_t Base = int64_t(R) * Vec * CV;
      std::string Slot =
          Aligned ? fmt::format("{} + jf_s", Base + K * CV)
                  : fmt::format("{} + {}", Base,
                                mixSlot(mixSlotColumn(K ? fmt::format("col + {}", K) : "col")));
      E.line(fmt::format("{3}[{0}] = {1}({3}[{0}], {2});", Slot, reduceFunctor(Red.Kind), V,
                         mixAcc()));
    }
  });
}

void KernelWriter::mixEnd() {
  // The group's rows are added: its partials, by reduction, group, column.
  // Several rows a block: row y's accumulators held rows y, y + S, ... of
  // the group in order; the group's partial adds them in y order.
  std::string IT = E.indexType();
  int64_t C = P.Domain.back().Size, CV = mixLaneSlots();
  const int64_t Stride = int64_t(P.MixColumns.size()) * Vec * CV;
  E.line("__syncthreads();");
  for (size_t R = 0; R < P.MixColumns.size(); ++R) {
    std::string Part = fmt::format("jf_partials[({} * jf_ng + jf_b) * {} + c]",
                                   fmt::format("({}){}", IT, R), C);
    std::string Slot = fmt::format("{} + {}", int64_t(R) * Vec * CV, mixSlot(mixSlotColumn("c")));
    if (!mixSubRows()) {
      E.line(fmt::format("for (int c = threadIdx.x; c < {}; c += {}) {} = jf_macc[{}];", C,
                         P.ThreadsX, Part, Slot));
      continue;
    }
    const Node &Red = G.node(P.MixColumns[R]);
    E.open(fmt::format("for (int c = jf_tid; c < {}; c += {})", C, mixThreads()));
    E.line(fmt::format("const int jf_sl = {};", Slot));
    E.line(fmt::format("{} a = jf_macc[jf_sl];", computeType(Red.Type)));
    for (int Y = 1; Y < P.RowsPerBlock; ++Y)
      E.line(fmt::format("a = {}(a, jf_macc[{} + jf_sl]);", reduceFunctor(Red.Kind),
                         Y * Stride));
    E.line(fmt::format("{} = a;", Part));
    E.close();
  }
  E.line("__threadfence();");
  E.line("__syncthreads();");
  E.line(fmt::format("if ({} == 0) atomicAdd(jf_counter + 1, 1u);", mixTid()));
}

void KernelWriter::mixCombine() {
  // One reduction's tile of MixCombineLanes columns: MixCombineRows virtual
  // rows of threads, y adding groups y, y + MixCombineRows, ... in order,
  // then the rows in order.
  std::string IT = E.indexType();
  int64_t C = P.Domain.back().Size;
  int NR = static_cast<int>(P.MixColumns.size());
  constexpr int NX = launch::MixCombineLanes, NY = launch::MixCombineRows;
  const std::string Tid = mixTid();
  JITFUSE_CHECK(mixThreads() % NX == 0, "a combining block is whole warps");
  int64_t Tiles = (C + NX - 1) / NX;
  std::string AT = computeType(G.node(P.MixColumns.front()).Type);
  E.line(fmt::format("__shared__ {} jf_mct[{}][{}];", AT, NY, NX));
  E.line(fmt::format("const int jf_t = (int)(jf_b - jf_ng);"));
  if (NR > 1)
    E.line(fmt::format("const int jf_red = jf_t / {};", Tiles));
  E.line(fmt::format("const int jf_lane = {} % {};", Tid, NX));
  E.line(fmt::format("const int jf_c = (jf_t % {}) * {} + jf_lane;", Tiles, NX));
  // Every group's partials are stored (the groups' blocks fence, then
  // count); read them from L2, never from this SM's L1.
  E.open(fmt::format("if ({} == 0)", Tid));
  E.line("while (*(volatile unsigned *)(jf_counter + 1) < (unsigned)jf_ng) __nanosleep(256);");
  E.line("__threadfence();");
  E.close();
  E.line("__syncthreads();");
  auto EachReduction = [&](const std::function<void(int)> &Body) {
    for (int R = 0; R < NR; ++R) {
      if (NR == 1) {
        Body(R);
        continue;
      }
      E.open(fmt::format("if (jf_red == {})", R));
      Body(R);
      E.close();
    }
  };
  E.open(fmt::format("for (int y = {} / {}; y < {}; y += {})", Tid, NX, NY, mixThreads() / NX));
  EachReduction([&](int R) {
    const Node &Red = G.node(P.MixColumns[R]);
    E.line(fmt::format("{} a = {};", AT, reduceIdentity(Red.Kind, Red.Type)));
    E.open(fmt::format("if (jf_c < {})", C));
    const std::string Add = reduceFunctor(Red.Kind);
    // Group \p Group's partial of this reduction at the thread's column.
    auto Partial = [&](const std::string &Group) {
      return fmt::format("__ldcg(jf_partials + (({}){} * jf_ng + {}) * {} + jf_c)", IT, R, Group,
                         C);
    };
    // Batches of MixCombineBatch loads (each batch's loads before its
    // adds), then the rest in the unrolled loop: a thread of fewer
    // partials than a batch runs exactly the loop (0.95-0.99x at 128-256
    // rows when its batches of 4 and 1 were explicit too, session 41).
    E.line(fmt::format("{} g = y;", IT));
    if (P.MixCombineBatches) {
      constexpr int Batch = launch::MixCombineBatch;
      E.open(fmt::format("for (; g + {} < jf_ng; g += {})", (Batch - 1) * NY, Batch * NY));
      E.line(fmt::format("{} v[{}];", AT, Batch));
      E.line("#pragma unroll");
      E.line(fmt::format("for (int k = 0; k < {}; ++k) v[k] = {};", Batch,
                         Partial(fmt::format("g + k * {}", NY))));
      E.line("#pragma unroll");
      E.line(fmt::format("for (int k = 0; k < {}; ++k) a = {}(a, v[k]);", Batch, Add));
      E.close();
    }
    E.line(fmt::format("#pragma unroll {}",
                       P.CombineUnroll > 0 ? P.CombineUnroll : launch::MixCombineUnroll));
    E.line(fmt::format("for (; g < jf_ng; g += {}) a = {}(a, {});", NY, Add, Partial("g")));
    E.close();
    E.line("jf_mct[y][jf_lane] = a;");
  });
  E.close();
  E.line("__syncthreads();");
  E.open(fmt::format("if ({} < {} && jf_c < {})", Tid, NX, C));
  EachReduction([&](int R) {
    const Node &Red = G.node(P.MixColumns[R]);
    E.line(fmt::format("{} tot = jf_mct[0][jf_lane];", AT));
    E.line(fmt::format("for (int y = 1; y < {}; ++y) tot = {}(tot, jf_mct[y][jf_lane]);", NY,
                       reduceFunctor(Red.Kind)));
    std::string V = Red.Kind == Op::ReduceMean ? fmt::format("tot / ({})nrows", AT) : "tot";
    E.line(fmt::format("out_{}[jf_c] = {};", outputIndex(P, P.MixColumns[R]),
                       storeConvert(Red.Type, V)));
  });
  E.close();
  // The last combining block leaves the counters at 0 for the next launch:
  // every block has taken its ticket and every group has counted.
  E.line("__syncthreads();");
  E.open(fmt::format("if ({} == 0 && atomicAdd(jf_counter + 2, 1u) == {}u)", Tid,
                     launch::mixCombiners(C, NR) - 1));
  E.line("jf_counter[0] = 0u;");
  E.line("jf_counter[1] = 0u;");
  E.line("jf_counter[2] = 0u;");
  E.close();
}

void KernelWriter::secondRowFrom(size_t Mark) {
  if (!twoRows())
    return;
  std::string Copy = secondRowText(llvm::StringRef(E.text()).substr(Mark));
  E.text() += Copy;
}

void KernelWriter::rowSegment(const std::function<void()> &Body) {
  size_t Mark = E.text().size();
  Body();
  secondRowFrom(Mark);
}

} // namespace jitfuse::codegen
