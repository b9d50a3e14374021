//===- compiler/ScheduleRows.h - a row kernel's threads and caches -*- C++ -*-===//
#pragma once

#include "compiler/Schedule.h"

#include <llvm/ADT/ArrayRef.h>

#include <string>

namespace jitfuse {

/// Completes \p P, a RowReduce kernel plan of cluster \p C whose domain,
/// variants and vector width \p Vec scheduleCluster has set: threads a row,
/// rows a block, the register or shared-memory cache, the re-read rules,
/// the cluster split and the experiments, each with its clause in P.Why.
KernelPlan scheduleRows(const Graph &G, const Cluster &C, KernelPlan P, int Vec,
                        const ScheduleOptions &Opts);

/// ScheduleOptions::OutputLedVariant: gives \p P's peeled variant a second
/// copy led by its output (KernelPlan::OutputLedVariant), or none, decided
/// on \p P and applied to its other forms alike (a launch picks the same
/// variant index in every form). ScheduleOptions::RowStartChunks: the
/// peeled variants' chunks at each row's start instead (no lead, so no
/// such copy; KernelPlan::RowStartChunks), in \p P and its forms.
void outputLedVariants(const Graph &G, KernelPlan &P, const ScheduleOptions &Opts);

/// Nodes as the plan's text names them: "%3, %7".
std::string nodeList(llvm::ArrayRef<NodeId> Ns);

} // namespace jitfuse
