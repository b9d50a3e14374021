//===- ir/Builder.cpp - typed, validated construction of nodes ------------===//
//
// Every builder checks its operands and derives the result dtype and shape.
// The dtype rules are written down in docs/NUMERICS.md.
//
//===----------------------------------------------------------------------===//
#include "ir/Graph.h"

#include "support/Error.h"
#include <llvm/Support/CheckedArithmetic.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace jitfuse {

static std::string describe(Value V) {
  const Node &N = V.node();
  std::string What = N.Kind == Op::Input || N.Kind == Op::Scalar
                         ? fmt::format("%{} {} '{}'", V.id(),
                                       opName(N.Kind).str(), N.Name)
                         : fmt::format("%{} {}", V.id(), opName(N.Kind).str());
  return fmt::format("{} {}{}", What, dtypeName(N.Type).str(),
                     shapeStr(N.Dims));
}

static Graph &sameGraph(llvm::StringRef OpName, llvm::ArrayRef<Value> Vs) {
  for (Value V : Vs)
    if (!V.valid())
      fail("{}: an operand is an empty Value (not built by a Graph)",
           OpName.str());
  Graph &G = Vs.front().graph();
  for (Value V : Vs)
    if (&V.graph() != &G)
      fail("{}: operands come from different graphs ({} and {})", OpName.str(),
           describe(Vs.front()), describe(V));
  return G;
}

/// Scalars and constants are "weak": they adopt the other side's dtype when
/// that is of the same or a higher category.
static bool isWeak(Value V) {
  Op K = V.node().Kind;
  return K == Op::Scalar || K == Op::Constant;
}

static int category(DType T) { return isFloat(T) ? 2 : isInt(T) ? 1 : 0; }

static DType promoteValues(llvm::ArrayRef<Value> Vs) {
  // Strong operands decide; weak ones only raise the category.
  std::optional<DType> Strong, Weak;
  for (Value V : Vs) {
    std::optional<DType> &Slot = isWeak(V) ? Weak : Strong;
    Slot = Slot ? promoteTypes(*Slot, V.dtype()) : V.dtype();
  }
  if (!Strong)
    return *Weak;
  if (!Weak || category(*Weak) <= category(*Strong))
    return *Strong;
  return isFloat(*Weak) ? DType::F32 : *Weak;
}

static Shape broadcastAll(llvm::StringRef OpName, llvm::ArrayRef<Value> Vs) {
  Shape Out;
  for (Value V : Vs) {
    auto B = broadcastShapes(Out, V.shape());
    if (!B) {
      std::string Ops;
      for (Value W : Vs)
        Ops += (Ops.empty() ? "" : ", ") + describe(W);
      fail("{}: operand shapes do not broadcast ({}); expected equal dims or "
           "1 in each position, aligned from the right",
           OpName.str(), Ops);
    }
    Out = std::move(*B);
  }
  return Out;
}

static Value make(Graph &G, Op K, DType T, Shape Dims,
                  llvm::ArrayRef<Value> Operands, int64_t A0 = 0,
                  int64_t A1 = 0) {
  // Broadcasting two large operands can give a shape no tensor may have.
  if (!boundedStaticNumel(Dims))
    fail("{}: result shape {} holds more than 2^48 elements", opName(K).str(),
         shapeStr(Dims));
  Node N;
  N.Kind = K;
  N.Type = T;
  N.Dims = std::move(Dims);
  for (Value V : Operands)
    N.Operands.push_back(V.id());
  N.A0 = A0;
  N.A1 = A1;
  return G.value(G.addNode(std::move(N)));
}

static llvm::StringRef kindName(OpKind K) {
  switch (K) {
  case OpKind::Leaf: return "leaf";
  case OpKind::Unary: return "unary";
  case OpKind::Binary: return "binary";
  case OpKind::Ternary: return "ternary";
  case OpKind::Reduce: return "reduction";
  case OpKind::View: return "view";
  case OpKind::Random: return "random";
  }
  JITFUSE_UNREACHABLE("unknown op kind");
}

/// The generic entries take any Op; a wrong kind is a user error, not an
/// assert, since callers pick the op at run time (from a table or a parser).
static void checkKind(llvm::StringRef Entry, Op O, OpKind Want) {
  if (O == Op::Cast)
    fail("{}: op 'cast' needs a target dtype; use cast(x, dtype)",
         Entry.str());
  if (opKind(O) != Want)
    fail("{}: op '{}' is a {} op; expected a {} op", Entry.str(),
         opName(O).str(), kindName(opKind(O)).str(), kindName(Want).str());
}

