//===- tests/test_random_graphs.cpp - random graphs through the pipeline --===//
//
// CPU tier: thousands of seeded random graphs through partitioning (unfused
// and the fusion pass), independent partition invariants, scheduling and
// codegen determinism, plus a sample compiled by NVRTC. GPU tier: batches of
// random graphs fused vs unfused vs the fp64 reference. A failure prints the
// seed and a shrunk C++ repro.
//
// JITFUSE_RANDOM_SEED=<base> repeats a run; JITFUSE_RANDOM_COUNT=<n> changes
// how many graphs each tier checks; JITFUSE_PIPELINE_GRAPHS=<n>, the CPU
// pipeline check's alone (CI's sanitizer job: .ci/run).
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RandomGraph.h"

#include "codegen/Codegen.h"
#include "compiler/Fusion.h"
#include "compiler/Planner.h"
#include "compiler/Schedule.h"
#include "exec/HostRun.h"
#include "reference/ErrorBound.h"
#include "reference/Tolerance.h"
#include "runtime/Driver.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdlib>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

uint64_t baseSeed() {
  static uint64_t Seed = [] {
    uint64_t S = std::random_device{}();
    if (const char *Env = std::getenv("JITFUSE_RANDOM_SEED"))
      S = std::strtoull(Env, nullptr, 10);
    std::fprintf(stderr, "random graphs: base seed %llu (JITFUSE_RANDOM_SEED to repeat)\n",
                 static_cast<unsigned long long>(S));
    return S;
  }();
  return Seed;
}

unsigned countFromEnv(unsigned Default) {
  if (const char *Env = std::getenv("JITFUSE_RANDOM_COUNT"))
    return static_cast<unsigned>(std::strtoul(Env, nullptr, 10));
  return Default;
}

/// Checks what every correct partitioner must satisfy, independently of
/// verifyPartition. A node is computed by one cluster, or recomputed (listed
/// in Recomputed) by every cluster computing it and stored by none. Returns
/// "" or what is broken.
std::string partitionInvariants(const Graph &G, const Partition &P) {
  std::vector<bool> Live = liveNodes(G);
  std::vector<std::vector<size_t>> In(G.size());
  std::vector<size_t> Again(G.size(), 0);
  auto Has = [](const std::vector<NodeId> &V, NodeId N) {
    return std::find(V.begin(), V.end(), N) != V.end();
  };
  if (P.ClusterOf.size() != G.size())
    return fmt::format("ClusterOf has {} entries for {} nodes", P.ClusterOf.size(), G.size());
  for (size_t C = 0; C < P.Clusters.size(); ++C) {
    const Cluster &Cl = P.Clusters[C];
    if (Cl.Nodes.empty())
      return fmt::format("cluster {} is empty", C);
    for (NodeId N : Cl.Recomputed) {
      if (!Has(Cl.Nodes, N))
        return fmt::format("cluster {} recomputes %{} but does not compute it", C, N);
      if (Has(Cl.Outputs, N))
        return fmt::format("cluster {} stores recomputed %{}", C, N);
      ++Again[N];
    }
    for (NodeId N : Cl.Nodes) {
      if (N >= G.size())
        return fmt::format("cluster {} names node %{} beyond the graph", C, N);
      if (G.node(N).isLeaf())
        return fmt::format("leaf %{} is computed by cluster {}", N, C);
      if (!Live[N])
        return fmt::format("dead node %{} is computed by cluster {}", N, C);
      In[N].push_back(C);
    }
  }
  for (NodeId N = 0; N < G.size(); ++N) {
    if (In[N].size() > 1 && Again[N] != In[N].size())
      return fmt::format("node %{} is in {} clusters but recomputed by {}", N, In[N].size(),
                         Again[N]);
    if (!In[N].empty() &&
        std::find(In[N].begin(), In[N].end(), static_cast<size_t>(P.ClusterOf[N])) ==
            In[N].end())
      return fmt::format("ClusterOf[%{}] = {} but that cluster does not compute it", N,
                         P.ClusterOf[N]);
  }
  for (const GraphOutput &O : G.outputs())
    if (Again[O.Id])
      return fmt::format("graph output '{}' (%{}) is recomputed, so nothing stores it", O.Name,
                         O.Id);
  for (NodeId N = 0; N < G.size(); ++N) {
    const Node &Nd = G.node(N);
    if (Live[N] && !Nd.isLeaf() && In[N].empty())
      return fmt::format("live node %{} is in no cluster", N);
    for (size_t C : In[N]) {
      const Cluster &Cl = P.Clusters[C];
      for (NodeId O : Nd.Operands) {
        if (G.node(O).isLeaf())
          continue;
        if (In[O].empty())
          return fmt::format("operand %{} of %{} is computed nowhere", O, N);
        if (Has(Cl.Nodes, O)) {
          auto PosO = std::find(Cl.Nodes.begin(), Cl.Nodes.end(), O);
          auto PosN = std::find(Cl.Nodes.begin(), Cl.Nodes.end(), N);
          if (PosO > PosN)
            return fmt::format("cluster {} lists %{} after its user %{}", C, O, N);
          continue;
        }
        if (Again[O])
          return fmt::format("cluster {} reads recomputed %{} without computing it", C, O);
        size_t From = In[O].front();
        if (From > C)
          return fmt::format("operand %{} of %{} is in later cluster {} (> {})", O, N, From, C);
        if (!Has(P.Clusters[From].Outputs, O))
          return fmt::format("%{} is read by cluster {} but cluster {} does not store it", O, C,
                             From);
        if (!Has(Cl.Inputs, O))
          return fmt::format("cluster {} reads %{} without listing it as an input", C, O);
      }
    }
  }
  for (const GraphOutput &O : G.outputs()) {
    if (In[O.Id].empty())
      return fmt::format("graph output '{}' (%{}) is computed nowhere", O.Name, O.Id);
    const Cluster &Cl = P.Clusters[In[O.Id].front()];
    if (!Has(Cl.Outputs, O.Id))
      return fmt::format("graph output '{}' (%{}) is not stored by cluster {}", O.Name, O.Id,
                         In[O.Id].front());
  }
  return "";
}

