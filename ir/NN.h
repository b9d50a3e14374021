//===- ir/NN.h - nn composites built from builder primitives ----*- C++ -*-===//
//
// Each composite expands into ordinary builder ops, so the fusion pass sees
// (and can explain) every piece; nothing here needs its own kernel or its own
// interpreter rule. Half-precision inputs are computed in f32 and rounded
// back to the input's dtype once, at the end.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <cstdint>

namespace jitfuse::nn {

/// y = x * rsqrt(mean(x*x, last axis) + eps) * weight. Weight broadcasts to
/// X's last dim ([H] for X [.., H]); Eps is a rank-0 scalar or constant.
Value rmsNorm(Value X, Value Weight, Value Eps);

/// Centred two-pass LayerNorm over the last axis:
/// y = (x - mean) * rsqrt(mean((x - mean)^2) + eps) * weight + bias.
Value layerNorm(Value X, Value Weight, Value Bias, Value Eps);

/// The gradients of a norm from the statistics its forward saved: Dx in
/// X's dtype; Dw (and Db) summed over every axis but the last, in the
/// compute type, shaped [1, .., 1, H].
struct NormGrads {
  Value Dx, Dw, Db; // Db: layerNormBackward only
};

/// LayerNorm backward over the last axis of X [.., H] from the forward's
/// f32 Mean and Rstd (1 / sqrt(var + eps)), shaped [.., 1]: xhat = (x -
/// mean) * rstd, dx = rstd * (w dy - mean(w dy) - xhat * mean(w dy xhat)),
/// dw = sum(dy * xhat), db = sum(dy). Dy is shaped like X.
NormGrads layerNormBackward(Value X, Value Dy, Value Weight, Value Mean, Value Rstd);

/// RMSNorm backward: xhat = x * rstd, dx = rstd * (w dy - xhat * mean(w dy
/// xhat)), dw = sum(dy * xhat).
NormGrads rmsNormBackward(Value X, Value Dy, Value Weight, Value Rstd);

/// Max-subtracted softmax over the last axis.
Value softmax(Value X);

/// silu(Gate) * Up.
Value siluMul(Value Gate, Value Up);
/// Splits a merged [.., 2I] gate/up projection into [.., 0:I] (gate) and
/// [.., I:2I] (up) and returns siluMul of the halves.
Value swiglu(Value GateUp);

enum class RopeStyle {
  /// GPT-NeoX / LLaMA: rotates x[i] with x[i + D/2].
  HalfRotation,
  /// GPT-J: rotates the pairs (x[2i], x[2i+1]). Rank-3 X only.
  Interleaved,
};

/// Rotary position embedding. X is [T, Heads, D] or [B, T, Heads, D] (rank 3
/// only for Interleaved); Cos and Sin are [T, D/2] and broadcast over heads.
Value rope(Value X, Value Cos, Value Sin,
           RopeStyle Style = RopeStyle::HalfRotation);

/// Inverted dropout: zeroes each element with probability P (drawn from
/// rand_uniform keyed by Seed and Stream) and scales the rest by 1/(1-P).
/// P must be in [0, 1); P == 0 returns X unchanged.
Value dropout(Value X, double P, Value Seed, int64_t Stream = 0);

/// gelu(X + Bias), erf form or (TanhApprox) the tanh approximation. Bias
/// broadcasts to X.
Value geluBias(Value X, Value Bias, bool TanhApprox = false);

} // namespace jitfuse::nn
