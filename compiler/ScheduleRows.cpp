//===- compiler/ScheduleRows.cpp - a row kernel's threads and caches ------===//
//
// The row part of the scheduler (compiler/Schedule.cpp decides the kind,
// the domain and the vector width): threads a row, what the row keeps in
// registers or shared memory between its loops, what it reads again, its
// cluster split, and the opt-in experiments. Launch shapes follow the
// measurements in docs/MEASUREMENTS.md and BENCHMARKS.md's schedule log.
//
//===----------------------------------------------------------------------===//
#include "compiler/ScheduleRows.h"
#include "compiler/RowValues.h"

#include "codegen/Codegen.h"
#include "codegen/LaunchRule.h"

#include <llvm/ADT/STLExtras.h>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <set>

namespace jitfuse {

/// The largest power of two <= V (1 for V < 1), at most 2^30: callers clamp
/// it to a thread count, and a row of 2^40 chunks must not overflow it (the
/// unsigned doubling used to wrap to 0 and loop forever on such a row).
static unsigned pow2Floor(int64_t V) {
  uint64_t P = std::bit_floor(static_cast<uint64_t>(std::max<int64_t>(V, 1)));
  return static_cast<unsigned>(std::min<uint64_t>(P, uint64_t(1) << 30));
}

static unsigned pow2Ceil(int64_t V) {
  unsigned P = 1;
  while (static_cast<int64_t>(P) < V)
    P *= 2;
  return P;
}

/// Register bytes a thread keeps for the values \p Ns at \p Its chunks of
/// \p Vec elements a thread.
static int64_t valuesBytes(const Graph &G, llvm::ArrayRef<NodeId> Ns, int64_t Its, int Vec) {
  int64_t B = 0;
  for (NodeId N : Ns)
    B += Its * Vec * keptValueBytes(G, N);
  return B;
}

std::string nodeList(llvm::ArrayRef<NodeId> Ns) {
  std::string S;
  for (NodeId N : Ns)
    S += (S.empty() ? "%" : ", %") + std::to_string(N);
  return S;
}

/// The register-cache clause of a row kept by RowCacheStageInputs: which
/// inputs, and what all of them would take (\p AllBytes a thread; within
/// the budget when RowCacheLateEpilogue chose it, \p Late).
static std::string stageOnlyWhy(const Cluster &C, llvm::ArrayRef<unsigned> Staged,
                                int64_t AllBytes, bool Late, bool PeeledOnly) {
  std::vector<NodeId> Nodes;
  for (unsigned I : Staged)
    Nodes.push_back(C.Inputs[I]);
  return fmt::format(" of the inputs its stages read, {}; the epilogue loads the others: {} B "
                     "with them {}",
                     nodeList(Nodes), AllBytes,
                     !Late        ? "> RowCacheBytes"
                     : PeeledOnly ? "would fit, RowCacheLatePeeled: in the peeled variants; "
                                    "the aligned variant keeps every input"
                                  : "would fit, RowCacheLateEpilogue");
}

/// The inputs (indices into C.Inputs) a row kernel reads in a reduction
/// stage along the row (last dim \p Last): what a later stage or the
/// epilogue reads again. Inputs read only by the epilogue (a norm's weight)
/// are read once and not among them.
static std::vector<unsigned> stageInputs(const Graph &G, const Cluster &C, const Dim &Last) {
  std::map<NodeId, std::set<unsigned>> Reads;
  for (unsigned I = 0; I < C.Inputs.size(); ++I)
    Reads[C.Inputs[I]].insert(I);
  std::set<unsigned> Staged;
  for (NodeId N : C.Nodes) {
    std::set<unsigned> &S = Reads[N];
    for (NodeId O : G.node(N).Operands)
      if (auto It = Reads.find(O); It != Reads.end() && It->first != N)
        S.insert(It->second.begin(), It->second.end());
    if (isReduction(G.node(N).Kind))
      Staged.insert(S.begin(), S.end());
  }
  std::vector<unsigned> Out;
  for (unsigned I : Staged) {
    const Node &Nd = G.node(C.Inputs[I]);
    if (!Nd.Dims.empty() && Nd.Dims.back() == Last)
      Out.push_back(I);
  }
  return Out;
}

/// The reductions a row kernel pairs in one loop (KernelPlan::RowPairs:
/// online softmax, unless \p WelfordOnly, and Welford where a row outgrows
/// its L2 share); returns the plan clauses saying so.
static std::string pairedReductions(const Graph &G, const Cluster &C, KernelPlan &P,
                                    const ScheduleOptions &Opts, bool WelfordOnly = false) {
  std::string Why;
  // Welford costs an IEEE division per element: measured on the H200
  // (BENCHMARKS.md schedule log), it lost up to 15% where the row's second
  // read still hit L2 (f32 rows of 11008-14336, bf16 of 32064) and won
  // 1.2-1.26x where rows outgrow their share of L2 (f32 rows of 32064 and
  // longer, 16-bit rows of 128256). A static row's stage inputs against
  // that share decide; a dynamic row keeps mean-then-variance.
  bool Welford = false;
  std::string WelfordWhy;
  if (Opts.RowWelford) {
    Welford = *Opts.RowWelford;
  } else if (!P.Domain.back().isDynamic()) {
    int64_t RowBytes = 0;
    for (unsigned I : stageInputs(G, C, P.Domain.back()))
      RowBytes += P.Domain.back().Size * dtypeBytes(G.node(C.Inputs[I]).Type);
    Welford = RowBytes > Opts.RowL2ShareBytes;
    WelfordWhy = fmt::format("row inputs {} B {} the L2 share of a resident row, {} B", RowBytes,
                             Welford ? ">" : "<=", Opts.RowL2ShareBytes);
  }
  // Every candidate pair, so the plan can say why a Welford pair is not
  // taken.
  for (const RowPair &RP :
       rowPairs(G, C.Nodes, C.Outputs, Opts.RowOnlineSoftmax && !WelfordOnly, true)) {
    if (!RP.Welford || Welford)
      P.RowPairs.push_back(RP);
    else if (!WelfordWhy.empty())
      Why += ", mean and variance in two loops (" + WelfordWhy + ")";
  }
  for (const RowPair &RP : P.RowPairs)
    Why += fmt::format(", {} accumulated with the row {} in one loop ({}{})",
                       nodeList({RP.Second}), RP.Welford ? "mean" : "max",
                       RP.Welford ? "Welford" : "online rescaling",
                       RP.Welford && !WelfordWhy.empty() ? ": " + WelfordWhy : "");
  return Why;
}

/// A row kernel that reads its row from memory again in each stage: what
/// spares it reads (outputs read back, paired reductions) and the L2 hints
/// and occupancy pad the options ask for; returns the plan clauses saying so.
static std::string rereadSchedule(const Graph &G, const Cluster &C, KernelPlan &P,
                               const std::set<NodeId> &AfterReduction,
                               const ScheduleOptions &Opts) {
  std::string Why;
  // A whole-row output computed before any reduction and used again by the
  // cluster: stored by the first loop and read back by the later ones, one
  // tensor instead of the inputs it is computed from.
  std::vector<NodeId> Back;
  for (unsigned O = 0; Opts.RowReadBack && O < P.Outputs.size(); ++O) {
    NodeId N = P.Outputs[O];
    const Node &Nd = G.node(N);
    if (Nd.Kind == Op::Input || llvm::ArrayRef<Dim>(Nd.Dims) != llvm::ArrayRef<Dim>(P.Domain) ||
        !G.stridesOf(N).empty() || AfterReduction.count(N))
      continue;
    bool Used = false;
    for (NodeId M : C.Nodes)
      Used |= M != N && llvm::is_contained(G.node(M).Operands, N);
    if (!Used)
      continue;
    P.RowReadBack.push_back(O);
    Back.push_back(N);
  }
  if (!Back.empty())
    Why += fmt::format(", {} stored by the first loop and read back by the later ones",
                       nodeList(Back));
  Why += pairedReductions(G, C, P, Opts);
  if (Opts.RowL2Hints) {
    P.RowL2Hints = true;
    Why += ", its loads kept in L2 (evict_last) until the last loop (evict_first)";
  }
  if (Opts.RowPadSharedBytes > 0 && P.RowsPerBlock == 1) {
    P.RowPadSharedBytes = Opts.RowPadSharedBytes;
    Why += fmt::format(", {} B of unused dynamic shared memory a block so that fewer rows "
                       "share L2",
                       P.RowPadSharedBytes);
  }
  return Why;
}

/// A row kernel's opt-in experiments, static or dynamic rows alike.
static void rowExperiments(KernelPlan &P, const ScheduleOptions &Opts) {
  if (Opts.JointReduce && P.ThreadsX > 32 && P.ClusterX == 1) {
    P.JointReduce = true;
    P.Why += "; each stage's block reductions share two barriers (JointReduce)";
  }
  if (Opts.RowOkKnown && P.RowsPerBlock == 1) {
    P.RowOkKnown = true;
    P.Why += "; a block a row: its row declared to exist, the stages' loads and conversions "
             "shared (RowOkKnown)";
  }
  if (P.Peel && Opts.AlignedRowCopy) {
    P.AlignedRowCopy = true;
    P.Why += "; peeled variant: each chunk loop twice, plain wide accesses where a warp's "
             "chunked tensors all sit at the lead's alignment (AlignedRowCopy)";
  }
}

/// Whether input \p In of \p P is a row vector: the row's last dim, the
/// same for every row (a norm's weight and bias).
static bool rowVectorInput(const Graph &G, const KernelPlan &P, NodeId In) {
  const Node &Nd = G.node(In);
  if (Nd.Dims.empty() || P.Domain.size() < 2 || Nd.Dims.back() != P.Domain.back() ||
      !G.stridesOf(In).empty())
    return false;
  return llvm::all_of(llvm::ArrayRef<Dim>(Nd.Dims).drop_back(),
                      [](const Dim &D) { return !D.isDynamic() && D.Size == 1; });
}

/// RowPhaseLoop: a kept row's peeled variant loads its row vector once a
/// block (KernelPlan::RowPhaseLoop). A 16-bit row vector at another phase
/// than the row (a weight under an offset or odd-length row) is read as
/// two aligned blocks and a byte window a chunk (jf_load_shifted). Measured
/// on the H200 (BENCHMARKS.md, session 24), against a block a row: add +
/// RMSNorm bf16 x 11008 at +2 B 1.18x, x 6144 1.10x, 16-bit x 4095 1.03x;
/// but f32 rows lost up to 0.90x (their row vectors are read per lane only
/// where misaligned) and LayerNorm's two row vectors took 8-15 more
/// registers in the loop (f16 x 4999: a block an SM fewer, 0.95x). So: one
/// cached 16-bit row vector; and even there x alone at +2 B lost 0.93-0.96x,
/// so the option is off (an experiment). The forms for runs of at most SMs
/// rows (RowForms.cpp) keep a block a row.
static void rowPhaseLoop(const Graph &G, KernelPlan &P, const ScheduleOptions &Opts) {
  if (!Opts.RowPhaseLoop || P.Kind != KernelKind::RowReduce || !P.Peel || !P.CacheRow ||
      P.RowCacheValuesOnly || P.ClusterX != 1 || P.RowsPerBlock != 1 ||
      !P.RowSharedInputs.empty() || P.AlignedRowCopy || P.Domain.back().isDynamic())
    return;
  std::vector<unsigned> Vectors;
  for (unsigned I = 0; I < P.Inputs.size(); ++I)
    if (rowVectorInput(G, P, P.Inputs[I]) &&
        (P.RowCacheInputs.empty() || llvm::is_contained(P.RowCacheInputs, I)))
      Vectors.push_back(I);
  if (Vectors.size() != 1 || dtypeBytes(G.node(P.Inputs[Vectors[0]]).Type) != 2)
    return;
  P.RowPhaseLoop = true;
  P.Why += fmt::format("; peeled variant: a block loops over rows gridDim.x apart, one "
                       "phase, and loads the row vector '{}' once (RowPhaseLoop)",
                       G.node(P.Inputs[Vectors[0]]).Name);
}

KernelPlan scheduleRows(const Graph &G, const Cluster &C, KernelPlan P, int Vec,
                        const ScheduleOptions &Opts) {
  const Dim &Last = P.Domain.back();
  // The row is read again only by a later reduction stage (a reduction of
  // values that depend on another reduction: softmax's sum after its max) or
  // by the epilogue's whole-row outputs; a row read once (sum and max of
  // |x|) gains nothing from registers and pays for them in occupancy (1
  // block of 512 threads per SM at 124 registers for bf16 rows of 50257).
  bool ReadAgain = false;
  std::set<NodeId> AfterReduction;
  for (NodeId N : C.Nodes) {
    const Node &Nd = G.node(N);
    bool After = false;
    for (NodeId O : Nd.Operands)
      After |= AfterReduction.count(O) > 0;
    if (isReduction(Nd.Kind)) {
      ReadAgain |= After;
      After = true;
    }
    if (After)
      AfterReduction.insert(N);
  }
  for (NodeId O : C.Outputs)
    ReadAgain |= sameNumel(G.node(O).Dims, P.Domain);
  // Row kernels: threads per row from the row length.
  if (Last.isDynamic()) {
    // Rows of one block each: with RowThreadsAtLaunch the launch picks their
    // threads (codegen::launch::dynamicRowThreads), unless an experiment
    // fixes them.
    P.ThreadsAtLaunch = Opts.RowThreadsAtLaunch && !Opts.RowDynamicThreads;
    P.ThreadsX = Opts.RowDynamicThreads ? static_cast<int>(Opts.RowDynamicThreads)
                 : P.ThreadsAtLaunch    ? codegen::launch::MaxRowThreads
                                        : codegen::launch::DynamicRowThreads;
    if (P.ThreadsAtLaunch)
      P.Why += fmt::format("; row length {} known at run time: {}-{} threads a row, picked at "
                           "launch from the run's row length and rows (about 4 chunks a "
                           "thread; {} or {} when the rows are at most the SMs), re-read per "
                           "stage",
                           Last.Name, codegen::launch::DynamicRowMinThreads, P.ThreadsX,
                           P.ThreadsX / 2, P.ThreadsX);
    else
      P.Why += fmt::format("; row length {} known at run time: {} threads a row{}, re-read per "
                           "stage",
                           Last.Name, P.ThreadsX,
                           Opts.RowDynamicThreads ? " (RowDynamicThreads)" : "");
    if (ReadAgain)
      P.Why += rereadSchedule(G, C, P, AfterReduction, Opts);
    rowExperiments(P, Opts);
    return P;
  }
  // Threads follow the row's own chunks (a peeled row has no more whole
  // chunks; its head and tail elements go one per thread, codegen).
  int64_t Chunks = (Last.Size + Vec - 1) / Vec;
  if (Chunks <= 32) {
    P.ThreadsX = static_cast<int>(pow2Ceil(std::max<int64_t>(Chunks, 1)));
    P.RowsPerBlock = codegen::launch::ShortRowBlockThreads / P.ThreadsX;
  } else {
    // 2 chunks a thread, but 4 (fewer warps to combine) for a row one warp
    // covers at 4 chunks a thread, whose reductions then need no barrier,
    // and for a row with a mean and a variance of it (LayerNorm), whose two
    // dependent block reductions a row pays with every warp. Measured on the
    // H200 (same call, 16-bit rows of 1021: softmax 1.20-1.23x, LayerNorm
    // 1.15-1.19x, add + RMSNorm 0.98-0.99x; LayerNorm rows of 1021-14336 in
    // every dtype up to 1.79x, one point 0.98x; softmax's rows of 6144-14336
    // lost up to 14% at 4, so it keeps 2; BENCHMARKS.md schedule log).
    // Longer rows keep at least 2 warps (LayerNorm f32 x 768 at one warp:
    // 0.93x).
    constexpr int64_t WarpChunks = 4 * codegen::launch::MinRowThreads;
    int64_t PerThread = 2;
    unsigned Lo = codegen::launch::MinRowThreads;
    if (Opts.RowChunksPerThread) {
      PerThread = Opts.RowChunksPerThread;
    } else if (!Opts.AlignedRowCopy) {
      // (AlignedRowCopy, an experiment, doubles each chunk loop: at 4
      // chunks a thread its LayerNorm bf16 x 4096 spilled.)
      bool Variance = llvm::any_of(rowPairs(G, C.Nodes, C.Outputs, /*Online=*/false,
                                            /*Welford=*/true),
                                   [](const RowPair &RP) { return RP.Welford; });
      if (Chunks <= WarpChunks || Variance)
        PerThread = 4;
      if (Chunks > WarpChunks)
        Lo = 2 * codegen::launch::MinRowThreads;
    }
    // (RowThreadsRoundUp: at most PerThread chunks a thread, some idle.)
    const int64_t Want = Opts.RowThreadsRoundUp ? (Chunks + PerThread - 1) / PerThread
                                                : std::max<int64_t>(Chunks / PerThread, 1);
    P.ThreadsX = static_cast<int>(std::clamp<unsigned>(
        Opts.RowThreadsRoundUp
            ? pow2Ceil(std::min<int64_t>(Want, codegen::launch::MaxRowThreads))
            : pow2Floor(Want),
        Lo, codegen::launch::MaxRowThreads));
    P.RowsPerBlock = P.ThreadsX == 32 ? 4 : 1;
  }
  int64_t Iters = (Chunks + P.ThreadsX - 1) / P.ThreadsX;
  // Register bytes a thread keeps for its row at Its chunks a thread: every
  // input with the row's last dim, or with StageOnly the inputs a reduction
  // stage reads (Staged).
  std::vector<unsigned> Staged = stageInputs(G, C, Last);
  auto BytesOf = [&](int64_t Its, bool StageOnly) {
    int64_t B = 0;
    for (unsigned I = 0; I < C.Inputs.size(); ++I) {
      if (StageOnly && !llvm::is_contained(Staged, I))
        continue;
      const Node &Nd = G.node(C.Inputs[I]);
      // An input relabeled into the row (GroupNorm's [N, C, HW] read as
      // rows of C/G * HW) is not counted, so such a row is re-read: kept in
      // registers (160 B a thread) GroupNorm ran 20.8 us against 17.6 us
      // re-read (H200, same call; BENCHMARKS.md schedule log).
      if (!Nd.Dims.empty() && Nd.Dims.back() == Last)
        B += Its * Vec * dtypeBytes(Nd.Type);
    }
    return B;
  };
  // RowCacheStageInputs: a row read again whose inputs do not all fit the
  // budget keeps only its stages' inputs when those fit; the epilogue loads
  // the others (a norm's weight and bias) once. Rows that fit whole keep
  // every input: the early weight loads hide their latency in runs of few
  // rows (H200 A/B, 2026-12-02: dropping them there cost up to 0.84x at
  // 1-132 rows). Not for a forced cluster (the few-rows twin keeps its rule).
  const int64_t AllBytes = BytesOf(Iters, false), StageBytes = BytesOf(Iters, true);
  const int StageThreads = P.ThreadsX; // what StageBytes is counted at
  // RowCacheLateEpilogue: rows that fit whole too, in the form for many
  // rows (scheduleCluster gives runs of few rows the default kernel).
  const bool PeeledOnly = !Opts.RowCacheLateEpilogue && Opts.RowCacheLatePeeled && P.Peel;
  const bool Late = (Opts.RowCacheLateEpilogue || PeeledOnly) &&
                    AllBytes <= Opts.RowCacheBytes && StageBytes < AllBytes;
  auto ItersAt = [&](int K) {
    return (Chunks + int64_t(P.ThreadsX) * K - 1) / (int64_t(P.ThreadsX) * K);
  };
  // ClusterStageInputs: the stage inputs' test at the largest split, whose
  // block count the loop below then chooses by them.
  const bool SplitStages = Opts.ClusterStageInputs && Opts.Clusters && !Opts.ForceCluster &&
                           P.ThreadsX == codegen::launch::MaxRowThreads;
  const int64_t StageFitBytes =
      SplitStages ? BytesOf(ItersAt(codegen::launch::MaxClusterBlocks), true) : StageBytes;
  const bool StageOnly = Opts.RowCacheStageInputs && ReadAgain && !Opts.ForceRowCache &&
                         !Opts.ForceCluster && (AllBytes > Opts.RowCacheBytes || Late) &&
                         StageFitBytes > 0 && StageFitBytes <= Opts.RowCacheBytes;
  auto BytesAt = [&](int64_t Its) { return BytesOf(Its, StageOnly); };
  // A row read again that is too long for one block's registers splits over
  // the fewest blocks of a cluster that keep it (2-8): re-read, the row
  // crossed HBM once per stage (f32 softmax over 128256 columns at 2.0
  // TB/s). Measured on the H200 (BENCHMARKS.md), clusters lost where the
  // row already fit (bf16 rows of 32064 and 50257 over many rows: 1.3-1.8x
  // slower), so they are used for this case only.
  std::string ClusterWhy;
  int K = 1;
  // ClusterValues: the values covering the row's inputs (as RowCacheValues
  // below), which a split keeps where they fit in fewer bytes.
  std::vector<NodeId> SplitValues;
  if (Opts.ClusterValues && Opts.Clusters && Opts.RowCacheValues && ReadAgain &&
      !Opts.ForceCluster && !Opts.ForceRowCache)
    SplitValues = valuesCoveringInputs(G, C, P.Domain, Staged);
  auto SplitValuesAt = [&](int64_t Its) { return valuesBytes(G, SplitValues, Its, Vec); };
  auto SplitCost = [&](int64_t Its) {
    return SplitValues.empty() ? BytesAt(Its) : std::min(BytesAt(Its), SplitValuesAt(Its));
  };
  const int64_t SplitBytes =
      std::min(Opts.ClusterCacheBytes > 0 ? Opts.ClusterCacheBytes : Opts.RowCacheBytes,
               Opts.RowCacheBytes);
  if (Opts.ForceCluster)
    K = static_cast<int>(
        std::clamp<unsigned>(*Opts.ForceCluster, 1, codegen::launch::MaxClusterBlocks));
  else if (ReadAgain && P.ThreadsX == codegen::launch::MaxRowThreads &&
           !Opts.ForceRowCache.has_value() && BytesAt(Iters) > Opts.RowCacheBytes) {
    int Try = 2;
    while (Try < codegen::launch::MaxClusterBlocks && SplitCost(ItersAt(Try)) > SplitBytes)
      Try *= 2;
    if (SplitCost(ItersAt(Try)) <= SplitBytes)
      K = Try;
  }
  if (Opts.Clusters && K > 1 && P.RowsPerBlock == 1) {
    P.ClusterX = K;
    Iters = ItersAt(K);
    ClusterWhy = fmt::format(", split over a cluster of {} blocks (block results combined in "
                             "rank order through distributed shared memory{})",
                             K, Opts.ForceCluster ? ", forced" : "");
  }
  int64_t Bytes = BytesAt(Iters);
  bool Fits = Bytes > 0 && Bytes <= Opts.RowCacheBytes;
  P.CacheRow = Opts.ForceRowCache.value_or(ReadAgain && Fits) && Bytes > 0;
  if (P.CacheRow && StageOnly) {
    P.RowCacheInputs = Staged;
    P.LateEpilogue = Late;
    P.LatePeeledOnly = Late && PeeledOnly;
  }
  // A split whose values fit in fewer bytes than its kept inputs (or where
  // the inputs do not fit) keeps the values, as one block's RowCacheValues.
  if (P.ClusterX > 1 && !SplitValues.empty() && SplitValuesAt(Iters) <= Opts.RowCacheBytes &&
      (!P.CacheRow || SplitValuesAt(Iters) < Bytes)) {
    P.CacheRow = true;
    P.RowCacheInputs.clear();
    P.LateEpilogue = P.LatePeeledOnly = false;
    P.CachedValues = SplitValues;
    P.RowCacheValuesOnly = true;
    Bytes = SplitValuesAt(Iters);
  }
  // ScheduleOptions::ClusterPairs: a split row kept in registers takes
  // LayerNorm's mean and variance in one stage (Welford), each block's
  // pair combined across the cluster: one cluster barrier, not two.
  if (Opts.ClusterPairs && P.CacheRow && P.ClusterX > 1)
    ClusterWhy += pairedReductions(G, C, P, Opts, /*WelfordOnly=*/true);
  // RowCacheValues: a row read again whose stage inputs do not fit keeps
  // the values its loops compute from them instead, when those fit and are
  // fewer bytes (add + RMSNorm's x + residual: one f32 value for two f32
  // inputs), so that no later loop reads the inputs again. Re-read, f32
  // add + RMSNorm x 32064 ran 0.84x torch.compile: 528 resident rows' read-
  // back outputs overflow L2.
  auto ValuesAt = [&](int64_t Its) { return valuesBytes(G, P.CachedValues, Its, Vec); };
  if (Opts.RowCacheValues && ReadAgain && !P.CacheRow && !Opts.ForceRowCache &&
      !Opts.ForceCluster && P.ClusterX == 1 && P.RowsPerBlock == 1) {
    P.CachedValues = valuesCoveringInputs(G, C, P.Domain, Staged);
    if (!P.CachedValues.empty() && ValuesAt(Iters) <= Opts.RowCacheBytes) {
      P.CacheRow = true;
      P.RowCacheValuesOnly = true;
      Bytes = ValuesAt(Iters);
    } else {
      P.CachedValues.clear();
    }
  }
  auto CacheBytesAt = [&](int64_t Its) {
    return P.RowCacheValuesOnly ? ValuesAt(Its) : BytesAt(Its);
  };
  // RowCacheReadOnce: a row read once loads its chunks (and a peeled row's
  // head/tail element) into registers before reducing them, when they fit
  // a few registers. Reduced where loaded, each chunk of a peeled row sat
  // in its own guard and the next load waited for the previous chunk's
  // math (SASS: one memory latency a chunk a thread).
  if (Opts.RowCacheReadOnce && !ReadAgain && !P.CacheRow && !Opts.ForceRowCache &&
      !Opts.ForceCluster && P.ClusterX == 1 && Bytes > 0 &&
      Bytes <= std::min<int64_t>(ScheduleOptions::ReadOnceCacheBytes, Opts.RowCacheBytes)) {
    P.CacheRow = true;
    P.CacheReadOnce = true;
  }
  // RowCacheWideThreads: a kept row filling more than half the budget at
  // 512 threads takes one block of 1024 threads a row instead, at
  // half the registers a thread: the same one block an SM (over 64
  // registers allow no second 512-thread block) with twice the warps to
  // hide the latency between its stages (ncu: LayerNorm f32 x 32064 kept
  // at 512 threads, 93 registers, waits 24 of 28 cycles a warp).
  std::string WideCacheWhy;
  if (Opts.RowCacheWideThreads && P.CacheRow && !Opts.ForceRowCache && !Opts.ForceCluster &&
      P.ClusterX == 1 && P.RowsPerBlock == 1 &&
      P.ThreadsX == codegen::launch::MaxRowThreads && 2 * Bytes > Opts.RowCacheBytes &&
      Chunks >= 2 * int64_t(codegen::launch::WideRowThreads)) {
    P.ThreadsX = codegen::launch::WideRowThreads;
    P.MinBlocksPerSm = 1;
    WideCacheWhy = fmt::format(", not {}: its {} B a thread there are over half the budget "
                               "(RowCacheWideThreads)",
                               codegen::launch::MaxRowThreads, Bytes);
    Iters = (Chunks + P.ThreadsX - 1) / P.ThreadsX;
    Bytes = CacheBytesAt(Iters);
  }
  // Values a later loop would compute again ride along while they fit too.
  int64_t KeptBytes = 0;
  const size_t CoverCount = P.RowCacheValuesOnly ? P.CachedValues.size() : 0;
  if (P.CacheRow && !P.CacheReadOnce && !Opts.ForceRowCache) {
    for (NodeId N : valuesToKeep(G, C, P.Domain)) {
      if (llvm::is_contained(P.CachedValues, N))
        continue;
      int64_t B = Iters * Vec * keptValueBytes(G, N);
      if (Bytes + KeptBytes + B > Opts.RowCacheBytes)
        break;
      KeptBytes += B;
      P.CachedValues.push_back(N);
    }
  }
  // A row read again that fits no register budget: its stage inputs in
  // shared memory, where the device allows the whole row (opt-in).
  std::string SharedWhy;
  if (!P.CacheRow && ReadAgain && Opts.RowSharedBytes > 0 && !Opts.ForceRowCache &&
      P.ClusterX == 1 && P.RowsPerBlock == 1) {
    const std::vector<unsigned> &In = Staged;
    int64_t Elem = 0;
    for (unsigned I : In)
      Elem += dtypeBytes(G.node(C.Inputs[I]).Type);
    int64_t Shared = codegen::rowSharedBytes(Last.Size, P.ThreadsX, Vec, Elem);
    if (Elem > 0 && Shared <= Opts.RowSharedBytes) {
      P.RowSharedInputs = In;
      P.RowSharedElemBytes = Elem;
      std::vector<NodeId> Nodes;
      for (unsigned I : In)
        Nodes.push_back(C.Inputs[I]);
      SharedWhy = fmt::format("row of {} kept in shared memory between stages ({} B a block, "
                              "limit {}; {} B a thread would exceed RowCacheBytes)",
                              nodeList(Nodes), Shared, Opts.RowSharedBytes, Bytes);
    }
  }
  P.KeptLoadBytes = P.CacheRow && !P.RowCacheValuesOnly ? Bytes : 0;
  P.Why += fmt::format("; row of {} = {} chunks: {} threads a row ({} chunk{} each){}{}; ",
                       Last.Size, Chunks, P.ThreadsX, Iters, Iters == 1 ? "" : "s",
                       P.RowsPerBlock > 1 ? fmt::format(", {} rows a block", P.RowsPerBlock)
                                          : ClusterWhy,
                       WideCacheWhy);
  P.Why += !SharedWhy.empty() ? SharedWhy
           : P.CacheReadOnce
               ? fmt::format("row read once (one reduction stage, no whole-row output), its "
                             "{} B a thread loaded into registers before the reduction "
                             "(RowCacheReadOnce)",
                             Bytes)
           : P.RowCacheValuesOnly
               ? fmt::format("the values of {} kept in registers between loops ({} B a thread), "
                             "not the inputs its stages read ({} B a thread at {} threads > "
                             "RowCacheBytes): "
                             "no loop reads an input again (RowCacheValues){}",
                             nodeList(llvm::ArrayRef<NodeId>(P.CachedValues).take_front(
                                 CoverCount)),
                             Bytes, StageBytes, StageThreads,
                             KeptBytes == 0
                                 ? ""
                                 : fmt::format(", and the values of {} computed once ({} B)",
                                               nodeList(llvm::ArrayRef<NodeId>(P.CachedValues)
                                                            .drop_front(CoverCount)),
                                               KeptBytes))
           : P.CacheRow
               ? fmt::format("row kept in registers ({} B a thread{}){}", Bytes,
                             Opts.ForceRowCache ? ", forced"
                             : StageOnly
                                 ? stageOnlyWhy(C, Staged, BytesOf(Iters, false), P.LateEpilogue,
                                                P.LatePeeledOnly)
                                 : "",
                             P.CachedValues.empty()
                                 ? ""
                                 : fmt::format(", and the values of {} computed once ({} B)",
                                               nodeList(P.CachedValues), KeptBytes))
           : (Opts.ForceRowCache || ReadAgain) && Bytes == 0
               ? std::string("row re-read from memory per stage (no input has the row's "
                             "last dim: each is read through a view, which the register "
                             "cache does not hold)")
           : Opts.ForceRowCache || ReadAgain
               ? fmt::format("row re-read from memory per stage ({} B a thread{})", Bytes,
                             Opts.ForceRowCache ? ", forced" : " > RowCacheBytes")
               : "row read once (one reduction stage, no whole-row output): not kept";
  if (ReadAgain && !P.CacheRow && P.RowSharedInputs.empty() && P.ClusterX == 1) {
    if (Opts.RowRereadThreads && P.RowsPerBlock == 1 &&
        Chunks >= 2 * int64_t(Opts.RowRereadThreads) &&
        int(Opts.RowRereadThreads) != P.ThreadsX) {
      P.ThreadsX = static_cast<int>(Opts.RowRereadThreads);
      P.Why += fmt::format(", {} threads a row (forced)", P.ThreadsX);
    }
    P.Why += rereadSchedule(G, C, P, AfterReduction, Opts);
  }
  // PeeledRowOccupancy: a row of 512 threads kept at 128 B or more a thread
  // (its loads; values kept beside them did not predict registers: softmax
  // bf16 x 11008 keeps 48 + 96 B in 40 registers) runs its aligned variant
  // at 50-64 registers, two blocks an SM; the peeled variant's per-lane head
  // and tail took 68-73 and one block. Bounded to two blocks (64 registers), its few spills
  // cost less than half the warps (H200 A/B, session 22: 1.28-1.29x).
  // Not below 128 B, where ptxas then spent up to 64 registers on rows
  // that took 32-40 (softmax: 3-4 blocks down to 2, 0.79-0.86x), nor at
  // 256 threads and fewer (LayerNorm x 4999: 104-120 B spilled, 0.87-0.94x),
  // nor above the 192 B measured (LayerNorm bf16 x 50257 at 512 threads,
  // RowCacheWideThreads off: 208 B, 124 B spilled under the bound).
  // The forms for runs of at most SMs rows (RowForms.cpp) run a block an SM
  // and are not bounded.
  if (Opts.PeeledRowOccupancy && P.Peel && P.CacheRow && P.MinBlocksPerSm == 0 &&
      P.ClusterX == 1 &&
      P.ThreadsX * P.RowsPerBlock == codegen::launch::MaxRowThreads &&
      Bytes >= ScheduleOptions::PeeledOccupancyBytes &&
      Bytes <= ScheduleOptions::PeeledOccupancyMaxBytes) {
    P.PeeledMinBlocksPerSm = 2;
    P.Why += fmt::format("; peeled variant bounded to 2 blocks an SM, 64 registers a thread "
                         "(row kept at {} B a thread, PeeledRowOccupancy)",
                         Bytes);
  }
  rowExperiments(P, Opts);
  rowPhaseLoop(G, P, Opts);
  return P;
}

/// \p F with or without the output-led copy of its peeled variant.
static KernelPlan withOutputLed(KernelPlan F, bool On) {
  if (F.OutputLedVariant != On) {
    if (On)
      F.Vecs.push_back(F.Vecs.back());
    else
      F.Vecs.pop_back();
    F.OutputLedVariant = On;
  }
  return F;
}

// A row kernel whose input and output over the whole row can sit at
// different phases (x a slice at +2 B, the outputs fresh buffers) also
// compiles its peeled variant led by the output, which the launch runs
// then. Led by x, every store of the row went through the partial path
// (jf_store_split): add + RMSNorm bf16 16384 x 4096 330.7 us against 144.7
// with every tensor off; led by the output, 1.47x faster at the median of
// such points, but 0.82-0.99x where every tensor shares the phase (the
// input's loads then check per chunk), hence a second variant rather than
// another lead (BENCHMARKS.md, sessions 24-25). Also at 1024 threads a row
// (64 registers a thread), where of the sweep's kept rows only LayerNorm
// 16-bit x 50257's copy spills (4 B stored, 16 B loaded; session 26).
void outputLedVariants(const Graph &G, KernelPlan &P, const ScheduleOptions &Opts) {
  // RowStartChunks: no lead, hence no output-led twin (RowPhaseLoop and
  // AlignedRowCopy are built on the lead).
  auto RowStart = [&](const KernelPlan &F) {
    return Opts.RowStartChunks && F.Kind == KernelKind::RowReduce && F.Peel &&
           !F.RowPhaseLoop && !F.AlignedRowCopy;
  };
  codegen::PeelLeads L;
  if (Opts.OutputLedVariant && P.Kind == KernelKind::RowReduce && P.Peel && !RowStart(P))
    L = codegen::peelLeads(G, P);
  bool On = L.Input >= 0 && L.Output >= 0;
  P.RowStartChunks = RowStart(P);
  P = withOutputLed(std::move(P), On);
  // PeeledSamePhase: built on the lead like RowPhaseLoop and AlignedRowCopy,
  // so not with them. Nor where the peeled variant's registers are bounded
  // (1024 threads a row, PeeledRowOccupancy, several rows a block): its
  // plain loads can keep more values live (add + RMSNorm f32 x 32768 at
  // 1024 threads spilled 28 B, RMSNorm backward f32 x 768 two rows a block
  // 4 B); but in the cluster split's bounded variants (RowClustersPeeled-
  // Bound), measured with it (bench/ab/s46b.txt: 8 B at most). Nor in a
  // mixed kernel's (MixOrderColumns; unmeasured: RMSNorm backward f32 x
  // 32064's reached 128 registers and spilled 4 B). Nor above
  // PeeledOccupancyMaxBytes of kept loads a thread, where the peeled
  // variant's registers near the cap already: softmax f32 x 128256 split
  // over 4 blocks (250 B) went 105 -> 128 registers, x 100003 (196 B) 74 ->
  // 108, 0.94x and 0.96x (bench/ab/s47a.txt).
  auto SamePhase = [&](const KernelPlan &F) {
    return On && Opts.PeeledSamePhase && !F.RowPhaseLoop && !F.AlignedRowCopy &&
           F.MixColumns.empty() && F.MinBlocksPerSm == 0 &&
           (F.PeeledMinBlocksPerSm == 0 || F.ClusterX > 1) &&
           F.KeptLoadBytes <= ScheduleOptions::PeeledOccupancyMaxBytes;
  };
  P.SamePhasePeeled = SamePhase(P);
  if (P.SamePhasePeeled && codegen::samePhaseTensors(G, P).empty())
    P.SamePhasePeeled = false; // nothing but the lead: the variant is the same
  for (std::shared_ptr<const KernelPlan> *Form : {&P.FewRows, &P.WideRows, &P.AlignedCluster})
    if (*Form && ((*Form)->OutputLedVariant != On || (*Form)->RowStartChunks != RowStart(**Form) ||
                  (*Form)->SamePhasePeeled != (P.SamePhasePeeled && SamePhase(**Form)))) {
      KernelPlan F = withOutputLed(**Form, On);
      F.RowStartChunks = RowStart(F);
      F.SamePhasePeeled = P.SamePhasePeeled && SamePhase(F);
      *Form = std::make_shared<const KernelPlan>(std::move(F));
    }
  if (On)
    P.Why += fmt::format("; a second peeled variant led by the output %{} (run when its phase "
                         "differs from input %{}'s{})",
                         P.Outputs[L.Output], P.Inputs[L.Input],
                         P.SamePhasePeeled ? ", or any tensor of the row's layout differs from "
                                             "the input's: PeeledSamePhase"
                                           : "");
  if (P.RowStartChunks)
    P.Why += "; the peeled variant's chunks at each row's start, every tensor read and written "
             "at its own alignment (RowStartChunks)";
}

} // namespace jitfuse
