//===- compiler/Fusion.cpp - the fusion pass ------------------------------===//
//
// Walks the graph in topological order and puts each node into the cluster
// of its producers when the merged cluster is still one kernel we can
// generate:
//   - element-wise clusters iterate one domain (every node has its shape);
//   - a last-axis reduction turns a cluster into a row cluster over the
//     reduction's operand shape; later nodes join when they have the row
//     shape or the reduced [outer..., 1] shape (the reduced value broadcast
//     back over the row stays on chip), or relabel the row's elements (a
//     reshape of the row, computed at the row's coordinates); further
//     reductions over the same row join as later stages;
//   - a full reduction takes its element-wise prologue when nothing else
//     needs the prologue's values; whatever consumes the scalar starts a
//     new kernel;
//   - never a cycle between clusters, never more than MaxClusterNodes.
// Every refusal is recorded on the edge as a BoundaryReason. Then small
// producers read by one kernel are absorbed into it, and cheap ones read by
// several are recomputed in each (compiler/Recompute.h has the rule).
//
//===----------------------------------------------------------------------===//
#include "compiler/Fusion.h"

#include "codegen/ColumnReduce.h"
#include "compiler/ReduceAxes.h"

#include "compiler/Recompute.h"
#include "support/Error.h"

#include <llvm/ADT/STLExtras.h>

#include <algorithm>
#include <cassert>
#include <map>
#include <optional>
#include <set>

namespace jitfuse {

namespace {

struct ClusterState {
  KernelKind Kind = KernelKind::Elementwise;
  Shape Domain; // element-wise: iteration shape; row/full: reduced operand shape
  std::vector<NodeId> Nodes;
  std::set<unsigned> Deps; // clusters this one reads from
  bool Alive = true;
};

struct Refusal {
  BoundaryReason Reason;
  std::string Detail;
};

class Fuser {
public:
  Fuser(const Graph &G, const std::set<NodeId> &WholeRowsOnly, const FusionOptions &Opts)
      : G(G), WholeRowsOnly(WholeRowsOnly), Opts(Opts) {}
  Partition run();
  /// Parts of rows (see isRowPart) that a row kernel took but whose values
  /// leave it: run() must be repeated with them in WholeRowsOnly.
  const std::vector<NodeId> &escapedRowParts() const { return Escaped; }

private:
  unsigned find(unsigned C) {
    while (Parent[C] != C)
      C = Parent[C] = Parent[Parent[C]];
    return C;
  }
  int clusterOf(NodeId N) {
    return Owner[N] < 0 ? -1 : static_cast<int>(find(Owner[N]));
  }
  bool reaches(unsigned From, unsigned To);
  /// Whether O is a column reduction or a chain of reshapes of one.
  bool relabelsColumnResult(NodeId O) const;
  /// ColumnReduceEpilogue, FullReduceEpilogue: whether element-wise N may
  /// join column or full reduction cluster C, evaluated at each column's
  /// result or at the one result.
  bool resultEpilogue(unsigned C, NodeId N);
  /// A path that leaves the clusters S (into Others) and comes back.
  std::optional<Refusal> wouldCycle(llvm::ArrayRef<unsigned> S, llvm::ArrayRef<unsigned> Others);
  std::optional<Refusal> tryMerge(llvm::ArrayRef<unsigned> S, NodeId N,
                                  llvm::ArrayRef<unsigned> Others,
                                  KernelKind &Kind, Shape &Domain);
  /// Whether node O is computed by one of the clusters S being merged.
  bool inMerge(llvm::ArrayRef<unsigned> S, NodeId O) {
    int C = clusterOf(O);
    return C >= 0 && llvm::is_contained(S, static_cast<unsigned>(C));
  }
  std::optional<Refusal> readsOtherLayout(llvm::ArrayRef<unsigned> S, NodeId N,
                                          llvm::ArrayRef<Dim> Row);
  void join(llvm::ArrayRef<unsigned> S, NodeId N, KernelKind Kind, Shape Domain);
  void mergeSiblings();
  void absorbCheapProducers();
  unsigned newCluster(NodeId N);

