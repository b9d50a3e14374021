//===- tests/test_row_shared.cpp - rows kept in shared memory -------------===//
//
// CompileOptions::RowSharedMemory: a row kernel whose row is read again
// (a later stage or the epilogue) but does not fit the register budget
// keeps the inputs its reduction stages read in dynamic shared memory. The
// CPU part checks the choice (which inputs, how many bytes, against values
// computed by hand from the schedule's rules), the launch's shared memory,
// the kernel's text and its NVRTC compile; the GPU part runs such kernels
// against the fp64 reference, fused and unfused.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"

#include "codegen/LaunchRule.h"
#include "compiler/Planner.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>

#include <map>
#include <type_traits>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// These cases pin the schedules of rows re-read per stage (and kept in
/// shared memory) on rows that RowCacheStageInputs and RowCacheValues
/// (default on) now keep in registers: they use the rule before them, under
/// which those rows are re-read. The schedules still serve longer rows by default.
template <typename Options> Options oldRule() {
  Options O;
  // PlanOptions holds them in its ScheduleOptions; the compile options
  // (CompileOptions, CheckOptions) as fields of their own.
  if constexpr (std::is_same_v<Options, PlanOptions>) {
    O.Schedule.RowCacheStageInputs = false;
    O.Schedule.RowCacheValues = false;
  } else {
    O.RowCacheStageInputs = false;
    O.RowCacheValues = false;
  }
  return O;
}

/// The single kernel of G's fused plan on sm_XY with RowSharedMemory \p On.
KernelPlan onlyKernel(const Graph &G, bool On, int SmMajor = 9, int SmMinor = 0) {
  PlanOptions O = oldRule<PlanOptions>();
  if (On)
    O.Schedule.RowSharedBytes = codegen::maxRowSharedBytes(SmMajor, SmMinor);
  GraphPlan P = planGraph(G, O);
  REQUIRE(P.Kernels.size() == 1);
  return P.Kernels.front();
}

/// The names of the inputs a plan keeps in shared memory.
std::vector<std::string> sharedInputs(const Graph &G, const KernelPlan &K) {
  std::vector<std::string> Names;
  for (unsigned I : K.RowSharedInputs)
    Names.push_back(G.node(K.Inputs[I]).Name);
  return Names;
}

unsigned sharedBytesOf(const KernelPlan &K, int64_t Rows, int64_t H, int Vec,
                       bool Peeled) {
  codegen::LaunchSizes S{Rows * H, Rows, H};
  std::optional<codegen::LaunchShape> L = codegen::LaunchRule(K).shape(S, Vec, 132, Peeled);
  REQUIRE(L.has_value());
  return L->SharedBytes;
}

} // namespace

TEST_CASE("a long row read again keeps its stage inputs in shared memory (opt-in)",
          "[schedule][rowshared]") {
  using Names = std::vector<std::string>;
  SECTION("add + RMSNorm bf16, 32064 columns: x and residual, not the weight") {
    Graph G = addRmsNorm(DType::BF16, 32064);
    KernelPlan K = onlyKernel(G, true);
    // 16-byte chunks of 8, 4008 chunks: 512 threads, 8 chunks each (the
    // register cache would need 8 x 16 B x 2 inputs = 256 B, plus the
    // weight's 128 B: over RowCacheBytes = 256).
    REQUIRE(K.ThreadsX == 512);
    CHECK_FALSE(K.CacheRow);
    CHECK(sharedInputs(G, K) == Names{"x", "residual"});
    CHECK(K.RowSharedElemBytes == 4);
    // 8 iterations x 512 threads x 8 elements x (2 + 2) bytes.
    CHECK(sharedBytesOf(K, 3, 32064, 8, false) == 131072);
    CHECK(sharedBytesOf(K, 3, 32064, 8, true) == 131072);
    CHECK(K.Why.find("kept in shared memory between stages (131072 B a block") !=
          std::string::npos);
    // Not without the option, nor on a device whose limit (99 KB on sm_86)
    // is below the row's 128 KB: re-read as before.
    for (KernelPlan Off : {onlyKernel(G, false), onlyKernel(G, true, 8, 6)}) {
      CHECK(Off.RowSharedInputs.empty());
      CHECK(sharedBytesOf(Off, 3, 32064, 8, false) == 0);
      CHECK(Off.Why.find("re-read from memory per stage") != std::string::npos);
    }
  }
  SECTION("LayerNorm f32, 14336 columns: x only") {
    Graph G = layerNorm(DType::F32, 14336);
    KernelPlan K = onlyKernel(G, true);
    CHECK(sharedInputs(G, K) == Names{"x"});
    // 3584 chunks of 4: 512 threads, 7 chunks each; 7 x 512 x 4 x 4 B.
    CHECK(sharedBytesOf(K, 5, 14336, 4, false) == 57344);
  }
  SECTION("softmax f32, 50257 columns (odd: peeled only)") {
    Graph G = softmax(DType::F32, 50257);
    KernelPlan K = onlyKernel(G, true);
    CHECK(K.Vecs == std::vector<int>{4, 4}); // peeled: led by x, by the output
    CHECK(sharedInputs(G, K) == Names{"x"});
    // 12565 chunks of 4: 512 threads, 25 chunks each (400 B a thread);
    // 25 x 512 x 4 x 4 B.
    CHECK(sharedBytesOf(K, 2, 50257, 4, true) == 204800);
    // f16 rows of 50257 fit registers (13 chunks, 208 B); f32 rows of
    // 128256 would need 504 KB: neither changes.
    CHECK(onlyKernel(softmax(DType::F16, 50257), true).CacheRow);
    CHECK(onlyKernel(softmax(DType::F32, 128256), true).RowSharedInputs.empty());
  }
  SECTION("rows that fit registers, rows read once and dynamic rows are unchanged") {
    for (const Graph &G : {addRmsNorm(DType::BF16, 4096), sumAbsAmax(DType::BF16, 50257)}) {
      KernelPlan K = onlyKernel(G, true);
      CHECK(K.RowSharedInputs.empty());
      CHECK(K.RowSharedElemBytes == 0);
    }
    Graph D;
    D.output("p", nn::softmax(D.input("x", DType::BF16, {"B", "H"})));
    CHECK(onlyKernel(D, true).RowSharedInputs.empty());
  }
}

