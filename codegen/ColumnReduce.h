//===- codegen/ColumnReduce.h - the column reduction kernel body -*- C++ -*-===//
#pragma once

#include "codegen/Emitter.h"
#include "codegen/KernelPlan.h"

namespace jitfuse::codegen {

/// The body of a KernelKind::ColumnReduce kernel: axis 0 of the domain
/// [R, C] reduced to [1, C], with the element-wise prologue computed per
/// element. A block of ColumnThreads x ColumnRowThreads threads owns
/// ColumnThreads adjacent columns (scalar loads, coalesced across a warp);
/// thread y sums rows y, y + ColumnRowThreads, ... in order, and thread 0
/// of each column combines the ColumnRowThreads partials in order y = 0, 1,
/// ...: a fixed order for given R, so results are bitwise reproducible run
/// to run (docs/NUMERICS.md, "Reduction order over axes").
void columnReduceBody(const Graph &G, const KernelPlan &P, Emitter &E);

} // namespace jitfuse::codegen