  const Graph &G;
  const std::set<NodeId> &WholeRowsOnly;
  FusionOptions Opts;
  std::vector<NodeId> Escaped;
  std::vector<ClusterState> Clusters;
  std::vector<unsigned> Parent;
  std::vector<int> Owner; // node -> cluster id (not canonical), -1 if none
  std::vector<std::vector<NodeId>> Users;
  std::vector<bool> IsOutput;
  std::map<std::pair<NodeId, NodeId>, Refusal> EdgeReason;
};

Shape reducedShape(llvm::ArrayRef<Dim> RowDomain) {
  Shape S(RowDomain.begin(), RowDomain.end());
  S.back() = Dim(1);
  return S;
}

bool sameShape(llvm::ArrayRef<Dim> A, llvm::ArrayRef<Dim> B) { return A == B; }

/// A part of each row: the row's outer dims and a static last dim of
/// another length (RoPE's halves of a normalized head, [T, 32, 64] of rows
/// [T, 32, 128]). A row kernel computes it inside its epilogue where a
/// concat puts the parts back into a row (the element's row is the same);
/// it cannot store one, so such nodes may not leave the kernel.
bool isRowPart(llvm::ArrayRef<Dim> S, llvm::ArrayRef<Dim> Row) {
  if (S.size() != Row.size() || S.empty() || S.back().isDynamic() || S.back().isStatic(1) ||
      S.back() == Row.back())
    return false;
  return S.drop_back() == Row.drop_back();
}

bool Fuser::reaches(unsigned From, unsigned To) {
  std::vector<unsigned> Stack{find(From)};
  std::set<unsigned> Seen;
  To = find(To);
  while (!Stack.empty()) {
    unsigned C = Stack.back();
    Stack.pop_back();
    if (C == To)
      return true;
    if (!Seen.insert(C).second)
      continue;
    for (unsigned D : Clusters[C].Deps)
      Stack.push_back(find(D));
  }
  return false;
}

/// A node of a row kernel that relabels the row's elements is computed at
/// the row's coordinates. What it reads from the same kernel must be
/// relabeled the same way (its own shape, or the row for a reshape): a
/// per-row value broadcast in the new shape would belong to another row.
std::optional<Refusal> Fuser::readsOtherLayout(llvm::ArrayRef<unsigned> S, NodeId N,
                                               llvm::ArrayRef<Dim> Row) {
  const Node &Nd = G.node(N);
  for (NodeId O : Nd.Operands) {
    const Node &On = G.node(O);
    if (!inMerge(S, O) || sameShape(On.Dims, Nd.Dims) ||
        staticNumel(On.Dims) == std::optional<int64_t>(1) ||
        (Nd.Kind == Op::Reshape && sameNumel(On.Dims, Row)))
      continue;
    return Refusal{BoundaryReason::RowDomainMismatch,
                   shapeStr(Nd.Dims) + " relabels the row " + shapeStr(Row) + " but reads %" +
                       std::to_string(O) + " " + shapeStr(On.Dims) +
                       " of the same kernel in another layout"};
  }
  return std::nullopt;
}

bool Fuser::relabelsColumnResult(NodeId O) const {
  while (G.node(O).Kind == Op::Reshape)
    O = G.node(O).Operands[0];
  return isColumnReduction(G.node(O));
}

bool Fuser::resultEpilogue(unsigned C, NodeId N) {
  const Node &Nd = G.node(N);
  OpKind K = opKind(Nd.Kind);
  const ClusterState &Q = Clusters[C];
  bool Column = Q.Kind == KernelKind::ColumnReduce;
  if (!(Column ? Opts.ColumnReduceEpilogue
               : Q.Kind == KernelKind::FullReduce && Opts.FullReduceEpilogue) ||
      (K != OpKind::Unary && K != OpKind::Binary && K != OpKind::Ternary) ||
      Q.Nodes.size() + 1 > MaxClusterNodes || !G.stridesOf(N).empty())
    return false;
  NodeId Red = ~NodeId(0);
  for (NodeId M : Q.Nodes)
    if (isReduction(G.node(M).Kind))
      Red = M;
  // Over the result's shape (a full reduction's: one element, any rank),
  // and reading of this cluster only the result and its epilogue: a
  // prologue value has no single value at a result, even where its shape
  // matches (a full reduction over one element).
  llvm::ArrayRef<Dim> RS(G.node(Red).Dims);
  if (Column ? llvm::ArrayRef<Dim>(Nd.Dims) != RS
             : staticNumel(Nd.Dims) != std::optional<int64_t>(1))
    return false;
  auto InCluster = [&](NodeId A) { return clusterOf(A) == static_cast<int>(C); };
  for (NodeId O : Nd.Operands)
    if (InCluster(O) && !codegen::readsResult(G, O, Red, InCluster))
      return false;
  return true;
}

std::optional<Refusal> Fuser::wouldCycle(llvm::ArrayRef<unsigned> S,
                                         llvm::ArrayRef<unsigned> Others) {
  for (unsigned O : Others)
    for (unsigned C : S)
      if (reaches(O, C))
        return Refusal{BoundaryReason::WouldCycle, ""};
  for (unsigned A : S)
    for (unsigned B : S)
      if (A != B && reaches(A, B))
        return Refusal{BoundaryReason::WouldCycle, ""};
  return std::nullopt;
}

std::optional<Refusal> Fuser::tryMerge(llvm::ArrayRef<unsigned> S, NodeId N,
                                       llvm::ArrayRef<unsigned> Others,
                                       KernelKind &Kind, Shape &Domain) {
  const Node &Nd = G.node(N);
  bool HaveRow = false;
  Shape Row;
  size_t Size = 1;
  // A reshape of a column reduction's result lists the same values in the
  // same order: the kernel stores it where it stores the result (the [1, K]
  // of a lowered outer reduction back in the reduction's shape).
  if (Nd.Kind == Op::Reshape && S.size() == 1 &&
      Clusters[S[0]].Kind == KernelKind::ColumnReduce &&
      relabelsColumnResult(Nd.Operands[0])) {
    Kind = KernelKind::ColumnReduce;
    Domain = Clusters[S[0]].Domain;
    return std::nullopt;
  }
  // ColumnReduceEpilogue, FullReduceEpilogue: element-wise work on the
  // results runs in the last block (of each column tile), after the
  // partials are combined.
  if (S.size() == 1 && resultEpilogue(S[0], N)) {
    if (auto R = wouldCycle(S, Others))
      return R;
    Kind = Clusters[S[0]].Kind;
    Domain = Clusters[S[0]].Domain;
    return std::nullopt;
  }
  for (unsigned C : S) {
    const ClusterState &K = Clusters[C];
    Size += K.Nodes.size();
    if (K.Kind == KernelKind::FullReduce || K.Kind == KernelKind::ColumnReduce)
      return Refusal{BoundaryReason::ReductionResult, ""};
    if (K.Kind != KernelKind::RowReduce)
      continue;
    if (HaveRow && !sameShape(Row, K.Domain))
      return Refusal{BoundaryReason::SecondRowDomain,
                     "rows " + shapeStr(Row) + " and " + shapeStr(K.Domain)};
    HaveRow = true;
    Row = K.Domain;
  }
  if (Size > MaxClusterNodes)
    return Refusal{BoundaryReason::ClusterTooLarge,
                   "cap " + std::to_string(MaxClusterNodes) + " nodes"};

  bool Column = isReduction(Nd.Kind) && isColumnReduction(Nd);
  if (isReduction(Nd.Kind) && (Nd.scope() == ReduceScope::All || Column)) {
    const Shape &OpShape = G.node(Nd.Operands[0]).Dims;
    if (S.size() != 1 || HaveRow || !sameShape(Clusters[S[0]].Domain, OpShape))
      return Refusal{BoundaryReason::DomainMismatch,
                     std::string(Column ? "a column" : "a full") +
                         " reduction takes only an element-wise prologue over " +
                         shapeStr(OpShape)};
    for (NodeId M : Clusters[S[0]].Nodes) {
      // FullReducePrologueOutputs: the full reduction's kernel visits each
      // element of its domain once, so it may store a graph output of the
      // domain's shape (codegen: KernelWriter::fullBody), which other
      // kernels may then read too. An intermediate read elsewhere is left
      // to recomputeCheapProducers: recomputing x * x beats storing it.
      // ColumnReducePrologueOutputs: the same for a column reduction
      // (codegen: columnReduceBody stores them as the rows go by).
      if ((Column ? Opts.ColumnReducePrologueOutputs : Opts.FullReducePrologueOutputs) &&
          IsOutput[M] &&
          sameShape(G.node(M).Dims, OpShape) && G.stridesOf(M).empty())
        continue;
      if (IsOutput[M])
        return Refusal{BoundaryReason::MultipleConsumers,
                       "%" + std::to_string(M) + " is a graph output"};
      for (NodeId U : Users[M])
        if (U != N && clusterOf(U) != static_cast<int>(S[0]))
          return Refusal{BoundaryReason::MultipleConsumers,
                         "%" + std::to_string(M) + " is also used by %" +
                             std::to_string(U)};
    }
    Kind = Column ? KernelKind::ColumnReduce : KernelKind::FullReduce;
    Domain = OpShape;
  } else if (isReduction(Nd.Kind)) {
    const Shape &OpShape = G.node(Nd.Operands[0]).Dims;
    if (HaveRow && !sameShape(Row, OpShape))
      return Refusal{BoundaryReason::SecondRowDomain,
                     "rows " + shapeStr(Row) + " and " + shapeStr(OpShape)};
    HaveRow = true;
    Row = OpShape;
  } else if (HaveRow && Nd.Kind == Op::Permute && inMerge(S, Nd.Operands[0])) {
    // The kernel computes a node at the coordinates it is read at; a
    // permute reads its operand at other coordinates, so a value that
    // depends on a row's reduction would come from another row.
    return Refusal{BoundaryReason::RowDomainMismatch,
                   "a permute of " + shapeStr(G.node(Nd.Operands[0]).Dims) +
                       " moves elements across the rows of " + shapeStr(Row)};
  } else if (HaveRow && isRowPart(Nd.Dims, Row) && !WholeRowsOnly.count(N)) {
    // Its in-kernel operands share its rows (row, reduced or part shape).
    for (NodeId O : Nd.Operands) {
      const Node &On = G.node(O);
      if (inMerge(S, O) && staticNumel(On.Dims) != std::optional<int64_t>(1) &&
          (On.Dims.size() != Row.size() ||
           llvm::ArrayRef<Dim>(On.Dims).drop_back() != llvm::ArrayRef<Dim>(Row).drop_back()))
        return Refusal{BoundaryReason::RowDomainMismatch,
                       shapeStr(Nd.Dims) + " is a part of the row " + shapeStr(Row) +
                           " but reads %" + std::to_string(O) + " " + shapeStr(On.Dims)};
    }
  } else if (HaveRow && !sameShape(Nd.Dims, Row) && !sameShape(Nd.Dims, reducedShape(Row))) {
    if (isRowPart(Nd.Dims, Row))
      return Refusal{BoundaryReason::RowDomainMismatch,
                     shapeStr(Nd.Dims) + " is a part of the row " + shapeStr(Row) +
                         " whose values leave the kernel (a row kernel stores whole rows)"};
    if (!sameNumel(Nd.Dims, Row))
      return Refusal{BoundaryReason::RowDomainMismatch,
                     shapeStr(Nd.Dims) + " is neither the row " + shapeStr(Row) +
                         ", its reduced shape, nor a relabeling of the row's elements"};
    // A relabeling of the rows' elements (a reshape back to [N, C, HW]
    // after GroupNorm's statistics, or per-head norms back to [T, 4096]):
    // the kernel computes it at the row's own coordinates, since both list
    // the same elements in the same order.
    if (auto R = readsOtherLayout(S, N, Row))
      return R;
  }
  if (Kind != KernelKind::FullReduce && Kind != KernelKind::ColumnReduce) {
    Kind = HaveRow ? KernelKind::RowReduce : KernelKind::Elementwise;
    Domain = HaveRow ? Row : Nd.Dims;
    for (unsigned C : S) {
      const ClusterState &K = Clusters[C];
      if (K.Kind != KernelKind::Elementwise)
        continue;
      bool Fits = HaveRow ? sameShape(K.Domain, Row) ||
                                sameShape(K.Domain, reducedShape(Row)) ||
                                sameNumel(K.Domain, Row) || isRowPart(K.Domain, Row)
                          : sameShape(K.Domain, Nd.Dims);
      if (Fits && HaveRow && isRowPart(K.Domain, Row))
        Fits = llvm::none_of(K.Nodes, [&](NodeId M) { return WholeRowsOnly.count(M) != 0; });
      if (Fits && HaveRow && !sameShape(K.Domain, Row) && !sameShape(K.Domain, reducedShape(Row)))
        for (NodeId M : K.Nodes)
          if (auto R = readsOtherLayout(S, M, Row))
            return R;
      if (!Fits)
        return Refusal{BoundaryReason::DomainMismatch,
                       shapeStr(K.Domain) + " vs " +
                           shapeStr(HaveRow ? llvm::ArrayRef<Dim>(Row)
                                            : llvm::ArrayRef<Dim>(Nd.Dims))};
    }
  }
  // No path may leave the merged cluster and come back.
  return wouldCycle(S, Others);
}

void Fuser::join(llvm::ArrayRef<unsigned> S, NodeId N, KernelKind Kind,
                 Shape Domain) {
  unsigned Root = S.front();
  for (unsigned C : S.drop_front()) {
    ClusterState &K = Clusters[C];
    Clusters[Root].Nodes.insert(Clusters[Root].Nodes.end(), K.Nodes.begin(),
                                K.Nodes.end());
    Clusters[Root].Deps.insert(K.Deps.begin(), K.Deps.end());
    K.Alive = false;
    K.Nodes.clear();
    Parent[C] = Root;
  }
  ClusterState &R = Clusters[Root];
  R.Kind = Kind;
  R.Domain = std::move(Domain);
  R.Nodes.push_back(N);
  Owner[N] = static_cast<int>(Root);
  for (NodeId Op : G.node(N).Operands)
    if (int C = clusterOf(Op); C >= 0 && static_cast<unsigned>(C) != Root)
      R.Deps.insert(C);
  // Canonicalize deps and drop self references left by the merge.
  std::set<unsigned> Deps;
  for (unsigned D : R.Deps)
    if (find(D) != Root)
      Deps.insert(find(D));
  R.Deps = std::move(Deps);
}

/// Sibling fusion: two kernels over one iteration domain that load a common
/// tensor (mean and max of a row, two element-wise users of x) become one
/// kernel with several outputs, so the tensor is loaded once and a launch is
/// saved. Row kernels must share the row; an element-wise kernel joins a row
/// kernel when it iterates the row or its reduced shape (the forward walk's
/// rule). Full reductions keep one reduction per kernel. Neither may depend
/// on the other: then the merged kernel could not be ordered.
void Fuser::mergeSiblings() {
  auto Fits = [&](const ClusterState &E, const ClusterState &R) {
    if (E.Kind == KernelKind::Elementwise && R.Kind == KernelKind::Elementwise)
      return sameShape(E.Domain, R.Domain);
    if (E.Kind == KernelKind::RowReduce && R.Kind == KernelKind::RowReduce)
      return sameShape(E.Domain, R.Domain);
    if (E.Kind != KernelKind::Elementwise || R.Kind != KernelKind::RowReduce)
      return false;
    return sameShape(E.Domain, R.Domain) || sameShape(E.Domain, reducedShape(R.Domain));
  };
  for (bool Changed = true; Changed;) {
    Changed = false;
    // Tensors each kernel loads: graph inputs and other kernels' values.
    std::vector<std::set<NodeId>> Loads(Clusters.size());
    for (unsigned C = 0; C < Clusters.size(); ++C) {
      if (!Clusters[C].Alive)
        continue;
      for (NodeId N : Clusters[C].Nodes)
        for (NodeId Op : G.node(N).Operands)
          if (G.node(Op).Kind == Op::Input ||
              (clusterOf(Op) >= 0 && static_cast<unsigned>(clusterOf(Op)) != C))
            Loads[C].insert(Op);
    }
    for (unsigned A = 0; A < Clusters.size() && !Changed; ++A) {
      for (unsigned B = A + 1; B < Clusters.size() && !Changed; ++B) {
        ClusterState &KA = Clusters[A], &KB = Clusters[B];
        if (!KA.Alive || !KB.Alive || KA.Nodes.size() + KB.Nodes.size() > MaxClusterNodes)
          continue;
        if (!Fits(KA, KB) && !Fits(KB, KA))
          continue;
        bool Shares = std::any_of(Loads[A].begin(), Loads[A].end(),
                                  [&](NodeId N) { return Loads[B].count(N) != 0; });
        if (!Shares || reaches(A, B) || reaches(B, A))
          continue;
        if (KB.Kind == KernelKind::RowReduce) {
          KA.Kind = KernelKind::RowReduce;
          KA.Domain = KB.Domain;
        }
        KA.Nodes.insert(KA.Nodes.end(), KB.Nodes.begin(), KB.Nodes.end());
        std::set<unsigned> Deps;
        for (unsigned D : KA.Deps)
          Deps.insert(find(D));
        for (unsigned D : KB.Deps)
          Deps.insert(find(D));
        KB.Alive = false;
        KB.Nodes.clear();
        Parent[B] = A;
        KA.Deps = std::move(Deps);
        Changed = true;
      }
    }
  }
}

/// A small element-wise cluster whose values only one other kernel reads is
/// recomputed inside that kernel instead of materialized: a cast of a weight
/// [H] inside a row kernel over [B,H], the slices and casts of RoPE's halves,
/// a reshape of a cos table. Such clusters failed to merge in the forward
/// walk only because their shape differs from the consumer's domain; the
/// per-element code computes any element-wise/view DAG at any coordinates.
void Fuser::absorbCheapProducers() {
  constexpr size_t MaxAbsorbedNodes = 64;
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (unsigned K = 0; K < Clusters.size(); ++K) {
      ClusterState &P = Clusters[K];
      if (!P.Alive || P.Kind != KernelKind::Elementwise ||
          P.Nodes.size() > MaxAbsorbedNodes)
        continue;
      std::set<unsigned> Targets;
      bool Stored = false;
      for (NodeId N : P.Nodes) {
        Stored |= IsOutput[N];
        for (NodeId U : Users[N])
          if (find(Owner[U]) != K)
            Targets.insert(find(Owner[U]));
      }
      if (Stored || Targets.size() != 1)
        continue; // shared: recomputeCheapProducers decides
      unsigned C = *Targets.begin();
      ClusterState &Q = Clusters[C];
      if (Q.Nodes.size() + P.Nodes.size() > MaxClusterNodes)
        continue;
      // Merging creates a cycle iff C reaches K through a third cluster.
      bool Cycle = false;
      for (unsigned D : Q.Deps)
        Cycle |= find(D) != K && reaches(D, K);
      if (Cycle)
        continue;
      Q.Nodes.insert(Q.Nodes.end(), P.Nodes.begin(), P.Nodes.end());
      std::set<unsigned> Deps;
      for (unsigned D : Q.Deps)
        if (find(D) != K)
          Deps.insert(find(D));
      for (unsigned D : P.Deps)
        if (find(D) != C)
          Deps.insert(find(D));
      Q.Deps = std::move(Deps);
      P.Alive = false;
      P.Nodes.clear();
      Parent[K] = C;
      Changed = true;
    }
  }
}

unsigned Fuser::newCluster(NodeId N) {
  const Node &Nd = G.node(N);
  unsigned C = static_cast<unsigned>(Clusters.size());
  ClusterState K;
  if (isReduction(Nd.Kind)) {
    K.Kind = Nd.scope() == ReduceScope::All ? KernelKind::FullReduce
             : isColumnReduction(Nd)         ? KernelKind::ColumnReduce
                                             : KernelKind::RowReduce;
    K.Domain = G.node(Nd.Operands[0]).Dims;
  } else {
    K.Domain = Nd.Dims;
  }
  K.Nodes.push_back(N);
  Clusters.push_back(std::move(K));
  Parent.push_back(C);
  Owner[N] = static_cast<int>(C);
  for (NodeId Op : Nd.Operands)
    if (int D = clusterOf(Op); D >= 0)
      Clusters[C].Deps.insert(D);
  return C;
}

Partition Fuser::run() {
  NodeUses U = nodeUses(G);
  std::vector<bool> Live = std::move(U.Live);
  Users = std::move(U.Users);
  IsOutput = std::move(U.IsOutput);
  Owner.assign(G.size(), -1);

  for (NodeId N = 0; N < G.size(); ++N) {
    const Node &Nd = G.node(N);
    if (!Live[N] || Nd.isLeaf())
      continue;
    std::vector<unsigned> S;
    for (NodeId Op : Nd.Operands)
      if (int C = clusterOf(Op); C >= 0 &&
                                 std::find(S.begin(), S.end(), C) == S.end())
        S.push_back(static_cast<unsigned>(C));
    if (S.empty()) {
      newCluster(N);
      continue;
    }
    KernelKind Kind = KernelKind::Elementwise;
    Shape Domain;
    std::optional<Refusal> All = tryMerge(S, N, {}, Kind, Domain);
    if (!All) {
      join(S, N, Kind, std::move(Domain));
      continue;
    }
    // Not all producers fit: join the first one that does.
    std::optional<unsigned> Chosen;
    std::map<unsigned, Refusal> Why;
    for (unsigned C : S) {
      std::vector<unsigned> Others;
      for (unsigned O : S)
        if (O != C)
          Others.push_back(O);
      Kind = KernelKind::Elementwise;
      std::optional<Refusal> R = tryMerge({C}, N, Others, Kind, Domain);
      if (!R) {
        Chosen = C;
        join({C}, N, Kind, std::move(Domain));
        break;
      }
      Why[C] = *R;
    }
    if (!Chosen)
      newCluster(N);
    for (NodeId Op : Nd.Operands) {
      int C = Owner[Op] < 0 ? -1 : static_cast<int>(find(Owner[Op]));
      if (C < 0 || (Chosen && find(*Chosen) == static_cast<unsigned>(C)))
        continue;
      auto It = Why.find(static_cast<unsigned>(C));
      EdgeReason[{Op, N}] = It != Why.end() ? It->second : *All;
    }
  }

  mergeSiblings();
  absorbCheapProducers();
  for (unsigned C = 0; C < Clusters.size(); ++C) {
    const ClusterState &K = Clusters[C];
    if (!K.Alive || K.Kind != KernelKind::RowReduce)
      continue;
    for (NodeId N : K.Nodes) {
      if (!isRowPart(G.node(N).Dims, K.Domain))
        continue;
      bool Leaves = IsOutput[N];
      for (NodeId U : Users[N])
        Leaves |= clusterOf(U) != static_cast<int>(C);
      if (Leaves)
        Escaped.push_back(N);
    }
  }
  if (!Escaped.empty())
    return Partition{};

  Partition P;
  P.ClusterOf.assign(G.size(), -1);
  std::map<unsigned, unsigned> Index;
  for (unsigned C = 0; C < Clusters.size(); ++C) {
    if (!Clusters[C].Alive || Clusters[C].Nodes.empty())
      continue;
    Index[C] = static_cast<unsigned>(P.Clusters.size());
    Cluster Out;
    Out.Nodes = Clusters[C].Nodes;
    for (NodeId N : Out.Nodes)
      P.ClusterOf[N] = static_cast<int>(P.Clusters.size());
    P.Clusters.push_back(std::move(Out));
  }
  for (NodeId N = 0; N < G.size(); ++N) {
    if (P.ClusterOf[N] < 0)
      continue;
    for (NodeId Op : G.node(N).Operands) {
      if (P.ClusterOf[Op] < 0 || P.ClusterOf[Op] == P.ClusterOf[N])
        continue;
      auto It = EdgeReason.find({Op, N});
      Refusal R = It != EdgeReason.end()
                      ? It->second
                      : Refusal{BoundaryReason::DomainMismatch, ""};
      P.Boundaries.push_back({Op, N, static_cast<unsigned>(P.ClusterOf[Op]),
                              static_cast<unsigned>(P.ClusterOf[N]), R.Reason,
                              R.Detail});
    }
  }
  recomputeCheapProducers(G, P, Opts.RecomputeStoredValues, Opts.SiblingColumnReductions,
                          Opts.MixOrderColumns,
                          codegen::launch::MixLimits{Opts.MixMinColumns, Opts.MixMaxSharedBytes});
  finalizePartition(G, P);
  return P;
}

} // namespace

Partition fuseGraph(const Graph &G, const FusionOptions &Opts) {
  // Parts of rows join a row kernel on the way forward, before it is known
  // whether a concat takes them back into rows in the same kernel; those
  // that escape are refused in another walk (each walk bans at least one
  // more node, so this ends).
  std::set<NodeId> WholeRowsOnly;
  for (;;) {
    Fuser F(G, WholeRowsOnly, Opts);
    Partition P = F.run();
    if (F.escapedRowParts().empty())
      return P;
    size_t Before = WholeRowsOnly.size();
    WholeRowsOnly.insert(F.escapedRowParts().begin(), F.escapedRowParts().end());
    JITFUSE_CHECK(WholeRowsOnly.size() > Before, "a banned part of a row escaped again");
  }
}

} // namespace jitfuse
