//===- tests/test_fusion.cpp - kernel counts, boundaries, contract --------===//
//
// Like tinygrad's check_schedule: each pattern's exact kernel count and which
// nodes share a kernel, checked on the partition (no GPU, no NVRTC needed).
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "driver/Compiler.h"
#include "compiler/Fusion.h"
#include "compiler/Plan.h"
#include "compiler/Schedule.h"
#include "ir/NN.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {
unsigned kernelsOf(const Graph &G) { return fuseGraph(G).Clusters.size(); }

bool shareKernel(const Partition &P, std::initializer_list<Value> Vs) {
  int C = P.ClusterOf[Vs.begin()->id()];
  for (Value V : Vs)
    if (P.ClusterOf[V.id()] != C || C < 0)
      return false;
  return true;
}

const FusionBoundary *boundary(const Partition &P, NodeId From, NodeId To) {
  for (const FusionBoundary &B : P.Boundaries)
    if (B.Producer == From && B.Consumer == To)
      return &B;
  return nullptr;
}
} // namespace

TEST_CASE("Level 1: alpha*(a+b)+c is one kernel", "[fusion]") {
  Graph G;
  Value A = G.input("a", f32, {"N"}), B = G.input("b", f32, {"N"}),
        C = G.input("c", f32, {"N"});
  Value Alpha = G.scalar("alpha", f32);
  Value Out = Alpha * (A + B) + C;
  G.output("out", Out);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 1);
  CHECK(P.Clusters[0].Kind == KernelKind::Elementwise);
  CHECK(P.Clusters[0].Inputs.size() == 3);
  CHECK(P.Clusters[0].Outputs == std::vector<NodeId>{Out.id()});
  CHECK(partitionUnfused(G).Clusters.size() == 3);
}

TEST_CASE("Level 1: bias broadcast, casts, several outputs", "[fusion]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", 64});
  Value Bias = G.input("bias", f32, {64});
  Value Y = cast(X, f32) + Bias;
  G.output("y", Y);
  Value Z = relu(Y) * 2.0;
  G.output("z", cast(Z, bf16));
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 1);
  // y is stored once and also used in registers for z.
  CHECK(P.Clusters[0].Outputs.size() == 2);
}

TEST_CASE("Level 2: residual add + RMSNorm writes both in one kernel", "[fusion]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", 4096});
  Value Res = G.input("residual", bf16, {"B", 4096});
  Value W = G.input("weight", bf16, {4096});
  Value Eps = G.scalar("eps", f32);
  Value R = X + Res;
  Value Y = nn::rmsNorm(R, W, Eps);
  G.output("residual_out", R);
  G.output("y", Y);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 1);
  CHECK(P.Clusters[0].Kind == KernelKind::RowReduce);
  CHECK(shareKernel(P, {R, Y}));
  // 4 row tensors of 4096 bf16 (x, residual in; r, y out) = 32768 B per row,
  // plus the weight once.
  std::vector<KernelPlan> Plans{scheduleCluster(G, P.Clusters[0], 0)};
  std::string Plan = explainPlan(G, P, Plans, {clusterTraffic(G, P.Clusters[0])}, true);
  CHECK_THAT(Plan, Contains("total: 1 kernel, 32768*B + 8192 bytes"));
  CHECK_THAT(Plan, Contains("unfused: 10 kernels"));
}

TEST_CASE("Level 2: add + LayerNorm, softmax(x + mask), softmax + dropout", "[fusion]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", 1024});
  Value W = G.input("w", bf16, {1024}), Bi = G.input("b", bf16, {1024});
  Value Ln = nn::layerNorm(X + X, W, Bi, G.constant(1e-5));
  G.output("ln", Ln);
  Value S = G.input("s", f32, {"B", 2048}), Mask = G.input("mask", f32, {2048});
  Value Sm = nn::softmax(S + Mask);
  G.output("sm", Sm);
  Value Seed = G.scalar("seed", i64);
  Value Dr = nn::dropout(nn::softmax(S), 0.1, Seed);
  G.output("drop", Dr);
  Partition P = fuseGraph(G);
  // Both softmaxes read s over one row domain: siblings, one kernel.
  CHECK(P.Clusters.size() == 2);
  for (const Cluster &C : P.Clusters)
    CHECK(C.Kind == KernelKind::RowReduce);
  CHECK(P.ClusterOf[Ln.id()] != P.ClusterOf[Sm.id()]);
  CHECK(shareKernel(P, {Sm, Dr}));
}

