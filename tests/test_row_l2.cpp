//===- tests/test_row_l2.cpp - rows re-read through L2 (experiments) ------===//
//
// CompileOptions::RowL2Hints and RowBlocksPerSm act on row kernels that
// read their row from memory again in each stage (too long for registers):
// L2 eviction hints on the row-shaped loads (evict_last in the stages,
// evict_first in the last loop) and unused dynamic shared memory that caps
// the blocks an SM runs. The CPU part checks which kernels get them, the
// kernel text, the PTX and the launch's bytes against hand-computed values;
// the GPU part runs them against the fp64 reference, fused and unfused.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"

#include "codegen/LaunchRule.h"
#include "examples/ExampleGraphs.h"
#include "compiler/Planner.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>

#include <map>
#include <type_traits>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// These cases pin the schedules of rows re-read per stage (and kept in
/// shared memory) on rows that RowCacheStageInputs (default on) now keeps
/// in registers: they use the rule before it, under which those rows are
/// re-read. The schedules still serve longer rows by default.
template <typename Options> Options oldRule() {
  Options O;
  // PlanOptions holds them in its ScheduleOptions; the compile options
  // (CompileOptions, CheckOptions) as fields of their own.
  if constexpr (std::is_same_v<Options, PlanOptions>) {
    O.Schedule.RowCacheStageInputs = false;
  } else {
    O.RowCacheStageInputs = false;
  }
  return O;
}

Graph layerNormDyn(DType T) {
  Graph G;
  Value X = G.input("x", T, {"B", "H"});
  Value W = G.input("weight", T, {"H"});
  Value Bias = G.input("bias", T, {"H"});
  G.output("y", nn::layerNorm(X, W, Bias, G.scalar("eps", DType::F32)));
  return G;
}

KernelPlan onlyKernel(const Graph &G, const PlanOptions &O) {
  GraphPlan P = planGraph(G, O);
  REQUIRE(P.Kernels.size() == 1);
  return P.Kernels.front();
}

/// A graph and its dims, for the GPU cases.
struct Case {
  Graph G;
  std::map<std::string, int64_t> Dims;
};

/// Each case fused and unfused against the reference, aligned and
/// misaligned by one element (with NaN and Inf), under \p Base's options.
void checkCases(const std::vector<Case> &Cases, const CheckOptions &Base) {
  for (const Case &C : Cases) {
    INFO("case " << (&C - Cases.data()));
    checkAlignedAndMisaligned(C.G, C.Dims, Base);
  }
}

/// Online softmax and Welford on (Welford otherwise by the L2 share rule).
PlanOptions pairsOn() {
  PlanOptions O = oldRule<PlanOptions>();
  O.Schedule.RowOnlineSoftmax = true;
  O.Schedule.RowWelford = true;
  return O;
}

/// How many of the kernel's paired reductions are Welford (or online softmax).
size_t pairsOf(const KernelPlan &K, bool Welford) {
  return llvm::count_if(K.RowPairs, [&](const RowPair &RP) { return RP.Welford == Welford; });
}

/// The text of the first variant of G's single kernel, compiled for sm_90
/// with both pair options on.
std::string firstVariantWithPairs(const Graph &G) {
  CompileOptions Opts = oldRule<CompileOptions>();
  Opts.Arch = "sm_90";
  Opts.RowOnlineSoftmax = true;
  Opts.RowWelford = true;
  Executable E = testCompiler().compile(G, Opts);
  const std::string &Src = E.source();
  size_t Kernel = Src.find("extern \"C\"");
  size_t Next = Src.find("extern \"C\"", Kernel + 1);
  REQUIRE(Kernel != std::string::npos);
  REQUIRE(Next != std::string::npos);
  return Src.substr(Kernel, Next - Kernel);
}

size_t count(const std::string &S, const std::string &Sub) {
  size_t N = 0;
  for (size_t At = S.find(Sub); At != std::string::npos; At = S.find(Sub, At + 1))
    ++N;
  return N;
}

} // namespace

