//===- compiler/MixColumns.cpp - column reductions inside a row kernel ----===//
//
// A backward pass reads x and dy twice: the row kernel (dx) and the column
// kernel (dw, db) each load them. Inductor's mix-order reduction computes
// the column partials in the row kernel instead (ncu, BENCHMARKS.md session
// 30), the one plan that reads them once. This pass runs after the recompute
// and sibling passes, when each cluster's loads are final.
//
//===----------------------------------------------------------------------===//
#include "compiler/MixColumns.h"

#include "codegen/LaunchRule.h"
#include "codegen/Spelling.h"
#include "compiler/ClusterMerge.h"
#include "compiler/ReduceAxes.h"

#include <algorithm>

namespace jitfuse {

namespace {

bool rowReduction(const Node &Nd) {
  return isReduction(Nd.Kind) && Nd.scope() == ReduceScope::LastAxis;
}

struct Shapes {
  std::vector<NodeId> Reds; // empty: not usable
  Shape Domain;             // the reductions' operand shape
  std::set<NodeId> Loads;   // graph inputs and other clusters' values
};

std::set<NodeId> loadsOf(const Graph &G, const Cluster &C) {
  std::set<NodeId> Here(C.Nodes.begin(), C.Nodes.end()), Loads;
  for (NodeId N : C.Nodes)
    for (NodeId Op : G.node(N).Operands) {
      const Node &O = G.node(Op);
      if (!Here.count(Op) && O.Kind != Op::Scalar && O.Kind != Op::Constant)
        Loads.insert(Op);
    }
  return Loads;
}

/// A column cluster whose outputs are exactly its reductions: nothing in
/// it reads a result, no other node is a graph output or read by a cluster
/// that does not compute it too (\p Computes: per node, the clusters).
Shapes columnShapes(const Graph &G, const Cluster &C, const std::vector<bool> &IsOutput,
                    const std::vector<std::vector<NodeId>> &Users,
                    const std::vector<std::set<unsigned>> &Computes, unsigned Index) {
  Shapes S;
  std::set<NodeId> Here(C.Nodes.begin(), C.Nodes.end());
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    if (isReduction(Nd.Kind)) {
      if (!isColumnReduction(Nd) || !G.stridesOf(N).empty())
        return {};
      S.Reds.push_back(N);
      continue;
    }
    if (IsOutput[N])
      return {};
    for (NodeId U : Users[N]) {
      if (Here.count(U))
        continue;
      // Read elsewhere: only by a cluster that computes N itself.
      for (unsigned K : Computes[U])
        if (K != Index && !Computes[N].count(K))
          return {};
    }
  }
  if (S.Reds.empty())
    return {};
  for (NodeId N : C.Nodes)
    for (NodeId Op : G.node(N).Operands)
      if (std::find(S.Reds.begin(), S.Reds.end(), Op) != S.Reds.end())
        return {}; // a view or an epilogue of a result
  S.Domain = G.node(G.node(S.Reds.front()).Operands[0]).Dims;
  if (S.Domain.size() != 2 || S.Domain[1].isDynamic() ||
      !codegen::launch::mixColumns(S.Domain[1].Size))
    return {};
  std::string AT = codegen::computeType(G.node(S.Reds.front()).Type);
  for (NodeId R : S.Reds)
    if (G.node(G.node(R).Operands[0]).Dims != S.Domain ||
        codegen::computeType(G.node(R).Type) != AT)
      return {};
  int64_t Acc = AT == "float" ? 4 : 8;
  if (int64_t(S.Reds.size()) * S.Domain[1].Size * Acc > codegen::launch::MixMaxSharedBytes)
    return {};
  S.Loads = loadsOf(G, C);
  return S;
}

/// A row cluster over \p Domain: row reductions only, every one over it.
bool rowOver(const Graph &G, const Cluster &C, const Shape &Domain) {
  bool Any = false;
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    if (!isReduction(Nd.Kind))
      continue;
    if (!rowReduction(Nd) || G.node(Nd.Operands[0]).Dims != Domain)
      return false;
    Any = true;
  }
  return Any;
}

} // namespace

bool mixesColumns(const Graph &G, llvm::ArrayRef<NodeId> Nodes) {
  bool Row = false, Column = false;
  for (NodeId N : Nodes) {
    const Node &Nd = G.node(N);
    Row |= rowReduction(Nd);
    Column |= isReduction(Nd.Kind) && isColumnReduction(Nd);
  }
  return Row && Column;
}

void mergeRowColumns(const Graph &G, std::vector<Cluster> &Clusters,
                     std::vector<std::set<NodeId>> &Recomputed) {
  std::vector<bool> IsOutput(G.size(), false);
  for (const GraphOutput &O : G.outputs())
    IsOutput[O.Id] = true;
  std::vector<std::vector<NodeId>> Users(G.size());
  for (NodeId N = 0; N < G.size(); ++N)
    for (NodeId Op : G.node(N).Operands)
      Users[Op].push_back(N);
  for (bool Changed = true; Changed;) {
    Changed = false;
    std::vector<std::set<unsigned>> Computes(G.size());
    for (unsigned K = 0; K < Clusters.size(); ++K) {
      std::sort(Clusters[K].Nodes.begin(), Clusters[K].Nodes.end());
      for (NodeId N : Clusters[K].Nodes)
        Computes[N].insert(K);
    }
    for (unsigned B = 0; B < Clusters.size() && !Changed; ++B) {
      if (Clusters[B].Nodes.empty())
        continue;
      Shapes Col = columnShapes(G, Clusters[B], IsOutput, Users, Computes, B);
      if (Col.Reds.empty())
        continue;
      for (unsigned A = 0; A < Clusters.size() && !Changed; ++A) {
        if (A == B || Clusters[A].Nodes.empty() || !rowOver(G, Clusters[A], Col.Domain) ||
            Clusters[A].Nodes.size() + Clusters[B].Nodes.size() > MaxClusterNodes)
          continue;
        std::set<NodeId> RowLoads = loadsOf(G, Clusters[A]);
        if (!std::includes(RowLoads.begin(), RowLoads.end(), Col.Loads.begin(),
                           Col.Loads.end()) ||
            clusterReads(G, Clusters[A], Clusters[B]) ||
            clusterReads(G, Clusters[B], Clusters[A]) ||
            !mergeClusters(G, Clusters, Recomputed, std::min(A, B), std::max(A, B)))
          continue;
        Changed = true;
      }
    }
  }
}

} // namespace jitfuse
