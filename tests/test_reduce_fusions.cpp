//===- tests/test_reduce_fusions.cpp - a reduction and its neighbours ----===//
//
// The fusion options that let a reduction's kernel take what model code
// puts around it (all on by default): a full reduction storing its
// prologue's values (FullReducePrologueOutputs: AMP's unscale + found_inf,
// a kept sum of squares), a column reduction computing its [1, C] epilogue
// (ColumnReduceEpilogue: a per-channel quantization scale, a column
// log-sum-exp), a full reduction computing on its one-element result
// (FullReduceEpilogue: a masked mean cross-entropy, a gradient norm). Each:
// the plan with the option off and on, and on a GPU the fused kernels
// against the fp64 reference at odd lengths and offsets.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "compiler/Planner.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// Gradients unscaled and checked for inf/NaN: the values stored and a
/// full reduction of a flag over them.
Graph unscaleFoundInf(DType T, std::vector<Dim> Dims) {
  Graph G;
  Value Gr = cast(G.input("grad", T, Dims), DType::F32);
  Value U = Gr * G.scalar("inv_scale", DType::F32);
  Value Bad = logicalOr(ne(U, U), eq(abs(U), G.constant(INFINITY)));
  G.output("grad_out", cast(U, T));
  G.output("found_inf", reduceMax(cast(Bad, DType::F32), ReduceScope::All));
  return G;
}

/// A sum of squares whose squares are also an output, and the input's
/// cast read by a later kernel.
Graph sumOfSquaresKept(DType T) {
  Graph G;
  Value X = cast(G.input("x", T, {"B", 1000}), DType::F32);
  Value Sq = X * X;
  G.output("sq", Sq);
  G.output("ssq", sum(Sq, ReduceScope::All));
  return G;
}

} // namespace

TEST_CASE("FullReducePrologueOutputs: a full reduction stores its prologue's values",
          "[fusion][models][prologue]") {
  for (bool On : {false, true}) {
    INFO("FullReducePrologueOutputs " << On);
    Graph G = unscaleFoundInf(DType::F32, {"N"});
    PlanOptions O;
    O.Fusion.FullReducePrologueOutputs = On;
    GraphPlan Plan = planGraph(G, O);
    INFO(Plan.PlanText);
    // One kernel reading grad and writing grad_out: 8 N bytes; without it
    // the reduction reads grad_out back and computes the flag from it
    // (RecomputeStoredValues: 12 N), or, with that off too, the f32 flag
    // tensor is written and read again (16 N).
    CHECK(Plan.Kernels.size() == (On ? 1u : 2u));
    CHECK_THAT(Plan.PlanText,
               Catch::Matchers::Contains(On ? "total: 1 kernel, 8*N + 4 bytes"
                                            : "total: 2 kernels, 12*N + 4 bytes"));
    if (!On) {
      O.Fusion.RecomputeStoredValues = false;
      CHECK_THAT(planGraph(G, O).PlanText,
                 Catch::Matchers::Contains("total: 2 kernels, 16*N + 4 bytes"));
    }
    if (On) {
      const KernelPlan &K = Plan.Kernels[0];
      CHECK(K.Kind == KernelKind::FullReduce);
      CHECK(K.Outputs.size() == 2);
      CHECK(K.Name == "jf_k0_reduce_max");
    }
  }
  // Every variant compiles, stores grad_out in each path (aligned vector,
  // the flat tail, peeled whole and partial chunks) and the reduction's
  // result by its own output index.
  for (DType T : {DType::F32, DType::BF16}) {
    CompileOptions Opts;
    Opts.Arch = "sm_90";
    Opts.DeferVariants = false;
    Opts.FullReducePrologueOutputs = true;
    Executable E = testCompiler().compile(unscaleFoundInf(T, {"N"}), Opts);
    REQUIRE(E.kernels().size() == 1);
    const std::string &Src = E.kernels()[0].Source;
    INFO(Src);
    CHECK(Src.find("jf_store<") != std::string::npos);         // aligned chunks
    CHECK(Src.find("out_0[col] = ") != std::string::npos);     // the tail
    CHECK(Src.find("jf_store_whole<") != std::string::npos);   // peeled
    CHECK(Src.find("jf_store_part<") != std::string::npos);    // peeled edges
    CHECK(Src.find("out_1[0] = ") != std::string::npos);       // found_inf
  }
  // An intermediate read by a later kernel stays with the recompute rule:
  // x * x computed again by its reader (x read twice) rather than stored
  // and read back.
  {
    Graph G;
    Value X = G.input("x", DType::F32, {"N"});
    Value Sq = X * X;
    G.output("y", Sq / sum(Sq, ReduceScope::All));
    PlanOptions O;
    O.Fusion.FullReducePrologueOutputs = true;
    GraphPlan Plan = planGraph(G, O);
    INFO(Plan.PlanText);
    CHECK(Plan.Kernels.size() == 2);
    CHECK(Plan.Part.Recomputes.size() == 1);
  }
  // A column reduction takes such a prologue only with its own option
  // (ColumnReducePrologueOutputs, test_column_prologue.cpp).
  {
    Graph G;
    Value X = G.input("x", DType::F32, {"N", 64});
    Value Sq = X * X;
    G.output("sq", Sq);
    G.output("colsum", sum(Sq, llvm::ArrayRef<int64_t>{0}));
    PlanOptions O;
    O.Fusion.FullReducePrologueOutputs = true;
    O.Fusion.ColumnReducePrologueOutputs = false;
    CHECK(planGraph(G, O).Kernels.size() == 2);
    O.Fusion.ColumnReducePrologueOutputs = true;
    CHECK(planGraph(G, O).Kernels.size() == 1);
  }
}

