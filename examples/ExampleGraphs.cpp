//===- examples/ExampleGraphs.cpp - the named example graphs --------------===//
#include "examples/ExampleGraphs.h"

#include "ir/NN.h"
#include "support/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <llvm/ADT/STLExtras.h>

#include <algorithm>
#include <iterator>

namespace jitfuse::examples {

namespace {

// Sizes of a LLaMA-2-7B layer, so the byte counts in the plans are the real
// ones; the token count stays small so a run takes milliseconds.
constexpr int64_t Hidden = 4096;
constexpr int64_t QHeads = 32;
constexpr int64_t KvHeads = 8;
constexpr int64_t HeadDim = 128;
constexpr int64_t Intermediate = 11008;
constexpr int64_t DefaultRows = 64;

ExampleGraph start(llvm::StringRef Name, llvm::StringRef Description) {
  ExampleGraph E;
  E.Name = Name.str();
  E.Description = Description.str();
  E.G = std::make_unique<Graph>();
  return E;
}

/// residual_out = x + residual; y = Norm(residual_out). Returns the two
/// output nodes so callers can name them as one fusion group.
std::vector<NodeId> addRmsNorm(Graph &G, Value X, Value Residual, Value Weight,
                               Value Eps, llvm::StringRef ResidualName,
                               llvm::StringRef OutName) {
  Value R = X + Residual;
  Value Y = nn::rmsNorm(R, Weight, Eps);
  G.output(ResidualName, R);
  G.output(OutName, Y);
  return {R.id(), Y.id()};
}

/// q and k have different head counts, so their rotations are two iteration
/// domains; the cos/sin preparation they share (hash-consed) may go either
/// way, so each group holds only the nodes of its own rotation.
std::vector<std::vector<NodeId>> ropeGroups(const Graph &G, Value QRot, Value KRot) {
  std::vector<NodeId> Q = expressionNodes(G, {QRot.id()});
  std::vector<NodeId> K = expressionNodes(G, {KRot.id()});
  std::vector<NodeId> QOnly, KOnly;
  std::set_difference(Q.begin(), Q.end(), K.begin(), K.end(), std::back_inserter(QOnly));
  std::set_difference(K.begin(), K.end(), Q.begin(), Q.end(), std::back_inserter(KOnly));
  return {QOnly, KOnly};
}

} // namespace

std::vector<NodeId> expressionNodes(const Graph &G, llvm::ArrayRef<NodeId> Roots) {
  std::vector<bool> Needed(G.size(), false);
  for (NodeId R : Roots)
    Needed[R] = true;
  // Operands have smaller ids, so one backward sweep finds every dependency.
  for (NodeId Id = static_cast<NodeId>(G.size()); Id-- > 0;)
    if (Needed[Id])
      for (NodeId Op : G.node(Id).Operands)
        Needed[Op] = true;
  std::vector<NodeId> Out;
  for (NodeId Id = 0; Id < G.size(); ++Id)
    if (Needed[Id] && !G.node(Id).isLeaf())
      Out.push_back(Id);
  return Out;
}

ExampleGraph buildL1Chain() {
  ExampleGraph E = start("l1_chain", "out = alpha*(a+b)+c over f32 [N,1024]; "
                                     "alpha is a run-time scalar (Level 1)");
  Graph &G = *E.G;
  Value A = G.input("a", f32, {"N", 1024});
  Value B = G.input("b", f32, {"N", 1024});
  Value C = G.input("c", f32, {"N", 1024});
  Value Alpha = G.scalar("alpha", f32);
  Value Out = Alpha * (A + B) + C;
  G.output("out", Out);
  E.Dims = {{"N", DefaultRows}};
  E.Scalars = {{"alpha", 0.5}};
  E.SameKernel = {expressionNodes(G, {Out.id()})};
  return E;
}

ExampleGraph buildSumAbs() {
  ExampleGraph E = start("sum_abs", "total = sum(abs(x)) over every element of "
                                    "f32 [B,4096] (full reduction)");
  Graph &G = *E.G;
  Value X = G.input("x", f32, {"B", Hidden});
  Value Total = sum(abs(X), ReduceScope::All);
  G.output("total", Total);
  E.Dims = {{"B", DefaultRows}};
  E.SameKernel = {expressionNodes(G, {Total.id()})};
  return E;
}

ExampleGraph buildAddRmsNorm() {
  ExampleGraph E = start("add_rmsnorm",
                         "residual_out = x + residual; y = rmsNorm(residual_out, "
                         "weight, eps) over bf16 [B,4096] (Level 2)");
  Graph &G = *E.G;
  Value X = G.input("x", bf16, {"B", Hidden});
  Value Res = G.input("residual", bf16, {"B", Hidden});
  Value W = G.input("weight", bf16, {Hidden});
  Value Eps = G.scalar("eps", f32);
  E.SameKernel = {addRmsNorm(G, X, Res, W, Eps, "residual_out", "y")};
  E.Dims = {{"B", DefaultRows}};
  E.Scalars = {{"eps", 1e-6}};
  return E;
}

ExampleGraph buildAddLayerNorm() {
  ExampleGraph E = start("add_layernorm",
                         "residual_out = x + residual; y = layerNorm(residual_out, "
                         "weight, bias, eps) over bf16 [B,4096] (Level 2, two "
                         "reductions per row)");
  Graph &G = *E.G;
  Value X = G.input("x", bf16, {"B", Hidden});
  Value Res = G.input("residual", bf16, {"B", Hidden});
  Value W = G.input("weight", bf16, {Hidden});
  Value Bias = G.input("bias", bf16, {Hidden});
  Value Eps = G.scalar("eps", f32);
  Value R = X + Res;
  Value Y = nn::layerNorm(R, W, Bias, Eps);
  G.output("residual_out", R);
  G.output("y", Y);
  E.Dims = {{"B", DefaultRows}};
  E.Scalars = {{"eps", 1e-5}};
  E.SameKernel = {{R.id(), Y.id()}};
  return E;
}

ExampleGraph buildSoftmaxMask() {
  ExampleGraph E = start("softmax_mask",
                         "probs = softmax(scores + mask) over f32 [B,2048], mask "
                         "[2048] broadcast over rows (Level 2: max and sum)");
  Graph &G = *E.G;
  Value Scores = G.input("scores", f32, {"B", 2048});
  Value Mask = G.input("mask", f32, {2048});
  Value P = nn::softmax(Scores + Mask);
  G.output("probs", P);
  E.Dims = {{"B", DefaultRows}};
  E.SameKernel = {expressionNodes(G, {P.id()})};
  return E;
}

ExampleGraph buildSwiglu() {
  ExampleGraph E = start("swiglu", "act = silu(gate) * up from the merged bf16 "
                                   "gate_up projection [T,2*11008]");
  Graph &G = *E.G;
  Value GateUp = G.input("gate_up", bf16, {"T", 2 * Intermediate});
  Value Act = nn::swiglu(GateUp);
  G.output("act", Act);
  E.Dims = {{"T", DefaultRows}};
  E.SameKernel = {expressionNodes(G, {Act.id()})};
  return E;
}

ExampleGraph buildRope() {
  ExampleGraph E = start("rope", "rotary embedding (half rotation) of bf16 q "
                                 "[T,32,128] and k [T,8,128]; cos/sin [T,64] "
                                 "broadcast over heads");
  Graph &G = *E.G;
  Value Q = G.input("q", bf16, {"T", QHeads, HeadDim});
  Value K = G.input("k", bf16, {"T", KvHeads, HeadDim});
  Value Cos = G.input("cos", bf16, {"T", HeadDim / 2});
  Value Sin = G.input("sin", bf16, {"T", HeadDim / 2});
  Value QRot = nn::rope(Q, Cos, Sin);
  Value KRot = nn::rope(K, Cos, Sin);
  G.output("q_rot", QRot);
  G.output("k_rot", KRot);
  E.Dims = {{"T", DefaultRows}};
  E.SameKernel = ropeGroups(G, QRot, KRot);
  return E;
}

ExampleGraph buildLlamaBlock() {
  ExampleGraph E = start(
      "llama_block",
      "the element-wise work of one LLaMA decoder layer (bf16, T tokens, "
      "H=4096, 32 q / 8 kv heads of 128, I=11008): residual add + input "
      "RMSNorm, RoPE on q and k, residual add + post-attention RMSNorm, "
      "SwiGLU; the GEMMs and attention between them are not in the graph");
  Graph &G = *E.G;
  Value Eps = G.scalar("eps", f32);

  // Before attention: the previous layer's output joins the residual stream.
  Value X = G.input("hidden", bf16, {"T", Hidden});
  Value Res = G.input("residual", bf16, {"T", Hidden});
  Value WIn = G.input("input_norm_weight", bf16, {Hidden});
  E.SameKernel.push_back(
      addRmsNorm(G, X, Res, WIn, Eps, "residual_mid", "attn_in"));
  Value ResMid = G.value(E.SameKernel.back().front());

  // Attention inputs: q and k as the QKV projection produced them.
  Value Q = G.input("q", bf16, {"T", QHeads, HeadDim});
  Value K = G.input("k", bf16, {"T", KvHeads, HeadDim});
  Value Cos = G.input("cos", bf16, {"T", HeadDim / 2});
  Value Sin = G.input("sin", bf16, {"T", HeadDim / 2});
  Value QRot = nn::rope(Q, Cos, Sin);
  Value KRot = nn::rope(K, Cos, Sin);
  G.output("q_rot", QRot);
  G.output("k_rot", KRot);

  // After attention's output projection: second residual add + norm.
  Value AttnOut = G.input("attn_out", bf16, {"T", Hidden});
  Value WPost = G.input("post_norm_weight", bf16, {Hidden});
  E.SameKernel.push_back(
      addRmsNorm(G, AttnOut, ResMid, WPost, Eps, "residual_out", "mlp_in"));

  // The MLP's merged gate/up projection.
  Value GateUp = G.input("gate_up", bf16, {"T", 2 * Intermediate});
  Value Act = nn::swiglu(GateUp);
  G.output("mlp_act", Act);

  for (std::vector<NodeId> &Group : ropeGroups(G, QRot, KRot))
    E.SameKernel.push_back(std::move(Group));
  E.SameKernel.push_back(expressionNodes(G, {Act.id()}));
  E.Dims = {{"T", DefaultRows}};
  E.Scalars = {{"eps", 1e-6}};
  return E;
}

ExampleGraph buildDropout() {
  ExampleGraph E = start("dropout",
                         "probs = dropout(softmax(scores), p=0.1, seed) over f32 "
                         "[B,2048]; the seed is a run-time i64 scalar");
  Graph &G = *E.G;
  Value Scores = G.input("scores", f32, {"B", 2048});
  Value Seed = G.scalar("seed", i64);
  Value P = nn::dropout(nn::softmax(Scores), 0.1, Seed);
  G.output("probs", P);
  E.Dims = {{"B", DefaultRows}};
  E.Scalars = {{"seed", 1234}};
  E.SameKernel = {expressionNodes(G, {P.id()})};
  return E;
}

ExampleGraph buildGroupNorm() {
  ExampleGraph E = start("group_norm",
                         "y = GroupNorm(32)(x) * weight + bias over f16 [N,320,64*64]: "
                         "statistics over axes {-2,-1} of [N,32,10,4096] (a row "
                         "reduction over the merged group), affine per channel");
  Graph &G = *E.G;
  constexpr int64_t C = 320, Groups = 32, HW = 64 * 64;
  Value X = G.input("x", f16, {"N", C, HW});
  Value W = G.input("weight", f16, {C, 1});
  Value B = G.input("bias", f16, {C, 1});
  Value Eps = G.scalar("eps", f32);
  Value XG = reshape(X, {"N", Groups, C / Groups, HW});
  Value XF = cast(XG, f32);
  Value Mu = mean(XF, {-2, -1});
  Value D = XF - Mu;
  Value Norm = D * rsqrt(mean(D * D, {-2, -1}) + Eps);
  Value Y = cast(reshape(Norm, {"N", C, HW}) * W + B, f16);
  G.output("y", Y);
  E.Dims = {{"N", 2}};
  E.Scalars = {{"eps", 1e-5}};
  // The statistics, the normalization and the reshape in: one row kernel.
  E.SameKernel = {expressionNodes(G, {Norm.id()})};
  return E;
}

ExampleGraph buildBiasGrad() {
  ExampleGraph E = start("bias_grad",
                         "dbias = sum(dy, axis 0) in f32 over bf16 [B,4096] -> [1,4096] "
                         "(column reduction: the bias gradient of a linear layer)");
  Graph &G = *E.G;
  Value Dy = G.input("dy", bf16, {"B", Hidden});
  Value DBias = sum(cast(Dy, f32), {0});
  G.output("dbias", DBias);
  E.Dims = {{"B", DefaultRows}};
  E.SameKernel = {expressionNodes(G, {DBias.id()})};
  return E;
}

nn::NormGrads addNormBackward(Graph &G, DType T, Dim H, bool LayerNorm) {
  // The inputs in order (a call's arguments are evaluated in no set order).
  Value X = G.input("x", T, {"B", H});
  Value Dy = G.input("dy", T, {"B", H});
  Value W = G.input("w", T, {H});
  Value Mean = LayerNorm ? G.input("mean", f32, {"B", 1}) : Value();
  Value Rstd = G.input("rstd", f32, {"B", 1});
  nn::NormGrads R = LayerNorm ? nn::layerNormBackward(X, Dy, W, Mean, Rstd)
                              : nn::rmsNormBackward(X, Dy, W, Rstd);
  G.output("dx", R.Dx);
  G.output("dw", R.Dw);
  if (LayerNorm)
    G.output("db", R.Db);
  return R;
}

ExampleGraph buildLayerNormBackward() {
  ExampleGraph E = start("layernorm_backward",
                         "LayerNorm backward from the saved f32 mean and rstd [B,1]: dx (bf16) "
                         "per row, dw = sum(dy * xhat, axis 0) and db = sum(dy, axis 0) (f32) "
                         "over bf16 [B,4096]: a row kernel and a column kernel, or one with "
                         "--mix-order-columns");
  nn::NormGrads R = addNormBackward(*E.G, bf16, Hidden, /*LayerNorm=*/true);
  E.Dims = {{"B", DefaultRows}};
  // The weight and bias gradients share one column kernel (they read dy).
  E.SameKernel = {{R.Dw.id(), R.Db.id()}};
  return E;
}

ExampleGraph buildHeadRmsNorm() {
  ExampleGraph E = start("head_rmsnorm",
                         "y = rmsNorm over each head of 128 (QK-norm) of bf16 x [T,4096] seen as "
                         "[T,32,128], weight [128], written back as [T,4096] (a view after "
                         "the reduction)");
  Graph &G = *E.G;
  Value X = G.input("x", bf16, {"T", Hidden});
  Value W = G.input("weight", bf16, {HeadDim});
  Value Eps = G.scalar("eps", f32);
  Value Heads = reshape(X, {"T", QHeads, HeadDim});
  Value Y = reshape(nn::rmsNorm(Heads, W, Eps), {"T", Hidden});
  G.output("y", Y);
  E.Dims = {{"T", DefaultRows}};
  E.Scalars = {{"eps", 1e-6}};
  // The reshape back is a relabeling of the rows' elements: same kernel.
  E.SameKernel = {expressionNodes(G, {Y.id()})};
  return E;
}

ExampleGraph buildQkNormRope() {
  ExampleGraph E = start("qk_norm_rope",
                         "QK-norm then RoPE (as in Qwen3, OLMo2): rmsNorm over each head "
                         "of 128 of bf16 q [T,32,128] and k [T,8,128], then the half "
                         "rotation by cos/sin [T,64]");
  Graph &G = *E.G;
  Value Q = G.input("q", bf16, {"T", QHeads, HeadDim});
  Value K = G.input("k", bf16, {"T", KvHeads, HeadDim});
  Value QW = G.input("q_norm_weight", bf16, {HeadDim});
  Value KW = G.input("k_norm_weight", bf16, {HeadDim});
  Value Cos = G.input("cos", bf16, {"T", HeadDim / 2});
  Value Sin = G.input("sin", bf16, {"T", HeadDim / 2});
  Value Eps = G.scalar("eps", f32);
  Value QRot = nn::rope(nn::rmsNorm(Q, QW, Eps), Cos, Sin);
  Value KRot = nn::rope(nn::rmsNorm(K, KW, Eps), Cos, Sin);
  G.output("q_rot", QRot);
  G.output("k_rot", KRot);
  E.Dims = {{"T", DefaultRows}};
  E.Scalars = {{"eps", 1e-6}};
  // Each norm and its rotation: one row kernel (the halves are parts of the
  // normalized rows, put back together by the rotation's concat).
  E.SameKernel = ropeGroups(G, QRot, KRot);
  return E;
}

namespace {

struct Entry {
  const char *Name;
  ExampleGraph (*Build)();
};

constexpr Entry Registry[] = {
    {"l1_chain", buildL1Chain},       {"sum_abs", buildSumAbs},
    {"add_rmsnorm", buildAddRmsNorm}, {"add_layernorm", buildAddLayerNorm},
    {"softmax_mask", buildSoftmaxMask}, {"swiglu", buildSwiglu},
    {"rope", buildRope},              {"llama_block", buildLlamaBlock},
    {"dropout", buildDropout},        {"group_norm", buildGroupNorm},
    {"bias_grad", buildBiasGrad},     {"head_rmsnorm", buildHeadRmsNorm},
    {"qk_norm_rope", buildQkNormRope}, {"layernorm_backward", buildLayerNormBackward},
};

} // namespace

const std::vector<std::string> &exampleNames() {
  static const std::vector<std::string> Names = [] {
    std::vector<std::string> N;
    for (const Entry &E : Registry)
      N.push_back(E.Name);
    return N;
  }();
  return Names;
}

ExampleGraph buildExample(llvm::StringRef Name) {
  for (const Entry &E : Registry)
    if (Name == E.Name)
      return E.Build();
  fail("unknown example '{}'; expected one of: {}", Name.str(),
       fmt::join(exampleNames(), ", "));
}

} // namespace jitfuse::examples
