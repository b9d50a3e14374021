//===- tests/test_recompute.cpp - cheap producers computed in each consumer ===//
//
// Issue 13, "fewer launches": expressions of scalars and constants never
// become 1-element kernels, and a cheap producer read by several kernels is
// computed again inside each of them instead of being materialized. Kernel
// counts are checked on the partition; each graph is also compiled fused and
// unfused with NVRTC and, with a GPU, compared to the fp64 reference.
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"

#include "compiler/Fusion.h"
#include "compiler/Planner.h"
#include "examples/ExampleGraphs.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {

bool computes(const Cluster &C, NodeId N) {
  return std::find(C.Nodes.begin(), C.Nodes.end(), N) != C.Nodes.end();
}

bool recomputedIn(const Cluster &C, NodeId N) {
  return std::find(C.Recomputed.begin(), C.Recomputed.end(), N) != C.Recomputed.end();
}

/// No element-wise kernel iterates over a single element.
void checkNoOneElementKernel(const Graph &G, const Partition &P) {
  for (const Cluster &C : P.Clusters)
    for (NodeId N : C.Outputs) {
      if (C.Kind != KernelKind::Elementwise)
        continue;
      INFO("kernel storing %" << N);
      CHECK(staticNumel(G.node(N).Dims) != std::optional<int64_t>(1));
    }
}

} // namespace

TEST_CASE("recompute: AdamW's (1 - beta1) is no 1-element kernel", "[fusion][recompute]") {
  // Two parameters of different shapes share the optimizer's scalar
  // expressions; each update kernel computes them from the run-time scalars.
  Graph G;
  Value B1 = G.scalar("beta1", f32), B2 = G.scalar("beta2", f32);
  Value Lr = G.scalar("lr", f32), Step = G.scalar("step", f32);
  Value OneMinusB1 = 1.0 - B1;
  Value OneMinusB2 = 1.0 - B2;
  Value StepSize = Lr * sqrt(1.0 - pow(B2, Step)) / (1.0 - pow(B1, Step));
  auto Update = [&](const char *Name, Shape S) {
    Value W = G.input(std::string(Name) + "_w", f32, S);
    Value Gr = G.input(std::string(Name) + "_g", f32, S);
    Value M = G.input(std::string(Name) + "_m", f32, S);
    Value V = G.input(std::string(Name) + "_v", f32, S);
    Value M2 = B1 * M + OneMinusB1 * Gr;
    Value V2 = B2 * V + OneMinusB2 * Gr * Gr;
    G.output(std::string(Name) + "_m_out", M2);
    G.output(std::string(Name) + "_v_out", V2);
    G.output(std::string(Name) + "_w_out", W - StepSize * M2 / (sqrt(V2) + 1e-8));
  };
  Update("a", {"N", 64});
  Update("b", {128});
  Partition P = fuseGraph(G);
  CHECK(P.Clusters.size() == 2);
  checkNoOneElementKernel(G, P);
  for (const Cluster &C : P.Clusters) {
    CHECK(recomputedIn(C, OneMinusB1.id()));
    CHECK(recomputedIn(C, StepSize.id()));
  }
  CHECK(P.Boundaries.empty());

  test::CheckOptions O;
  O.ExpectFusedKernels = 2;
  O.Lo = 0.1;
  O.Hi = 2;
  test::checkGraph(G,
                   test::randomBindings(G, {{"N", 33}},
                                        {{"beta1", 0.9}, {"beta2", 0.999}, {"lr", 1e-3},
                                         {"step", 7}},
                                        O),
                   O);
}