TEST_CASE("GPU: FullReducePrologueOutputs matches the reference, any length and offset",
          "[gpu][models][prologue]") {
  for (DType T : {DType::F32, DType::BF16}) {
    for (int64_t N : {int64_t(1), int64_t(7), int64_t(1000), int64_t(4099), int64_t(1 << 20)}) {
      INFO(dtypeName(T).str() << " N = " << N);
      Graph G = unscaleFoundInf(T, {"N"});
      for (unsigned Off : {0u, 1u}) {
        CheckOptions CO;
        CO.FullReducePrologueOutputs = true;
        CO.ExpectFusedKernels = 1;
        CO.MisalignElems = Off;
        CO.SpecialValues = N > 8; // inf and NaN somewhere: found_inf = 1
        checkGraph(G, randomBindings(G, {{"N", N}}, {{"inv_scale", 1.0 / 1024}}, CO), CO);
      }
    }
    // A row domain (the full reduction over [B, 1000]), its squares kept.
    Graph G = sumOfSquaresKept(T);
    for (int64_t B : {int64_t(1), int64_t(333)}) {
      CheckOptions CO;
      CO.FullReducePrologueOutputs = true;
      CO.ExpectFusedKernels = 1;
      checkGraph(G, randomBindings(G, {{"B", B}}, {}, CO), CO);
      CO.MisalignEach = {1, 0, 0};
      checkGraph(G, randomBindings(G, {{"B", B}}, {}, CO), CO);
    }
  }
}

namespace {

/// Per-output-channel quantization: the scale (a column absmax / 127) stored
/// and the rounded values.
Graph perChannelQuant(DType T, int64_t C) {
  Graph G;
  Value W = cast(G.input("w", T, {"K", C}), DType::F32);
  Value S = reduceMax(abs(W), llvm::ArrayRef<int64_t>{0}) / G.constant(127.0);
  G.output("q", cast(rint(W / S), DType::I32));
  G.output("scale", S);
  return G;
}

/// A column logsumexp with a per-column bias read in the epilogue.
Graph columnLogSumExp(DType T, int64_t C) {
  Graph G;
  Value X = cast(G.input("x", T, {"N", C}), DType::F32);
  Value M = reduceMax(X, llvm::ArrayRef<int64_t>{0});
  Value Bias = cast(G.input("bias", T, {C}), DType::F32);
  G.output("lse", M + log(sum(exp(X - M), llvm::ArrayRef<int64_t>{0})) + Bias);
  return G;
}

} // namespace

