//===- tests/test_horizontal.cpp - independent kernels share one launch ---===//
//
// Issue 13, horizontal fusion: kernels with no path between them launch as
// one kernel, one block range per part. Launch counts are checked on the
// plan (groupLaunches, ExpectLaunches); every graph is compiled with NVRTC
// (the combined programs) and, with a GPU, run horizontally fused, fused
// with one launch per kernel and unfused, each against the fp64 reference
// (tests/GraphCheck.cpp) with poisoned and guarded outputs, so a part whose
// block range is wrong leaves poison or writes outside its tensor.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RandomGraph.h"
#include "TestEnv.h"

#include "codegen/Codegen.h"
#include "compiler/Horizontal.h"
#include "compiler/Planner.h"
#include "exec/Roofline.h"
#include "examples/ExampleGraphs.h"
#include "ir/NN.h"
#include "reference/Tolerance.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <functional>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {

using Launches = std::vector<std::vector<unsigned>>;

/// A partition of \p Deps.size() element-wise kernels: kernel K writes node
/// 100 + K and reads node 100 + D for each D in Deps[K].
struct FakePlan {
  Partition P;
  std::vector<KernelPlan> Plans;
  std::vector<SizeSum> Bytes;

  explicit FakePlan(const std::vector<std::vector<unsigned>> &Deps, int64_t Bytes1 = 4096) {
    for (size_t K = 0; K < Deps.size(); ++K) {
      Cluster C;
      C.Outputs = {static_cast<NodeId>(100 + K)};
      for (unsigned D : Deps[K])
        C.Inputs.push_back(static_cast<NodeId>(100 + D));
      C.Inputs.push_back(static_cast<NodeId>(K)); // a graph input of its own
      P.Clusters.push_back(C);
      KernelPlan KP;
      KP.Name = "k" + std::to_string(K);
      KP.Inputs = C.Inputs;
      KP.Outputs = C.Outputs;
      Plans.push_back(KP);
      SizeSum S;
      S.add(SizeExpr{Bytes1, {}});
      Bytes.push_back(S);
    }
  }
  Launches group() const { return groupLaunches(P, Plans, Bytes, 0, true); }
};

/// Independent parts of different kinds and block shapes over [T, ...]:
/// element-wise over 1000 columns (256-thread blocks), short rows of 37 (a
/// 128-thread block of several rows), long rows of 8192 (a wide one-row
/// block with a block reduction) and a static-shape element-wise part.
Graph mixedParts() {
  Graph G;
  Value A = G.input("a", f32, {"T", 1000});
  Value B = G.input("b", f32, {"T", 37});
  Value C = G.input("c", bf16, {"T", 8192});
  Value D = G.input("d", bf16, {3, 50});
  G.output("a2", exp(A) * 0.5);
  G.output("bmax", reduceMax(B));
  // Normalized by the sum of magnitudes: a plain sum of random values of
  // both signs cancels, and the rtol rule of checkGraph does not bound that
  // (the H200 run found the fused, one-launch-per-kernel and unfused runs
  // agreeing with each other and 1.3x past the rtol on one row).
  G.output("cnorm", cast(C, f32) / sum(abs(cast(C, f32))));
  G.output("d2", D + D);
  return G;
}


/// Runs \p X on random bindings of \p E's graph at T and checks every output
/// against the reference.
void checkLlamaRun(Executable &X, const examples::ExampleGraph &E, int64_t T,
                   unsigned Misalign) {
  const Graph &G = *E.G;
  Bindings B = test::randomBindings(G, {{"T", T}}, E.Scalars);
  std::map<std::string, HostTensor> Ref = interpret(G, B);
  HostRunOptions RO;
  RO.MisalignElems = Misalign;
  std::map<std::string, HostTensor> Got = runOnDevice(X, B, RO);
  for (const GraphOutput &Out : G.outputs()) {
    double Tol = toleranceFor(G.node(Out.Id).Type, maxReductionLength(G, Out.Id, B.Dims));
    CompareResult R = compareTensors(Got.at(Out.Name), Ref.at(Out.Name), Tol,
                                     "output '" + Out.Name + "'");
    INFO(R.Message);
    CHECK(R.Ok);
  }
}

} // namespace

