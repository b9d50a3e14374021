//===- ir/Graph.cpp - node arena, hash-consing, lookup, verification ------===//
#include "ir/Graph.h"

#include "ir/Half.h"
#include "support/Error.h"

#include <llvm/ADT/Hashing.h>

#include <algorithm>
#include <cstring>

namespace jitfuse {

Graph::Graph(Graph &&O)
    : Nodes(std::move(O.Nodes)), ConsTable(std::move(O.ConsTable)),
      Inputs(std::move(O.Inputs)), Scalars(std::move(O.Scalars)),
      Outputs(std::move(O.Outputs)), DynDims(std::move(O.DynDims)),
      Anchor(std::move(O.Anchor)) {
  if (Anchor)
    *Anchor = this;
  // O keeps no nodes; the moved containers are valid but unspecified.
  O.Nodes.clear();
  O.ConsTable.clear();
  O.Inputs.clear();
  O.Scalars.clear();
  O.Outputs.clear();
  O.DynDims.clear();
}

Graph::~Graph() = default;

Graph Graph::relabeled(llvm::function_ref<void(NodeId, Node &)> Edit,
                       llvm::function_ref<void(GraphOutput &)> EditOutput) const {
  Graph R;
  R.Nodes = Nodes;
  for (NodeId Id = 0; Id < R.Nodes.size(); ++Id)
    Edit(Id, R.Nodes[Id]);
  R.Inputs = Inputs;
  R.Scalars = Scalars;
  R.Outputs = Outputs;
  if (EditOutput)
    for (GraphOutput &O : R.Outputs)
      EditOutput(O);
  R.DynDims = DynDims;
  return R;
}

Graph Graph::rebuilt(
    llvm::function_ref<std::optional<NodeId>(Graph &, NodeId, const Node &)> Lower) const {
  Graph R;
  std::vector<NodeId> Map(Nodes.size());
  for (NodeId Id = 0; Id < Nodes.size(); ++Id) {
    Node N = Nodes[Id];
    for (NodeId &O : N.Operands)
      O = Map[O];
    std::optional<NodeId> L = Lower(R, Id, N);
    Map[Id] = L ? *L : R.addNode(std::move(N));
  }
  for (NodeId I : Inputs)
    R.Inputs.push_back(Map[I]);
  for (NodeId S : Scalars)
    R.Scalars.push_back(Map[S]);
  for (GraphOutput O : Outputs) {
    // A reduction over size-1 axes only lowers to its operand: an output of
    // it would have had no kernel to write it.
    O.Id = R.ownOutputNode(Map[O.Id]);
    R.Outputs.push_back(std::move(O));
  }
  // Lowered nodes only multiply dims the graph already names.
  R.DynDims = DynDims;
  return R;
}

bool Node::operator==(const Node &O) const {
  if (Kind != O.Kind || Type != O.Type || Operands != O.Operands ||
      A0 != O.A0 || A1 != O.A1 || Name != O.Name || Dims.size() != O.Dims.size() ||
      llvm::ArrayRef<Dim>(Strides) != llvm::ArrayRef<Dim>(O.Strides))
    return false;
  // Compare constants bitwise so NaN constants still share and -0 != +0.
  if (std::memcmp(&F, &O.F, sizeof(double)) != 0)
    return false;
  for (size_t I = 0; I < Dims.size(); ++I)
    if (Dims[I] != O.Dims[I])
      return false;
  return true;
}

static size_t hashNode(const Node &N) {
  llvm::hash_code H = llvm::hash_combine(static_cast<int>(N.Kind),
                                         static_cast<int>(N.Type), N.A0, N.A1,
                                         llvm::hash_value(N.Name));
  uint64_t FBits;
  std::memcpy(&FBits, &N.F, sizeof(double));
  H = llvm::hash_combine(H, FBits);
  for (NodeId Op : N.Operands)
    H = llvm::hash_combine(H, Op);
  for (const Dim &D : N.Dims)
    H = llvm::hash_combine(H, D.Size, llvm::hash_value(D.Name));
  return static_cast<size_t>(H);
}

NodeId Graph::addNode(Node N) {
  for ([[maybe_unused]] NodeId Op : N.Operands)
    JITFUSE_CHECK(Op < Nodes.size(), "operand must precede its user");
  bool Shareable = N.Kind != Op::Input && N.Kind != Op::Scalar;
  size_t H = 0;
  if (Shareable) {
    H = hashNode(N);
    auto [Begin, End] = ConsTable.equal_range(H);
    for (auto It = Begin; It != End; ++It)
      if (Nodes[It->second] == N)
        return It->second;
  }
  NodeId Id = static_cast<NodeId>(Nodes.size());
  noteDims(N.Dims);
  Nodes.push_back(std::move(N));
  if (Shareable)
    ConsTable.emplace(H, Id);
  return Id;
}

void Graph::noteDims(llvm::ArrayRef<Dim> Dims) {
  for (const Dim &D : Dims)
    for (llvm::StringRef F : D.factors())
      if (std::find(DynDims.begin(), DynDims.end(), F) == DynDims.end())
        DynDims.push_back(F.str());
}

static bool validName(llvm::StringRef Name) { return !Name.empty(); }

static bool nameTaken(const Graph &G, llvm::StringRef Name) {
  for (NodeId Id : G.inputs())
    if (G.node(Id).Name == Name)
      return true;
  for (NodeId Id : G.scalars())
    if (G.node(Id).Name == Name)
      return true;
  return false;
}

Value Graph::input(llvm::StringRef Name, DType T, llvm::ArrayRef<Dim> Dims) {
  if (!validName(Name))
    fail("input: a tensor input needs a non-empty name");
  if (nameTaken(*this, Name))
    fail("input '{}': the name is already used by another input or scalar",
         Name.str());
  if (Dims.size() > MaxRank)
    fail("input '{}': rank {} is not supported (expected rank 0 to {})",
         Name.str(), Dims.size(), MaxRank);
  for (const Dim &D : Dims) {
    if (!D.isDynamic() && D.Size < 0)
      fail("input '{}': dim {} is negative in shape {}", Name.str(), D.Size,
           shapeStr(Dims));
    if (!D.validName())
      fail("input '{}': dim '{}' in shape {} has an empty factor or no name; expected names "
           "joined by '*', numbers allowed among them ('64*B')",
           Name.str(), D.Name, shapeStr(Dims));
  }
  if (!boundedStaticNumel(Dims))
    fail("input '{}': shape {} holds more than 2^48 elements", Name.str(),
         shapeStr(Dims));
  Node N;
  N.Kind = Op::Input;
  N.Type = T;
  N.Dims.assign(Dims.begin(), Dims.end());
  N.Name = Name.str();
  N.A0 = static_cast<int64_t>(Inputs.size());
  NodeId Id = addNode(std::move(N));
  Inputs.push_back(Id);
  return Value(this, Id);
}

/// Validates the strides a tensor \p What ("input 'x'") of shape \p Dims is
/// declared with; returns them, or empty when they are the contiguous ones.
static Shape checkedStrides(const std::string &What, llvm::ArrayRef<Dim> Dims,
                            llvm::ArrayRef<Dim> Strides, bool Output) {
  if (Strides.size() != Dims.size())
    fail("{}: {} strides for shape {} of rank {}; expected one stride per dim", What,
         Strides.size(), shapeStr(Dims), Dims.size());
  for (size_t I = 0; I < Strides.size(); ++I) {
    const Dim &S = Strides[I];
    if (!S.isDynamic() && S.Size < 0)
      fail("{}: stride {} of dim {} is negative; expected >= 0 (a reversed view is not "
           "supported)",
           What, S.Size, I);
    if (!S.validName())
      fail("{}: stride '{}' of dim {} has an empty factor or no name; expected names joined "
           "by '*', numbers allowed among them ('64*B')",
           What, S.Name, I);
  }
  if (std::optional<Shape> C = contiguousStrides(Dims);
      C && llvm::ArrayRef<Dim>(*C) == Strides)
    return {};
  // Dynamic: checked by run(). Negative: input() rejects the shape.
  auto Sizes = staticSizes(Dims), Steps = staticSizes(Strides);
  if (!Sizes || !Steps || llvm::any_of(*Sizes, [](int64_t S) { return S < 0; }))
    return Shape(Strides.begin(), Strides.end());
  if (!stridedSpan(*Sizes, *Steps))
    fail("{}: shape {} at strides {} spans more than 2^48 elements", What, shapeStr(Dims),
         shapeStr(Strides));
  if (Output)
    if (std::string Why = outputOverlap(*Sizes, *Steps); !Why.empty())
      fail("{}: strides {} for shape {} overlap: {}; an output needs each element at its "
           "own offset",
           What, shapeStr(Strides), shapeStr(Dims), Why);
  return Shape(Strides.begin(), Strides.end());
}

Value Graph::input(llvm::StringRef Name, DType T, llvm::ArrayRef<Dim> Dims,
                   llvm::ArrayRef<Dim> Strides) {
  Shape S = checkedStrides(fmt::format("input '{}'", Name.str()), Dims, Strides, false);
  Value V = input(Name, T, Dims);
  noteDims(S);
  Nodes[V.id()].Strides = std::move(S);
  return V;
}

void Graph::output(llvm::StringRef Name, Value V, llvm::ArrayRef<Dim> Strides) {
  if (V.valid() && &V.graph() == this && V.id() < Nodes.size()) {
    Shape S = checkedStrides(fmt::format("output '{}'", Name.str()), Nodes[V.id()].Dims,
                             Strides, true);
    output(Name, V);
    noteDims(S);
    Outputs.back().Strides = std::move(S);
    return;
  }
  output(Name, V); // throws its own error
}

llvm::ArrayRef<Dim> Graph::stridesOf(NodeId N) const {
  const Node &Nd = Nodes[N];
  if (Nd.Kind == Op::Input)
    return Nd.Strides;
  for (const GraphOutput &O : Outputs)
    if (O.Id == N)
      return O.Strides;
  return {};
}

Value Graph::scalar(llvm::StringRef Name, DType T) {
  if (!validName(Name))
    fail("scalar: a run-time scalar needs a non-empty name");
  if (nameTaken(*this, Name))
    fail("scalar '{}': the name is already used by another input or scalar",
         Name.str());
  Node N;
  N.Kind = Op::Scalar;
  N.Type = T;
  N.Name = Name.str();
  N.A0 = static_cast<int64_t>(Scalars.size());
  NodeId Id = addNode(std::move(N));
  Scalars.push_back(Id);
  return Value(this, Id);
}

Value Graph::constant(double V, DType T) {
  Node N;
  N.Kind = Op::Constant;
  N.Type = T;
  // An integer or bool constant is converted here, once, by the rule the
  // reference uses for every value (truncate, saturate, NaN -> 0; bool is
  // V != 0), so the kernel's literal and the interpreter cannot disagree on
  // an out-of-range or NaN value. Float constants keep V: the emitter and
  // the interpreter round them to their dtype the same way already.
  N.F = isFloat(T) ? V : roundToDType(V, T);
  return Value(this, addNode(std::move(N)));
}

void Graph::output(llvm::StringRef Name, Value V) {
  if (!V.valid() || &V.graph() != this || V.id() >= Nodes.size())
    fail("output '{}': the value does not belong to this graph", Name.str());
  if (!validName(Name))
    fail("output: an output needs a non-empty name");
  for (const GraphOutput &O : Outputs)
    if (O.Name == Name)
      fail("output '{}': the name is already used by another output",
           Name.str());
  const Node &N = Nodes[V.id()];
  if (N.Kind == Op::Scalar || N.Kind == Op::Constant)
    fail("output '{}': node %{} is a {} {}; an output must be a tensor computed "
         "by the graph",
         Name.str(), V.id(), opName(N.Kind).str(), dtypeName(N.Type).str());
  Outputs.push_back({Name.str(), ownOutputNode(V.id()), {}});
}

NodeId Graph::ownOutputNode(NodeId Id) {
  // An input returned as is (often a cast to its own dtype), or a node that
  // is already another output, becomes an explicit copy. (The copy of an
  // input is shared like any node, so a second output of it copies the
  // copy.)
  auto IsOutput = [&](NodeId N) {
    for (const GraphOutput &O : Outputs)
      if (O.Id == N)
        return true;
    return false;
  };
  while (Nodes[Id].Kind == Op::Input || IsOutput(Id)) {
    Node Copy;
    Copy.Kind = Op::Broadcast;
    Copy.Type = Nodes[Id].Type;
    Copy.Dims = Nodes[Id].Dims;
    Copy.Operands.push_back(Id);
    Id = addNode(std::move(Copy));
  }
  return Id;
}

template <typename Range>
static std::string listNames(const Graph &G, const Range &Ids) {
  std::string Out;
  for (NodeId Id : Ids)
    Out += (Out.empty() ? "'" : ", '") + G.node(Id).Name + "'";
  return Out.empty() ? "none" : Out;
}

Value Graph::inputNamed(llvm::StringRef Name) {
  for (NodeId Id : Inputs)
    if (Nodes[Id].Name == Name)
      return Value(this, Id);
  fail("unknown input '{}' (inputs: {})", Name.str(), listNames(*this, Inputs));
}

Value Graph::scalarNamed(llvm::StringRef Name) {
  for (NodeId Id : Scalars)
    if (Nodes[Id].Name == Name)
      return Value(this, Id);
  fail("unknown scalar '{}' (scalars: {})", Name.str(),
       listNames(*this, Scalars));
}

NodeId Graph::outputNamed(llvm::StringRef Name) const {
  std::string Known;
  for (const GraphOutput &O : Outputs) {
    if (O.Name == Name)
      return O.Id;
    Known += (Known.empty() ? "'" : ", '") + O.Name + "'";
  }
  fail("unknown output '{}' (outputs: {})", Name.str(),
       Known.empty() ? "none" : Known);
}

void Graph::verify() const {
  for (NodeId Id = 0; Id < Nodes.size(); ++Id) {
    const Node &N = Nodes[Id];
    int Arity = opArity(N.Kind);
    if (Arity >= 0 && N.Operands.size() != static_cast<size_t>(Arity))
      fail("verify: node %{} ({}) has {} operands, expected {}", Id,
           opName(N.Kind).str(), N.Operands.size(), Arity);
    for (NodeId Op : N.Operands)
      if (Op >= Id)
        fail("verify: node %{} ({}) uses %{}, which does not precede it", Id,
             opName(N.Kind).str(), Op);
    if (N.rank() > MaxRank)
      fail("verify: node %{} ({}) has rank {} > {}", Id, opName(N.Kind).str(),
           N.rank(), MaxRank);
    if (isReduction(N.Kind) && N.scope() == ReduceScope::Axes &&
        (N.A1 <= 0 || N.A1 >= (int64_t(1) << N.rank())))
      fail("verify: node %{} ({}) reduces axes mask {:#x}, expected a non-empty "
           "set of its {} axes",
           Id, opName(N.Kind).str(), N.A1, N.rank());
  }
  for (const GraphOutput &O : Outputs)
    if (O.Id >= Nodes.size())
      fail("verify: output '{}' refers to missing node %{}", O.Name, O.Id);
}

} // namespace jitfuse
