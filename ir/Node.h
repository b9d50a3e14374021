//===- ir/Node.h - the one node type of the graph ---------------*- C++ -*-===//
#pragma once

#include "ir/Types.h"

#include <llvm/ADT/SmallVector.h>

#include <cstdint>
#include <string>

namespace jitfuse {

enum class Op : uint8_t {
#define JITFUSE_OP(Name, Spelling, Kind, Arity) Name,
#include "ir/Ops.def"
};

enum class OpKind : uint8_t { Leaf, Unary, Binary, Ternary, Reduce, View, Random };

/// Reductions keep the last axis (size 1) or reduce every element to rank 0.
enum class ReduceScope : int64_t { LastAxis = 0, All = 1 };

using NodeId = uint32_t;

llvm::StringRef opName(Op O);
OpKind opKind(Op O);
int opArity(Op O);
inline bool isReduction(Op O) { return opKind(O) == OpKind::Reduce; }
inline bool isView(Op O) { return opKind(O) == OpKind::View; }

/// A graph node. Attributes are op-specific:
///   Input/Scalar: Name; A0 = position among inputs/scalars.
///   Constant:     F = value.
///   Reduce*:      A0 = ReduceScope.
///   Slice:        [A0, A1) on the last axis.
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

  unsigned rank() const { return Dims.size(); }
  bool isLeaf() const { return opKind(Kind) == OpKind::Leaf; }
  ReduceScope scope() const { return static_cast<ReduceScope>(A0); }
  bool operator==(const Node &O) const;
};

} // namespace jitfuse
