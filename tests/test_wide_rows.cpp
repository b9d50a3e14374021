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
  O.FewRowsClusters = true;
  O.WideRows = true;
  return O;
}

} // namespace

TEST_CASE("long re-read rows get a wide form of 1024 threads a row", "[schedule][widerows]") {
  SECTION("softmax bf16 x 128256: plain, cluster and wide forms") {
    CHECK(onlyKernel(softmax(DType::BF16, 128256), PlanOptions{}).WideRows != nullptr);
    PlanOptions Off = wideOn();
    Off.WideRows = false; // for comparisons
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
    CHECK(onlyKernel(layerNorm(DType::BF16, 6144), wideOn()).WideRows == nullptr);
    Graph G;
    G.output("y", nn::softmax(G.input("x", DType::BF16, {1025, 128256})));
    CHECK(onlyKernel(G, wideOn()).WideRows == nullptr);
    // Static rows that fit: the form is kept.
    Graph F;
    F.output("y", nn::softmax(F.input("x", DType::BF16, {1000, 128256})));
    CHECK(onlyKernel(F, wideOn()).WideRows != nullptr);
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
    CHECK(R.size() == K.Vecs.size() + K.FewRowsVariants + K.WideRowsVariants);
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
  CheckOptions CO;
  CO.WideRows = true;
  checkRowCases(Cases, wideOn(), [](const KernelPlan &K) { return K.WideRows != nullptr; }, CO);
}
