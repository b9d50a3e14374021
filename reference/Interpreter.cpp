//===- reference/Interpreter.cpp - the fp64 CPU reference interpreter -----===//
//
// Straightforward by design: every node is materialized as a HostTensor of
// doubles, operands are broadcast by copying, and each op's semantics is one
// line in a switch. Speed matters only enough for test-sized tensors; what
// matters is that each line can be checked against docs/NUMERICS.md. The
// element and row loops run over threads (reference/Parallel.h): each
// index's value depends on that index alone, so results are unchanged.
//
//===----------------------------------------------------------------------===//
#include "reference/Interpreter.h"

#include "ir/Half.h"
#include "ir/Philox.h"
#include "reference/Parallel.h"
#include "support/Error.h"


#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace jitfuse {

//===----------------------------------------------------------------------===//
// Shapes and bindings
//===----------------------------------------------------------------------===//

static std::string dimsStr(llvm::ArrayRef<int64_t> Dims) {
  std::string Out = "[";
  for (size_t I = 0; I < Dims.size(); ++I)
    Out += (I ? "," : "") + std::to_string(Dims[I]);
  return Out + "]";
}

template <typename Map> static std::string keysStr(const Map &M) {
  std::string Out;
  for (const auto &KV : M)
    Out += (Out.empty() ? "'" : ", '") + KV.first + "'";
  return Out.empty() ? "none" : Out;
}

std::vector<int64_t> resolveShape(llvm::ArrayRef<Dim> Dims,
                                  const std::map<std::string, int64_t> &Bound) {
  std::vector<int64_t> Out;
  Out.reserve(Dims.size());
  for (const Dim &D : Dims) {
    if (!D.isDynamic()) {
      Out.push_back(D.Size);
      continue;
    }
    int64_t Size = D.scale();
    for (llvm::StringRef F : D.factors()) {
      auto It = Bound.find(F.str());
      if (It == Bound.end())
        fail("unbound dynamic dim '{}' in shape {}; bind it in Bindings.Dims "
             "(bound: {})",
             F.str(), shapeStr(Dims), keysStr(Bound));
      if (It->second < 0)
        fail("dynamic dim '{}' is bound to {}; expected a size >= 0", F.str(), It->second);
      Size *= It->second; // each bound size and the product: at most 2^48 (checked by callers)
    }
    Out.push_back(Size);
  }
  return Out;
}

/// Checks B against G before anything is evaluated, so a bad binding is
/// reported by name instead of surfacing as a wrong shape deep in the graph.
static void validateBindings(const Graph &G, const Bindings &B) {
  llvm::ArrayRef<std::string> DynDims = G.dynamicDims();
  for (const auto &[Name, Size] : B.Dims) {
    if (std::find(DynDims.begin(), DynDims.end(), Name) == DynDims.end()) {
      std::string Known;
      for (const std::string &D : DynDims)
        Known += (Known.empty() ? "'" : ", '") + D + "'";
      fail("interpret: dim '{}' is bound but the graph has no such dynamic dim "
           "(dynamic dims: {})",
           Name, Known.empty() ? "none" : Known);
    }
    if (Size < 0)
      fail("interpret: dim '{}' is bound to {}; expected a size >= 0", Name,
           Size);
  }

  std::map<std::string, NodeId> GraphInputs, GraphScalars;
  for (NodeId Id : G.inputs())
    GraphInputs[G.node(Id).Name] = Id;
  for (NodeId Id : G.scalars())
    GraphScalars[G.node(Id).Name] = Id;

  for (const auto &KV : B.Inputs)
    if (!GraphInputs.count(KV.first))
      fail("interpret: input '{}' is bound but the graph has no such input "
           "(inputs: {})",
           KV.first, keysStr(GraphInputs));
  for (const auto &KV : B.Scalars)
    if (!GraphScalars.count(KV.first))
      fail("interpret: scalar '{}' is bound but the graph has no such scalar "
           "(scalars: {})",
           KV.first, keysStr(GraphScalars));

  for (const auto &[Name, Id] : GraphInputs) {
    const Node &N = G.node(Id);
    auto It = B.Inputs.find(Name);
    if (It == B.Inputs.end())
      fail("interpret: input '{}' ({}{}) is not bound", Name,
           dtypeName(N.Type).str(), shapeStr(N.Dims));
    const HostTensor &T = It->second;
    if (T.Type != N.Type)
      fail("interpret: input '{}' is given as {}; expected {}", Name,
           dtypeName(T.Type).str(), dtypeName(N.Type).str());
    std::vector<int64_t> Expected;
    try {
      Expected = resolveShape(N.Dims, B.Dims);
    } catch (const Error &E) {
      fail("interpret: input '{}': {}", Name, E.what());
    }
    if (T.Dims != Expected)
      fail("interpret: input '{}' has shape {}; expected {} = {}", Name,
           dimsStr(T.Dims), shapeStr(N.Dims), dimsStr(Expected));
    for (int64_t D : T.Dims)
      if (D < 0)
        fail("interpret: input '{}' has negative dim in shape {}", Name,
             dimsStr(T.Dims));
    if (!boundedProduct(T.Dims))
      fail("interpret: input '{}' of shape {} holds more than 2^48 elements",
           Name, dimsStr(T.Dims));
    if (static_cast<int64_t>(T.Data.size()) != T.numel())
      fail("interpret: input '{}' of shape {} holds {} values; expected {}",
           Name, dimsStr(T.Dims), T.Data.size(), T.numel());
  }
  for (const auto &[Name, Id] : GraphScalars)
    if (!B.Scalars.count(Name))
      fail("interpret: scalar '{}' ({}) is not bound", Name,
           dtypeName(G.node(Id).Type).str());
}

