//===- ir/Graph.h - the expression graph and its builder API ----*- C++ -*-===//
//
// Graph owns every node in one arena, addressed by NodeId, in topological
// order (operands always have smaller ids). Structurally identical nodes are
// shared (hash-consing), so building the same expression twice yields one node.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Node.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace jitfuse {

class Graph;

/// A handle to a node of a graph; what the builder API passes around.
/// It reaches its graph through the graph's anchor, a heap cell that moves
/// with the graph, so handles stay valid when the graph is moved (returned
/// by value, stored in a growing std::vector<Graph>). They do not outlive it.
class Value {
public:
  Value() = default;
  inline Value(Graph *G, NodeId Id);

  Graph &graph() const { return **Anchor; }
  NodeId id() const { return Id; }
  const Node &node() const;
  DType dtype() const { return node().Type; }
  const Shape &shape() const { return node().Dims; }
  unsigned rank() const { return node().rank(); }
  bool valid() const { return Anchor != nullptr; }

private:
  Graph *const *Anchor = nullptr;
  NodeId Id = 0;
};

struct GraphOutput {
  std::string Name;
  NodeId Id;
  Shape Strides; // empty: contiguous (Graph::output)
};

class Graph {
public:
  Graph() = default;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  /// Values built on O now refer to this graph; O is left empty.
  Graph(Graph &&O);
  ~Graph();

  /// A tensor input with static and/or named dynamic dims.
  Value input(llvm::StringRef Name, DType T, llvm::ArrayRef<Dim> Dims);
  /// A strided input: element I sits at sum(idx[d] * Strides[d]) elements
  /// from its pointer. A stride is static or a named dim bound at run() like
  /// any dynamic dim (it may be a dim of the shape: a transposed view of a
  /// contiguous [H, "T"] buffer is {"T", H} with strides {1, "T"}). A static
  /// last stride of 1 keeps vector loads; 0 reads one element along a dim.
  /// Strides that equal the contiguous ones declare a contiguous input.
  Value input(llvm::StringRef Name, DType T, llvm::ArrayRef<Dim> Dims,
              llvm::ArrayRef<Dim> Strides);
  /// A run-time scalar parameter (changing it never recompiles).
  Value scalar(llvm::StringRef Name, DType T);
  /// A compile-time constant (rank 0).
  Value constant(double V, DType T = DType::F32);
  /// Marks V as a named graph output.
  void output(llvm::StringRef Name, Value V);
  /// A strided output (strides as for input()): its elements must not
  /// overlap, which is checked here for static strides and by run()
  /// otherwise.
  void output(llvm::StringRef Name, Value V, llvm::ArrayRef<Dim> Strides);

  const Node &node(NodeId Id) const { return Nodes[Id]; }
  size_t size() const { return Nodes.size(); }
  const std::deque<Node> &nodes() const { return Nodes; }
  llvm::ArrayRef<NodeId> inputs() const { return Inputs; }
  llvm::ArrayRef<NodeId> scalars() const { return Scalars; }
  llvm::ArrayRef<GraphOutput> outputs() const { return Outputs; }
  /// Names of the dynamic dims in order of first appearance.
  llvm::ArrayRef<std::string> dynamicDims() const { return DynDims; }

  /// The element strides of tensor N in device memory: an input's or a graph
  /// output's declared strides; empty (contiguous) for every other node.
  llvm::ArrayRef<Dim> stridesOf(NodeId N) const;

  /// Looks up an input, scalar or output by name; throws naming the
  /// candidates when there is none.
  Value inputNamed(llvm::StringRef Name);
  Value scalarNamed(llvm::StringRef Name);
  NodeId outputNamed(llvm::StringRef Name) const;

  /// Adds N (already validated by the builder) or returns the id of an
  /// identical node. Inputs and scalars are never shared.
  NodeId addNode(Node N);
  Value value(NodeId Id) { return Value(this, Id); }

  /// A copy of this graph with the same node ids, inputs, scalars, outputs
  /// and dynamic dims, each node passed through Edit. For the planner's
  /// views of a graph (compiler/ReduceAxes.h): nodes added to the copy are
  /// never shared with the copied ones.
  Graph relabeled(llvm::function_ref<void(NodeId, Node &)> Edit,
                  llvm::function_ref<void(GraphOutput &)> EditOutput = nullptr) const;

  /// A copy of this graph built node by node in order, for the planner's
  /// lowerings (compiler/LowerAxes.h): Lower gets the copy so far and each
  /// node with its operands already mapped; it returns the copy's id of the
  /// node's value (after adding nodes of its own), or nullopt to add the
  /// node as it is. Inputs, scalars, outputs (names, strides) and the
  /// dynamic dims' order are kept; ids of later nodes shift. An output
  /// lowered to an input or to another output's node gets a copy, as
  /// output() gives one.
  Graph rebuilt(llvm::function_ref<std::optional<NodeId>(Graph &, NodeId, const Node &)> Lower)
      const;