TEST_CASE("recompute: a scalar expression of a full reduction is computed by its readers",
          "[fusion][recompute]") {
  // mean = sum(x) / 1000 read by kernels over [N] and [M, 8]: the reduction
  // is a kernel, the division is not. Without FullReduceEpilogue each
  // reader computes the division; with it (the default) the sum's last
  // block does, once, and stores the mean the readers load.
  Graph G;
  Value X = G.input("x", f32, {1000});
  Value Y = G.input("y", f32, {"M", 8});
  Value Mean = sum(X, ReduceScope::All) / 1000.0;
  G.output("centered", X - Mean);
  G.output("scaled", Y * Mean);
  for (bool Epilogue : {false, true}) {
    INFO("FullReduceEpilogue " << Epilogue);
    FusionOptions FO;
    FO.FullReduceEpilogue = Epilogue;
    Partition P = fuseGraph(G, FO);
    CHECK(P.Clusters.size() == 3);
    checkNoOneElementKernel(G, P);
    int Readers = 0, Computing = 0;
    for (const Cluster &C : P.Clusters) {
      Readers += recomputedIn(C, Mean.id());
      Computing += computes(C, Mean.id());
    }
    CHECK(Readers == (Epilogue ? 0 : 2));
    CHECK(Computing == (Epilogue ? 1 : 2));

    test::CheckOptions O;
    O.FullReduceEpilogue = Epilogue;
    O.ExpectFusedKernels = 3;
    test::checkGraph(G, test::randomBindings(G, {{"M", 5}}, {}, O), O);
  }
}

TEST_CASE("recompute: a cast shared by two kernels is computed in both", "[fusion][recompute]") {
  // RoPE on q and k: the f32 cos table (cast + reshape) broadcasts into two
  // kernels of different head counts; each computes it from the bf16 input.
  Graph G;
  Value Q = G.input("q", bf16, {"T", 8, 128}), K = G.input("k", bf16, {"T", 2, 128});
  Value Cos32 = cast(G.input("cos", bf16, {"T", 64}), f32);
  Value Cos = reshape(Cos32, {Dim("T"), 1, 64});
  Value Table = concat({Cos, Cos}); // [T,1,128]
  G.output("q_out", cast(Q, f32) * Table);
  G.output("k_out", cast(K, f32) * Table);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 2);
  CHECK(P.Boundaries.empty());
  for (const Cluster &C : P.Clusters) {
    CHECK(computes(C, Cos32.id()));
    CHECK(recomputedIn(C, Cos32.id()));
    CHECK(std::find(C.Outputs.begin(), C.Outputs.end(), Cos.id()) == C.Outputs.end());
  }
  REQUIRE(P.Recomputes.size() == 1);
  const Recomputation &R = P.Recomputes.front();
  CHECK(R.Kernels == std::vector<unsigned>{0, 1});
  // Materialized: the table kernel reads cos (64 bf16 = 128 B per token)
  // and writes the f32 table [T,1,128] (512 B), both kernels read it
  // (2 * 512 B). Recomputed: both kernels read cos (2 * 128 B).
  // 128 + 512 + 1024 - 256 = 1408 B per token.
  CHECK(R.BytesSaved.str(G.dynamicDims()) == "1408*T");

  GraphPlan Plan = planGraph(G, PlanOptions{});
  CHECK_THAT(Plan.PlanText, Contains("recomputed"));
  CHECK_THAT(Plan.PlanText, Contains("saves 1 launch and 1408*T bytes"));
  // The DOT draws the cast once in each kernel, fed by the one input node.
  NodeId CosIn = G.node(Cos32.id()).Operands[0];
  for (int K : {0, 1}) {
    std::string Copy = fmt::format("n{}_k{}", Cos32.id(), K);
    CHECK_THAT(Plan.PlanDot, Contains(Copy + " [label="));
    CHECK_THAT(Plan.PlanDot, Contains(fmt::format("n{} -> {};", CosIn, Copy)));
  }

  test::CheckOptions O;
  O.ExpectFusedKernels = 2;
  test::checkGraph(G, test::randomBindings(G, {{"T", 3}}, {}, O), O);
}

TEST_CASE("recompute: BatchNorm's centred values are computed in both readers",
          "[fusion][recompute]") {
  // x - mean is read by the variance's column reduction and by the
  // normalization. Recomputed, each also reads x and the [1, 384] mean: the
  // mean's second read (1536 B, a constant) made the saving "4608*N - 1536"
  // and a test of every term refused it, storing two [N, 384] tensors. Now
  // x is read three times and y written: 6144 N bytes.
  Graph G;
  Value X = G.input("x", f32, {"N", 384});
  Value Mu = mean(X, llvm::ArrayRef<int64_t>{0});
  Value D = X - Mu;
  Value Var = mean(D * D, llvm::ArrayRef<int64_t>{0});
  G.output("y", D * rsqrt(Var + G.scalar("eps", f32)));
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 3);
  REQUIRE(P.Recomputes.size() == 1);
  CHECK(P.Recomputes.front().BytesSaved.str(G.dynamicDims()) == "4608*N - 1536");
  for (unsigned K : {1u, 2u})
    CHECK(recomputedIn(P.Clusters[K], D.id()));
  GraphPlan Plan = planGraph(G, PlanOptions{});
  CHECK_THAT(Plan.PlanText, Contains("total: 3 kernels, 6144*N"));

  test::CheckOptions O;
  O.ExpectFusedKernels = 3;
  test::checkGraph(G, test::randomBindings(G, {{"N", 1001}}, {{"eps", 1e-5}}, O), O);
}

