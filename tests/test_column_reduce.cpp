//===- tests/test_column_reduce.cpp - the column reduction kernel ---------===//
//
// Axis 0 of [R, C] (codegen/ColumnReduce.h): the split of the reduced axis
// (a function of the shape only), the plan and launch geometry, the error
// bound against the kernel's summation tree simulated on the host, the
// generated code through NVRTC, and on a GPU fused vs unfused vs reference,
// misaligned, and bitwise reproducibility.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "codegen/LaunchRule.h"
#include "compiler/Fusion.h"
#include "compiler/Planner.h"
#include "compiler/Schedule.h"
#include "reference/ErrorBound.h"
#include "GraphCheck.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

CompileOptions cpuOptions(bool Fuse = true) {
  CompileOptions O;
  O.Arch = "sm_90";
  O.Fuse = Fuse;
  return O;
}

/// The single kernel \p G fuses into: its plan and its emitted form.
std::pair<KernelPlan, codegen::EmittedKernel> onlyKernel(const Graph &G) {
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 1);
  KernelPlan K = scheduleCluster(G, P.Clusters[0], 0);
  codegen::EmittedKernel E = codegen::emitKernel(G, K);
  return {K, E};
}

/// One column's sum in the column kernel's order, written from
/// docs/NUMERICS.md ("Reduction order over axes"), in float; \p Depth gets
/// the most roundings any term went through (adding to an empty partial,
/// the identity, is exact).
float kernelOrderSum(const std::vector<float> &Col, int64_t Cols, int64_t &Depth) {
  const int64_t R = static_cast<int64_t>(Col.size());
  const int64_t N = codegen::launch::ColumnRowThreads;
  int64_t S = codegen::columnSplits(R, Cols), K = (R + S - 1) / S;
  struct Partial {
    float V = 0;
    int64_t D = 0;
    bool Has = false;
    void add(const Partial &O) {
      if (!O.Has)
        return;
      D = Has ? std::max(D, O.D) + 1 : O.D;
      V = Has ? V + O.V : O.V;
      Has = true;
    }
  };
  Partial Tot;
  for (int64_t Sp = 0; Sp < S; ++Sp) {
    int64_t R0 = Sp * K, R1 = std::min(R, R0 + K);
    Partial Block;
    for (int64_t Y = 0; Y < N; ++Y) {
      Partial Acc;
      for (int64_t Row = R0 + Y; Row < R1; Row += N)
        Acc.add({Col[Row], 0, true});
      Block.add(Acc);
    }
    Tot.add(Block);
  }
  Depth = Tot.D;
  return Tot.V;
}

/// The same column added as a row kernel with column partials adds it
/// (codegen/MixColumns.cpp): groups of consecutive rows in order, then
/// MixCombineRows threads each every 8th group's partial, then those.
/// \p MaxGroups groups at most, \p MinRows rows a group at least.
float mixOrderSum(const std::vector<float> &Col, int64_t &Depth, int64_t SubRows = 1,
                  int64_t MaxGroups = codegen::launch::MixMaxGroups, int64_t MinRows = 1) {
  const int64_t R = static_cast<int64_t>(Col.size());
  namespace launch = codegen::launch;
  const int64_t Kg = launch::mixRowsPerGroup(R, MaxGroups, MinRows),
                Ng = launch::mixGroups(R, MaxGroups, MinRows);
  std::vector<float> Group(static_cast<size_t>(Ng), 0.0f);
  std::vector<int64_t> GD(static_cast<size_t>(Ng), 0);
  for (int64_t Gi = 0; Gi < Ng; ++Gi) {
    // Several rows a block (KernelPlan::RowsPerBlock): row y of the block
    // sums the group's rows y, y + SubRows, ... in order, then the rows'
    // sums are added in y order (an empty one adds the identity: exact).
    const int64_t End = std::min(R, (Gi + 1) * Kg);
    bool Has = false;
    for (int64_t Y = 0; Y < SubRows; ++Y) {
      float A = 0;
      int64_t AD = 0, I = 0;
      for (int64_t Row = Gi * Kg + Y; Row < End; Row += SubRows, ++I) {
        A = I ? A + Col[Row] : Col[Row];
        AD = I; // I roundings after I + 1 terms
      }
      if (!I)
        continue;
      GD[Gi] = Has ? std::max(GD[Gi], AD) + 1 : AD;
      Group[Gi] = Has ? Group[Gi] + A : A;
      Has = true;
    }
  }
  float Tot = 0;
  int64_t TD = 0;
  bool Any = false;
  for (int64_t Y = 0; Y < launch::MixCombineRows; ++Y) {
    float A = 0;
    int64_t AD = 0;
    bool Has = false;
    for (int64_t Gi = Y; Gi < Ng; Gi += launch::MixCombineRows) {
      AD = Has ? std::max(AD, GD[Gi]) + 1 : GD[Gi];
      A = Has ? A + Group[Gi] : Group[Gi];
      Has = true;
    }
    if (!Has)
      continue;
    TD = Any ? std::max(TD, AD) + 1 : AD;
    Tot = Any ? Tot + A : A;
    Any = true;
  }
  Depth = TD;
  return Tot;
}

} // namespace