/// verify -> partition (both ways) -> invariants -> schedule -> emit twice.
/// Returns "" or the first problem.
std::string checkPipeline(const Graph &G) {
  try {
    G.verify();
    // Unfused, fused (the defaults), and fused with the reduction fusions
    // of sessions 27 and 28 off (FullReducePrologueOutputs,
    // ColumnReduceEpilogue, FullReduceEpilogue, RecomputeStoredValues,
    // SiblingColumnReductions, ColumnReducePrologueOutputs: the partitions
    // before them).
    for (int Mode3 : {0, 1, 2}) {
      bool Fuse = Mode3 > 0;
      const char *Mode = Mode3 == 0   ? "unfused"
                         : Mode3 == 1 ? "fused"
                                      : "fused (reduction edges kept apart)";
      FusionOptions FO;
      FO.FullReducePrologueOutputs = FO.ColumnReduceEpilogue = FO.FullReduceEpilogue =
          FO.RecomputeStoredValues = FO.SiblingColumnReductions =
              FO.ColumnReducePrologueOutputs = Mode3 != 2;
      Partition P = Fuse ? fuseGraph(G, FO) : partitionUnfused(G);
      verifyPartition(G, P);
      std::string Why = partitionInvariants(G, P);
      if (!Why.empty())
        return fmt::format("{} partition: {}", Mode, Why);
      // The third mode also emits without PrefixCoords (reshapes of the
      // domain dividing the whole linear index, as before session 31).
      ScheduleOptions SO;
      SO.PrefixCoords = Mode3 != 2;
      std::vector<KernelPlan> Plans;
      for (unsigned I = 0; I < P.Clusters.size(); ++I)
        Plans.push_back(scheduleCluster(G, P.Clusters[I], I, SO));
      std::string A = codegen::emitProgram(G, Plans);
      std::string B = codegen::emitProgram(G, Plans);
      if (A.empty())
        return fmt::format("{}: emitProgram returned no text", Mode);
      if (A != B)
        return fmt::format("{}: emitProgram is not deterministic", Mode);
    }
  } catch (const Error &E) {
    return fmt::format("jitfuse::Error: {}", E.what());
  } catch (const InternalError &E) {
    return fmt::format("jitfuse::InternalError: {}", E.what());
  }
  return "";
}

