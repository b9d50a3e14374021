//===- compiler/Recompute.cpp - cheap producers computed by each reader ---===//
//
// After the fusion walk, a producer cluster that several kernels read is
// either stored once (a kernel of its own plus a write and k reads) or
// computed again by each reader from the producer's own inputs. Codegen
// computes any element-wise/view DAG at any coordinates on demand, so a
// reader only needs the producer's nodes in its node list; the producer's
// nodes are then recomputed (Cluster::Recomputed), never stored. Copies add
// no cycle: each reader already depended on everything the producer reads.
//
//===----------------------------------------------------------------------===//
#include "compiler/Recompute.h"

#include "compiler/ColumnSiblings.h"
#include "compiler/MixColumns.h"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>

#include <algorithm>
#include <climits>
#include <map>
#include <set>

namespace jitfuse {

unsigned recomputeCost(Op O) {
  switch (opKind(O)) {
  case OpKind::Leaf:
  case OpKind::View:
    return 0;
  case OpKind::Reduce:
  case OpKind::Random:
    return UINT_MAX / 4;
  default:
    break;
  }
  // One unit for the op, three more for each math-library call its CUDA
  // spelling makes (composites such as silu and gelu_tanh included).
  const char *Cuda = opInfo(O).Cuda;
  if (!Cuda)
    return 1;
  llvm::StringRef S(Cuda);
  unsigned Calls = 0;
  for (llvm::StringRef F : {"exp", "log", "sin", "cos", "tanh", "erf", "pow", "sqrt", "fmod"})
    Calls += S.count(F);
  return 1 + 3 * Calls;
}

namespace {

bool isNumelOne(const Node &N) {
  return staticNumel(N.Dims) == std::optional<int64_t>(1);
}

class Recomputer {
public:
  Recomputer(const Graph &G, Partition &P, bool StoredValues, bool SiblingColumns,
             bool MixColumns, const codegen::launch::MixLimits &MixLimits)
      : G(G), P(P), StoredValues(StoredValues), SiblingColumns(SiblingColumns),
        MixColumns(MixColumns), MixLimits(MixLimits) {}
  void run();

private:
  using Reads = std::set<NodeId>;
  bool tryDissolve(unsigned K);
  /// RecomputeStoredValues: value V of cluster K, stored only for other
  /// clusters, computed by them instead.
  bool tryExtract(unsigned K, NodeId V);
  void refuse(unsigned K, size_t NumReaders, const std::string &Why);
  void rebuildWhere();
  bool in(unsigned C, NodeId N) const { return Members[C].count(N) != 0; }
  /// Nodes of K that reader T needs: those T reads and their operands in K.
  std::vector<NodeId> closure(unsigned K, const Reads &Used) const;
  /// Tensors cluster C loads: operands computed neither by C nor inline.
  Reads loads(unsigned C, llvm::ArrayRef<NodeId> Nodes) const;
  /// MixColumns: the one reader's column reductions fit K's rows
  /// (mixShapesFit) and K loads everything the copy reads.
  bool mixEnabling(unsigned K, const std::set<unsigned> &Readers, const Reads &CopyLoads) const;
  SizeExpr bytes(NodeId N) const {
    return SizeExpr::of(G.node(N).Dims, G.dynamicDims()).times(dtypeBytes(G.node(N).Type));
  }

