//===- compiler/StreamLoads.cpp - L2 hints on data read once --------------===//
//
// Marks the kernels whose row-shaped inputs load with evict_first
// (KernelPlan::StreamLoads), after scheduling: CompileOptions::StreamLoads
// and StreamReadOnlyRows, both experiments (BENCHMARKS.md, session 20).
//
//===----------------------------------------------------------------------===//
#include "compiler/StreamLoads.h"

#include "codegen/LaunchRule.h"

#include <fmt/format.h>

namespace jitfuse {

/// Reads each input element once: an element-wise kernel (not a
/// transpose, whose tiles the hint is not measured on) or a row kept in
/// registers; a row re-read per stage wants its row kept in L2.
static bool readsInputsOnce(const KernelPlan &P) {
  return P.TransposeNode < 0 && (P.Kind == KernelKind::Elementwise ||
                                 (P.Kind == KernelKind::RowReduce && P.CacheRow));
}

/// StreamLoads: every kernel that reads its inputs once, and the other
/// forms of a row kernel (few rows, wide rows) each by the same test.
static void streamAll(KernelPlan &K) {
  for (std::shared_ptr<const KernelPlan> *Form : {&K.FewRows, &K.WideRows, &K.AlignedCluster}) {
    if (!*Form || !readsInputsOnce(**Form))
      continue;
    KernelPlan Copy = **Form;
    Copy.StreamLoads = true;
    *Form = std::make_shared<const KernelPlan>(std::move(Copy));
  }
  if (!readsInputsOnce(K))
    return;
  K.StreamLoads = true;
  K.Why += ", inputs read once streamed through L2 (evict_first; StreamLoads)";
}

/// StreamReadOnlyRows: a row kernel that reads its row once
/// and writes only per-row values streams its row-shaped inputs in its
/// main form, the one runs of more than SMs rows launch; a plain copy
/// becomes its wide form when it has none, so runs of at most SMs rows
/// (where a few microseconds' kernel gained nothing, BENCHMARKS.md session
/// 20) keep plain loads. Its few-rows and wide forms stay plain.
static void streamReadOnlyRows(const Graph &G, KernelPlan &K) {
  if (K.Kind != KernelKind::RowReduce || !readsInputsOnce(K))
    return;
  for (NodeId Out : K.Outputs)
    if (sameNumel(G.node(Out).Dims, K.Domain))
      return;
  // Static rows beyond any device's SM count never launch the copy.
  std::optional<int64_t> Rows = staticNumel(llvm::ArrayRef<Dim>(K.Domain).drop_back());
  if (!K.WideRows && !(Rows && !codegen::launch::useWideRows(*Rows, 1024))) {
    KernelPlan Plain = K;
    Plain.FewRows = Plain.AlignedCluster = nullptr;
    Plain.Name += "_plain";
    K.WideRows = std::make_shared<const KernelPlan>(std::move(Plain));
    K.Why += fmt::format("; when a run's rows <= SMs: kernel {}_plain instead, plain loads",
                         K.Name);
  }
  K.StreamLoads = true;
  K.Why += ", its row streamed through L2 (evict_first; StreamReadOnlyRows)";
}

void markStreamLoads(const Graph &G, KernelPlan &K, bool All, bool ReadOnlyRows) {
  if (All)
    streamAll(K);
  else if (ReadOnlyRows)
    streamReadOnlyRows(G, K);
}

} // namespace jitfuse