std::string reproText(const Recipe &R, const std::function<bool(const Graph &)> &Fails) {
  Recipe Small = shrinkRecipe(R, Fails);
  Graph G = buildGraph(Small);
  return fmt::format("seed {} ({} ops shrunk to {}); repro:\n{}\n{}", R.Seed, R.Ops.size(),
                     Small.Ops.size(), describeBindings(Small), printAsCpp(G));
}

} // namespace

TEST_CASE("Random graph generator is reproducible and builds", "[random]") {
  for (uint64_t S = 0; S < 50; ++S) {
    Recipe A = randomRecipe(S), B = randomRecipe(S);
    Graph GA = buildGraph(A), GB = buildGraph(B);
    REQUIRE(printAsCpp(GA) == printAsCpp(GB));
    REQUIRE(!GA.outputs().empty());
  }
}

TEST_CASE("A repro prints reductions over axes as such", "[random]") {
  // printAsCpp printed every non-All reduction as ReduceScope::LastAxis, so
  // a repro of a column reduction reduced the wrong axis.
  Recipe R;
  RecipeOp In;
  In.K = RKind::Input;
  In.Name = "x";
  In.Dims = {Dim("B"), Dim(7)};
  R.Ops.push_back(In);
  RecipeOp Col;
  Col.K = RKind::Reduce;
  Col.O = Op::ReduceSum;
  Col.A0 = 2; // axes {0}
  Col.Args = {0};
  R.Ops.push_back(Col);
  R.Outputs = {{"y", 1}};
  R.Dims["B"] = 3;
  Graph G = buildGraph(R);
  CHECK(G.node(G.outputs()[0].Id).reducedAxes() == 1u);
  CHECK_THAT(printAsCpp(G), Catch::Contains("reduce(Op::ReduceSum, v0, {0})"));
}

TEST_CASE("Shrinker finds a minimal failing graph and prints it as C++", "[random]") {
  // Predicate: "an output depends on an exp" — the minimum is one input + exp.
  auto HasExp = [](const Graph &G) {
    std::vector<bool> Live = liveNodes(G);
    for (NodeId N = 0; N < G.size(); ++N)
      if (Live[N] && G.node(N).Kind == Op::Exp)
        return true;
    return false;
  };
  int Shrunk = 0;
  for (uint64_t S = 0; S < 200 && Shrunk < 5; ++S) {
    Recipe R = randomRecipe(baseSeed() + S);
    if (!HasExp(buildGraph(R)))
      continue;
    Recipe Small = shrinkRecipe(R, HasExp);
    Graph G = buildGraph(Small);
    INFO(printAsCpp(G));
    CHECK(HasExp(G));
    CHECK(G.outputs().size() == 1);
    // One input (maybe through a cast of an i32 input), an optional tanh
    // guard, the exp.
    CHECK(Small.Ops.size() <= 4);
    ++Shrunk;
  }
  CHECK(Shrunk == 5);

  // The printed C++ uses names and values a person can paste.
  Graph G;
  Value X = G.input("a \"q\" \\ */\n\xc3\xa9", bf16, {"B", 17});
  G.output("y", unary(Op::Exp, X) * 0.5);
  std::string Cpp = printAsCpp(G);
  CHECK(Cpp.find(R"(g.input("a \"q\" \\ */\012\303\251", bf16, {"B", int64_t(17)}))") !=
        std::string::npos);
  CHECK(Cpp.find("unary(Op::Exp, v0)") != std::string::npos);
  INFO(Cpp);
  CHECK(Cpp.find("g.constant(0.5, ") != std::string::npos);
  CHECK(Cpp.find("g.output(\"y\", v3);") != std::string::npos);
}