  const Graph &G;
  Partition &P;
  bool StoredValues, SiblingColumns, MixColumns;
  codegen::launch::MixLimits MixLimits;
  std::vector<std::vector<NodeId>> Users;
  std::vector<bool> IsOutput;
  std::vector<std::set<NodeId>> Members;    // per cluster
  std::vector<std::vector<unsigned>> Where; // per node: clusters computing it
  std::vector<std::set<NodeId>> Recomputed; // per cluster
  std::map<std::pair<NodeId, NodeId>, std::pair<BoundaryReason, std::string>> Reason;
};

void Recomputer::rebuildWhere() {
  Members.assign(P.Clusters.size(), {});
  Where.assign(G.size(), {});
  for (unsigned C = 0; C < P.Clusters.size(); ++C)
    for (NodeId N : P.Clusters[C].Nodes) {
      Members[C].insert(N);
      Where[N].push_back(C);
    }
}

std::vector<NodeId> Recomputer::closure(unsigned K, const Reads &Used) const {
  std::set<NodeId> Need(Used.begin(), Used.end());
  // Operands have smaller ids: one backward sweep finds the closure.
  for (auto It = Need.rbegin(); It != Need.rend(); ++It)
    for (NodeId Op : G.node(*It).Operands)
      if (in(K, Op))
        Need.insert(Op);
  return {Need.begin(), Need.end()};
}

bool Recomputer::mixEnabling(unsigned K, const std::set<unsigned> &Readers,
                             const Reads &CopyLoads) const {
  // One reader whose column reductions K's rows can take (sibling
  // reductions merged later may not fit: then the mix is refused and the
  // trade costs the copy's per-row loads), and the copy reading only what
  // K loads.
  if (!MixColumns || Readers.size() != 1 ||
      !mixShapesFit(G, P.Clusters[K], P.Clusters[*Readers.begin()], MixLimits))
    return false;
  Reads Has = loads(K, P.Clusters[K].Nodes);
  return llvm::all_of(CopyLoads, [&](NodeId In) { return Has.count(In) || in(K, In); });
}

Recomputer::Reads Recomputer::loads(unsigned C, llvm::ArrayRef<NodeId> Nodes) const {
  Reads R;
  for (NodeId N : Nodes)
    for (NodeId Op : G.node(N).Operands) {
      const Node &O = G.node(Op);
      if (O.Kind != Op::Scalar && O.Kind != Op::Constant && !in(C, Op))
        R.insert(Op);
    }
  return R;
}

void Recomputer::refuse(unsigned K, size_t NumReaders, const std::string &Why) {
  // Where the walk refused an edge only for a shape mismatch, the shape is
  // not why it remains: the producer is shared. Other reasons (a cycle, a
  // full reduction's prologue needed elsewhere) hold for their own edge.
  std::string Detail = fmt::format(
      "a cheap element-wise producer read by {} kernels; not recomputed in each: {}",
      NumReaders, Why);
  for (NodeId N : P.Clusters[K].Nodes)
    for (NodeId U : Users[N]) {
      if (in(K, U))
        continue;
      auto It = Reason.find({N, U});
      if (It == Reason.end() || It->second.first == BoundaryReason::DomainMismatch)
        Reason[{N, U}] = {BoundaryReason::MultipleConsumers, Detail};
    }
}

bool Recomputer::tryDissolve(unsigned K) {
  const Cluster &C = P.Clusters[K];
  if (C.Nodes.empty() || C.Nodes.size() > MaxRecomputeNodes)
    return false;
  bool ScalarOnly = true;
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    if (IsOutput[N] || isReduction(Nd.Kind) || opKind(Nd.Kind) == OpKind::Random)
      return false;
    ScalarOnly &= isNumelOne(Nd);
  }
  std::map<unsigned, Reads> Used; // reader -> nodes of K it reads
  for (NodeId N : C.Nodes)
    for (NodeId U : Users[N])
      for (unsigned T : Where[U])
        if (T != K)
          Used[T].insert(N);
  if (Used.empty())
    return false;
  // One reader (left after another producer was dissolved): a move, not a
  // recompute; nothing is computed twice.
  bool Move = Used.size() == 1;