TEST_CASE("Column reduce: the split of the reduced axis depends on the shape only",
          "[column-reduce]") {
  using codegen::columnSplits;
  // bf16 [65536, 4096] (W10): 16 tiles of 256 columns x 32 splits of 2048
  // rows = 512 blocks.
  CHECK(columnSplits(65536, 4096) == 32);
  // Short columns: at least 128 rows a split.
  CHECK(columnSplits(1000, 4096) == 7);
  CHECK(columnSplits(127, 4096) == 1);
  CHECK(columnSplits(1, 7) == 1);
  CHECK(columnSplits(0, 7) == 1);
  // One column: capped at 256 splits.
  CHECK(columnSplits(65537, 1) == 256);
  // Wide enough to fill the GPU with column tiles alone: no split.
  CHECK(columnSplits(65536, 1 << 17) == 1);
  CHECK(columnSplits(65536, (1 << 16) + 1) == 1);
  CHECK(columnSplits(65536, 1 << 16) == 2);
  // Narrow rows: at most 64 splits (the tile's last block adds them in
  // sequence) while splits x columns reach 2^16 ...
  CHECK(columnSplits(16384, 2048) == 64);
  CHECK(columnSplits(16384, 1021) == 65);
  CHECK(columnSplits(16384, 1024) == 64);
  // ... more where that floor needs them (3 tiles of 256 16-bit columns).
  CHECK(columnSplits(16384, 768) == 86);
  CHECK(columnSplits(16384, 512) == 128);
  CHECK(columnSplits(1 << 20, 7) == 256);
}

TEST_CASE("Column reduce: plan and launch of a bf16 column sum (W10)", "[column-reduce]") {
  Graph G;
  Value X = G.input("x", bf16, {65536, 4096});
  G.output("s", sum(cast(X, f32), {0}));
  auto [K, E] = onlyKernel(G);
  REQUIRE(K.Kind == KernelKind::ColumnReduce);
  // 16-byte vectors of the bf16 input (the f32 output does not narrow
  // them), and the scalar variant for any other offset.
  CHECK(K.ColumnWidth == 8);
  CHECK(K.Vecs == std::vector<int>{8, 1});
  REQUIRE(E.Variants.size() == 2);
  CHECK(E.Variants[0].Name == "jf_k0_sum_v8");
  CHECK(E.Variants[1].Name == "jf_k0_sum_v1");
  CHECK_THAT(K.Why, Contains("column tiles of 256 = 32 threads x 8 adjacent columns"));
  CHECK_THAT(K.Why, Contains("16 tiles x 32 splits of 2048 rows"));
  CHECK_THAT(K.Why, Contains("split order 0, 1, ..."));
  // Both variants: 16 x 32 blocks of 32 x 8 threads.
  for (int Vec : {8, 1}) {
    auto S = E.Launch.shape({65536LL * 4096, 65536, 4096}, Vec, 132);
    REQUIRE(S);
    CHECK(S->GridX == 512);
    CHECK(S->BlockX == 32);
    CHECK(S->BlockY == 8);
  }
  // The partials of one split a column (static shape), a counter a tile.
  CHECK(E.Launch.partialsBytes(132) == size_t(32) * 4096 * 8);
  CHECK(E.Launch.counters() == 16);
  CHECK_THAT(E.Variants[0].Text, Contains("jf_load<jf_bf16, 8>(in_0 + (c0 * 4096) + col)"));
  CHECK_THAT(E.Variants[0].Text, Contains("atomicAdd(jf_counter + tile, 1u)"));
}