TEST_CASE("Random graphs: partition invariants, schedule, deterministic codegen",
          "[random]") {
  unsigned Count = countFromEnv(10000);
  if (const char *Env = std::getenv("JITFUSE_PIPELINE_GRAPHS"))
    Count = static_cast<unsigned>(std::strtoul(Env, nullptr, 10));
  auto Start = std::chrono::steady_clock::now();
  unsigned Interpreted = 0, Nodes = 0;
  for (unsigned I = 0; I < Count; ++I) {
    // Every other graph with sibling column reductions now and then, as
    // the GPU batches draw them.
    GenOptions GO;
    GO.SiblingColumns = I % 2 == 1;
    Recipe R = randomRecipe(baseSeed() + I, GO);
    Graph G = buildGraph(R);
    Nodes += static_cast<unsigned>(G.size());
    std::string Why = checkPipeline(G);
    if (!Why.empty()) {
      auto Fails = [](const Graph &X) { return !checkPipeline(X).empty(); };
      FAIL(Why << "\n" << reproText(R, Fails));
    }
    // The generator's promise to the GPU tier: every output stays finite.
    if (I % 20 == 0) {
      Bindings B;
      std::mt19937_64 Rng(R.Seed);
      B.Dims = R.Dims;
      B.Scalars = R.Scalars;
      for (NodeId N : G.inputs())
        B.Inputs[G.node(N).Name] =
            randomTensor(G.node(N).Type, resolveShape(G.node(N).Dims, B.Dims), Rng);
      for (const auto &[Name, T] : interpret(G, B))
        for (double V : T.Data)
          if (!std::isfinite(V))
            FAIL("seed " << R.Seed << ": output '" << Name << "' is not finite\n"
                         << describeBindings(R) << "\n"
                         << printAsCpp(G));
      ++Interpreted;
    }
  }
  double Secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  std::fprintf(stderr, "random graphs: %u graphs (%u nodes, %u interpreted) in %.1f s\n", Count,
               Nodes, Interpreted, Secs);
}

namespace {
/// Compiles G (built from R) fused and unfused for sm_90 with NVRTC; fails
/// with the seed and a C++ repro when either throws.
void compileBothWays(const Graph &G, const Recipe &R) {
  for (bool Fuse : {true, false}) {
    CompileOptions Opts;
    Opts.Fuse = Fuse;
    Opts.Arch = "sm_90";
    try {
      Executable X = testCompiler().compile(G, Opts);
      CHECK(!X.source().empty());
      CHECK(X.numKernels() >= 1);
    } catch (const Error &E) {
      FAIL("seed " << R.Seed << (Fuse ? " fused" : " unfused") << ": " << E.what() << "\n"
                   << describeBindings(R) << "\n"
                   << printAsCpp(G));
    }
  }
}
} // namespace

TEST_CASE("Random graphs: a sample compiles with NVRTC for sm_90", "[random]") {
  unsigned Count = std::min(30u, countFromEnv(30));
  for (unsigned I = 0; I < Count; ++I) {
    Recipe R = randomRecipe(baseSeed() + 1000003 + I);
    Graph G = buildGraph(R);
    compileBothWays(G, R);
  }
}

TEST_CASE("Random graphs: the reduction fusions' plans compile with NVRTC", "[random]") {
  // FullReduceEpilogue, RecomputeStoredValues, SiblingColumnReductions,
  // ColumnReducePrologueOutputs (on by default): the CPU pipeline check
  // runs them on every graph; here the first graphs whose plan they change
  // are compiled both ways, so the kernels of either plan are valid CUDA.
  unsigned Changed = 0;
  for (unsigned I = 0; I < 400 && Changed < 6; ++I) {
    Recipe R = randomRecipe(baseSeed() + 3000017 + I);
    Graph G = buildGraph(R);
    PlanOptions Base, Off;
    Off.Fusion.FullReduceEpilogue = Off.Fusion.RecomputeStoredValues =
        Off.Fusion.SiblingColumnReductions = Off.Fusion.ColumnReducePrologueOutputs = false;
    if (planGraph(G, Base).PlanText == planGraph(G, Off).PlanText)
      continue;
    ++Changed;
    for (bool On : {true, false}) {
      CompileOptions Opts;
      Opts.Arch = "sm_90";
      Opts.FullReduceEpilogue = Opts.RecomputeStoredValues = Opts.SiblingColumnReductions =
          Opts.ColumnReducePrologueOutputs = On;
      try {
        Executable X = testCompiler().compile(G, Opts);
        CHECK(!X.source().empty());
      } catch (const Error &E) {
        FAIL("seed " << R.Seed << " fused (session-28 fusions " << (On ? "on" : "off")
                     << "): " << E.what() << "\n"
                     << describeBindings(R) << "\n"
                     << printAsCpp(G));
      }
    }
  }
  // Random graphs hold column and full reductions often enough that the
  // options change some plans among 400.
  CHECK(Changed == 6);
}

