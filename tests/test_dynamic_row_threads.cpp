//===- tests/test_dynamic_row_threads.cpp - threads of run-time rows ------===//
//
// A row whose length is known only at run time takes a fixed 256 threads
// (codegen::launch::DynamicRowThreads); with CompileOptions::
// RowThreadsAtLaunch (opt-in), the threads its launch picks
// (codegen::launch::dynamicRowThreads: 64-512); the experiment
// RowDynamicThreads fixes another. Here:
// the plans, NVRTC for every form, and on the GPU the fp64 reference at row
// lengths and row counts that make the launch pick each count, leave
// threads idle, give each several chunks, and at an element's offset.
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

/// A dynamic-row graph, the name of its dim of rows and its scalars.
struct RowGraph {
  std::string Name;
  Graph G;
  std::string RowsDim;
  std::map<std::string, double> Scalars;
};

/// The dynamic-row graphs: softmax, LayerNorm and W17's BatchNorm
/// statistics (rows of HW, summed over N after).
std::vector<RowGraph> dynamicRowGraphs() {
  std::vector<RowGraph> Out;
  {
    Graph G;
    G.output("p", nn::softmax(G.input("x", DType::BF16, {"B", "H"})));
    Out.push_back({"softmax bf16", std::move(G), "B", {}});
  }
  {
    Graph G;
    Value X = G.input("x", DType::F32, {"B", "H"});
    G.output("y", nn::layerNorm(X, G.input("w", DType::F32, {"H"}),
                                G.input("b", DType::F32, {"H"}), G.scalar("eps", DType::F32)));
    Out.push_back({"layernorm f32", std::move(G), "B", {{"eps", 1e-5}}});
  }
  {
    Graph G;
    Value Xf = cast(G.input("x", DType::BF16, {"N", 16, "H"}), DType::F32);
    G.output("s1", sum(Xf, {0, 2}));
    G.output("s2", sum(Xf * Xf, {0, 2}));
    Out.push_back({"batchnorm statistics bf16", std::move(G), "N", {}});
  }
  return Out;
}

} // namespace

TEST_CASE("RowThreadsAtLaunch and RowDynamicThreads: a run-time row's threads, and NVRTC",
          "[dynamic-rows]") {
  // 0: RowThreadsAtLaunch (picked at launch); -1: the default (a fixed
  // 256); else the experiment's fixed count, with RowThreadsAtLaunch on (the
  // experiment wins).
  for (auto &[Name, G, RowsDim, Scalars] : dynamicRowGraphs()) {
    for (int T : {0, -1, 32, 128, 1024}) {
      INFO(Name << ", threads " << T);
      CompileOptions O;
      O.Arch = "sm_90";
      O.DeferVariants = false;
      if (T > 0)
        O.RowDynamicThreads = unsigned(T);
      O.RowThreadsAtLaunch = T != -1;
      if (T == -1)
        CHECK_FALSE(CompileOptions().RowThreadsAtLaunch);
      GraphPlan P = Compiler::plan(G, O);
      const KernelPlan &K = P.Kernels.at(0);
      INFO(K.Why);
      CHECK(K.ThreadsAtLaunch == (T == 0));
      CHECK(K.ThreadsX == (T > 0 ? T : T == 0 ? 512 : 256));
      CHECK((K.Why.find("(RowDynamicThreads)") != std::string::npos) == (T > 0));
      CHECK((K.Why.find("picked at launch") != std::string::npos) == (T == 0));
      CHECK_THAT(K.Why, Contains("known at run time"));
      CHECK_THAT(P.PlanText, Contains(T == 0 ? "threads 64-512x1" : "threads " +
                                                                   std::to_string(K.ThreadsX) +
                                                                   "x1"));
      Executable E = testCompiler().compile(G, O);
      for (const rt::KernelResources &R : E.kernelResources()) {
        INFO("kernel " << R.Name);
        CHECK(R.SpillStoreBytes == 0);
      }
    }
  }
}

TEST_CASE("A run-time row's loops at the launch's threads are unrolled as the fixed count's",
          "[dynamic-rows]") {
  // NVVM unrolls a loop strided by a constant thread count 4 times, not one
  // strided by blockDim.x: add + RMSNorm f32's kernel at the launch's
  // threads had 16 global loads in its PTX against the fixed 256's 44, and
  // ran 0.90x its time at 10922 x 6144 (the same 256 threads; H100, session
  // 53). Counted over the whole program: both variants of each graph (the
  // helpers are the same either way).
  std::vector<RowGraph> Graphs = dynamicRowGraphs();
  {
    Graph G;
    Value X = G.input("x", DType::F32, {"B", "H"});
    Value Y = X + G.input("r", DType::F32, {"B", "H"});
    G.output("h", Y);
    G.output("y", nn::rmsNorm(Y, G.input("w", DType::F32, {"H"}), G.scalar("eps", DType::F32)));
    Graphs.push_back({"add + RMSNorm f32", std::move(G), "B", {{"eps", 1e-5}}});
  }
  for (auto &[Name, G, RowsDim, Scalars] : Graphs) {
    INFO(Name);
    size_t Loads[2];
    for (bool AtLaunch : {false, true}) {
      CompileOptions O;
      O.Arch = "sm_90";
      O.DeferVariants = false;
      O.RowThreadsAtLaunch = AtLaunch;
      REQUIRE(Compiler::plan(G, O).Kernels.at(0).ThreadsAtLaunch == AtLaunch);
      Executable E = testCompiler().compile(G, O);
      Loads[AtLaunch] = countOf(E.ptx(), "ld.global");
    }
    INFO("global loads: fixed 256 " << Loads[0] << ", at launch " << Loads[1]);
    CHECK(Loads[1] >= Loads[0]);
  }
}

TEST_CASE("GPU: run-time rows at the launch's threads and fixed ones match the reference",
          "[gpu][dynamic-rows]") {
  // Rows of 1 and 7 elements (no whole chunk), 3136 (W17's HW: 392 bf16
  // chunks), 4099 (a tail) and 20000; 5 rows (at most the SMs: 256 or 512
  // threads) and 300 (64-512 by the row's chunks), at the launch's choice,
  // at a fixed 64 (chunks looped over) and 1024 (most threads idle), aligned
  // and at an element's offset; and at the default fixed 256.
  for (auto &[Name, G, RowsDim, Scalars] : dynamicRowGraphs()) {
    for (unsigned T : {0u, 64u, 256u, 1024u}) {
      for (int64_t H : {int64_t(1), int64_t(7), int64_t(3136), int64_t(4099), int64_t(20000)}) {
        for (int64_t Rows : {int64_t(5), int64_t(300)}) {
          if (T != 0 && Rows != 5)
            continue;
          // A fixed 64 threads over 20000 elements is past the summation
          // depth the reference's bound models (reference/SummationDepth.cpp).
          if (T == 64 && H > 4099)
            continue;
          for (unsigned Shift : {0u, 1u}) {
            INFO(Name << ", threads " << T << ", H " << H << ", rows " << Rows << ", offset "
                      << Shift);
            CheckOptions O;
            O.RowThreadsAtLaunch = T == 0;
            if (T && T != 256)
              O.RowDynamicThreads = T;
            O.MisalignElems = Shift;
            // BatchNorm's rows are N x 16.
            int64_t R = RowsDim == "N" ? (Rows + 15) / 16 : Rows;
            std::map<std::string, int64_t> Dims = {{RowsDim, R}, {"H", H}};
            checkGraph(G, randomBindings(G, Dims, Scalars, O), O);
          }
        }
      }
    }
  }
}