TEST_CASE("Column reduce: a value a row sets no width", "[column-reduce]") {
  // sum(x * rstd) with bf16 x [R, 4096] and f32 rstd [R, 1] (a weight
  // gradient's xhat): rstd is one scalar load a row, so the bf16 input's
  // 16-byte vectors set the width, not 4 f32 columns.
  Graph G;
  Value X = G.input("x", bf16, {"R", 4096});
  Value Rstd = G.input("rstd", f32, {"R", 1});
  G.output("s", sum(cast(X, f32) * Rstd, {0}));
  auto [K, E] = onlyKernel(G);
  REQUIRE(K.Kind == KernelKind::ColumnReduce);
  CHECK(K.ColumnWidth == 8);
  CHECK(K.Vecs == std::vector<int>{8, 1});
  CHECK_THAT(E.Variants[0].Text, Contains("jf_load<jf_bf16, 8>"));
  // A [C] f32 weight varies along the columns: 16 bytes of it set 4.
  Graph H;
  Value Y = H.input("y", bf16, {"R", 4096});
  Value W = H.input("w", f32, {4096});
  H.output("s", sum(cast(Y, f32) * W, {0}));
  auto [KH, EH] = onlyKernel(H);
  CHECK(KH.ColumnWidth == 4);
}

TEST_CASE("Column reduce: launch geometry for odd and dynamic shapes", "[column-reduce]") {
  // f32, C dynamic: 4 columns a thread (128 a tile), scalar variant only.
  Graph G;
  Value X = G.input("x", f32, {"R", "C"});
  G.output("m", mean(X, {0}));
  auto [K, E] = onlyKernel(G);
  CHECK(K.ColumnWidth == 4);
  CHECK(K.Vecs == std::vector<int>{1});
  CHECK_THAT(K.Why, Contains("scalar only (C not known to be a multiple of 4)"));
  CHECK_THAT(K.Why, Contains("min(131072 / C, R / 128, 256, max(64, ceil(65536 / C)))"));
  CHECK_THAT(K.Why, Contains("the mean divides by R once, at the end"));
  // [65537, 4097]: 33 tiles x 31 splits.
  auto S = E.Launch.shape({65537LL * 4097, 65537, 4097}, 1, 132);
  REQUIRE(S);
  CHECK(S->GridX == 33 * 31);
  // [3, 7]: one tile, no split.
  S = E.Launch.shape({21, 3, 7}, 1, 132);
  REQUIRE(S);
  CHECK(S->GridX == 1);
  // No rows: still launched (the identity, or NaN for a mean, is written);
  // no columns: nothing to do.
  S = E.Launch.shape({0, 0, 7}, 1, 132);
  REQUIRE(S);
  CHECK(S->GridX == 1);
  CHECK_FALSE(E.Launch.shape({0, 7, 0}, 1, 132));
  // Sized for any shape: S * C <= 2^17 whenever S > 1.
  CHECK(E.Launch.partialsBytes(132) == size_t((1 << 17) + 256 * 128) * 8);
  CHECK(E.Launch.counters() == (1 << 16) / 128 + 1);
  // An odd static C: scalar only, and no partials when nothing splits.
  Graph H;
  Value Y = H.input("y", f16, {100, 4097});
  H.output("mx", reduceMax(Y, {0}));
  auto [KH, EH] = onlyKernel(H);
  CHECK(KH.Vecs == std::vector<int>{1});
  CHECK(KH.ColumnWidth == 8);
  CHECK_THAT(KH.Why, Contains("scalar only (4097 not a multiple of 8)"));
  CHECK_THAT(KH.Why, Contains("17 tiles, no split of the 100 rows"));
  CHECK(EH.Launch.partialsBytes(132) == 0);
  CHECK(EH.Launch.counters() == 0);
}