TEST_CASE("Random graphs: strided layouts are drawn, printed and compile", "[random][strided]") {
  unsigned StridedIn = 0, StridedOut = 0, NamedStride = 0, Compiled = 0;
  for (unsigned I = 0; I < 400; ++I) {
    Recipe R = randomRecipe(baseSeed() + 2000003 + I);
    Graph G = buildGraph(R);
    bool Any = false, AnyIn = false;
    for (NodeId N : G.inputs())
      if (!G.node(N).Strides.empty()) {
        ++StridedIn;
        Any = AnyIn = true;
        for (const Dim &D : G.node(N).Strides)
          NamedStride += D.isDynamic();
      }
    for (const GraphOutput &O : G.outputs())
      if (!O.Strides.empty()) {
        ++StridedOut;
        Any = true;
      }
    if (!Any)
      continue;
    // Every dim the graph names is bound (named strides included), and the
    // repro prints the strides.
    for (const std::string &D : G.dynamicDims())
      CHECK(R.Dims.count(D) == 1);
    std::string Cpp = printAsCpp(G);
    for (NodeId N : G.inputs())
      if (!G.node(N).Strides.empty())
        CHECK(Cpp.find(fmt::format("g.input(\"{}\"", G.node(N).Name)) != std::string::npos);
    for (const GraphOutput &O : G.outputs())
      if (!O.Strides.empty())
        CHECK(Cpp.find(fmt::format("g.output(\"{}\", v{}, {{", O.Name, O.Id)) !=
              std::string::npos);
    if (AnyIn)
      CHECK(Cpp.find("}, {") != std::string::npos);
    if (Compiled >= 8)
      continue;
    ++Compiled;
    compileBothWays(G, R);
  }
  // About a fifth of inputs and outputs get a layout: far more than none.
  CHECK(StridedIn > 40);
  CHECK(StridedOut > 20);
  CHECK(NamedStride > 5);
  CHECK(Compiled == 8);
}

//===----------------------------------------------------------------------===//
// GPU tier
//===----------------------------------------------------------------------===//

