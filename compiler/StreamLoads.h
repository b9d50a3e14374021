//===- compiler/StreamLoads.h - L2 hints on data read once ----*- C++ -*-===//
#pragma once

#include "compiler/Schedule.h"

namespace jitfuse {

/// Marks scheduled kernel \p K (and its other forms) to load its inputs of
/// the domain's size with evict_first: with \p All every kernel that reads
/// each input element once (element-wise, rows kept in registers;
/// CompileOptions::StreamLoads), else with \p ReadOnlyRows a row kernel
/// whose outputs are all per row, in the form for runs of more than SMs
/// rows, with a plain copy for the others (CompileOptions::
/// StreamReadOnlyRows). Appends to its schedule text.
void markStreamLoads(const Graph &G, KernelPlan &K, bool All, bool ReadOnlyRows);

} // namespace jitfuse
