//===- tests/RandomGraph.cpp - seeded random graphs -----------------------===//
#include "RandomGraph.h"

#include "exec/HostRun.h"
#include "ir/Printer.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

namespace jitfuse::test {

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

static Value arg(const RecipeOp &Rop, const std::vector<Value> &Vals, size_t K) {
  if (K >= Rop.Args.size())
    fail("recipe: op needs operand {} but has {}", K, Rop.Args.size());
  if (Rop.Args[K] >= Vals.size())
    fail("recipe: operand index {} refers to a later op (have {})", Rop.Args[K],
         Vals.size());
  return Vals[Rop.Args[K]];
}

static Value buildOne(Graph &G, const std::vector<Value> &Vals, const RecipeOp &Rop) {
  // The builder asserts (not throws) on an op of the wrong kind, so check it.
  auto NeedKind = [&](OpKind K) {
    if (static_cast<unsigned>(Rop.O) >= NumOps ||
        opKind(Rop.O) != K || Rop.O == Op::Cast)
      fail("recipe: op {} is not of the expected kind", static_cast<int>(Rop.O));
  };
  auto NeedType = [&] {
    if (static_cast<unsigned>(Rop.T) > static_cast<unsigned>(DType::F64))
      fail("recipe: dtype {} out of range", static_cast<int>(Rop.T));
  };
  switch (Rop.K) {
  case RKind::Input:
    NeedType();
    if (!Rop.Strides.empty())
      return G.input(Rop.Name, Rop.T, Rop.Dims, Rop.Strides);
    return G.input(Rop.Name, Rop.T, Rop.Dims);
  case RKind::Scalar:
    NeedType();
    return G.scalar(Rop.Name, Rop.T);
  case RKind::Constant:
    NeedType();
    return G.constant(Rop.F, Rop.T);
  case RKind::Unary:
    NeedKind(OpKind::Unary);
    return unary(Rop.O, arg(Rop, Vals, 0));
  case RKind::Cast:
    NeedType();
    return cast(arg(Rop, Vals, 0), Rop.T);
  case RKind::Binary:
    NeedKind(OpKind::Binary);
    return binary(Rop.O, arg(Rop, Vals, 0), arg(Rop, Vals, 1));
  case RKind::Where:
    return where(arg(Rop, Vals, 0), arg(Rop, Vals, 1), arg(Rop, Vals, 2));
  case RKind::Fma:
    return fma(arg(Rop, Vals, 0), arg(Rop, Vals, 1), arg(Rop, Vals, 2));
  case RKind::Reduce:
    NeedKind(OpKind::Reduce);
    // A0: 0 last axis, 1 all, 2 axes {0} (a column reduction), 3 axes
    // {-2, -1} (an inner reduction over two axes).
    if (Rop.A0 == 2 || Rop.A0 == 3) {
      static const int64_t Column[] = {0}, Inner[] = {-2, -1};
      return reduce(Rop.O, arg(Rop, Vals, 0),
                    Rop.A0 == 2 ? llvm::ArrayRef<int64_t>(Column) : llvm::ArrayRef<int64_t>(Inner));
    }
    // A0 = 8 + mask: the axes of the mask (bit I: axis I), any set
    // (compiler/LowerAxes.h lowers the outer and mixed ones).
    if (Rop.A0 >= 8) {
      Value X = arg(Rop, Vals, 0);
      int64_t Mask = Rop.A0 - 8;
      if (Mask == 0 || Mask >= (int64_t(1) << X.rank()))
        fail("recipe: reduce axes mask {} out of range for rank {}", Mask, X.rank());
      llvm::SmallVector<int64_t, 4> Axes;
      for (unsigned I = 0; I < X.rank(); ++I)
        if (Mask & (int64_t(1) << I))
          Axes.push_back(I);
      return reduce(Rop.O, X, Axes);
    }
    if (Rop.A0 != 0 && Rop.A0 != 1)
      fail("recipe: reduce scope {} out of range", Rop.A0);
    return reduce(Rop.O, arg(Rop, Vals, 0), static_cast<ReduceScope>(Rop.A0));
  case RKind::Broadcast:
    return broadcastTo(arg(Rop, Vals, 0), Rop.Dims);
  case RKind::Reshape:
    return reshape(arg(Rop, Vals, 0), Rop.Dims);
  case RKind::Slice:
    return slice(arg(Rop, Vals, 0), Rop.A0, Rop.A1);
  case RKind::Permute: {
    Value X = arg(Rop, Vals, 0);
    int64_t R = X.rank();
    if (R == 0 || Rop.A0 < 0)
      fail("recipe: permute (swap code {}) of a rank-{} value", Rop.A0, R);
    return transpose(X, (Rop.A0 / 4) % R, (Rop.A0 % 4) % R);
  }
  case RKind::Concat: {
    std::vector<Value> Xs;
    for (size_t K = 0; K < Rop.Args.size(); ++K)
      Xs.push_back(arg(Rop, Vals, K));
    return concat(Xs);
  }
  }
  fail("recipe: unknown op record kind {}", static_cast<int>(Rop.K));
}

Graph buildGraph(const Recipe &R) {
  Graph G;
  std::vector<Value> Vals;
  for (const RecipeOp &Rop : R.Ops)
    Vals.push_back(buildOne(G, Vals, Rop));
  for (const auto &[Name, Idx] : R.Outputs) {
    if (Idx >= Vals.size())
      fail("recipe: output '{}' refers to op {} of {}", Name, Idx, Vals.size());
    if (auto It = R.OutputStrides.find(Name); It != R.OutputStrides.end())
      G.output(Name, Vals[Idx], It->second);
    else
      G.output(Name, Vals[Idx]);
  }
  return G;
}

//===----------------------------------------------------------------------===//
// Generation
//===----------------------------------------------------------------------===//

namespace {

struct Entry {
  unsigned Idx;
  double Bound; // |value| <= Bound for inputs in [-2, 2]
  bool Raw;     // an input's exact value: safe to compare
};

class Generator {
public:
  Generator(uint64_t Seed, const GenOptions &Opts)
      : Rng(Seed), LayoutRng(Seed ^ 0x5851f42d4c957f2dULL), Opts(Opts) {
    Pool.reserve(4096);
    Rec.Seed = Seed;
  }
  Recipe run();

private:
  size_t pick(size_t N) { return std::uniform_int_distribution<size_t>(0, N - 1)(Rng); }
  bool chance(double P) { return std::uniform_real_distribution<double>(0, 1)(Rng) < P; }
  template <typename T> T oneOf(std::initializer_list<T> L) {
    return *(L.begin() + pick(L.size()));
  }
  /// Adds Op if the builder accepts it; returns its pool entry or nullptr.
  const Entry *add(RecipeOp Rop, double Bound, bool Raw = false, bool Pooled = true);
  const Value &val(const Entry &E) const { return Vals[E.Idx]; }
  const Entry &pickEntry();
  /// An entry whose shape broadcasts with S, or nullptr.
  const Entry *partnerFor(const Shape &S, bool RawOnly = false);
  const Entry *boundedBelow(double Limit);
  int64_t dimValue(const Dim &D) const {
    return D.isDynamic() ? Rec.Dims.at(D.Name) : D.Size;
  }
  int64_t numelOf(const Shape &S) const {
    int64_t N = 1;
    for (const Dim &D : S)
      N *= dimValue(D);
    return N;
  }

