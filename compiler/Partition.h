//===- compiler/Partition.h - clusters of nodes, one kernel each -*- C++ -*-===//
#pragma once

#include "codegen/KernelPlan.h"

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
  std::vector<NodeId> Inputs;  // tensors read: graph inputs or other clusters' outputs
  std::vector<NodeId> Outputs; // nodes stored: graph outputs or read by other clusters
  std::vector<NodeId> Scalars; // run-time scalars used
};

struct Partition {
  std::vector<Cluster> Clusters; // in dependency order
  std::vector<int> ClusterOf;    // per node; -1 for leaves and dead nodes
  std::vector<FusionBoundary> Boundaries;
};

/// Nodes that some graph output depends on.
std::vector<bool> liveNodes(const Graph &G);

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