TEST_CASE("Column reduce: the scalar variant loads every column of a row without a branch",
          "[column-reduce]") {
  // LayerNorm backward's column sums at C = 4095: under an `if` a column,
  // ptxas issued each column's loads only after the previous column's
  // arithmetic (a memory latency each of a thread's 32 columns), so the
  // scalar variant ran 2.4-2.9x the time on the H200 (session 33). Whole
  // tiles check no column; the row's last tile predicates each load on its
  // column and replaces the terms of the columns past the row's end with
  // the identity.
  Graph G;
  Value X = G.input("x", bf16, {"R", 4095});
  Value Rstd = G.input("rstd", f32, {"R", 1});
  Value Y = cast(X, f32) * Rstd;
  G.output("s", sum(Y, {0}));
  G.output("y", Y);
  auto [K, E] = onlyKernel(G);
  REQUIRE(K.Kind == KernelKind::ColumnReduce);
  REQUIRE(E.Variants.size() == 1);
  const std::string &T = E.Variants[0].Text;
  size_t Split = T.find("if (tile * 256 + 256 <= ncols)");
  REQUIRE(Split != std::string::npos);
  size_t Last = T.find("else", Split);
  REQUIRE(Last != std::string::npos);
  std::string WholeTiles = T.substr(Split, Last - Split), LastTile = T.substr(Last);
  CHECK_THAT(WholeTiles, Contains("const long long col = jf_c + 224;"));
  CHECK_THAT(WholeTiles, Contains("out_0[c0 * ncols + col] = "));
  CHECK_THAT(WholeTiles, !Contains("jf_in"));
  CHECK_THAT(LastTile, Contains("const bool jf_in = jf_c + 224 < ncols;"));
  CHECK_THAT(LastTile, Contains("(jf_in ? in_0[(c0 * 4095 + col)] : (jf_bf16)0)"));
  CHECK_THAT(LastTile, Contains("jf_v[0][7] = jf_in ? "));
  // A row's broadcast value is inside the tensor with its row.
  CHECK_THAT(LastTile, Contains("in_1[(c0 * 1)]"));
  CHECK_THAT(LastTile, !Contains("jf_in ? in_1"));
  // A prologue output is stored only for the row's own columns.
  CHECK_THAT(LastTile, Contains("if (jf_in) out_0[c0 * ncols + col] = "));
  CHECK_THAT(T, !Contains("if (jf_c + 224 < ncols)"));
  // A broadcast operand of a relabeled node follows the column through its
  // unflattened index (b[col / 145]): past the row's end that index leaves
  // b, so its loads are guarded too.
  Graph H;
  Value X3 = H.input("x", bf16, {"R", 7, 145});
  Value B = H.input("b", f32, {7, 1});
  H.output("s", sum(reshape(cast(X3, f32) + B, {Dim("R"), Dim(7 * 145)}), {0}));
  auto [KH, EH] = onlyKernel(H);
  REQUIRE(KH.Kind == KernelKind::ColumnReduce);
  const std::string &TH = EH.Variants[0].Text;
  std::string LastTileH = TH.substr(TH.find("else", TH.find("if (tile * 256 + 256 <= ncols)")));
  CHECK_THAT(LastTileH, Contains("(jf_in ? in_1[("));
  CHECK_THAT(LastTileH, !Contains("= in_1["));
}

