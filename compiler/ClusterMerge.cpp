//===- compiler/ClusterMerge.cpp - two clusters into one ------------------===//
#include "compiler/ClusterMerge.h"

#include <algorithm>

namespace jitfuse {

namespace {

/// Whether \p To is reached from \p From through reads (a cluster reads
/// the values of those it depends on) by way of a third cluster. Merged,
/// From and To would run both before and after it. The clusters' order in
/// the vector is not a topological one (a cluster is where its first node
/// started it), so the clusters between two indices say nothing.
bool readsThroughOther(const Graph &G, const std::vector<Cluster> &Clusters, unsigned From,
                       unsigned To) {
  std::vector<std::vector<unsigned>> Where(G.size());
  for (unsigned K = 0; K < Clusters.size(); ++K)
    for (NodeId N : Clusters[K].Nodes)
      Where[N].push_back(K);
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
          if (K == To) {
            if (C != From)
              return true;
            continue; // a direct read: the caller's to allow or not
          }
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
  // Merged, a cluster on a chain of reads between them would make a cycle.
  if (readsThroughOther(G, Clusters, A, B) || readsThroughOther(G, Clusters, B, A))
    return false;
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