//===----------------------------------------------------------------------===//
// Element-wise semantics
//===----------------------------------------------------------------------===//

std::vector<double> broadcastValues(const HostTensor &X,
                                    llvm::ArrayRef<int64_t> OutDims) {
  if (llvm::ArrayRef<int64_t>(X.Dims) == OutDims)
    return X.Data;
  size_t R = OutDims.size();
  JITFUSE_CHECK(X.Dims.size() <= R, "operand has a higher rank than its user");
  std::vector<int64_t> Strides(R, 0);
  int64_t Stride = 1;
  for (size_t I = X.Dims.size(); I-- > 0;) {
    size_t O = I + R - X.Dims.size();
    JITFUSE_CHECK((X.Dims[I] == OutDims[O] || X.Dims[I] == 1), "operand does not broadcast to its user");
    Strides[O] = X.Dims[I] == 1 ? 0 : Stride;
    Stride *= X.Dims[I];
  }
  int64_t N = numelOf(OutDims);
  std::vector<double> Out(static_cast<size_t>(N));
  parallelFor(N, ReferenceElementsPerPiece, [&](int64_t Begin, int64_t End) {
    // The output index of Begin and its source offset, then an odometer.
    std::vector<int64_t> Index(R, 0);
    int64_t Src = 0;
    for (size_t D = R, Rest = static_cast<size_t>(Begin); D-- > 0;) {
      Index[D] = static_cast<int64_t>(Rest % static_cast<size_t>(OutDims[D]));
      Rest /= static_cast<size_t>(OutDims[D]);
      Src += Index[D] * Strides[D];
    }
    for (int64_t E = Begin; E < End; ++E) {
      Out[E] = X.Data[Src];
      // Odometer increment over the output index, tracking the source offset.
      for (size_t D = R; D-- > 0;) {
        Src += Strides[D];
        if (++Index[D] < OutDims[D])
          break;
        Src -= Strides[D] * OutDims[D];
        Index[D] = 0;
      }
    }
  });
  return Out;
}

