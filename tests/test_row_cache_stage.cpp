//===- tests/test_row_cache_stage.cpp - the register cache's inputs -------===//
//
// CompileOptions::RowCacheStageInputs (default on): a row read again
// whose inputs do not all fit the register budget (RowCacheBytes) keeps
// only the inputs a reduction stage reads, when those fit; a norm's weight
// and bias, read once by the epilogue, are loaded there. Without it,
// LayerNorm f32 x 32064 (256 B of x a thread, 768 B with weight and bias)
// re-read its row per stage. Rows that fit whole are unchanged, and such a
// row keeps the forms of a re-read row for few rows (cluster, wide).
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"
#include "TestEnv.h"

#include "compiler/Planner.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// The kernel at 512 threads a row (RowCacheWideThreads off: its own cases
/// below).
KernelPlan onlyKernel(const Graph &G, bool StageInputs) {
  PlanOptions O;
  O.Schedule.RowCacheStageInputs = StageInputs;
  O.Schedule.RowCacheWideThreads = false;
  GraphPlan P = planGraph(G, O);
  REQUIRE(P.Kernels.size() == 1);
  return P.Kernels.front();
}

/// The input indices of a kernel whose nodes are named \p Names.
std::vector<unsigned> inputsNamed(const Graph &G, const KernelPlan &K,
                                  std::initializer_list<const char *> Names) {
  std::vector<unsigned> Out;
  for (unsigned I = 0; I < K.Inputs.size(); ++I)
    for (const char *N : Names)
      if (G.node(K.Inputs[I]).Name == N)
        Out.push_back(I);
  return Out;
}

} // namespace

TEST_CASE("RowCacheStageInputs: the register cache holds only a stage's inputs",
          "[schedule][codegen][rowcache]") {
  SECTION("LayerNorm f32 x 32064: x alone fits (256 B a thread), so the row is kept") {
    Graph G = layerNorm(DType::F32, 32064);
    KernelPlan Off = onlyKernel(G, false);
    CHECK_FALSE(Off.CacheRow);
    CHECK(Off.Why.find("row re-read from memory per stage (768 B a thread > RowCacheBytes)") !=
          std::string::npos);
    KernelPlan On = onlyKernel(G, true);
    INFO(On.Why);
    REQUIRE(On.CacheRow);
    CHECK(On.ThreadsX == 512);
    CHECK(On.Why.find("row kept in registers (256 B a thread of the inputs its stages read, "
                      "%0; the epilogue loads the others: 768 B with them > RowCacheBytes)") !=
          std::string::npos);
    CHECK(On.RowCacheInputs == inputsNamed(G, On, {"x"}));
    // Few rows still launch the forms the re-read row had: the wide one
    // re-reads at 1024 threads, the cluster one keeps its part of the row.
    REQUIRE(On.WideRows != nullptr);
    CHECK(On.WideRows->ThreadsX == 1024);
    CHECK_FALSE(On.WideRows->CacheRow);
    REQUIRE(Off.WideRows != nullptr);
    CHECK(On.WideRows->Why == Off.WideRows->Why);
    PlanOptions Few;
    Few.Schedule.FewRowsClusters = true;
    Few.Schedule.RowCacheStageInputs = true;
    Few.Schedule.RowCacheWideThreads = false;
    GraphPlan FP = planGraph(G, Few);
    REQUIRE(FP.Kernels.front().FewRows != nullptr);
    CHECK(FP.Kernels.front().FewRows->ClusterX == 8);
    CHECK(FP.Kernels.front().FewRows->CacheRow);
    CHECK(FP.Kernels.front().FewRows->RowCacheInputs.empty());

    // The aligned variant declares one cache array (x's 16 chunks), and
    // loads the weight and bias in the epilogue.
    CompileOptions CO;
    CO.Arch = "sm_90";
    CO.DeferVariants = false;
    CO.RowCacheStageInputs = true;
    CO.RowCacheWideThreads = false;
    Executable E = testCompiler().compile(G, CO);
    const std::string &S = E.kernels()[0].Source;
    size_t First = S.find("__global__");
    std::string Aligned = S.substr(First, S.find("__global__", First + 1) - First);
    INFO(Aligned);
    CHECK(countOf(Aligned, "jf_vec<float, 4> cv") == 1);
    CHECK(countOf(Aligned, "jf_vec<float, 4> cv0[16];") == 1);
    CHECK(countOf(Aligned, "jf_load<float, 4>(in_1 + col)") == 1);
    CHECK(countOf(Aligned, "jf_load<float, 4>(in_2 + col)") == 1);
  }
  SECTION("add + RMSNorm bf16 x 32064: x and residual are kept, not the weight") {
    Graph G = addRmsNorm(DType::BF16, 32064);
    CHECK_FALSE(onlyKernel(G, false).CacheRow);
    KernelPlan On = onlyKernel(G, true);
    INFO(On.Why);
    REQUIRE(On.CacheRow);
    CHECK(On.RowCacheInputs == inputsNamed(G, On, {"x", "residual"}));
    CHECK(On.Why.find("row kept in registers (256 B a thread") != std::string::npos);
  }
  SECTION("rows that fit whole keep every input, as without the option") {
    // Dropping the weight there cost runs of few rows up to 0.84x (H200).
    // (LayerNorm bf16 x 4096 at 128 threads, 4 chunks a thread: x, weight
    // and bias 192 B.)
    Graph G = layerNorm(DType::BF16, 4096);
    KernelPlan Off = onlyKernel(G, false), On = onlyKernel(G, true);
    REQUIRE(On.CacheRow);
    CHECK(On.RowCacheInputs.empty()); // every row load
    CHECK(On.Why == Off.Why);
    CHECK(On.Why.find("row kept in registers (192 B a thread)") != std::string::npos);
  }
  SECTION("stage inputs that do not fit either: re-read, as without the option") {
    // x and residual: 640 B a thread; their sum, 320 B, does not fit
    // either (at 32064 it does: RowCacheValues, test_row_values.cpp).
    Graph G = addRmsNorm(DType::F32, 40009);
    KernelPlan Off = onlyKernel(G, false), On = onlyKernel(G, true);
    CHECK_FALSE(On.CacheRow);
    CHECK(On.Why == Off.Why);
  }
  SECTION("softmax reads its row in every stage: unchanged") {
    Graph G = softmax(DType::F32, 32064);
    KernelPlan Off = onlyKernel(G, false), On = onlyKernel(G, true);
    CHECK(Off.CacheRow == On.CacheRow);
    CHECK(Off.Why == On.Why);
  }
}

