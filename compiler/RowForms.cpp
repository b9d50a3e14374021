//===- compiler/RowForms.cpp - a row kernel's forms for few rows -----------===//
//
// A long row kernel is scheduled for many rows; runs of few rows leave most
// SMs idle with one block a row. Such a kernel gets other forms, scheduled
// again under the options that make them, and the launch picks one by the
// run's rows (codegen::launch::useFewRows, useWideRows).
//
//===----------------------------------------------------------------------===//
#include "compiler/RowForms.h"
#include "compiler/ScheduleRows.h"

#include "codegen/LaunchRule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <memory>

namespace jitfuse {

/// Whether \p P may get another form for some row counts: one block of
/// MaxRowThreads a static row that is re-read per stage, or kept in
/// registers only through RowCacheStageInputs or RowCacheValues (such a row
/// was re-read before, with these forms for few rows), not in shared
/// memory, not split over a cluster.
static bool takesRowForms(const KernelPlan &P) {
  return P.Kind == KernelKind::RowReduce && !P.Domain.empty() &&
         !P.Domain.back().isDynamic() && P.ClusterX == 1 && P.RowsPerBlock == 1 &&
         (!P.CacheRow || !P.RowCacheInputs.empty() || P.RowCacheValuesOnly) &&
         P.RowSharedInputs.empty() &&
         (P.ThreadsX == codegen::launch::MaxRowThreads ||
          (P.CacheRow && P.ThreadsX == codegen::launch::WideRowThreads));
}

/// Few rows of a long row, one block each, leave most SMs idle (softmax
/// bf16 1 x 128256: 52.8 us, eager 37.0); split over a cluster they took
/// 2-5x less (BENCHMARKS.md, session 5), but many rows lost 1.3-1.8x. So
/// such a kernel gets both forms and the launch picks by the run's rows:
/// the cluster form of \p P, or null.
static std::shared_ptr<const KernelPlan> fewRowsForm(KernelPlan &P, const ScheduleOptions &Opts,
                                                     const Rescheduler &Reschedule) {
  if (!Opts.FewRowsClusters || !takesRowForms(P))
    return nullptr;
  int64_t Chunks = (P.Domain.back().Size + P.Vecs.front() - 1) / P.Vecs.front();
  if (!codegen::launch::fewRowsChunks(Chunks))
    return nullptr;
  std::optional<int64_t> Rows =
      staticNumel(llvm::ArrayRef<Dim>(P.Domain).drop_back());
  // Static rows too many for any GPU (1024 SMs, far above the H200's 132)
  // never launch the split form: don't compile it.
  if (Rows && !codegen::launch::useFewRows(*Rows, codegen::launch::MaxClusterBlocks, 1024))
    return nullptr;
  ScheduleOptions Split = Opts;
  Split.RowPhaseLoop = false; // runs of at most one wave: a block a row
  Split.Clusters = true;
  Split.ForceCluster = codegen::launch::MaxClusterBlocks;
  KernelPlan Twin = Reschedule(Split);
  if (Twin.ClusterX != codegen::launch::MaxClusterBlocks || Twin.Vecs != P.Vecs ||
      Twin.Peel != P.Peel)
    return nullptr;
  Twin.Name += "_c" + std::to_string(Twin.ClusterX);
  P.Why += fmt::format("; when a run's rows x {} <= SMs x {} (every split block resident at "
                       "once): kernel {} instead, each row split over a cluster of {} blocks ({})",
                       Twin.ClusterX, codegen::launch::ResidentRowBlocksPerSm, Twin.Name,
                       Twin.ClusterX,
                       Twin.CacheRow ? "its part of the row kept in registers"
                                     : "re-read per stage");
  return std::make_shared<const KernelPlan>(std::move(Twin));
}

/// ScheduleOptions::WideRows: a long row re-read per stage,
/// one block of MaxRowThreads a row, also compiled at WideRowThreads a row,
/// which the launch picks when the few-rows form does not run and the rows
/// are at most one block an SM (codegen::launch::useWideRows): twice the
/// loads in flight where one plain block a row leaves most of an SM's
/// threads unused. The wide form of \p P, or null.
static std::shared_ptr<const KernelPlan> wideRowsForm(KernelPlan &P, const ScheduleOptions &Opts,
                                                      const Rescheduler &Reschedule) {
  // A row kept at 1024 threads (RowCacheWideThreads) is wide already.
  if (!Opts.WideRows || !takesRowForms(P) || P.ThreadsX == codegen::launch::WideRowThreads)
    return nullptr;
  std::optional<int64_t> Rows =
      staticNumel(llvm::ArrayRef<Dim>(P.Domain).drop_back());
  if (Rows && !codegen::launch::useWideRows(*Rows, 1024))
    return nullptr;
  ScheduleOptions Wide = Opts;
  Wide.RowPhaseLoop = false; // runs of at most SMs rows: a block a row
  Wide.RowRereadThreads = codegen::launch::WideRowThreads;
  // A row kept only by RowCacheStageInputs or RowCacheValues: its wide form
  // re-reads, as before those options.
  if (P.CacheRow)
    Wide.RowCacheBytes = 0;
  KernelPlan Twin = Reschedule(Wide);
  if (Twin.ThreadsX != codegen::launch::WideRowThreads || Twin.ClusterX != 1 ||
      Twin.RowsPerBlock != 1 || Twin.Vecs != P.Vecs || Twin.Peel != P.Peel)
    return nullptr;
  Twin.Name += "_t" + std::to_string(Twin.ThreadsX);
  Twin.MinBlocksPerSm = 1;
  P.Why += fmt::format("; when a run's rows <= SMs and the few-rows form does not run (one "
                       "block of {} threads an SM): kernel {} instead, {} threads a row, {} "
                       "(WideRows)",
                       Twin.ThreadsX, Twin.Name, Twin.ThreadsX,
                       Twin.CacheRow ? "kept in registers" : "re-read per stage");
  return std::make_shared<const KernelPlan>(std::move(Twin));
}

/// A row the rule gave 4 chunks a thread (one warp a row, or a mean and its
/// variance) also compiled at the 2 chunks a thread of other rows, which
/// the launch picks for runs of at most SMs rows (useWideRows): there a
/// block is most of an SM's work, and twice its threads keep twice the
/// loads in flight. Measured at 4 for every run (H200, BENCHMARKS.md
/// session 19), LayerNorm lost up to 0.75x on runs of 8-128 rows (6.0 ->
/// 8.0 us) while gaining up to 1.79x on runs of thousands. The form of \p
/// P at 2 chunks a thread, or null.
static std::shared_ptr<const KernelPlan>
twoChunksForm(KernelPlan &P, const ScheduleOptions &Opts, const Rescheduler &Reschedule) {
  if (!Opts.WideRows || Opts.RowChunksPerThread || P.Kind != KernelKind::RowReduce ||
      P.Domain.empty() || P.Domain.back().isDynamic() || P.ClusterX != 1 ||
      !P.RowSharedInputs.empty() || P.FewRows)
    return nullptr;
  std::optional<int64_t> Rows = staticNumel(llvm::ArrayRef<Dim>(P.Domain).drop_back());
  if (Rows && !codegen::launch::useWideRows(*Rows, 1024))
    return nullptr;
  ScheduleOptions Two = Opts;
  Two.RowPhaseLoop = false; // runs of at most SMs rows: a block a row
  Two.RowChunksPerThread = 2;
  // At most a block an SM: occupancy is not its limit (the cluster and
  // 1024-thread forms are outside PeeledRowOccupancy's rule anyway).
  Two.PeeledRowOccupancy = false;
  KernelPlan Twin = Reschedule(Two);
  if (Twin.ThreadsX <= P.ThreadsX || Twin.RowsPerBlock != 1 || Twin.ClusterX != 1 ||
      Twin.Vecs != P.Vecs || Twin.Peel != P.Peel)
    return nullptr;
  Twin.Name += "_t" + std::to_string(Twin.ThreadsX);
  P.Why += fmt::format("; when a run's rows <= SMs: kernel {} instead, {} threads a row (2 "
                       "chunks each)",
                       Twin.Name, Twin.ThreadsX);
  return std::make_shared<const KernelPlan>(std::move(Twin));
}

/// ScheduleOptions::AlignedClusters: a long row re-read per stage whose
/// cluster split keeps it in registers (ScheduleOptions::Clusters' plan)
/// gets that split's aligned variant, which the launch runs for aligned
/// pointers when neither few-rows form does. Only the aligned variant: the
/// split's peeled ones lost to the re-read row on 16-bit rows (norm
/// backwards of 32064-128256 columns, session 42: aligned 1.24-1.37x,
/// 16-bit peeled 0.82-0.97x). The split plan of \p P, or null.
///
/// Each stage of the split ends in a cluster-wide combine (a cluster
/// barrier, every block reading the others' partials through distributed
/// shared memory), whose cost grows with the blocks; a stage waits for the
/// previous one's. So the split is taken while stages x blocks <=
/// MaxClusterStageBlocks. Measured on an H100 (BENCHMARKS.md, session 43,
/// bench/ab/s43a.txt): one stage over 8 blocks (add + RMSNorm, the norm
/// backwards' joint sums) 1.10-1.38x, two over 2-4 (softmax's max then
/// sum) 1.03-1.29x, but two over 8 (LayerNorm's mean then variance, 16-bit
/// x 128256 and f32 x 65536) 0.85-0.97x.
static constexpr int MaxClusterStageBlocks = 8;

/// The bytes a thread of a split whose blocks fit two an SM, taken for
/// splits of two dependent stages (each a cluster-wide wait, which other
/// resident blocks hide): 128 B of kept row left 54-64 registers a thread
/// at 512 threads. Measured on an H100 (bench/ab/s44a.txt): softmax 16-bit
/// x 128256 at 4 blocks (64 registers) 1.17-1.19x faster than at 2 (127
/// registers, one block an SM), LayerNorm f32 x 50257 (peeled) at 4 blocks
/// 1.28x faster than the re-read row where 2 blocks (78 registers) were
/// 0.61x; one stage (the norm backwards f32 x 32064) lost 0.79-0.80x going
/// from 4 blocks (64 registers, two an SM already) to 8.
/// ScheduleOptions::AlignedClustersTwoBlocks.
static constexpr int SplitTwoBlocksBytes = 128;

static std::shared_ptr<const KernelPlan> alignedClusterForm(const Graph &G, KernelPlan &P,
                                                            const ScheduleOptions &Opts,
                                                            const Rescheduler &Reschedule) {
  // The narrowest element of the tensors of the row's length. Asked only of
  // a row plan (a flat plan's domain may be a scalar's: no axes).
  auto NarrowestElement = [&] {
    assert(!P.Domain.empty() && "a row plan has a row axis");
    int64_t Min = 8;
    for (NodeId N : P.Inputs) {
      const Node &Nd = G.node(N);
      if (!Nd.Dims.empty() && Nd.Dims.back() == P.Domain.back())
        Min = std::min<int64_t>(Min, dtypeBytes(Nd.Type));
    }
    return Min;
  };
  if (!Opts.AlignedClusters || !takesRowForms(P) || P.CacheRow || !P.Peel)
    return nullptr;
  const int64_t Narrowest = NarrowestElement();
  const bool WidePeeled = Opts.AlignedClustersPeeled && Narrowest >= 4;
  const bool MayNarrow = Opts.AlignedClustersPeeled && Opts.AlignedClustersPeeledNarrow &&
                         Opts.AlignedClustersPeeledBound && Narrowest == 2;
  if (P.firstPeeled() == 0 && !WidePeeled && !MayNarrow)
    return nullptr;
  // The split of \p Bytes a thread (0: RowCacheBytes), keeping only the
  // stages' inputs where they alone fit with \p StageInputs, if it keeps
  // the row with P's variants.
  auto SplitAt = [&](int Bytes, bool StageInputs,
                     bool Values = false) -> std::unique_ptr<KernelPlan> {
    ScheduleOptions Split = Opts;
    Split.RowPhaseLoop = false; // a peeled-variant option: not this form's
    Split.Clusters = true;
    Split.ForceCluster.reset();
    Split.ClusterCacheBytes = Bytes;
    Split.ClusterStageInputs = StageInputs;
    Split.ClusterValues = Values;
    KernelPlan Twin = Reschedule(Split);
    if (Twin.ClusterX <= 1 || !Twin.CacheRow || Twin.RowsPerBlock != 1 ||
        Twin.Vecs != P.Vecs || Twin.Peel != P.Peel || Twin.firstPeeled() != P.firstPeeled())
      return nullptr;
    for (size_t I = 0; I < P.Vecs.size(); ++I)
      if (Twin.outputLedVariant(I) != P.outputLedVariant(I))
        return nullptr;
    return std::make_unique<KernelPlan>(std::move(Twin));
  };
  auto StagesOf = [&](const KernelPlan &T) {
    return stageCount(reductionStages(G, T.Nodes, T.RowPairs));
  };
  auto InBound = [&](const KernelPlan &T) {
    return StagesOf(T) * T.ClusterX <= MaxClusterStageBlocks;
  };
  // The fewest blocks that keep the row; for a split of dependent stages,
  // the blocks of two splits an SM (SplitTwoBlocksBytes a thread) within
  // the stage bound.
  auto Choose = [&](bool StageInputs) {
    std::unique_ptr<KernelPlan> S = SplitAt(0, StageInputs);
    if (S && Opts.AlignedClustersTwoBlocks && StagesOf(*S) > 1) {
      std::unique_ptr<KernelPlan> Two = SplitAt(SplitTwoBlocksBytes, StageInputs);
      if (Two && Two->ClusterX > S->ClusterX && InBound(*Two))
        S = std::move(Two);
    }
    return S;
  };
  std::unique_ptr<KernelPlan> S = Choose(false);
  // RowClustersStageInputs: a split past the stage bound, or none, because
  // it keeps every input of the row's length (LayerNorm's weight and bias
  // beside x: f32 x 50257 at 8 blocks, 2 stages; f32 x 128256 at no block
  // count) retried keeping only the stages' inputs, as one block's kept
  // row does (RowCacheStageInputs): x alone fits 4 blocks. Re-read, such
  // rows cross HBM twice where the resident rows overflow L2 (LayerNorm
  // f32 1335 x 50257: 53% of the copy).
  if (Opts.AlignedClustersStageInputs && (!S || !InBound(*S)))
    if (std::unique_ptr<KernelPlan> Staged = Choose(true); Staged && InBound(*Staged))
      S = std::move(Staged);
  // RowClustersValues: the values the loops compute from the inputs, where
  // they cover them in fewer bytes, at two blocks an SM (add + RMSNorm f32
  // x 128256: x + residual over 8 blocks, 128 B a thread, not the two
  // inputs' 256 B at one block an SM).
  if (Opts.AlignedClustersValues)
    if (std::unique_ptr<KernelPlan> V = SplitAt(SplitTwoBlocksBytes, false, /*Values=*/true);
        V && V->RowCacheValuesOnly && InBound(*V))
      S = std::move(V);
  if (!S)
    return nullptr;
  KernelPlan &Twin = *S;
  if (!InBound(Twin)) {
    P.Why += fmt::format("; no cluster split for aligned rows: {} stages x {} blocks > {} "
                         "(RowClustersAligned)",
                         StagesOf(Twin), Twin.ClusterX, MaxClusterStageBlocks);
    return nullptr;
  }
  // RowClustersPeeledBound: the peeled variants at two blocks an SM where
  // the kept loads are in PeeledRowOccupancy's window. RowClustersPeeled-
  // Narrow: 16-bit rows split at any alignment only so bounded, and in
  // 16-byte chunks (bf16 RMSNorm backward x 32064 in 8-byte chunks, the
  // width of its f32 statistics: its output-led variant spilled 594 B).
  // Not with AlignedRowCopy (an experiment): its two loop copies spilled
  // 72-84 B so bounded.
  const bool Bounded = Opts.AlignedClustersPeeledBound && !Twin.AlignedRowCopy &&
                       Twin.KeptLoadBytes <= ScheduleOptions::PeeledOccupancyMaxBytes;
  const bool Peeled =
      WidePeeled ||
      (MayNarrow && Bounded && Twin.Vecs.back() * Narrowest == 16);
  if (P.firstPeeled() == 0 && !Peeled)
    return nullptr;
  Twin.Name += "_ac" + std::to_string(Twin.ClusterX);
  if (Peeled && Bounded)
    Twin.PeeledMinBlocksPerSm = std::max(Twin.PeeledMinBlocksPerSm, 2);
  P.AlignedClusterOverWide = Opts.AlignedClustersOverWide && P.WideRows;
  P.AlignedClusterPeeled = Peeled;
  const std::string Values =
      Twin.RowCacheValuesOnly ? " as the values of " + nodeList(Twin.CachedValues) : "";
  P.Why += fmt::format("; when {}{}: kernel {}'s {} instead, each row split over a "
                       "cluster of {} blocks that keep it in registers{} (RowClustersAligned{}{}{})",
                       P.AlignedClusterPeeled ? "" : "the pointers allow the aligned variant and ",
                       P.AlignedClusterOverWide ? "the few-rows form does not run"
                                                : "neither form above runs",
                       Twin.Name,
                       P.AlignedClusterPeeled
                           ? WidePeeled
                                 ? "variant of the pointers' alignment (4-byte elements)"
                                 : "variant of the pointers' alignment (Narrow: 16-bit rows "
                                   "of 16-byte chunks, bounded)"
                           : "aligned variant",
                       Twin.ClusterX, Values, P.AlignedClusterOverWide ? ", OverWide" : "",
                       P.AlignedClusterPeeled ? ", Peeled" : "",
                       Twin.RowCacheValuesOnly ? ", Values" : "");
  if (Peeled && Bounded)
    P.Why += fmt::format("; its peeled variants bounded to 2 blocks an SM ({} B of kept loads "
                         "a thread <= {}: RowClustersPeeledBound)",
                         Twin.KeptLoadBytes, ScheduleOptions::PeeledOccupancyMaxBytes);
  return std::make_shared<const KernelPlan>(std::move(Twin));
}

void attachRowForms(const Graph &G, KernelPlan &P, const ScheduleOptions &Opts,
                    const Rescheduler &Reschedule) {
  P.FewRows = fewRowsForm(P, Opts, Reschedule);
  P.WideRows = wideRowsForm(P, Opts, Reschedule);
  if (!P.WideRows)
    P.WideRows = twoChunksForm(P, Opts, Reschedule);
  P.AlignedCluster = alignedClusterForm(G, P, Opts, Reschedule);
}

} // namespace jitfuse