TEST_CASE("rows re-read per stage: L2 hints and the occupancy pad (experiments)",
          "[schedule][l2hints]") {
  // sm_90: 228 KB of shared memory an SM; 3 blocks' worth of 76 KB leaves
  // room for 2 (each also holds 1 KB reserved and its static scratch).
  CHECK(codegen::occupancyPadBytes(9, 0, 2) == 77824);
  CHECK(codegen::occupancyPadBytes(9, 0, 1) == 116736);
  CHECK(codegen::occupancyPadBytes(8, 6, 1) == 51200);
  PlanOptions On = oldRule<PlanOptions>();
  On.Schedule.RowL2Hints = true;
  On.Schedule.RowPadSharedBytes = codegen::occupancyPadBytes(9, 0, 2);
  SECTION("add + RMSNorm bf16 x 32064 is re-read: hints and pad") {
    Graph G = addRmsNorm(DType::BF16, 32064);
    KernelPlan K = onlyKernel(G, On);
    CHECK_FALSE(K.CacheRow);
    CHECK(K.RowL2Hints);
    CHECK(K.RowPadSharedBytes == 77824);
    CHECK(K.Why.find("evict_last") != std::string::npos);
    codegen::LaunchSizes S{3 * 32064, 3, 32064};
    for (bool Peeled : {false, true}) {
      std::optional<codegen::LaunchShape> L = codegen::LaunchRule(K).shape(S, 8, 132, Peeled);
      REQUIRE(L.has_value());
      CHECK(L->SharedBytes == 77824);
    }
    KernelPlan Off = onlyKernel(G, oldRule<PlanOptions>());
    CHECK_FALSE(Off.RowL2Hints);
    CHECK(Off.RowPadSharedBytes == 0);
  }
  SECTION("rows kept in registers and rows read once get neither") {
    KernelPlan Short = onlyKernel(addRmsNorm(DType::BF16, 4096), On);
    CHECK(Short.CacheRow);
    CHECK_FALSE(Short.RowL2Hints);
    CHECK(Short.RowPadSharedBytes == 0);
    Graph Once;
    Value X = Once.input("x", DType::BF16, {"B", 50257});
    Once.output("s", sum(abs(X)));
    KernelPlan K = onlyKernel(Once, On);
    CHECK_FALSE(K.RowL2Hints);
    CHECK(K.RowPadSharedBytes == 0);
  }
  SECTION("a dynamic row is re-read: hints and pad") {
    KernelPlan K = onlyKernel(layerNormDyn(DType::F16), On);
    CHECK(K.RowL2Hints);
    CHECK(K.RowPadSharedBytes == 77824);
  }
}

TEST_CASE("rows re-read per stage: hinted loads in the kernel text and the PTX",
          "[codegen][l2hints]") {
  CompileOptions Opts = oldRule<CompileOptions>();
  Opts.Arch = "sm_90";
  Opts.WantPtx = true;
  Opts.RowL2Hints = true;
  Opts.RowBlocksPerSm = 2;
  Executable E = testCompiler().compile(addRmsNorm(DType::BF16, 32064), Opts);
  REQUIRE(E.numKernels() == 1);
  const std::string &Src = E.source();
  // x and residual: evict_last in the sum-of-squares loop; their sum,
  // stored there (RowReadBack), evict_first in the output loop; the weight,
  // read by every row, has no hint.
  CHECK(Src.find("jf_load<jf_bf16, 8, 1>(in_0 + ") != std::string::npos);
  CHECK(Src.find("jf_load<jf_bf16, 8, 1>(in_1 + ") != std::string::npos);
  CHECK(Src.find("jf_load<jf_bf16, 8, 2>(out_0 + ") != std::string::npos);
  CHECK(Src.find("jf_load<jf_bf16, 8>(in_2 + ") != std::string::npos);
  // The aligned variant: 8 chunks x (2 inputs + the sum read back) of
  // 16-byte loads.
  std::string Ptx = E.ptx();
  size_t Aligned = Ptx.find(".entry jf_k0_add_v8");
  size_t Peeled = Ptx.find(".entry jf_k0_add_p8");
  REQUIRE(Aligned != std::string::npos);
  REQUIRE(Peeled != std::string::npos);
  std::string V8 = Aligned < Peeled ? Ptx.substr(Aligned, Peeled - Aligned) : Ptx.substr(Aligned);
  CHECK(count(V8, "ld.global.L1::no_allocate.L2::cache_hint.v4.b32") == 24);
  CHECK(count(V8, "createpolicy.fractional.L2::evict_last.b64") > 0);
  CHECK(count(V8, "createpolicy.fractional.L2::evict_first.b64") > 0);
  // Without the options the kernel has no hinted load.
  CompileOptions Plain = oldRule<CompileOptions>();
  Plain.Arch = "sm_90";
  Plain.WantPtx = true;
  Executable P = testCompiler().compile(addRmsNorm(DType::BF16, 32064), Plain);
  CHECK(P.ptx().find("cache_hint") == std::string::npos);
  CHECK(P.source().find(", 8, 1>") == std::string::npos);
}

