//===- tests/test_schedule_explain.cpp - the plan says why a schedule ------===//
//
// Issue 12 item 5: every kernel of the plan carries one "schedule:" line with
// the scheduler's reasons (element size and chunk width, which variants and
// why, rows: threads, chunks per thread, whether the row stays in registers),
// and CompileOptions::RowCache forces the register decision for experiments.
//
//===----------------------------------------------------------------------===//
#include "compiler/Planner.h"
#include "codegen/Codegen.h"
#include "codegen/LaunchRule.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace jitfuse;

namespace {

Graph rmsGraph(DType T, int64_t H) {
  Graph G;
  Value X = G.input("x", T, {"B", H});
  Value W = G.input("w", T, {H});
  G.output("y", nn::rmsNorm(X, W, G.scalar("eps", DType::F32)));
  return G;
}

} // namespace

TEST_CASE("the plan explains each kernel's schedule", "[plan][schedule]") {
  {
    Graph G = rmsGraph(DType::BF16, 4096);
    GraphPlan P = planGraph(G, {});
    REQUIRE(P.Kernels.size() == 1);
    CHECK_THAT(P.PlanText, Catch::Contains("schedule: 2 B elements in 16-byte chunks of 8; "
                                           "variants: aligned"));
    // 4096 / 8 = 512 chunks over 256 threads: 2 chunks (2 x 16 B of x and of
    // w = 64 B) a thread, under the 256-byte register budget.
    CHECK_THAT(P.PlanText, Catch::Contains("row of 4096 = 512 chunks: 256 threads a row "
                                           "(2 chunks each); row kept in registers (64 B"));
  }
  {
    // An odd row: the width does not divide it, only the peeled variant.
    Graph G = rmsGraph(DType::BF16, 4095);
    GraphPlan P = planGraph(G, {});
    CHECK_THAT(P.PlanText, Catch::Contains("variant: peeled only (8 does not divide the row)"));
    CHECK(P.Kernels[0].Vecs == std::vector<int>{8, 8}); // led by x, by the output
    CHECK_THAT(P.PlanText, Catch::Contains("a second peeled variant led by the output"));
  }
  {
    // A long f32 row: 32064 / 4 = 8016 chunks, 16 a thread on 512 threads,
    // 2 x 16 x 16 B = 512 B, over the budget: split over a cluster of 2
    // blocks, 8 chunks each, 256 B a thread, kept.
    Graph G = rmsGraph(DType::F32, 32064);
    PlanOptions On;
    On.Schedule.Clusters = true; // CompileOptions::RowClusters on an sm_90 target
    // Clusters are sized with the weight counted (RowCacheStageInputs keeps
    // x alone, 256 B, in one block).
    On.Schedule.RowCacheStageInputs = false;
    CHECK(planGraph(G, {}).Kernels[0].ClusterX == 1); // opt-in
    GraphPlan P = planGraph(G, On);
    CHECK(P.Kernels[0].ClusterX == 2);
    CHECK_THAT(P.PlanText, Catch::Contains("512 threads a row (8 chunks each), split over a "
                                           "cluster of 2 blocks (block results combined in "
                                           "rank order through distributed shared memory); "
                                           "row kept in registers (256 B a thread)"));
    // One block a row (forced; or a target before sm_90): 16 chunks a
    // thread, 512 B, over the budget.
    PlanOptions One = On;
    One.Schedule.ForceCluster = 1;
    GraphPlan P1 = planGraph(G, One);
    CHECK(P1.Kernels[0].ClusterX == 1);
    CHECK_THAT(P1.PlanText, Catch::Contains("512 threads a row (16 chunks each); row re-read "
                                            "from memory per stage (512 B a thread > "
                                            "RowCacheBytes)"));
    PlanOptions Old;
    Old.Schedule.Clusters = false;
    CHECK(planGraph(G, Old).Kernels[0].ClusterX == 1);
    // The kernel says so, and launches a row's blocks together.
    std::string Src = codegen::emitProgram(G, P.Kernels);
    CHECK_THAT(Src, Catch::Contains("__cluster_dims__(2, 1, 1)"));
    codegen::LaunchRule Rule(P.Kernels[0]);
    auto Shape = Rule.shape({5 * 32064, 5, 32064}, 4, 132);
    REQUIRE(Shape);
    CHECK(Shape->GridX == 10);
    CHECK(Shape->BlockX == 512);
  }
  {
    // A row that fits one block's registers stays one block (measured:
    // clusters lost there), and so does a row read once.
    PlanOptions On;
    On.Schedule.Clusters = true;
    On.Schedule.RowCacheStageInputs = false; // as above
    CHECK(planGraph(rmsGraph(DType::BF16, 11008), On).Kernels[0].ClusterX == 1);
    Graph Sm; // softmax over bf16 rows of 50257: 13 chunks of 16 B, 208 B
    Sm.output("y", nn::softmax(Sm.input("x", DType::BF16, {"B", 50257})));
    CHECK(planGraph(Sm, On).Kernels[0].ClusterX == 1);
    // With a weight row beside it (416 B) the row splits over 2 blocks.
    CHECK(planGraph(rmsGraph(DType::BF16, 50257), On).Kernels[0].ClusterX == 2);
    Graph S;
    S.output("s", sum(abs(S.input("x", DType::F32, {"B", 128256}))));
    CHECK(planGraph(S, On).Kernels[0].ClusterX == 1);
  }
}

