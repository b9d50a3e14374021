//===- compiler/ClusterMerge.cpp - two clusters into one ------------------===//
#include "compiler/ClusterMerge.h"

#include <algorithm>

namespace jitfuse {

namespace {

/// Whether cluster \p From reads a value of cluster \p To, directly or
/// through other clusters (\p Where: per node, the clusters computing it).
bool dependsOn(const Graph &G, const std::vector<Cluster> &Clusters,
               const std::vector<std::vector<unsigned>> &Where, unsigned From, unsigned To) {
  std::vector<bool> Seen(Clusters.size(), false);
  std::vector<unsigned> Work = {From};
  Seen[From] = true;
  while (!Work.empty()) {
    unsigned C = Work.back();
    Work.pop_back();
    const std::vector<NodeId> &Own = Clusters[C].Nodes;
    for (NodeId N : Own)
      for (NodeId Op : G.node(N).Operands) {
        if (std::binary_search(Own.begin(), Own.end(), Op))
          continue;
        for (unsigned K : Where[Op]) {
          if (K == To)
            return true;
          if (!Seen[K]) {
            Seen[K] = true;
            Work.push_back(K);
          }
        }
      }
  }
  return false;
}

} // namespace

bool mergeClusters(const Graph &G, std::vector<Cluster> &Clusters,
                   std::vector<std::set<NodeId>> &Recomputed, unsigned A, unsigned B) {
  // The clusters are not in a topological order during the late passes (a
  // cluster is where its first node started it), so what lies between two
  // indices says nothing: follow the reads. Merged, two clusters one of
  // which depends on the other would form a cycle with what lies between.
  std::vector<std::vector<unsigned>> Where(G.size());
  for (unsigned K = 0; K < Clusters.size(); ++K)
    for (NodeId N : Clusters[K].Nodes)
      Where[N].push_back(K);
  if (dependsOn(G, Clusters, Where, A, B) || dependsOn(G, Clusters, Where, B, A))
    return false;
  Cluster &I = Clusters[B];
  I.Nodes.insert(I.Nodes.end(), Clusters[A].Nodes.begin(), Clusters[A].Nodes.end());
  std::sort(I.Nodes.begin(), I.Nodes.end());
  I.Nodes.erase(std::unique(I.Nodes.begin(), I.Nodes.end()), I.Nodes.end());
  Recomputed[B].insert(Recomputed[A].begin(), Recomputed[A].end());
  Clusters[A].Nodes.clear();
  Recomputed[A].clear();
  return true;
}

} // namespace jitfuse
