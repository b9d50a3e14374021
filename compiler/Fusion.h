//===- compiler/Fusion.h - the fusion pass ----------------------*- C++ -*-===//
#pragma once

#include "codegen/LaunchRule.h"
#include "compiler/Partition.h"

namespace jitfuse {

struct FusionOptions {
  /// CompileOptions::FullReducePrologueOutputs: a full reduction takes a
  /// prologue whose values are also stored (a graph output, or read by
  /// another kernel) over the reduction's domain.
  bool FullReducePrologueOutputs = true;
  /// CompileOptions::ColumnReduceEpilogue: a column reduction takes
  /// element-wise work on its result ([1, C]), done per column after the
  /// splits are combined.
  bool ColumnReduceEpilogue = true;
  /// CompileOptions::FullReduceEpilogue: a full reduction takes
  /// element-wise work on its one-element result, done by the last block
  /// after the partials are combined.
  bool FullReduceEpilogue = true;
  /// CompileOptions::RecomputeStoredValues: an intermediate a kernel
  /// stores only for other kernels is computed by them instead when that
  /// moves fewer bytes (compiler/Recompute.h).
  bool RecomputeStoredValues = true;
  /// CompileOptions::SiblingColumnReductions: column reductions over one
  /// domain that share a load are one kernel (compiler/ColumnSiblings.h).
  bool SiblingColumnReductions = true;
  /// CompileOptions::ColumnReducePrologueOutputs: a column reduction's
  /// kernel stores graph outputs of its [R, C] domain from its prologue.
  bool ColumnReducePrologueOutputs = true;
  /// CompileOptions::MixOrderColumns: a row kernel computes the column
  /// reductions of its own loads (compiler/MixColumns.h).
  bool MixOrderColumns = true;
  /// The fewest columns a row kernel takes column reductions of
  /// (CompileOptions::MixMinColumns, else codegen::launch::MixMinColumns).
  int64_t MixMinColumns = codegen::launch::MixMinColumns;
  /// The most bytes of accumulators a row kernel keeps for them
  /// (CompileOptions::MixMaxSharedBytes, else
  /// codegen::launch::MixRuleSharedBytes).
  int64_t MixMaxSharedBytes = codegen::launch::MixRuleSharedBytes;
};

/// Partitions G into Level 1 (element-wise), Level 2 (row reduction with
/// prologue and epilogue) and full-reduction clusters. Pure and
/// deterministic; every refusal to merge is recorded as a FusionBoundary.
Partition fuseGraph(const Graph &G, const FusionOptions &Opts = {});

} // namespace jitfuse