Value unary(Op O, Value X) {
  checkKind("unary", O, OpKind::Unary);
  Graph &G = sameGraph(opName(O), {X});
  DType T = X.dtype();
  if (opInfo(O).Result == ResultRule::Bool)
    return make(G, O, DType::Bool, X.shape(), {X});
  if (T == DType::Bool)
    fail("{}: operand {} is bool; expected a numeric dtype (cast it first)",
         opName(O).str(), describe(X));
  if (opInfo(O).Result == ResultRule::FloatPromote && !isFloat(T))
    T = DType::F32;
  return make(G, O, T, X.shape(), {X});
}

Value cast(Value X, DType T) {
  Graph &G = sameGraph("cast", {X});
  if (X.dtype() == T)
    return X;
  return make(G, Op::Cast, T, X.shape(), {X});
}

Value binary(Op O, Value A, Value B) {
  checkKind("binary", O, OpKind::Binary);
  Graph &G = sameGraph(opName(O), {A, B});
  Shape S = broadcastAll(opName(O), {A, B});
  if (opInfo(O).Result == ResultRule::Bool)
    return make(G, O, DType::Bool, std::move(S), {A, B});
  DType T = promoteValues({A, B});
  if (T == DType::Bool)
    fail("{}: operands {} and {} are bool; expected numeric dtypes",
         opName(O).str(), describe(A), describe(B));
  if (opInfo(O).Result == ResultRule::FloatPromote && !isFloat(T))
    T = DType::F32; // true division, like PyTorch
  return make(G, O, T, std::move(S), {A, B});
}

// The functions named by the Fn column of ir/Ops.def.
#define JITFUSE_OP(...)
#define JITFUSE_UNARY(Name, Fn, ...)                                           \
  Value Fn(Value X) { return unary(Op::Name, X); }
#define JITFUSE_BINARY(Name, Fn, ...)                                          \
  Value Fn(Value A, Value B) { return binary(Op::Name, A, B); }
#include "ir/Ops.def"

Value where(Value Cond, Value A, Value B) {
  Graph &G = sameGraph("where", {Cond, A, B});
  if (Cond.dtype() != DType::Bool)
    fail("where: condition {} must be bool (compare or cast it first)",
         describe(Cond));
  Shape S = broadcastAll("where", {Cond, A, B});
  return make(G, Op::Where, promoteValues({A, B}), std::move(S), {Cond, A, B});
}

Value fma(Value A, Value B, Value C) {
  Graph &G = sameGraph("fma", {A, B, C});
  Shape S = broadcastAll("fma", {A, B, C});
  DType T = promoteValues({A, B, C});
  if (T == DType::Bool)
    fail("fma: operands {}, {}, {} are bool; expected numeric dtypes",
         describe(A), describe(B), describe(C));
  return make(G, Op::Fma, T, std::move(S), {A, B, C});
}

/// The result dtype of reduction O over X (ResultRule of its row).
static DType reducedType(Op O, Value X) {
  DType T = X.dtype();
  if (opInfo(O).Result == ResultRule::FloatPromote && !isFloat(T))
    T = DType::F32;
  else if (opInfo(O).Result == ResultRule::WidenInt && !isFloat(T))
    T = DType::I64;
  else if (T == DType::Bool)
    fail("{}: operand {} is bool; expected a numeric dtype", opName(O).str(),
         describe(X));
  return T;
}

Value reduce(Op O, Value X, ReduceScope S) {
  checkKind("reduce", O, OpKind::Reduce);
  Graph &G = sameGraph(opName(O), {X});
  if (S == ReduceScope::Axes)
    fail("{}: ReduceScope::Axes needs the axes; call {}(x, {{axes...}})",
         opName(O).str(), opName(O).str());
  if (S == ReduceScope::LastAxis && X.rank() == 0)
    fail("{}: operand {} has rank 0; there is no last axis to reduce (use "
         "ReduceScope::All)",
         opName(O).str(), describe(X));
  DType T = reducedType(O, X);
  Shape Out;
  if (S == ReduceScope::LastAxis) {
    Out = X.shape();
    Out.back() = Dim(1);
  }
  return make(G, O, T, std::move(Out), {X}, static_cast<int64_t>(S));
}

