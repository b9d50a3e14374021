//===- compiler/Plan.cpp - the fusion plan a user reads -------------------===//
#include "compiler/Plan.h"

#include "codegen/LaunchRule.h"
#include "ir/Printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>

namespace jitfuse {

/// The extent of input N that cluster C reads: N's shape, with the last dim
/// narrowed to the union of the column ranges when every use is a slice.
static Shape readExtent(const Graph &G, const Cluster &C, NodeId N) {
  Shape Dims = G.node(N).Dims;
  std::vector<std::pair<int64_t, int64_t>> Ranges;
  for (NodeId U : C.Nodes) {
    const Node &Nd = G.node(U);
    bool Uses = std::find(Nd.Operands.begin(), Nd.Operands.end(), N) != Nd.Operands.end();
    if (!Uses)
      continue;
    if (Nd.Kind != Op::Slice)
      return Dims;
    Ranges.emplace_back(Nd.A0, Nd.A1);
  }
  if (Ranges.empty() || Dims.empty() || Dims.back().isDynamic())
    return Dims;
  std::sort(Ranges.begin(), Ranges.end());
  int64_t Width = 0, End = INT64_MIN;
  for (auto [A, B] : Ranges) {
    A = std::max(A, End);
    if (B > A)
      Width += B - A;
    End = std::max(End, B);
  }
  Dims.back() = Dim(Width);
  return Dims;
}

SizeSum clusterTraffic(const Graph &G, const Cluster &C) {
  SizeSum S;
  for (NodeId N : C.Inputs)
    S.add(SizeExpr::of(readExtent(G, C, N), G.dynamicDims()).times(dtypeBytes(G.node(N).Type)));
  for (NodeId N : C.Outputs)
    S.add(SizeExpr::of(G.node(N).Dims, G.dynamicDims()).times(dtypeBytes(G.node(N).Type)));
  return S;
}

llvm::StringRef clusterLevel(KernelKind K) {
  switch (K) {
  case KernelKind::Elementwise: return "L1 element-wise";
  case KernelKind::RowReduce: return "L2 row-reduction";
  case KernelKind::FullReduce: return "full reduction";
  case KernelKind::ColumnReduce: return "column reduction";
  }
  return "";
}

static std::string nodeRef(const Graph &G, NodeId N) {
  const Node &Nd = G.node(N);
  std::string S = fmt::format("%{}", N);
  if (Nd.Kind == Op::Input)
    S += fmt::format(" input \"{}\"", Nd.Name);
  for (const GraphOutput &O : G.outputs())
    if (O.Id == N)
      S += fmt::format(" -> output \"{}\"", O.Name);
  return S + fmt::format(" {}{}", dtypeName(Nd.Type).str(), shapeStr(Nd.Dims));
}

std::string explainPlan(const Graph &G, const Partition &P,
                        llvm::ArrayRef<KernelPlan> Plans,
                        llvm::ArrayRef<SizeSum> KernelBytes, bool Fused) {
  bool Fast = !Plans.empty() && Plans.front().FastMath;
  std::string Out = fmt::format("plan ({}{}): {} kernel{}\n", Fused ? "fused" : "unfused",
                                Fast ? ", fast math" : "", P.Clusters.size(),
                                P.Clusters.size() == 1 ? "" : "s");
  SizeSum Total;
  for (size_t I = 0; I < P.Clusters.size(); ++I) {
    const Cluster &C = P.Clusters[I];
    const KernelPlan &K = Plans[I];
    const SizeSum &Bytes = KernelBytes[I];
    Total.add(Bytes);
    Out += fmt::format("kernel {} {} [{}] vec {} threads {}{}x{}{}\n", I, K.Name,
                       clusterLevel(C.Kind).str(), K.Vecs.front(),
                       K.ThreadsAtLaunch
                           ? fmt::format("{}-", codegen::launch::DynamicRowMinThreads)
                           : std::string(),
                       K.ThreadsX, K.RowsPerBlock, K.CacheRow ? " row-in-registers" : "");
    if (!K.Why.empty())
      Out += "  schedule: " + K.Why + "\n";
    for (NodeId N : C.Nodes) {
      bool Again = std::binary_search(C.Recomputed.begin(), C.Recomputed.end(), N);
      Out += "    " + printNode(G, N) + (Again ? "  (recomputed)" : "") + "\n";
    }
    for (NodeId N : C.Inputs)
      Out += "  reads  " + nodeRef(G, N) + "\n";
    for (NodeId N : C.Outputs)
      Out += "  writes " + nodeRef(G, N) + "\n";
    Out += "  bytes  " + Bytes.str(G.dynamicDims()) + "\n";
  }
  if (!P.Boundaries.empty())
    Out += "boundaries:\n";
  for (const FusionBoundary &B : P.Boundaries)
    Out += fmt::format("  %{} (kernel {}) -> %{} (kernel {}): {}{}\n", B.Producer,
                       B.ProducerCluster, B.Consumer, B.ConsumerCluster,
                       describeReason(B.Reason).str(),
                       B.Detail.empty() ? "" : " (" + B.Detail + ")");
  if (!P.Recomputes.empty())
    Out += "recomputed instead of materialized:\n";
  for (const Recomputation &R : P.Recomputes) {
    std::vector<std::string> Ids, Ops, Kernels;
    for (NodeId N : R.Nodes) {
      Ids.push_back(fmt::format("%{}", N));
      std::string Op = opName(G.node(N).Kind).str();
      if (std::find(Ops.begin(), Ops.end(), Op) == Ops.end())
        Ops.push_back(Op);
    }
    for (unsigned K : R.Kernels)
      Kernels.push_back(std::to_string(K));
    std::string Cost = R.ScalarOnly ? "one element, once per thread"
                                    : fmt::format("{} op{} per element", R.OpsPerElement,
                                                  R.OpsPerElement == 1 ? "" : "s");
    Out += fmt::format("  {} ({}; {}) in kernels {}: saves 1 launch and {} bytes\n",
                       fmt::join(Ids, " "), fmt::join(Ops, ", "), Cost,
                       fmt::join(Kernels, ", "), R.BytesSaved.str(G.dynamicDims()));
  }
  Partition U = partitionUnfused(G);
  SizeSum UBytes;
  for (const Cluster &C : U.Clusters)
    UBytes.add(clusterTraffic(G, C));
  Out += fmt::format("total: {} kernel{}, {} bytes; unfused: {} kernels, {} bytes\n",
                     P.Clusters.size(), P.Clusters.size() == 1 ? "" : "s",
                     Total.str(G.dynamicDims()), U.Clusters.size(),
                     UBytes.str(G.dynamicDims()));
  return Out;
}

std::string explainLaunches(llvm::ArrayRef<KernelPlan> Plans,
                            llvm::ArrayRef<std::vector<unsigned>> Launches,
                            llvm::ArrayRef<SizeSum> LaunchBytes, const std::vector<bool> &Splits,
                            int64_t MaxBytes, llvm::ArrayRef<std::string> DynNames) {
  if (Launches.size() == Plans.size())
    return "";
  std::string Out = fmt::format("launches: {} for {} kernels (horizontal fusion: independent "
                                "kernels share a launch, one block range each)\n",
                                Launches.size(), Plans.size());
  for (size_t L = 0; L < Launches.size(); ++L) {
    std::vector<std::string> Parts;
    int Threads = 0;
    for (unsigned K : Launches[L]) {
      const KernelPlan &P = Plans[K];
      Threads = std::max(Threads, P.ThreadsX * P.RowsPerBlock);
      Parts.push_back(fmt::format("kernel {} {} ({}x{})", K, P.Name, P.ThreadsX,
                                  P.RowsPerBlock));
    }
    Out += fmt::format("  launch {}: {}{}\n", L, fmt::join(Parts, " + "),
                       Parts.size() > 1 ? fmt::format(", blocks of {} threads", Threads) : "");
    if (Splits[L])
      Out += fmt::format("    (its kernels launch one by one where they move more than {} "
                         "together: {} bytes)\n",
                         MaxBytes % (1 << 20) == 0 ? fmt::format("{} MiB", MaxBytes >> 20)
                                                   : fmt::format("{} bytes", MaxBytes),
                         LaunchBytes[L].str(DynNames));
  }
  return Out;
}

std::string planToDot(const Graph &G, const Partition &P,
                      llvm::ArrayRef<std::vector<unsigned>> Launches) {
  // A recomputed node appears once in each kernel computing it.
  auto IsCopy = [&](NodeId N, int C) {
    if (C < 0)
      return false;
    const std::vector<NodeId> &R = P.Clusters[C].Recomputed;
    return std::binary_search(R.begin(), R.end(), N);
  };
  auto Id = [&](NodeId N, int C) {
    return IsCopy(N, C) ? fmt::format("n{}_k{}", N, C) : fmt::format("n{}", N);
  };
  std::string Out = "digraph jitfuse_plan {\n  compound=true;\n  node [shape=box, "
                    "fontname=\"monospace\"];\n";
  auto Kernel = [&](size_t I) {
    const Cluster &C = P.Clusters[I];
    Out += fmt::format("  subgraph cluster_{} {{\n    label=\"kernel {} ({})\";\n", I, I,
                       clusterLevel(C.Kind).str());
    for (NodeId N : C.Nodes)
      Out += fmt::format("    {} [label=\"{}\"{}];\n", Id(N, static_cast<int>(I)),
                         dotEscape(printNode(G, N)),
                         IsCopy(N, static_cast<int>(I)) ? ", style=dashed" : "");
    Out += "  }\n";
  };
  if (Launches.empty())
    for (size_t I = 0; I < P.Clusters.size(); ++I)
      Kernel(I);
  for (size_t L = 0; L < Launches.size(); ++L) {
    // A horizontal launch encloses its parts.
    if (Launches[L].size() > 1)
      Out += fmt::format("  subgraph cluster_launch_{} {{\n    label=\"launch {} ({} kernels, "
                         "horizontal)\";\n    style=dotted;\n",
                         L, L, Launches[L].size());
    for (unsigned I : Launches[L])
      Kernel(I);
    if (Launches[L].size() > 1)
      Out += "  }\n";
  }
  auto Edges = [&](NodeId N, int C) {
    for (NodeId Op : G.node(N).Operands)
      if (G.node(Op).Kind != Op::Constant)
        Out += fmt::format("  {} -> {};\n", Id(Op, C), Id(N, C));
  };
  std::vector<bool> Live = liveNodes(G);
  for (NodeId N = 0; N < G.size(); ++N) {
    const Node &Nd = G.node(N);
    if (!Live[N])
      continue;
    if (Nd.Kind == Op::Input || Nd.Kind == Op::Scalar)
      Out += fmt::format("  n{} [label=\"{}\", style=rounded];\n", N,
                         dotEscape(printNode(G, N)));
    if (Nd.Kind == Op::Constant)
      continue;
    int Home = P.ClusterOf.empty() ? -1 : P.ClusterOf[N];
    if (!IsCopy(N, Home)) {
      Edges(N, Home);
      continue;
    }
    for (size_t I = 0; I < P.Clusters.size(); ++I)
      if (IsCopy(N, static_cast<int>(I)))
        Edges(N, static_cast<int>(I));
  }
  for (size_t I = 0; I < G.outputs().size(); ++I)
    Out += fmt::format("  out{} [label=\"{}\", shape=ellipse];\n  n{} -> out{};\n", I,
                       dotEscape(G.outputs()[I].Name), G.outputs()[I].Id, I);
  return Out + "}\n";
}

} // namespace jitfuse