TEST_CASE("a row read once is kept in registers only when its loads are few",
          "[plan][schedule]") {
  // sum(|x|) and max(|x|) of a row: one stage, per-row outputs only.
  auto SumMax = [](int64_t H) {
    Graph G;
    Value A = abs(G.input("x", DType::BF16, {"B", H}));
    G.output("s", sum(A));
    G.output("m", reduceMax(A));
    return G;
  };
  // A long row: its registers would only cost occupancy.
  GraphPlan P = planGraph(SumMax(50257), {});
  REQUIRE(P.Kernels.size() == 1);
  CHECK_FALSE(P.Kernels[0].CacheRow);
  CHECK_THAT(P.PlanText, Catch::Contains("row read once (one reduction stage, no whole-row "
                                         "output): not kept"));
  // 4096: 2 chunks (32 B) a thread, loaded before the reduction
  // (RowCacheReadOnce); off, the old rule.
  GraphPlan Short = planGraph(SumMax(4096), {});
  CHECK(Short.Kernels[0].CacheRow);
  CHECK(Short.Kernels[0].CacheReadOnce);
  CHECK_THAT(Short.PlanText, Catch::Contains("its 32 B a thread loaded into registers before "
                                             "the reduction (RowCacheReadOnce)"));
  PlanOptions Off;
  Off.Schedule.RowCacheReadOnce = false;
  GraphPlan Old = planGraph(SumMax(4096), Off);
  CHECK_FALSE(Old.Kernels[0].CacheRow);
  CHECK_FALSE(Old.Kernels[0].CacheReadOnce);
  // A second stage (softmax: the sum after the max) reads it again.
  Graph S;
  S.output("y", nn::softmax(S.input("x", DType::BF16, {"B", 4096})));
  CHECK(planGraph(S, {}).Kernels[0].CacheRow);
  // So does an output over the whole row (mean-centering).
  Graph M;
  Value X = M.input("x", DType::BF16, {"B", 4096});
  Value Mean = mean(X);
  M.output("mean", Mean);
  M.output("centered", X - Mean);
  CHECK(planGraph(M, {}).Kernels[0].CacheRow);
}

TEST_CASE("CompileOptions::RowCache forces the register decision", "[plan][schedule]") {
  Graph G = rmsGraph(DType::BF16, 4096);
  PlanOptions Off;
  Off.Schedule.ForceRowCache = false;
  GraphPlan P = planGraph(G, Off);
  CHECK_FALSE(P.Kernels[0].CacheRow);
  CHECK_THAT(P.PlanText, Catch::Contains("row re-read from memory per stage (64 B a thread, "
                                         "forced)"));
  // No register arrays in the generated code.
  CHECK(codegen::emitProgram(G, P.Kernels).find(" cv0[") == std::string::npos);
  GraphPlan Default = planGraph(G, {});
  CHECK(codegen::emitProgram(G, Default.Kernels).find(" cv0[") != std::string::npos);

  Graph L = rmsGraph(DType::F32, 32064);
  PlanOptions On;
  On.Schedule.ForceRowCache = true;
  On.Schedule.ForceCluster = 1;
  GraphPlan PL = planGraph(L, On);
  CHECK(PL.Kernels[0].CacheRow);
  CHECK_THAT(PL.PlanText, Catch::Contains("row kept in registers (512 B a thread, forced)"));
}