TEST_CASE("GPU: rows re-read with L2 hints and an occupancy pad match the reference",
          "[gpu][l2hints]") {
  std::vector<Case> Cases;
  Cases.push_back({addRmsNorm(DType::BF16, 32064), {{"B", 5}}});
  Cases.push_back({addRmsNorm(DType::F32, 50257), {{"B", 3}}});
  Cases.push_back({softmax(DType::F16, 128256), {{"B", 2}}});
  Cases.push_back({layerNormDyn(DType::BF16), {{"B", 7}, {"H", 20011}}});
  PlanOptions On = oldRule<PlanOptions>();
  On.Schedule.RowL2Hints = true;
  for (const Case &C : Cases)
    REQUIRE(onlyKernel(C.G, On).RowL2Hints);
  CheckOptions CO = oldRule<CheckOptions>();
  CO.RowL2Hints = true;
  CO.RowBlocksPerSm = 2;
  checkCases(Cases, CO);
}

TEST_CASE("rows re-read per stage: an output needing no reduction is read back",
          "[schedule][codegen][readback]") {
  SECTION("add + RMSNorm: the sum is stored by the first loop, read back by the last") {
    Graph G = addRmsNorm(DType::BF16, 32064);
    KernelPlan K = onlyKernel(G, oldRule<PlanOptions>());
    CHECK(K.RowReadBack == std::vector<unsigned>{0}); // residual_out
    CHECK(K.Why.find("stored by the first loop and read back") != std::string::npos);
    PlanOptions Off = oldRule<PlanOptions>();
    Off.Schedule.RowReadBack = false;
    CHECK(onlyKernel(G, Off).RowReadBack.empty());
    CompileOptions Opts = oldRule<CompileOptions>();
    Opts.Arch = "sm_90";
    Executable E = testCompiler().compile(G, Opts);
    const std::string &Src = E.source();
    // Per variant: x and residual are read by the first loop only; the
    // sum, stored there, is read back by the output loop.
    size_t Kernel = Src.find("extern \"C\"");
    REQUIRE(Kernel != std::string::npos);
    size_t Reduce = Src.find("jf_block_reduce", Kernel);
    REQUIRE(Reduce != std::string::npos);
    size_t StoreSum = Src.find("(out_0 + rowc * R + col");
    size_t LoadSum = Src.find("(out_0 + (c0 * 32064) + col)");
    size_t StoreY = Src.find("(out_1 + rowc * R + col");
    CHECK(StoreSum < Reduce);
    CHECK(Reduce < LoadSum);
    CHECK(LoadSum < StoreY);
    CHECK(Src.find("in_0 + (c0 * 32064) + col", Reduce) > Src.find("extern \"C\"", Reduce));
  }
  SECTION("rows kept in registers, outputs after a reduction and unused outputs: none") {
    CHECK(onlyKernel(addRmsNorm(DType::BF16, 4096), oldRule<PlanOptions>()).RowReadBack.empty());
    CHECK(onlyKernel(softmax(DType::F32, 128256), oldRule<PlanOptions>()).RowReadBack.empty());
    Graph G;
    Value X = G.input("x", DType::F32, {"B", 50257});
    Value Twice = X * 2.0;
    G.output("twice", Twice);
    G.output("p", nn::softmax(X));
    CHECK(onlyKernel(G, oldRule<PlanOptions>()).RowReadBack.empty()); // nothing else reads `twice`
  }
}

