//===- reference/Interpreter.h - the fp64 reference interpreter -*- C++ -*-===//
//
// The oracle every GPU test compares against. It evaluates a graph on the
// host in double precision with the semantics written down in
// docs/NUMERICS.md: intermediates are not rounded to their dtype (the fused
// kernel contract), integer nodes are exact integer arithmetic, explicit casts,
// constants and scalars are rounded to their dtype, and each graph output is
// rounded to its dtype at the end (the value a kernel would store).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "reference/HostTensor.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace jitfuse {

/// Run-time values for a graph: tensor inputs, scalar parameters and the
/// sizes of dynamic dims, all by name. Every input and scalar of the graph
/// must be bound, every dynamic dim an evaluated node uses must be bound, and
/// a name the graph does not have is an error (it is almost always a typo).
struct Bindings {
  std::map<std::string, HostTensor> Inputs;
  std::map<std::string, double> Scalars;
  std::map<std::string, int64_t> Dims;
};

struct InterpretOptions {
  /// Round every node's value to its dtype, as the unfused path does when it
  /// materializes each intermediate. Off: the fused contract (see above).
  bool RoundEveryNode = false;
};

/// Concrete sizes of Dims with dynamic dims looked up in Bound. Throws
/// jitfuse::Error naming the unbound (or negative) dim and the shape.
std::vector<int64_t> resolveShape(llvm::ArrayRef<Dim> Dims,
                                  const std::map<std::string, int64_t> &Bound);

/// Evaluates every graph output; the result maps output name -> tensor of the
/// output's dtype and resolved shape, values rounded to that dtype. Throws
/// jitfuse::Error for a missing, unknown or mismatched (dtype, shape, element
/// count) binding, naming it with what was expected and what was given.
std::map<std::string, HostTensor> interpret(const Graph &G, const Bindings &B,
                                            const InterpretOptions &Opts = {});

/// Called once per evaluated node, in id order, right after node Id's value
/// was computed: Vals[Id] and the values of Id's operands are present (in
/// f64, not rounded to their dtype unless Opts.RoundEveryNode); a value is
/// dropped after its last use.
using NodeVisitor =
    llvm::function_ref<void(NodeId Id, const std::vector<HostTensor> &Vals)>;

/// interpret(), calling Visit for every node it evaluates.
std::map<std::string, HostTensor> interpretVisiting(const Graph &G,
                                                    const Bindings &B,
                                                    NodeVisitor Visit,
                                                    const InterpretOptions &Opts = {});

/// Node Id's value computed from its operands' values in Vals (indexed by
/// NodeId; only Id's operands are read), with the semantics of interpret()
/// and no rounding to the node's dtype. View nodes (broadcast, reshape,
/// slice, concat) only move data, so they may also be applied to tensors
/// that are not values (reference/ErrorBound.cpp moves error bounds with them).
HostTensor evaluateNode(const Graph &G, const Bindings &B, NodeId Id,
                        const std::vector<HostTensor> &Vals);

/// The reference value of float unary op O (not cast or not) at X, in f64:
/// the interpreter's rule, which ir/ErrorBound.cpp also reads (BoundRule::Step).
double unaryReference(Op O, double X);

/// X's values laid out over OutDims by NumPy broadcasting (X's dims aligned
/// from the right; a dim of 1 repeats). X must broadcast to OutDims.
std::vector<double> broadcastValues(const HostTensor &X,
                                    llvm::ArrayRef<int64_t> OutDims);

} // namespace jitfuse