TEST_CASE("SizeSum::nonNegativeWhenNonEmpty: >= 0 for dims of at least 1",
          "[fusion][recompute]") {
  auto Sum = [](std::initializer_list<std::pair<std::vector<unsigned>, int64_t>> Terms) {
    SizeSum S;
    for (auto &[Dims, K] : Terms)
      S.add(SizeExpr{K, Dims});
    return S;
  };
  // One dim: a*N + b >= 0 for N >= 1 iff a + b >= 0 and a >= 0.
  CHECK(Sum({{{0}, 4608}, {{}, -1536}}).nonNegativeWhenNonEmpty());
  CHECK(Sum({{{0}, 1}, {{}, -1}}).nonNegativeWhenNonEmpty());
  CHECK_FALSE(Sum({{{0}, 1}, {{}, -2}}).nonNegativeWhenNonEmpty());
  CHECK_FALSE(Sum({{{0}, -1}, {{}, 100}}).nonNegativeWhenNonEmpty());
  // Products and powers: N*M - N - M + 1 = (N-1)(M-1) >= 0 holds, and is
  // proven; N*M - 2N at M = 1 is negative.
  CHECK(Sum({{{0, 1}, 1}, {{0}, -1}, {{1}, -1}, {{}, 1}}).nonNegativeWhenNonEmpty());
  CHECK_FALSE(Sum({{{0, 1}, 1}, {{0}, -2}}).nonNegativeWhenNonEmpty());
  CHECK(Sum({{{0, 0}, 1}, {{0}, -2}, {{}, 1}}).nonNegativeWhenNonEmpty()); // (N-1)^2
  CHECK_FALSE(Sum({{{0, 0}, 1}, {{}, -2}}).nonNegativeWhenNonEmpty());      // N^2 - 2
  // With no negative term it agrees with nonNegative (any dims, 0 included).
  CHECK(Sum({{{0}, 3}, {{}, 0}}).nonNegativeWhenNonEmpty());
  CHECK(SizeSum().nonNegativeWhenNonEmpty());
}

TEST_CASE("recompute: an expensive shared producer stays materialized", "[fusion][recompute]") {
  // Four transcendental ops per element are over the recompute budget: the
  // producer is one kernel and its boundaries say why.
  Graph G;
  Value Q = G.input("q", f32, {"T", 8, 64}), K = G.input("k", f32, {"T", 2, 64});
  Value C = G.input("c", f32, {"T", 64});
  Value Heavy = reshape(tanh(exp(sin(log(C)))), {Dim("T"), 1, 64});
  G.output("q_out", Q * Heavy);
  G.output("k_out", K * Heavy);
  Partition P = fuseGraph(G);
  CHECK(P.Clusters.size() == 3);
  CHECK(P.Recomputes.empty());
  REQUIRE(P.Boundaries.size() == 2);
  for (const FusionBoundary &B : P.Boundaries) {
    CHECK(B.Reason == BoundaryReason::MultipleConsumers);
    CHECK_THAT(B.Detail, Contains("read by 2 kernels"));
    CHECK_THAT(B.Detail, Contains("ops per element"));
  }
}

TEST_CASE("recompute: llama_block's cos/sin casts run inside the RoPE kernels",
          "[fusion][recompute][examples]") {
  examples::ExampleGraph E = examples::buildExample("llama_block");
  const Graph &G = *E.G;
  Partition P = fuseGraph(G);
  // Before: 6 kernels (two only cast cos and sin to f32). Now the norms, RoPE
  // on q, RoPE on k and SwiGLU; one launch for all of them needs horizontal
  // fusion of independent kernels (issue 13, item 3).
  CHECK(P.Clusters.size() == 4);
  checkNoOneElementKernel(G, P);
  for (const Cluster &C : P.Clusters)
    for (NodeId N : C.Outputs)
      CHECK(G.node(N).Kind != Op::Reshape);
  PlanOptions O;
  O.ExpectKernels = 4;
  O.SameKernel = E.SameKernel;
  GraphPlan Plan = planGraph(G, O);
  CHECK_THAT(Plan.PlanText, Contains("recomputed"));

  test::CheckOptions C;
  C.ExpectFusedKernels = 4;
  test::checkGraph(G, test::randomBindings(G, {{"T", 3}}, E.Scalars, C), C);
}