  /// Checks the structural invariants (operand counts, topological order,
  /// rank limit, outputs that name existing nodes); throws jitfuse::Error on
  /// a broken graph. Shapes are checked when each node is built, not here.
  void verify() const;

private:
  void noteDims(llvm::ArrayRef<Dim> Dims);
  /// \p Id, or a copy of it when it is an input or already an output: every
  /// output is written by exactly one kernel store into its own buffer.
  NodeId ownOutputNode(NodeId Id);
  friend class Value;
  /// The cell Values point to; holds this graph's current address.
  Graph *const *anchor() {
    if (!Anchor)
      Anchor = std::make_unique<Graph *>(this);
    return Anchor.get();
  }

  std::deque<Node> Nodes; // stable addresses for Value::node()
  std::unordered_multimap<size_t, NodeId> ConsTable;
  std::vector<NodeId> Inputs;
  std::vector<NodeId> Scalars;
  std::vector<GraphOutput> Outputs;
  std::vector<std::string> DynDims;
  std::unique_ptr<Graph *> Anchor; // created with the first Value
};

inline Value::Value(Graph *G, NodeId Id)
    : Anchor(G ? G->anchor() : nullptr), Id(Id) {}
inline const Node &Value::node() const { return graph().node(Id); }

//===----------------------------------------------------------------------===//
// Builder API. Every function validates its operands and throws
// jitfuse::Error naming the op, the operands and what was expected.
//===----------------------------------------------------------------------===//

// One function per JITFUSE_UNARY and JITFUSE_BINARY row of ir/Ops.def,
// named by its Fn column: Value exp(Value X), Value logicalNot(Value X),
// Value add(Value A, Value B), ... (the table lists them all).
#define JITFUSE_OP(...)
#define JITFUSE_UNARY(Name, Fn, ...) Value Fn(Value X);
#define JITFUSE_BINARY(Name, Fn, ...) Value Fn(Value A, Value B);
#include "ir/Ops.def"
Value cast(Value X, DType T);
/// Generic entry for any unary/binary op from Ops.def.
Value unary(Op O, Value X);
Value binary(Op O, Value A, Value B);

Value where(Value Cond, Value A, Value B);
Value fma(Value A, Value B, Value C);

Value sum(Value X, ReduceScope S = ReduceScope::LastAxis);
Value reduceMax(Value X, ReduceScope S = ReduceScope::LastAxis);
Value reduceMin(Value X, ReduceScope S = ReduceScope::LastAxis);
Value mean(Value X, ReduceScope S = ReduceScope::LastAxis);
Value reduce(Op O, Value X, ReduceScope S);
/// Reductions over a set of axes (negative axes count from the end), each
/// reduced axis kept with size 1: sum(x, {0}) of [B, H] is [1, H]. Throws
/// for an axis out of range, a repeated axis or an empty set. {-1} alone is
/// ReduceScope::LastAxis (the same node).
Value sum(Value X, llvm::ArrayRef<int64_t> Axes);
Value reduceMax(Value X, llvm::ArrayRef<int64_t> Axes);
Value reduceMin(Value X, llvm::ArrayRef<int64_t> Axes);
Value mean(Value X, llvm::ArrayRef<int64_t> Axes);
Value reduce(Op O, Value X, llvm::ArrayRef<int64_t> Axes);

Value broadcastTo(Value X, llvm::ArrayRef<Dim> Dims);
Value reshape(Value X, llvm::ArrayRef<Dim> Dims);
/// Elements [Start, Stop) of the last axis.
Value slice(Value X, int64_t Start, int64_t Stop);
/// Elements [Start, Stop) of axis Axis (negative counts from the end; the
/// axis static, and for an outer axis the dims after it static too): a
/// reshape to [outer..., axis*inner], a slice of that last axis, and a
/// reshape back, so kernels read the elements in place.
Value slice(Value X, int64_t Start, int64_t Stop, int64_t Axis);
/// Concatenation along the last axis.
Value concat(llvm::ArrayRef<Value> Xs);
/// The axes of X reordered: result axis I is X's axis Perm[I] (negative
/// axes count from the end), as torch.permute. The result is a new
/// contiguous tensor; a kernel reads X's elements where they are.
Value permute(Value X, llvm::ArrayRef<int64_t> Perm);
/// permute swapping axes A and B.
Value transpose(Value X, int64_t A, int64_t B);

/// Uniform floats in [0, 1) from Philox-4x32-10 keyed by Seed (an i64
/// scalar) and each element's linear index; Stream separates draws.
Value randUniform(Value Seed, llvm::ArrayRef<Dim> Dims, int64_t Stream = 0,
                  DType T = DType::F32);

// Operators. A double operand becomes an f32 constant, which takes the
// other operand's float type (scalars are "weak", see docs/NUMERICS.md).
Value operator+(Value A, Value B);
Value operator-(Value A, Value B);
Value operator*(Value A, Value B);
Value operator/(Value A, Value B);
Value operator-(Value A);
Value operator+(Value A, double B);
Value operator-(Value A, double B);
Value operator*(Value A, double B);
Value operator/(Value A, double B);
Value operator+(double A, Value B);
Value operator-(double A, Value B);
Value operator*(double A, Value B);
Value operator/(double A, Value B);

} // namespace jitfuse