TEST_CASE("horizontal fusion: groupLaunches merges independent kernels after their producers",
          "[fusion][horizontal]") {
  // 0 and 2 are independent; 1 reads 0; 3 reads 1 (so 0 too).
  FakePlan F({{}, {0}, {}, {1}});
  CHECK(F.group() == Launches{{0, 2}, {1}, {3}});
  // Nothing shares a launch when the pass is off, or in an unfused plan.
  CHECK(groupLaunches(F.P, F.Plans, F.Bytes, 0, false) == Launches{{0}, {1}, {2}, {3}});

  // A kernel reading a producer two launches back joins the launch after it.
  FakePlan Chain({{}, {0}, {1}, {0}});
  CHECK(Chain.group() == Launches{{0}, {1, 3}, {2}});
}

TEST_CASE("horizontal fusion: full reductions, large kernels and odd blocks keep their launch",
          "[fusion][horizontal]") {
  FakePlan F({{}, {}, {}, {}});
  F.Plans[1].Kind = KernelKind::FullReduce;
  CHECK(F.group() == Launches{{0, 2, 3}, {1}});

  FakePlan Big({{}, {}, {}}, HorizontalMaxPartBytes + 1);
  CHECK(Big.group() == Launches{{0}, {1}, {2}});
  FakePlan Edge({{}, {}}, HorizontalMaxPartBytes);
  CHECK(Edge.group() == Launches{{0, 1}});

  // A block that is not whole warps cannot return warps before a barrier.
  FakePlan Odd(Launches(2));
  Odd.Plans[0].Kind = KernelKind::RowReduce;
  Odd.Plans[0].ThreadsX = 16;
  Odd.Plans[0].RowsPerBlock = 1;
  CHECK(Odd.group() == Launches{{0}, {1}});
}

TEST_CASE("horizontal fusion: a launch holds at most HorizontalMaxParts kernels",
          "[fusion][horizontal]") {
  FakePlan F(std::vector<std::vector<unsigned>>(HorizontalMaxParts + 3));
  Launches L = F.group();
  REQUIRE(L.size() == 2);
  CHECK(L[0].size() == HorizontalMaxParts);
  CHECK(L[1].size() == 3);
}

TEST_CASE("horizontal fusion: parts are sized at dynamic dims 1, static dims as they are",
          "[fusion][horizontal]") {
  // Two independent element-wise kernels of 2 x 16 MiB: separate launches
  // when static, one launch when their rows are dynamic.
  for (bool Dynamic : {false, true}) {
    INFO((Dynamic ? "dynamic rows" : "static rows"));
    Graph G;
    Dim Rows = Dynamic ? Dim("N") : Dim(4096);
    Value X = G.input("x", f32, {Rows, 1024});
    Value Y = G.input("y", f32, {Rows, 2048});
    G.output("ex", exp(X));
    G.output("ey", Y * 3.0);
    GraphPlan Plan = planGraph(G, {});
    CHECK(Plan.Kernels.size() == 2);
    CHECK(Plan.Launches.size() == (Dynamic ? 1u : 2u));
  }
}

TEST_CASE("horizontal fusion: random merged graphs launch every kernel once, after its "
          "producers",
          "[fusion][horizontal][random]") {
  // Merged recipes are independent subgraphs side by side, as the GPU tier
  // runs them. The oracle walks the graph: kernel K needs kernel D when a
  // node K computes has an operand that D computes and K does not.
  unsigned Kernels = 0, LaunchCount = 0;
  for (unsigned Batch = 0; Batch < 40; ++Batch) {
    std::vector<test::Recipe> Rs;
    test::GenOptions GO; // merged recipes agree on the dynamic dim's value
    GO.BValue = std::vector<int64_t>{1, 3, 7, 33}[Batch % 4];
    for (unsigned I = 0; I < 6; ++I)
      Rs.push_back(test::randomRecipe(7001 + 6 * Batch + I, GO));
    Graph G = test::buildGraph(test::mergeRecipes(Rs));
    GraphPlan Plan = planGraph(G, {});
    const Partition &P = Plan.Part;
    const Graph &PG = Plan.planned(G); // lowered reductions shift node ids
    size_t N = P.Clusters.size();
    std::vector<std::vector<bool>> Needs(N, std::vector<bool>(N, false));
    for (size_t K = 0; K < N; ++K)
      for (NodeId Node : P.Clusters[K].Nodes)
        for (NodeId Op : PG.node(Node).Operands) {
          const std::vector<NodeId> &Own = P.Clusters[K].Nodes;
          if (std::find(Own.begin(), Own.end(), Op) != Own.end() || P.ClusterOf[Op] < 0)
            continue;
          Needs[K][static_cast<size_t>(P.ClusterOf[Op])] = true;
        }
    std::vector<int> LaunchOf(N, -1);
    for (size_t L = 0; L < Plan.Launches.size(); ++L)
      for (unsigned K : Plan.Launches[L]) {
        REQUIRE(K < N);
        REQUIRE(LaunchOf[K] == -1); // once
        LaunchOf[K] = static_cast<int>(L);
      }
    for (size_t K = 0; K < N; ++K) {
      INFO("batch " << Batch << ", kernel " << K << "\n" << Plan.PlanText);
      REQUIRE(LaunchOf[K] >= 0);
      for (size_t D = 0; D < N; ++D)
        if (Needs[K][D])
          REQUIRE(LaunchOf[D] < LaunchOf[K]); // a producer launches earlier
      if (Plan.Kernels[K].Kind == KernelKind::FullReduce)
        CHECK(Plan.Launches[LaunchOf[K]].size() == 1);
    }
    Kernels += static_cast<unsigned>(N);
    LaunchCount += static_cast<unsigned>(Plan.Launches.size());
  }
  CHECK(LaunchCount < Kernels); // the sample does merge
}