TEST_CASE("a row kept in shared memory: kernel text, NVRTC, one launch per kernel",
          "[codegen][rowshared]") {
  CompileOptions Opts = oldRule<CompileOptions>();
  Opts.Arch = "sm_90";
  Opts.RowSharedMemory = true;
  Graph G = addRmsNorm(DType::BF16, 32064);
  Executable E = testCompiler().compile(G, Opts);
  REQUIRE(E.numKernels() == 1);
  const std::string &Src = E.source();
  CHECK(Src.find("extern __shared__ __align__(16) unsigned char jf_dyn[];") !=
        std::string::npos);
  // x and residual: two parts of 8 x 512 chunks of 16 B, the second at 64 KB.
  CHECK(Src.find("jf_shared_row<jf_vec<jf_bf16, 8>, 512> cv0{reinterpret_cast<jf_vec<jf_bf16, "
                 "8> *>(jf_dyn + 0) + tx};") != std::string::npos);
  CHECK(Src.find("(jf_dyn + 65536) + tx}") != std::string::npos);
  CHECK(E.plan().find("kept in shared memory") != std::string::npos);
  // The PTX stores and loads the row in shared memory as 16-byte vectors.
  CHECK(E.ptx().find("st.shared.v4") != std::string::npos);
  CHECK(E.ptx().find("ld.shared.v4") != std::string::npos);
  // Independent kernels with a shared row do not share a launch.
  Graph Two = addRmsNorm(DType::BF16, 32064);
  Two.output("p", nn::softmax(Two.input("z", DType::BF16, {"B", 32064})));
  Executable E2 = testCompiler().compile(Two, Opts);
  CHECK(E2.numKernels() == 2);
  CHECK(E2.numLaunches() == 2);
}

TEST_CASE("GPU: rows kept in shared memory match the reference, fused and unfused",
          "[gpu][rowshared]") {
  struct Case {
    Graph G;
    int64_t Rows, H;
  };
  std::vector<Case> Cases;
  Cases.push_back({addRmsNorm(DType::BF16, 32064), 3, 32064});
  Cases.push_back({addRmsNorm(DType::F32, 11008), 5, 11008});
  Cases.push_back({layerNorm(DType::F32, 14336), 4, 14336});
  Cases.push_back({layerNorm(DType::BF16, 32063), 3, 32063});
  Cases.push_back({softmax(DType::F32, 50257), 2, 50257});
  Cases.push_back({softmax(DType::F32, 40000), 133, 40000});
  for (const Case &C : Cases) {
    // Each case must take the shared-memory schedule, or it tests nothing.
    INFO("H=" << C.H);
    REQUIRE_FALSE(onlyKernel(C.G, true).RowSharedInputs.empty());
    INFO("rows=" << C.Rows);
    CheckOptions CO = oldRule<CheckOptions>();
    CO.RowSharedMemory = true;
    checkAlignedAndMisaligned(C.G, {{"B", C.Rows}}, CO);
  }
}
