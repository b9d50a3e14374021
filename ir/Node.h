//===- ir/Node.h - the one node type of the graph ---------------*- C++ -*-===//
#pragma once

#include "ir/Types.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>

namespace jitfuse {

enum class Op : uint8_t {
#define JITFUSE_OP(Name, ...) Name,
#include "ir/Ops.def"
};

enum class OpKind : uint8_t { Leaf, Unary, Binary, Ternary, Reduce, View, Random };

/// The columns of ir/Ops.def; the header of that file explains each value.
enum class ResultRule : uint8_t { Given, Same, Promote, FloatPromote, Bool, WidenInt };
enum class OpFlag : uint8_t { None, Comparison, Logical };
enum class BoundRule : uint8_t { Rule, Lipschitz, Step };

/// One row of ir/Ops.def.
struct OpInfo {
  const char *Spelling;
  OpKind Kind;
  int Arity;
  ResultRule Result;
  OpFlag Flag;
  /// fmt template of the CUDA expression (a reduction's combine functor);
  /// nullptr where the op is not spelled by opExpr.
  const char *Cuda;
  /// The template for integer and bool compute types; nullptr: Cuda.
  const char *CudaInt;
  /// Library error in ulp for f32 (also f16/bf16) and f64 compute.
  double Ulp32;
  double Ulp64;
  BoundRule Bound;
};

inline constexpr OpInfo OpTable[] = {
#define JITFUSE_OP(Name, Spelling, Kind, Arity, Result, Flag, Cuda, CudaInt,  \
                   Ulp32, Ulp64, Bound)                                        \
  {Spelling,         OpKind::Kind,  Arity,          ResultRule::Result,         \
   OpFlag::Flag,     Cuda,          CudaInt,        Ulp32,                      \
   Ulp64,            BoundRule::Bound},
#include "ir/Ops.def"
};

inline constexpr unsigned NumOps = sizeof(OpTable) / sizeof(OpTable[0]);

/// Every op in table order, for code and tests that enumerate ops.
inline constexpr Op AllOps[] = {
#define JITFUSE_OP(Name, ...) Op::Name,
#include "ir/Ops.def"
};

constexpr const OpInfo &opInfo(Op O) { return OpTable[static_cast<unsigned>(O)]; }
inline llvm::StringRef opName(Op O) { return opInfo(O).Spelling; }
constexpr OpKind opKind(Op O) { return opInfo(O).Kind; }
constexpr int opArity(Op O) { return opInfo(O).Arity; }
constexpr bool isReduction(Op O) { return opKind(O) == OpKind::Reduce; }
constexpr bool isView(Op O) { return opKind(O) == OpKind::View; }
/// lt le gt ge eq ne: bool from operands promoted to each other.
constexpr bool isComparison(Op O) { return opInfo(O).Flag == OpFlag::Comparison; }
/// not and or: their operands are read as truth values.
constexpr bool isLogical(Op O) { return opInfo(O).Flag == OpFlag::Logical; }

/// Reductions keep the last axis (size 1), reduce every element to rank 0,
/// or reduce a set of axes kept as size 1 (Axes; the set is Node::A1, a
/// bit mask, never just the last axis: that is LastAxis).
enum class ReduceScope : int64_t { LastAxis = 0, All = 1, Axes = 2 };

using NodeId = uint32_t;

/// A graph node. Attributes are op-specific:
///   Input/Scalar: Name; A0 = position among inputs/scalars.
///   Constant:     F = value.
///   Reduce*:      A0 = ReduceScope; with Axes, A1 = mask of the reduced
///                 axes (bit I: axis I of the operand).
///   Slice:        [A0, A1) on the last axis.
///   Permute:      A0 = the permutation, 4 bits per result axis: result
///                 axis I is operand axis (A0 >> 4*I) & 15 (permutation()).
///   RandUniform:  A0 = stream id (distinguishes two draws with one seed).
struct Node {
  Op Kind = Op::Constant;
  DType Type = DType::F32;
  Shape Dims;
  llvm::SmallVector<NodeId, 3> Operands;
  int64_t A0 = 0;
  int64_t A1 = 0;
  double F = 0.0;
  std::string Name;
  /// Input: element strides, one per dim (static, or a named dim bound at
  /// run time); empty: contiguous.
  Shape Strides;

  unsigned rank() const { return Dims.size(); }
  bool isLeaf() const { return opKind(Kind) == OpKind::Leaf; }
  ReduceScope scope() const { return static_cast<ReduceScope>(A0); }
  /// A keepdim reduction's reduced axes as a bit mask (bit I: axis I); the
  /// result has the operand's rank. Not meaningful for ReduceScope::All.
  uint32_t reducedAxes() const {
    if (scope() == ReduceScope::Axes)
      return static_cast<uint32_t>(A1);
    return rank() == 0 ? 0u : 1u << (rank() - 1);
  }
  /// Permute: result axis I is operand axis permutation()[I].
  llvm::SmallVector<unsigned, 4> permutation() const {
    llvm::SmallVector<unsigned, 4> P;
    for (unsigned I = 0; I < rank(); ++I)
      P.push_back(static_cast<unsigned>((A0 >> (4 * I)) & 15));
    return P;
  }
  bool operator==(const Node &O) const;
};

} // namespace jitfuse
