//===- tests/test_examples.cpp - the named example graphs -----------------===//
//
// Every example the programs and the `jitfuse` tool show must build with
// complete default bindings, evaluate on the reference interpreter, and
// compile fused and unfused with NVRTC (no GPU needed). The assertions hold
// whatever the fusion pass decides: they check bookkeeping against counts
// made here from the graph, not the quality of the plan.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "examples/ExampleGraphs.h"
#include "reference/Interpreter.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {

/// Non-leaf nodes reachable from the outputs, found by a depth-first walk
/// (independent of the compiler's own liveness sweep).
std::set<NodeId> liveComputed(const Graph &G) {
  std::set<NodeId> Seen;
  std::vector<NodeId> Stack;
  for (const GraphOutput &O : G.outputs())
    Stack.push_back(O.Id);
  std::set<NodeId> Visited;
  while (!Stack.empty()) {
    NodeId N = Stack.back();
    Stack.pop_back();
    if (!Visited.insert(N).second)
      continue;
    const Node &Nd = G.node(N);
    if (Nd.Kind != Op::Input && Nd.Kind != Op::Scalar && Nd.Kind != Op::Constant)
      Seen.insert(N);
    for (NodeId Op : Nd.Operands)
      Stack.push_back(Op);
  }
  return Seen;
}

std::set<std::string> keys(const auto &Map) {
  std::set<std::string> K;
  for (const auto &[Name, V] : Map)
    K.insert(Name);
  return K;
}

} // namespace

TEST_CASE("example registry: fourteen examples, unknown names list them", "[examples]") {
  const std::vector<std::string> &Names = examples::exampleNames();
  CHECK(Names.size() == 14);
  CHECK(std::set<std::string>(Names.begin(), Names.end()).size() == Names.size());
  for (const char *N : {"l1_chain", "sum_abs", "add_rmsnorm", "add_layernorm",
                        "softmax_mask", "swiglu", "rope", "llama_block", "dropout",
                        "group_norm", "bias_grad", "head_rmsnorm", "qk_norm_rope",
                        "layernorm_backward"})
    CHECK(std::count(Names.begin(), Names.end(), N) == 1);
  CHECK_THROWS_AS(examples::buildExample("llama"), Error);
  CHECK_THROWS_WITH(examples::buildExample("llama"),
                    Contains("'llama'") && Contains("llama_block") &&
                        Contains("l1_chain") && Contains("dropout"));
}

TEST_CASE("examples: bindings are complete and outputs named", "[examples]") {
  for (const std::string &Name : examples::exampleNames()) {
    INFO("example " << Name);
    examples::ExampleGraph E = examples::buildExample(Name);
    const Graph &G = *E.G;
    CHECK(E.Name == Name);
    CHECK_FALSE(E.Description.empty());
    CHECK_NOTHROW(G.verify());
    REQUIRE_FALSE(G.outputs().empty());

    std::set<std::string> Dyn(G.dynamicDims().begin(), G.dynamicDims().end());
    CHECK(keys(E.Dims) == Dyn);
    std::set<std::string> Scalars;
    for (NodeId S : G.scalars())
      Scalars.insert(G.node(S).Name);
    CHECK(keys(E.Scalars) == Scalars);

    std::set<std::string> OutNames;
    for (const GraphOutput &O : G.outputs()) {
      CHECK_FALSE(O.Name.empty());
      OutNames.insert(O.Name);
    }
    CHECK(OutNames.size() == G.outputs().size());

    // Fusion groups may only name nodes that become kernel work.
    std::set<NodeId> Live = liveComputed(G);
    for (const std::vector<NodeId> &Group : E.SameKernel) {
      CHECK_FALSE(Group.empty());
      for (NodeId N : Group)
        CHECK(Live.count(N) == 1);
    }
  }
}

TEST_CASE("examples: every output evaluates to finite values on the reference",
          "[examples]") {
  for (const std::string &Name : examples::exampleNames()) {
    INFO("example " << Name);
    examples::ExampleGraph E = examples::buildExample(Name);
    std::map<std::string, int64_t> Small;
    for (const auto &[D, Size] : E.Dims)
      Small[D] = 3;
    Bindings B = test::randomBindings(*E.G, Small, E.Scalars);
    std::map<std::string, HostTensor> Out = interpret(*E.G, B);
    CHECK(Out.size() == E.G->outputs().size());
    for (const auto &[OutName, T] : Out) {
      INFO("output " << OutName);
      CHECK(T.numel() > 0);
      CHECK(std::all_of(T.Data.begin(), T.Data.end(),
                        [](double V) { return std::isfinite(V); }));
    }
  }
}

