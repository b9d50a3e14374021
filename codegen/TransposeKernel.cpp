//===- codegen/TransposeKernel.cpp - element-wise work over a transpose ---===//
//
// An element-wise kernel whose permute swaps the domain's last two axes
// (KernelPlan::TransposeNode) reads that permute's operand along the
// operand's innermost axis and writes its outputs along theirs, through a
// tile of shared memory: per-lane reads across the operand's rows moved one
// element per 32-byte sector (W15 ran at 13% of the copy ceiling). Each
// block owns a tile of TileDim rows x TileDim columns of the domain:
//   phase 1: thread (tx, ty) computes the operand's values for domain
//            elements (row r0 + tx + h * TileWarp, column c0 + ty +
//            k * TileRows), consecutive along the operand's innermost axis
//            across tx, into tile[column][row];
//   phase 2: thread (tx, ty) computes the outputs at (row r0 + ty +
//            k * TileRows, column c0 + tx + h * TileWarp), the permute's
//            value being tile[tx + h * TileWarp][ty + k * TileRows]; stores
//            are consecutive across tx.
// The tile is padded by one column so neither phase's accesses share a bank.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelWriter.h"

#include "codegen/LaunchRule.h"
#include "codegen/Spelling.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <functional>

namespace jitfuse::codegen {

void KernelWriter::transposeBody() {
  if (Vec > 1) {
    transposeVectorBody();
    return;
  }
  std::string IT = E.indexType();
  const Node &T = G.node(static_cast<NodeId>(P.TransposeNode));
  const int D = launch::TileDim, W = launch::TileWarp, Rw = launch::TileRows;
  std::string L = E.dimExpr(P.Domain.back());
  E.line(fmt::format("__shared__ {} jf_tile[{}][{}];", computeType(T.Type), D, D + 1));
  E.line(fmt::format("const {} jf_rows = {};", IT, rowsExpr()));
  E.line(fmt::format("const {0} jf_tc = (({0}){1} + {2}) / {3};", IT, L, D - 1, D));
  E.line(fmt::format("const {0} jf_r0 = ({0})blockIdx.x / jf_tc * {1};", IT, D));
  E.line(fmt::format("const {0} jf_c0 = ({0})blockIdx.x % jf_tc * {1};", IT, D));
  E.line("const int tx = threadIdx.x, ty = threadIdx.y;");
  // Each step (h, k) of a phase: tile element (a, b) of thread (tx, ty), a
  // along the thread's warp (consecutive tx), b across the warps; the domain
  // element (row, col) is (a, b) in phase 1 and (b, a) in phase 2.
  auto EachElement = [&](bool Phase2, const std::function<void(const std::string &A,
                                                                const std::string &B)> &Body) {
    for (int H = 0; H < D / W; ++H)
      for (int K = 0; K < D / Rw; ++K) {
        std::string A = fmt::format("tx + {}", H * W), B = fmt::format("ty + {}", K * Rw);
        E.open("");
        E.line(fmt::format("const {} row = jf_r0 + {};", IT, Phase2 ? B : A));
        E.line(fmt::format("[[maybe_unused]] const {} col = jf_c0 + {};", IT, Phase2 ? A : B));
        E.open(fmt::format("if (row < jf_rows && col < {})", L));
        outerCoords("row");
        Body(A, B);
        E.close();
        E.close();
      }
  };
  EachElement(false, [&](const std::string &A, const std::string &B) {
    std::string V = E.value(T.Operands[0], E.permutedCoords(T, E.domainCoords()));
    E.line(fmt::format("jf_tile[{}][{}] = {};", B, A, V));
  });
  E.line("__syncthreads();");
  EachElement(true, [&](const std::string &A, const std::string &B) {
    E.setReduced(static_cast<NodeId>(P.TransposeNode), fmt::format("jf_tile[{}][{}]", A, B));
    storeOutputs(false, fmt::format("row * {} + col", L));
  });
}

/// The wide variant (Vec > 1; the launch runs it only when the domain's last
/// two dims are multiples of Vec and every pointer is aligned): tiles of
/// VecTileDim x VecTileDim, each thread Vec consecutive elements a step.
///   phase 1: chunk q of the operand's tile rows: operand row (domain
///            column) c0 + q / (D / Vec), operand columns (domain rows)
///            r0 + (q % (D / Vec)) * Vec + lane, read as one vector along
///            the operand's innermost axis; the values go to
///            tile[domain row][domain column] in the permute's storage type
///            (a kernel boundary may round a node to its type: NUMERICS.md);
///   phase 2: chunk q of the domain's tile rows: row r0 + q / (D / Vec),
///            columns c0 + (q % (D / Vec)) * Vec + lane, the permute's value
///            tile[row][column + lane]; outputs stored as vectors.
/// The tile's row stride is an odd number of 4-byte words, so a warp's
/// phase-2 reads of four rows fall in different banks.
void KernelWriter::transposeVectorBody() {
  std::string IT = E.indexType();
  const Node &T = G.node(static_cast<NodeId>(P.TransposeNode));
  const int D = launch::VecTileDim, Threads = launch::TileWarp * launch::TileRows;
  const int PerRow = D / Vec, Steps = D * D / Vec / Threads;
  JITFUSE_CHECK(Steps >= 1 && Steps * Threads * Vec == D * D,
                "a wide transpose tile is whole chunks for every thread");
  std::string ST = storageType(T.Type);
  int Bytes = static_cast<int>(dtypeBytes(T.Type));
  int Pad = Bytes >= 4 ? 1 : 4 / Bytes; // (D + Pad) * Bytes / 4 is odd
  size_t R = P.Domain.size();
  std::string L = E.dimExpr(P.Domain.back());
  E.line(fmt::format("__shared__ {} jf_tile[{}][{}];", ST, D, D + Pad));
  E.line(fmt::format("const {} jf_rows = {};", IT, rowsExpr()));
  E.line(fmt::format("const {0} jf_tc = (({0}){1} + {2}) / {3};", IT, L, D - 1, D));
  E.line(fmt::format("const {0} jf_r0 = ({0})blockIdx.x / jf_tc * {1};", IT, D));
  E.line(fmt::format("const {0} jf_c0 = ({0})blockIdx.x % jf_tc * {1};", IT, D));
  E.line(fmt::format("const int jf_t = threadIdx.y * {} + threadIdx.x;", launch::TileWarp));
  // Step K of a phase: chunk q of the tile. Phase 1 walks the operand's
  // rows (domain column jf_dc, lanes along domain rows), phase 2 the
  // domain's rows (lanes along its columns).
  auto EachChunk = [&](bool Phase2, const std::function<void()> &Body) {
    const char *Major = Phase2 ? "jf_lr" : "jf_lc", *Minor = Phase2 ? "jf_lc" : "jf_lr";
    const char *Col = Phase2 ? "col" : "jf_dc";
    for (int K = 0; K < Steps; ++K) {
      E.open("");
      E.line(fmt::format("const int q = jf_t + {};", K * Threads));
      E.line(fmt::format("const int {} = q / {}, {} = q % {} * {};", Major, PerRow, Minor, PerRow,
                         Vec));
      E.line(fmt::format("const {} row = jf_r0 + jf_lr;", IT));
      E.line(fmt::format("const {} {} = jf_c0 + jf_lc;", IT, Col));
      E.open(fmt::format("if (row < jf_rows && {} < {})", Col, L));
      outerCoords("row");
      Body();
      E.close();
      E.close();
    }
  };
  const Node &Op = G.node(T.Operands[0]);
  EachChunk(false, [&] {
    // The operand's coordinates: the domain's outer ones with its last two
    // swapped; lanes run along the operand's innermost axis (domain rows).
    Coords OC;
    for (size_t I = 0; I + 2 < R; ++I)
      OC.Outer.push_back("c" + std::to_string(I));
    OC.Outer.push_back("jf_dc");
    E.line(fmt::format("[[maybe_unused]] const {} col = c{};", IT, R - 2));
    if (Op.Kind == Op::Input && G.stridesOf(T.Operands[0]).empty()) {
      // The permute of an input: its bits go to the tile as they are (no
      // round trip through the compute type).
      std::string LV = E.fresh("lv");
      E.line(fmt::format("const jf_vec<{0}, {1}> {2} = jf_load<{0}, {1}>(in_{3} + {4});", ST,
                         Vec, LV, E.inputIndex(T.Operands[0]), E.linearIndex(OC, Op.Dims)));
      for (int Lane = 0; Lane < Vec; ++Lane)
        E.line(fmt::format("jf_tile[jf_lr + {}][jf_lc] = {}.V[{}];", Lane, LV, Lane));
      return;
    }
    for (int Lane = 0; Lane < Vec; ++Lane) {
      E.setLane(Lane);
      std::string V = E.value(T.Operands[0], OC);
      E.line(fmt::format("jf_tile[jf_lr + {}][jf_lc] = {};", Lane, storeConvert(T.Type, V)));
    }
    E.setLane(0);
  });
  E.line("__syncthreads();");
  std::vector<std::string> Lanes;
  for (int Lane = 0; Lane < Vec; ++Lane)
    Lanes.push_back(loadConvert(T.Type, fmt::format("jf_tile[jf_lr][jf_lc + {}]", Lane)));
  E.setReducedLanes(static_cast<NodeId>(P.TransposeNode), std::move(Lanes));
  EachChunk(true, [&] { storeOutputs(true, fmt::format("row * {} + col", L)); });
}

} // namespace jitfuse::codegen