TEST_CASE("Level 2: cast/dequant-scale + RMSNorm", "[fusion]") {
  Graph G;
  Value Q = G.input("q", i32, {"B", 512});
  Value Scale = G.input("scale", f32, {"B", 1});
  Value X = cast(Q, f32) * Scale;
  G.output("y", nn::rmsNorm(X, G.input("w", f32, {512}), G.constant(1e-6)));
  CHECK(kernelsOf(G) == 1);
}

TEST_CASE("full reduction takes its prologue, the scalar's consumer is a new kernel", "[fusion]") {
  Graph G;
  Value X = G.input("x", f32, {"N"});
  Value S = sum(abs(X), ReduceScope::All);
  G.output("s", S);
  Value Y = X / S;
  G.output("normalized", Y);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 2);
  CHECK(P.Clusters[0].Kind == KernelKind::FullReduce);
  const FusionBoundary *B = boundary(P, S.id(), Y.id());
  REQUIRE(B);
  CHECK(B->Reason == BoundaryReason::ReductionResult);
}

TEST_CASE("a row result used over another row domain ends the cluster", "[fusion]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 128});
  Value M = reduceMax(X);           // [B,1]
  Value Z = G.input("z", f32, {"B", 64});
  Value Y = Z - M;                  // different row length
  G.output("y", Y);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 2);
  const FusionBoundary *B = boundary(P, M.id(), Y.id());
  REQUIRE(B);
  CHECK(B->Reason == BoundaryReason::RowDomainMismatch);
  CHECK_THAT(std::string(describeReason(B->Reason)), Contains("different row domain"));
}

TEST_CASE("swiglu, rope and the element-wise work of a decoder block", "[fusion]") {
  Graph G;
  Value Gu = G.input("gate_up", bf16, {"T", 2 * 1376});
  G.output("act", nn::swiglu(Gu));
  Value Q = G.input("q", bf16, {"T", 8, 128});
  Value Cos = G.input("cos", bf16, {"T", 64}), Sin = G.input("sin", bf16, {"T", 64});
  G.output("q_rot", nn::rope(Q, Cos, Sin));
  CHECK(kernelsOf(G) == 2);
}

TEST_CASE("a producer read by two kernels and too costly to recompute is explained as shared",
          "[fusion]") {
  // RoPE on q and k with a table computed by library calls (over the
  // recompute budget; a plain cast is recomputed, see test_recompute.cpp):
  // it broadcasts into two kernels of different head counts, stays a kernel
  // of its own, and the plan must say why: it is shared, not merely of
  // another shape.
  Graph G;
  Value Q = G.input("q", bf16, {"T", 8, 128}), K = G.input("k", bf16, {"T", 2, 128});
  Value Cos = reshape(exp(sin(cast(G.input("cos", bf16, {"T", 64}), f32))), {Dim("T"), 1, 64});
  Value Table = concat({Cos, Cos}); // [T,1,128]
  Value QCos = cast(Q, f32) * Table;
  Value KCos = cast(K, f32) * Table;
  G.output("q_out", QCos);
  G.output("k_out", KCos);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 3);
  unsigned Shared = 0;
  for (const FusionBoundary &B : P.Boundaries) {
    CHECK(P.ClusterOf[B.Producer] == P.ClusterOf[Cos.id()]);
    CHECK(B.Reason == BoundaryReason::MultipleConsumers);
    CHECK_THAT(B.Detail, Contains("read by 2 kernels"));
    ++Shared;
  }
  CHECK(Shared == 2);
  // With one consumer the same producer is recomputed inside it.
  Graph One;
  Value Q1 = One.input("q", bf16, {"T", 8, 128});
  Value Cos1 = reshape(cast(One.input("cos", bf16, {"T", 64}), f32), {Dim("T"), 1, 64});
  One.output("q_out", cast(Q1, f32) * concat({Cos1, Cos1}));
  CHECK(kernelsOf(One) == 1);
}