Value sum(Value X, ReduceScope S) { return reduce(Op::ReduceSum, X, S); }
Value reduceMax(Value X, ReduceScope S) { return reduce(Op::ReduceMax, X, S); }
Value reduceMin(Value X, ReduceScope S) { return reduce(Op::ReduceMin, X, S); }
Value mean(Value X, ReduceScope S) { return reduce(Op::ReduceMean, X, S); }

Value reduce(Op O, Value X, llvm::ArrayRef<int64_t> Axes) {
  checkKind("reduce", O, OpKind::Reduce);
  Graph &G = sameGraph(opName(O), {X});
  int64_t Rank = X.rank();
  if (Axes.empty())
    fail("{}: no axes given for operand {}; expected at least one axis (or "
         "ReduceScope::All)",
         opName(O).str(), describe(X));
  uint32_t Mask = 0;
  for (int64_t A : Axes) {
    if (A < -Rank || A >= Rank)
      fail("{}: axis {} is out of range for operand {} of rank {}; expected "
           "an axis in [{}, {}]",
           opName(O).str(), A, describe(X), Rank, -Rank, Rank - 1);
    int64_t Axis = A < 0 ? A + Rank : A;
    if (Mask & (1u << Axis))
      fail("{}: axis {} is given twice for operand {} (axes {}); expected "
           "each axis once",
           opName(O).str(), Axis, describe(X),
           fmt::format("{{{}}}", fmt::join(Axes, ", ")));
    Mask |= 1u << Axis;
  }
  // The last axis alone is today's row reduction: one node, one spelling.
  if (Mask == 1u << (Rank - 1))
    return reduce(O, X, ReduceScope::LastAxis);
  DType T = reducedType(O, X);
  Shape Out = X.shape();
  for (unsigned I = 0; I < Out.size(); ++I)
    if (Mask & (1u << I))
      Out[I] = Dim(1);
  return make(G, O, T, std::move(Out), {X},
              static_cast<int64_t>(ReduceScope::Axes), Mask);
}

Value sum(Value X, llvm::ArrayRef<int64_t> Axes) {
  return reduce(Op::ReduceSum, X, Axes);
}
Value reduceMax(Value X, llvm::ArrayRef<int64_t> Axes) {
  return reduce(Op::ReduceMax, X, Axes);
}
Value reduceMin(Value X, llvm::ArrayRef<int64_t> Axes) {
  return reduce(Op::ReduceMin, X, Axes);
}
Value mean(Value X, llvm::ArrayRef<int64_t> Axes) {
  return reduce(Op::ReduceMean, X, Axes);
}

/// Target shapes given to views and rand_uniform obey the same rules as
/// input shapes: rank <= MaxRank and no negative static dim.
static void checkTargetShape(llvm::StringRef OpName, llvm::ArrayRef<Dim> Dims) {
  if (Dims.size() > MaxRank)
    fail("{}: target shape {} has rank {} > {}", OpName.str(), shapeStr(Dims),
         Dims.size(), MaxRank);
  for (const Dim &D : Dims) {
    if (!D.isDynamic() && D.Size < 0)
      fail("{}: target shape {} has negative dim {}; expected sizes >= 0",
           OpName.str(), shapeStr(Dims), D.Size);
    if (!D.validName())
      fail("{}: dim '{}' of target shape {} has an empty factor or no name; expected names "
           "joined by '*', numbers allowed among them ('64*B')",
           OpName.str(), D.Name, shapeStr(Dims));
  }
  if (!boundedStaticNumel(Dims))
    fail("{}: target shape {} holds more than 2^48 elements", OpName.str(),
         shapeStr(Dims));
}

Value broadcastTo(Value X, llvm::ArrayRef<Dim> Dims) {
  Graph &G = sameGraph("broadcast", {X});
  checkTargetShape("broadcast", Dims);
  if (!broadcastsTo(X.shape(), Dims))
    fail("broadcast: {} cannot be broadcast to {}; expected each dim to match "
         "or be 1, aligned from the right",
         describe(X), shapeStr(Dims));
  if (llvm::ArrayRef<Dim>(X.shape()) == Dims)
    return X;
  return make(G, Op::Broadcast, X.dtype(), Shape(Dims.begin(), Dims.end()), {X});
}

