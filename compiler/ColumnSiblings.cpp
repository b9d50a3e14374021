//===- compiler/ColumnSiblings.cpp - sibling column reductions, one kernel ===//
//
// The fusion walk's sibling rule (Fuser::mergeSiblings) keeps full and
// column reductions one to a kernel. Backward passes have column siblings:
// a weight and a bias gradient are column sums of [B, H] values that share
// dy. This pass runs after the recompute pass, when each column cluster's
// loads are final (RecomputeStoredValues makes dw and db read dy itself).
//
//===----------------------------------------------------------------------===//
#include "compiler/ColumnSiblings.h"

#include "codegen/Spelling.h"
#include "compiler/ClusterMerge.h"
#include "compiler/ReduceAxes.h"

#include <algorithm>

namespace jitfuse {

namespace {

struct ColumnInfo {
  std::vector<NodeId> Reds; // empty: not a mergeable column cluster
  Shape Domain;             // the reductions' operand shape
  std::set<NodeId> Loads;   // graph inputs and other clusters' values
};

/// Whether N is a reduction of the cluster's or a reshape chain of one.
bool isResultView(const Graph &G, NodeId N, const std::set<NodeId> &Reds) {
  while (G.node(N).Kind == Op::Reshape)
    N = G.node(N).Operands[0];
  return Reds.count(N) != 0;
}

ColumnInfo infoOf(const Graph &G, const Cluster &C) {
  ColumnInfo I;
  std::set<NodeId> Here(C.Nodes.begin(), C.Nodes.end()), Reds;
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    if (!isReduction(Nd.Kind))
      continue;
    if (!isColumnReduction(Nd))
      return {};
    Reds.insert(N);
  }
  if (Reds.empty())
    return {};
  // Downstream of a result only its views (an epilogue reads one result).
  std::set<NodeId> After(Reds);
  for (NodeId N : C.Nodes) {
    if (Reds.count(N))
      continue;
    const Node &Nd = G.node(N);
    bool ReadsResult = std::any_of(Nd.Operands.begin(), Nd.Operands.end(),
                                   [&](NodeId Op) { return After.count(Op) != 0; });
    if (!ReadsResult)
      continue;
    if (!isResultView(G, N, Reds))
      return {};
    After.insert(N);
  }
  for (NodeId N : C.Nodes)
    for (NodeId Op : G.node(N).Operands) {
      const Node &O = G.node(Op);
      if (!Here.count(Op) && O.Kind != Op::Scalar && O.Kind != Op::Constant)
        I.Loads.insert(Op);
    }
  I.Reds.assign(Reds.begin(), Reds.end());
  I.Domain = G.node(G.node(I.Reds.front()).Operands[0]).Dims;
  for (NodeId R : I.Reds)
    if (G.node(G.node(R).Operands[0]).Dims != I.Domain ||
        codegen::computeType(G.node(R).Type) !=
            codegen::computeType(G.node(I.Reds.front()).Type))
      return {};
  return I;
}

} // namespace

void mergeColumnSiblings(const Graph &G, std::vector<Cluster> &Clusters,
                         std::vector<std::set<NodeId>> &Recomputed) {
  for (bool Changed = true; Changed;) {
    Changed = false;
    std::vector<ColumnInfo> Info;
    for (const Cluster &C : Clusters)
      Info.push_back(C.Nodes.empty() ? ColumnInfo{} : infoOf(G, C));
    for (unsigned A = 0; A < Clusters.size() && !Changed; ++A) {
      for (unsigned B = A + 1; B < Clusters.size() && !Changed; ++B) {
        const ColumnInfo &IA = Info[A], &IB = Info[B];
        if (IA.Reds.empty() || IB.Reds.empty() || IA.Domain != IB.Domain ||
            codegen::computeType(G.node(IA.Reds.front()).Type) !=
                codegen::computeType(G.node(IB.Reds.front()).Type) ||
            IA.Reds.size() + IB.Reds.size() > MaxColumnSiblings ||
            Clusters[A].Nodes.size() + Clusters[B].Nodes.size() > MaxClusterNodes)
          continue;
        bool Shares = std::any_of(IA.Loads.begin(), IA.Loads.end(),
                                  [&](NodeId N) { return IB.Loads.count(N) != 0; });
        if (!Shares || !mergeClusters(G, Clusters, Recomputed, A, B))
          continue;
        Changed = true;
      }
    }
  }
}

} // namespace jitfuse
