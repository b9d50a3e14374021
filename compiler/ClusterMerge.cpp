//===- compiler/ClusterMerge.cpp - two clusters into one ------------------===//
#include "compiler/ClusterMerge.h"

#include <algorithm>

namespace jitfuse {

bool clusterReads(const Graph &G, const Cluster &C, const Cluster &From) {
  std::set<NodeId> Made(From.Nodes.begin(), From.Nodes.end());
  for (NodeId N : C.Nodes)
    for (NodeId Op : G.node(N).Operands)
      if (Made.count(Op) && !std::binary_search(C.Nodes.begin(), C.Nodes.end(), Op))
        return true;
  return false;
}

bool mergeClusters(const Graph &G, std::vector<Cluster> &Clusters,
                   std::vector<std::set<NodeId>> &Recomputed, unsigned A, unsigned B) {
  // At B's place: nothing between reads A. At A's: B reads nothing
  // computed between.
  bool AtB = true, AtA = true;
  for (unsigned K = A + 1; K < B; ++K) {
    AtB &= !clusterReads(G, Clusters[K], Clusters[A]);
    AtA &= !clusterReads(G, Clusters[B], Clusters[K]);
  }
  if (!AtB && !AtA)
    return false;
  unsigned Into = AtB ? B : A, From = AtB ? A : B;
  Cluster &I = Clusters[Into];
  I.Nodes.insert(I.Nodes.end(), Clusters[From].Nodes.begin(), Clusters[From].Nodes.end());
  std::sort(I.Nodes.begin(), I.Nodes.end());
  I.Nodes.erase(std::unique(I.Nodes.begin(), I.Nodes.end()), I.Nodes.end());
  Recomputed[Into].insert(Recomputed[From].begin(), Recomputed[From].end());
  Clusters[From].Nodes.clear();
  Recomputed[From].clear();
  return true;
}

} // namespace jitfuse
