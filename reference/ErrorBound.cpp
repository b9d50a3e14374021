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

#include "ir/ReduceForm.h"
#include "reference/OpBound.h"
#include "reference/Parallel.h"
#include "reference/Tolerance.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>

namespace jitfuse {

using namespace bound;

namespace {

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