TEST_CASE("recompute: an FP8 scale's cast runs in both passes", "[fusion][recompute]") {
  // x32 = cast(x); amax = reduceMax(abs(x32), All); y = x32 * (448 / amax).
  // Materialized, {cast, abs} was a third kernel writing x32 and |x32|;
  // now the reduction and the scaling pass each read the bf16 x.
  Graph G;
  Value X = G.input("x", bf16, {"N"});
  Value X32 = cast(X, f32);
  Value Amax = reduceMax(abs(X32), ReduceScope::All);
  Value Y = X32 * (448.0 / Amax);
  G.output("y", Y);
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 2);
  CHECK(P.Clusters[0].Kind == KernelKind::FullReduce);
  for (const Cluster &C : P.Clusters) {
    CHECK(recomputedIn(C, X32.id()));
    CHECK(C.Inputs.front() == X.id());
  }
  REQUIRE(P.Boundaries.size() == 1);
  CHECK(P.Boundaries[0].Reason == BoundaryReason::ReductionResult);
  REQUIRE(P.Recomputes.size() == 1);
  // cast kernel: read 2N, write x32 and |x32| (8N); readers: 8N. Recomputed:
  // both read x (4N). 18N - 4N = 14N.
  CHECK(P.Recomputes[0].BytesSaved.str(G.dynamicDims()) == "14*N");

  test::CheckOptions O;
  O.ExpectFusedKernels = 2;
  test::checkGraph(G, test::randomBindings(G, {{"N", 1000}}, {}, O), O);
}

namespace {

/// RecomputeStoredValues on or off, with the column fusions that build on
/// it (SiblingColumnReductions, ColumnReducePrologueOutputs; on by
/// default) off: the pass alone.
FusionOptions stored(bool On) {
  FusionOptions F;
  F.RecomputeStoredValues = On;
  F.SiblingColumnReductions = F.ColumnReducePrologueOutputs = false;
  F.MixOrderColumns = false; // the column sums in kernels of their own
  return F;
}

/// Likewise for a run of the graph.
test::CheckOptions storedCheck() {
  test::CheckOptions O;
  O.SiblingColumnReductions = O.ColumnReducePrologueOutputs = false;
  O.MixOrderColumns = false;
  return O;
}

/// The plan's total with RecomputeStoredValues on or off (stored()).
std::string planTotal(const Graph &G, bool StoredValues) {
  return test::planTotal(G, stored(StoredValues));
}

} // namespace

TEST_CASE("RecomputeStoredValues: the bias gradient reads dz, not a stored f32 copy",
          "[fusion][recompute][stored]") {
  // Off: the element-wise kernel reads dy and z and writes dz and its f32
  // cast for the column sum, which reads the cast: 2+2+2+4 + 4 = 14 B an
  // element.
  Graph G = test::reluBackward(Dim(4096));
  CHECK(planTotal(G, false) == "total: 2 kernels, 57344*B + 16384 bytes");
  // On: the column sum casts dz itself: dy, z read, dz written, dz read
  // (8 B an element).
  CHECK(planTotal(G, true) == "total: 2 kernels, 32768*B + 16384 bytes");
  FusionOptions FO = stored(true);
  Partition P = fuseGraph(G, FO);
  REQUIRE(P.Clusters.size() == 2);
  NodeId Cast32 = G.node(G.outputs()[1].Id).Operands[0];
  CHECK_FALSE(computes(P.Clusters[0], Cast32));
  CHECK(recomputedIn(P.Clusters[1], Cast32));
  CHECK(P.Clusters[0].Outputs.size() == 1);
  REQUIRE(P.Recomputes.size() == 1);
  CHECK(P.Recomputes[0].BytesSaved.str(G.dynamicDims()) == "24576*B");

  test::CheckOptions O = storedCheck();
  O.ExpectFusedKernels = 2;
  Graph Odd = test::reluBackward(Dim(1001));
  test::checkGraph(Odd, test::randomBindings(Odd, {{"B", 37}}, {}, O), O);
}

