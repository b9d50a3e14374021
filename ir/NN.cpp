//===- ir/NN.cpp - neural-network composites of builder primitives --------===//
#include "ir/NN.h"

#include "support/Error.h"

#include <cmath>

namespace jitfuse::nn {

static std::string describe(Value V) {
  const Node &N = V.node();
  std::string Name = N.Name.empty() ? "" : fmt::format(" '{}'", N.Name);
  return fmt::format("%{} {}{} {}{}", V.id(), opName(N.Kind).str(), Name,
                     dtypeName(N.Type).str(), shapeStr(N.Dims));
}

static void checkValid(llvm::StringRef OpName, llvm::ArrayRef<Value> Vs) {
  for (Value V : Vs)
    if (!V.valid())
      fail("{}: an operand is an empty Value (not built by a Graph)",
           OpName.str());
}

/// The dtype a composite computes in: half types widen to f32 so that
/// reductions and the rsqrt/exp see full precision.
static DType computeType(llvm::StringRef OpName, Value X) {
  switch (X.dtype()) {
  case DType::F16:
  case DType::BF16:
  case DType::F32:
    return DType::F32;
  case DType::F64:
    return DType::F64;
  default:
    fail("{}: input {} has a non-float dtype; expected f16, bf16, f32 or f64",
         OpName.str(), describe(X));
  }
}

static void checkHasLastAxis(llvm::StringRef OpName, Value X) {
  if (X.rank() == 0)
    fail("{}: input {} has rank 0; expected a tensor with a last axis",
         OpName.str(), describe(X));
}

/// A per-feature parameter (weight or bias) must broadcast to [H], the last
/// dim of X; anything larger would silently change the output's shape.
static void checkFeatureParam(llvm::StringRef OpName, llvm::StringRef Role,
                              Value P, Value X) {
  Dim H = X.shape().back();
  if (broadcastsTo(P.shape(), {H}))
    return;
  fail("{}: {} {} does not broadcast to the last dim of input {}; expected "
       "shape [{}]",
       OpName.str(), Role.str(), describe(P), describe(X), H.str());
}

static void checkEps(llvm::StringRef OpName, Value Eps) {
  if (Eps.rank() != 0)
    fail("{}: eps {} must be rank 0 (a g.scalar or g.constant)", OpName.str(),
         describe(Eps));
  if (Eps.dtype() == DType::Bool)
    fail("{}: eps {} is bool; expected a numeric scalar", OpName.str(),
         describe(Eps));
}

Value rmsNorm(Value X, Value Weight, Value Eps) {
  checkValid("rmsNorm", {X, Weight, Eps});
  checkHasLastAxis("rmsNorm", X);
  DType T = computeType("rmsNorm", X);
  checkFeatureParam("rmsNorm", "weight", Weight, X);
  checkEps("rmsNorm", Eps);
  Value R = cast(X, T);
  Value Inv = rsqrt(mean(R * R) + Eps);
  return cast(R * Inv * cast(Weight, T), X.dtype());
}

Value layerNorm(Value X, Value Weight, Value Bias, Value Eps) {
  checkValid("layerNorm", {X, Weight, Bias, Eps});
  checkHasLastAxis("layerNorm", X);
  DType T = computeType("layerNorm", X);
  checkFeatureParam("layerNorm", "weight", Weight, X);
  checkFeatureParam("layerNorm", "bias", Bias, X);
  checkEps("layerNorm", Eps);
  // Centring before squaring avoids the cancellation of E[x^2] - E[x]^2.
  Value R = cast(X, T);
  Value D = R - mean(R);
  Value Inv = rsqrt(mean(D * D) + Eps);
  return cast(D * Inv * cast(Weight, T) + cast(Bias, T), X.dtype());
}

/// A norm backward's operands: X of rank >= 2, Dy like X, the weight over
/// the last dim, each statistic shaped like X with a last dim of 1.
static void checkNormGrads(llvm::StringRef OpName, Value X, Value Dy, Value Weight,
                           llvm::ArrayRef<Value> Stats) {
  if (X.rank() < 2)
    fail("{}: input {} has rank {}; expected rows of a last axis (rank >= 2)", OpName.str(),
         describe(X), X.rank());
  if (Dy.shape() != X.shape())
    fail("{}: dy {} is not shaped like input {}", OpName.str(), describe(Dy), describe(X));
  checkFeatureParam(OpName, "weight", Weight, X);
  Shape S(X.shape().begin(), X.shape().end());
  S.back() = Dim(1);
  for (Value St : Stats)
    if (St.shape() != S || !isFloat(St.dtype()))
      fail("{}: statistic {} is not a float tensor of shape {}", OpName.str(), describe(St),
           shapeStr(S));
}

/// Every axis of X but the last.
static std::vector<int64_t> rowAxes(Value X) {
  std::vector<int64_t> Axes(X.rank() - 1);
  for (size_t I = 0; I < Axes.size(); ++I)
    Axes[I] = static_cast<int64_t>(I);
  return Axes;
}

NormGrads layerNormBackward(Value X, Value Dy, Value Weight, Value Mean, Value Rstd) {
  checkValid("layerNormBackward", {X, Dy, Weight, Mean, Rstd});
  DType T = computeType("layerNormBackward", X);
  checkNormGrads("layerNormBackward", X, Dy, Weight, {Mean, Rstd});
  Value G = cast(Dy, T), W = cast(Weight, T);
  Value Xh = (cast(X, T) - cast(Mean, T)) * cast(Rstd, T);
  Value Wg = W * G;
  NormGrads R;
  R.Dx = cast(cast(Rstd, T) * (Wg - mean(Wg) - Xh * mean(Wg * Xh)), X.dtype());
  R.Dw = sum(G * Xh, rowAxes(X));
  R.Db = sum(G, rowAxes(X));
  return R;
}

NormGrads rmsNormBackward(Value X, Value Dy, Value Weight, Value Rstd) {
  checkValid("rmsNormBackward", {X, Dy, Weight, Rstd});
  DType T = computeType("rmsNormBackward", X);
  checkNormGrads("rmsNormBackward", X, Dy, Weight, {Rstd});
  Value G = cast(Dy, T), W = cast(Weight, T);
  Value Xh = cast(X, T) * cast(Rstd, T);
  Value Wg = W * G;
  NormGrads R;
  R.Dx = cast(cast(Rstd, T) * (Wg - Xh * mean(Wg * Xh)), X.dtype());
  R.Dw = sum(G * Xh, rowAxes(X));
  return R;
}

Value softmax(Value X) {
  checkValid("softmax", {X});
  checkHasLastAxis("softmax", X);
  DType T = computeType("softmax", X);
  // Subtracting the row max keeps exp() from overflowing.
  Value R = cast(X, T);
  Value E = exp(R - reduceMax(R));
  return cast(E / sum(E), X.dtype());
}

Value siluMul(Value Gate, Value Up) {
  checkValid("siluMul", {Gate, Up});
  if (!broadcastShapes(Gate.shape(), Up.shape()))
    fail("siluMul: gate {} and up {} do not broadcast; expected equal shapes",
         describe(Gate), describe(Up));
  return silu(Gate) * Up;
}

Value swiglu(Value GateUp) {
  checkValid("swiglu", {GateUp});
  checkHasLastAxis("swiglu", GateUp);
  const Dim &Last = GateUp.shape().back();
  if (Last.isDynamic() || Last.Size % 2 != 0)
    fail("swiglu: input {} has last dim {}; expected a static even size 2*I "
         "(gate then up)",
         describe(GateUp), Last.str());
  int64_t I = Last.Size / 2;
  return siluMul(slice(GateUp, 0, I), slice(GateUp, I, 2 * I));
}

/// Checks that a cos/sin table is [T, D/2] for X's T and returns it widened
/// to the compute type.
static Value ropeTable(llvm::StringRef Role, Value Table, Value X, int64_t Half,
                       DType T) {
  const Dim &TDim = X.shape()[X.rank() - 3];
  const Shape &S = Table.shape();
  if (S.size() != 2 || S[1] != Dim(Half) || (S[0] != TDim && !S[0].isStatic(1)))
    fail("rope: {} {} does not match input {}; expected shape [{},{}]",
         Role.str(), describe(Table), describe(X), TDim.str(), Half);
  computeType("rope", Table);
  return cast(Table, T);
}

Value rope(Value X, Value Cos, Value Sin, RopeStyle Style) {
  checkValid("rope", {X, Cos, Sin});
  DType T = computeType("rope", X);
  if (X.rank() != 3 && X.rank() != 4)
    fail("rope: input {} has rank {}; expected [T,Heads,D] or [B,T,Heads,D]",
         describe(X), X.rank());
  const Dim &DDim = X.shape().back();
  if (DDim.isDynamic() || DDim.Size <= 0 || DDim.Size % 2 != 0)
    fail("rope: input {} has head dim {}; expected a static positive even "
         "size",
         describe(X), DDim.str());
  int64_t Half = DDim.Size / 2;
  Value C = ropeTable("cos", Cos, X, Half, T);
  Value S = ropeTable("sin", Sin, X, Half, T);
  Value R = cast(X, T);
  Dim TDim = C.shape()[0];

  if (Style == RopeStyle::HalfRotation) {
    Value Cb = reshape(C, {TDim, 1, Half});
    Value Sb = reshape(S, {TDim, 1, Half});
    Value X1 = slice(R, 0, Half);
    Value X2 = slice(R, Half, 2 * Half);
    Value Out = concat({X1 * Cb - X2 * Sb, X2 * Cb + X1 * Sb});
    return cast(Out, X.dtype());
  }

  // Interleaved pairs become a trailing axis of 2, which needs one more rank;
  // with MaxRank 4 that leaves room for [T,Heads,D] only.
  if (X.rank() != 3)
    fail("rope: interleaved style supports rank-3 input [T,Heads,D] only; got "
         "{} (fold B into T first)",
         describe(X));
  const Shape &XS = X.shape();
  Value Pairs = reshape(R, {XS[0], XS[1], Half, 2});
  Value Cb = reshape(C, {TDim, 1, Half, 1});
  Value Sb = reshape(S, {TDim, 1, Half, 1});
  Value Even = slice(Pairs, 0, 1);
  Value Odd = slice(Pairs, 1, 2);
  Value Out = concat({Even * Cb - Odd * Sb, Odd * Cb + Even * Sb});
  return cast(reshape(Out, XS), X.dtype());
}

Value dropout(Value X, double P, Value Seed, int64_t Stream) {
  checkValid("dropout", {X, Seed});
  computeType("dropout", X);
  if (!(P >= 0.0 && P < 1.0))
    fail("dropout: probability {} is out of range for input {}; expected "
         "0 <= p < 1",
         P, describe(X));
  if (P == 0.0)
    return X;
  Graph &G = X.graph();
  Value Keep = ge(randUniform(Seed, X.shape(), Stream), G.constant(P));
  Value Scaled = X * (1.0 / (1.0 - P));
  return cast(where(Keep, Scaled, G.constant(0.0, X.dtype())), X.dtype());
}

Value geluBias(Value X, Value Bias, bool TanhApprox) {
  checkValid("geluBias", {X, Bias});
  if (!broadcastsTo(Bias.shape(), X.shape()))
    fail("geluBias: bias {} does not broadcast to input {}; expected a shape "
         "such as [{}]",
         describe(Bias), describe(X),
         X.rank() ? X.shape().back().str() : std::string("1"));
  Value Y = X + Bias;
  return TanhApprox ? geluTanh(Y) : gelu(Y);
}

} // namespace jitfuse::nn