TEST_CASE("horizontal fusion: llama_block's four kernels are one launch",
          "[fusion][horizontal][examples]") {
  examples::ExampleGraph E = examples::buildExample("llama_block");
  const Graph &G = *E.G;
  PlanOptions O;
  O.ExpectKernels = 4;
  O.ExpectLaunches = 1;
  O.SameKernel = E.SameKernel;
  GraphPlan Plan = planGraph(G, O);
  CHECK(Plan.Launches == Launches{{0, 1, 2, 3}});
  CHECK_THAT(Plan.PlanText, Contains("launches: 1 for 4 kernels"));
  CHECK_THAT(Plan.PlanText, Contains("launch 0: kernel 0 jf_k0_add (256x1) + kernel 1"));
  CHECK_THAT(Plan.PlanDot, Contains("subgraph cluster_launch_0"));

  // The combined kernel's header names its parts by position: generated
  // code is deterministic (it is the cache key). It printed a stack
  // address difference, a new key on every run.
  std::vector<codegen::EmittedKernel> Parts;
  for (const KernelPlan &K : Plan.Kernels)
    Parts.push_back(codegen::emitKernel(Plan.planned(G), K));
  codegen::EmittedKernel H = codegen::emitHorizontal(Plan.planned(G), Plan.Kernels, Parts,
                                                     Plan.Launches[0], "jf_l0_h");
  CHECK_THAT(H.Header, Contains("//   part 0 <- kernel jf_k0_add\n") &&
                           Contains("//   part 3 <- kernel jf_k3_mul\n"));

  // The contract counts launches; the message shows the plan.
  O.ExpectLaunches = 4;
  CHECK_THAT(test::errorOf([&] { planGraph(G, O); }),
             Contains("expected 4 launches, the plan has 1") && Contains("launch 0: kernel 0"));

  // Off: four launches, and the plan reads as before.
  O.ExpectLaunches = 4;
  O.Horizontal = false;
  GraphPlan Apart = planGraph(G, O);
  CHECK(Apart.Launches.size() == 4);
  CHECK_THAT(Apart.PlanText, !Contains("launches:"));
  CHECK_THAT(Apart.PlanDot, !Contains("cluster_launch"));

  test::CheckOptions C;
  C.ExpectFusedKernels = 4;
  C.ExpectFusedLaunches = 1;
  test::checkGraph(G, test::randomBindings(G, {{"T", 3}}, E.Scalars, C), C);
}

TEST_CASE("horizontal fusion: RoPE on q [T,32,128] and k [T,8,128] is one launch",
          "[fusion][horizontal][examples]") {
  examples::ExampleGraph E = examples::buildExample("rope");
  PlanOptions O;
  O.ExpectLaunches = 1;
  O.SameKernel = E.SameKernel;
  GraphPlan Plan = planGraph(*E.G, O);
  CHECK(Plan.Kernels.size() == 2);

  test::CheckOptions C;
  C.ExpectFusedLaunches = 1;
  test::checkGraph(*E.G, test::randomBindings(*E.G, {{"T", 5}}, {}, C), C);
}

