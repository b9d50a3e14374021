//===- reference/ErrorBound.cpp - forward error bounds of the reference ---===//
//
// Running (forward) error analysis, first order, element by element, in
// topological (id) order over the fp64 values the interpreter holds
// (interpretVisiting). E(n) is a bound on |gpu(n) - ref(n)| where ref(n) is
// the reference's unrounded value
// and gpu(n) what a correct fused or unfused execution holds for node n.
//
// Notation: x, a, b, c operand values (reference); Ex, Ea, ... their bounds;
// v the node's value; u the unit roundoff of the node's compute type (2^-24
// for every float node but f64, 2^-53 for f64); "rnd(m)" one rounding of a
// value of magnitude up to m: u*m + tiny (tiny = the compute type's subnormal
// spacing). A library function documented as "n ulp" (CUDA C++ Programming
// Guide, Mathematical Functions appendix: n ulp from the *correctly rounded*
// result, so n + 1/2 ulp from the exact one) contributes (2n+1)*u*|v|; n is
// the op's Ulp32/Ulp64 column in ir/Ops.def.
//
//   node                     E
//   -----------------------  ---------------------------------------------
//   input scalar constant    0   (exact by contract; scalars and constants
//                                 are rounded to their dtype by both sides)
//   rand_uniform             0   (bit-identical on both sides)
//   broadcast reshape        the operand's E, moved like the values
//   slice concat
//   operand promotion        + rnd(|x| + Ex) when an f32-computed node reads
//                            an f64 value, or an integer beyond 2^24, that
//                            f32 cannot hold
//   neg abs relu             Ex                           (exact, 1-Lipschitz;
//                                                          Bound Lipschitz)
//   max min                  max(Ea, Eb)                  (exact, 1-Lipschitz)
//   where(c, a, b)           E of the chosen branch; +inf when c uncertain
//   add sub                  Ea + Eb + rnd
//   mul                      |b|Ea + |a|Eb + EaEb + rnd
//   div reciprocal           (Ea + |v|Eb) / (|b| - Eb) + rnd   (+inf if Eb >= |b|)
//                            (f32 div by a divisor constant along the row:
//                            3 rnd, for a * RN(1/b) in row kernels)
//   fma                      |b|Ea + |a|Eb + EaEb + Ec + rnd   (one rounding)
//   exp exp2                 |v| expm1(Ex [* ln 2]) + lib
//   log log2                 Ex / (x - Ex) [/ ln 2] + lib  (+inf if x - Ex <= 0)
//   sqrt                     min(Ex / (2 sqrt(x - Ex)), sqrt(Ex)) + rnd
//   rsqrt                    Ex (x - Ex)^-1.5 / 2 + lib     (+inf if x - Ex <= 0)
//   sin cos                  min(Ex, 2) + lib
//   tanh erf sigmoid         Ex max|f'| on [x - Ex, x + Ex] + lib (|f'| falls
//                            with |x|: taken at max(|x| - Ex, 0)); derivatives
//                            in forms that keep their tails (1/cosh^2, not
//                            1 - tanh^2, which is 0 in double for large x)
//   silu gelu gelu_tanh      Ex max|f'| over x - Ex, x, x + Ex and the
//                            interior extrema of f' (silu +-2.3994, gelu
//                            +-sqrt 2; none listed for gelu_tanh: first order)
//                            + the spelled-out evaluation's own error:
//                            silu/sigmoid = x or 1 over 1 + exp(-x), with
//                            expf (2 ulp) and IEEE division (one rounding).
//                            gelu / gelu_tanh f64: each step of
//                            0.5 x (1 + erf(x c)) / 0.5 x (1 + tanh(c (x + k x^3)))
//                            with f32-rounded literals c, k; gelu_tanh f32:
//                            x / (1 + exp2f(x (A + B x^2))) with __fdividef
//                            (geluTanhF32; anything from 0 past a > 125)
//   pow                      |v| (|b| Ea / (|a| - Ea) + |ln a| Eb) + lib
//   mod (float)              Ea + |trunc(a/b)| Eb (fmod is exact); +inf if
//                            a/b +- its error crosses a nonzero integer
//   floor ceil (float)       0, or +inf if [x - Ex, x + Ex] holds a jump
//                            (Bound Step: a jump of unaryReference)
//   lt le gt ge eq ne        0, or +inf (uncertain) if |a - b| <= Ea + Eb
//                            with Ea + Eb > 0 (or a NaN operand with error)
//   not and or, cast->bool   +inf if an operand's truth is uncertain
//                            (E >= |x|, E > 0), unless the result is decided
//                            by a certain operand (false and _, true or _)
//   cast float->int          0, or +inf if trunc jumps in [x - Ex, x + Ex]
//   integer ops              0 when every operand is exact, else +inf
//   cast to float T          Ex if T is f64 or nothing can differ (Ex = 0 and
//                            one rounding of the same value on both sides);
//                            else Ex + u_T (2|x| + Ex) (both sides round, to
//                            different neighbours); f64/int -> f16/bf16
//                            rounds once on the GPU too (through f32
//                            rounded to odd)
//   sum (L terms)            sum(E_i) + gamma_d sum(|x_i| + E_i), gamma_d =
//                            d u / (1 - d u), d = summationDepth(L)
//   mean                     E_sum / L + rnd
//   reduce_max reduce_min    max(E_i)
//   integer reductions       0 when every term is exact, else +inf
//
// Then, per float node: a NaN bound becomes +inf; a computed (non-leaf,
// non-view, non-cast) f16/bf16 node may be materialized (stored in its
// dtype) at a kernel boundary, and the unfused run stores every node, so it
// gets + u_T (|v| + E) + tiny_T; a value whose |v| + E passes the largest
// finite value of its compute or storage type may overflow to inf: +inf.
// Errors of non-finite values are not modelled: an op whose reference value
// is +-inf or NaN from exact operands gets 0 (the GPU gets the same special
// value), and a NaN bound from inexact ones becomes +inf.
//
// interpretWithBounds() adds, per output element, the rounding of the
// reference's own output to its dtype: + u_T |v| + tiny_T.
//
//===----------------------------------------------------------------------===//
#include "reference/ErrorBound.h"

