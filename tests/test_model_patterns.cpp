//===- tests/test_model_patterns.cpp - kernel counts of real model code ---===//
//
// Patterns as model code writes them (losses, optimizers, quantization,
// norm variants, attention prep), each with the kernel count its fused plan
// must reach: one kernel per row domain or element-wise chain, plus one per
// full reduction whose result is read again. A count above it is a fusion
// regression a benchmark of the seed patterns would not show. The [gpu]
// case runs each fused and unfused against the fp64 reference.
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"

#include "compiler/Planner.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <string>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

struct ModelPattern {
  const char *Name;
  /// Kernels of the fused plan, pinned: the fewest the pattern's reductions
  /// allow, except for the gaps that Fewest names.
  unsigned Kernels;
  std::function<Graph()> Build;
  /// Inputs whose values must be nonnegative (a second moment, a
  /// probability): bound to |random|.
  std::vector<std::string> Nonnegative = {};
  std::map<std::string, double> Scalars = {};
  /// The fewest kernels possible where today's plan has more (0: Kernels
  /// is the fewest): sibling full reductions are not merged
  /// (docs/ARCHITECTURE.md, "Fusion gaps of model patterns").
  unsigned Fewest = 0;
};

constexpr int64_t Vocab = 5003; // odd: the peeled variant
constexpr int64_t Hidden = 1536;

/// Cross-entropy with dense (one-hot or smoothed) targets: logsumexp of each
/// row minus the target's logit, averaged over the rows.
Graph crossEntropy(bool Mean) {
  Graph G;
  Value X = G.input("logits", DType::BF16, {"B", Vocab});
  Value T = G.input("target", DType::BF16, {"B", Vocab});
  Value Xf = cast(X, DType::F32);
  Value M = reduceMax(Xf);
  Value Lse = M + log(sum(exp(Xf - M)));
  Value Loss = Lse - sum(Xf * cast(T, DType::F32));
  G.output("loss", Mean ? mean(Loss, ReduceScope::All) : Loss);
  return G;
}