namespace {


/// What the bound-aware comparisons of a run accepted beyond the rtol rule.
struct BoundTally {
  int64_t Elements = 0, Unconstrained = 0, PassedByBound = 0;
};

/// Compiles G fused and unfused, runs both on inputs seeded by Seed, and
/// compares with the reference: the rtol rule, or within the reference's
/// per-element error bound (reference/ErrorBound.h), which covers f32 noise that
/// cancellation makes large relative to the result. Returns "" or every
/// mismatch; adds to Tally when given.
std::string gpuMismatches(const Graph &G, const Recipe &Values, uint64_t Seed, bool FastMath,
                          bool Stream, bool Late, BoundTally *Tally = nullptr) {
  Bindings B = recipeBindings(G, Values, Seed);
  std::string Out;
  // Pointer offsets from the seed: aligned, all tensors at one offset, or
  // each at its own (peeled kernels align to one tensor and check the rest).
  HostRunOptions RO;
  if (Seed % 3 == 1)
    RO.MisalignElems = 1 + static_cast<unsigned>(Seed / 3 % 7);
  else if (Seed % 3 == 2)
    RO.MisalignEach = {static_cast<unsigned>(Seed / 3 % 8), static_cast<unsigned>(Seed / 24 % 8),
                       0, static_cast<unsigned>(Seed / 192 % 8), 5};
  std::string Layout =
      RO.MisalignEach.empty()
          ? fmt::format("every tensor {} elements past alignment", RO.MisalignElems)
          : fmt::format("tensors {} elements past alignment (inputs then outputs, cycling)",
                        fmt::join(RO.MisalignEach, "/"));
  try {
    ReferenceResult Ref = interpretWithBounds(G, B, FastMath);
    // Fused (independent kernels share launches), fused with one launch per
    // kernel, unfused.
    unsigned FusedLaunches = 0;
    for (auto [Fuse, Horizontal] :
         {std::pair{true, true}, std::pair{true, false}, std::pair{false, false}}) {
      CompileOptions Opts;
      Opts.Fuse = Fuse;
      Opts.HorizontalFusion = Horizontal;
      Opts.FastMath = FastMath;
      Opts.StreamLoads = Stream;
      Opts.RowCacheLateEpilogue = Late;
      // The late-epilogue batches also cover the row-by-row element-wise
      // kernels that FlatRowBroadcast and FlatTailThreads replaced.
      Opts.FlatRowBroadcast = !Late;
      Opts.FlatTailThreads = !Late;
      Opts.PeeledRowOccupancy = !Late;
      // And without PrefixCoords (on by default since session 31: these
      // batches keep the whole-index division checked).
      Opts.PrefixCoords = !Late;
      // And the partitions before sessions 27 and 28: full reductions not
      // storing their prologue's outputs nor computing on their result,
      // column reductions not computing on their result, stored values
      // not recomputed by their readers, sibling column reductions apart,
      // column reductions not storing their prologue's outputs.
      Opts.FullReducePrologueOutputs = Opts.ColumnReduceEpilogue = Opts.FullReduceEpilogue =
          Opts.RecomputeStoredValues = Opts.SiblingColumnReductions =
              Opts.ColumnReducePrologueOutputs = !Late;
      Executable X = testCompiler().compile(G, Opts);
      if (Fuse && Horizontal)
        FusedLaunches = X.numLaunches();
      else if (Fuse && FusedLaunches == X.numKernels())
        continue; // no launch was shared: the fused run above covered it
      std::map<std::string, HostTensor> Got = runOnDevice(X, B, RO);
      for (const GraphOutput &O : G.outputs()) {
        double Tol = pathTolerance(G, O.Id, B.Dims);
        CompareResult C = compareTensors(Got.at(O.Name), Ref.Values.at(O.Name),
                                         Ref.Bounds.at(O.Name), Tol,
                                         fmt::format("{}{} output '{}'",
                                                     !Fuse        ? "unfused"
                                                     : Horizontal ? "fused"
                                                                  : "fused, one launch per kernel",
                                                     std::string(FastMath ? " fast-math" : "") +
                                                         (Stream ? " streamed loads" : "") +
                                                         (Late ? " (late batch: RowCacheLateEpilogue, "
                                                                 "PrefixCoords off, session 27-28 "
                                                                 "fusions off)"
                                                               : ""),
                                                     O.Name));
        if (Tally) {
          Tally->Elements += static_cast<int64_t>(Ref.Values.at(O.Name).Data.size());
          Tally->Unconstrained += C.Unconstrained;
          Tally->PassedByBound += C.PassedByBound;
        }
        if (!C.Ok)
          Out += C.Message + " (" + Layout + ")\n";
      }
    }
  } catch (const Error &E) {
    Out += fmt::format("jitfuse::Error: {} ({})\n", E.what(), Layout);
  }
  return Out;
}

} // namespace