TEST_CASE("horizontal fusion: parts of different kinds and block shapes share one program",
          "[fusion][horizontal]") {
  Graph G = mixedParts();
  CompileOptions O;
  O.ExpectKernels = 4;
  O.ExpectLaunches = 1;
  // Only the combined form (no second form for large T: its own case).
  O.HorizontalMaxBytes = -1;
  Executable X = test::testCompiler().compile(G, O); // NVRTC compiles the combined kernel
  REQUIRE(X.numLaunches() == 1);
  int MaxThreads = 0, MinThreads = 1 << 20;
  for (const KernelInfo &K : X.kernels()) {
    CHECK(K.Launch == 0);
    MaxThreads = std::max(MaxThreads, K.ThreadsX * K.RowsPerBlock);
    MinThreads = std::min(MinThreads, K.ThreadsX * K.RowsPerBlock);
  }
  // The schedules differ (the point of this graph), the block is the widest
  // and the narrower parts' spare warps leave first.
  REQUIRE(MinThreads < MaxThreads);
  CHECK_THAT(X.source(), Contains(fmt::format("__launch_bounds__({}) jf_l0_h_x0(", MaxThreads)));
  CHECK_THAT(X.source(), Contains(fmt::format("if (jf_t >= {}u) return;", MinThreads)));
  CHECK_THAT(X.source(), Contains("unsigned jf_b3)"));
  CHECK_THAT(X.source(), !Contains("extern \"C\" __global__ void __launch_bounds__(256) jf_k0"));

  test::CheckOptions C;
  C.ExpectFusedLaunches = 1;
  test::checkGraph(G, test::randomBindings(G, {{"T", 7}}, {}, C), C);

  // Compiled as parallel parts, each launch variant in its own program: the
  // part functions another variant calls are not reported as unused. Both
  // forms: the parts alone are kernels of their own in some programs.
  test::ScopedEnv Threads("JITFUSE_COMPILE_THREADS", "2");
  rt::CacheConfig Cfg;
  Cfg.Enabled = false;
  Compiler Fresh(Cfg);
  O.HorizontalMaxBytes.reset();
  Executable Split = Fresh.compile(G, O);
  CHECK_THAT(Split.source(), Contains("alone: launch jf_l0_h"));
  CHECK_FALSE(Split.stats().CacheHit);
  CHECK_THAT(Split.compileLog(), !Contains("_d\" was declared but never referenced"));
}

TEST_CASE("GPU: horizontal launches equal separate launches at any alignment and size",
          "[gpu][fusion][horizontal]") {
  if (!test::haveGpu())
    return;
  Graph G = mixedParts();
  // T = 0: only the static part has blocks; T = 1: decode; T = 300: many
  // blocks per part, so every range boundary is crossed.
  for (int64_t T : {0, 1, 2, 300}) {
    for (int Phase = 0; Phase < 3; ++Phase) {
      INFO("T = " << T << ", alignment phase " << Phase);
      test::CheckOptions C;
      C.ExpectFusedLaunches = 1;
      // Aligned; every tensor off by one element (every part peeled); parts
      // at different phases (some aligned, some peeled in one launch).
      if (Phase == 1)
        C.MisalignElems = 1;
      if (Phase == 2)
        C.MisalignEach = {0, 1, 0, 3, 2, 0, 1, 0};
      CHECK(test::checkGraph(G, test::randomBindings(G, {{"T", T}}, {}, C), C) > 0);
    }
  }
}

TEST_CASE("GPU: llama_block as one launch equals separate launches, direct and CUDA graph",
          "[gpu][fusion][horizontal][examples]") {
  if (!test::haveGpu())
    return;
  examples::ExampleGraph E = examples::buildExample("llama_block");
  const Graph &G = *E.G;
  CompileOptions O;
  O.ExpectLaunches = 1;
  Executable X = test::testCompiler().compile(G, O);
  X.setCudaGraph(true);
  for (int64_t T : {1, 5, 1, 64}) {
    for (unsigned Misalign : {0u, 1u}) {
      INFO("T = " << T << ", misaligned by " << Misalign);
      checkLlamaRun(X, E, T, Misalign);
    }
  }
  CHECK(X.cudaGraphStats().Instantiations == 1);
}

