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

#include <llvm/ADT/STLExtras.h>

#include <algorithm>
#include <optional>

namespace jitfuse {

namespace {

bool rowReduction(const Node &Nd) {
  return isReduction(Nd.Kind) && Nd.scope() == ReduceScope::LastAxis;
}

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

/// The [R, C] domain of a cluster of unstrided column reductions over one
/// domain and accumulator type whose accumulators a row kernel can keep
/// (launch::mixFits), or nullopt.
std::optional<Shape> columnDomain(const Graph &G, const Cluster &C,
                                  const codegen::launch::MixLimits &Limits) {
  std::vector<NodeId> Reds;
  for (NodeId N : C.Nodes)
    if (isReduction(G.node(N).Kind)) {
      if (!isColumnReduction(G.node(N)) || !G.stridesOf(N).empty())
        return std::nullopt;
      Reds.push_back(N);
    }
  if (Reds.empty())
    return std::nullopt;
  Shape D = G.node(G.node(Reds.front()).Operands[0]).Dims;
  DType T = G.node(Reds.front()).Type;
  for (NodeId R : Reds)
    if (G.node(G.node(R).Operands[0]).Dims != D ||
        codegen::computeType(G.node(R).Type) != codegen::computeType(T))
      return std::nullopt;
  if (D.size() != 2 || D[1].isDynamic() ||
      !codegen::launch::mixFits(D[1].Size, int64_t(Reds.size()), codegen::computeBytes(T),
                                Limits.MinColumns, Limits.MaxSharedBytes))
    return std::nullopt;
  return D;
}

/// Whether a column cluster's outputs are exactly its reductions: nothing
/// in it reads a result, no other node is a graph output or read by a
/// cluster that does not compute it too (\p Computes: per node, the
/// clusters).
bool onlyReductionOutputs(const Graph &G, const Cluster &C, const std::vector<bool> &IsOutput,
                          const std::vector<std::vector<NodeId>> &Users,
                          const std::vector<std::set<unsigned>> &Computes, unsigned Index) {
  std::set<NodeId> Here(C.Nodes.begin(), C.Nodes.end());
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    if (llvm::any_of(Nd.Operands,
                     [&](NodeId Op) { return Here.count(Op) && isReduction(G.node(Op).Kind); }))
      return false; // a view or an epilogue of a result
    if (isReduction(Nd.Kind))
      continue;
    if (IsOutput[N])
      return false;
    for (NodeId U : Users[N]) {
      if (Here.count(U))
        continue;
      // Read elsewhere: only by a cluster that computes N itself.
      for (unsigned K : Computes[U])
        if (K != Index && !Computes[N].count(K))
          return false;
    }
  }
  return true;
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

bool mixShapesFit(const Graph &G, const Cluster &Row, const Cluster &Column,
                  const codegen::launch::MixLimits &Limits) {
  std::optional<Shape> D = columnDomain(G, Column, Limits);
  return D && rowOver(G, Row, *D);
}

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
                     std::vector<std::set<NodeId>> &Recomputed,
                     const codegen::launch::MixLimits &Limits) {
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
      std::optional<Shape> Domain = columnDomain(G, Clusters[B], Limits);
      if (!Domain || !onlyReductionOutputs(G, Clusters[B], IsOutput, Users, Computes, B))
        continue;
      std::set<NodeId> ColLoads = loadsOf(G, Clusters[B]);
      for (unsigned A = 0; A < Clusters.size() && !Changed; ++A) {
        if (A == B || Clusters[A].Nodes.empty() || !rowOver(G, Clusters[A], *Domain) ||
            Clusters[A].Nodes.size() + Clusters[B].Nodes.size() > MaxClusterNodes)
          continue;
        std::set<NodeId> RowLoads = loadsOf(G, Clusters[A]);
        if (!std::includes(RowLoads.begin(), RowLoads.end(), ColLoads.begin(), ColLoads.end()) ||
            !mergeClusters(G, Clusters, Recomputed, std::min(A, B), std::max(A, B)))
          continue;
        Changed = true;
      }
    }
  }
}

} // namespace jitfuse
