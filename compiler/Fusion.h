//===- compiler/Fusion.h - the fusion pass ----------------------*- C++ -*-===//
#pragma once

#include "compiler/Partition.h"

namespace jitfuse {

/// Partitions G into Level 1 (element-wise), Level 2 (row reduction with
/// prologue and epilogue) and full-reduction clusters. Pure and
/// deterministic; every refusal to merge is recorded as a FusionBoundary.
Partition fuseGraph(const Graph &G);

} // namespace jitfuse
