//===- tests/test_wide_rows.cpp - the wide form of long rows -----------===//
//
// CompileOptions::RowWideRows (default on): a long row re-read per stage, one block of
// 512 threads a row, also compiles at 1024 threads a row (KernelPlan::
// WideRows), which run() launches when the cluster form does not run and
// every 1024-thread block is resident at once (codegen::launch::
// useWideRows). The launch choice itself is pinned by the [hostpath] case
// on the fake driver.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"

#include "codegen/LaunchRule.h"
#include "compiler/Planner.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

KernelPlan onlyKernel(const Graph &G, const PlanOptions &O) {
  GraphPlan P = planGraph(G, O);
  REQUIRE(P.Kernels.size() == 1);
  return P.Kernels.front();
}

PlanOptions wideOn() {
  PlanOptions O;
  O.Schedule.FewRowsClusters = true;
  O.Schedule.WideRows = true;
  return O;
}

} // namespace

TEST_CASE("long re-read rows get a wide form of 1024 threads a row", "[schedule][widerows]") {
  // (And rows the rule gave 4 chunks a thread a form at 2: its section.)
  SECTION("softmax bf16 x 128256: plain, cluster and wide forms") {
    CHECK(onlyKernel(softmax(DType::BF16, 128256), PlanOptions{}).WideRows != nullptr);
    PlanOptions Off = wideOn();
    Off.Schedule.WideRows = false; // for comparisons
    CHECK(onlyKernel(softmax(DType::BF16, 128256), Off).WideRows == nullptr);
    KernelPlan K = onlyKernel(softmax(DType::BF16, 128256), wideOn());
    REQUIRE(K.WideRows);
    REQUIRE(K.FewRows);
    CHECK(K.ThreadsX == 512);
    CHECK(K.WideRows->ThreadsX == 1024);
    CHECK(K.WideRows->ClusterX == 1);
    CHECK(K.WideRows->Name == K.Name + "_t1024");
    CHECK(K.WideRows->Vecs == K.Vecs);
    CHECK(!K.WideRows->CacheRow);
    CHECK(K.Why.find("when a run's rows <= SMs and the few-rows form does not run (one block "
                     "of 1024 threads an SM): kernel " +
                     K.WideRows->Name) != std::string::npos);
    // The twins have no twins.
    CHECK(K.WideRows->FewRows == nullptr);
    CHECK(K.WideRows->WideRows == nullptr);
    CHECK(K.FewRows->WideRows == nullptr);
  }
  SECTION("rows kept in registers, short rows and many static rows have none") {
    CHECK(onlyKernel(softmax(DType::BF16, 4096), wideOn()).WideRows == nullptr);
    CHECK(onlyKernel(layerNorm(DType::F32, 768), wideOn()).WideRows == nullptr);
    Graph G;
    G.output("y", nn::softmax(G.input("x", DType::BF16, {1025, 128256})));
    CHECK(onlyKernel(G, wideOn()).WideRows == nullptr);
    // Static rows that fit: the form is kept.
    Graph F;
    F.output("y", nn::softmax(F.input("x", DType::BF16, {1000, 128256})));
    CHECK(onlyKernel(F, wideOn()).WideRows != nullptr);
  }
  SECTION("rows the rule gave 4 chunks a thread: a form at 2 for runs of few rows") {
    // LayerNorm bf16 x 6144: 768 chunks, 128 threads (6 chunks each); the
    // form 256 threads (3 each). Softmax bf16 x 1021: one warp a row, 4
    // rows a block; the form 64 threads, one row a block.
    KernelPlan K = onlyKernel(layerNorm(DType::BF16, 6144), wideOn());
    CHECK(K.ThreadsX == 128);
    REQUIRE(K.WideRows);
    CHECK(K.WideRows->ThreadsX == 256);
    CHECK(K.WideRows->RowsPerBlock == 1);
    CHECK(K.WideRows->Name == K.Name + "_t256");
    CHECK(K.WideRows->Vecs == K.Vecs);
    CHECK(K.WideRows->MinBlocksPerSm == 0);
    CHECK(K.Why.find("when a run's rows <= SMs: kernel " + K.WideRows->Name +
                     " instead, 256 threads a row (2 chunks each)") != std::string::npos);
    KernelPlan S = onlyKernel(softmax(DType::BF16, 1021), wideOn());
    CHECK(S.ThreadsX == 32);
    CHECK(S.RowsPerBlock == 4);
    REQUIRE(S.WideRows);
    CHECK(S.WideRows->ThreadsX == 64);
    CHECK(S.WideRows->RowsPerBlock == 1);
    // Off with the other wide forms, and under a forced chunk count.
    PlanOptions Off = wideOn();
    Off.Schedule.WideRows = false;
    CHECK(onlyKernel(layerNorm(DType::BF16, 6144), Off).WideRows == nullptr);
    PlanOptions Forced = wideOn();
    Forced.Schedule.RowChunksPerThread = 4;
    CHECK(onlyKernel(layerNorm(DType::BF16, 6144), Forced).WideRows == nullptr);
  }
  SECTION("compiled: every form's variants, 1024-thread bounds on the wide ones") {
    CompileOptions Opts;
    Opts.Arch = "sm_90";
    Opts.DeferVariants = false;
    Opts.RowWideRows = true;
    Executable E = testCompiler().compile(addRmsNorm(DType::BF16, 50257), Opts);
    REQUIRE(E.numKernels() == 1);
    const KernelInfo &K = E.kernels()[0];
    CHECK(K.WideRowsName == K.Name + "_t1024");
    CHECK(K.WideRowsVariants == K.Vecs.size());
    CHECK(E.source().find("__launch_bounds__(1024, 1) " + K.WideRowsName + "_p8(") !=
          std::string::npos);
    std::vector<rt::KernelResources> R = E.kernelResources();
    CHECK(R.size() ==
          K.Vecs.size() + K.FewRowsVariants + K.WideRowsVariants + K.AlignedClusterVariants);
    Opts.RowWideRows = false;
    Executable Off = testCompiler().compile(addRmsNorm(DType::BF16, 50257), Opts);
    CHECK(Off.kernels()[0].WideRowsName.empty());
    CHECK(Off.source().find("_t1024_") == std::string::npos);
  }
}

TEST_CASE("GPU: the wide form matches the reference on both sides of its rows",
          "[gpu][widerows]") {
  // On the H200 (132 SMs) 67-132 rows launch the wide form; 133 do not.
  std::vector<RowCase> Cases;
  Cases.push_back({softmax(DType::BF16, 128256), 67});
  // (LayerNorm f32 x 32064 keeps its row at 1024 threads: RowCacheWideThreads.)
  // (add + RMSNorm f32 x 32064 keeps x + residual: RowCacheValues.)
  Cases.push_back({addRmsNorm(DType::F32, 40009), 132});
  Cases.push_back({addRmsNorm(DType::BF16, 40009), 100});
  Cases.push_back({addRmsNorm(DType::F16, 50257), 133});
  Cases.push_back({layerNorm(DType::F32, 128256), 70});
  // Rows given 4 chunks a thread, their 2-chunk form on both sides.
  Cases.push_back({layerNorm(DType::BF16, 4095), 132});
  Cases.push_back({layerNorm(DType::F16, 6144), 133});
  Cases.push_back({softmax(DType::BF16, 1021), 131});
  Cases.push_back({layerNorm(DType::F32, 4999), 7});
  CheckOptions CO;
  CO.RowWideRows = true;
  checkRowCases(Cases, wideOn(), [](const KernelPlan &K) { return K.WideRows != nullptr; }, CO);
}