TEST_CASE("CompileOptions::RowChunksPerThread sets a row's threads", "[plan][schedule]") {
  // 4096 / 8 = 512 chunks: the rule's 2 a thread is 256 threads; 4 a
  // thread 128, 8 a thread 64. A row of 32 chunks or fewer keeps one chunk
  // a thread (bf16 x 256: 32 threads, 4 rows a block).
  Graph G = rmsGraph(DType::BF16, 4096);
  for (auto [K, Threads] : {std::pair<unsigned, int>{0, 256}, {2, 256}, {4, 128}, {8, 64}}) {
    PlanOptions O;
    O.Schedule.RowChunksPerThread = K;
    GraphPlan P = planGraph(G, O);
    INFO("RowChunksPerThread " << K << "\n" << P.PlanText);
    REQUIRE(P.Kernels.size() == 1);
    CHECK(P.Kernels[0].ThreadsX == Threads);
    CHECK_THAT(P.PlanText, Catch::Contains(fmt::format("row of 4096 = 512 chunks: {} threads a "
                                                       "row ({} chunks each)",
                                                       Threads, 512 / Threads)));
  }
  PlanOptions Four;
  Four.Schedule.RowChunksPerThread = 4;
  GraphPlan Short = planGraph(rmsGraph(DType::BF16, 256), Four);
  CHECK(Short.Kernels[0].ThreadsX == 32);
  CHECK(Short.Kernels[0].RowsPerBlock == 4);
  // 40 chunks at 4 a thread would be 8 threads: at least a warp.
  GraphPlan Few = planGraph(rmsGraph(DType::BF16, 320), Four);
  CHECK(Few.Kernels[0].ThreadsX == 32);
}

TEST_CASE("rows get 4 chunks a thread where one warp covers them and for LayerNorm",
          "[plan][schedule]") {
  auto ThreadsOf = [](const Graph &G) {
    GraphPlan P = planGraph(G, {});
    INFO(P.PlanText);
    REQUIRE(P.Kernels.size() == 1);
    return std::make_pair(P.Kernels[0].ThreadsX, P.Kernels[0].RowsPerBlock);
  };
  auto LayerNorm = [](DType T, int64_t H) {
    Graph G;
    Value X = G.input("x", T, {"B", H});
    G.output("y", nn::layerNorm(X, G.input("w", T, {H}), G.input("b", T, {H}),
                                  G.scalar("eps", DType::F32)));
    return G;
  };
  auto Softmax = [](DType T, int64_t H) {
    Graph G;
    G.output("y", nn::softmax(G.input("x", T, {"B", H})));
    return G;
  };
  // A mean and its variance: 4 chunks a thread (bf16 x 4096: 512 chunks,
  // 128 threads); softmax and RMSNorm keep 2 (256).
  CHECK(ThreadsOf(LayerNorm(DType::BF16, 4096)) == std::make_pair(128, 1));
  CHECK(ThreadsOf(LayerNorm(DType::F32, 4999)) == std::make_pair(256, 1));
  CHECK(ThreadsOf(Softmax(DType::BF16, 4096)) == std::make_pair(256, 1));
  CHECK(ThreadsOf(rmsGraph(DType::BF16, 4096)) == std::make_pair(256, 1));
  // 65-128 chunks: one warp a row, 4 rows a block, whatever the pattern
  // (bf16 x 1021 and x 1024: 128 chunks; f32 x 300: 75).
  CHECK(ThreadsOf(Softmax(DType::BF16, 1021)) == std::make_pair(32, 4));
  CHECK(ThreadsOf(rmsGraph(DType::BF16, 1024)) == std::make_pair(32, 4));
  CHECK(ThreadsOf(Softmax(DType::F32, 300)) == std::make_pair(32, 4));
  // Over 128 chunks at least 2 warps, LayerNorm too (f32 x 768: 192 chunks).
  CHECK(ThreadsOf(LayerNorm(DType::F32, 768)) == std::make_pair(64, 1));
  CHECK(ThreadsOf(Softmax(DType::BF16, 1032)) == std::make_pair(64, 1));
}

