//===- fuzz/fuzz_graph_builder.cpp - libFuzzer target: graphs from bytes --===//
//
// Bytes become a recipe (tests/RandomGraph.h), possibly nonsense: bad dtypes,
// op codes, operand indices, negative or 2^63 dims. Building it and running
// verify, both partitioners, the scheduler (under default options, under
// the driver's for sm_90, and under a set of its opt-in schedules drawn from
// the bytes), codegen, the printers and (for small shapes) the reference
// interpreter may only ever throw jitfuse::Error; anything else
// escapes and libFuzzer reports it, as does a failed assertion (the fuzz
// build keeps them: scripts/run-fuzz).
//
//===----------------------------------------------------------------------===//
#include "RandomGraph.h"

#include "codegen/Codegen.h"
#include "compiler/Fusion.h"
#include "compiler/Schedule.h"
#include "driver/Compiler.h"
#include "reference/Interpreter.h"
#include "ir/Printer.h"
#include "support/Error.h"

#include <random>

using namespace jitfuse;

static bool smallEnough(const Graph &G, const std::map<std::string, int64_t> &Dims) {
  for (const Node &N : G.nodes()) {
    int64_t Numel = 1;
    for (const Dim &D : N.Dims) {
      int64_t S = D.isDynamic() ? (Dims.count(D.Name) ? Dims.at(D.Name) : 0) : D.Size;
      if (S < 0 || S > 4096)
        return false;
      Numel *= S;
      if (Numel > 4096)
        return false;
    }
  }
  return true;
}

/// The opt-in schedules (experiments and comparisons) a run also plans
/// under, one bit of \p Mask each: an experiment goes on by default only
/// after the fuzzer has planned and generated code under it. Rules on by
/// default (RowClustersStageInputs, RowClustersValues) are drawn too, so
/// their comparison settings stay fuzzed.
static CompileOptions optInSchedules(uint32_t Mask) {
  CompileOptions CO;
  CO.Arch = "sm_90";
  CO.RowClusters = Mask & 1;
  CO.RowClustersAlignedOverWide = Mask & 2;
  CO.RowClustersStageInputs = Mask & 4;
  CO.RowClustersValues = Mask & 8;
  CO.RowSharedMemory = Mask & 16;
  CO.RowClusterPairs = Mask & 32;
  CO.AlignedRowCopy = Mask & 64;
  CO.FastMath = Mask & 128;
  if (Mask & 256) // rows of run-time length at a fixed 64 threads
    CO.RowDynamicThreads = 64;
  CO.RowThreadsAtLaunch = Mask & 512; // rows of run-time length: threads at launch
  return CO;
}

/// FNV-1a of the input: any mutation may flip the opt-in set.
static uint32_t hashBytes(const uint8_t *Data, size_t Size) {
  uint32_t H = 2166136261u;
  for (size_t I = 0; I < Size; ++I)
    H = (H ^ Data[I]) * 16777619u;
  return H;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  test::Recipe R = test::recipeFromBytes(llvm::ArrayRef<uint8_t>(Data, Size));
  try {
    Graph G = test::buildGraph(R);
    G.verify();
    (void)printGraph(G);
    (void)test::printAsCpp(G);
    if (G.outputs().empty())
      return 0;
    for (bool Fuse : {true, false}) {
      Partition P = Fuse ? fuseGraph(G) : partitionUnfused(G);
      verifyPartition(G, P);
      std::vector<KernelPlan> Plans;
      for (unsigned I = 0; I < P.Clusters.size(); ++I)
        Plans.push_back(scheduleCluster(G, P.Clusters[I], I));
      (void)codegen::emitProgram(G, Plans);
      // And as Compiler::compile plans it: the driver's rules for sm_90
      // (row clusters, the forms for few rows and wide rows, the split's
      // variants), which default ScheduleOptions leave off.
      CompileOptions CO;
      CO.Fuse = Fuse;
      CO.Arch = "sm_90";
      GraphPlan GP = Compiler::plan(G, CO);
      (void)codegen::emitProgram(GP.planned(G), GP.Kernels);
      CompileOptions Opt = optInSchedules(hashBytes(Data, Size));
      Opt.Fuse = Fuse;
      GraphPlan GO = Compiler::plan(G, Opt);
      (void)codegen::emitProgram(GO.planned(G), GO.Kernels);
    }
    if (!smallEnough(G, R.Dims))
      return 0;
    Bindings B;
    for (const std::string &D : G.dynamicDims())
      B.Dims[D] = R.Dims.count(D) ? R.Dims.at(D) : 1;
    for (NodeId N : G.scalars())
      B.Scalars[G.node(N).Name] = 0.5;
    std::mt19937_64 Rng(Size);
    for (NodeId N : G.inputs())
      B.Inputs[G.node(N).Name] =
          randomTensor(G.node(N).Type, resolveShape(G.node(N).Dims, B.Dims), Rng);
    (void)interpret(G, B);
  } catch (const Error &) {
  }
  return 0;
}
