//===- tests/test_dynamic_row_threads.cpp - CompileOptions::RowDynamicThreads ===//
//
// A row whose length is known only at run time takes a fixed thread count
// (codegen::launch::DynamicRowThreads, 256); the experiment
// RowDynamicThreads sets another. Here: the plans, NVRTC for every count,
// and on the GPU the fp64 reference at row lengths that leave threads idle,
// give each several chunks, and at an element's offset.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "TestEnv.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

/// The dynamic-row graphs: softmax, LayerNorm and W17's BatchNorm
/// statistics (rows of HW, summed over N after).
std::vector<std::pair<std::string, Graph>> dynamicRowGraphs() {
  std::vector<std::pair<std::string, Graph>> Out;
  {
    Graph G;
    G.output("p", nn::softmax(G.input("x", DType::BF16, {"B", "H"})));
    Out.emplace_back("softmax bf16", std::move(G));
  }
  {
    Graph G;
    Value X = G.input("x", DType::F32, {"B", "H"});
    G.output("y", nn::layerNorm(X, G.input("w", DType::F32, {"H"}),
                                G.input("b", DType::F32, {"H"}), G.scalar("eps", DType::F32)));
    Out.emplace_back("layernorm f32", std::move(G));
  }
  {
    Graph G;
    Value Xf = cast(G.input("x", DType::BF16, {"N", 16, "H"}), DType::F32);
    G.output("s1", sum(Xf, {0, 2}));
    G.output("s2", sum(Xf * Xf, {0, 2}));
    Out.emplace_back("batchnorm statistics bf16", std::move(G));
  }
  return Out;
}

} // namespace

TEST_CASE("RowDynamicThreads: a run-time row takes the threads asked, and compiles",
          "[dynamic-rows]") {
  for (auto &[Name, G] : dynamicRowGraphs()) {
    for (unsigned T : {0u, 32u, 128u, 1024u}) {
      INFO(Name << ", RowDynamicThreads " << T);
      CompileOptions O;
      O.Arch = "sm_90";
      O.DeferVariants = false;
      if (T)
        O.RowDynamicThreads = T;
      GraphPlan P = Compiler::plan(G, O);
      const KernelPlan &K = P.Kernels.at(0);
      INFO(K.Why);
      CHECK(K.ThreadsX == int(T ? T : 256u));
      CHECK((K.Why.find("(RowDynamicThreads)") != std::string::npos) == (T != 0));
      CHECK_THAT(K.Why, Contains("known at run time"));
      Executable E = testCompiler().compile(G, O);
      for (const rt::KernelResources &R : E.kernelResources()) {
        INFO("kernel " << R.Name);
        CHECK(R.SpillStoreBytes == 0);
      }
    }
  }
}

TEST_CASE("GPU: RowDynamicThreads rows match the reference", "[gpu][dynamic-rows]") {
  // Rows of 1 and 7 elements (no whole chunk), 3136 (W17's HW: 392 bf16
  // chunks) and 4099 (a tail), at 32 threads (chunks looped over) and 1024
  // (most threads idle), aligned and at an element's offset.
  for (auto &[Name, G] : dynamicRowGraphs()) {
    for (unsigned T : {32u, 1024u}) {
      for (int64_t H : {int64_t(1), int64_t(7), int64_t(3136), int64_t(4099)}) {
        for (unsigned Shift : {0u, 1u}) {
          INFO(Name << ", RowDynamicThreads " << T << ", H " << H << ", offset " << Shift);
          CheckOptions O;
          O.RowDynamicThreads = T;
          O.MisalignElems = Shift;
          std::map<std::string, int64_t> Dims = {{"B", 5}, {"N", 3}, {"H", H}};
          checkGraph(G, randomBindings(G, Dims, {{"eps", 1e-5}}, O), O);
        }
      }
    }
  }
}