/// An exact integer value (of an int or bool node) as int64; the saturated
/// i64 value +2^63 maps to INT64_MAX.
static int64_t asInt(double V) {
  if (V >= 9223372036854775808.0)
    return std::numeric_limits<int64_t>::max();
  if (V < -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(V);
}

/// Two's-complement wrap of an integer result to the node's width, like the
/// GPU's integer arithmetic.
static double wrapInt(uint64_t Bits, DType T) {
  if (T == DType::I32)
    return static_cast<int32_t>(static_cast<uint32_t>(Bits));
  JITFUSE_CHECK(T == DType::I64, "not an integer dtype");
  return static_cast<double>(static_cast<int64_t>(Bits));
}

static double sigmoidOf(double X) { return 1.0 / (1.0 + std::exp(-X)); }

double unaryReference(Op O, double X) {
  switch (O) {
  case Op::Neg: return -X;
  case Op::Abs: return std::fabs(X);
  case Op::Exp: return std::exp(X);
  case Op::Exp2: return std::exp2(X);
  case Op::Log: return std::log(X);
  case Op::Log2: return std::log2(X);
  case Op::Sqrt: return std::sqrt(X);
  case Op::Rsqrt: return 1.0 / std::sqrt(X);
  case Op::Reciprocal: return 1.0 / X;
  case Op::Sin: return std::sin(X);
  case Op::Cos: return std::cos(X);
  case Op::Tanh: return std::tanh(X);
  case Op::Erf: return std::erf(X);
  case Op::Sigmoid: return sigmoidOf(X);
  case Op::Relu: return std::isnan(X) ? X : (X > 0 ? X : 0.0);
  case Op::Silu: return X * sigmoidOf(X);
  case Op::Gelu: return 0.5 * X * (1.0 + std::erf(X / std::numbers::sqrt2));
  case Op::GeluTanh: {
    const double K = std::sqrt(2.0 / std::numbers::pi);
    // 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)): the same function, but
    // 1 + tanh(z) is 0 in double below z = -18.4 (x = -6.4) where the
    // value is not (-10 * 2^-126 at x = -10).
    return X / (1.0 + std::exp(-2 * K * (X + 0.044715 * X * X * X)));
  }
  case Op::Floor: return std::floor(X);
  case Op::Ceil: return std::ceil(X);
  case Op::Rint: return std::nearbyint(X); // half to even: the default mode
  case Op::Not: return X == 0 ? 1.0 : 0.0;
  // Every op that is not unary, and cast.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_UNARY(...)
#include "ir/Ops.def"
    break;
  }
  JITFUSE_UNREACHABLE("not a float unary op");
}

/// Unary ops on an integer-typed node (the builder keeps only these integer).
static double unaryInt(Op O, double X, DType T) {
  int64_t V = asInt(X);
  switch (O) {
  case Op::Neg: return wrapInt(0 - static_cast<uint64_t>(V), T);
  case Op::Abs:
    return wrapInt(V < 0 ? 0 - static_cast<uint64_t>(V) : uint64_t(V), T);
  case Op::Relu: return V > 0 ? X : 0.0;
  case Op::Floor:
  case Op::Ceil:
  case Op::Rint: return X;
  // The builder gives these a float or bool node.
  case Op::Exp: case Op::Exp2: case Op::Log: case Op::Log2: case Op::Sqrt:
  case Op::Rsqrt: case Op::Reciprocal: case Op::Sin: case Op::Cos:
  case Op::Tanh: case Op::Erf: case Op::Sigmoid: case Op::Silu:
  case Op::Gelu: case Op::GeluTanh: case Op::Not:
  // Every op that is not unary, and cast.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_UNARY(...)
#include "ir/Ops.def"
    break;
  }
  fail("interpret: unary op {} has no integer semantics ({} node)",
       opName(O).str(), dtypeName(T).str());
}

static double maxPropagatingNaN(double A, double B) {
  if (std::isnan(A) || std::isnan(B))
    return std::numeric_limits<double>::quiet_NaN();
  return A > B ? A : B;
}

static double minPropagatingNaN(double A, double B) {
  if (std::isnan(A) || std::isnan(B))
    return std::numeric_limits<double>::quiet_NaN();
  return A < B ? A : B;
}

static double predicate(Op O, double A, double B) {
  switch (O) {
  case Op::Lt: return A < B;
  case Op::Le: return A <= B;
  case Op::Gt: return A > B;
  case Op::Ge: return A >= B;
  case Op::Eq: return A == B;
  case Op::Ne: return A != B; // the one comparison true for NaN
  case Op::And: return A != 0 && B != 0;
  case Op::Or: return A != 0 || B != 0;
  case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Max:
  case Op::Min: case Op::Pow: case Op::Mod:
  // Every op that is not binary.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_BINARY(...)
#include "ir/Ops.def"
    break;
  }
  JITFUSE_UNREACHABLE("not a predicate");
}

static double binaryFloat(Op O, double A, double B) {
  switch (O) {
  case Op::Add: return A + B;
  case Op::Sub: return A - B;
  case Op::Mul: return A * B;
  case Op::Div: return A / B;
  case Op::Max: return maxPropagatingNaN(A, B);
  case Op::Min: return minPropagatingNaN(A, B);
  case Op::Pow: return std::pow(A, B);
  case Op::Mod: return std::fmod(A, B);
  case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq:
  case Op::Ne: case Op::And: case Op::Or:
  // Every op that is not binary.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_BINARY(...)
#include "ir/Ops.def"
    break;
  }
  JITFUSE_UNREACHABLE("not a float binary op");
}

static double binaryInt(Op O, double X, double Y, DType T) {
  int64_t A = asInt(X), B = asInt(Y);
  auto UA = static_cast<uint64_t>(A), UB = static_cast<uint64_t>(B);
  switch (O) {
  case Op::Add: return wrapInt(UA + UB, T);
  case Op::Sub: return wrapInt(UA - UB, T);
  case Op::Mul: return wrapInt(UA * UB, T);
  case Op::Max: return static_cast<double>(std::max(A, B));
  case Op::Min: return static_cast<double>(std::min(A, B));
  case Op::Mod:
    // C remainder (sign of the dividend); x % 0 is defined as 0, and so is
    // INT64_MIN % -1, which overflows in C.
    if (B == 0 || B == -1)
      return 0.0;
    return wrapInt(static_cast<uint64_t>(A % B), T);
  // Div and pow give a float node; predicates are evaluated by predicate().
  case Op::Div: case Op::Pow: case Op::Lt: case Op::Le: case Op::Gt:
  case Op::Ge: case Op::Eq: case Op::Ne: case Op::And: case Op::Or:
  // Every op that is not binary.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_BINARY(...)
#include "ir/Ops.def"
    break;
  }
  fail("interpret: binary op {} has no integer semantics ({} node)",
       opName(O).str(), dtypeName(T).str());
}

//===----------------------------------------------------------------------===//
// Node evaluation
//===----------------------------------------------------------------------===//

namespace {
class Evaluator {
public:
  Evaluator(const Graph &G, const Bindings &B) : G(G), B(B) {}

  /// Value of node Id given the values of its operands in Vals.
  HostTensor eval(NodeId Id, const std::vector<HostTensor> &Vals) const;

private:
  HostTensor leaf(const Node &N, HostTensor Out) const;
  HostTensor elementwise(const Node &N, llvm::ArrayRef<const HostTensor *> Ops,
                         HostTensor Out) const;
  HostTensor reduction(const Node &N, const HostTensor &X,
                       HostTensor Out) const;
  HostTensor view(const Node &N, llvm::ArrayRef<const HostTensor *> Ops,
                  HostTensor Out) const;

  const Graph &G;
  const Bindings &B;
};
} // namespace

HostTensor Evaluator::eval(NodeId Id,
                           const std::vector<HostTensor> &Vals) const {
  const Node &N = G.node(Id);
  HostTensor Out;
  Out.Type = N.Type;
  Out.Dims = resolveShape(N.Dims, B.Dims);
  llvm::SmallVector<const HostTensor *, 3> Ops;
  for (NodeId Op : N.Operands)
    Ops.push_back(&Vals[Op]);

  switch (opKind(N.Kind)) {
  case OpKind::Leaf:
    return leaf(N, std::move(Out));
  case OpKind::Unary:
  case OpKind::Binary:
  case OpKind::Ternary:
    return elementwise(N, Ops, std::move(Out));
  case OpKind::Reduce:
    return reduction(N, *Ops[0], std::move(Out));
  case OpKind::View:
    return view(N, Ops, std::move(Out));
  case OpKind::Random: {
    // The seed is an integer scalar; its double is exact below 2^53.
    int64_t Seed = asInt(Ops[0]->Data.at(0));
    Out.Data.resize(static_cast<size_t>(Out.numel()));
    parallelFor(Out.numel(), ReferenceElementsPerPiece, [&](int64_t Begin, int64_t End) {
      for (int64_t I = Begin; I < End; ++I)
        Out.Data[I] = philoxUniform(I, N.A0, Seed);
    });
    return Out;
  }
  }
  JITFUSE_UNREACHABLE("unknown op kind");
}

HostTensor Evaluator::leaf(const Node &N, HostTensor Out) const {
  switch (N.Kind) {
  case Op::Input:
    // Taken as given: inputs are exact in their dtype by contract.
    Out.Data = B.Inputs.at(N.Name).Data;
    return Out;
  case Op::Scalar:
    // Rounded to the scalar's own dtype: an f32 scalar reaches the kernel as
    // a float parameter, whatever dtype the node using it has.
    Out.Data = {roundToDType(B.Scalars.at(N.Name), N.Type)};
    return Out;
  case Op::Constant:
    Out.Data = {roundToDType(N.F, N.Type)};
    return Out;
  // Every op that is not a leaf.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_LEAF(...)
#include "ir/Ops.def"
    break;
  }
  JITFUSE_UNREACHABLE("not a leaf");
}

HostTensor Evaluator::elementwise(const Node &N,
                                  llvm::ArrayRef<const HostTensor *> Ops,
                                  HostTensor Out) const {
  // Operands of the result's shape are read in place; others broadcast.
  llvm::SmallVector<std::vector<double>, 3> Broadcast;
  llvm::SmallVector<const double *, 3> In;
  Broadcast.reserve(Ops.size());
  for (const HostTensor *T : Ops) {
    if (T->Dims == Out.Dims) {
      In.push_back(T->Data.data());
      continue;
    }
    Broadcast.push_back(broadcastValues(*T, Out.Dims));
    In.push_back(Broadcast.back().data());
  }
  int64_t Count = Out.numel();
  Out.Data.resize(static_cast<size_t>(Count));
  DType T = N.Type;
  bool IntNode = isInt(T);
  double *Res = Out.Data.data();

  switch (opKind(N.Kind)) {
  case OpKind::Unary:
    parallelFor(Count, ReferenceElementsPerPiece, [&](int64_t Begin, int64_t End) {
      for (int64_t I = Begin; I < End; ++I) {
        double X = In[0][I];
        if (N.Kind == Op::Cast)
          Res[I] = roundToDType(X, T);
        else if (N.Kind == Op::Not)
          Res[I] = X == 0 ? 1.0 : 0.0;
        else
          Res[I] = IntNode ? unaryInt(N.Kind, X, T) : unaryReference(N.Kind, X);
      }
    });
    return Out;
  case OpKind::Binary:
    parallelFor(Count, ReferenceElementsPerPiece, [&](int64_t Begin, int64_t End) {
      for (int64_t I = Begin; I < End; ++I) {
        double A = In[0][I], Bv = In[1][I];
        if (opInfo(N.Kind).Result == ResultRule::Bool)
          Res[I] = predicate(N.Kind, A, Bv);
        else
          Res[I] = IntNode ? binaryInt(N.Kind, A, Bv, T) : binaryFloat(N.Kind, A, Bv);
      }
    });
    return Out;
  case OpKind::Ternary:
    JITFUSE_CHECK(N.Kind == Op::Where || N.Kind == Op::Fma, "unknown ternary op");
    parallelFor(Count, ReferenceElementsPerPiece, [&](int64_t Begin, int64_t End) {
      for (int64_t I = Begin; I < End; ++I) {
        double A = In[0][I], Bv = In[1][I], C = In[2][I];
        if (N.Kind == Op::Where)
          Res[I] = A != 0 ? Bv : C;
        else if (IntNode)
          Res[I] = wrapInt(static_cast<uint64_t>(asInt(A)) * static_cast<uint64_t>(asInt(Bv)) +
                               static_cast<uint64_t>(asInt(C)),
                           T);
        else
          Res[I] = std::fma(A, Bv, C);
      }
    });
    return Out;
  case OpKind::Leaf:
  case OpKind::Reduce:
  case OpKind::View:
  case OpKind::Random:
    break;
  }
  JITFUSE_UNREACHABLE("not an element-wise op");
}

HostTensor Evaluator::reduction(const Node &N, const HostTensor &X,
                                HostTensor Out) const {
  // Rows x Len: the last axis (LastAxis), everything in one row (All), or
  // the reduced axes gathered into rows (Axes).
  int64_t Len, Rows;
  HostTensor Gathered;
  const HostTensor *Src = &X;
  if (N.scope() == ReduceScope::All) {
    Len = X.numel();
    Rows = 1;
  } else if (N.scope() == ReduceScope::Axes) {
    Gathered = gatherReduced(X, N.reducedAxes(), Rows, Len);
    Src = &Gathered;
  } else {
    JITFUSE_CHECK(!X.Dims.empty(), "last-axis reduction of a rank-0 value");
    Len = X.Dims.back();
    Rows = numelOf(llvm::ArrayRef<int64_t>(X.Dims).drop_back());
  }
  JITFUSE_CHECK(Rows == Out.numel(), "reduction result has the wrong shape");
  Out.Data.resize(static_cast<size_t>(Rows));
  bool IntNode = isInt(N.Type);
  const double Inf = std::numeric_limits<double>::infinity();
  // Rows over threads, each row summed in order by one of them.
  int64_t RowsPerPiece = std::max<int64_t>(1, ReferenceElementsPerPiece / std::max<int64_t>(Len, 1));
  parallelFor(Rows, RowsPerPiece, [&](int64_t RowBegin, int64_t RowEnd) {
    for (int64_t R = RowBegin; R < RowEnd; ++R) {
      const double *Row = Src->Data.data() + R * Len;
      double Acc = 0;
      switch (N.Kind) {
      case Op::ReduceSum:
      case Op::ReduceMean:
        if (IntNode) {
          // Integer sums wrap at 64 bits like the kernel's i64 accumulator.
          uint64_t S = 0;
          for (int64_t I = 0; I < Len; ++I)
            S += static_cast<uint64_t>(asInt(Row[I]));
          Acc = wrapInt(S, N.Type);
        } else {
          Acc = 0;
          for (int64_t I = 0; I < Len; ++I)
            Acc += Row[I];
        }
        if (N.Kind == Op::ReduceMean)
          Acc /= static_cast<double>(Len); // empty: 0/0 = NaN
        break;
      case Op::ReduceMax:
        // Empty: the identity -inf (for integers the type's lowest value).
        Acc = IntNode ? roundToDType(-Inf, N.Type) : -Inf;
        for (int64_t I = 0; I < Len; ++I)
          Acc = maxPropagatingNaN(Acc, Row[I]);
        break;
      case Op::ReduceMin:
        Acc = IntNode ? roundToDType(Inf, N.Type) : Inf;
        for (int64_t I = 0; I < Len; ++I)
          Acc = minPropagatingNaN(Acc, Row[I]);
        break;
      // Every op that is not a reduction.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_REDUCE(...)
#include "ir/Ops.def"
        JITFUSE_UNREACHABLE("not a reduction");
      }
      Out.Data[R] = Acc;
    }
  });
  return Out;
}

HostTensor Evaluator::view(const Node &N,
                           llvm::ArrayRef<const HostTensor *> Ops,
                           HostTensor Out) const {
  const HostTensor &X = *Ops[0];
  switch (N.Kind) {
  case Op::Broadcast:
    Out.Data = broadcastValues(X, Out.Dims);
    return Out;
  case Op::Reshape:
    // Row-major reinterpretation: the element order is unchanged. The builder
    // proved equal element counts (same static product, same dynamic names).
    JITFUSE_CHECK(X.numel() == Out.numel(), "reshape changes the element count");
    Out.Data = X.Data;
    return Out;
  case Op::Slice: {
    int64_t Len = X.Dims.back(), Width = N.A1 - N.A0;
    int64_t Rows = numelOf(llvm::ArrayRef<int64_t>(X.Dims).drop_back());
    Out.Data.reserve(static_cast<size_t>(Rows * Width));
    for (int64_t R = 0; R < Rows; ++R) {
      const double *Row = X.Data.data() + R * Len;
      Out.Data.insert(Out.Data.end(), Row + N.A0, Row + N.A1);
    }
    return Out;
  }
  case Op::Permute: {
    // Walk the result in order; Src is the operand's linear index of the
    // same element (result axis I moves along operand axis Perm[I]).
    llvm::SmallVector<unsigned, 4> Perm = N.permutation();
    size_t R = Out.Dims.size();
    std::vector<int64_t> Stride(X.Dims.size(), 1);
    for (size_t I = X.Dims.size(); I-- > 1;)
      Stride[I - 1] = Stride[I] * X.Dims[I];
    std::vector<int64_t> Idx(R, 0);
    Out.Data.resize(static_cast<size_t>(Out.numel()));
    for (double &V : Out.Data) {
      int64_t Src = 0;
      for (size_t I = 0; I < R; ++I)
        Src += Idx[I] * Stride[Perm[I]];
      V = X.Data[static_cast<size_t>(Src)];
      for (size_t I = R; I-- > 0;) {
        if (++Idx[I] < Out.Dims[I])
          break;
        Idx[I] = 0;
      }
    }
    return Out;
  }
  case Op::Concat: {
    int64_t Rows = numelOf(llvm::ArrayRef<int64_t>(Out.Dims).drop_back());
    Out.Data.reserve(static_cast<size_t>(Out.numel()));
    for (int64_t R = 0; R < Rows; ++R)
      for (const HostTensor *T : Ops) {
        int64_t Len = T->Dims.back();
        const double *Row = T->Data.data() + R * Len;
        Out.Data.insert(Out.Data.end(), Row, Row + Len);
      }
    return Out;
  }
  // Every op that is not a view.
#define JITFUSE_OP(Name, ...) case Op::Name:
#define JITFUSE_VIEW(...)
#include "ir/Ops.def"
    break;
  }
  JITFUSE_UNREACHABLE("not a view");
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// Rounds every element of \p T to its dtype.
static void roundAll(HostTensor &T) {
  parallelFor(T.numel(), ReferenceElementsPerPiece, [&](int64_t Begin, int64_t End) {
    for (int64_t I = Begin; I < End; ++I)
      T.Data[I] = roundToDType(T.Data[I], T.Type);
  });
}

/// Evaluates every node some output depends on, calling Visit (if any)
/// after each; a value is dropped after its last use so large graphs do not
/// hold every intermediate.
static std::vector<HostTensor> evaluateLive(const Graph &G, const Bindings &B,
                                            const InterpretOptions &Opts,
                                            NodeVisitor *Visit = nullptr) {
  G.verify();
  validateBindings(G, B);

  size_t Size = G.size();
  std::vector<bool> Live(Size, false), IsOutput(Size, false);
  std::vector<NodeId> LastUse(Size, 0);
  for (const GraphOutput &O : G.outputs())
    Live[O.Id] = IsOutput[O.Id] = true;
  for (NodeId Id = static_cast<NodeId>(Size); Id-- > 0;) {
    if (!Live[Id])
      continue;
    for (NodeId Op : G.node(Id).Operands) {
      Live[Op] = true;
      LastUse[Op] = std::max(LastUse[Op], Id);
    }
  }

  Evaluator Eval(G, B);
  std::vector<HostTensor> Vals(Size);
  for (NodeId Id = 0; Id < Size; ++Id) {
    if (!Live[Id])
      continue;
    Vals[Id] = Eval.eval(Id, Vals);
    if (Opts.RoundEveryNode)
      roundAll(Vals[Id]);
    if (Visit)
      (*Visit)(Id, Vals);
    for (NodeId Op : G.node(Id).Operands)
      if (LastUse[Op] == Id && !IsOutput[Op])
        Vals[Op] = HostTensor();
  }
  return Vals;
}

HostTensor evaluateNode(const Graph &G, const Bindings &B, NodeId Id,
                        const std::vector<HostTensor> &Vals) {
  return Evaluator(G, B).eval(Id, Vals);
}

/// The graph outputs of Vals, rounded to their dtypes.
static std::map<std::string, HostTensor>
roundedOutputs(const Graph &G, const std::vector<HostTensor> &Vals) {
  std::map<std::string, HostTensor> Results;
  for (const GraphOutput &O : G.outputs()) {
    HostTensor T = Vals[O.Id];
    roundAll(T);
    Results.emplace(O.Name, std::move(T));
  }
  return Results;
}

std::map<std::string, HostTensor> interpret(const Graph &G, const Bindings &B,
                                            const InterpretOptions &Opts) {
  return roundedOutputs(G, evaluateLive(G, B, Opts));
}

std::map<std::string, HostTensor> interpretVisiting(const Graph &G,
                                                    const Bindings &B,
                                                    NodeVisitor Visit,
                                                    const InterpretOptions &Opts) {
  return roundedOutputs(G, evaluateLive(G, B, Opts, &Visit));
}

} // namespace jitfuse
