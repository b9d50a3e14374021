//===- tests/test_column_prologue.cpp - a column reduction's stored prologue ===//
//
// FusionOptions::ColumnReducePrologueOutputs (on by default since
// session 29): a column reduction's kernel stores graph outputs of its [R, C]
// domain computed in its prologue (codegen/ColumnReduce.cpp), as
// FullReducePrologueOutputs does for a full reduction. ReLU backward with
// the bias gradient: dz and its column sum in one kernel.
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"

#include "codegen/Codegen.h"
#include "compiler/Fusion.h"
#include "compiler/Planner.h"
#include "compiler/Schedule.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

std::string planTotal(const Graph &G, bool On) {
  FusionOptions F;
  F.ColumnReducePrologueOutputs = On;
  return test::planTotal(G, F);
}

} // namespace

TEST_CASE("ColumnReducePrologueOutputs: ReLU backward and its bias gradient are one kernel",
          "[column-reduce][prologue]") {
  Graph G = reluBackward(Dim(4096));
  // Off (RecomputeStoredValues on, the default): dy and z read, dz written,
  // dz read again by the column sum: 8 B an element.
  CHECK(planTotal(G, false) == "total: 2 kernels, 32768*B + 16384 bytes");
  // dy and z read, dz written: 6 B an element.
  CHECK(planTotal(G, true) == "total: 1 kernel, 24576*B + 16384 bytes");
  FusionOptions FO;
  FO.ColumnReducePrologueOutputs = true;
  Partition P = fuseGraph(G, FO);
  REQUIRE(P.Clusters.size() == 1);
  const Cluster &C = P.Clusters[0];
  CHECK(C.Kind == KernelKind::ColumnReduce);
  REQUIRE(C.Outputs.size() == 2);
  KernelPlan K = scheduleCluster(G, C, 0);
  codegen::EmittedKernel E = codegen::emitKernel(G, K);
  REQUIRE(E.Variants.size() == 2);
  // dz stored where each element is loaded: the thread's 8 columns as one
  // vector in the aligned variant, the one column in the scalar variant;
  // the sum at column oc.
  size_t Dz = C.Outputs[0] == G.outputs()[0].Id ? 0 : 1;
  CHECK_THAT(E.Variants[0].Text, Contains(fmt::format("jf_sv{}.V[7] = ", Dz)));
  CHECK_THAT(E.Variants[0].Text,
             Contains(fmt::format("jf_store<jf_bf16, 8>(out_{0} + c0 * ncols + col, jf_sv{0});",
                                  Dz)));
  CHECK_THAT(E.Variants[1].Text, Contains(fmt::format("out_{}[c0 * ncols + col] = ", Dz)));
  CHECK_THAT(E.Variants[1].Text, Contains(fmt::format("out_{}[oc] = ", 1 - Dz)));
}

TEST_CASE("ColumnReducePrologueOutputs: what stays apart", "[column-reduce][prologue]") {
  FusionOptions FO;
  FO.ColumnReducePrologueOutputs = true;
  // An output of another shape than the domain ([R] row sums' operand is
  // [R, C], the output a [C]-broadcast product is [R, C] but strided).
  Graph G;
  Value X = G.input("x", f32, {"R", 64});
  Value Y = X * 2.0;
  G.output("y", Y, {Dim(1), Dim("R")}); // column-major: strided
  G.output("s", sum(Y, {0}));
  CHECK(fuseGraph(G, FO).Clusters.size() == 2);
  // An intermediate (no graph output) another kernel reads: the option
  // changes nothing, the column kernel stores only its result.
  Graph H;
  Value A = H.input("a", f32, {"R", 64});
  Value T = exp(A);
  Value S = sum(T, {0});
  H.output("s", S);
  H.output("m", reduceMax(T, {1}));
  Partition P = fuseGraph(H, FO);
  CHECK(P.Clusters.size() == fuseGraph(H).Clusters.size());
  for (const Cluster &C : P.Clusters)
    if (C.Kind == KernelKind::ColumnReduce)
      CHECK(C.Outputs == std::vector<NodeId>{S.id()});
}

TEST_CASE("ColumnReducePrologueOutputs: compiles with NVRTC for odd and dynamic rows",
          "[column-reduce][prologue]") {
  for (Dim H : {Dim(7), Dim(1001), Dim(4096), Dim("H")}) {
    INFO("H=" << H.str());
    Graph G = reluBackward(H);
    CompileOptions O;
    O.Arch = "sm_90";
    O.ColumnReducePrologueOutputs = true;
    Executable X = testCompiler().compile(G, O);
    CHECK(X.numKernels() == 1);
  }
}

TEST_CASE("GPU: a column reduction's stored prologue matches the reference",
          "[gpu][column-reduce][prologue]") {
  if (!haveGpu())
    return;
  for (int64_t H : {7, 1001, 4096}) {
    Graph G = reluBackward(Dim(H));
    std::vector<int64_t> Bs = {1, 37, 1000};
    if (H < 100)
      Bs.push_back(65537); // the most splits over one tile
    for (int64_t B : Bs) {
      INFO("H=" << H << " B=" << B);
      CheckOptions O;
      O.ColumnReducePrologueOutputs = true;
      O.ExpectFusedKernels = 1;
      checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
      O.MisalignEach = {1, 3};
      checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
    }
  }
}