TEST_CASE("GPU: outputs read back by a re-read row match the reference",
          "[gpu][readback]") {
  // Rows of every schedule that reads back: static aligned and odd, a
  // dynamic row, f32 and 16-bit sums (the latter read back rounded).
  std::vector<Case> Cases;
  Cases.push_back({addRmsNorm(DType::BF16, 32064), {{"B", 5}}});
  Cases.push_back({addRmsNorm(DType::F32, 50257), {{"B", 3}}});
  Cases.push_back({addRmsNorm(DType::F16, 40009), {{"B", 4}}});
  {
    Graph G;
    Value X = G.input("x", DType::BF16, {"B", "H"});
    Value Res = G.input("residual", DType::BF16, {"B", "H"});
    Value W = G.input("weight", DType::BF16, {"H"});
    Value Bias = G.input("bias", DType::BF16, {"H"});
    Value R = X + Res;
    G.output("residual_out", R);
    G.output("y", nn::layerNorm(R, W, Bias, G.scalar("eps", DType::F32)));
    Cases.push_back({std::move(G), {{"B", 6}, {"H", 9001}}});
  }
  for (const Case &C : Cases)
    REQUIRE_FALSE(onlyKernel(C.G, oldRule<PlanOptions>()).RowReadBack.empty());
  checkCases(Cases, oldRule<CheckOptions>());
}

TEST_CASE("a row read through a view says why it is not kept in registers", "[schedule]") {
  // GroupNorm's row (the merged group, 40960 f16) is read through a reshape
  // of x: the register cache counts no input, so the plan must not claim
  // "0 B a thread > RowCacheBytes" (it did). Counting it (160 B a thread)
  // was measured slower on the H200 (20.8 vs 17.6 us), so it stays re-read.
  examples::ExampleGraph E = examples::buildExample("group_norm");
  GraphPlan P = planGraph(*E.G, oldRule<PlanOptions>());
  REQUIRE(P.Kernels.size() == 1);
  CHECK_FALSE(P.Kernels[0].CacheRow);
  CHECK(P.Kernels[0].Why.find("no input has the row's last dim") != std::string::npos);
  CHECK(P.PlanText.find("(0 B a thread") == std::string::npos);
}

TEST_CASE("rows re-read per stage: softmax's max and sum in one loop (online)",
          "[schedule][codegen][online]") {
  SECTION("f32 x 128256 re-reads its row: max and sum together, two loops") {
    Graph G = softmax(DType::F32, 128256);
    KernelPlan K = onlyKernel(G, pairsOn());
    CHECK_FALSE(K.CacheRow);
    CHECK(pairsOf(K, false) == 1);
    CHECK(K.Why.find("accumulated with the row max in one loop") != std::string::npos);
    CHECK(pairsOf(onlyKernel(G, oldRule<PlanOptions>()), false) == 1); // the default
    PlanOptions Off = oldRule<PlanOptions>();
    Off.Schedule.RowOnlineSoftmax = false;
    CHECK(onlyKernel(G, Off).RowPairs.empty());
    std::string V4 = firstVariantWithPairs(G);
    // One load of x per loop: the (max, sum) loop and the output loop.
    CHECK(count(V4, "jf_load<float, 4>(in_0") == 2);
    CHECK(count(V4, "jf_online_add(accp") == 4); // one per lane
    CHECK(count(V4, "jf_block_reduce<512>(") == 1);
    CHECK(V4.find("jf_online_sum(rp") != std::string::npos);
  }
  SECTION("rows kept in registers and non-softmax sums are unchanged") {
    CHECK(onlyKernel(softmax(DType::F32, 2048), pairsOn()).RowPairs.empty());
    CHECK(pairsOf(onlyKernel(layerNorm(DType::F32, 128256), pairsOn()), false) == 0);
    // sum(exp(x - max(y))) with another operand is not softmax's pair.
    Graph G;
    Value X = G.input("x", DType::F32, {"B", 128256});
    Value Y = G.input("y", DType::F32, {"B", 128256});
    G.output("s", sum(exp(X - reduceMax(Y))));
    G.output("t", X * 2.0);
    CHECK(onlyKernel(G, pairsOn()).RowPairs.empty());
  }
}

TEST_CASE("GPU: online softmax rows match the reference", "[gpu][online]") {
  std::vector<Case> Cases;
  Cases.push_back({softmax(DType::F32, 128256), {{"B", 2}}});
  Cases.push_back({softmax(DType::F32, 50257), {{"B", 3}}});
  Cases.push_back({softmax(DType::BF16, 128256), {{"B", 2}}});
  {
    Graph G;
    G.output("p", nn::softmax(G.input("x", DType::F32, {"B", "H"})));
    Cases.push_back({std::move(G), {{"B", 5}, {"H", 40009}}});
  }
  for (const Case &C : Cases)
    REQUIRE(pairsOf(onlyKernel(C.G, pairsOn()), false) == 1);
  CheckOptions CO = oldRule<CheckOptions>();
  CO.RowOnlineSoftmax = true;
  CO.RowWelford = true;
  checkCases(Cases, CO);
}