TEST_CASE("Column reduce: the error bound's depth is the kernel tree's", "[column-reduce]") {
  // The closed form (reference/ErrorBound.cpp) against the depth of the
  // simulated tree, over splits, short splits, trailing empty splits
  // (32769 rows of one column: 256 splits of 129 rows, the last 2 empty) and
  // the R - 1 cap.
  // The mixed kernel's plans: groups launch::mixGroupsFor a block of any
  // thread count (256-512 of them), S rows a block and at least S a group.
  std::vector<int64_t> GroupCounts;
  for (int T = 32; T <= 1024; T += 32)
    GroupCounts.push_back(codegen::launch::mixGroupsFor(T));
  std::sort(GroupCounts.begin(), GroupCounts.end());
  GroupCounts.erase(std::unique(GroupCounts.begin(), GroupCounts.end()), GroupCounts.end());
  CHECK(GroupCounts.front() == 256);
  CHECK(GroupCounts.back() == 512);
  for (int64_t R : {1, 2, 7, 8, 9, 100, 127, 128, 129, 1000, 4097, 32769, 65536, 65537}) {
    std::vector<float> Col(static_cast<size_t>(R), 1.0f);
    int64_t MixDepth = 0;
    for (int64_t G : GroupCounts)
      for (int64_t S = 1; S <= codegen::launch::MixBlockRowsMax; ++S) {
        int64_t SubDepth = 0;
        float Sum = mixOrderSum(Col, SubDepth, S, G, S);
        INFO("R=" << R << " groups " << G << " rows a block " << S);
        CHECK(Sum == static_cast<float>(R));
        CHECK(SubDepth == mixColumnSummationDepth(R, G, S));
        MixDepth = std::max(MixDepth, SubDepth);
      }
    INFO("R=" << R);
    CHECK(mixColumnSummationDepth(R) == MixDepth);
    for (int64_t C : {1, 7, 255, 256, 1021, 4096, 1 << 19}) {
      int64_t Depth = 0;
      kernelOrderSum(Col, C, Depth);
      INFO("C=" << C);
      // Rows of 256 to 8192 columns (and more, MixMaxSharedBytes) may be
      // summed by a row kernel's column partials: the bound takes the deeper.
      CHECK(columnSummationDepth(R, C) ==
            (codegen::launch::mixColumnsAny(C) ? std::max(Depth, mixColumnSummationDepth(R))
                                               : Depth));
    }
  }
  CHECK(columnSummationDepth(65536, 4096) == 255 + 7 + 31);
  CHECK(columnSummationDepth(65536, 1 << 19) == 8191 + 7);
  // 1000 rows of 4096: 7 splits (17 + 7 + 6) or 500 groups of 2 rows
  // (1 + 62 + 7).
  CHECK(mixColumnSummationDepth(1000) == 1 + 62 + 7);
  CHECK(columnSummationDepth(1000, 4096) == 70);
  CHECK(columnSummationDepth(1000, 7) == 30);
  // Rows of 256-2047 columns take the mixed kernel by the rule (768 and
  // more before session 39); the bound covers either plan.
  CHECK(columnSummationDepth(1000, 1021) == 70);
  // 16384 rows (W21): 512 groups of 32 rows, 31 + 63 + 7 (256 groups of 64:
  // 63 + 31 + 7); the column kernel's
  // 32 splits of 512 rows, 63 + 7 + 31.
  CHECK(mixColumnSummationDepth(16384) == 101);
  CHECK(columnSummationDepth(16384, 4096) == 101);
}