  void makeInputs();
  /// Strides for a tensor of shape S at the recipe's dim values: padded
  /// rows (for an input, the row stride named now and then), column-major,
  /// or (inputs) a zero stride on dim 0.
  std::vector<Dim> layoutOf(llvm::ArrayRef<Dim> S, bool Output, const std::string &Name);
  void step();
  void unaryStep(const Entry &E);
  void templateStep();
  void viewStep();

  std::mt19937_64 Rng;
  /// Layout draws (strides) have their own stream, so a seed gives the
  /// ops and values it gave before strided layouts existed (tests replay
  /// seeds the GPU tier once failed on).
  std::mt19937_64 LayoutRng;
  size_t layoutPick(size_t N) {
    return std::uniform_int_distribution<size_t>(0, N - 1)(LayoutRng);
  }
  bool layoutChance(double P) {
    return std::uniform_real_distribution<double>(0, 1)(LayoutRng) < P;
  }
  GenOptions Opts;
  Recipe Rec;
  Graph G;
  std::vector<Value> Vals;
  std::vector<Entry> Pool;
  /// Values that are outputs whatever the draw (GenOptions::SiblingColumns).
  std::vector<unsigned> Keep;
  Shape Domain;
  unsigned NumInputs = 0;
};

const Entry *Generator::add(RecipeOp Rop, double Bound, bool Raw, bool Pooled) {
  if (Bound > 1e4 || !std::isfinite(Bound))
    return nullptr;
  try {
    Value V = buildOne(G, Vals, Rop);
    Vals.push_back(V);
  } catch (const Error &) {
    return nullptr;
  }
  Rec.Ops.push_back(std::move(Rop));
  if (!Pooled || Vals.back().dtype() == DType::Bool)
    return nullptr;
  Pool.push_back({static_cast<unsigned>(Vals.size() - 1), Bound, Raw});
  return &Pool.back();
}

const Entry &Generator::pickEntry() {
  if (chance(0.5))
    return Pool[Pool.size() - 1 - pick(std::min<size_t>(3, Pool.size()))];
  return Pool[pick(Pool.size())];
}

const Entry *Generator::partnerFor(const Shape &S, bool RawOnly) {
  std::vector<const Entry *> Cands;
  for (const Entry &E : Pool)
    if ((!RawOnly || E.Raw) && broadcastShapes(S, val(E).shape()))
      Cands.push_back(&E);
  return Cands.empty() ? nullptr : Cands[pick(Cands.size())];
}

const Entry *Generator::boundedBelow(double Limit) {
  std::vector<const Entry *> Cands;
  for (const Entry &E : Pool)
    if (E.Bound <= Limit && val(E).rank() > 0)
      Cands.push_back(&E);
  return Cands.empty() ? nullptr : Cands[pick(Cands.size())];
}

std::vector<Dim> Generator::layoutOf(llvm::ArrayRef<Dim> S, bool Output,
                                     const std::string &Name) {
  std::vector<int64_t> Sz;
  for (const Dim &D : S)
    Sz.push_back(D.isDynamic() ? Rec.Dims.at(D.Name) : D.Size);
  size_t R = Sz.size();
  std::vector<Dim> St(R);
  auto Dense = [&](bool Reversed) { // row-major, or column-major
    int64_t Step = 1;
    for (size_t K = 0; K < R; ++K) {
      size_t I = Reversed ? K : R - 1 - K;
      St[I] = Dim(Step);
      Step *= Sz[I];
    }
  };
  if (R == 1) {
    St[0] = Dim(int64_t(1 + layoutPick(3))); // every 1st, 2nd or 3rd element
    return St;
  }
  switch (layoutPick(Output ? 2 : 4)) {
  case 0: // padded rows; the row stride named (a run-time parameter)
  case 2: {
    int64_t Ld = Sz[R - 1] + 1 + static_cast<int64_t>(layoutPick(9));
    bool Named = layoutPick(2) == 0 && !Output;
    std::string LdName = "ld" + Name;
    if (Named)
      Rec.Dims[LdName] = Ld;
    St[R - 1] = Dim(int64_t(1));
    St[R - 2] = Named ? Dim(LdName) : Dim(Ld);
    int64_t Step = Ld * Sz[R - 2];
    for (size_t I = R - 2; I-- > 0;) {
      St[I] = Dim(Step);
      Step *= Sz[I];
    }
    return St;
  }
  case 1: // a transposed view: column-major
    Dense(true);
    return St;
  default: // one row read for every index of dim 0
    Dense(false);
    St[0] = Dim(int64_t(0));
    return St;
  }
}

void Generator::makeInputs() {
  unsigned Rank = 1 + pick(3);
  int64_t H = oneOf<int64_t>({1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 32, 33, 63, 64, 100,
                              127, 128, 129, 255, 256, 257, 511, 1000, 1024, 1025});
  H = std::min(H, Opts.MaxRow);
  if (Opts.LongRows)
    H = oneOf<int64_t>({4095, 4099, 11008, 16411, 32064, 50257});
  Rec.Dims["B"] = Opts.BValue >= 0 ? Opts.BValue : oneOf<int64_t>({1, 2, 3, 5, 7, 16, 33, 64});
  if (Rank >= 2)
    Domain.push_back(chance(0.6) ? Dim("B") : Dim(oneOf<int64_t>({1, 2, 3, 5, 7, 16, 33})));
  if (Rank == 3)
    Domain.push_back(Dim(oneOf<int64_t>({1, 2, 3, 4})));
  if (Opts.DynamicRow)
    Rec.Dims["H"] = H;
  const Dim Last = Opts.DynamicRow ? Dim("H") : Dim(H);
  Domain.push_back(Last);
  Shape Row = Domain;
  Row.back() = Dim(int64_t(1));
  Shape Bias = {Last};

  unsigned N = 1 + pick(4);
  for (unsigned I = 0; I < N; ++I) {
    RecipeOp In;
    In.K = RKind::Input;
    In.Name = fmt::format("x{}", NumInputs++);
    double P = std::uniform_real_distribution<double>(0, 1)(Rng);
    const Shape &S = (I == 0 || P < 0.6 || Rank == 1) ? Domain : (P < 0.8 ? Bias : Row);
    In.Dims.assign(S.begin(), S.end());
    bool Int = chance(0.1);
    In.T = Int ? DType::I32 : oneOf({DType::F32, DType::F16, DType::BF16});
    if (layoutChance(0.2))
      In.Strides = layoutOf(S, /*Output=*/false, In.Name);
    const Entry *E = add(In, 2, true, !Int);
    if (Int) {
      RecipeOp C;
      C.K = RKind::Cast;
      C.T = oneOf({DType::F32, DType::F16, DType::BF16});
      C.Args = {static_cast<unsigned>(Rec.Ops.size() - 1)};
      E = add(C, 2, true);
    }
    (void)E;
  }
  if (chance(0.2)) {
    RecipeOp S;
    S.K = RKind::Scalar;
    S.Name = "s0";
    S.T = DType::F32;
    Rec.Scalars["s0"] = oneOf({0.75, -1.25, 0.5});
    const Entry *SE = add(S, 1.25);
    // An expression of the scalar and a constant (AdamW's 1 - beta1): read
    // by any later kernel, computed inside each (never a 1-element kernel).
    if (SE && chance(0.6)) {
      unsigned SI = SE->Idx;
      RecipeOp C;
      C.K = RKind::Constant;
      C.F = oneOf({1.0, 0.5, 2.0});
      C.T = DType::F32;
      add(C, C.F, false, false);
      RecipeOp E;
      E.K = RKind::Binary;
      E.O = oneOf({Op::Sub, Op::Mul, Op::Add});
      E.Args = {static_cast<unsigned>(Rec.Ops.size() - 1), SI};
      add(E, E.O == Op::Mul ? 2 * 1.25 : C.F + 1.25, false, true);
    }
  }
}

void Generator::unaryStep(const Entry &E) {
  RecipeOp Rop;
  Rop.K = RKind::Unary;
  Rop.O = oneOf({Op::Neg, Op::Abs, Op::Exp, Op::Tanh, Op::Sigmoid, Op::Silu, Op::Relu});
  Rop.Args = {E.Idx};
  double B = E.Bound;
  if (Rop.O == Op::Exp && B > 3) {
    RecipeOp T;
    T.K = RKind::Unary;
    T.O = Op::Tanh;
    T.Args = {E.Idx};
    const Entry *TE = add(T, 1);
    if (!TE)
      return;
    Rop.Args = {TE->Idx};
    B = 1;
  }
  switch (Rop.O) {
  case Op::Exp:
    B = std::exp(B);
    break;
  case Op::Tanh:
  case Op::Sigmoid:
    B = 1;
    break;
  default:
    break;
  }
  add(Rop, B);
}

void Generator::templateStep() {
  const Entry *X = boundedBelow(1e3);
  if (!X)
    return;
  unsigned XI = X->Idx;
  double XB = X->Bound;
  auto Mk = [](RKind K, Op O, std::vector<unsigned> Args) {
    RecipeOp R;
    R.K = K;
    R.O = O;
    R.Args = std::move(Args);
    return R;
  };
  auto Last = [&] { return static_cast<unsigned>(Rec.Ops.size() - 1); };
  if (chance(0.5)) {
    // softmax-like: exp(x - max(x)) is in (0, 1]; the row sum is >= 1.
    RecipeOp M = Mk(RKind::Reduce, Op::ReduceMax, {XI});
    if (!add(M, XB))
      return;
    if (!add(Mk(RKind::Binary, Op::Sub, {XI, Last()}), 2 * XB, false, false))
      return;
    if (!add(Mk(RKind::Unary, Op::Exp, {Last()}), 1))
      return;
    unsigned E = Last();
    if (!add(Mk(RKind::Reduce, Op::ReduceSum, {E}), 1e3, false, false))
      return;
    add(Mk(RKind::Binary, Op::Div, {E, Last()}), 1);
    return;
  }
  // rmsnorm-like: x * rsqrt(mean(x*x) + 0.25) * w; rsqrt stays <= 2.
  if (!add(Mk(RKind::Binary, Op::Mul, {XI, XI}), XB * XB, false, false))
    return;
  if (!add(Mk(RKind::Reduce, Op::ReduceMean, {Last()}), XB * XB, false, false))
    return;
  unsigned Ms = Last();
  RecipeOp C;
  C.K = RKind::Constant;
  C.F = 0.25;
  C.T = val(*X).dtype();
  add(C, 0.25, false, false);
  if (!add(Mk(RKind::Binary, Op::Add, {Ms, Last()}), XB * XB + 1, false, false))
    return;
  if (!add(Mk(RKind::Unary, Op::Rsqrt, {Last()}), 2, false, false))
    return;
  const Entry *Y = add(Mk(RKind::Binary, Op::Mul, {XI, Last()}), 2 * XB);
  if (!Y)
    return;
  const Entry *W = partnerFor(val(*Y).shape());
  if (W && chance(0.5))
    add(Mk(RKind::Binary, Op::Mul, {Y->Idx, W->Idx}), Y->Bound * W->Bound);
}

void Generator::viewStep() {
  const Entry E = pickEntry();
  const Shape S = val(E).shape();
  RecipeOp Rop;
  Rop.Args = {E.Idx};
  unsigned Choice = pick(5);
  if (S.empty())
    Choice = 0;
  if (Choice == 4) {
    // Swap the innermost axis with another (a transpose) or two outer axes
    // (the innermost stays: [B,T,H,D] -> [B,H,T,D]).
    if (S.size() < 2)
      return;
    int64_t R = static_cast<int64_t>(S.size());
    Rop.K = RKind::Permute;
    if (R >= 3 && chance(0.5))
      Rop.A0 = 0 * 4 + 1 + static_cast<int64_t>(pick(static_cast<unsigned>(R - 2)));
    else
      Rop.A0 = static_cast<int64_t>(pick(static_cast<unsigned>(R - 1))) * 4 + (R - 1);
    add(Rop, E.Bound);
    return;
  }
  if (Choice == 0) {
    // Broadcast to the domain (or to a leading extra dim for small ranks).
    Rop.K = RKind::Broadcast;
    Rop.Dims.assign(Domain.begin(), Domain.end());
    if (llvm::ArrayRef<Dim>(S) == llvm::ArrayRef<Dim>(Domain)) {
      if (Domain.size() >= 3)
        return;
      Rop.Dims.insert(Rop.Dims.begin(), Dim(int64_t(3)));
    }
    add(Rop, E.Bound);
    return;
  }
  const Dim &L = S.back();
  if (Choice == 1) {
    if (L.isDynamic() || L.Size < 2)
      return;
    Rop.K = RKind::Slice;
    Rop.A0 = static_cast<int64_t>(pick(L.Size - 1));
    Rop.A1 = Rop.A0 + 1 + static_cast<int64_t>(pick(L.Size - Rop.A0));
    add(Rop, E.Bound);
    return;
  }
  if (Choice == 2) {
    Rop.K = RKind::Concat;
    std::vector<const Entry *> Cands;
    for (const Entry &P : Pool) {
      const Shape &PS = val(P).shape();
      if (val(P).dtype() == val(E).dtype() && PS.size() == S.size() &&
          !PS.back().isDynamic() && !L.isDynamic() &&
          llvm::ArrayRef<Dim>(PS).drop_back() == llvm::ArrayRef<Dim>(S).drop_back())
        Cands.push_back(&P);
    }
    if (Cands.empty())
      return;
    const Entry *P = Cands[pick(Cands.size())];
    Rop.Args.push_back(P->Idx);
    if (chance(0.3))
      Rop.Args.push_back(E.Idx);
    add(Rop, std::max(E.Bound, P->Bound));
    return;
  }
  Rop.K = RKind::Reshape;
  if (S.size() >= 2 && !L.isDynamic() && !S[S.size() - 2].isDynamic()) {
    Rop.Dims.assign(S.begin(), S.end() - 2);
    Rop.Dims.push_back(Dim(S[S.size() - 2].Size * L.Size));
  } else if (S.size() < 3 && !L.isDynamic() && L.Size % 2 == 0 && L.Size >= 4) {
    Rop.Dims.assign(S.begin(), S.end() - 1);
    Rop.Dims.push_back(Dim(int64_t(2)));
    Rop.Dims.push_back(Dim(L.Size / 2));
  } else {
    return;
  }
  add(Rop, E.Bound);
}

void Generator::step() {
  unsigned W = static_cast<unsigned>(pick(100));
  const Entry E = pickEntry();
  if (W < 25) {
    unaryStep(E);
    return;
  }
  if (W < 55) {
    RecipeOp Rop;
    Rop.K = RKind::Binary;
    Rop.O = oneOf({Op::Add, Op::Sub, Op::Mul, Op::Max, Op::Min});
    double OB;
    if (chance(0.25)) {
      RecipeOp C;
      C.K = RKind::Constant;
      C.F = oneOf({0.5, -1.5, 2.0, 0.25, 3.0});
      C.T = val(E).dtype();
      add(C, std::abs(C.F), false, false);
      OB = std::abs(C.F);
      Rop.Args = {E.Idx, static_cast<unsigned>(Rec.Ops.size() - 1)};
    } else {
      const Entry *P = partnerFor(val(E).shape());
      if (!P)
        return;
      OB = P->Bound;
      Rop.Args = {E.Idx, P->Idx};
      if (chance(0.5))
        std::swap(Rop.Args[0], Rop.Args[1]);
    }
    double B = Rop.O == Op::Mul ? E.Bound * OB
               : (Rop.O == Op::Max || Rop.O == Op::Min) ? std::max(E.Bound, OB)
                                                      : E.Bound + OB;
    add(Rop, B);
    return;
  }
  if (W < 60) {
    RecipeOp Rop;
    Rop.K = RKind::Cast;
    Rop.T = oneOf({DType::F32, DType::F16, DType::BF16});
    Rop.Args = {E.Idx};
    add(Rop, E.Bound);
    return;
  }
  if (W < 66) {
    // where(cmp(raw, raw-or-0), a, b): the condition never depends on rounding.
    const Entry *A = partnerFor(val(E).shape(), /*RawOnly=*/true);
    if (!A)
      return;
    RecipeOp Cmp;
    Cmp.K = RKind::Binary;
    Cmp.O = oneOf({Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Ne});
    const Entry *Bv = chance(0.5) ? partnerFor(val(*A).shape(), true) : nullptr;
    if (!Bv) {
      RecipeOp Z;
      Z.K = RKind::Constant;
      Z.F = 0;
      Z.T = val(*A).dtype();
      add(Z, 0, false, false);
      Cmp.Args = {A->Idx, static_cast<unsigned>(Rec.Ops.size() - 1)};
    } else {
      Cmp.Args = {A->Idx, Bv->Idx};
    }
    double AB = A->Bound; // A may move when the pool grows
    (void)AB;
    add(Cmp, 1, false, false);
    unsigned CI = static_cast<unsigned>(Rec.Ops.size() - 1);
    if (G.node(Vals.back().id()).Type != DType::Bool)
      return;
    const Entry *P = partnerFor(val(E).shape());
    if (!P)
      return;
    RecipeOp Rop;
    Rop.K = RKind::Where;
    Rop.Args = {CI, E.Idx, P->Idx};
    add(Rop, std::max(E.Bound, P->Bound));
    return;
  }
  if (W < 71) {
    const Entry *P = partnerFor(val(E).shape());
    const Entry *Q = P ? partnerFor(val(*P).shape()) : nullptr;
    if (!Q)
      return;
    RecipeOp Rop;
    Rop.K = RKind::Fma;
    Rop.Args = {E.Idx, P->Idx, Q->Idx};
    add(Rop, E.Bound * P->Bound + Q->Bound);
    return;
  }
  if (W < 84) {
    if (val(E).rank() == 0)
      return;
    RecipeOp Rop;
    Rop.K = RKind::Reduce;
    Rop.O = oneOf({Op::ReduceSum, Op::ReduceMax, Op::ReduceMean, Op::ReduceSum});
    Rop.Args = {E.Idx};
    bool All = chance(0.2);
    Rop.A0 = All ? 1 : 0;
    int64_t Len = All ? numelOf(val(E).shape()) : dimValue(val(E).shape().back());
    // Any set of axes of a rank >= 2 value (recipe scope 8 + mask): outer
    // and mixed sets run lowered (compiler/LowerAxes.h). Only sets that are
    // not the innermost axes are drawn: inner sets beside the graph's other
    // reductions still meet the row view's refusals (two different inner
    // sets in one graph; compiler/ReduceAxes.h), which compile() reports.
    unsigned Rank = val(E).rank();
    if (!All && Rank >= 2 && layoutChance(0.3)) {
      uint32_t AllAxes = (1u << Rank) - 1;
      uint32_t Mask = std::uniform_int_distribution<uint32_t>(1, AllAxes)(LayoutRng);
      bool Inner = ((Mask + (Mask & -Mask)) & AllAxes) == 0;
      if (!Inner) {
        Rop.A0 = 8 + Mask;
        Len = 1;
        for (unsigned I = 0; I < Rank; ++I)
          if (Mask & (1u << I))
            Len *= dimValue(val(E).shape()[I]);
      }
    }
    double B = Rop.O == Op::ReduceSum ? E.Bound * static_cast<double>(Len) : E.Bound;
    const Entry *R = add(Rop, B);
    if (R && Rop.A0 >= 8 && Opts.SiblingColumns && chance(0.5)) {
      unsigned First = R->Idx; // before add() grows the pool
      RecipeOp Sq;
      Sq.K = RKind::Binary;
      Sq.O = Op::Mul;
      Sq.Args = {E.Idx, E.Idx};
      if (const Entry *S = add(Sq, E.Bound * E.Bound)) {
        RecipeOp Sib = Rop;
        Sib.O = oneOf({Op::ReduceSum, Op::ReduceMax});
        Sib.Args = {S->Idx};
        double SB = Sib.O == Op::ReduceSum ? S->Bound * static_cast<double>(Len) : S->Bound;
        if (const Entry *T = add(Sib, SB)) {
          Keep.push_back(First);
          Keep.push_back(T->Idx);
        }
      }
      return;
    }
    // Broadcast the reduced value back over the row (normalization epilogue).
    if (R && (Rop.A0 == 0 || Rop.A0 >= 8) && chance(0.6)) {
      RecipeOp Epi;
      Epi.K = RKind::Binary;
      Epi.O = oneOf({Op::Sub, Op::Mul, Op::Add});
      Epi.Args = {E.Idx, R->Idx};
      double RB = R->Bound;
      add(Epi, Epi.O == Op::Mul ? E.Bound * RB : E.Bound + RB);
    }
    return;
  }
  if (W < 90) {
    templateStep();
    return;
  }
  viewStep();
}

Recipe Generator::run() {
  makeInputs();
  unsigned N = Opts.MinOps + static_cast<unsigned>(pick(Opts.MaxOps - Opts.MinOps + 1));
  for (unsigned I = 0; I < 4 * N && Pool.size() < N + NumInputs; ++I)
    step();
  // Outputs: the newest value, plus a few others (an input now and then).
  std::set<unsigned> Chosen;
  for (size_t I = Pool.size(); I-- > 0 && Chosen.empty();)
    if (!Vals[Pool[I].Idx].node().isLeaf() || Rec.Ops[Pool[I].Idx].K == RKind::Input)
      Chosen.insert(Pool[I].Idx);
  unsigned More = static_cast<unsigned>(pick(4));
  for (unsigned I = 0; I < More; ++I) {
    const Entry &E = Pool[pick(Pool.size())];
    const Node &N = Vals[E.Idx].node();
    if (N.Kind == Op::Scalar || N.Kind == Op::Constant || (N.Kind == Op::Input && !chance(0.2)))
      continue;
    Chosen.insert(E.Idx);
  }
  Chosen.insert(Keep.begin(), Keep.end());
  unsigned K = 0;
  for (unsigned Idx : Chosen) {
    std::string Name = fmt::format("y{}", K++);
    Rec.Outputs.push_back({Name, Idx});
    if (Vals[Idx].rank() > 0 && layoutChance(0.2))
      Rec.OutputStrides[Name] = layoutOf(Vals[Idx].shape(), /*Output=*/true, Name);
  }
  // A reduction over merged inner axes needs its merged dims contiguous
  // (compiler/ReduceAxes.cpp); keep such graphs dense.
  for (const RecipeOp &Rop : Rec.Ops)
    if (Rop.K == RKind::Reduce && Rop.A0 == 3) {
      for (RecipeOp &In : Rec.Ops)
        In.Strides.clear();
      Rec.OutputStrides.clear();
      for (auto It = Rec.Dims.begin(); It != Rec.Dims.end();)
        It = llvm::StringRef(It->first).startswith("ld") ? Rec.Dims.erase(It) : std::next(It);
      break;
    }
  // Bind only the dims the graph uses (a named stride may be its only one).
  Graph Final = buildGraph(Rec);
  for (auto It = Rec.Dims.begin(); It != Rec.Dims.end();)
    It = llvm::is_contained(Final.dynamicDims(), It->first) ? std::next(It) : Rec.Dims.erase(It);
  return std::move(Rec);
}

} // namespace

Recipe randomRecipe(uint64_t Seed, const GenOptions &Opts) {
  return Generator(Seed, Opts).run();
}

std::vector<Recipe> gpuBatchRecipes(uint64_t FirstSeed, unsigned Batch, unsigned Count) {
  GenOptions GO;
  GO.BValue = std::vector<int64_t>{1, 3, 7, 33, 130, 257}[Batch % 6];
  GO.SiblingColumns = true;
  std::vector<Recipe> Rs;
  for (unsigned I = 0; I < Count; ++I)
    Rs.push_back(randomRecipe(FirstSeed + I, GO));
  return Rs;
}

} // namespace jitfuse::test
