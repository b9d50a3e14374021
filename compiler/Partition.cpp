//===- compiler/Partition.cpp - partition bookkeeping and the unfused one -===//
#include "compiler/Partition.h"

#include "compiler/ReduceAxes.h"

#include "support/Error.h"

#include <algorithm>
#include <set>

namespace jitfuse {

llvm::StringRef describeReason(BoundaryReason R) {
  switch (R) {
  case BoundaryReason::Unfused: return "fusion is off (CompileOptions::Fuse = false)";
  case BoundaryReason::DomainMismatch: return "producer and consumer iterate over different shapes";
  case BoundaryReason::ReductionResult: return "a full reduction's result starts a new kernel (so does a column reduction's)";
  case BoundaryReason::RowDomainMismatch: return "a row reduction's result is used over a different row domain";
  case BoundaryReason::MultipleConsumers: return "the value is needed by several kernels, so it is materialized once";
  case BoundaryReason::WouldCycle: return "fusing would create a cycle between kernels";
  case BoundaryReason::ClusterTooLarge: return "the kernel reached the size cap";
  case BoundaryReason::SecondRowDomain: return "the consumer's kernel already reduces over another row domain";
  }
  JITFUSE_UNREACHABLE("unknown reason");
  return "";
}

std::vector<bool> liveNodes(const Graph &G) {
  std::vector<bool> Live(G.size(), false);
  for (const GraphOutput &O : G.outputs())
    Live[O.Id] = true;
  for (NodeId Id = static_cast<NodeId>(G.size()); Id-- > 0;)
    if (Live[Id])
      for (NodeId Op : G.node(Id).Operands)
        Live[Op] = true;
  return Live;
}

NodeUses nodeUses(const Graph &G) {
  NodeUses U;
  U.Live = liveNodes(G);
  U.Users.resize(G.size());
  U.IsOutput.assign(G.size(), false);
  for (const GraphOutput &O : G.outputs())
    U.IsOutput[O.Id] = true;
  for (NodeId N = 0; N < G.size(); ++N)
    if (U.Live[N])
      for (NodeId Op : G.node(N).Operands)
        U.Users[Op].push_back(N);
  return U;
}

static KernelKind kindOf(const Graph &G, llvm::ArrayRef<NodeId> Nodes) {
  KernelKind K = KernelKind::Elementwise;
  bool Column = false;
  for (NodeId N : Nodes) {
    const Node &Nd = G.node(N);
    if (!isReduction(Nd.Kind))
      continue;
    if (Nd.scope() == ReduceScope::All)
      return KernelKind::FullReduce;
    if (isColumnReduction(Nd))
      Column = true;
    else
      K = KernelKind::RowReduce;
  }
  // Row and column reductions together: a row kernel with column partials
  // (compiler/MixColumns.h).
  return Column && K != KernelKind::RowReduce ? KernelKind::ColumnReduce : K;
}

void finalizePartition(const Graph &G, Partition &P) {
  size_t NC = P.Clusters.size();
  std::vector<bool> IsOutput(G.size(), false);
  for (const GraphOutput &O : G.outputs())
    IsOutput[O.Id] = true;
  // Dependencies between clusters, then a stable topological order (by the
  // smallest node id, so the order is deterministic).
  // A kernel reads Op from another kernel when it does not compute Op itself
  // (a recomputed node is computed by each of its readers).
  std::vector<std::set<NodeId>> Here(NC);
  for (unsigned C = 0; C < NC; ++C) {
    Cluster &Cl = P.Clusters[C];
    std::sort(Cl.Nodes.begin(), Cl.Nodes.end());
    std::sort(Cl.Recomputed.begin(), Cl.Recomputed.end());
    Here[C].insert(Cl.Nodes.begin(), Cl.Nodes.end());
  }
  auto ReadsFromOther = [&](unsigned C, NodeId Op) {
    return P.ClusterOf[Op] >= 0 && !Here[C].count(Op);
  };
  std::vector<std::set<unsigned>> Deps(NC);
  for (unsigned C = 0; C < NC; ++C)
    for (NodeId N : P.Clusters[C].Nodes)
      for (NodeId Op : G.node(N).Operands)
        if (ReadsFromOther(C, Op))
          Deps[C].insert(P.ClusterOf[Op]);
  std::vector<unsigned> Order;
  std::vector<int> State(NC, 0);
  std::vector<unsigned> ByFirst(NC);
  for (unsigned C = 0; C < NC; ++C)
    ByFirst[C] = C;
  std::sort(ByFirst.begin(), ByFirst.end(), [&](unsigned A, unsigned B) {
    return P.Clusters[A].Nodes.front() < P.Clusters[B].Nodes.front();
  });
  std::function<void(unsigned)> Visit = [&](unsigned C) {
    if (State[C] == 2)
      return;
    if (State[C] == 1)
      JITFUSE_INTERNAL("partition: the clusters form a cycle (cluster of node %{})",
           P.Clusters[C].Nodes.front());
    State[C] = 1;
    for (unsigned D : Deps[C])
      Visit(D);
    State[C] = 2;
    Order.push_back(C);
  };
  for (unsigned C : ByFirst)
    Visit(C);
  std::vector<Cluster> Sorted;
  std::vector<int> NewIndex(NC);
  for (unsigned I = 0; I < NC; ++I) {
    NewIndex[Order[I]] = static_cast<int>(I);
    Sorted.push_back(std::move(P.Clusters[Order[I]]));
  }
  P.Clusters = std::move(Sorted);
  for (int &C : P.ClusterOf)
    if (C >= 0)
      C = NewIndex[C];
  for (FusionBoundary &B : P.Boundaries) {
    B.ProducerCluster = NewIndex[B.ProducerCluster];
    B.ConsumerCluster = NewIndex[B.ConsumerCluster];
  }
  for (Recomputation &R : P.Recomputes) {
    for (unsigned &K : R.Kernels)
      K = NewIndex[K];
    std::sort(R.Kernels.begin(), R.Kernels.end());
  }
  std::vector<std::set<NodeId>> SortedHere(NC);
  for (unsigned I = 0; I < NC; ++I)
    SortedHere[I] = std::move(Here[Order[I]]);
  Here = std::move(SortedHere);

  // Which nodes each cluster loads and stores.
  std::vector<bool> NeededElsewhere(G.size(), false);
  for (unsigned C = 0; C < NC; ++C)
    for (NodeId N : P.Clusters[C].Nodes)
      for (NodeId Op : G.node(N).Operands)
        if (ReadsFromOther(C, Op))
          NeededElsewhere[Op] = true;
  for (unsigned C = 0; C < NC; ++C) {
    Cluster &Cl = P.Clusters[C];
    std::set<NodeId> Ins, Scalars;
    for (NodeId N : Cl.Nodes) {
      for (NodeId Op : G.node(N).Operands) {
        const Node &O = G.node(Op);
        if (O.Kind == Op::Scalar)
          Scalars.insert(Op);
        else if (O.Kind == Op::Input || ReadsFromOther(C, Op))
          Ins.insert(Op);
      }
      if (IsOutput[N] || NeededElsewhere[N])
        Cl.Outputs.push_back(N);
    }
    Cl.Inputs.assign(Ins.begin(), Ins.end());
    Cl.Scalars.assign(Scalars.begin(), Scalars.end());
    Cl.Kind = kindOf(G, Cl.Nodes);
  }
  verifyPartition(G, P);
}

void verifyPartition(const Graph &G, const Partition &P) {
  std::vector<bool> Live = liveNodes(G);
  std::vector<bool> IsOutput(G.size(), false);
  for (const GraphOutput &O : G.outputs())
    IsOutput[O.Id] = true;
  // Per node: clusters computing it, and how many of them recompute it.
  std::vector<std::vector<unsigned>> Where(G.size());
  std::vector<unsigned> Recomputes(G.size(), 0);
  std::vector<std::set<NodeId>> Here(P.Clusters.size());
  for (unsigned C = 0; C < P.Clusters.size(); ++C) {
    const Cluster &Cl = P.Clusters[C];
    Here[C].insert(Cl.Nodes.begin(), Cl.Nodes.end());
    for (NodeId N : Cl.Recomputed) {
      if (!Here[C].count(N))
        JITFUSE_INTERNAL("partition: cluster {} recomputes %{} but does not compute it", C, N);
      if (IsOutput[N] ||
          std::find(Cl.Outputs.begin(), Cl.Outputs.end(), N) != Cl.Outputs.end())
        JITFUSE_INTERNAL("partition: recomputed %{} is stored by cluster {}", N, C);
      ++Recomputes[N];
    }
  }
  for (unsigned C = 0; C < P.Clusters.size(); ++C) {
    const Cluster &Cl = P.Clusters[C];
    if (Cl.Nodes.empty())
      JITFUSE_INTERNAL("partition: cluster {} is empty", C);
    for (NodeId N : Cl.Nodes) {
      if (G.node(N).isLeaf())
        JITFUSE_INTERNAL("partition: leaf %{} placed in cluster {}", N, C);
      Where[N].push_back(C);
      for (NodeId Op : G.node(N).Operands) {
        if (Here[C].count(Op) || P.ClusterOf[Op] < 0)
          continue;
        if (Recomputes[Op])
          JITFUSE_INTERNAL("partition: cluster {} reads recomputed %{} without computing it", C,
                           Op);
        if (P.ClusterOf[Op] > static_cast<int>(C))
          JITFUSE_INTERNAL("partition: cluster {} uses %{} from later cluster {}", C, Op,
                           P.ClusterOf[Op]);
      }
    }
    if (Cl.Outputs.empty())
      JITFUSE_INTERNAL("partition: cluster {} stores nothing", C);
  }
  for (NodeId N = 0; N < G.size(); ++N) {
    bool Needs = Live[N] && !G.node(N).isLeaf();
    size_t Seen = Where[N].size();
    if (!Needs) {
      if (Seen != 0)
        JITFUSE_INTERNAL("partition: dead or leaf node %{} is in a cluster", N);
      continue;
    }
    // Computed once, or recomputed by every kernel that computes it.
    bool Recomputed = Recomputes[N] != 0;
    if (Seen == 0 || (!Recomputed && Seen != 1) || (Recomputed && Recomputes[N] != Seen))
      JITFUSE_INTERNAL("partition: live node %{} is in {} clusters ({} recompute it), "
                       "expected 1 or only recomputing ones",
                       N, Seen, Recomputes[N]);
    if (std::find(Where[N].begin(), Where[N].end(), P.ClusterOf[N]) == Where[N].end())
      JITFUSE_INTERNAL("partition: node %{} is mapped to cluster {}, which does not compute it",
                       N, P.ClusterOf[N]);
  }
}

Partition partitionUnfused(const Graph &G) {
  Partition P;
  P.ClusterOf.assign(G.size(), -1);
  std::vector<bool> Live = liveNodes(G);
  for (NodeId N = 0; N < G.size(); ++N) {
    if (!Live[N] || G.node(N).isLeaf())
      continue;
    P.ClusterOf[N] = static_cast<int>(P.Clusters.size());
    P.Clusters.push_back(Cluster{});
    P.Clusters.back().Nodes.push_back(N);
  }
  for (NodeId N = 0; N < G.size(); ++N) {
    if (P.ClusterOf[N] < 0)
      continue;
    for (NodeId Op : G.node(N).Operands)
      if (P.ClusterOf[Op] >= 0)
        P.Boundaries.push_back({Op, N, static_cast<unsigned>(P.ClusterOf[Op]),
                                static_cast<unsigned>(P.ClusterOf[N]),
                                BoundaryReason::Unfused, ""});
  }
  finalizePartition(G, P);
  return P;
}

} // namespace jitfuse
