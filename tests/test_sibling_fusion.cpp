//===- tests/test_sibling_fusion.cpp - kernels over one domain share a launch ===//
//
// Issue 13, sibling fusion: reductions (and element-wise work) over the same
// iteration domain that load a common tensor run in one kernel with several
// outputs. Counts are checked on the partition; each graph is also compiled
// fused and unfused with NVRTC and, with a GPU, compared to the reference.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "compiler/Fusion.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>

using namespace jitfuse;

TEST_CASE("sibling fusion: mean and max of a row are one row kernel", "[fusion][sibling]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 1000});
  Value M = mean(X), Mx = reduceMax(X);
  G.output("mean", M);
  G.output("max", Mx);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 1);
  CHECK(P.Clusters[0].Kind == KernelKind::RowReduce);
  CHECK(P.Clusters[0].Inputs == std::vector<NodeId>{X.id()});
  CHECK(P.Clusters[0].Outputs.size() == 2);

  test::CheckOptions O;
  O.ExpectFusedKernels = 1;
  test::checkGraph(G, test::randomBindings(G, {{"B", 7}}, {}, O), O);
}

TEST_CASE("sibling fusion: an element-wise reader joins a row kernel of its input",
          "[fusion][sibling]") {
  // y = x * 2 over the row domain and the row sums of x: one load of x.
  Graph G;
  Value X = G.input("x", bf16, {"B", 256});
  G.output("y", X * 2.0);
  G.output("s", sum(cast(X, f32)));
  CHECK(fuseGraph(G).Clusters.size() == 1);

  test::CheckOptions O;
  O.ExpectFusedKernels = 1;
  test::checkGraph(G, test::randomBindings(G, {{"B", 5}}, {}, O), O);
}

TEST_CASE("sibling fusion: no merge across a dependency or another domain",
          "[fusion][sibling]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 64});
  Value Y = G.input("y", f32, {"B", 32});
  Value Z = G.input("z", f32, {"B", 64});
  G.output("mx", reduceMax(X));          // row [B,64]
  G.output("my", reduceMax(Y));          // another row: stays apart
  G.output("full", sum(X, ReduceScope::All)); // full reductions stay alone
  G.output("other", reduceMax(Z));       // same row, nothing shared: apart
  CHECK(fuseGraph(G).Clusters.size() == 4);
}