TEST_CASE("ColumnReduceEpilogue: a column reduction's result computed on in its kernel",
          "[fusion][models][epilogue]") {
  for (bool On : {false, true}) {
    INFO("ColumnReduceEpilogue " << On);
    PlanOptions O;
    O.Fusion.ColumnReduceEpilogue = On;
    GraphPlan Quant = planGraph(perChannelQuant(DType::BF16, 384), O);
    INFO(Quant.PlanText);
    CHECK(Quant.Kernels.size() == (On ? 2u : 3u));
    CHECK(Quant.Kernels[0].Kind == KernelKind::ColumnReduce);
    GraphPlan Lse = planGraph(columnLogSumExp(DType::F32, 384), O);
    INFO(Lse.PlanText);
    CHECK(Lse.Kernels.size() == (On ? 2u : 3u));
    CHECK((Lse.Kernels.back().Kind == KernelKind::ColumnReduce) == On);
  }
  // A value of the [R, C] domain is no epilogue: x * sum(x, {0}) stays a
  // kernel of its own.
  {
    Graph G;
    Value X = G.input("x", DType::F32, {"N", 64});
    G.output("y", X * sum(X, llvm::ArrayRef<int64_t>{0}));
    PlanOptions O;
    O.Fusion.ColumnReduceEpilogue = true;
    CHECK(planGraph(G, O).Kernels.size() == 2);
  }
  // Every variant compiles; the epilogue reads the result through jf_r.
  for (DType T : {DType::F32, DType::BF16})
    for (int64_t C : {int64_t(7), int64_t(384), int64_t(4097)}) {
      CompileOptions Opts;
      Opts.Arch = "sm_90";
      Opts.DeferVariants = false;
      Opts.ColumnReduceEpilogue = true;
      Executable E = testCompiler().compile(columnLogSumExp(T, C), Opts);
      REQUIRE(E.kernels().size() == 2);
      const std::string &Src = E.kernels()[1].Source;
      INFO(Src);
      CHECK(Src.find("const float jf_r = ") != std::string::npos);
      CHECK(Src.find("logf(jf_r)") != std::string::npos);
    }
}

TEST_CASE("GPU: ColumnReduceEpilogue matches the reference, odd columns, many splits",
          "[gpu][models][epilogue]") {
  for (DType T : {DType::F32, DType::BF16})
    for (int64_t C : {int64_t(1), int64_t(7), int64_t(384), int64_t(4097)})
      // Rows 1000 already split 4097 columns seven ways; 65537 rows (171-256
      // splits) only on the narrow tiles, so the fp64 reference stays small.
      for (int64_t R : {int64_t(1), int64_t(1000), C <= 384 ? int64_t(65537) : int64_t(3001)}) {
        INFO(dtypeName(T).str() << " " << R << " x " << C);
        CheckOptions CO;
        CO.ColumnReduceEpilogue = true;
        CO.ExpectFusedKernels = 2;
        Graph Q = perChannelQuant(T, C);
        checkGraph(Q, randomBindings(Q, {{"K", R}}, {}, CO), CO);
        Graph L = columnLogSumExp(T, C);
        checkGraph(L, randomBindings(L, {{"N", R}}, {}, CO), CO);
      }
}

namespace {

/// Cross-entropy averaged over the valid rows: two full reductions and
/// their quotient (the masked_mean_ce pattern at any vocabulary).
Graph maskedMeanCe(DType T, int64_t V) {
  Graph G;
  Value X = cast(G.input("logits", T, {"B", V}), DType::F32);
  Value Tg = cast(G.input("target", T, {"B", V}), DType::F32);
  Value Valid = G.input("valid", DType::F32, {"B", 1});
  Value M = reduceMax(X);
  Value Loss = (M + log(sum(exp(X - M))) - sum(X * Tg)) * Valid;
  G.output("loss", sum(Loss, ReduceScope::All) / sum(Valid, ReduceScope::All));
  return G;
}

/// A global gradient norm stored (as clip_grad_norm_ returns it), and its
/// clipping coefficient.
Graph gradNorm(DType T) {
  Graph G;
  Value Gr = cast(G.input("grad", T, {"N"}), DType::F32);
  Value Norm = sqrt(sum(Gr * Gr, ReduceScope::All));
  G.output("norm", Norm);
  G.output("coef", min(G.scalar("max_norm", DType::F32) / (Norm + 1e-6), G.constant(1.0)));
  return G;
}

} // namespace

