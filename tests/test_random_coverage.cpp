//===- tests/test_random_coverage.cpp - what the GPU random graphs reach ---===//
//
// Issue 12 asks that random graphs draw shapes that hit each schedule. The
// GPU tier's random graphs (test_random_graphs.cpp) are batches of 20
// recipes merged into one graph, B drawn from {1, 3, 7, 33, 130, 257},
// column reductions with siblings now and then (GenOptions::SiblingColumns); this
// plans such batches as compile() would (Compiler::plan, no GPU) and counts
// the schedules their kernels get. Each schedule below must be reached by
// some batch of a fixed set of seeds: a change to the generator or to a
// rule that leaves one of them to the dedicated [gpu] cases alone fails
// here and names it. The counts are printed (the share of kernels is what
// a GPU run of 500 fresh graphs can be expected to check).
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RandomGraph.h"

#include "driver/Compiler.h"
#include "ir/NN.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <string>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// The schedule features of one kernel plan, by name.
std::vector<std::string> features(const KernelPlan &K) {
  std::vector<std::string> F;
  auto Add = [&](bool On, const char *Name) {
    if (On)
      F.push_back(Name);
  };
  Add(K.Kind == KernelKind::Elementwise && K.Flat, "element-wise, flat");
  Add(K.Kind == KernelKind::Elementwise && !K.Flat && K.TransposeNode < 0,
      "element-wise, by rows");
  Add(K.TransposeNode >= 0, "element-wise, transpose tiles");
  Add(K.Kind == KernelKind::RowReduce, "row reduction");
  Add(K.Kind == KernelKind::ColumnReduce, "column reduction");
  Add(K.Kind == KernelKind::ColumnReduce && K.ColumnReductions > 1,
      "column reduction, sibling reductions");
  Add(K.Kind == KernelKind::FullReduce, "full reduction");
  Add(K.Peel, "peeled variant");
  Add(K.OutputLedVariant, "output-led peeled copy");
  Add(K.CacheRow, "row kept in registers");
  Add(K.CacheRow && !K.RowCacheInputs.empty(), "row kept: stage inputs only");
  Add(!K.CachedValues.empty(), "row kept: computed values");
  Add(K.Kind == KernelKind::RowReduce && !K.CacheRow && K.RowSharedInputs.empty(),
      "row read once or re-read");
  Add(!K.RowReadBack.empty(), "row: outputs read back");
  Add(!K.RowPairs.empty(), "row: paired reductions (online softmax, Welford)");
  Add(K.FewRows != nullptr, "few-rows form");
  Add(K.WideRows != nullptr, "wide-rows form");
  Add(K.ConcatPiece > 0, "concat pieces");
  Add(K.FlatTailThreads, "flat tail threads");
  return F;
}

} // namespace

TEST_CASE("Random graphs: the GPU tier's batches reach each schedule", "[random]") {
  // 50 batches of the GPU tier's kind, fixed seeds (twice the tier's 25).
  const unsigned Batches = 50;
  const uint64_t Seed0 = 20261204;
  std::map<std::string, unsigned> Hits;
  unsigned Kernels = 0;
  for (unsigned Batch = 0; Batch < Batches; ++Batch) {
    Graph G = buildGraph(mergeRecipes(gpuBatchRecipes(Seed0 + Batch * GpuBatchSize, Batch)));
    CompileOptions Opts;
    Opts.Arch = "sm_90";
    GraphPlan P = Compiler::plan(G, Opts);
    for (const KernelPlan &K : P.Kernels) {
      ++Kernels;
      for (const std::string &F : features(K))
        ++Hits[F];
    }
  }
  std::string Table;
  for (const auto &[Name, N] : Hits)
    Table += fmt::format("  {:<50} {:>5} ({:.1f}%)\n", Name, N, 100.0 * N / Kernels);
  std::fprintf(stderr, "random graph coverage: %u kernels in %u batches\n%s", Kernels, Batches,
               Table.c_str());
  INFO(Table);
  // Not reached by these batches (rows of at most 1100 elements), and
  // covered elsewhere: the few-rows forms, rows kept without their
  // epilogue inputs and paired reductions (online softmax, Welford) of rows
  // re-read per stage (the long-row random graphs, test_random_long_rows.cpp,
  // and their own [gpu] cases).
  for (const char *Name :
       {"element-wise, flat", "element-wise, by rows", "element-wise, transpose tiles",
        "row reduction", "column reduction", "column reduction, sibling reductions",
        "full reduction", "peeled variant",
        "output-led peeled copy", "row kept in registers", "row kept: computed values",
        "row read once or re-read", "row: outputs read back", "wide-rows form",
        "concat pieces", "flat tail threads"}) {
    INFO(Name);
    CHECK(Hits[Name] > 0);
  }
}

TEST_CASE("Compiler::plan gives compile()'s plan and generates no code", "[random][driver]") {
  // The same plan text and kernels as compile() for the same options, on
  // merged random graphs and on an option that changes the schedule; and
  // compile()'s errors for what it rejects at planning.
  for (uint64_t Seed : {uint64_t(7), uint64_t(1234)}) {
    std::vector<Recipe> Rs;
    GenOptions GO;
    GO.BValue = 33; // merged recipes share their dims
    for (unsigned I = 0; I < 5; ++I)
      Rs.push_back(randomRecipe(Seed * 10 + I, GO));
    Graph G = buildGraph(mergeRecipes(Rs));
    for (bool Fuse : {true, false}) {
      CompileOptions Opts;
      Opts.Arch = "sm_90";
      Opts.Fuse = Fuse;
      GraphPlan P = Compiler::plan(G, Opts);
      Executable X = testCompiler().compile(G, Opts);
      CHECK(P.PlanText == X.plan());
      CHECK(P.Kernels.size() == X.numKernels());
    }
  }
  Graph N;
  N.output("y", nn::softmax(N.input("x", DType::F32, {"B", 4096})));
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.ExpectKernels = 2;
  CHECK_THROWS_AS(Compiler::plan(N, Opts), Error);
  Opts.ExpectKernels.reset();
  Opts.Arch = "compute_90";
  CHECK_THROWS_AS(Compiler::plan(N, Opts), Error);
}
