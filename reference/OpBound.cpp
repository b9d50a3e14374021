//===- reference/OpBound.cpp - one op's error bound, element by element ---===//
//
// The per-element rules of the table in reference/ErrorBound.cpp for
// element-wise float ops and casts: given the reference's operand values,
// their bounds and the node's value, the node's bound. BoundWalker
// (ErrorBound.cpp) applies them over tensors, with the reductions.
//
//===----------------------------------------------------------------------===//
#include "reference/OpBound.h"

#include "reference/ErrorBound.h"
#include "reference/Tolerance.h"
#include "support/Error.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <numbers>

namespace jitfuse::bound {

DType computeOf(DType T) { return T == DType::F64 ? DType::F64 : DType::F32; }

/// Subnormal spacing: the absolute error floor of one rounding into T.
double tinyOf(DType T) {
  switch (T) {
  case DType::F64: return 0x1p-1074;
  case DType::F32: return 0x1p-149;
  case DType::F16: return 0x1p-24;
  case DType::BF16: return 0x1p-133;
  default: return 0;
  }
}

/// Unit roundoff of rounding a value into float type T (half its epsilon;
/// 0 for integer types): both the storage rounding and, for the compute
/// types f32/f64, one arithmetic rounding.
double unitOf(DType T) { return dtypeEpsilon(T) / 2; }

double maxFinite(DType T) {
  switch (T) {
  case DType::F64: return DBL_MAX;
  case DType::F32: return FLT_MAX;
  case DType::F16: return 65504.0;
  case DType::BF16: return 0x1.fep127;
  default: return Inf;
  }
}

/// Whether "x is nonzero" may differ between the reference and the GPU.
bool truthUncertain(double X, double Ex) {
  return Ex > 0 && (std::isnan(X) || Ex >= std::fabs(X));
}

namespace {

/// max |F'| over x - Ex, x, x + Ex and the listed extrema of F' inside.
template <typename Fn>
double maxAbsDerivative(Fn Deriv, double X, double Ex,
                        std::initializer_list<double> Extrema = {}) {
  double M = std::max({std::fabs(Deriv(X - Ex)), std::fabs(Deriv(X)),
                       std::fabs(Deriv(X + Ex))});
  for (double C : Extrema)
    if (C > X - Ex && C < X + Ex)
      M = std::max(M, std::fabs(Deriv(C)));
  return M;
}

double sigmoid(double X) { return 1.0 / (1.0 + std::exp(-X)); }

// Derivatives in forms that keep their tails: 1 - sigmoid(t) or 1 - tanh(t)^2
// computed as written round to 0 in double for large t, which would make a
// bound 0 where the GPU can differ by e^-t-sized amounts.
double sigmoidDeriv(double T) {
  double E = std::exp(-std::fabs(T));
  return E / ((1 + E) * (1 + E));
}
double tanhDeriv(double T) {
  double C = std::cosh(T);
  return 1 / (C * C);
}

/// The spelled-out sigmoid / silu: (1 or x) / (1 + exp(-x)); with Fast,
/// __fdividef(1 or x, 1 + __expf(-x)) in f32.
double sigmoidLike(Op O, double X, double Ex, double V, DType C, bool Fast) {
  const double U = unitOf(C);
  double P = 0;
  if (Ex > 0) {
    if (O == Op::Sigmoid) {
      P = Ex * sigmoidDeriv(std::max(std::fabs(X) - Ex, 0.0));
    } else {
      auto Deriv = [](double T) { return sigmoid(T) * (1 + T * sigmoid(-T)); };
      P = Ex * maxAbsDerivative(Deriv, X, Ex, {-2.3993572805154676, 2.3993572805154676});
    }
  }
  if (!std::isfinite(V))
    return P;
  if (Fast && C == DType::F32) {
    // __fdividef returns 0 once the denominator passes 2^126 (x below
    // about -87.3; the true value is under 88 * 2^-126 there): allow
    // anything between 0 and the value.
    if (-(X - Ex) > 87)
      return P + std::fabs(V) + 8 * tinyOf(C);
    // __expf: 2 + floor(1.173 |x|) ulp (CUDA programming guide, intrinsic
    // functions), scaled by sigmoid(-x) like expf below; the add rounds
    // once and __fdividef is within 2 ulp.
    double NExp = 2 + std::floor(1.173 * (std::fabs(X) + Ex));
    double Rel = sigmoid(-X) * (2 * NExp + 1) * U + 5 * U;
    return P + Rel * (std::fabs(V) + P) + 8 * tinyOf(C);
  }
  // expf(-x) overflows to inf past ln(FLT_MAX) = 88.72 (x below about
  // -88.7), and (1 or x) / inf is 0 where the value is e^x-sized: under
  // |x| 2^-127, a normal f32 for silu (x = -90: -7.4e-38). Allow anything
  // between 0 and the value (as __fdividef's 0 above). Found by the
  // error-bound test's graph of seed 2000328 (silu of a sum at -90).
  if (C != DType::F64 && -(X - Ex) > 88)
    return P + std::fabs(V) + 8 * tinyOf(C);
  double NExp = libraryUlps(Op::Exp, C);
  // exp(-x) / (1 + exp(-x)) = 1 - sigmoid(x) = sigmoid(-x); then the add
  // and the division round once each.
  double Rel = sigmoid(-X) * (2 * NExp + 1) * U + 2 * U;
  return P + Rel * (std::fabs(V) + P) + 8 * tinyOf(C);
}

/// gelu_tanh as the device computes it in f32 (jf_gelu_tanhf): x / (1 + e),
/// e = exp2f(a), a = x * fma(B, x * x, A) with f32-rounded literals A < 0,
/// B < 0. P is the propagated operand error.
double geluTanhF32(double X, double V, double P) {
  const double U = unitOf(DType::F32), Tiny = tinyOf(DType::F32);
  const double A = -2 * std::numbers::log2e * std::sqrt(2.0 / std::numbers::pi);
  const double Arg = X * (A * 0.044715 * X * X + A);
  // x * x, the literal B, the fma, the literal A and the product round once
  // each; B x^2 and A have one sign, so the fma does not cancel: 5 u of |a|.
  double ErrArg = 5 * U * std::fabs(Arg) + 2 * Tiny;
  // Past 2^126 __fdividef returns 0 (the value is under |x| 2^-126 there):
  // allow anything between 0 and the value.
  if (Arg + ErrArg > 125)
    return P + std::fabs(V) + 8 * Tiny;
  // e is off by ln 2 * ErrArg (relative) from the argument and 5 u from
  // exp2f's 2 ulp; 1 + e scales that by e / (1 + e) and rounds once;
  // __fdividef adds 2 ulp (5 u).
  double S = 1 / (1 + std::exp2(-Arg)); // e / (1 + e), without overflow
  double Rel = S * (std::numbers::ln2 * ErrArg + 5 * U) + U + 5 * U;
  return P + Rel * (std::fabs(V) + P) + 8 * Tiny;
}

double geluLike(Op O, double X, double Ex, double V, DType C) {
  const double U = unitOf(C), Tiny = tinyOf(C);
  const double TwoOverSqrtPi = 2 / std::sqrt(std::numbers::pi);
  const double K = std::sqrt(2.0 / std::numbers::pi), A = 0.044715;
  double P = 0;
  if (Ex > 0) {
    if (O == Op::Gelu) {
      auto Deriv = [](double T) {
        double Phi = 0.5 * std::erfc(-T / std::numbers::sqrt2);
        double Pdf = std::exp(-0.5 * T * T) / std::sqrt(2 * std::numbers::pi);
        return Phi + T * Pdf;
      };
      P = Ex * maxAbsDerivative(Deriv, X, Ex,
                                {-std::numbers::sqrt2, std::numbers::sqrt2});
    } else {
      auto Deriv = [&](double T) {
        double Z = K * (T + A * T * T * T);
        return sigmoid(2 * Z) + 0.5 * T * tanhDeriv(Z) * K * (1 + 3 * A * T * T);
      };
      P = Ex * maxAbsDerivative(Deriv, X, Ex);
    }
  }
  if (!std::isfinite(V))
    return P;
  if (O == Op::GeluTanh && C != DType::F64)
    return geluTanhF32(X, V, P);
  double One, ErrOne;
  if (O == Op::Gelu) {
    // 0.5 * x * (1 + erf(x * c)), c = 1/sqrt(2) as a literal of type C.
    double Z = X / std::numbers::sqrt2, Ef = std::erf(Z);
    double ErrZ = 2 * U * std::fabs(Z);
    double ErrF = TwoOverSqrtPi * std::exp(-Z * Z) * ErrZ +
                  (2 * libraryUlps(Op::Erf, C) + 1) * U * std::fabs(Ef) + 3 * Tiny;
    One = std::erfc(-Z); // 1 + erf(z), tail kept
    ErrOne = ErrF + U * std::fabs(One);
  } else {
    // 0.5 * x * (1 + tanh(c * (x + k * x * x * x))), literals c, k.
    double X3 = A * X * X * X, S = X + X3, Z = K * S, Th = std::tanh(Z);
    double ErrX3 = 4 * U * std::fabs(X3) + 3 * Tiny;
    double ErrS = ErrX3 + U * std::fabs(S) + Tiny;
    double ErrZ = K * ErrS + 2 * U * std::fabs(Z) + Tiny;
    double ErrT = tanhDeriv(Z) * ErrZ +
                  (2 * libraryUlps(Op::Tanh, C) + 1) * U * std::fabs(Th) + 3 * Tiny;
    One = 2 * sigmoid(2 * Z); // 1 + tanh(z), tail kept
    ErrOne = ErrT + U * std::fabs(One);
  }
  return P + 0.5 * (std::fabs(X) + Ex) * ErrOne + U * (std::fabs(V) + P) + 2 * Tiny;
}

} // namespace

/// An operand's bound as the node's compute type sees it.
double promote(double X, double Ex, DType From, DType Compute) {
  if (Compute == DType::F64 || !std::isfinite(X))
    return Ex; // every dtype converts to f64 exactly (i64 below 2^53)
  if (From != DType::F64 && !isInt(From))
    return Ex; // f32, f16, bf16 and bool values are f32 values
  if (Ex == 0 && static_cast<double>(static_cast<float>(X)) == X)
    return 0;
  return Ex + unitOf(DType::F32) * (std::fabs(X) + Ex) + tinyOf(DType::F32);
}

double unaryFloat(Op O, double X, double Ex, double V, DType C, bool Fast) {
  const double U = unitOf(C);
  // Own error of a library call (or, with 0 ulp, of one rounding) on top of
  // the propagated error P.
  auto Own = [&](double P) {
    if (!std::isfinite(V))
      return 0.0;
    double N = libraryUlps(O, C);
    return (2 * N + 1) * U * (std::fabs(V) + P) + (N + 1) * tinyOf(C);
  };
  double P = 0;
  switch (O) {
  // The rows of Ops.def whose Bound column is Lipschitz or Step.
#define JITFUSE_OP(...)
#define JITFUSE_UNARY(Name, Fn, Spelling, Result, Flag, Cuda, CudaInt, Ulp32,  \
                      Ulp64, Bound)                                            \
  JITFUSE_BOUND_CASE_##Bound(Name)
#define JITFUSE_BOUND_CASE_Lipschitz(Name) case Op::Name:
#define JITFUSE_BOUND_CASE_Step(Name) case Op::Name:
#define JITFUSE_BOUND_CASE_Rule(Name)
#include "ir/Ops.def"
#undef JITFUSE_BOUND_CASE_Lipschitz
#undef JITFUSE_BOUND_CASE_Step
#undef JITFUSE_BOUND_CASE_Rule
    if (opInfo(O).Bound == BoundRule::Lipschitz)
      return Ex;
    // Monotone and piecewise constant: the reference's own function tells
    // whether [x - Ex, x + Ex] holds a jump.
    return Ex > 0 && !(unaryReference(O, X - Ex) == unaryReference(O, X + Ex))
               ? Inf
               : 0;
  case Op::Exp:
  case Op::Exp2:
    if (Ex > 0)
      P = std::fabs(V) * std::expm1(O == Op::Exp ? Ex : Ex * std::numbers::ln2);
    return P + Own(P);
  case Op::Log:
  case Op::Log2:
    if (Ex > 0) {
      if (!(X - Ex > 0))
        return Inf;
      P = Ex / (X - Ex) / (O == Op::Log ? 1.0 : std::numbers::ln2);
    }
    return P + Own(P);
  case Op::Sqrt:
    if (Ex > 0) {
      if (!(X - Ex >= 0))
        return Inf;
      P = std::sqrt(Ex);
      if (X - Ex > 0)
        P = std::min(P, Ex / (2 * std::sqrt(X - Ex)));
    }
    return P + Own(P);
  case Op::Rsqrt:
    if (Ex > 0) {
      if (!(X - Ex > 0))
        return Inf;
      P = 0.5 * Ex * std::pow(X - Ex, -1.5);
    }
    return P + Own(P);
  case Op::Reciprocal:
    if (Ex > 0) {
      double A = std::fabs(X);
      if (!(A - Ex > 0))
        return Inf;
      P = Ex / (A * (A - Ex));
    }
    return P + Own(P);
  case Op::Sin:
  case Op::Cos:
    P = std::min(Ex, 2.0);
    return P + Own(P);
  case Op::Tanh:
    if (Ex > 0)
      P = Ex * tanhDeriv(std::max(std::fabs(X) - Ex, 0.0));
    return P + Own(P);
  case Op::Erf:
    if (Ex > 0) {
      double M = std::max(std::fabs(X) - Ex, 0.0);
      P = Ex * 2 / std::sqrt(std::numbers::pi) * std::exp(-M * M);
    }
    return P + Own(P);
  case Op::Sigmoid:
  case Op::Silu:
    return sigmoidLike(O, X, Ex, V, C, Fast);
  case Op::Gelu:
  case Op::GeluTanh:
    return geluLike(O, X, Ex, V, C);
  case Op::Not: // bounded in BoundWalker::element
  // Every op that is not unary, and cast.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_UNARY(...)
#include "ir/Ops.def"
    break;
  }
  fail("error bound: unary op {} on a float node is not modelled",
       opName(O).str());
}