TEST_CASE("FullReduceEpilogue: a full reduction's one-element result computed on in its "
          "kernel",
          "[fusion][models][epilogue]") {
  for (bool On : {false, true}) {
    INFO("FullReduceEpilogue " << On);
    PlanOptions O;
    O.Fusion.FullReduceEpilogue = On;
    // The quotient joins the second sum's kernel, which reads the first's
    // one-element result; the norm and the coefficient join the sum.
    GraphPlan Ce = planGraph(maskedMeanCe(DType::BF16, 5003), O);
    INFO(Ce.PlanText);
    CHECK(Ce.Kernels.size() == (On ? 3u : 4u));
    GraphPlan Norm = planGraph(gradNorm(DType::F32), O);
    INFO(Norm.PlanText);
    CHECK(Norm.Kernels.size() == (On ? 1u : 2u));
    if (On) {
      CHECK(Norm.Kernels[0].Kind == KernelKind::FullReduce);
      CHECK(Norm.Kernels[0].Outputs.size() == 2);
    }
  }
  // Not taken: a value of the reduction's domain read after the result
  // (x * sum(x) has no single value), nor work on a row reduction.
  {
    Graph G;
    Value X = G.input("x", DType::F32, {"N"});
    G.output("y", X * sum(X, ReduceScope::All));
    PlanOptions O;
    O.Fusion.FullReduceEpilogue = true;
    CHECK(planGraph(G, O).Kernels.size() == 2);
  }
  // Every variant compiles; the last block stores the epilogue from tot.
  for (DType T : {DType::F32, DType::BF16}) {
    CompileOptions Opts;
    Opts.Arch = "sm_90";
    Opts.DeferVariants = false;
    Opts.FullReduceEpilogue = true;
    Executable E = testCompiler().compile(gradNorm(T), Opts);
    REQUIRE(E.kernels().size() == 1);
    const std::string &Src = E.kernels()[0].Source;
    INFO(Src);
    size_t Tot = Src.rfind("tot = jf_block_reduce<");
    REQUIRE(Tot != std::string::npos);
    CHECK(Src.find("sqrtf(tot)", Tot) != std::string::npos);
    CHECK(Src.find("out_0[0] = ", Tot) != std::string::npos);
    CHECK(Src.find("out_1[0] = ", Tot) != std::string::npos);
    Executable C = testCompiler().compile(maskedMeanCe(T, 4099), Opts);
    CHECK(C.kernels().size() == 3);
  }
}

TEST_CASE("GPU: FullReduceEpilogue matches the reference, any length and offset",
          "[gpu][models][epilogue]") {
  for (DType T : {DType::F32, DType::BF16}) {
    for (int64_t N : {int64_t(1), int64_t(7), int64_t(4099), int64_t(1) << 20}) {
      INFO(dtypeName(T).str() << " N = " << N);
      CheckOptions CO;
      CO.FullReduceEpilogue = true;
      CO.ExpectFusedKernels = 1;
      Graph G = gradNorm(T);
      checkGraph(G, randomBindings(G, {{"N", N}}, {{"max_norm", 1.0}}, CO), CO);
      CO.MisalignEach = {1, 0, 0};
      checkGraph(G, randomBindings(G, {{"N", N}}, {{"max_norm", 1.0}}, CO), CO);
    }
    for (int64_t B : {int64_t(1), int64_t(37), int64_t(1000)}) {
      INFO(dtypeName(T).str() << " B = " << B);
      CheckOptions CO;
      CO.FullReduceEpilogue = true;
      CO.ExpectFusedKernels = 3;
      Graph G = maskedMeanCe(T, 4099);
      Bindings Bd = randomBindings(G, {{"B", B}}, {}, CO);
      for (double &V : Bd.Inputs.at("valid").Data)
        V = V > 0 ? 1.0 : 0.0;
      checkGraph(G, Bd, CO);
    }
  }
}
