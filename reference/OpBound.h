//===- reference/OpBound.h - one op's error bound ---------------*- C++ -*-===//
//
// The per-element rules of reference/ErrorBound.cpp's table for float
// element-wise ops and casts (reference/OpBound.cpp), for the BoundWalker
// that applies them over tensors. Internal to the reference oracle.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Node.h"

#include <limits>

namespace jitfuse::bound {

inline constexpr double Inf = std::numeric_limits<double>::infinity();

/// The type a node of dtype T computes in: f64 for f64, else f32.
DType computeOf(DType T);
/// Subnormal spacing: the absolute error floor of one rounding into T.
double tinyOf(DType T);
/// Unit roundoff of rounding a value into float type T (half its epsilon;
/// 0 for integer types).
double unitOf(DType T);
/// The largest finite value of T (+inf for integer types).
double maxFinite(DType T);
/// Whether "x is nonzero" may differ between the reference and the GPU.
bool truthUncertain(double X, double Ex);
/// An operand's bound as the node's compute type sees it.
double promote(double X, double Ex, DType From, DType Compute);

/// Bound of unary float op O on x (bound Ex) with value V, computed in C;
/// Fast: CompileOptions::FastMath's sigmoid and silu.
double unaryFloat(Op O, double X, double Ex, double V, DType C, bool Fast);
/// Bound of binary float op O on a, b; RowDivisor: a division a row kernel
/// may apply as a multiplication by the divisor's reciprocal.
double binaryFloat(Op O, double A, double Ea, double B, double Eb, double V, DType C,
                   bool RowDivisor);
/// Bound of a cast of x (bound Ex) from From to To.
double castBound(DType From, DType To, double X, double Ex);

} // namespace jitfuse::bound