#include "codegen/LaunchRule.h"
#include "ir/ReduceForm.h"
#include "reference/Parallel.h"
#include "reference/Tolerance.h"
#include "support/Error.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <numbers>

namespace jitfuse {

namespace {

constexpr double Inf = std::numeric_limits<double>::infinity();

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

/// Computes node bounds one node at a time, in id order, from the values
/// the interpreter holds at that moment (NodeVisitor).
class BoundWalker {
public:
  /// A bound is dropped after its last use (outputs are kept), as the
  /// interpreter drops values.
  BoundWalker(const Graph &G, const Bindings &B, bool FastMath)
      : G(G), B(B), FastMath(FastMath), Bnd(G.size()), LastUse(G.size(), 0), IsOutput(G.size(), false) {
    for (const GraphOutput &O : G.outputs())
      IsOutput[O.Id] = true;
    for (NodeId Id = 0; Id < G.size(); ++Id)
      for (NodeId Op : G.node(Id).Operands)
        LastUse[Op] = std::max(LastUse[Op], Id);
  }

  /// A division whose divisor is constant along the last axis (a row's
  /// reduction result broadcast over the row): row kernels may apply it as
  /// a multiplication by its reciprocal.
  bool rowDivisor(const Node &N) const {
    const Node &D = G.node(N.Operands[1]);
    return !N.Dims.empty() && !N.Dims.back().isStatic(1) &&
           (D.Dims.empty() || D.Dims.back().isStatic(1));
  }

  /// Node Id's bound; Vals holds Id's value and its operands' values.
  void visit(NodeId Id, const std::vector<HostTensor> &Vals) {
    const Node &N = G.node(Id);
    HostTensor &Out = Bnd[Id];
    switch (opKind(N.Kind)) {
    case OpKind::Leaf:
    case OpKind::Random:
      Out.Dims = Vals[Id].Dims;
      Out.Data.assign(Vals[Id].Data.size(), 0.0);
      break;
    case OpKind::View:
      Out = evaluateNode(G, B, Id, Bnd);
      break;
    case OpKind::Reduce:
      reduction(Id, Vals);
      break;
    case OpKind::Unary:
    case OpKind::Binary:
    case OpKind::Ternary:
      elementwise(Id, Vals);
      break;
    }
    Out.Type = DType::F64;
    finish(Id, Vals);
    for (NodeId Op : N.Operands)
      if (LastUse[Op] == Id && !IsOutput[Op])
        Bnd[Op] = HostTensor();
  }