TEST_CASE("Column reduce: the bound holds for the kernel's order and not for a "
          "sequential one",
          "[column-reduce]") {
  // One huge term then ones: a running f32 sum loses every 1 (2^24 + 1
  // rounds to 2^24), the kernel's splits keep most of them.
  const int64_t R = 65536, C = 4096;
  Graph G;
  G.output("s", sum(G.input("x", f32, {R, 1}), {0}));
  std::vector<float> Col(static_cast<size_t>(R), 1.0f);
  Col[0] = 16777216.0f;
  Bindings B;
  B.Inputs["x"] = HostTensor{f32, {R, 1}, std::vector<double>(Col.begin(), Col.end())};
  ReferenceResult Ref = interpretWithBounds(G, B);
  const double Exact = 16777216.0 + 65535.0;
  // The reference rounds its output to f32, its bound covers that.
  double RefV = Ref.Values.at("s").Data[0];
  CHECK(std::fabs(RefV - Exact) <= 1.0);
  // The graph above is [R, 1]: its bound uses C = 1. The kernel order of
  // the W10 shape (C = 4096) has its own depth; check both.
  for (int64_t Cols : {int64_t(1), C}) {
    int64_t Depth = 0;
    double Got = kernelOrderSum(Col, Cols, Depth);
    double D = static_cast<double>(columnSummationDepth(R, Cols));
    double U = std::ldexp(1.0, -24);
    double Bound = D * U / (1 - D * U) * (16777216.0 + 65535.0) + U * Exact;
    INFO("C=" << Cols << " got " << Got << " depth " << D << " bound " << Bound);
    CHECK(std::fabs(Got - Exact) <= Bound);
    if (Cols == 1)
      CHECK(std::fabs(Got - RefV) <= Ref.Bounds.at("s").Data[0]);
  }
  float Seq = 0;
  for (float V : Col)
    Seq += V;
  CHECK(std::fabs(double(Seq) - RefV) > Ref.Bounds.at("s").Data[0]);
}

TEST_CASE("Column reduce: sum, mean, max and min compile with NVRTC for odd shapes",
          "[column-reduce]") {
  for (DType T : {f32, bf16, f16})
    for (int64_t C : {1, 7, 4095, 4096, 4097}) {
      Graph G;
      Value X = G.input("x", T, {"R", C});
      Value Y = G.input("y", T, {"R", C});
      G.output("sum", sum(cast(X, f32), {0}));
      G.output("mean", mean(X * Y, {0}));
      G.output("max", reduceMax(X, {0}));
      G.output("min", reduceMin(Y, {0}));
      INFO("dtype " << dtypeName(T).str() << " C=" << C);
      // A kernel each with SiblingColumnReductions off; one with it (the
      // default: every pair shares x or y).
      CompileOptions Apart = cpuOptions(true);
      Apart.SiblingColumnReductions = false;
      Executable F = testCompiler().compile(G, Apart);
      CHECK(F.numKernels() == 4);
      Executable M = testCompiler().compile(G, cpuOptions(true));
      CHECK(M.numKernels() == 1);
      bool Aligned = C % (16 / dtypeBytes(T)) == 0;
      for (const Executable *X : {&F, &M})
        for (const KernelInfo &K : X->kernels()) {
          CHECK(K.Kind == KernelKind::ColumnReduce);
          CHECK(K.Vecs.size() == (Aligned ? 2u : 1u));
        }
      CHECK_NOTHROW(testCompiler().compile(G, cpuOptions(false)));
    }
}