namespace {

size_t count(const std::string &S, const std::string &Needle) {
  size_t N = 0;
  for (size_t At = S.find(Needle); At != std::string::npos; At = S.find(Needle, At + 1))
    ++N;
  return N;
}

/// The text of variant \p Name in \p Src (from its signature to the next).
std::string variantText(const std::string &Src, const std::string &Name) {
  size_t At = Src.find(Name + "(");
  REQUIRE(At != std::string::npos);
  size_t End = Src.find("__global__", At);
  return Src.substr(At, End == std::string::npos ? std::string::npos : End - At);
}

} // namespace

TEST_CASE("a row kernel computes softmax's exp once per element", "[plan][schedule]") {
  // softmax: max stage, then sum(exp(x - max)), then exp(x - max) / sum.
  // The sum's loop keeps exp's values for the epilogue (issue 12 item 4:
  // the second expf was a third of a bf16 row's instructions).
  Graph G;
  Value X = G.input("x", DType::BF16, {"B", 4096});
  G.output("y", cast(nn::softmax(cast(X, DType::F32)), DType::BF16));
  GraphPlan P = planGraph(G, {});
  REQUIRE(P.Kernels.size() == 1);
  const KernelPlan &K = P.Kernels[0];
  REQUIRE(K.CachedValues.size() == 1);
  CHECK(G.node(K.CachedValues[0]).Kind == Op::Exp);
  CHECK_THAT(P.PlanText, Catch::Contains("and the values of %"));
  std::string Src = codegen::emitProgram(G, P.Kernels);
  // The chunk loop's body spells its 8 lanes: 8 expf in the aligned
  // variant (the sum's loop), not 16 (the epilogue's loop again).
  CHECK(count(variantText(Src, K.variantName(8)), "expf(") == 8);
  // The peeled one: the same for its whole chunks, and one for its head
  // and tail elements in each of the two loops that need exp.
  CHECK(count(variantText(Src, K.variantName(8, true)), "expf(") == 10);
  // The division by the row's sum: a reciprocal per row (jf_div_row).
  CHECK(count(variantText(Src, K.variantName(8)), "jf_div_row(") == 8);

  // Forced re-reading keeps nothing in registers, values included.
  PlanOptions Off;
  Off.Schedule.ForceRowCache = false;
  CHECK(planGraph(G, Off).Kernels[0].CachedValues.empty());
}

TEST_CASE("a peeled row runs one copy of its body per stage", "[plan][schedule]") {
  // Whole chunks without lane checks, then the head and tail elements one
  // per thread: no partial-chunk copy of the body (a warp holding a row's
  // partial chunk ran both copies).
  Graph G = rmsGraph(DType::BF16, 4095);
  GraphPlan P = planGraph(G, {});
  std::string Src = codegen::emitProgram(G, P.Kernels);
  std::string Peeled = variantText(Src, P.Kernels[0].variantName(8, true));
  CHECK(count(Peeled, "jf_load_part") == 0);
  CHECK(count(Peeled, "jf_store_part") == 0);
  // 256 threads: one head/tail element each at most, loaded with the
  // chunks (x and w), then used by the stage and the epilogue.
  CHECK(count(Peeled, "if (tx < jf_ns)") == 2);
  CHECK(count(Peeled, "cs0 = in_0[") == 1);
  CHECK(count(Peeled, "cs1 = in_1[") == 1);

  // A short row (8 chunks: 8 threads) has fewer threads than head and tail
  // elements (up to 14): a loop over them, read from memory.
  Graph S = rmsGraph(DType::BF16, 61);
  GraphPlan PS = planGraph(S, {});
  std::string Short =
      variantText(codegen::emitProgram(S, PS.Kernels), PS.Kernels[0].variantName(8, true));
  CHECK(count(Short, "for (int jf_e = tx; jf_e < jf_ns; jf_e += 8)") == 2);
  CHECK(count(Short, "cs0") == 0);
}

TEST_CASE("a half-precision output is rounded once when stored", "[plan][schedule]") {
  // y = cast(f32 value, bf16) as an output: stored as jf_float_to_bf16 of the
  // f32 value (the same bits) instead of the cast's round trip
  // jf_bf16_to_float(jf_float_to_bf16(v)) converted again.
  Graph G = rmsGraph(DType::BF16, 4096);
  GraphPlan P = planGraph(G, {});
  std::string Aligned =
      variantText(codegen::emitProgram(G, P.Kernels), P.Kernels[0].variantName(8));
  CHECK(count(Aligned, "jf_bf16_to_float(jf_float_to_bf16(") == 0);
  CHECK(count(Aligned, "= jf_float_to_bf16(") == 8);
}