TEST_CASE("cycles are never created between kernels", "[fusion]") {
  // a -> row kernel (max) -> b; b and a both feed c; fusing c's producers
  // naively would merge across the reduction's other consumer.
  Graph G;
  Value X = G.input("x", f32, {"B", 32});
  Value A = exp(X);
  Value S = sum(A, ReduceScope::All); // full reduction of a
  G.output("s", S);
  Value C = A * S;                    // needs both a and s
  G.output("c", C);
  Partition P = fuseGraph(G);
  verifyPartition(G, P); // throws on a cycle
  // a may be computed by both kernels (recomputed); the scalar still starts
  // a new kernel.
  CHECK(P.ClusterOf[S.id()] != P.ClusterOf[C.id()]);
}

TEST_CASE("the fusion contract fails compile with the plan", "[fusion][contract]") {
  Graph G;
  Value X = G.input("x", f32, {"N"});
  Value S = sum(X, ReduceScope::All);
  G.output("y", X * S);
  Compiler C(rt::CacheConfig{"/nonexistent-unused", false, 0});
  CompileOptions O;
  O.Arch = "sm_90";
  O.ExpectKernels = 1;
  REQUIRE_THROWS_AS(C.compile(G, O), Error);
  try {
    C.compile(G, O);
  } catch (const Error &E) {
    std::string M = E.what();
    CHECK_THAT(M, Contains("fusion contract broken: expected 1 kernel, the plan has 2"));
    CHECK_THAT(M, Contains("a full reduction's result starts a new kernel"));
  }
  O.ExpectKernels.reset();
  O.SameKernel = {{S.id(), (X * S).id()}};
  CHECK_THROWS_WITH(C.compile(G, O), Contains("were required to share a kernel"));
}

TEST_CASE("fusion and codegen are deterministic", "[fusion]") {
  auto Build = [](Graph &G) {
    Value X = G.input("x", bf16, {"B", 4096});
    Value W = G.input("w", bf16, {4096});
    G.output("y", nn::rmsNorm(X + X, W, G.scalar("eps", f32)));
    G.output("s", nn::softmax(X));
  };
  Graph G1, G2;
  Build(G1);
  Build(G2);
  auto Emit = [](const Graph &G) {
    Partition P = fuseGraph(G);
    std::vector<KernelPlan> Plans;
    for (unsigned I = 0; I < P.Clusters.size(); ++I)
      Plans.push_back(scheduleCluster(G, P.Clusters[I], I));
    return codegen::emitProgram(G, Plans);
  };
  CHECK(Emit(G1) == Emit(G2));
}

// Golden sources: set JITFUSE_UPDATE_GOLDEN=1 to rewrite tests/golden/*.cu
// after an intended codegen change, then review the diff.
TEST_CASE("generated source matches the golden files", "[fusion][golden]") {
  struct Case {
    const char *Name;
    std::function<void(Graph &)> Build;
  };
  std::vector<Case> Cases = {
      {"l1_chain", [](Graph &G) {
         Value A = G.input("a", f32, {"N"}), B = G.input("b", f32, {"N"});
         G.output("out", G.scalar("alpha", f32) * (A + B) + G.input("c", f32, {"N"}));
       }},
      {"add_rmsnorm", [](Graph &G) {
         Value R = G.input("x", bf16, {"B", 4096}) + G.input("residual", bf16, {"B", 4096});
         G.output("residual_out", R);
         G.output("y", nn::rmsNorm(R, G.input("weight", bf16, {4096}), G.scalar("eps", f32)));
       }},
      {"sum_abs", [](Graph &G) {
         G.output("s", sum(abs(G.input("x", f32, {"N"})), ReduceScope::All));
       }},
  };
  bool Update = std::getenv("JITFUSE_UPDATE_GOLDEN") != nullptr;
  for (const Case &C : Cases) {
    Graph G;
    C.Build(G);
    Partition P = fuseGraph(G);
    std::vector<KernelPlan> Plans;
    for (unsigned I = 0; I < P.Clusters.size(); ++I)
      Plans.push_back(scheduleCluster(G, P.Clusters[I], I));
    std::string Src;
    for (const KernelPlan &K : Plans)
      Src += codegen::emitKernel(G, K).source();
    std::string Path = std::string(JITFUSE_SOURCE_DIR) + "/tests/golden/" + C.Name + ".cu";
    if (Update) {
      std::ofstream(Path) << Src;
      continue;
    }
    std::ifstream F(Path);
    REQUIRE(F.good());
    std::stringstream Want;
    Want << F.rdbuf();
    INFO("golden " << Path << " differs; JITFUSE_UPDATE_GOLDEN=1 rewrites it");
    CHECK(Src == Want.str());
  }
}
