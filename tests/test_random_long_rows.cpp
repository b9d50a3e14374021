//===- tests/test_random_long_rows.cpp - random graphs over long rows -----===//
//
// The random-graph tier draws rows of at most 1025 elements, which every row
// kernel keeps in registers. Here the generator draws long rows (4095 ...
// 50257, GenOptions::LongRows), so row kernels take the other schedules:
// re-read per stage, kept in shared memory (CompileOptions::RowSharedMemory),
// split over a cluster (RowClusters) and kept in registers without the
// inputs only the epilogue reads (RowCacheStageInputs), and, over more rows
// than SMs with aligned pointers, re-read rows run as their cluster split's
// aligned variant (RowClustersAligned). The CPU part shows
// that a fixed
// sample reaches each of them; the GPU part runs fresh samples under each
// option set fused vs unfused vs the fp64 reference.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RandomGraph.h"

#include "codegen/LaunchRule.h"
#include "compiler/Planner.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// The row schedules, as the plan's schedule line names them.
const char *const Schedules[] = {"row kept in registers", "row re-read from memory per stage",
                                 "kept in shared memory between stages",
                                 "split over a cluster of", "row read once",
                                 "of the inputs its stages read",
                                 "that keep it in registers (RowClustersAligned"};

/// The option sets the tier rotates through: the default (twice: its
/// re-read rows, and its rows kept without their epilogue inputs), rows in
/// shared memory, rows split over clusters.
PlanOptions planOptions(int Set) {
  PlanOptions O;
  if (Set == 1)
    O.Schedule.RowSharedBytes = codegen::maxRowSharedBytes(9, 0);
  if (Set == 2)
    O.Schedule.Clusters = true;
  // The driver's defaults on sm_90.
  O.Schedule.AlignedClusters = true;
  O.Schedule.AlignedClustersPeeled = true;
  O.Schedule.AlignedClustersTwoBlocks = true;
  return O;
}

/// The schedule each option set exists for: the default's re-read rows,
/// RowSharedMemory's rows in shared memory, RowClusters' split rows, the
/// default's rows kept by RowCacheStageInputs, the default's re-read rows
/// with their cluster split for aligned pointers (RowClustersAligned; run
/// over more rows than SMs).
constexpr int NumSets = 5;
const char *const Target[NumSets] = {
    "row re-read from memory per stage", "kept in shared memory between stages",
    "split over a cluster of", "of the inputs its stages read",
    "that keep it in registers (RowClustersAligned"};

/// Whether G's fused plan under option set \p Set takes Target[Set].
bool takesOwnSchedule(const Graph &G, int Set) {
  for (const KernelPlan &K : planGraph(G, planOptions(Set)).Kernels)
    if (K.Why.find(Target[Set]) != std::string::npos)
      return true;
  return false;
}

/// \p Rows: B's value (0: 1-3 by the seed).
Recipe longRowRecipe(uint64_t Seed, int64_t Rows = 0) {
  GenOptions GO;
  GO.LongRows = true;
  GO.BValue = Rows > 0 ? Rows : static_cast<int64_t>(1 + Seed % 3);
  return randomRecipe(Seed, GO);
}

} // namespace

TEST_CASE("Random graphs with long rows reach every row schedule", "[random][long-rows]") {
  std::map<std::string, int> Hits;
  int RowKernels = 0;
  for (uint64_t I = 0; I < 120; ++I) {
    Recipe R = longRowRecipe(7000003 + I);
    Graph G = buildGraph(R);
    for (int Set = 0; Set < NumSets; ++Set) {
      GraphPlan P = planGraph(G, planOptions(Set));
      for (const KernelPlan &K : P.Kernels) {
        if (K.Kind != KernelKind::RowReduce)
          continue;
        ++RowKernels;
        for (const char *S : Schedules)
          if (K.Why.find(S) != std::string::npos)
            ++Hits[S];
      }
    }
  }
  // A row kept without its epilogue inputs is rarer (about one recipe in
  // 400: a row-shaped input that only the epilogue reads, over a budget the
  // stage inputs fit), and so is a re-read row with an aligned variant
  // whose split keeps it (a row length of whole 16-byte chunks, stages x
  // blocks <= 8): look further for them.
  for (int Set : {3, 4}) {
    const std::string Rare = Target[Set];
    for (uint64_t I = 120; I < 3000 && Hits[Rare] == 0; ++I)
      for (const KernelPlan &K : planGraph(buildGraph(longRowRecipe(7000003 + I)),
                                           planOptions(Set)).Kernels)
        if (K.Why.find(Rare) != std::string::npos)
          ++Hits[Rare];
  }
  INFO("row kernels planned: " << RowKernels);
  for (const char *S : Schedules) {
    INFO("schedule '" << S << "'");
    CHECK(Hits[S] > 0);
  }
}

