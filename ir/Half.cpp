//===- ir/Half.cpp - exact f16/bf16 conversions and dtype rounding --------===//
//
// One generic rounding routine works for f16, bf16 and f32 from a double: it
// scales the value so that one unit in the last place of the target format is
// 1.0 (exact: a power-of-two scale), rounds to an integer with ties to even,
// and scales back. Encoding the already-rounded value into bits is then exact
// arithmetic on powers of two.
//
//===----------------------------------------------------------------------===//
#include "ir/Half.h"

#include "support/Error.h"

#include <algorithm>

#include <cmath>
#include <cstring>
#include <limits>

namespace jitfuse {

namespace {
/// A binary floating-point format with an implicit leading bit.
struct FloatFormat {
  int FracBits; // explicit fraction bits
  int ExpBits;  // width of the exponent field
  int minExp() const { return 2 - (1 << (ExpBits - 1)); }
  int maxExp() const { return (1 << (ExpBits - 1)) - 1; }
  int bias() const { return maxExp(); }
};
constexpr FloatFormat HalfFormat{10, 5};
constexpr FloatFormat BF16Format{7, 8};
constexpr FloatFormat F32Format{23, 8};
} // namespace

/// Rounds X (|X| < 2^60, so every step is exact) to an integer, ties to even.
/// Written out instead of std::nearbyint so the result does not depend on the
/// floating-point environment's rounding mode.
static double roundHalfEven(double X) {
  double Lo = std::floor(X);
  double Frac = X - Lo;
  if (Frac > 0.5)
    return Lo + 1;
  if (Frac < 0.5)
    return Lo;
  return std::fmod(Lo, 2.0) == 0 ? Lo : Lo + 1;
}

/// V rounded to the nearest value of format F (ties to even), as a double.
static double roundToFormat(double V, const FloatFormat &F) {
  if (!std::isfinite(V) || V == 0)
    return V;
  int E;
  std::frexp(V, &E); // |V| in [2^(E-1), 2^E)
  // Below the normal range the quantum stays at the subnormal spacing.
  int Exp = std::max(E - 1, F.minExp());
  double Scaled = std::ldexp(V, F.FracBits - Exp); // |Scaled| < 2^(FracBits+1)
  double R = std::ldexp(roundHalfEven(Scaled), Exp - F.FracBits);
  if (R == 0)
    return std::copysign(0.0, V);
  // Rounding up past the largest finite value (including the tie, since the
  // largest finite has an odd fraction) overflows to Inf, as IEEE says.
  if (std::fabs(R) >= std::ldexp(1.0, F.maxExp() + 1))
    return std::copysign(std::numeric_limits<double>::infinity(), V);
  return R;
}

static uint64_t doubleBits(double V) {
  uint64_t B;
  std::memcpy(&B, &V, sizeof(B));
  return B;
}

static double bitsToDouble(uint64_t B) {
  double V;
  std::memcpy(&V, &B, sizeof(V));
  return V;
}

/// Bits of V in format F (sign | exponent | fraction), round to nearest even.
static uint32_t encodeFormat(double V, const FloatFormat &F) {
  uint32_t Sign = std::signbit(V) ? 1u << (F.ExpBits + F.FracBits) : 0;
  uint32_t ExpAllOnes = ((1u << F.ExpBits) - 1) << F.FracBits;
  if (std::isnan(V)) {
    // Keep the top payload bits and force the quiet bit so the NaN can never
    // turn into an Inf pattern.
    uint64_t DFrac = doubleBits(V) & ((uint64_t(1) << 52) - 1);
    uint32_t Frac = static_cast<uint32_t>(DFrac >> (52 - F.FracBits)) |
                    (1u << (F.FracBits - 1));
    return Sign | ExpAllOnes | Frac;
  }
  double R = roundToFormat(V, F);
  if (std::isinf(R))
    return Sign | ExpAllOnes;
  double A = std::fabs(R);
  if (A == 0)
    return Sign;
  int E;
  std::frexp(A, &E);
  int Exp = E - 1;
  if (Exp < F.minExp()) {
    // Subnormal: the fraction counts multiples of the smallest subnormal.
    auto Frac = static_cast<uint32_t>(std::ldexp(A, F.FracBits - F.minExp()));
    return Sign | Frac;
  }
  auto Frac = static_cast<uint32_t>(
      std::ldexp(A, F.FracBits - Exp) - std::ldexp(1.0, F.FracBits));
  auto ExpField = static_cast<uint32_t>(Exp + F.bias());
  return Sign | (ExpField << F.FracBits) | Frac;
}

static double decodeFormat(uint32_t Bits, const FloatFormat &F) {
  bool Negative = (Bits >> (F.ExpBits + F.FracBits)) & 1;
  uint32_t ExpField = (Bits >> F.FracBits) & ((1u << F.ExpBits) - 1);
  uint32_t Frac = Bits & ((1u << F.FracBits) - 1);
  double Mag;
  if (ExpField == (1u << F.ExpBits) - 1) {
    if (Frac == 0) {
      Mag = std::numeric_limits<double>::infinity();
    } else {
      // A quiet NaN carrying the payload in the top fraction bits.
      uint64_t B = (uint64_t(0x7ff) << 52) | (uint64_t(1) << 51) |
                   (uint64_t(Frac) << (52 - F.FracBits));
      Mag = bitsToDouble(B);
    }
  } else if (ExpField == 0) {
    Mag = std::ldexp(static_cast<double>(Frac), F.minExp() - F.FracBits);
  } else {
    Mag = std::ldexp(static_cast<double>(Frac + (1u << F.FracBits)),
                     static_cast<int>(ExpField) - F.bias() - F.FracBits);
  }
  return Negative ? -Mag : Mag;
}

uint16_t doubleToHalfBits(double V) {
  return static_cast<uint16_t>(encodeFormat(V, HalfFormat));
}
uint16_t floatToHalfBits(float V) {
  return doubleToHalfBits(static_cast<double>(V));
}
double halfBitsToDouble(uint16_t Bits) { return decodeFormat(Bits, HalfFormat); }
float halfBitsToFloat(uint16_t Bits) {
  return static_cast<float>(halfBitsToDouble(Bits)); // exact
}

uint16_t doubleToBF16Bits(double V) {
  return static_cast<uint16_t>(encodeFormat(V, BF16Format));
}
uint16_t floatToBF16Bits(float V) {
  return doubleToBF16Bits(static_cast<double>(V));
}
double bf16BitsToDouble(uint16_t Bits) { return decodeFormat(Bits, BF16Format); }
float bf16BitsToFloat(uint16_t Bits) {
  return static_cast<float>(bf16BitsToDouble(Bits)); // exact
}

/// Truncates toward zero and saturates at [Lo, Hi]; NaN -> 0.
static double saturateInt(double V, double Lo, double Hi) {
  if (std::isnan(V))
    return 0;
  return std::clamp(std::trunc(V), Lo, Hi);
}

double roundToDType(double V, DType T) {
  switch (T) {
  case DType::F64:
    return V;
  case DType::F32:
    return roundToFormat(V, F32Format);
  case DType::F16:
    return roundToFormat(V, HalfFormat);
  case DType::BF16:
    return roundToFormat(V, BF16Format);
  case DType::I32:
    return saturateInt(V, -2147483648.0, 2147483647.0);
  case DType::I64:
    // +-2^63: INT64_MAX itself has no double; see the header.
    return saturateInt(V, -9223372036854775808.0, 9223372036854775808.0);
  case DType::Bool:
    return V != 0 ? 1.0 : 0.0;
  }
  JITFUSE_UNREACHABLE("unknown dtype");
  return V;
}

} // namespace jitfuse
