//===- bench/Workloads.cpp - the benchmark workloads W1-W22 ---------------===//
#include "Workloads.h"

#include "examples/ExampleGraphs.h"
#include "ir/NN.h"

#include <fmt/format.h>

namespace jitfuse::bench {

void buildAddRmsNorm(Graph &G, DType T, const Dim &H) {
  Value X = G.input("x", T, {"B", H});
  Value Res = G.input("residual", T, {"B", H});
  Value W = G.input("weight", T, {H});
  Value Eps = G.scalar("eps", DType::F32);
  Value R = X + Res;
  G.output("residual_out", R);
  G.output("y", nn::rmsNorm(R, W, Eps));
}

static Workload addRmsNorm(DType T, int64_t H) {
  std::string Ty = dtypeName(T).str();
  return {fmt::format("W3-{}-H{}", Ty, H),
          "W3",
          fmt::format("residual add + RMSNorm, writes r and y, {} 16384x{}", Ty, H),
          [=](Graph &G) { buildAddRmsNorm(G, T, H); },
          {{"B", 16384}},
          {{"B", 5}},
          {{"eps", 1e-6}}};
}

/// A workload timing the example graph Build makes (its scalars too).
static Workload exampleWorkload(std::string Id, std::string Desc,
                                examples::ExampleGraph (*Build)(),
                                std::map<std::string, int64_t> Dims,
                                std::map<std::string, int64_t> CheckDims) {
  Workload W;
  W.Id = W.Group = std::move(Id);
  W.Desc = std::move(Desc);
  W.Make = [Build] { return std::move(*Build().G); };
  W.Dims = std::move(Dims);
  W.CheckDims = std::move(CheckDims);
  W.Scalars = Build().Scalars;
  return W;
}

std::vector<Workload> allWorkloads() {
  constexpr int64_t N28 = int64_t(1) << 28;
  std::vector<Workload> W;
  W.push_back({"W1", "W1", "alpha*(a+b)+c, f32, 2^28",
               [](Graph &G) {
                 Value A = G.input("a", DType::F32, {"N"});
                 Value B = G.input("b", DType::F32, {"N"});
                 Value C = G.input("c", DType::F32, {"N"});
                 Value Alpha = G.scalar("alpha", DType::F32);
                 G.output("out", Alpha * (A + B) + C);
               },
               {{"N", N28}},
               {{"N", 100003}},
               {{"alpha", 2.5}}});
  W.push_back({"W2", "W2", "sum(abs(x)), f32, 2^28, deterministic",
               [](Graph &G) {
                 Value X = G.input("x", DType::F32, {"N"});
                 G.output("s", sum(abs(X), ReduceScope::All));
               },
               {{"N", N28}},
               {{"N", 100003}},
               {}});
  W.push_back(addRmsNorm(DType::BF16, 4096));
  W.push_back(addRmsNorm(DType::BF16, 8192));
  W.push_back(addRmsNorm(DType::F32, 4096));
  W.push_back(addRmsNorm(DType::F32, 8192));
  W.push_back({"W4", "W4", "add + LayerNorm, bf16, 65536x4096 (writes y only)",
               [](Graph &G) {
                 Value X = G.input("x", DType::BF16, {"B", 4096});
                 Value Res = G.input("residual", DType::BF16, {"B", 4096});
                 Value Wt = G.input("weight", DType::BF16, {4096});
                 Value Bias = G.input("bias", DType::BF16, {4096});
                 Value Eps = G.scalar("eps", DType::F32);
                 G.output("y", nn::layerNorm(X + Res, Wt, Bias, Eps));
               },
               {{"B", 65536}},
               {{"B", 5}},
               {{"eps", 1e-5}}});
  for (bool Fast : {false, true})
    W.push_back({Fast ? "W5-fast" : "W5", "W5",
                 std::string("silu(g)*u from merged gate_up, bf16, 16384x(2x11008)") +
                     (Fast ? ", CompileOptions::FastMath" : ""),
                 [](Graph &G) {
                   Value GU = G.input("gate_up", DType::BF16, {"B", 2 * 11008});
                   G.output("out", nn::swiglu(GU));
                 },
                 {{"B", 16384}},
                 {{"B", 3}},
                 {},
                 false,
                 Fast});
  W.push_back({"W6", "W6", "softmax(s + mask[C]), f32, 65536x2048",
               [](Graph &G) {
                 Value S = G.input("s", DType::F32, {"B", 2048});
                 Value Mask = G.input("mask", DType::F32, {2048});
                 G.output("p", nn::softmax(S + Mask));
               },
               {{"B", 65536}},
               {{"B", 5}},
               {}});
  W.push_back({"W7", "W7", "RoPE half rotation, bf16 q [32768,32,128], cos/sin bf16 [32768,64]",
               [](Graph &G) {
                 Value Q = G.input("q", DType::BF16, {"T", 32, 128});
                 Value Cos = G.input("cos", DType::BF16, {"T", 64});
                 Value Sin = G.input("sin", DType::BF16, {"T", 64});
                 G.output("q_rot", nn::rope(Q, Cos, Sin, nn::RopeStyle::HalfRotation));
               },
               {{"T", 32768}},
               {{"T", 3}},
               {}});
  Workload W8 = addRmsNorm(DType::BF16, 4096);
  W8.Id = W8.Group = "W8";
  W8.Desc = "decode add+RMSNorm, bf16 1x4096, per call back-to-back";
  W8.Dims = {{"B", 1}};
  W8.PerCall = true;
  W.push_back(std::move(W8));
  // The decode layer: the llama_block example (both residual adds +
  // RMSNorms, RoPE on q and k, SwiGLU) at one token, per call like W8.
  Workload W9 = exampleWorkload(
      "W9", "decode layer: llama_block example, bf16, T=1, per call back-to-back",
      examples::buildLlamaBlock, {{"T", 1}}, {{"T", 3}});
  W9.PerCall = true;
  W.push_back(std::move(W9));
  // The same layer at prefill size, timed for bandwidth: its four fused
  // kernels share one launch at any T (horizontal parts are sized at
  // dynamic dims 1), so `--no-horizontal` in the same run is issue 13's
  // check that the combined launch is not slower at large T.
  W.push_back(exampleWorkload("W9L", "prefill layer: llama_block example, bf16, T=4096",
                              examples::buildLlamaBlock, {{"T", 4096}}, {{"T", 3}}));
  // The column (outer-axis) reduction of issue 14: a bias gradient, f32
  // accumulation of a bf16 upstream gradient. Checked at 1001 rows (7 splits
  // of the reduced axis, codegen::columnSplits).
  W.push_back({"W10", "W10", "column sum sum(x, {0}) -> f32, bf16 65536x4096",
               [](Graph &G) {
                 Value X = G.input("x", DType::BF16, {"R", 4096});
                 G.output("s", sum(cast(X, DType::F32), {0}));
               },
               {{"R", 65536}},
               {{"R", 1001}},
               {}});
  // Views after a reduction (issue 14): GroupNorm(32) with its
  // per-channel affine, and per-head RMSNorm written back as [T, 4096]; both
  // one kernel, the example graphs.
  W.push_back(exampleWorkload("W11",
                              "GroupNorm(32) + affine, f16 [8,320,64*64] (group_norm example)",
                              examples::buildGroupNorm, {{"N", 8}}, {{"N", 2}}));
  W.push_back(exampleWorkload(
      "W12", "per-head RMSNorm [T,32,128] back to [T,4096], bf16, T=16384 (head_rmsnorm example)",
      examples::buildHeadRmsNorm, {{"T", 16384}}, {{"T", 3}}));
  // QK-norm + RoPE (parts of rows): one row kernel per tensor, one launch.
  W.push_back(exampleWorkload(
      "W13", "QK-norm + RoPE, bf16 q [T,32,128], k [T,8,128], T=16384 (qk_norm_rope example)",
      examples::buildQkNormRope, {{"T", 16384}}, {{"T", 3}}));
  // Permutes (issue 14): heads to the front with the innermost axis kept,
  // and a transpose of the innermost axis (transpose tiles).
  W.push_back({"W14", "W14", "permute(q, {0,2,1,3}) + y, bf16 q [8,2048,32,128] -> [8,32,2048,128]",
               [](Graph &G) {
                 Value Q = G.input("q", DType::BF16, {"B", 2048, 32, 128});
                 Value Y = G.input("y", DType::BF16, {"B", 32, 2048, 128});
                 G.output("out", permute(Q, {0, 2, 1, 3}) + Y);
               },
               {{"B", 8}},
               {{"B", 1}},
               {}});
  W.push_back({"W15", "W15", "transpose(x, 0, 1) + 1, bf16 [8192,8192] -> [8192,8192]",
               [](Graph &G) {
                 Value X = G.input("x", DType::BF16, {"R", 8192});
                 G.output("xt", transpose(X, 0, 1) + 1.0);
               },
               {{"R", 8192}},
               {{"R", 5}},
               {}});
  // Strided inputs (issue 14): RMSNorm of a slice of a wider buffer (the
  // first 4096 of each 4224-element row, as a fused QKV projection's q or a
  // KV-cache page), read in place; the row stride is a run-time dim.
  W.push_back({"W16", "W16",
               "RMSNorm of x[:, :4096] read in place from a bf16 [16384, 4224] buffer "
               "(strides {ld, 1})",
               [](Graph &G) {
                 Value X = G.input("x", DType::BF16, {"T", 4096}, {"ld", 1});
                 Value Wt = G.input("w", DType::BF16, {4096});
                 Value Xf = cast(X, DType::F32);
                 Value Y = Xf * rsqrt(mean(Xf * Xf) + 1e-6) * cast(Wt, DType::F32);
                 G.output("y", cast(Y, DType::BF16));
               },
               {{"T", 16384}, {"ld", 4224}},
               {{"T", 3}, {"ld", 4101}},
               {}});
  // Reductions over outer and mixed axes (issue 14, compiler/LowerAxes.h):
  // BatchNorm statistics over {0, 2} (a row reduction of the channels, each
  // row N runs of HW) and mean pooling over the sequence axis {1} (a column
  // reduction of [T, B*H] read through a permute).
  W.push_back({"W17", "W17",
               "BatchNorm statistics sum(x) and sum(x*x) over {0,2} -> f32, bf16 [64,256,3136]",
               [](Graph &G) {
                 Value X = G.input("x", DType::BF16, {"N", 256, "HW"});
                 Value Xf = cast(X, DType::F32);
                 G.output("s1", sum(Xf, {0, 2}));
                 G.output("s2", sum(Xf * Xf, {0, 2}));
               },
               {{"N", 64}, {"HW", 3136}},
               {{"N", 3}, {"HW", 49}},
               {}});
  W.push_back({"W18", "W18", "mean pooling mean(x, {1}) -> f32, bf16 [8,4096,4096]",
               [](Graph &G) {
                 Value X = G.input("x", DType::BF16, {8, "T", 4096});
                 G.output("m", mean(cast(X, DType::F32), {1}));
               },
               {{"T", 4096}},
               {{"T", 37}},
               {}});
  // Model-code patterns the reduction fusions target (docs/ARCHITECTURE.md,
  // "Fusion gaps of model patterns"): mixed-precision unscale with its
  // non-finite flag (a full reduction whose prologue is also an output), and
  // per-channel fake quantization of a weight stored [in, out] (a column
  // amax whose [1, C] scale is computed on before the weight is re-read).
  W.push_back({"W19", "W19",
               "AMP unscale + found_inf: g * inv_scale and max(isnan|isinf), f32 [64M]",
               [](Graph &G) {
                 Value Gr = G.input("grad", DType::F32, {"N"});
                 Value U = Gr * G.scalar("inv_scale", DType::F32);
                 Value Bad = logicalOr(ne(U, U), eq(abs(U), G.constant(INFINITY)));
                 G.output("grad_out", U);
                 G.output("found_inf", reduceMax(cast(Bad, DType::F32), ReduceScope::All));
               },
               {{"N", int64_t(1) << 26}},
               {{"N", 100003}},
               {{"inv_scale", 1.0 / 65536}}});
  W.push_back({"W20", "W20",
               "per-channel fake quantization over axis 0 (int8 grid), bf16 w [K=8192, 8192]",
               [](Graph &G) {
                 Value X = cast(G.input("w", DType::BF16, {"K", 8192}), DType::F32);
                 Value S = reduceMax(abs(X), llvm::ArrayRef<int64_t>{0}) / G.constant(127.0);
                 Value Q = min(max(rint(X / S), G.constant(-127.0)), G.constant(127.0));
                 G.output("wq", cast(Q * S, DType::BF16));
                 G.output("scale", S);
               },
               {{"K", 8192}},
               {{"K", 37}},
               {}});
  // Backward passes whose gradients RecomputeStoredValues (with the column
  // fusions) targets: values the row or element-wise kernel stores only for the
  // column sums of the weight and bias gradients.
  W.push_back({"W21", "W21",
               "LayerNorm backward from the saved mean/rstd: dx, dw, db, bf16 [16384, 4096]",
               [](Graph &G) {
                 examples::addNormBackward(G, DType::BF16, Dim(4096), /*LayerNorm=*/true);
               },
               {{"B", 16384}},
               {{"B", 37}},
               {}});
  W.push_back({"W22", "W22",
               "ReLU backward + bias gradient: dz = dy * (z > 0), db = sum(f32(dz), {0}), "
               "bf16 [65536, 4096]",
               [](Graph &G) {
                 Value Dy = G.input("dy", DType::BF16, {"B", 4096});
                 Value Z = G.input("z", DType::BF16, {"B", 4096});
                 Value Dz = Dy * cast(gt(Z, G.constant(0.0)), DType::BF16);
                 G.output("dz", Dz);
                 G.output("db", sum(cast(Dz, DType::F32), llvm::ArrayRef<int64_t>{0}));
               },
               {{"B", 65536}},
               {{"B", 37}},
               {}});
  return W;
}

Graph buildWorkloadGraph(const Workload &W) {
  if (W.Make)
    return W.Make();
  Graph G;
  W.Build(G);
  return G;
}

} // namespace jitfuse::bench