/// Batches Part, Part + Parts, ... of the GPU random graphs (batch b: graphs
/// 20 b .. 20 b + 19 of the count): the parts are test cases of their own,
/// so `scripts/gpu-check run` with several processes runs them at once
/// (one case of all 25 batches took 206 s on the H200 host in session 30,
/// the tier's longest). Every part draws the graphs and options it drew as
/// one case: the same seeds, B values and batch kinds.
static void gpuRandomGraphs(unsigned Part, unsigned Parts) {
  const unsigned PerBatch = GpuBatchSize;
  unsigned Count = countFromEnv(500);
  bool Gpu = haveGpu();
  unsigned Checked = 0, Batches = 0, Mine = 0, FailedGraphs = 0;
  std::string Failures;
  BoundTally Tally;
  auto Start = std::chrono::steady_clock::now();
  for (unsigned First = 0; First < Count; First += PerBatch) {
    unsigned Batch = Batches++;
    if (Batch % Parts != Part)
      continue;
    std::vector<Recipe> Rs = gpuBatchRecipes(baseSeed() + 2000003 + First, Batch,
                                             std::min(Count, First + PerBatch) - First);
    Mine += static_cast<unsigned>(Rs.size());
    Recipe M = mergeRecipes(Rs);
    Graph G = buildGraph(M);
    if (!Gpu) {
      // Compiling still exercises codegen + NVRTC on a merged graph.
      CompileOptions Opts;
      Opts.Arch = "sm_90";
      CHECK_NOTHROW(testCompiler().compile(G, Opts));
      break;
    }
    // Every fourth batch compiles with FastMath, against its own bound;
    // another fourth with StreamLoads (L2 hints on the loads), another with
    // the experiment RowCacheLateEpilogue, without FlatRowBroadcast,
    // FlatTailThreads and PeeledRowOccupancy, with the reduction fusions of
    // sessions 27 and 28 off, and without PrefixCoords.
    // (Batches counts from 1 here, as when one case ran them all.)
    bool Fast = (Batch + 1) % 4 == 0, Stream = (Batch + 1) % 4 == 2,
         Late = (Batch + 1) % 4 == 1;
    std::string Why = gpuMismatches(G, M, M.Ops.size(), Fast, Stream, Late, &Tally);
    if (Why.empty()) {
      Checked += static_cast<unsigned>(Rs.size());
      continue;
    }
    // Find the failing members and shrink each on its own; the members that
    // pass alone still count as checked. Keep going: every failure of the
    // run is reported, not only the first batch's.
    std::string Report;
    unsigned FailedHere = 0;
    for (const Recipe &R : Rs) {
      Graph One = buildGraph(R);
      std::string Alone = gpuMismatches(One, R, R.Seed, Fast, Stream, Late);
      if (Alone.empty()) {
        ++Checked;
        continue;
      }
      ++FailedHere;
      auto Fails = [&](const Graph &X) {
        return !gpuMismatches(X, R, R.Seed, Fast, Stream, Late).empty();
      };
      Report += Alone + reproText(R, Fails) + "\n";
    }
    FailedGraphs += FailedHere;
    if (FailedHere == 0) // only the merged graph fails: report the batch
      Report = "batch of seeds " + std::to_string(Rs.front().Seed) + ".." +
               std::to_string(Rs.back().Seed) + " fails merged, no member alone:\n" + Why;
    Failures += Report + "\n";
  }
  double Secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  std::fprintf(stderr,
               "GPU random graphs, part %u of %u: %u graphs passed in %.1f s; of %lld "
               "compared elements (fused + unfused) %lld were unconstrained and %lld "
               "passed only within the reference's error bound\n",
               Part + 1, Parts, Checked, Secs, static_cast<long long>(Tally.Elements),
               static_cast<long long>(Tally.Unconstrained),
               static_cast<long long>(Tally.PassedByBound));
  if (!Failures.empty())
    FAIL(FailedGraphs << " of " << Mine << " random graphs failed:\n" << Failures);
  if (Gpu)
    CHECK(Checked == Mine);
}

// Five parts of 5 batches each at the default count of 500.
TEST_CASE("GPU: random graphs fused vs unfused vs reference, part 1 of 5", "[gpu][random]") {
  gpuRandomGraphs(0, 5);
}
TEST_CASE("GPU: random graphs fused vs unfused vs reference, part 2 of 5", "[gpu][random]") {
  gpuRandomGraphs(1, 5);
}
TEST_CASE("GPU: random graphs fused vs unfused vs reference, part 3 of 5", "[gpu][random]") {
  gpuRandomGraphs(2, 5);
}
TEST_CASE("GPU: random graphs fused vs unfused vs reference, part 4 of 5", "[gpu][random]") {
  gpuRandomGraphs(3, 5);
}
TEST_CASE("GPU: random graphs fused vs unfused vs reference, part 5 of 5", "[gpu][random]") {
  gpuRandomGraphs(4, 5);
}