std::vector<ModelPattern> patterns() {
  std::vector<ModelPattern> P;
  // Losses.
  P.push_back({"cross_entropy_rows", 1, [] { return crossEntropy(false); }});
  P.push_back({"cross_entropy_mean", 2, [] { return crossEntropy(true); }});
  P.push_back({"label_smoothing_ce", 1, [] {
                 Graph G;
                 Value X = cast(G.input("logits", DType::BF16, {"B", Vocab}), DType::F32);
                 Value T = cast(G.input("target", DType::BF16, {"B", Vocab}), DType::F32);
                 Value Eps = G.scalar("smoothing", DType::F32);
                 Value M = reduceMax(X);
                 Value Lse = M + log(sum(exp(X - M)));
                 Value One = G.constant(1.0);
                 G.output("loss", Lse - (One - Eps) * sum(X * T) - Eps * mean(X));
                 return G;
               },
               {},
               {{"smoothing", 0.1}}});
  P.push_back({"log_softmax", 1, [] {
                 Graph G;
                 Value X = G.input("x", DType::F32, {"B", Vocab});
                 Value M = reduceMax(X);
                 G.output("y", X - M - log(sum(exp(X - M))));
                 return G;
               }});
  P.push_back({"softmax_ce_backward", 1, [] {
                 Graph G;
                 Value X = G.input("logits", DType::BF16, {"B", Vocab});
                 Value T = G.input("target", DType::BF16, {"B", Vocab});
                 Value S = G.scalar("grad_scale", DType::F32);
                 Value D = nn::softmax(cast(X, DType::F32)) - cast(T, DType::F32);
                 G.output("dlogits", cast(D * S, DType::BF16));
                 return G;
               },
               {},
               {{"grad_scale", 0.125}}});
  P.push_back({"kl_div_rows", 1, [] {
                 Graph G;
                 Value Q = G.input("q_logits", DType::F32, {"B", Vocab});
                 Value Pr = G.input("p", DType::F32, {"B", Vocab});
                 Value M = reduceMax(Q);
                 Value LogQ = Q - M - log(sum(exp(Q - M)));
                 G.output("kl", sum(Pr * (log(Pr) - LogQ)));
                 return G;
               },
               {"p"}});
  P.push_back({"z_loss", 1, [] {
                 Graph G;
                 Value X = G.input("logits", DType::F32, {"B", Vocab});
                 Value M = reduceMax(X);
                 Value Lse = M + log(sum(exp(X - M)));
                 G.output("z", G.scalar("coef", DType::F32) * Lse * Lse);
                 return G;
               },
               {},
               {{"coef", 1e-4}}});
  // Optimizers: every state updated in one pass.
  P.push_back({"adamw_step", 1, [] {
                 Graph G;
                 Value Pm = G.input("param", DType::F32, {"N"});
                 Value Gr = G.input("grad", DType::F32, {"N"});
                 Value M = G.input("exp_avg", DType::F32, {"N"});
                 Value V = G.input("exp_avg_sq", DType::F32, {"N"});
                 Value Lr = G.scalar("lr", DType::F32), B1 = G.scalar("beta1", DType::F32),
                       B2 = G.scalar("beta2", DType::F32), Eps = G.scalar("eps", DType::F32),
                       Wd = G.scalar("weight_decay", DType::F32),
                       Bc1 = G.scalar("bias_correction1", DType::F32),
                       Bc2 = G.scalar("bias_correction2", DType::F32);
                 Value One = G.constant(1.0);
                 Value M2 = B1 * M + (One - B1) * Gr;
                 Value V2 = B2 * V + (One - B2) * Gr * Gr;
                 Value Step = (M2 / Bc1) / (sqrt(V2 / Bc2) + Eps);
                 G.output("param_out", Pm * (One - Lr * Wd) - Lr * Step);
                 G.output("exp_avg_out", M2);
                 G.output("exp_avg_sq_out", V2);
                 return G;
               },
               {"exp_avg_sq"},
               {{"lr", 1e-3},
                {"beta1", 0.9},
                {"beta2", 0.999},
                {"eps", 1e-8},
                {"weight_decay", 0.01},
                {"bias_correction1", 0.1},
                {"bias_correction2", 0.001}}});
  P.push_back({"sgd_nesterov", 1, [] {
                 Graph G;
                 Value Pm = G.input("param", DType::BF16, {"N"});
                 Value Gr = cast(G.input("grad", DType::BF16, {"N"}), DType::F32);
                 Value Buf = G.input("momentum_buf", DType::F32, {"N"});
                 Value Mu = G.scalar("momentum", DType::F32), Lr = G.scalar("lr", DType::F32);
                 Value Buf2 = Mu * Buf + Gr;
                 G.output("param_out", cast(cast(Pm, DType::F32) - Lr * (Gr + Mu * Buf2),
                                            DType::BF16));
                 G.output("momentum_buf_out", Buf2);
                 return G;
               },
               {},
               {{"momentum", 0.9}, {"lr", 0.01}}});
  // The global norm is a full reduction that the scaling reads: two kernels.
  P.push_back({"grad_clip_by_norm", 2, [] {
                 Graph G;
                 Value Gr = G.input("grad", DType::F32, {"N"});
                 Value Norm = sqrt(sum(Gr * Gr, ReduceScope::All));
                 Value Scale = min(G.constant(1.0), G.scalar("max_norm", DType::F32) /
                                                        (Norm + G.constant(1e-6)));
                 G.output("grad_out", Gr * Scale);
                 return G;
               },
               {},
               {{"max_norm", 1.0}}});
  // Quantization: a row's absmax scale and the rounded values together.
  P.push_back({"rowwise_absmax_quant", 1, [] {
                 Graph G;
                 Value X = cast(G.input("x", DType::BF16, {"B", Hidden}), DType::F32);
                 Value S = reduceMax(abs(X)) / G.constant(127.0);
                 G.output("q", cast(rint(X / S), DType::I32));
                 G.output("scale", S);
                 return G;
               }});
  P.push_back({"rmsnorm_then_quant", 1, [] {
                 Graph G;
                 Value X = G.input("x", DType::BF16, {"B", Hidden});
                 Value Y = cast(nn::rmsNorm(X, G.input("w", DType::BF16, {Hidden}),
                                            G.scalar("eps", DType::F32)),
                                DType::F32);
                 Value S = reduceMax(abs(Y)) / G.constant(127.0);
                 G.output("q", cast(rint(Y / S), DType::I32));
                 G.output("scale", S);
                 return G;
               },
               {},
               {{"eps", 1e-6}}});
  P.push_back({"dequant_add_rmsnorm", 1, [] {
                 Graph G;
                 Value Q = G.input("q", DType::I32, {"B", Hidden});
                 Value S = G.input("scale", DType::F32, {"B", 1});
                 Value R = G.input("residual", DType::BF16, {"B", Hidden});
                 Value H = cast(cast(Q, DType::F32) * S, DType::BF16) + R;
                 G.output("residual_out", H);
                 G.output("y", nn::rmsNorm(H, G.input("w", DType::BF16, {Hidden}),
                                           G.scalar("eps", DType::F32)));
                 return G;
               },
               {},
               {{"eps", 1e-6}}});
  // Norm variants.
  P.push_back({"gemma_rmsnorm", 1, [] {
                 Graph G;
                 Value X = G.input("x", DType::BF16, {"B", Hidden});
                 Value W = G.input("w", DType::BF16, {Hidden});
                 G.output("y", nn::rmsNorm(X, W + G.constant(1.0, DType::BF16),
                                           G.scalar("eps", DType::F32)));
                 return G;
               },
               {},
               {{"eps", 1e-6}}});
  P.push_back({"qk_norm_heads", 1, [] {
                 Graph G;
                 Value Q = G.input("q", DType::BF16, {"T", 32, 128});
                 G.output("q_normed", nn::rmsNorm(Q, G.input("w", DType::BF16, {128}),
                                                  G.scalar("eps", DType::F32)));
                 return G;
               },
               {},
               {{"eps", 1e-6}}});
  P.push_back({"layer_scale_residual", 1, [] {
                 Graph G;
                 Value X = G.input("x", DType::BF16, {"B", Hidden});
                 Value Y = G.input("y", DType::BF16, {"B", Hidden});
                 G.output("out", X + G.input("gamma", DType::BF16, {Hidden}) * Y);
                 return G;
               }});
  // Attention prep: scaled scores, a causal mask broadcast over heads.
  P.push_back({"masked_scaled_softmax", 1, [] {
                 Graph G;
                 Value S = G.input("scores", DType::BF16, {"B", 8, 77, 77});
                 Value Mask = G.input("mask", DType::BF16, {77, 77});
                 Value Z = cast(S, DType::F32) * G.scalar("scale", DType::F32) +
                           cast(Mask, DType::F32);
                 G.output("probs", cast(nn::softmax(Z), DType::BF16));
                 return G;
               },
               {},
               {{"scale", 0.125}}});
  P.push_back({"geglu", 1, [] {
                 Graph G;
                 Value Gate = G.input("gate", DType::BF16, {"B", Hidden});
                 Value Up = G.input("up", DType::BF16, {"B", Hidden});
                 G.output("h", gelu(Gate) * Up);
                 return G;
               }});
  // Gemma 2's logit soft-capping before the softmax.
  P.push_back({"softcap_softmax", 1, [] {
                 Graph G;
                 Value X = cast(G.input("logits", DType::BF16, {"B", Vocab}), DType::F32);
                 Value Cap = G.scalar("cap", DType::F32);
                 G.output("probs", nn::softmax(tanh(X / Cap) * Cap));
                 return G;
               },
               {},
               {{"cap", 30.0}}});
  // BatchNorm's training statistics: a column mean, the centred variance
  // (which needs the mean first) and the normalized rows: three kernels, x
  // read three times, the centred values recomputed in the last two (they
  // were stored and read twice: 10752 N bytes against 6144 N).
  P.push_back({"batchnorm_train", 3, [] {
                 Graph G;
                 Value X = G.input("x", DType::F32, {"N", 384});
                 Value Mu = mean(X, llvm::ArrayRef<int64_t>{0});
                 Value D = X - Mu;
                 Value Var = mean(D * D, llvm::ArrayRef<int64_t>{0});
                 Value Y = D * rsqrt(Var + G.scalar("eps", DType::F32)) *
                               G.input("w", DType::F32, {384}) +
                           G.input("b", DType::F32, {384});
                 G.output("y", Y);
                 G.output("mean", Mu);
                 G.output("var", Var);
                 return G;
               },
               {},
               {{"eps", 1e-5}}});
  // Cross-entropy averaged over the tokens that count (ignore_index): the
  // rows' losses, then two sums of one pass, the quotient computed by the
  // second sum's last block (FullReduceEpilogue; 4 kernels without it).
  P.push_back({"masked_mean_ce", 3, [] {
                 Graph G;
                 Value X = cast(G.input("logits", DType::BF16, {"B", Vocab}), DType::F32);
                 Value T = cast(G.input("target", DType::BF16, {"B", Vocab}), DType::F32);
                 Value Valid = G.input("valid", DType::F32, {"B", 1});
                 Value M = reduceMax(X);
                 Value Loss = (M + log(sum(exp(X - M))) - sum(X * T)) * Valid;
                 G.output("loss", sum(Loss, ReduceScope::All) / sum(Valid, ReduceScope::All));
                 return G;
               },
               {"valid"},
               {},
               2});
  // A column logsumexp (a softmax's statistics over axis 0).
  P.push_back({"column_logsumexp", 2, [] {
                 Graph G;
                 Value X = G.input("x", DType::F32, {"N", 384});
                 Value M = reduceMax(X, llvm::ArrayRef<int64_t>{0});
                 G.output("lse", M + log(sum(exp(X - M), llvm::ArrayRef<int64_t>{0})));
                 return G;
               },
               {},
               {}});
  // Per-output-channel weight quantization: a column absmax, then the
  // scaled values.
  P.push_back({"per_channel_weight_quant", 2, [] {
                 Graph G;
                 Value W = cast(G.input("w", DType::BF16, {"K", 384}), DType::F32);
                 Value S = reduceMax(abs(W), llvm::ArrayRef<int64_t>{0}) / G.constant(127.0);
                 G.output("q", cast(rint(W / S), DType::I32));
                 G.output("scale", S);
                 return G;
               },
               {},
               {}});
  // Whole-tensor standardization: mean, then the centred variance, then
  // the normalized values.
  P.push_back({"global_standardize", 3, [] {
                 Graph G;
                 Value X = G.input("x", DType::F32, {"N"});
                 Value Mu = mean(X, ReduceScope::All);
                 Value D = X - Mu;
                 Value Var = mean(D * D, ReduceScope::All);
                 G.output("y", D * rsqrt(Var + G.scalar("eps", DType::F32)));
                 return G;
               },
               {},
               {{"eps", 1e-5}}});
  // Backward passes. RMSNorm's: dx per row, dw a column sum over the rows,
  // in one kernel (MixOrderColumns: rows from 256 columns since session 39).
  P.push_back({"rmsnorm_backward", 1, [] {
                 Graph G;
                 Value X = G.input("x", DType::F32, {"B", Hidden});
                 Value Dy = G.input("dy", DType::F32, {"B", Hidden});
                 Value W = G.input("w", DType::F32, {Hidden});
                 Value Rstd = G.input("rstd", DType::F32, {"B", 1});
                 Value Xh = X * Rstd;
                 Value Wdy = W * Dy;
                 G.output("dx", Rstd * (Wdy - Xh * mean(Wdy * Xh)));
                 G.output("dw", sum(Dy * Xh, llvm::ArrayRef<int64_t>{0}));
                 return G;
               },
               {"rstd"}});
  P.push_back({"softmax_backward", 1, [] {
                 Graph G;
                 Value Y = G.input("y", DType::BF16, {"B", Vocab});
                 Value Dy = G.input("dy", DType::BF16, {"B", Vocab});
                 Value Yf = cast(Y, DType::F32), Dyf = cast(Dy, DType::F32);
                 G.output("dx", cast(Yf * (Dyf - sum(Dyf * Yf)), DType::BF16));
                 return G;
               }});
  // LayerNorm forward keeping its statistics for the backward pass.
  P.push_back({"layernorm_with_stats", 1, [] {
                 Graph G;
                 Value X = cast(G.input("x", DType::BF16, {"B", Hidden}), DType::F32);
                 Value Mu = mean(X);
                 Value D = X - Mu;
                 Value Rstd = rsqrt(mean(D * D) + G.scalar("eps", DType::F32));
                 G.output("y", cast(D * Rstd * cast(G.input("w", DType::BF16, {Hidden}),
                                                     DType::F32),
                                    DType::BF16));
                 G.output("mean", Mu);
                 G.output("rstd", Rstd);
                 return G;
               },
               {},
               {{"eps", 1e-5}}});
  // Mixed precision: unscale the gradients and flag a non-finite one.
  P.push_back({"amp_unscale_found_inf", 1, [] {
                 Graph G;
                 Value Gr = G.input("grad", DType::F32, {"N"});
                 Value U = Gr * G.scalar("inv_scale", DType::F32);
                 Value Bad = logicalOr(ne(U, U), eq(abs(U), G.constant(INFINITY)));
                 G.output("grad_out", U);
                 G.output("found_inf", reduceMax(cast(Bad, DType::F32), ReduceScope::All));
                 return G;
               },
               {},
               {{"inv_scale", 1.0 / 65536}}});
  // Per-token dynamic quantization to an fp8 range (values kept in bf16).
  P.push_back({"fp8_dynamic_quant", 1, [] {
                 Graph G;
                 Value X = cast(G.input("x", DType::BF16, {"B", Hidden}), DType::F32);
                 Value S = max(reduceMax(abs(X)) / G.constant(448.0), G.constant(1e-12));
                 G.output("q", cast(min(max(X / S, G.constant(-448.0)), G.constant(448.0)),
                                    DType::BF16));
                 G.output("scale", S);
                 return G;
               }});
  P.push_back({"bias_dropout_residual", 1, [] {
                 Graph G;
                 Value X = G.input("x", DType::BF16, {"B", Hidden});
                 Value Bias = G.input("bias", DType::BF16, {Hidden});
                 Value R = G.input("residual", DType::BF16, {"B", Hidden});
                 G.output("out", nn::dropout(X + Bias, 0.1, G.scalar("seed", DType::I64)) + R);
                 return G;
               },
               {},
               {{"seed", 1234}}});
  // LayerNorm's backward pass from the saved statistics: dx per row, dw and
  // db column sums of x and dy in the row kernel (MixOrderColumns; without
  // it 2 kernels with RecomputeStoredValues and SiblingColumnReductions, 3
  // without them).
  P.push_back({"layernorm_backward", 1, [] { return layerNormBackward(Dim(Hidden)); },
               {"rstd"}});
  // ReLU's backward pass and the bias gradient of the layer before it: the
  // column sum's kernel stores dz (ColumnReducePrologueOutputs; 2 kernels
  // without it).
  P.push_back({"relu_backward_bias_grad", 1, [] { return reluBackward(Dim(Hidden)); }});
  // Pooling: a mean over the sequence axis of [B, T, H].
  P.push_back({"mean_pool_seq", 1, [] {
                 Graph G;
                 Value X = G.input("x", DType::BF16, {"B", 77, 384});
                 G.output("pooled", mean(cast(X, DType::F32), llvm::ArrayRef<int64_t>{1}));
                 return G;
               }});
  return P;
}