TEST_CASE("rows re-read per stage: LayerNorm's mean and variance in one loop (Welford)",
          "[schedule][codegen][welford]") {
  SECTION("f32 x 32064 re-reads its row: Welford, two loops") {
    Graph G = layerNorm(DType::F32, 32064);
    KernelPlan K = onlyKernel(G, pairsOn());
    CHECK_FALSE(K.CacheRow);
    CHECK(pairsOf(K, true) == 1);
    CHECK(K.Why.find("accumulated with the row mean in one loop (Welford)") != std::string::npos);
    PlanOptions Off = oldRule<PlanOptions>();
    Off.Schedule.RowWelford = false;
    CHECK(onlyKernel(G, Off).RowPairs.empty());
    std::string V4 = firstVariantWithPairs(G);
    CHECK(count(V4, "jf_load<float, 4>(in_0") == 2); // the Welford loop, the output loop
    CHECK(count(V4, "jf_welford_add(accp") == 4);
    CHECK(count(V4, "jf_block_reduce<512>(") == 1);
    CHECK(V4.find(".M2 / (float)R") != std::string::npos);
  }
  SECTION("a mean that is an output, rows in registers and other variances are unchanged") {
    CHECK(onlyKernel(layerNorm(DType::F32, 4096), pairsOn()).RowPairs.empty());
    Graph G;
    Value X = G.input("x", DType::F32, {"B", 32064});
    Value M = mean(X);
    Value D = X - M;
    G.output("mean", M);
    G.output("var", mean(D * D));
    G.output("y", D * 2.0);
    CHECK(pairsOf(onlyKernel(G, pairsOn()), true) == 0);
  }
}

TEST_CASE("Welford by default only where a row outgrows its share of L2",
          "[schedule][welford]") {
  // The share is the L2 a resident row block has: 60 MiB / (132 x 4) =
  // 119156 B on the H200 (the default without a device); the rule compares
  // the bytes of the row's stage inputs (x alone here) with it.
  REQUIRE(oldRule<PlanOptions>().Schedule.RowL2ShareBytes == 119156);
  SECTION("f32 x 32064 (128256 B) and bf16 x 128256 (256512 B): Welford") {
    for (auto [T, H] : {std::pair{DType::F32, 32064}, std::pair{DType::BF16, 128256}}) {
      KernelPlan K = onlyKernel(layerNorm(T, H), oldRule<PlanOptions>());
      CHECK(pairsOf(K, true) == 1);
      CHECK(K.Why.find("> the L2 share of a resident row, 119156 B") != std::string::npos);
    }
  }
  SECTION("f32 x 14336 (57344 B) and bf16 x 50257 (100514 B): two loops, and why") {
    for (auto [T, H] : {std::pair{DType::F32, 14336}, std::pair{DType::BF16, 50257}}) {
      Graph G = layerNorm(T, H);
      KernelPlan K = onlyKernel(G, oldRule<PlanOptions>());
      REQUIRE_FALSE(K.CacheRow);
      CHECK(K.RowPairs.empty());
      CHECK(K.Why.find("mean and variance in two loops (row inputs") != std::string::npos);
      CHECK(pairsOf(onlyKernel(G, pairsOn()), true) == 1); // forced on
    }
  }
  SECTION("a smaller share (another device) moves the line") {
    PlanOptions O = oldRule<PlanOptions>();
    O.Schedule.RowL2ShareBytes = 50000;
    CHECK(pairsOf(onlyKernel(layerNorm(DType::F32, 14336), O), true) == 1);
  }
  SECTION("a dynamic row keeps two loops unless forced") {
    CHECK(onlyKernel(layerNormDyn(DType::F32), oldRule<PlanOptions>()).RowPairs.empty());
  }
}