  // Cost and bytes, materialized vs recomputed.
  std::map<unsigned, std::vector<NodeId>> Part;
  unsigned MaxOps = 0;
  SizeSum Before, After;
  for (NodeId In : loads(K, C.Nodes))
    Before.add(bytes(In));
  std::set<NodeId> Stored;
  for (auto &[T, Vals] : Used) {
    Part[T] = closure(K, Vals);
    unsigned Ops = 0;
    for (NodeId N : Part[T])
      Ops += recomputeCost(G.node(N).Kind);
    MaxOps = std::max(MaxOps, Ops);
    if (P.Clusters[T].Nodes.size() + Part[T].size() > MaxClusterNodes)
      return false;
    for (NodeId V : Vals) {
      Stored.insert(V);
      Before.add(bytes(V));
    }
    Reads Has = loads(T, P.Clusters[T].Nodes);
    for (NodeId In : loads(K, Part[T]))
      if (!Has.count(In))
        After.add(bytes(In));
  }
  for (NodeId V : Stored)
    Before.add(bytes(V));
  SizeSum Saved = Before;
  Saved.subtract(After);
  if (!ScalarOnly && !Move) {
    if (MaxOps > MaxRecomputeOps) {
      refuse(K, Used.size(),
             fmt::format("{} ops per element, over the budget of {}", MaxOps, MaxRecomputeOps));
      return false;
    }
    // Saved for every non-empty run: a statistic of [1, H] now read by two
    // kernels (a constant term) must not veto saving traffic in N (BatchNorm's
    // centred values, stored and read twice, cost 1.75x its minimal bytes).
    if (!Saved.nonNegativeWhenNonEmpty()) {
      refuse(K, Used.size(),
             fmt::format("its readers would load {} bytes instead of {}",
                         After.str(G.dynamicDims()), Before.str(G.dynamicDims())));
      return false;
    }
  }