Bindings bindingsFor(const ModelPattern &P, const Graph &G) {
  // Bind only the dims G has: the interpreter rejects a binding of a dim
  // the graph lacks (a misspelt name must not pass silently).
  const std::map<std::string, int64_t> Sizes = {{"B", 37}, {"N", 100003}, {"T", 19}, {"K", 515}};
  std::map<std::string, int64_t> Dims;
  for (const std::string &D : G.dynamicDims())
    Dims[D] = Sizes.at(D);
  Bindings B = randomBindings(G, Dims, P.Scalars);
  for (const std::string &Name : P.Nonnegative)
    for (double &V : B.Inputs.at(Name).Data)
      V = std::fabs(V);
  return B;
}

} // namespace

TEST_CASE("model patterns fuse to the fewest kernels their reductions allow",
          "[fusion][models]") {
  for (const ModelPattern &P : patterns()) {
    INFO(P.Name);
    Graph G = P.Build();
    GraphPlan Plan = planGraph(G, PlanOptions{});
    INFO(Plan.PlanText);
    CHECK(Plan.Kernels.size() == P.Kernels);
    CHECK(P.Fewest < P.Kernels);
    // Unfused, every op that computes is a kernel of its own: the fused
    // count is a real saving, not the graph's size.
    PlanOptions Unfused;
    Unfused.Fuse = false;
    CHECK(planGraph(G, Unfused).Kernels.size() > P.Kernels);
  }
}

// The GPU case's bindings, checked where CI runs: every pattern's graph
// evaluates under them and yields each named output.
TEST_CASE("model patterns' bindings evaluate in the reference", "[fusion][models]") {
  for (const ModelPattern &P : patterns()) {
    INFO(P.Name);
    Graph G = P.Build();
    std::map<std::string, HostTensor> Out;
    REQUIRE_NOTHROW(Out = interpret(G, bindingsFor(P, G)));
    CHECK(Out.size() == G.outputs().size());
  }
}

TEST_CASE("GPU: model patterns match the reference, fused and unfused", "[gpu][models]") {
  for (const ModelPattern &P : patterns()) {
    INFO(P.Name);
    Graph G = P.Build();
    CheckOptions CO;
    CO.ExpectFusedKernels = static_cast<int>(P.Kernels);
    checkGraph(G, bindingsFor(P, G), CO);
  }
}
