//===- compiler/Partition.h - clusters of nodes, one kernel each -*- C++ -*-===//
#pragma once

#include "codegen/KernelPlan.h"
#include "compiler/SizeExpr.h"

#include <string>
#include <vector>

namespace jitfuse {

/// Why two nodes ended up in different kernels. Structured so tests and
/// users can assert on it; describeReason() gives the sentence.
enum class BoundaryReason : uint8_t {
  Unfused,          // CompileOptions::Fuse was off
  DomainMismatch,   // producer and consumer iterate over different shapes
  ReductionResult,  // a full reduction's scalar starts a new kernel
  RowDomainMismatch,// a row reduction result used over another row domain
  MultipleConsumers,// producer is needed by several kernels; materialized once
  WouldCycle,       // merging would create a cycle between kernels
  ClusterTooLarge,  // the size cap was reached
  SecondRowDomain,  // the consumer's cluster already owns another row domain
};

llvm::StringRef describeReason(BoundaryReason R);

/// Most nodes one kernel computes (the fusion walk's cap, ClusterTooLarge).
inline constexpr size_t MaxClusterNodes = 256;

struct FusionBoundary {
  NodeId Producer;
  NodeId Consumer;
  unsigned ProducerCluster;
  unsigned ConsumerCluster;
  BoundaryReason Reason;
  std::string Detail;
};

struct Cluster {
  KernelKind Kind = KernelKind::Elementwise;
  std::vector<NodeId> Nodes;   // computed nodes, topological
  /// The part of Nodes this kernel computes again instead of reading: cheap
  /// producers (compiler/Recompute.h) that no kernel stores, each computed
  /// by every kernel that reads it. Never in Outputs.
  std::vector<NodeId> Recomputed;
  std::vector<NodeId> Inputs;  // tensors read: graph inputs or other clusters' outputs
  std::vector<NodeId> Outputs; // nodes stored: graph outputs or read by other clusters
  std::vector<NodeId> Scalars; // run-time scalars used
};

/// One producer the fusion pass dissolved into its readers: the plan says
/// where it is recomputed and what that saves.
struct Recomputation {
  std::vector<NodeId> Nodes;     // the producer's nodes
  std::vector<unsigned> Kernels; // clusters computing (some of) them
  unsigned OpsPerElement = 0;    // recomputeCost summed, the costliest reader's
  bool ScalarOnly = false;       // every node has one element
  SizeSum BytesSaved;            // materialized minus recomputed traffic
};

struct Partition {
  std::vector<Cluster> Clusters; // in dependency order
  /// Per node: the cluster computing it (for a recomputed node, one of those
  /// that compute it); -1 for leaves and dead nodes.
  std::vector<int> ClusterOf;
  std::vector<FusionBoundary> Boundaries;
  std::vector<Recomputation> Recomputes;
};

/// Nodes that some graph output depends on.
std::vector<bool> liveNodes(const Graph &G);

/// Who reads each node, among the live nodes, and which nodes are graph
/// outputs: what the fusion and recompute passes both start from.
struct NodeUses {
  std::vector<bool> Live;
  std::vector<std::vector<NodeId>> Users;
  std::vector<bool> IsOutput;
};
NodeUses nodeUses(const Graph &G);

/// One kernel per op, the way an eager framework runs.
Partition partitionUnfused(const Graph &G);

/// Fills Inputs/Outputs/Scalars/Kind of every cluster from Nodes and
/// ClusterOf, orders clusters by dependency, and checks the invariants
/// (every live computed node in exactly one cluster, no cycles). Shared by
/// every partitioner.
void finalizePartition(const Graph &G, Partition &P);

/// Throws a jitfuse::Error when an invariant is broken.
void verifyPartition(const Graph &G, const Partition &P);

} // namespace jitfuse
