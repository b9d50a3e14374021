//===- tests/test_random_dynamic_rows.cpp - random rows of run-time length ===//
//
// The random-graph tier draws static last axes. Here the generator makes the
// last axis a dynamic dim "H" (GenOptions::DynamicRow): one compile serves
// every row length, and a row kernel over such rows takes the threads its
// launch picks (CompileOptions::RowThreadsAtLaunch: 64-512, its loops
// strided by blockDim.x) or, with the option off, a fixed 256. The CPU part
// shows that a fixed sample reaches both forms and compiles them with
// NVRTC; the GPU part runs fresh samples under both, fused vs unfused vs the
// fp64 reference, at row counts below and above the SMs, row lengths short
// and long, aligned and at an element's offset.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RandomGraph.h"

#include "compiler/Planner.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// A recipe whose last axis is the dynamic dim "H": short rows (the tier's
/// lengths) or long ones by the seed, B from 1 (at most the SMs) to 300.
Recipe dynamicRowRecipe(uint64_t Seed) {
  GenOptions GO;
  GO.DynamicRow = true;
  GO.LongRows = Seed % 3 == 0;
  static const int64_t Rows[] = {1, 3, 7, 33, 130, 300};
  GO.BValue = Rows[(Seed / 3) % 6];
  return randomRecipe(Seed, GO);
}

/// Whether G's fused plan has a row kernel over rows of run-time length
/// whose threads the launch picks (with RowThreadsAtLaunch \p AtLaunch).
bool hasDynamicRowKernel(const Graph &G, bool AtLaunch) {
  PlanOptions O;
  O.Schedule.RowThreadsAtLaunch = AtLaunch;
  for (const KernelPlan &K : planGraph(G, O).Kernels)
    if (K.Kind == KernelKind::RowReduce &&
        K.Why.find("known at run time") != std::string::npos && K.ThreadsAtLaunch == AtLaunch)
      return true;
  return false;
}

} // namespace

TEST_CASE("Random graphs over rows of run-time length reach both thread forms and compile",
          "[random][dynamic-rows]") {
  unsigned Hits[2] = {0, 0}, Compiled = 0;
  for (uint64_t I = 0; I < 200; ++I) {
    Recipe R = dynamicRowRecipe(9100007 + I);
    Graph G = buildGraph(R);
    REQUIRE(R.Dims.count("H"));
    for (bool AtLaunch : {false, true}) {
      if (!hasDynamicRowKernel(G, AtLaunch))
        continue;
      ++Hits[AtLaunch];
      // The first few of each form through codegen's checks and NVRTC.
      if (Hits[AtLaunch] > 3)
        continue;
      CompileOptions Opts;
      Opts.Arch = "sm_90";
      Opts.RowThreadsAtLaunch = AtLaunch;
      INFO("seed " << R.Seed << (AtLaunch ? ", threads at launch" : ", a fixed 256") << "\n"
                   << printAsCpp(G));
      CHECK_NOTHROW(testCompiler().compile(G, Opts));
      ++Compiled;
    }
  }
  INFO("fixed 256: " << Hits[0] << ", at launch: " << Hits[1] << " of 200 recipes");
  CHECK(Hits[0] >= 10);
  CHECK(Hits[1] == Hits[0]);
  CHECK(Compiled == 6);
}

TEST_CASE("GPU: random graphs over rows of run-time length, threads at launch and fixed",
          "[gpu][random][dynamic-rows]") {
  bool Gpu = haveGpu();
  const uint64_t Base = rng()();
  const unsigned Want = Gpu ? 24 : 1;
  unsigned Found = 0;
  for (uint64_t Seed = Base; Found < Want && Seed < Base + 2000; ++Seed) {
    Recipe R = dynamicRowRecipe(Seed);
    Graph G = buildGraph(R);
    // Alternate the two forms over the graphs that have such a kernel.
    bool AtLaunch = Found % 2 == 0;
    if (!hasDynamicRowKernel(G, AtLaunch))
      continue;
    ++Found;
    INFO("seed " << Seed << (AtLaunch ? ", threads at launch" : ", a fixed 256") << "\n"
                 << describeBindings(R) << "\n"
                 << printAsCpp(G));
    CheckOptions CO;
    CO.RowThreadsAtLaunch = AtLaunch;
    CO.MisalignElems = static_cast<unsigned>((Seed / 2) % 2);
    checkGraph(G, recipeBindings(G, R, Seed), CO);
  }
  INFO("base seed " << Base);
  CHECK(Found == Want);
}