double binaryFloat(Op O, double A, double Ea, double B, double Eb, double V,
                   DType C, bool RowDivisor) {
  const double U = unitOf(C);
  auto Rnd = [&](double P, double N = 0) {
    return std::isfinite(V)
               ? (2 * N + 1) * U * (std::fabs(V) + P) + (N + 1) * tinyOf(C)
               : 0.0;
  };
  double P = 0;
  switch (O) {
  case Op::Add:
  case Op::Sub:
    P = Ea + Eb;
    return P + Rnd(P);
  case Op::Mul:
    P = (Ea > 0 ? std::fabs(B) * Ea : 0) + (Eb > 0 ? std::fabs(A) * Eb : 0) +
        Ea * Eb;
    return P + Rnd(P);
  case Op::Div:
    if (Ea > 0 || Eb > 0) {
      double D = std::fabs(B) - Eb;
      if (!(D > 0))
        return Inf;
      P = (Ea + (Eb > 0 ? std::fabs(V) * Eb : 0)) / D;
    }
    // A divisor constant along the row may be applied as a * RN(1/b) (a
    // row kernel's jf_div_row): at most 2u + u^2 relative, taken as 3u.
    return P + Rnd(P, RowDivisor && C == DType::F32 ? 1 : 0);
  case Op::Max:
  case Op::Min:
    return std::max(Ea, Eb);
  case Op::Pow:
    if (Ea > 0 || Eb > 0) {
      if (A < 0 && Eb > 0)
        return Inf; // a negative base is defined for integer exponents only
      if (Ea > 0) {
        double M = std::fabs(A) - Ea;
        if (!(M > 0))
          return Inf;
        P += std::fabs(V) * std::fabs(B) * Ea / M;
      }
      if (Eb > 0)
        P += std::fabs(V) * std::fabs(std::log(std::fabs(A))) * Eb;
    }
    return P + Rnd(P, libraryUlps(Op::Pow, C));
  case Op::Mod: {
    if (Ea == 0 && Eb == 0)
      return 0; // fmod is exact
    double Ab = std::fabs(B);
    if (!(Ab - Eb > 0))
      return Inf;
    double Q = A / B, Eq = (Ea + std::fabs(Q) * Eb) / (Ab - Eb);
    // fmod(a, b) = a - trunc(a/b) b, and trunc jumps at nonzero integers.
    if (!(std::trunc(Q - Eq) == std::trunc(Q + Eq)))
      return Inf;
    return Ea + std::fabs(std::trunc(Q)) * Eb;
  }
  // Bounded in BoundWalker::element.
  case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq:
  case Op::Ne: case Op::And: case Op::Or:
  // Every op that is not binary.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_BINARY(...)
#include "ir/Ops.def"
    break;
  }
  fail("error bound: binary op {} on a float node is not modelled",
       opName(O).str());
}

double castBound(DType From, DType To, double X, double Ex) {
  if (To == DType::Bool)
    return truthUncertain(X, Ex) ? Inf : 0;
  if (Ex == 0 && !isFloat(To))
    return 0;
  if (isInt(To)) {
    // trunc toward zero jumps at every nonzero integer.
    if (!isFloat(From) || std::isnan(X) ||
        !(std::trunc(X - Ex) == std::trunc(X + Ex)))
      return Inf;
    return 0;
  }
  if (To == DType::F64 || !std::isfinite(X))
    return Ex;
  // An exact operand is rounded once on both sides (the GPU's f64/int ->
  // f16/bf16 goes through f32 rounded to odd, which equals one rounding).
  if (Ex == 0)
    return 0;
  return Ex + unitOf(To) * (2 * std::fabs(X) + Ex) + 2 * tinyOf(To);
}

} // namespace jitfuse::bound