TEST_CASE("horizontal fusion: a launch runs its kernels one by one above HorizontalMaxBytes",
          "[fusion][horizontal][examples]") {
  // llama_block's launch moves 144384 T + 16384 bytes; with the default
  // 160 MiB it is one launch up to T = 1161 and four from T = 1162
  // (measured: 4 launches 162 us, 1 launch 187 us at T = 4096,
  // BENCHMARKS.md).
  examples::ExampleGraph E = examples::buildExample("llama_block");
  const Graph &G = *E.G;
  REQUIRE(HorizontalMaxLaunchBytes == int64_t(160) << 20);
  Executable X = test::testCompiler().compile(G, {});
  REQUIRE(X.numLaunches() == 1);
  CHECK_THAT(X.plan(), Contains("(its kernels launch one by one where they move more than "
                                "160 MiB together: 144384*T + 16384 bytes)"));
  std::vector<int64_t> KB = X.kernelBytes({1161});
  CHECK(KB[0] + KB[1] + KB[2] + KB[3] == 144384 * 1161 + 16384);
  for (auto [T, Launches] : {std::pair<int64_t, unsigned>{0, 1}, {1, 1}, {1161, 1},
                             {1162, 4}, {4096, 4}}) {
    INFO("T = " << T);
    CHECK(X.numLaunchesAt({T}) == Launches);
    CHECK(X.launchSplitAt(0, {T}) == (Launches == 4));
    // The roofline shares the launch's time only where it is one launch.
    for (const KernelRoofline &R : kernelRoofline(X, {T}))
      CHECK(R.SharedLaunch == (Launches == 1));
  }
  // The parts are in the program as kernels of their own, beside the
  // combined one (whose bodies are their __device__ copies).
  for (const KernelInfo &K : X.kernels()) {
    INFO(K.Name);
    CHECK_THAT(X.source(), Contains("// kernel " + K.Name + " alone: launch jf_l0_h"));
    CHECK_THAT(X.source(), Contains(" " + K.Name + "_v8(") && Contains(K.Name + "_v8_d("));
  }
  CHECK_THAT(test::errorOf([&] { X.launchSplitAt(1, {1}); }),
             Contains("launch 1 does not exist"));

  // -1: one launch at any size, and no second form in the program.
  CompileOptions Never;
  Never.HorizontalMaxBytes = -1;
  Executable One = test::testCompiler().compile(G, Never);
  CHECK(One.numLaunchesAt({4096}) == 1);
  CHECK_THAT(One.source(), !Contains("alone: launch"));
  CHECK_THAT(One.plan(), !Contains("one by one"));

  // Static sizes within the limit never split: no second form.
  Graph S;
  Value A = S.input("a", DType::F32, {64, 128});
  Value B = S.input("b", DType::F32, {32, 256});
  S.output("ea", exp(A));
  S.output("sb", sigmoid(B));
  Executable St = test::testCompiler().compile(S, {});
  CHECK(St.numLaunches() == 1);
  CHECK(St.numKernels() == 2);
  CHECK_THAT(St.source(), !Contains("alone: launch"));
}

TEST_CASE("GPU: llama_block split and combined by size match the reference, CUDA graph "
          "included",
          "[gpu][fusion][horizontal][examples]") {
  if (!test::haveGpu())
    return;
  examples::ExampleGraph E = examples::buildExample("llama_block");
  const Graph &G = *E.G;
  CompileOptions O;
  O.HorizontalMaxBytes = 1 << 20; // combined up to T = 7, split from T = 8
  Executable X = test::testCompiler().compile(G, O);
  for (bool Graphs : {false, true}) {
    X.setCudaGraph(Graphs);
    // Back and forth across the limit: a graph's nodes are toggled, not
    // rebuilt, and a split launch's dims slots are written when it runs.
    for (int64_t T : {1, 64, 7, 8, 1, 300, 64}) {
      for (unsigned Misalign : {0u, 1u}) {
        INFO("CUDA graph " << Graphs << ", T = " << T << ", misaligned by " << Misalign);
        CHECK(X.numLaunchesAt({T}) == (T >= 8 ? 4u : 1u));
        checkLlamaRun(X, E, T, Misalign);
      }
    }
  }
  CHECK(X.cudaGraphStats().Instantiations == 2);
  // Per-kernel times: one launch's, shared, where combined; where the parts
  // run alone each has its own (the combined launch, skipped, has none).
  X.setCudaGraph(false);
  for (int64_t T : {1, 64}) {
    INFO("T = " << T);
    HostRunOptions RO;
    std::vector<double> Us;
    RO.KernelMedianUs = &Us;
    RO.ProfileReps = 3;
    runOnDevice(X, test::randomBindings(G, {{"T", T}}, E.Scalars), RO);
    REQUIRE(Us.size() == 4);
    for (double U : Us)
      CHECK(U > 0);
    if (T == 1)
      CHECK(std::adjacent_find(Us.begin(), Us.end(), std::not_equal_to<>()) == Us.end());
  }
}
