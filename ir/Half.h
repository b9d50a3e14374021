//===- ir/Half.h - exact f16/bf16 conversions and dtype rounding -*- C++ -*-===//
//
// Bit-exact conversions between doubles/floats and the two 16-bit float
// formats, and the rounding every stored value goes through. All rounding is
// IEEE round-to-nearest-even done directly from the double (never via float:
// double -> float -> f16 can round twice and land on the wrong side of a tie).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Types.h"

#include <cstdint>

namespace jitfuse {

/// IEEE binary16 bits of V, round-to-nearest-even. Overflow gives +-Inf,
/// values below half the smallest subnormal give +-0, NaN gives a quiet NaN
/// with the sign and the top payload bits kept.
uint16_t doubleToHalfBits(double V);
uint16_t floatToHalfBits(float V);
/// The exact value of f16 bits (every f16 is a float and a double).
double halfBitsToDouble(uint16_t Bits);
float halfBitsToFloat(uint16_t Bits);

/// bfloat16 bits of V (the top half of an f32), round-to-nearest-even, with
/// the same Inf/NaN/subnormal rules as above.
uint16_t doubleToBF16Bits(double V);
uint16_t floatToBF16Bits(float V);
double bf16BitsToDouble(uint16_t Bits);
float bf16BitsToFloat(uint16_t Bits);

/// The value a tensor of dtype T stores for V:
///   f64:      V.
///   f32/f16/bf16: V rounded to nearest even in that format (overflow to Inf,
///             NaN stays NaN, gradual underflow).
///   i32/i64:  truncated toward zero, NaN -> 0, saturated at the type's range.
///             i64 saturation yields +-2^63 as a double (INT64_MAX is not a
///             double); encode() maps that back to INT64_MAX.
///   bool:     V != 0 -> 1 else 0 (so NaN -> 1, as in C++).
double roundToDType(double V, DType T);

} // namespace jitfuse