  std::set<NodeId> WasRecomputed = Recomputed[K];
  Recomputation R;
  R.Nodes = C.Nodes;
  std::sort(R.Nodes.begin(), R.Nodes.end());
  R.OpsPerElement = MaxOps;
  R.ScalarOnly = ScalarOnly;
  R.BytesSaved = Saved;
  for (auto &[T, Nodes] : Part) {
    Cluster &Into = P.Clusters[T];
    for (NodeId N : Nodes) {
      if (!in(T, N))
        Into.Nodes.push_back(N);
      if (!Move || WasRecomputed.count(N))
        Recomputed[T].insert(N);
    }
    std::sort(Into.Nodes.begin(), Into.Nodes.end());
    Into.Nodes.erase(std::unique(Into.Nodes.begin(), Into.Nodes.end()), Into.Nodes.end());
    R.Kernels.push_back(T);
  }
  P.Clusters[K].Nodes.clear();
  Recomputed[K].clear();
  if (!Move)
    P.Recomputes.push_back(std::move(R));
  return true;
}

bool Recomputer::tryExtract(unsigned K, NodeId V) {
  const Node &Vd = G.node(V);
  if (IsOutput[V] || isReduction(Vd.Kind) || opKind(Vd.Kind) == OpKind::Random ||
      opKind(Vd.Kind) == OpKind::Leaf || isNumelOne(Vd))
    return false;
  std::set<unsigned> Readers;
  for (NodeId U : Users[V])
    for (unsigned T : Where[U])
      if (T != K && !in(T, V))
        Readers.insert(T);
  if (Readers.empty())
    return false;
  // V's nodes in K, stopping at what K stores anyway (graph outputs) or
  // does not compute (inputs): a row statistic or a random value computed
  // in K cannot be computed again elsewhere.
  std::set<NodeId> Need = {V};
  for (auto It = Need.rbegin(); It != Need.rend(); ++It) {
    const Node &Nd = G.node(*It);
    if (isReduction(Nd.Kind) || opKind(Nd.Kind) == OpKind::Random)
      return false;
    for (NodeId Op : Nd.Operands)
      if (in(K, Op) && !IsOutput[Op])
        Need.insert(Op);
  }
  std::vector<NodeId> Part(Need.begin(), Need.end());
  // A node of the copy that a third kernel loads from K would stay stored
  // by K, and a node computed by several kernels is recomputed by all of
  // them, never stored (a bool compare read by a sum and, through an fma,
  // by the copy's reader: random graphs, session 28).
  for (NodeId N : Part)
    for (NodeId U : Users[N])
      for (unsigned C : Where[U])
        if (C != K && !Readers.count(C) && !in(C, N))
          return false;
  // What K still computes: its other nodes and their operands in K. A part
  // of V's expression K needs itself stays there (computed by every kernel
  // that uses it, as recomputed nodes are); the rest leaves K. K keeping
  // nothing else is a whole-cluster dissolve, tryDissolve's decision.
  std::set<NodeId> Keep;
  for (NodeId N : P.Clusters[K].Nodes)
    if (!Need.count(N))
      Keep.insert(N);
  if (Keep.empty())
    return false;
  for (auto It = Keep.rbegin(); It != Keep.rend(); ++It)
    for (NodeId Op : G.node(*It).Operands)
      if (in(K, Op))
        Keep.insert(Op);
  unsigned Ops = 0;
  for (NodeId N : Part)
    Ops += recomputeCost(G.node(N).Kind);
  if (Ops > MaxRecomputeOps || Part.size() > MaxRecomputeNodes)
    return false;
  // What the copy reads: inputs, other kernels' values, and K's stored
  // outputs.
  Reads CopyLoads;
  for (NodeId N : Part)
    for (NodeId Op : G.node(N).Operands) {
      const Node &O = G.node(Op);
      if (O.Kind != Op::Scalar && O.Kind != Op::Constant && !Need.count(Op))
        CopyLoads.insert(Op);
    }
  // Stored: V written once and read by each reader; recomputed: each
  // reader loads what the copy reads and it does not load already.
  SizeSum Before, After;
  Before.add(bytes(V));
  for (unsigned T : Readers) {
    if (P.Clusters[T].Nodes.size() + Part.size() > MaxClusterNodes)
      return false;
    Before.add(bytes(V));
    Reads Has = loads(T, P.Clusters[T].Nodes);
    for (NodeId In : CopyLoads)
      if (!Has.count(In) && !in(T, In))
        After.add(bytes(In));
  }
  SizeSum Saved = Before;
  Saved.subtract(After);
  // Strictly fewer bytes: an equal trade would only add work. But with
  // MixColumns, column readers that then load only what K loads join K
  // (compiler/MixColumns.h) and their loads go away: f32 RMSNorm
  // backward's dy * xhat (stored and loaded, 8 bytes an element; recomputed
  // by the column kernel from x, dy and rstd, 8 and 4 a row; by the row
  // kernel itself once they share it, none).
  if (!mixEnabling(K, Readers, CopyLoads) &&
      (!Saved.nonNegativeWhenNonEmpty() || Saved.staticValue() == std::optional<int64_t>(0)))
    return false;
  Recomputation R;
  R.Nodes = Part;
  R.OpsPerElement = Ops;
  R.BytesSaved = Saved;
  for (unsigned T : Readers) {
    Cluster &Into = P.Clusters[T];
    for (NodeId N : Part) {
      if (!in(T, N))
        Into.Nodes.push_back(N);
      Recomputed[T].insert(N);
    }
    std::sort(Into.Nodes.begin(), Into.Nodes.end());
    R.Kernels.push_back(T);
  }
  Cluster &From = P.Clusters[K];
  for (NodeId N : Part) {
    if (Keep.count(N))
      Recomputed[K].insert(N);
    else
      Recomputed[K].erase(N);
  }
  From.Nodes.erase(std::remove_if(From.Nodes.begin(), From.Nodes.end(),
                                  [&](NodeId N) { return Need.count(N) && !Keep.count(N); }),
                   From.Nodes.end());
  if (std::any_of(Part.begin(), Part.end(), [&](NodeId N) { return Keep.count(N) != 0; }))
    R.Kernels.push_back(K);
  std::sort(R.Kernels.begin(), R.Kernels.end());
  P.Recomputes.push_back(std::move(R));
  return true;
}

void Recomputer::run() {
  NodeUses U = nodeUses(G);
  Users = std::move(U.Users);
  IsOutput = std::move(U.IsOutput);
  for (const FusionBoundary &B : P.Boundaries)
    Reason[{B.Producer, B.Consumer}] = {B.Reason, B.Detail};
  Recomputed.assign(P.Clusters.size(), {});

  // Dissolving one producer can make another one's readers several (its
  // value now read by each copy), so repeat until nothing changes.
  rebuildWhere();
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (unsigned K = 0; K < P.Clusters.size(); ++K)
      if (tryDissolve(K)) {
        rebuildWhere();
        Changed = true;
      }
  }
  // Then values a kernel stores only for others (RecomputeStoredValues),
  // in node order: a reader that took one may make another cheaper.
  for (bool Changed = StoredValues; Changed;) {
    Changed = false;
    for (unsigned K = 0; K < P.Clusters.size(); ++K)
      for (NodeId V : std::vector<NodeId>(P.Clusters[K].Nodes))
        if (tryExtract(K, V)) {
          rebuildWhere();
          Changed = true;
        }
  }