TEST_CASE("Column reduce: fused vs unfused vs reference, odd and misaligned",
          "[gpu][column-reduce]") {
  if (!haveGpu())
    return;
  for (DType T : {f32, bf16, f16})
    for (int64_t C : {1, 7, 4095, 4096, 4097}) {
      Graph G;
      Value X = G.input("x", T, {"R", C});
      Value Y = G.input("y", T, {"R", C});
      G.output("sum", sum(X, {0}));
      G.output("sumf", sum(cast(X, f32), {0}));
      G.output("mean", mean(X * Y, {0}));
      G.output("max", reduceMax(X, {0}));
      G.output("min", reduceMin(Y, {0}));
      INFO("dtype " << dtypeName(T).str() << " C=" << C);
      std::vector<int64_t> Rs = {1, 3, 1000};
      if (C < 100)
        Rs.push_back(65537); // the most splits (256) over one tile
      for (int64_t R : Rs) {
        INFO("R=" << R);
        checkGraph(G, randomBindings(G, {{"R", R}}, {}));
        CheckOptions O;
        O.MisalignEach = {1, 3};
        checkGraph(G, randomBindings(G, {{"R", R}}, {}, O), O);
      }
    }
  // Many tiles and many splits at once, an odd C: 9 tiles x 63 splits.
  Graph G;
  Value X = G.input("x", bf16, {"R", 2049});
  G.output("sumf", sum(cast(X, f32), {0}));
  G.output("max", reduceMax(X, {0}));
  checkGraph(G, randomBindings(G, {{"R", 16411}}, {}));
}

TEST_CASE("Column reduce: a split column sum is bitwise reproducible and the same in both "
          "variants",
          "[gpu][column-reduce]") {
  if (!haveGpu())
    return;
  // [16384, 512]: 2 tiles x 128 splits, four times W10's split count (W10 itself,
  // 2^28 elements held as doubles on the host and checked against the fp64
  // reference, took the [gpu] tier past its time limit).
  Graph G;
  Value X = G.input("x", bf16, {"R", 512});
  G.output("s", sum(cast(X, f32), {0}));
  REQUIRE(codegen::columnSplits(16384, 512) == 128);
  Executable Ex = testCompiler().compile(G, CompileOptions{});
  Bindings B = randomBindings(G, {{"R", 16384}}, {});
  HostTensor First = runOnDevice(Ex, B).at("s");
  for (int I = 0; I < 3; ++I)
    CHECK(runOnDevice(Ex, B).at("s").Data == First.Data);
  // The scalar variant (a misaligned input) sums in the same order.
  HostRunOptions Off;
  Off.MisalignEach = {1, 0};
  CHECK(runOnDevice(Ex, B, Off).at("s").Data == First.Data);
  // And it matches the reference within its bound.
  CheckOptions O;
  O.ExpectFusedKernels = 1;
  checkGraph(G, B, O);
}

TEST_CASE("Column reduce: ColumnCombineUnroll sets the combine loop's unroll (an experiment)",
          "[column-reduce]") {
  Graph G;
  G.output("db", sum(G.input("x", bf16, {"B", 2048}), llvm::ArrayRef<int64_t>{0}));
  auto CombineLoop = [&](int Unroll) {
    CompileOptions O;
    O.Arch = "sm_90";
    O.ColumnCombineUnroll = Unroll;
    GraphPlan P = Compiler::plan(G, O);
    REQUIRE(P.Kernels.size() == 1);
    std::string Text = codegen::emitKernel(P.planned(G), P.Kernels[0]).Variants[0].Text;
    size_t At = Text.find("for (long long s = 1; s < nsplit; ++s)");
    REQUIRE(At != std::string::npos);
    size_t Line = Text.rfind("#pragma unroll", At);
    REQUIRE(Line != std::string::npos);
    return Text.substr(Line, Text.find('\n', Line) - Line);
  };
  CHECK(CombineLoop(0) == "#pragma unroll 8"); // launch::ColumnCombineUnroll
  CHECK(CombineLoop(32) == "#pragma unroll 32");
  CompileOptions Bad;
  Bad.ColumnCombineUnroll = 12;
  CHECK_THROWS_WITH(Compiler::plan(G, Bad), Contains("ColumnCombineUnroll: 12"));
  // The unrolled loop compiles.
  CompileOptions O;
  O.Arch = "sm_90";
  O.ColumnCombineUnroll = 64;
  CHECK(testCompiler().compile(G, O).numKernels() == 1);
}