Value reshape(Value X, llvm::ArrayRef<Dim> Dims) {
  Graph &G = sameGraph("reshape", {X});
  checkTargetShape("reshape", Dims);
  // Element counts must provably agree: equal static products and the same
  // dynamic names.
  if (!sameNumel(X.shape(), Dims))
    fail("reshape: {} cannot be reshaped to {}; expected the same number of "
         "elements",
         describe(X), shapeStr(Dims));
  if (llvm::ArrayRef<Dim>(X.shape()) == Dims)
    return X;
  return make(G, Op::Reshape, X.dtype(), Shape(Dims.begin(), Dims.end()), {X});
}

Value permute(Value X, llvm::ArrayRef<int64_t> Perm) {
  Graph &G = sameGraph("permute", {X});
  int64_t R = X.rank();
  if (static_cast<int64_t>(Perm.size()) != R)
    fail("permute: {} axes given for {}; expected one per axis ({})", Perm.size(),
         describe(X), R);
  Shape Dims;
  int64_t Packed = 0;
  uint32_t Seen = 0;
  bool Identity = true;
  for (int64_t I = 0; I < R; ++I) {
    int64_t A = Perm[I] < 0 ? Perm[I] + R : Perm[I];
    if (A < 0 || A >= R)
      fail("permute: axis {} is out of range for {}; expected -{} <= axis < {}", Perm[I],
           describe(X), R, R);
    if (Seen & (1u << A))
      fail("permute: axis {} appears twice for {}; expected each axis once", Perm[I],
           describe(X));
    Seen |= 1u << A;
    Identity &= A == I;
    Dims.push_back(X.shape()[A]);
    Packed |= A << (4 * I);
  }
  if (Identity)
    return X;
  return make(G, Op::Permute, X.dtype(), std::move(Dims), {X}, Packed);
}

Value transpose(Value X, int64_t A, int64_t B) {
  int64_t R = X.rank();
  llvm::SmallVector<int64_t, 4> Perm;
  for (int64_t I = 0; I < R; ++I)
    Perm.push_back(I);
  int64_t NA = A < 0 ? A + R : A, NB = B < 0 ? B + R : B;
  if (NA < 0 || NA >= R || NB < 0 || NB >= R)
    fail("transpose: axes {} and {} are out of range for {}; expected -{} <= axis < {}", A, B,
         describe(X), R, R);
  std::swap(Perm[NA], Perm[NB]);
  return permute(X, Perm);
}

Value slice(Value X, int64_t Start, int64_t Stop) {
  Graph &G = sameGraph("slice", {X});
  if (X.rank() == 0)
    fail("slice: operand {} has rank 0; expected a tensor with a last axis",
         describe(X));
  const Dim &Last = X.shape().back();
  if (Last.isDynamic())
    fail("slice: the last axis of {} is dynamic ('{}'); slicing needs a static "
         "last axis",
         describe(X), Last.Name);
  if (Start < 0 || Stop < Start || Stop > Last.Size)
    fail("slice: [{}, {}) is out of range for {}; expected 0 <= start <= stop "
         "<= {}",
         Start, Stop, describe(X), Last.Size);
  if (Start == 0 && Stop == Last.Size)
    return X;
  Shape S = X.shape();
  S.back() = Dim(Stop - Start);
  return make(G, Op::Slice, X.dtype(), std::move(S), {X}, Start, Stop);
}

Value slice(Value X, int64_t Start, int64_t Stop, int64_t Axis) {
  sameGraph("slice", {X});
  int64_t R = X.rank();
  if (Axis < -R || Axis >= R)
    fail("slice: axis {} is out of range for {}; expected -{} <= axis < {}", Axis,
         describe(X), R, R);
  unsigned A = static_cast<unsigned>(Axis < 0 ? Axis + R : Axis);
  if (A + 1 == X.rank())
    return slice(X, Start, Stop);
  const Shape &S = X.shape();
  if (S[A].isDynamic())
    fail("slice: axis {} of {} is dynamic ('{}'); slicing needs a static axis", Axis,
         describe(X), S[A].Name);
  if (Start < 0 || Stop < Start || Stop > S[A].Size)
    fail("slice: [{}, {}) is out of range for axis {} of {}; expected 0 <= start <= stop "
         "<= {}",
         Start, Stop, Axis, describe(X), S[A].Size);
  if (Start == 0 && Stop == S[A].Size)
    return X;
  // The axis and everything inside it are one contiguous block per index of
  // the outer dims: a slice of the axis is a slice of that block's last
  // axis, between reshapes that only relabel.
  llvm::ArrayRef<Dim> Inner = llvm::ArrayRef<Dim>(S).drop_front(A + 1);
  std::optional<int64_t> Block = staticNumel(Inner);
  if (!Block)
    fail("slice: axis {} of {} has dynamic dims inside it ({}); slicing an outer axis "
         "needs the dims after it static",
         Axis, describe(X), shapeStr(Inner));
  Shape Flat(S.begin(), S.begin() + A);
  Flat.push_back(Dim(S[A].Size * *Block));
  Value Part = slice(reshape(X, Flat), Start * *Block, Stop * *Block);
  Shape Out(S.begin(), S.end());
  Out[A] = Dim(Stop - Start);
  return reshape(Part, Out);
}