  // Column reductions whose loads are now final may share a kernel.
  if (SiblingColumns) {
    mergeColumnSiblings(G, P.Clusters, Recomputed);
    rebuildWhere();
  }
  // Then a row kernel may take the column reductions of its own loads.
  if (MixColumns) {
    mergeRowColumns(G, P.Clusters, Recomputed, MixLimits);
    rebuildWhere();
  }

  // Drop the dissolved clusters; name each recomputed node's first kernel.
  std::vector<int> NewIndex(P.Clusters.size(), -1);
  std::vector<Cluster> Kept;
  for (unsigned C = 0; C < P.Clusters.size(); ++C) {
    if (P.Clusters[C].Nodes.empty())
      continue;
    NewIndex[C] = static_cast<int>(Kept.size());
    Cluster Cl = std::move(P.Clusters[C]);
    Cl.Recomputed.assign(Recomputed[C].begin(), Recomputed[C].end());
    Kept.push_back(std::move(Cl));
  }
  P.Clusters = std::move(Kept);
  P.ClusterOf.assign(G.size(), -1);
  for (unsigned C = 0; C < P.Clusters.size(); ++C)
    for (NodeId N : P.Clusters[C].Nodes)
      if (P.ClusterOf[N] < 0)
        P.ClusterOf[N] = static_cast<int>(C);
  // A record names every kernel now computing its nodes (a later record may
  // have dissolved one of its first readers).
  for (Recomputation &R : P.Recomputes) {
    std::set<unsigned> Ks;
    for (NodeId N : R.Nodes)
      for (unsigned C : Where[N])
        if (NewIndex[C] >= 0)
          Ks.insert(static_cast<unsigned>(NewIndex[C]));
    R.Kernels.assign(Ks.begin(), Ks.end());
  }
  P.Recomputes.erase(std::remove_if(P.Recomputes.begin(), P.Recomputes.end(),
                                    [](const Recomputation &R) { return R.Kernels.empty(); }),
                     P.Recomputes.end());

  // Boundaries: every edge into a kernel from a value another kernel stores.
  P.Boundaries.clear();
  for (unsigned C = 0; C < P.Clusters.size(); ++C) {
    std::set<NodeId> Here(P.Clusters[C].Nodes.begin(), P.Clusters[C].Nodes.end());
    for (NodeId N : P.Clusters[C].Nodes)
      for (NodeId Op : G.node(N).Operands) {
        if (P.ClusterOf[Op] < 0 || Here.count(Op))
          continue;
        auto It = Reason.find({Op, N});
        auto R = It != Reason.end()
                     ? It->second
                     : std::pair<BoundaryReason, std::string>{BoundaryReason::DomainMismatch, ""};
        P.Boundaries.push_back({Op, N, static_cast<unsigned>(P.ClusterOf[Op]), C, R.first,
                                R.second});
      }
  }
  // In consumer order, as the fusion walk met the edges.
  std::stable_sort(P.Boundaries.begin(), P.Boundaries.end(),
                   [](const FusionBoundary &A, const FusionBoundary &B) {
                     return A.Consumer < B.Consumer;
                   });
}

} // namespace

void recomputeCheapProducers(const Graph &G, Partition &P, bool StoredValues,
                             bool SiblingColumns, bool MixColumns,
                             const codegen::launch::MixLimits &MixLimits) {
  Recomputer(G, P, StoredValues, SiblingColumns, MixColumns, MixLimits).run();
}

} // namespace jitfuse