TEST_CASE("Random graphs with long rows compile with NVRTC under each row schedule",
          "[random][long-rows]") {
  // The first two recipes of the fixed sample that take each option set's
  // own schedule, fused and unfused for sm_90: codegen's checks and NVRTC
  // see the shared-memory and cluster rows of arbitrary graphs.
  for (int Set = 0; Set < NumSets; ++Set) {
    unsigned Compiled = 0;
    for (uint64_t I = 0; I < (Set >= 3 ? 3000u : 400u) && Compiled < 2; ++I) {
      Recipe R = longRowRecipe(7000003 + I);
      Graph G = buildGraph(R);
      if (!takesOwnSchedule(G, Set))
        continue;
      ++Compiled;
      for (bool Fuse : {true, false}) {
        CompileOptions Opts;
        Opts.Arch = "sm_90";
        Opts.Fuse = Fuse;
        Opts.RowSharedMemory = Set == 1;
        Opts.RowClusters = Set == 2;
        Opts.RowClustersAligned = true; // the default
        INFO("seed " << R.Seed << (Fuse ? " fused" : " unfused") << "\n" << printAsCpp(G));
        Executable X = testCompiler().compile(G, Opts);
        // The fused plan is the one planned above: it takes the schedule.
        if (Fuse)
          CHECK(X.plan().find(Target[Set]) != std::string::npos);
      }
    }
    INFO("schedule '" << Target[Set] << "'");
    CHECK(Compiled == 2);
  }
}

TEST_CASE("GPU: random graphs with long rows under each row schedule option",
          "[gpu][random][long-rows]") {
  bool Gpu = haveGpu();
  const uint64_t Base = rng()();
  // Per option set, fresh recipes whose fused plan takes the set's own
  // schedule (a few percent of long-row recipes do), so each run tests it.
  const unsigned Wanted = Gpu ? 8 : 1;
  for (int Set = 0; Set < NumSets; ++Set) {
    unsigned Found = 0;
    // The stage-input and aligned-split rows are rarer (about one recipe in
    // 400): a longer search.
    const uint64_t Span = Set >= 3 ? 12000 : 2000;
    // The aligned split runs over 140 rows (more than SMs): fewer, larger.
    const unsigned Want = Set >= 3 ? std::min(Wanted, 3u) : Wanted;
    for (uint64_t Seed = Base + Set * 100000; Found < Want && Seed < Base + Set * 100000 + Span;
         ++Seed) {
      Recipe R = longRowRecipe(Seed, Set == 4 ? 140 : 0);
      Graph G = buildGraph(R);
      if (!takesOwnSchedule(G, Set))
        continue;
      ++Found;
      INFO("seed " << Seed << ", schedule '" << Target[Set] << "'\n"
                   << describeBindings(R) << "\n"
                   << printAsCpp(G));
      CheckOptions CO;
      CO.RowSharedMemory = Set == 1;
      CO.RowClusters = Set == 2;
      // The split runs for aligned pointers only.
      CO.MisalignElems = Set == 4 ? 0 : static_cast<unsigned>(Seed % 2);
      // B is 1-3 rows, which launch the wide form (RowWideRows) in place of
      // a re-read or stage-input kernel: it runs one sample in three, the
      // plain kernel the others.
      CO.RowWideRows = Seed % 3 == 0;
      checkGraph(G, recipeBindings(G, R, Seed), CO);
    }
    INFO("schedule '" << Target[Set] << "', base seed " << Base);
    CHECK(Found == Want);
  }
}