  const std::vector<HostTensor> &bounds() const { return Bnd; }

private:
  void elementwise(NodeId Id, const std::vector<HostTensor> &Vals);
  void reduction(NodeId Id, const std::vector<HostTensor> &Vals);
  void finish(NodeId Id, const std::vector<HostTensor> &Vals);
  double element(const Node &N, llvm::ArrayRef<double> X,
                 llvm::MutableArrayRef<double> E, llvm::ArrayRef<DType> OpT,
                 double V) const;

  const Graph &G;
  const Bindings &B;
  bool FastMath;
  std::vector<HostTensor> Bnd;
  std::vector<NodeId> LastUse;
  std::vector<bool> IsOutput;
};

void BoundWalker::elementwise(NodeId Id,
                              const std::vector<HostTensor> &Vals) {
  const Node &N = G.node(Id);
  const HostTensor &V = Vals[Id];
  // Operands of the result's shape are read in place; others broadcast.
  llvm::SmallVector<std::vector<double>, 6> Broadcast;
  llvm::SmallVector<const double *, 3> X, E;
  llvm::SmallVector<DType, 3> OpT;
  Broadcast.reserve(2 * N.Operands.size());
  auto Operand = [&](const HostTensor &T) -> const double * {
    if (T.Dims == V.Dims)
      return T.Data.data();
    Broadcast.push_back(broadcastValues(T, V.Dims));
    return Broadcast.back().data();
  };
  for (NodeId Op : N.Operands) {
    X.push_back(Operand(Vals[Op]));
    E.push_back(Operand(Bnd[Op]));
    OpT.push_back(G.node(Op).Type);
  }
  HostTensor &Out = Bnd[Id];
  Out.Dims = V.Dims;
  Out.Data.resize(V.Data.size());
  parallelFor(V.numel(), ReferenceElementsPerPiece, [&](int64_t Begin, int64_t End) {
    double Xi[3], Ei[3];
    for (int64_t I = Begin; I < End; ++I) {
      for (size_t K = 0; K < X.size(); ++K) {
        Xi[K] = X[K][I];
        Ei[K] = E[K][I];
      }
      Out.Data[I] = element(N, llvm::ArrayRef<double>(Xi, X.size()),
                            llvm::MutableArrayRef<double>(Ei, X.size()), OpT, V.Data[I]);
    }
  });
}

double BoundWalker::element(const Node &N, llvm::ArrayRef<double> X,
                            llvm::MutableArrayRef<double> E,
                            llvm::ArrayRef<DType> OpT, double V) const {
  Op O = N.Kind;
  if (O == Op::Cast)
    return castBound(OpT[0], N.Type, X[0], E[0]);
  if (isComparison(O)) {
    // Compared in f32 unless both sides are f64 (an f64 scalar beside an
    // f32 tensor may be rounded first).
    DType C = OpT[0] == DType::F64 && OpT[1] == DType::F64 ? DType::F64
                                                             : DType::F32;
    double Ea = promote(X[0], E[0], OpT[0], C);
    double Eb = promote(X[1], E[1], OpT[1], C);
    if (Ea == 0 && Eb == 0)
      return 0;
    // Uncertain when the operands may be ordered differently on the GPU.
    return std::fabs(X[0] - X[1]) > Ea + Eb ? 0 : Inf;
  }
  if (O == Op::Not)
    return truthUncertain(X[0], E[0]) ? Inf : 0;
  if (isLogical(O)) {
    bool U0 = truthUncertain(X[0], E[0]), U1 = truthUncertain(X[1], E[1]);
    // A certain false (and) or true (or) operand decides the result.
    bool Decides0 = !U0 && ((X[0] != 0) == (O == Op::Or));
    bool Decides1 = !U1 && ((X[1] != 0) == (O == Op::Or));
    return Decides0 || Decides1 || !(U0 || U1) ? 0 : Inf;
  }
  if (O == Op::Where) {
    if (truthUncertain(X[0], E[0]))
      return Inf;
    size_t K = X[0] != 0 ? 1 : 2;
    if (!isFloat(N.Type))
      return E[K] > 0 ? Inf : 0;
    return promote(X[K], E[K], OpT[K], computeOf(N.Type));
  }
  if (!isFloat(N.Type)) {
    // Integer arithmetic is exact; an inexact operand can change anything.
    for (double Ek : E)
      if (Ek > 0)
        return Inf;
    return 0;
  }
  DType C = computeOf(N.Type);
  for (size_t K = 0; K < E.size(); ++K)
    E[K] = promote(X[K], E[K], OpT[K], C);
  switch (opKind(O)) {
  case OpKind::Unary:
    return unaryFloat(O, X[0], E[0], V, C, FastMath);
  case OpKind::Binary:
    return binaryFloat(O, X[0], E[0], X[1], E[1], V, C, O == Op::Div && rowDivisor(N));
  case OpKind::Ternary: {
    JITFUSE_CHECK(O == Op::Fma, "unknown ternary op");
    double P = (E[0] > 0 ? std::fabs(X[1]) * E[0] : 0) +
               (E[1] > 0 ? std::fabs(X[0]) * E[1] : 0) + E[0] * E[1] + E[2];
    if (!std::isfinite(V))
      return P;
    return P + unitOf(C) * (std::fabs(V) + P) + tinyOf(C);
  }
  case OpKind::Leaf:
  case OpKind::Reduce:
  case OpKind::View:
  case OpKind::Random:
    // Their bounds are not per-element arithmetic; the walker handles them
    // before it gets here.
    JITFUSE_UNREACHABLE("element(): a leaf, reduction, view or random op");
  }
  JITFUSE_UNREACHABLE("unknown op kind");
}

void BoundWalker::reduction(NodeId Id,
                            const std::vector<HostTensor> &Vals) {
  const Node &N = G.node(Id);
  NodeId OpId = N.Operands[0];
  const HostTensor &X = Vals[OpId];
  const std::vector<double> &Ex = Bnd[OpId].Data;
  DType OpT = G.node(OpId).Type;
  int64_t Len, Rows;
  HostTensor GX, GE;
  const double *XBase = X.Data.data(), *EBase = Ex.data();
  if (N.scope() == ReduceScope::All) {
    Len = X.numel();
    Rows = 1;
  } else if (N.scope() == ReduceScope::Axes) {
    // The terms of each output element gathered into a row; the bound only
    // depends on the length (the kernel's summation tree over L terms).
    GX = gatherReduced(X, N.reducedAxes(), Rows, Len);
    HostTensor EX = X;
    EX.Data = Ex;
    GE = gatherReduced(EX, N.reducedAxes(), Rows, Len);
    XBase = GX.Data.data();
    EBase = GE.Data.data();
  } else {
    Len = X.Dims.back();
    Rows = numelOf(llvm::ArrayRef<int64_t>(X.Dims).drop_back());
  }
  HostTensor &Out = Bnd[Id];
  Out.Dims = Vals[Id].Dims;
  Out.Data.assign(static_cast<size_t>(Rows), 0.0);
  DType C = computeOf(N.Type);
  const double U = unitOf(C), Tiny = tinyOf(C);
  // A reduction over axes runs as the stages of ir/ReduceForm.h: each adds
  // its kernel's depth (a row's or a column's), and a mean of means one
  // rounding per extra stage.
  double D = static_cast<double>(summationDepth(Len));
  if (N.scope() == ReduceScope::Axes) {
    std::vector<int64_t> Sizes = X.Dims;
    llvm::SmallVector<ReduceStage, 2> Stages =
        reduceStages(G.node(OpId).Dims, N.reducedAxes());
    int64_t Depth = 0;
    for (const ReduceStage &St : Stages) {
      int64_t L = 1, K = 1;
      for (size_t A = 0; A < Sizes.size(); ++A) {
        ((St.Axes >> A) & 1u ? L : K) *= Sizes[A];
        if ((St.Axes >> A) & 1u)
          Sizes[A] = 1;
      }
      Depth += St.Row ? summationDepth(L) : columnSummationDepth(L, K);
    }
    if (N.Kind == Op::ReduceMean && !Stages.empty())
      Depth += static_cast<int64_t>(Stages.size()) - 1;
    D = static_cast<double>(Depth);
  }
  double Gamma = D * U / (1 - D * U);
  // Rows over threads, each row's bound summed in order by one of them.
  int64_t RowsPerPiece = std::max<int64_t>(1, ReferenceElementsPerPiece / std::max<int64_t>(Len, 1));
  parallelFor(Rows, RowsPerPiece, [&](int64_t RowBegin, int64_t RowEnd) {
    for (int64_t R = RowBegin; R < RowEnd; ++R) {
      const double *Xr = XBase + R * Len;
      const double *Er = EBase + R * Len;
      double &E = Out.Data[R];
      if (!isFloat(N.Type)) {
        for (int64_t I = 0; I < Len && E == 0; ++I)
          if (Er[I] > 0)
            E = Inf;
        continue;
      }
      if (N.Kind == Op::ReduceMax || N.Kind == Op::ReduceMin) {
        for (int64_t I = 0; I < Len; ++I)
          E = std::max(E, promote(Xr[I], Er[I], OpT, C));
        continue;
      }
      double SumE = 0, SumAbs = 0;
      for (int64_t I = 0; I < Len; ++I) {
        double Ei = promote(Xr[I], Er[I], OpT, C);
        SumE += Ei;
        SumAbs += std::fabs(Xr[I]) + Ei;
      }
      E = SumE + Gamma * SumAbs + D * Tiny;
      if (N.Kind == Op::ReduceMean && Len > 0) {
        double Em = E / static_cast<double>(Len);
        double V = Vals[Id].Data[R];
        E = Em + (std::isfinite(V) ? U * (std::fabs(V) + Em) + Tiny : 0);
      }
    }
  });
}

void BoundWalker::finish(NodeId Id, const std::vector<HostTensor> &Vals) {
  const Node &N = G.node(Id);
  if (!isFloat(N.Type) || N.isLeaf())
    return;
  DType T = N.Type;
  bool Half = T == DType::F16 || T == DType::BF16;
  bool Stored = Half && !isView(N.Kind) && N.Kind != Op::Cast;
  double Max = maxFinite(Half ? T : computeOf(T));
  const std::vector<double> &V = Vals[Id].Data;
  parallelFor(static_cast<int64_t>(V.size()), ReferenceElementsPerPiece,
              [&](int64_t Begin, int64_t End) {
                for (int64_t I = Begin; I < End; ++I) {
                  double &E = Bnd[Id].Data[I];
                  if (std::isnan(E))
                    E = Inf;
                  if (E == Inf || !std::isfinite(V[I]))
                    continue;
                  if (Stored)
                    E += unitOf(T) * (std::fabs(V[I]) + E) + tinyOf(T);
                  if (std::fabs(V[I]) + E > Max)
                    E = Inf;
                }
              });
}

} // namespace

double libraryUlps(Op O, DType Compute) {
  return Compute == DType::F64 ? opInfo(O).Ulp64 : opInfo(O).Ulp32;
}

ReferenceResult interpretWithBounds(const Graph &G, const Bindings &B, bool FastMath) {
  BoundWalker W(G, B, FastMath);
  ReferenceResult R;
  R.Values = interpretVisiting(
      G, B, [&](NodeId Id, const std::vector<HostTensor> &Vals) {
        W.visit(Id, Vals);
        // An output's bound against its rounded value: the reference's own
        // rounding of the output to its dtype is one more rounding.
        for (const GraphOutput &O : G.outputs()) {
          if (O.Id != Id)
            continue;
          HostTensor E = W.bounds()[Id];
          DType T = Vals[Id].Type;
          for (size_t I = 0; I < E.Data.size(); ++I) {
            double V = Vals[Id].Data[I];
            if (isFloat(T) && std::isfinite(V) && std::isfinite(E.Data[I]))
              E.Data[I] += unitOf(T) * std::fabs(V) + tinyOf(T);
          }
          R.Bounds[O.Name] = std::move(E);
        }
      });
  return R;
}

} // namespace jitfuse