TEST_CASE("long re-read rows get a few-rows form split over a cluster", "[schedule][codegen][fewrows]") {
  SECTION("softmax bf16 x 128256: the plain kernel and a cluster-of-8 form") {
    KernelPlan K = onlyKernel(softmax(DType::BF16, 128256), oldRule<PlanOptions>());
    CHECK(K.FewRows == nullptr); // PlanOptions: no clusters unless the target has them
    PlanOptions O = oldRule<PlanOptions>();
    O.Schedule.FewRowsClusters = true;
    K = onlyKernel(softmax(DType::BF16, 128256), O);
    REQUIRE(K.FewRows);
    CHECK(K.ClusterX == 1);
    CHECK(K.FewRows->ClusterX == 8);
    CHECK(K.FewRows->Name == K.Name + "_c8");
    CHECK(K.FewRows->Vecs == K.Vecs);
    CHECK(K.Why.find("when a run's rows x 8 <= SMs x 4 (every split block resident at once): "
                     "kernel " + K.FewRows->Name) != std::string::npos);
    // Split 8 ways, a thread's part of the row (4 chunks) fits registers.
    CHECK(K.FewRows->CacheRow);
  }
  SECTION("compiled for sm_90: both forms' variants, cluster dims on the second") {
    CompileOptions Opts = oldRule<CompileOptions>();
    Opts.Arch = "sm_90";
    Executable E = testCompiler().compile(softmax(DType::F32, 128256), Opts);
    CHECK(E.numKernels() == 1);
    CHECK(E.numLaunches() == 1);
    const std::string &Src = E.source();
    CHECK(Src.find("jf_k0_div_c8_v4(") != std::string::npos);
    CHECK(Src.find("jf_k0_div_c8_p4(") != std::string::npos);
    CHECK(Src.find("__cluster_dims__(8, 1, 1) jf_k0_div_c8_v4(") != std::string::npos);
    Opts.RowFewRowsClusters = false;
    Executable Off = testCompiler().compile(softmax(DType::F32, 128256), Opts);
    CHECK(Off.source().find("_c8_") == std::string::npos);
  }
  SECTION("rows kept in registers, short rows and many static rows have one form") {
    PlanOptions O = oldRule<PlanOptions>();
    O.Schedule.FewRowsClusters = true;
    CHECK(onlyKernel(softmax(DType::BF16, 4096), O).FewRows == nullptr);
    CHECK(onlyKernel(layerNorm(DType::BF16, 6144), O).FewRows == nullptr);
    Graph G;
    Value X = G.input("x", DType::BF16, {2048, 128256});
    G.output("y", nn::softmax(X));
    CHECK(onlyKernel(G, O).FewRows == nullptr);
  }
}

TEST_CASE("GPU: few long rows (cluster form) and many (plain) match the reference",
          "[gpu][fewrows]") {
  // Rows x 8 <= SMs x 4 launch the cluster form: both sides of the line on
  // the H200 (132 SMs: 66 rows), aligned and misaligned (checkCases).
  std::vector<Case> Cases;
  Cases.push_back({softmax(DType::BF16, 128256), {{"B", 1}}});
  Cases.push_back({softmax(DType::F32, 50257), {{"B", 9}}});
  Cases.push_back({layerNorm(DType::F16, 128256), {{"B", 66}}});
  Cases.push_back({addRmsNorm(DType::BF16, 40009), {{"B", 67}}});
  Cases.push_back({addRmsNorm(DType::F32, 32768), {{"B", 3}}});
  PlanOptions O = oldRule<PlanOptions>();
  O.Schedule.FewRowsClusters = true;
  for (const Case &C : Cases)
    REQUIRE(onlyKernel(C.G, O).FewRows != nullptr);
  checkCases(Cases, oldRule<CheckOptions>());
}

TEST_CASE("GPU: Welford LayerNorm rows match the reference", "[gpu][welford]") {
  std::vector<Case> Cases;
  Cases.push_back({layerNorm(DType::F32, 32064), {{"B", 3}}});
  Cases.push_back({layerNorm(DType::BF16, 50257), {{"B", 2}}});
  Cases.push_back({layerNorm(DType::F16, 128256), {{"B", 2}}});
  Cases.push_back({layerNormDyn(DType::F32), {{"B", 5}, {"H", 30011}}});
  for (const Case &C : Cases)
    REQUIRE(pairsOf(onlyKernel(C.G, pairsOn()), true) == 1);
  CheckOptions CO = oldRule<CheckOptions>();
  CO.RowOnlineSoftmax = true;
  CO.RowWelford = true;
  checkCases(Cases, CO);
}