TEST_CASE("examples l1_chain and sum_abs match hand-computed values", "[examples]") {
  examples::ExampleGraph L1 = examples::buildExample("l1_chain");
  Bindings B = test::randomBindings(*L1.G, {{"N", 2}}, {{"alpha", 0.5}});
  std::map<std::string, HostTensor> Out = interpret(*L1.G, B);
  const HostTensor &R = Out.at("out");
  REQUIRE(R.Data.size() == 2 * 1024);
  for (size_t I = 0; I < R.Data.size(); I += 97) {
    double Want = 0.5 * (B.Inputs["a"].Data[I] + B.Inputs["b"].Data[I]) +
                  B.Inputs["c"].Data[I];
    CHECK(R.Data[I] == Approx(Want).epsilon(1e-6));
  }

  examples::ExampleGraph SA = examples::buildExample("sum_abs");
  Bindings BS = test::randomBindings(*SA.G, {{"B", 2}}, {});
  double Want = 0;
  for (double V : BS.Inputs["x"].Data)
    Want += std::fabs(V);
  std::map<std::string, HostTensor> SOut = interpret(*SA.G, BS);
  const HostTensor &T = SOut.at("total");
  CHECK(T.Dims.empty());
  CHECK(T.Data.at(0) == Approx(Want).epsilon(1e-6));
}

TEST_CASE("example layernorm_backward: one kernel (MixOrderColumns) or two without", "[examples]") {
  examples::ExampleGraph E = examples::buildExample("layernorm_backward");
  CompileOptions O;
  O.Arch = "sm_90";
  CHECK(CompileOptions().MixOrderColumns);
  O.MixOrderColumns = false;
  Executable Two = test::testCompiler().compile(*E.G, O);
  CHECK(Two.numKernels() == 2);
  O.MixOrderColumns = true; // the default
  Executable One = test::testCompiler().compile(*E.G, O);
  REQUIRE(One.numKernels() == 1);
  // The kernel lists every node it computes, the column sums included.
  std::set<NodeId> Live = liveComputed(*E.G);
  const KernelInfo &K = One.kernels()[0];
  CHECK(std::set<NodeId>(K.Nodes.begin(), K.Nodes.end()) == Live);
  CHECK_THAT(One.source(), Contains("(column partials)"));
}

TEST_CASE("examples compile fused and unfused for sm_90", "[examples]") {
  Compiler &C = test::testCompiler();
  for (const std::string &Name : examples::exampleNames()) {
    INFO("example " << Name);
    examples::ExampleGraph E = examples::buildExample(Name);
    const Graph &G = *E.G;
    std::set<NodeId> Live = liveComputed(G);

    CompileOptions UO;
    UO.Fuse = false;
    UO.Arch = "sm_90";
    Executable XU = C.compile(G, UO);
    CHECK(XU.numKernels() == Live.size());

    CompileOptions FO;
    FO.Arch = "sm_90";
    Executable XF = C.compile(G, FO);
    CHECK(XF.numKernels() >= 1);
    CHECK(XF.numKernels() <= XU.numKernels());
    CHECK_FALSE(XF.plan().empty());

    // Whatever the grouping, each live computed node runs in some kernel
    // (in exactly one when unfused; a fusion pass may recompute cheap ones),
    // and each kernel is in the program NVRTC compiled.
    for (const Executable *X : {&XF, &XU}) {
      std::multiset<NodeId> Placed;
      for (const KernelInfo &K : X->kernels()) {
        Placed.insert(K.Nodes.begin(), K.Nodes.end());
        CHECK_THAT(X->source(), Contains(K.Name));
      }
      CHECK(std::set<NodeId>(Placed.begin(), Placed.end()) == Live);
      if (X == &XU)
        CHECK(Placed.size() == Live.size());
    }

    REQUIRE(XF.outputs().size() == G.outputs().size());
    for (size_t I = 0; I < G.outputs().size(); ++I) {
      CHECK_FALSE(XF.outputs()[I].Name.empty());
      CHECK(XF.outputs()[I].Name == G.outputs()[I].Name);
      CHECK(XU.outputs()[I].Name == G.outputs()[I].Name);
    }
  }
}