TEST_CASE("RecomputeStoredValues: LayerNorm backward's weight gradient computes dy * xhat",
          "[fusion][recompute][stored]") {
  // Off: the dx kernel also writes f32 dy and dy * xhat (8 B an element each)
  // for the two column sums. On: each column sum reads the bf16 inputs (and
  // the row's mean and rstd) and computes its operand.
  Graph G = test::layerNormBackward(Dim(4096));
  CHECK(planTotal(G, false) == "total: 3 kernels, 90120*B + 40960 bytes");
  CHECK(planTotal(G, true) == "total: 3 kernels, 49168*B + 40960 bytes");
  FusionOptions FO = stored(true);
  Partition P = fuseGraph(G, FO);
  REQUIRE(P.Clusters.size() == 3);
  // The row kernel stores dx only.
  CHECK(P.Clusters[0].Outputs == std::vector<NodeId>{G.outputs()[0].Id});
  CHECK(P.Boundaries.empty());

  test::CheckOptions O = storedCheck();
  O.ExpectFusedKernels = 3;
  Graph Odd = test::layerNormBackward(Dim(1001));
  test::checkGraph(Odd, test::randomBindings(Odd, {{"B", 37}}, {}, O), O);
}

TEST_CASE("RecomputeStoredValues: taken only when the readers load fewer bytes",
          "[fusion][recompute][stored]") {
  // v = a*b + c, stored as f32 for a column sum (written and read: 8 B an
  // element) and squared into y. From f32 inputs the sum would load 12 B
  // instead: v stays stored. From bf16 inputs it loads 6 B: recomputed.
  for (DType T : {f32, bf16}) {
    INFO(dtypeName(T).str());
    Graph G;
    Value A = cast(G.input("a", T, {"B", 512}), f32);
    Value B = cast(G.input("b", T, {"B", 512}), f32);
    Value C = cast(G.input("c", T, {"B", 512}), f32);
    Value V = A * B + C;
    G.output("y", cast(V * V, T));
    G.output("s", sum(V, llvm::ArrayRef<int64_t>{0}));
    FusionOptions FO = stored(true);
    Partition P = fuseGraph(G, FO);
    REQUIRE(P.Clusters.size() == 2);
    if (T == f32) {
      CHECK(P.Recomputes.empty());
      CHECK(planTotal(G, true) == planTotal(G, false));
      CHECK(planTotal(G, false) == "total: 2 kernels, 12288*B + 2048 bytes");
      continue;
    }
    REQUIRE(P.Recomputes.size() == 1);
    // Stored: 4 B written + 4 B read; recomputed: a, b, c read (6 B).
    CHECK(P.Recomputes[0].BytesSaved.str(G.dynamicDims()) == "1024*B");
    CHECK(planTotal(G, false) == "total: 2 kernels, 8192*B + 2048 bytes");
    CHECK(planTotal(G, true) == "total: 2 kernels, 7168*B + 2048 bytes");
  }
}

TEST_CASE("RecomputeStoredValues: a value a third kernel loads is not copied",
          "[fusion][recompute][stored]") {
  // Random graphs' seed 1571153187, shrunk: b = x0 >= 0 is read by a full
  // sum and by v = fma(x1, x0, b), which the element-wise kernel stores for
  // y1 = v - sum(b). Copying v's expression (b included) into y1's kernel
  // left b computed twice yet still stored for the sum: an internal error.
  Graph G;
  Value X0 = G.input("x0", f32, {int64_t(16)});
  Value X1 = G.input("x1", f16, {int64_t(16)});
  Value B = binary(Op::Ge, X0, G.constant(0.0, f32));
  Value V = fma(X1, X0, B);
  G.output("y0", tanh(V));
  G.output("y1", V - sum(B, ReduceScope::All));
  FusionOptions FO = stored(true);
  Partition P;
  REQUIRE_NOTHROW(P = fuseGraph(G, FO));
  REQUIRE_NOTHROW(verifyPartition(G, P));
  CHECK(P.Clusters.size() == fuseGraph(G).Clusters.size());
  CHECK(planTotal(G, true) == planTotal(G, false));
}