Value concat(llvm::ArrayRef<Value> Xs) {
  if (Xs.empty())
    fail("concat: expected at least one operand");
  Graph &G = sameGraph("concat", Xs);
  if (Xs.size() == 1)
    return Xs.front();
  Value First = Xs.front();
  if (First.rank() == 0)
    fail("concat: operand {} has rank 0; expected tensors with a last axis",
         describe(First));
  int64_t Total = 0;
  for (Value X : Xs) {
    if (X.dtype() != First.dtype() || X.rank() != First.rank())
      fail("concat: operand {} does not match {}; expected the same dtype and "
           "rank",
           describe(X), describe(First));
    for (unsigned I = 0; I + 1 < X.rank(); ++I)
      if (X.shape()[I] != First.shape()[I])
        fail("concat: operand {} differs from {} in dim {}; expected equal "
             "dims except the last",
             describe(X), describe(First), I);
    if (X.shape().back().isDynamic())
      fail("concat: the last axis of {} is dynamic; expected static",
           describe(X));
    // Four [2^62] operands must not wrap around to [0].
    auto Sum = llvm::checkedAdd(Total, X.shape().back().Size);
    if (!Sum || *Sum > MaxElements)
      fail("concat: the last axes of the operands sum to more than 2^48 (at {})",
           describe(X));
    Total = *Sum;
  }
  Shape S = First.shape();
  S.back() = Dim(Total);
  return make(G, Op::Concat, First.dtype(), std::move(S), Xs);
}

Value randUniform(Value Seed, llvm::ArrayRef<Dim> Dims, int64_t Stream,
                  DType T) {
  Graph &G = sameGraph("rand_uniform", {Seed});
  if (Seed.node().Kind != Op::Scalar || !isInt(Seed.dtype()))
    fail("rand_uniform: seed {} must be an integer run-time scalar "
         "(g.scalar(\"seed\", i64))",
         describe(Seed));
  if (!isFloat(T))
    fail("rand_uniform: dtype {} must be a float type", dtypeName(T).str());
  checkTargetShape("rand_uniform", Dims);
  return make(G, Op::RandUniform, T, Shape(Dims.begin(), Dims.end()), {Seed},
              Stream);
}

Value operator+(Value A, Value B) { return add(A, B); }
Value operator-(Value A, Value B) { return sub(A, B); }
Value operator*(Value A, Value B) { return mul(A, B); }
Value operator/(Value A, Value B) { return div(A, B); }
Value operator-(Value A) { return neg(A); }

/// A literal is stored as f32 (weak, so it adopts the other side's type),
/// except beside an f64 operand: constants are rounded to their own dtype,
/// and an f32 literal would make `x64 * 0.1` multiply by 0.100000001.
static Value constLike(Value Other, double C) {
  if (!Other.valid())
    fail("operator: an operand is an empty Value (not built by a Graph)");
  DType T = Other.dtype() == DType::F64 ? DType::F64 : DType::F32;
  return Other.graph().constant(C, T);
}
Value operator+(Value A, double B) { return add(A, constLike(A, B)); }
Value operator-(Value A, double B) { return sub(A, constLike(A, B)); }
Value operator*(Value A, double B) { return mul(A, constLike(A, B)); }
Value operator/(Value A, double B) { return div(A, constLike(A, B)); }
Value operator+(double A, Value B) { return add(constLike(B, A), B); }
Value operator-(double A, Value B) { return sub(constLike(B, A), B); }
Value operator*(double A, Value B) { return mul(constLike(B, A), B); }
Value operator/(double A, Value B) { return div(constLike(B, A), B); }

} // namespace jitfuse
