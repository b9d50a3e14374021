//===- compiler/Horizontal.cpp - independent kernels in one launch --------===//
#include "compiler/Horizontal.h"

#include <algorithm>
#include <map>

namespace jitfuse {

bool horizontalCandidate(const KernelPlan &K, const SizeSum &Bytes, size_t NumDynDims) {
  if (K.Kind != KernelKind::Elementwise && K.Kind != KernelKind::RowReduce)
    return false;
  // Column partials: its blocks take their roles from a ticket over the
  // whole grid (codegen/MixColumns.cpp).
  if (!K.MixColumns.empty())
    return false;
  if ((K.ThreadsX * K.RowsPerBlock) % 32 != 0)
    return false;
  // Threads picked at launch: the part would read the launch's blockDim.
  if (K.ThreadsAtLaunch)
    return false;
  // A cluster shape is the launch's: a split row's blocks cannot share a
  // launch with other parts' block ranges.
  if (K.ClusterX > 1)
    return false;
  // A transpose tile's 2-D block and tile index are its own; so is a row
  // kept in dynamic shared memory (sized for this kernel alone).
  if (K.TransposeNode >= 0 || K.RowSharedElemBytes > 0 || K.RowPadSharedBytes > 0)
    return false;
  std::vector<int64_t> Ones(NumDynDims, 1);
  return Bytes.eval(Ones) <= HorizontalMaxPartBytes;
}

std::vector<std::vector<unsigned>> groupLaunches(const Partition &P,
                                                 llvm::ArrayRef<KernelPlan> Plans,
                                                 llvm::ArrayRef<SizeSum> Bytes,
                                                 size_t NumDynDims, bool Enable) {
  size_t N = P.Clusters.size();
  // Producers, transitively: Before[K][J] when kernel J must finish before
  // kernel K starts. Clusters are in dependency order, so one pass suffices.
  std::map<NodeId, unsigned> WrittenBy;
  for (unsigned K = 0; K < N; ++K)
    for (NodeId O : P.Clusters[K].Outputs)
      WrittenBy[O] = K;
  std::vector<std::vector<bool>> Before(N, std::vector<bool>(N, false));
  for (unsigned K = 0; K < N; ++K)
    for (NodeId In : P.Clusters[K].Inputs) {
      auto It = WrittenBy.find(In);
      if (It == WrittenBy.end() || It->second == K)
        continue;
      unsigned J = It->second;
      Before[K][J] = true;
      for (unsigned I = 0; I < N; ++I)
        if (Before[J][I])
          Before[K][I] = true;
    }

  auto Params = [&](unsigned K) {
    const KernelPlan &P = Plans[K];
    return P.Inputs.size() + P.Outputs.size() + P.Scalars.size() + P.DynDims.size() + 1;
  };
  std::vector<std::vector<unsigned>> Launches;
  std::vector<bool> Mergeable;     // per launch: holds only candidates
  std::vector<size_t> LaunchParams; // per launch: parameters, with block offsets
  std::vector<int> LaunchOf(N, -1);
  for (unsigned K = 0; K < N; ++K) {
    bool Cand = Enable && horizontalCandidate(Plans[K], Bytes[K], NumDynDims);
    // The earliest launch K may join: after every launch of a producer.
    size_t First = 0;
    for (unsigned J = 0; J < K; ++J)
      if (Before[K][J])
        First = std::max(First, static_cast<size_t>(LaunchOf[J]) + 1);
    size_t Target = Launches.size();
    if (Cand)
      for (size_t L = First; L < Launches.size(); ++L)
        if (Mergeable[L] && Launches[L].size() < HorizontalMaxParts &&
            LaunchParams[L] + Params(K) <= HorizontalMaxParams) {
          Target = L;
          break;
        }
    if (Target == Launches.size()) {
      Launches.emplace_back();
      Mergeable.push_back(Cand);
      LaunchParams.push_back(0);
    }
    LaunchParams[Target] += Params(K);
    Launches[Target].push_back(K);
    LaunchOf[K] = static_cast<int>(Target);
  }
  return Launches;
}

} // namespace jitfuse