TEST_CASE("GPU: rows keeping only their stage inputs match the reference",
          "[gpu][rowcache]") {
  std::vector<RowCase> Cases;
  Cases.push_back({layerNorm(DType::F32, 32064), 150});
  Cases.push_back({addRmsNorm(DType::BF16, 32064), 150});
  Cases.push_back({layerNorm(DType::BF16, 50257), 90});
  Cases.push_back({layerNorm(DType::F32, 11008), 300});
  PlanOptions O;
  O.Schedule.RowCacheWideThreads = false; // 512 threads; 1024: the case below
  CheckOptions CO;
  CO.RowCacheWideThreads = false;
  checkRowCases(Cases, O,
                [](const KernelPlan &K) { return K.CacheRow && !K.RowCacheInputs.empty(); }, CO);
}

TEST_CASE("RowCacheWideThreads (default on): a full register cache takes 1024 threads a row",
          "[schedule][rowcache]") {
  PlanOptions O;
  O.Schedule.RowCacheWideThreads = true;
  O.Schedule.FewRowsClusters = true;
  SECTION("LayerNorm f32 x 32064: 256 B a thread at 512, 128 B at 1024") {
    Graph G = layerNorm(DType::F32, 32064);
    GraphPlan P = planGraph(G, O);
    REQUIRE(P.Kernels.size() == 1);
    const KernelPlan &K = P.Kernels.front();
    INFO(K.Why);
    REQUIRE(K.CacheRow);
    CHECK(K.ThreadsX == 1024);
    CHECK(K.MinBlocksPerSm == 1);
    CHECK(K.Why.find("1024 threads a row (8 chunks each), not 512: its 256 B a thread there "
                     "are over half the budget (RowCacheWideThreads); row kept in registers "
                     "(128 B") != std::string::npos);
    // Few rows keep the cluster form (512 threads x 8 blocks); no wide twin.
    REQUIRE(K.FewRows != nullptr);
    CHECK(K.FewRows->ThreadsX == 512);
    CHECK(K.FewRows->ClusterX == 8);
    CHECK(K.WideRows == nullptr);
  }
  SECTION("rows filling half the budget or less keep 512 threads") {
    Graph G = layerNorm(DType::BF16, 32064); // 128 B of x a thread
    CHECK(onlyKernel(G, true).ThreadsX == 512);
    GraphPlan P = planGraph(G, O);
    CHECK(P.Kernels.front().ThreadsX == 512);
    CHECK(P.Kernels.front().MinBlocksPerSm == 0);
  }
  SECTION("on by default; off keeps 512 threads") {
    CHECK(planGraph(layerNorm(DType::F32, 32064), PlanOptions{}).Kernels[0].ThreadsX == 1024);
    PlanOptions Off;
    Off.Schedule.RowCacheWideThreads = false;
    CHECK(planGraph(layerNorm(DType::F32, 32064), Off).Kernels[0].ThreadsX == 512);
  }
}

TEST_CASE("GPU: rows kept at 1024 threads match the reference", "[gpu][rowcache]") {
  std::vector<RowCase> Cases;
  Cases.push_back({layerNorm(DType::F32, 32064), 150});
  Cases.push_back({addRmsNorm(DType::BF16, 32064), 150});
  Cases.push_back({softmax(DType::BF16, 50257), 90});
  Cases.push_back({addRmsNorm(DType::F32, 11008), 300});
  PlanOptions O;
  O.Schedule.RowCacheWideThreads = true;
  CheckOptions CO;
  CO.RowCacheWideThreads = true;
  checkRowCases(Cases, O, [](const KernelPlan &K) { return K.CacheRow && K.ThreadsX == 1024; },
                CO);
}
