//===- driver/Compiler.h - compile(): graph in, Executable out --*- C++ -*-===//
#pragma once

#include "compiler/Planner.h"
#include "exec/Executable.h"
#include "ir/Graph.h"
#include "runtime/KernelCache.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace jitfuse {

struct CompileOptions {
  /// Fused (default) or one kernel per op; both go through the same codegen.
  bool Fuse = true;
  /// Fusion contract: compile fails, showing the plan, unless the graph
  /// becomes exactly this many kernels (fused kernels, whether or not they
  /// share a launch; Executable::numKernels).
  std::optional<unsigned> ExpectKernels;
  /// Fusion contract: ... exactly this many launches per run
  /// (Executable::numLaunches; fewer than kernels with HorizontalFusion).
  std::optional<unsigned> ExpectLaunches;
  /// Fusion contract: each group of nodes must share one kernel.
  std::vector<std::vector<NodeId>> SameKernel;
  /// CUDA device ordinal the executable runs on.
  int Device = 0;
  /// Target like "sm_90". Empty: the device's; "sm_90" when no driver.
  std::string Arch;
  /// Also produce PTX (a second NVRTC pass) for inspection.
  bool WantPtx = false;
  /// Sigmoid and silu computed in f32 use __expf and __fdividef (what
  /// torch.compile's Triton kernels do) instead of expf and IEEE division:
  /// error up to 2 + 1.17|x| ulp of exp plus 2 ulp, and 0 below x = -87.3.
  /// Off by default; docs/NUMERICS.md "Fast math" has the bound.
  bool FastMath = false;
  /// Each vector kernel is one variant that aligns its chunks to the
  /// pointers at run time (a scalar head and tail per row or range), so odd
  /// rows and offset pointers keep 16-byte accesses. false compiles the
  /// earlier ladder instead (one variant per width, the widest the pointers
  /// allow runs), for same-run comparisons.
  bool PeelAlignment = true;
  /// Experiments: force row kernels to keep their row in registers between
  /// stages (true) or re-read it (false) instead of the register-budget rule;
  /// the plan says "forced". Unset: the rule.
  std::optional<bool> RowCache;
  /// Split a long row read again whose register cache would exceed the
  /// budget over the fewest blocks (2-8) of a thread-block cluster that keep
  /// it (sm_90+; docs/ARCHITECTURE.md "Long rows on a cluster"). Opt-in:
  /// against today's re-read rows (H100, session 41) 1.12-1.27x on softmax
  /// and f32 add + RMSNorm over 50257-128256 columns, 0.60-0.85x on
  /// LayerNorm and 16-bit add + RMSNorm x 50257, whose split blocks take
  /// 70-78 registers (one block an SM); its [gpu] test passes. The norm
  /// backwards' rows of 32064-128256 (session 42): 1.24-1.37x where the
  /// aligned variant runs, 0.82-0.97x on 16-bit peeled rows.
  bool RowClusters = false;
  /// A long row read again per stage with a peeled variant (odd rows,
  /// offset pointers) also compiles the aligned variant of its cluster
  /// split (RowClusters' plan), which the launch runs when the pointers
  /// allow the aligned variant and neither few-rows form runs; peeled
  /// rows keep the re-read variant, except rows of 4-byte elements
  /// (RowClustersPeeled) (KernelPlan::AlignedCluster; sm_90+).
  /// Not where the split's stages x blocks exceed 8 (LayerNorm's mean then
  /// variance over 8 blocks: compiler/RowForms.cpp). Why: the norm
  /// backwards' rows of 32064-128256 (session 42) ran RowClusters' aligned
  /// variant 1.24-1.37x faster and its 16-bit peeled ones 0.82-0.97x. On
  /// since the H100 A/B of session 43 (BENCHMARKS.md, bench/ab/s43a.txt):
  /// 1.03-1.38x on the 22 aligned long-row points it applies to, the
  /// offset controls 1.00x. false: no split form, for comparisons.
  bool RowClustersAligned = true;
  /// Experiment: RowClustersAligned's split also runs in place of the wide
  /// form's aligned variant (runs of more rows than the few-rows form takes
  /// and at most SMs: 67-132 on an H100), where one 1024-thread block a
  /// row re-reads it. Off until measured.
  bool RowClustersAlignedOverWide = false;
  /// RowClustersAligned's split for rows of 4-byte elements in every
  /// variant: offset pointers and odd rows run the split's peeled variants
  /// in place of the re-read row's (KernelPlan::AlignedClusterPeeled).
  /// Why: bench/ab/s44a.txt (H100, session 44): the split of f32 peeled
  /// rows, at a block count that keeps the row, 1.12-1.36x faster (softmax
  /// f32 x 50257, LayerNorm f32 x 50257 at 4 blocks, add + RMSNorm and the
  /// norm backwards f32 x 50257 and +4 B x 32064); 16-bit peeled rows'
  /// splits lost (0.77-0.97x) and keep the re-read row. false: for
  /// comparisons.
  bool RowClustersPeeled = true;
  /// RowClustersPeeled for rows of 16-bit elements too, where
  /// RowClustersPeeledBound bounds the split's peeled variants and the row
  /// moves in 16-byte chunks. Why (bench/ab/s46a.txt, s46b.txt, H100,
  /// session 46): unbounded, their peeled variants ran 70-92 registers (one
  /// block an SM) and lost 0.76-0.93x (softmax, 51-60 registers, won
  /// 1.29-1.31x); bounded 1.12-1.36x where the kept loads were <= 192 B a
  /// thread (add + RMSNorm bf16 x 128256 +2 B and f16 x 50257, the norm
  /// backwards bf16 x 50257, softmax bf16 x 100003-128256 +2 B), 0.94x at
  /// 240 B (add + RMSNorm bf16 x 65537: 5 chunks a thread, 88-120 B
  /// spilled). false: for comparisons.
  bool RowClustersPeeledNarrow = true;
  /// The cluster split's peeled variants take `__launch_bounds__(threads,
  /// 2)` (64 registers at 512 threads, the aligned split's occupancy) where
  /// its kept loads are at most 192 B a thread (PeeledRowOccupancy's
  /// window). Why: add + RMSNorm bf16 x 128256 +2 B at 8 blocks ran 76
  /// registers unbounded, 64 bounded (8-16 B spilled), 1.17x faster; f32
  /// splits in the window unchanged (softmax x 50257, RMSNorm backward +4 B
  /// x 32064: 1.00x). Beyond it the bound is not taken (f32 LayerNorm
  /// backward x 70000 at 240 B won 1.16x bounded with 144-176 B spilled,
  /// 16-bit add + RMSNorm x 65537 at 240 B lost 0.94x; softmax f32 x 128256
  /// +4 B at 256 B would spill 332-388 B). false: for comparisons.
  bool RowClustersPeeledBound = true;
  /// RowClustersAligned's split takes the block count whose blocks fit two
  /// an SM (128 B of kept row a thread) where the stage bound allows, else
  /// the fewest blocks that keep the row (256 B a thread). Why: bench/ab/
  /// s44a.txt: softmax 16-bit x 128256 at 4 blocks (64 registers) 1.17-
  /// 1.19x faster than at 2 (127). false: for comparisons.
  bool RowClustersTwoBlocks = true;
  /// A split that keeps every input of the row's length and so exceeds
  /// the stage bound (stages x blocks <= 8) is retried keeping only its
  /// stages' inputs, the others loaded by the epilogue (RowCacheStageInputs'
  /// rule for one block): LayerNorm's x without its weight and bias, f32 x
  /// 50257 over 4 blocks, not 8. Why (bench/ab/s48b.txt, H100, session
  /// 50): LayerNorm forward's long rows, re-read before (from HBM where the
  /// resident rows overflow L2), 1.20-1.45x faster (f32 1335 x 50257 346 ->
  /// 239 us, 16-bit x 128256 1.25-1.32x, unseen f32 x 65537 1.41x, bf16 x
  /// 100003 +2 B 1.21x); add + RMSNorm f32 x 128256 1.03-1.09x; one point
  /// slower (LayerNorm f32 523 x 128256 +4 B, 0.95x), the rest 0.99-1.00x.
  /// false: for comparisons.
  bool RowClustersStageInputs = true;
  /// The split for aligned rows (RowClustersAligned) first tries keeping
  /// the values its loops compute from the row's inputs, where they cover
  /// the inputs in fewer bytes (add + RMSNorm's x + residual: one f32 value
  /// for two f32 inputs), over the blocks that keep 128 B of them a thread
  /// (two blocks an SM). Why (bench/ab/s48b.txt, H100, session 50): add +
  /// RMSNorm f32, split over 8 blocks keeping x and the residual before
  /// (256 B a thread, 86-96 registers: one block an SM), 1.00-1.24x on 8
  /// points (x 128256 464.9 -> 381.2 us, unseen x 77777 +4 B and x 100003
  /// +4 B 1.17-1.20x), none slower. false: for comparisons.
  bool RowClustersValues = true;
  /// Experiment (off; rejected): a row split over a cluster accumulates
  /// LayerNorm's mean and variance (Welford) and softmax's max and sum
  /// (online) in one stage, each block's pair combined across the cluster
  /// in rank order, so one cluster barrier serves both reductions. Its aim:
  /// LayerNorm forward's split, excluded by the stage bound, as one stage.
  /// Measured (bench/ab/s45a.txt, H100, session 46): 0.43-0.57x on every
  /// point whose plan it changes (8-block splits at 74-82 registers, one
  /// block an SM: LayerNorm bf16 x 128256 289.2 -> 634.3 us), the rest
  /// 1.00x.
  bool RowClusterPairs = false;
  /// Experiments: split every static row over this many blocks of a cluster
  /// (1, 2, 4 or 8; sm_90+), whatever RowClusters says. Unset: the rule.
  std::optional<unsigned> RowCluster;
  /// A row read again whose register cache would exceed the budget keeps
  /// its row in dynamic shared memory between stages instead of reading it
  /// from global memory again (up to the device's opt-in limit per block:
  /// 227 KB on sm_90; docs/ARCHITECTURE.md "Long rows in shared memory").
  /// Opt-in: measured on the H200 (BENCHMARKS.md), 1.2-1.4x faster on f32
  /// rows of 11008-14336 and up to 1.25x slower on bf16 rows of 50257.
  bool RowSharedMemory = false;
  /// A row read again from memory in each stage (too long for registers and
  /// not kept in shared memory) loads its row-shaped inputs with L2 eviction
  /// hints: evict_last in the stages whose row a later loop reads again,
  /// evict_first in the last loop (sm_80+; what Triton's evict_last does for
  /// torch.compile's looped reductions). Experiment until measured.
  bool RowL2Hints = false;
  /// Experiment (sm_80+): the wide loads of every input an element-wise
  /// kernel or a row kernel that keeps its row in registers reads once
  /// (not those broadcast over the domain, as a weight) carry the L2 hint
  /// evict_first, so streamed data replaces itself rather than what L2
  /// holds (a previous kernel's output, dirty lines). false: plain loads.
  /// Measured on the H200 (BENCHMARKS.md, session 20): kernels that write
  /// rows lose (softmax 16-bit x 11008 0.75x), read-only rows gain.
  bool StreamLoads = false;
  /// The measured part of StreamLoads (sm_80+): a row kernel whose outputs
  /// are all per row (sum/amax, a loss's log-sum-exp) and that reads its
  /// row once streams its row-shaped inputs (evict_first), in the form
  /// launched for runs of more than SMs rows; runs of at most SMs rows
  /// launch a copy with plain loads (or the kernel's own wide form).
  /// Measured on the H200 (BENCHMARKS.md, session 21, 89 sum/amax points):
  /// >= 64 MB median 1.04x (0.96-1.17x; f32 16384 x 2048 1.16x), runs of
  /// <= 132 rows median 1.00x. false: plain loads, for comparisons.
  bool StreamReadOnlyRows = true;
  /// Such a re-read row kernel stores a whole-row output that needs no
  /// reduction and that the kernel uses again (add + RMSNorm's sum) in its
  /// first loop, and the later loops read it back instead of the inputs it
  /// is computed from: they see its stored value, rounded to its dtype (as
  /// the unfused execution does; docs/NUMERICS.md). false: computed again
  /// from the inputs, for same-run comparisons.
  bool RowReadBack = true;
  /// Such a re-read row kernel accumulates softmax's row max and its sum of
  /// exp(x - max) in one loop, rescaling a thread's sum when its running max
  /// grows (and pairs of partial results in the block reduction), so the
  /// row is read twice instead of three times. The sum's rounding differs
  /// from the two-loop order (docs/NUMERICS.md). Measured on the H200: up
  /// to 1.2x faster on rows that outgrow L2, never slower (BENCHMARKS.md).
  /// false: max and sum in two loops, for same-run comparisons.
  bool RowOnlineSoftmax = true;
  /// Such a re-read row kernel computes LayerNorm's mean and variance in one
  /// loop with Welford's update (pairs combined in the block reduction), so
  /// the row is read twice instead of three times; the rounding differs
  /// from mean-then-variance (docs/NUMERICS.md). Unset: Welford where the
  /// row's inputs exceed their share of the device's L2 (L2 / (SMs x 4);
  /// 119 KB on the H200), since its division per element lost up to 15%
  /// where the second read still hit L2 and won up to 1.26x beyond it.
  /// true / false: always / never, for comparisons.
  std::optional<bool> RowWelford;
  /// A row kernel of long rows (at least 8 chunks a thread at 512 threads,
  /// not kept in registers) also gets a form that splits each row over a
  /// cluster of 8 blocks (sm_90), launched instead when every split block
  /// is resident at once (rows x 8 <= SMs x 4: 66 rows on the H200), where
  /// one block a row leaves the GPU mostly idle. false: one form, for
  /// same-run comparisons.
  bool RowFewRowsClusters = true;
  /// Such a long row re-read per stage also gets a form of 1024 threads a
  /// row, launched when the cluster form is not and the rows are at most
  /// one such block an SM (132 on the H200), where one 512-thread block a
  /// row leaves each SM three quarters idle (codegen::launch::useWideRows).
  /// Forced for every row count, 1024 threads lost on thousands of rows;
  /// the rule's A/B on the H200 (2026-12-02, 94 points of rows >= 14336):
  /// 1.45-1.48x at 128-132 rows (softmax bf16 132 x 128256), every other
  /// point 0.98-1.00x. false: no such form, for comparisons.
  bool RowWideRows = true;
  /// An element-wise row whose last axis is a concat of equal pieces of
  /// fewer chunks than a warp has threads (RoPE's halves) orders its chunks
  /// piece by piece over groups of rows, so no warp runs two pieces'
  /// branches (codegen::concatRowGroup; bf16 RoPE 1.1-1.35x on the H200).
  /// false: natural order, for same-run comparisons.
  bool ConcatRowGroups = true;
  /// Experiment: a peeled row kernel's chunk loops get a second copy with
  /// plain wide loads and stores, which a warp runs when every tensor it
  /// reads or writes in chunks sits at the lead tensor's alignment in its
  /// rows (all at the same offset, the row a multiple of 16 bytes), instead
  /// of shifting or splitting each chunk (codegen/RowKernel.cpp). Doubles
  /// the peeled variant's loop code. Default off until measured on the H200.
  bool AlignedRowCopy = false;
  /// The block-wide reductions of a row kernel's stage share two barriers
  /// (each warp's partials, then warp 0's combine) instead of three each
  /// (jf_block_partial/jf_block_combine): LLaMA's two RMSNorms of one
  /// decode token, sum and max of a row. Same results to the bit. On since
  /// the H200 A/B of 2026-12-01 (BENCHMARKS.md): W9 faster in 5 of 5
  /// pairs, the sweep's row patterns unchanged (median 1.00x); false: three
  /// barriers a reduction, for comparisons.
  bool JointReduce = true;
  /// A row read again whose inputs do not all fit the register budget
  /// (256 B a thread) keeps in registers only the inputs a reduction stage
  /// reads, when those fit; the epilogue loads the others (a norm's weight
  /// and bias) once. Before, LayerNorm bf16 x 32064 (128 B of x a thread,
  /// 384 B with weight and bias) re-read its row per stage: ncu on the H200
  /// showed 54% L2 hits. Rows that fit whole keep every input (their early
  /// weight loads hide latency in runs of few rows), and such a row keeps
  /// the few-rows forms of a re-read row. H200 A/B (2026-12-02, 175
  /// LayerNorm and add+RMSNorm points): up to 1.52x (LayerNorm bf16 4185 x
  /// 32064), median 1.00x, one loss (add+RMSNorm bf16 4185 x 32064 at +2 B,
  /// 0.75x). false: the old rule, for comparisons.
  bool RowCacheStageInputs = true;
  /// Experiment: a row that fits the register budget whole keeps only the
  /// inputs its reduction stages read in the form launched for runs of
  /// more than SMs rows too, and its epilogue loads the others (a norm's
  /// weight and bias) where it uses them: fewer registers, more blocks an
  /// SM (LayerNorm f32 x 4096 keeps 48 floats a thread, 64 registers, 4
  /// blocks of 256 an SM, latency-bound on the H200). Runs of at most SMs
  /// rows launch the kernel the default rule makes (RowCacheStageInputs
  /// lost up to 0.84x there when applied to every row).
  bool RowCacheLateEpilogue = false;
  /// Experiment: RowCacheLateEpilogue for the peeled variants only (odd
  /// rows, offset pointers); the aligned variant keeps every input in
  /// registers as the default rule does. Why (BENCHMARKS.md, session 31):
  /// with RowCacheLateEpilogue, odd-row LayerNorms (peeled, 70-94
  /// registers) ran 1.06-1.11x faster, while aligned rows of 4096 ran
  /// 0.97-0.98x. Off until measured over the sweep's odd rows and offsets
  /// (it keeps the short rows' losses, 0.885x at bf16 x 1021 +2 B).
  bool RowCacheLatePeeled = false;
  /// A static row kept in registers that fills more than half the budget
  /// at 512 threads a row runs one block of 1024 threads a row (half the
  /// registers a thread; `__launch_bounds__(1024, 1)`). Kept at 512
  /// threads, such rows took 84-98 registers, one block an SM, and ncu
  /// showed them latency-bound. H200 A/B (2026-12-02, 116 points of rows >=
  /// 11008): LayerNorm f32 2092 x 32064 212.6 -> 160.4 us (1.33x; it was
  /// 0.78x torch.compile), add+RMSNorm bf16 4185 x 32064 +2 B 1.23x,
  /// softmax f32 x 32064 1.07-1.11x, median 1.00x, 128-132-row points down
  /// to 0.96x. false: 512 threads, for comparisons.
  bool RowCacheWideThreads = true;
  /// The peeled variant of a row kernel of 512 threads that keeps its row
  /// at 128-192 B a thread in registers is compiled with `__launch_bounds__(512,
  /// 2)`: at most 64 registers, two blocks an SM, as its aligned variant
  /// runs. Unbounded, the per-lane head and tail took 68-73 registers and
  /// one block an SM (add + RMSNorm bf16 9362 x 14336 at +2 B: 387.6 us,
  /// aligned 260.7). H200 A/B (BENCHMARKS.md, session 22): those points
  /// 1.28-1.29x with 24-56 B spilled, the rule's other points 0.99-1.01x;
  /// bounding every kept row lost up to 0.79x (ptxas then used up to 64
  /// registers where it took 32-40). false: unbounded, for comparisons.
  bool PeeledRowOccupancy = true;
  /// A static row read once (its reduction's only stage, no whole-row
  /// output) whose loads fit 64 B a thread loads them into registers before
  /// reducing, as a kept row's first loop does. Reduced where they were
  /// loaded, a peeled row's chunks each sat inside their own guard and the
  /// compiler issued the next load only after the previous chunk's math:
  /// one memory latency a chunk, and one more for the head/tail element
  /// (sum and max of |x| over f32 rows of 4095: 84.5 us against 71.6 us for
  /// rows of 4096, 0.85x torch.compile). false: the old rule, for
  /// comparisons.
  bool RowCacheReadOnce = true;
  /// An element-wise row whose chunks stay at the row start and go piece by
  /// piece over a concat's pieces (RoPE's halves) stores a misaligned 16-bit
  /// output chunk as one aligned 16-byte block a lane, built with the
  /// previous lane's chunk by warp shuffle (jf_store_group), instead of up
  /// to five partial stores a lane (ncu: RoPE bf16 4185 x 32064 at +2 B
  /// L2-bound at 89%, 2.3x the aligned time). Measured on the H200
  /// (BENCHMARKS.md, session 17): bf16 RoPE at +2 B 1.14-1.33x on every
  /// point of 64 MB or more, aligned points unchanged. false: the partial
  /// stores, for comparisons. Only with PieceWrapChunks off (its chunks are
  /// at the lead's phase, not the row start).
  bool GroupStores = true;
  /// An element-wise row that is a concat of equal pieces (RoPE's halves)
  /// takes, in its peeled variant, chunks aligned to the lead tensor inside
  /// each piece: a thread takes one whole chunk of every piece of its row
  /// (the pieces share their loads: RoPE's halves read the same q, cos and
  /// sin chunks), plainly wide when every tensor sits at the lead's phase;
  /// the chunk holding a piece's first and last elements reads two aligned
  /// blocks, and a row's pieces are stored together. With chunks at the row
  /// start (false, GroupStores) every tensor of a row at a 2-byte offset
  /// went through a byte window (jf_window16): RoPE bf16 at +2 B ran 0.5 of
  /// its aligned time, instruction-bound (ncu); with the option 0.88-0.92,
  /// f32 at +4 B 0.77 -> 0.93-0.96 (BENCHMARKS.md, session 23).
  bool PieceWrapChunks = true;
  /// A row kernel's peeled variant that keeps its row in registers and
  /// reads one 16-bit row vector (add + RMSNorm's weight) loads that
  /// vector's chunks once a block instead of once a row: the grid is the
  /// blocks that fit the GPU at once (a multiple of the vector width, so
  /// every row of a block sits at one phase against the row vector), and
  /// each block loops over its rows. An experiment, off: the instructions
  /// it saves were not the limit. Measured on the H200 (BENCHMARKS.md,
  /// session 24) against a block a row: with every tensor at +2 B, add +
  /// RMSNorm bf16 x 11008 1.18x, x 6144 1.10x; with x alone at +2 B,
  /// 0.93-0.96x on rows of 4095-11008. LayerNorm bf16 x 4096 at +2 B ran
  /// half the SM instructions (ncu: SM 80% -> 40% busy) in the same time.
  bool RowPhaseLoop = false;
  /// Experiment (off): a row kernel of a block a row declares its row to
  /// exist (the grid is the rows), so the stages' `if (rowOk)` go and the
  /// compiler shares their loads and conversions. Static only (session 34,
  /// BENCHMARKS.md): 3-20% fewer instructions, but more registers in 137
  /// of the sweep's 1001 row-kernel variants. Measured on an H100 (session
  /// 35) over 194 peeled row points: 0.85-1.05x, medians 0.99-1.00x.
  bool RowOkKnown = false;
  /// A node read through a reshape of the kernel's domain that keeps the
  /// domain's leading dims ([T, 32768] seen as [T, 8, 4096], W18's mean
  /// pooling through its permute) takes those coordinates as they are and
  /// unflattens only the trailing dims, from their own linear index (in a
  /// column kernel a per-thread column: no division per row), instead of
  /// dividing the whole linear index. Why (session 30): W18's column loop
  /// spent ~50 instructions of 64-bit index math between its loads (219
  /// SASS instructions a 4-row iteration, 99 with this), which NVVM then
  /// issued one latency apart, so W18 lost 14-16% with the fewer splits
  /// that speed every contiguous column sum. Measured on the H200
  /// (BENCHMARKS.md, session 31): W18 1.015x, W10-W22 unchanged at the
  /// same splits; with launch::ColumnSplitWork at 2^17, W18 1.015x instead
  /// of 0.86x. false: the whole linear index divided, for comparisons.
  bool PrefixCoords = true;
  /// A row kernel's peeled variant is compiled twice: its chunks aligned to
  /// its first input over the whole row, and to its first such output; the
  /// launch runs the second when the two tensors' phases differ. A tensor
  /// at another phase than the chunks is loaded as two aligned blocks and
  /// a byte window, but stored in two to five partial stores a chunk
  /// (jf_store_split): with x alone at +2 B (a slice) and the residual, the
  /// weight and both outputs aligned, add + RMSNorm bf16 x 4096 led by x
  /// ran 2.3x its time with every tensor at +2 B (BENCHMARKS.md, session
  /// 24). Off: one peeled variant, led by the input.
  bool OutputLedVariant = true;
  /// With OutputLedVariant, the input-led peeled variant takes every tensor
  /// of the row's layout (contiguous, the lead's element size; a row vector
  /// too where the row is whole chunks) to sit at the lead's phase: their
  /// whole chunks are plain 16-byte loads and stores, not two blocks and a
  /// byte window or a checked store; the launch runs it only when their
  /// pointers' phases are the lead's, else the output-led variant
  /// (KernelPlan::SamePhasePeeled). Not in horizontal launches, nor where
  /// the variant keeps more than 192 B of loads a thread (softmax f32 x
  /// 128256's split, 250 B: 105 -> 128 registers, 0.94x; bench/ab/
  /// s47a.txt). Why: add +
  /// RMSNorm bf16 x 128256 with every tensor at +2 B ran its split's peeled
  /// variant at 1296 SASS instructions against the aligned one's 728 (808
  /// with this); measured (bench/ab/s46b.txt, H100): 1.00-1.07x alone
  /// (LayerNorm bf16 x 128256 +2 B 1.07x), and with the narrow bounded
  /// split 1.03-1.06x more than that split alone. false: for comparisons.
  bool PeeledSamePhase = true;
  /// An element-wise row kernel's peeled variant whose 16-bit input is
  /// broadcast over the rows (a bias under odd-length or offset rows, at
  /// another phase than the chunks) emits its body twice: for whole
  /// chunks, where that input is read as two aligned 16-byte blocks
  /// (jf_load_whole), and for a row's partial first and last chunk, per
  /// lane. false: every chunk through jf_load_chunk, whose misaligned
  /// chunks are read one 2-byte element at a time. An experiment: measured
  /// on the H200 (BENCHMARKS.md, session 18) median 0.99x over bias + GELU,
  /// f16 odd rows 1.06-1.11x but bf16 at +2 B 0.87-0.97x.
  bool WholeChunkPaths = false;
  /// An element-wise kernel over rows whose length the vector width does
  /// not divide, whose other inputs are broadcast over the rows
  /// (bias + GELU's bias), walks its domain as one flat range: x and the
  /// output in whole 16-byte chunks, no per-row head and tail; the bias
  /// read at the flat index mod the row length (one chunk load unless the
  /// chunk wraps to the next row). What Triton does; odd rows of bias +
  /// GELU ran 0.85-0.87 of the aligned row's bandwidth in 16-bit, f32 x
  /// 1021 0.945x torch.compile (H200, session 21). Measured (same call's
  /// A/B, BENCHMARKS.md session 21): odd rows >= 64 MB bf16 1.04-1.16x, f16
  /// 1.04-1.11x, f32 1.01-1.04x; one row of 4999 bf16 4.5 -> 5.2 us (the
  /// aligned flat variant's scalar tail loop, which FlatTailThreads
  /// removes). On since the [gpu] tier ran with it (session 22). false: row
  /// by row with a per-row head and tail, for comparisons.
  bool FlatRowBroadcast = true;
  /// The aligned variant of a flat element-wise kernel gives the elements
  /// of the tensor's last partial chunk one thread each instead of looping
  /// over them in one thread, whose serial loads were the critical path of
  /// small odd-sized runs (FlatRowBroadcast on one row of 4999 bf16: 4.5 ->
  /// 5.2 us, H200 session 21). Measured (session 22, 102 odd-length and
  /// offset points): median 1.00x, that row 5.1 -> 4.4 us. false: the tail
  /// loop, for comparisons.
  bool FlatTailThreads = true;
  /// A row read again whose stage inputs do not fit the register budget
  /// keeps the per-element values its first loop computes from them, when
  /// those fit and take fewer bytes (add + RMSNorm's x + residual, one f32
  /// value for two f32 inputs): no later loop reads the inputs again.
  /// Re-read, f32 add + RMSNorm x 32064 ran 0.84x torch.compile on the
  /// H200 (its read-back output overflowed L2). false: the row is re-read,
  /// for comparisons.
  bool RowCacheValues = true;
  /// A row reduction's per-row inputs ([outer..., 1], read once a row as
  /// scalars: a norm backward's saved f32 mean and rstd) set its vector
  /// width as every other input does (true, for comparisons). By default
  /// only the inputs read in chunks do, as in mixed kernels: with the f32
  /// statistics, a bf16 row of the norm backwards' row kernel moved 8
  /// bytes a load, and 16-byte chunks of the row ran 0.99-1.38x as fast
  /// at many rows, median 1.05x (LayerNorm backward bf16 12192 x 11008
  /// 572.5 -> 415.1 us at +2 B; H200, session 40). A static row they would leave too few chunks for a
  /// few-rows form keeps their width (LayerNorm backward bf16 1-8 x 32064
  /// ran 0.78-0.83x without its cluster form).
  bool RowStatsSetWidth = false;
  /// Experiment: threads a row (a power of two, 32-1024) for static rows
  /// re-read per stage, instead of the rule's (at most 512); each thread
  /// keeps at least 2 chunks. For few long rows one block is one SM's
  /// bandwidth, so more threads keep more loads in flight. Unset: the rule.
  std::optional<unsigned> RowRereadThreads;
  /// Opt-in until its kernels have run on a GPU: a row whose length is
  /// known only at run time takes the threads the launch picks from the
  /// run's row length and rows (codegen::launch::dynamicRowThreads: about 4
  /// chunks a thread, 64-512, and 256 or 512 when the rows are at most the
  /// SMs); the kernel loops and reduces over blockDim.x. Off: a fixed 256
  /// threads a row (codegen::launch::DynamicRowThreads). The rule comes from
  /// the H100 (session 51): the fixed 256 ran the sweep's dynamic rows at a
  /// median 0.76x of the same rows static, 0.09x at one row of 128256; rows
  /// of 768-2048 at many rows ran 1.25-1.47x faster at a fixed 64 threads,
  /// few long rows up to 1.79x at 512 (BENCHMARKS.md). The session had no
  /// device time left to run the rule's own kernels.
  bool RowThreadsAtLaunch = false;
  /// Experiment: threads a row (a power of two, 32-1024) for rows whose
  /// length is known only at run time, fixed when compiled, instead of
  /// RowThreadsAtLaunch's choice. Its aim was W17's rows of HW = 3136 bf16
  /// (392 chunks, 1.5 a thread at a fixed 256) at 64% of the copy (H100,
  /// session 50); its A/B over 64-512 threads (session 51) gave the rule
  /// above. Under 256 threads a long row's summation depth is past the
  /// reference's model (reference/SummationDepth.cpp). Unset: the rule.
  std::optional<unsigned> RowDynamicThreads;
  /// Experiment: chunks a thread (1-16) from which a static row of more
  /// than 32 chunks gets its threads (a power of two, 32-512), instead of
  /// the rule's (2; 4 for a row one warp covers at 4 and for a mean and its
  /// variance, as LayerNorm's; compiler/ScheduleRows.cpp). More chunks a
  /// thread put more of a thread's bytes in flight and leave fewer warps to
  /// combine in the block reduction; fewer threads a row hold more
  /// registers each. Unset: the rule.
  std::optional<unsigned> RowChunksPerThread;
  /// Experiments: such re-read row kernels request unused dynamic shared
  /// memory so that at most this many blocks share an SM, and fewer rows
  /// compete for L2 between a row's reads. Unset or 0: no limit.
  std::optional<unsigned> RowBlocksPerSm;
  /// Horizontal fusion: independent small kernels (no path between them;
  /// element-wise or row kernels moving at most HorizontalMaxPartBytes with
  /// the dynamic dims at 1) share one launch, one block range per kernel
  /// (compiler/Horizontal.h). Only with Fuse. false: one launch per kernel,
  /// for same-run comparisons.
  bool HorizontalFusion = true;
  /// A full reduction also takes an element-wise prologue whose values
  /// leave the kernel (a graph output, or read by another kernel), storing
  /// them as it reduces: gradients unscaled and checked for inf/NaN in one
  /// pass instead of two kernels and an f32 flag tensor written and read
  /// (16 N bytes against 8 N; W19 270.9 -> 144.6 us on the H200,
  /// docs/ARCHITECTURE.md, "Fusion gaps of model patterns"). false: the
  /// prologue is a kernel of its own, for same-run comparisons.
  bool FullReducePrologueOutputs = true;
  /// A column reduction also takes element-wise work on its [1, C] result
  /// (a per-channel quantization's `amax / 127`, a column logsumexp's
  /// `m + log(s)`), done by each column tile's last block after the splits
  /// are combined, instead of a kernel of its own (one launch fewer; W20
  /// 125.1 -> 123.5 us). false: for same-run comparisons.
  bool ColumnReduceEpilogue = true;
  /// A full reduction also takes element-wise work on its one-element
  /// result (a mean loss's `sum(loss * valid) / sum(valid)`, a norm's
  /// `sqrt(ssq)` stored), done by the last block after the partials are
  /// combined, instead of a one-element kernel of its own (one launch fewer;
  /// docs/ARCHITECTURE.md, "Fusion gaps of model patterns"). false: for
  /// same-run comparisons.
  bool FullReduceEpilogue = true;
  /// An intermediate that a kernel stores only for other kernels (a bias
  /// gradient's f32 cast of dz, a LayerNorm backward's `dy * xhat` for the
  /// weight gradient) is computed by each reader from what the kernel loads
  /// or stores anyway, when that moves fewer bytes (compiler/Recompute.h).
  /// ReLU backward + bias gradient: 57344 -> 32768 bytes a row of 4096.
  /// false: for same-run comparisons.
  bool RecomputeStoredValues = true;
  /// Column reductions over one [R, C] domain that share a load and do not
  /// read each other are one kernel with several reductions
  /// (compiler/ColumnSiblings.h): LayerNorm backward's dw and db read dy
  /// once (with RecomputeStoredValues, 3 -> 2 kernels; W21 386.2 -> 177.9 us
  /// on the H200 with all four of these options). false: for same-run
  /// comparisons.
  bool SiblingColumnReductions = true;
  /// A column reduction's kernel also stores graph outputs of its [R, C]
  /// domain computed in its prologue, as FullReducePrologueOutputs does for
  /// a full reduction: ReLU backward + bias gradient (dz stored, its f32
  /// column sum) is one kernel, 6 bytes an element instead of 14 (W22
  /// 895.3 -> 404.0 us on the H200). false: for same-run comparisons.
  bool ColumnReducePrologueOutputs = true;
  /// A row kernel computes the column reductions of its own loads over the
  /// same [R, C] rows (compiler/MixColumns.h), each block summing a group
  /// of consecutive rows in shared memory and the launch's last blocks
  /// adding the groups' partials in order: LayerNorm backward's dx, dw and
  /// db read x and dy once (W21: 2 kernels -> 1). Runs of fewer than
  /// MixMinRows rows take the plan without it. Measured on an H100
  /// (sessions 35-36, BENCHMARKS.md): W21 1.45x the two kernels (1.20x
  /// torch.compile), the norm-backward sweep up to 1.94x. false: for
  /// same-run comparisons.
  bool MixOrderColumns = true;
  /// Experiment: the most groups of rows a row kernel with column partials
  /// cuts its rows into (0: the rule's, codegen::launch::mixGroupsFor the
  /// block's threads, 256-512). For timing only: the error bound
  /// (docs/NUMERICS.md) assumes the rule's counts.
  int64_t MixMaxGroups = 0;
  /// Experiment: the fewest columns a row kernel takes column reductions
  /// of (0: codegen::launch::MixMinColumns, 256; else 256 or more: a larger
  /// bound keeps shorter rows on the row and column kernels). For timing
  /// only, as MixMaxGroups.
  int64_t MixMinColumns = 0;
  /// Experiment: the fewest rows a group of the mixed kernel (0: the
  /// rule's, the block's rows). For timing only, as MixMaxGroups.
  int64_t MixMinGroupRows = 0;
  /// Experiment: rows a block of the mixed kernel works on at once (0: the
  /// rule's, codegen::launch::MixBlockRowsRule, 4). Up to this many rows of
  /// the group side by side (threadIdx.y), each with its own accumulators,
  /// capped at launch::MixBlockThreads threads a block and by the
  /// accumulators' shared memory; the group's partial adds the rows'
  /// accumulators in order. Several rows a block turn MixTwoRows off.
  int64_t MixBlockRows = 0;
  /// Experiment (off): a mixed kernel's row takes a power of two of threads
  /// at or above its chunks (some threads idle) instead of at or below
  /// them (some threads two chunks). Rows of 16-bit x 768 and x 1536 (96
  /// and 192 chunks) take 128 and 256 threads, one chunk each, not 64 and
  /// 128 with two: their peeled variants needed 80-88 registers, and at a
  /// 2-byte offset LayerNorm backward bf16 16384 x 768 ran 0.88x the
  /// default plan's kernels (H100, session 38). For timing only.
  bool MixThreadsRoundUp = false;
  /// Experiment (off): a mixed kernel's peeled variants, on rows whose
  /// length is a multiple of the vector width (every row at the lead's
  /// phase), keep each column's accumulator at the slot of the column
  /// shifted by that phase, so a whole chunk's columns are the aligned
  /// variant's slots: constant offsets from one index (16-byte groups
  /// where the aligned variant has them) instead of a slot computed per
  /// column from a run-time phase. LayerNorm backward bf16 16384 x 1536 ran
  /// 143.4 us at +2 B against 77.5 aligned (H100, session 39); its peeled
  /// loop 1012 SASS instructions against 662, 460 of them integer.
  bool MixPhaseSlots = false;
  /// A mixed kernel of rows of one chunk a thread (whose aligned variant
  /// takes two rows an iteration, MixTwoRows) keeps every row's chunks in
  /// its peeled variants at the row's start (columns 8t..8t+7 for 16-bit
  /// rows) instead of where the lead tensor is aligned: every tensor's chunk
  /// is read through the aligned 16-byte blocks that hold it (jf_load_whole)
  /// and stored in the widest accesses its address allows, while each
  /// thread adds to the same columns every row, so the column terms take
  /// the aligned variant's 16-byte slots and its two rows an iteration, and
  /// no output-led variant is needed. Measured (H100, session 42) against
  /// the lead-aligned variants: 1.15-1.31x on 16-bit rows of 4095 (LayerNorm
  /// backward bf16 16384 x 4095 297.8 -> 236.6 us), 1.04-1.16x at +2 B x
  /// 4096, 1.12-1.18x f32 x 2048 at +4 B; the rows it does not apply to
  /// (more chunks than threads, several rows a block) lost 0.78-0.96x with
  /// it (CompileOptions::RowStartChunks applies it there). false: the lead.
  bool MixRowStartChunks = true;
  /// Experiment (off): row-start chunks (MixRowStartChunks) for every row
  /// kernel's peeled variants (a norm's, softmax's, the cluster and wide
  /// forms', any mixed kernel's): no output-led variant. Rejected (H100,
  /// session 42): forward rows of 32064-128256 at 16-bit offsets ran
  /// 0.43-0.58x with row clusters (add + RMSNorm bf16 4185 x 32064 +2 B
  /// 376.0 -> 864.8 us: every tensor's loads shifted, every store split);
  /// mixed kernels of more chunks than threads 0.78-0.96x.
  bool RowStartChunks = false;
  /// A mixed kernel's peeled variants of rows of more chunks than threads
  /// (some threads two) under a launch bound of 1024 resident threads an
  /// SM (64 registers), as the aligned variant of several rows a block:
  /// LayerNorm backward 16-bit x 1536's peeled variants took 80 registers
  /// (3 blocks of 256 an SM, the aligned one 4) and ran 1.85x the aligned
  /// time at +2 B; bounded, 1.40x faster (H100, session 39). Not with
  /// dynamic shared accumulators (spills). false: for comparisons.
  bool MixPeeledBound = true;
  /// Experiment: the most bytes of column accumulators a mixed row kernel
  /// keeps (0: the rule's, codegen::launch::MixRuleSharedBytes, 64 KiB;
  /// else 32 KiB, launch::MixMaxSharedBytes, up to
  /// launch::MixMaxSharedBytesAllowed, 200 KiB). Past 32 KiB they are the
  /// launch's dynamic shared memory. On an H100 (session 38) up to 64 KiB
  /// the mixed kernel ran 1.29-1.42x the 2-3 kernels median; past it
  /// 1.02-1.86x in f32 and RMSNorm, but LayerNorm backward bf16 x 11008
  /// 0.68-0.86x (88 KB of accumulators a block). For timing only, as
  /// MixMaxGroups.
  int64_t MixMaxSharedBytes = 0;
  /// With MixOrderColumns: runs of fewer rows than this take the plan
  /// without it (-1: codegen::launch::MixMinRows, 128; 0: never). Rows
  /// known when compiling: that plan alone; dynamic rows: both plans are
  /// compiled and each run takes one (Executable::planAt). At 1-64 rows
  /// the mixed kernel ran 0.78-0.98x the default plan's kernels in 16 bits
  /// (H100, session 36; a constant 1-2 us), at 128 rows and more 1.0x and
  /// above.
  int64_t MixMinRows = -1;
  /// Experiment (off): the mixed row kernel's rows known to be rows (a
  /// group's rows all exist, so no `rowOk` test): the compiler shares the
  /// stages' loads and conversions (W21's aligned variant 341 -> 264
  /// instructions a row at 40 registers under its launch bound), but needs
  /// more registers elsewhere (RMSNorm backward 16-bit x 4096 spills 20 B
  /// under the bound; f32 x 6144 64 -> 92 registers). Rows of one chunk a
  /// thread only, and only with MixTwoRows off. Not measured on a GPU.
  bool MixRowsKnown = false;
  /// With MixOrderColumns: the mixed row kernel's aligned variant takes two
  /// rows of its group an iteration (rows of one chunk a thread): their
  /// loads in flight together, their block reductions behind the same two
  /// barriers, their column terms added in row order (the same bits as a
  /// row an iteration), at 2 blocks of 512 an SM. ncu of W21's kernel
  /// (session 33) found a group's block with nothing in flight between one
  /// row's loads and the next and 41% of its cycles at barriers. Measured
  /// on an H100 (BENCHMARKS.md session 35): W21 1.19x, the norm-backward
  /// sweep up to 1.20x, 0.96-0.97x at 1-132 rows. Takes precedence over
  /// MixRowsKnown. False: a row an iteration, for comparisons.
  bool MixTwoRows = true;
  /// Experiment: how many of the splits' partials the last block of a
  /// column tile loads before adding them (a power of two up to 64; 0:
  /// codegen::launch::ColumnCombineUnroll, 8). The sum's order is the same.
  int ColumnCombineUnroll = 0;
  /// Experiment: loads a mixed kernel's combining thread has in flight
  /// (its loop's unroll; 0: codegen::launch::MixCombineUnroll, 4; else a
  /// power of two up to 64). The combine runs after every group is done,
  /// so its L2 round trips are the kernel's tail: at 512 groups a thread
  /// adds 64 partials. The sum's order, and so every bit, is the same.
  int MixCombineUnroll = 0;
  /// A mixed kernel's combining thread loads its groups' partials in
  /// batches of codegen::launch::MixCombineBatch (16), each batch's loads
  /// before its adds, then the rest in the loop unrolled MixCombineUnroll
  /// (same order, same bits). Unrolled 16, the loop alone ran 1.13-1.25x
  /// faster at 1024-16384 rows but 0.79-0.88x at 256 rows, where a
  /// thread's few partials fell to the unroll's serial remainder (H100,
  /// session 40); the batches: BENCHMARKS.md, session 41. False: the loop
  /// alone, for comparisons.
  bool MixCombineBatches = true;
  /// A horizontal launch whose parts move more than this many bytes
  /// together at a run's dims launches each part on its own (the program
  /// holds both forms; the first run at new dims chooses). Unset:
  /// compiler/Horizontal.h HorizontalMaxLaunchBytes, measured; -1: always
  /// one launch (experiments, `jitfuse_bench --horizontal-max-bytes`).
  std::optional<int64_t> HorizontalMaxBytes;
  /// A cold compile returns once each launch's first variant (the aligned
  /// one) is compiled and loaded; the others (the peeled variants, the
  /// ladder's narrower widths, and every variant of the parts a launch runs
  /// one by one at large dims, HorizontalMaxBytes) compile on a background
  /// thread, are written
  /// to the cache with the rest, and load at the first run() whose pointers
  /// need one (which waits for them; an NVRTC failure there is thrown by
  /// that run()). The Executable's destructor waits for the background
  /// compile. false: compile() compiles every variant (as does WantPtx).
  bool DeferVariants = true;
};

/// Thread-safe: any number of threads may compile() through one Compiler
/// (and its kernel cache) at once; each gets its own Executable.
class Compiler {
public:
  /// Cache location and bounds from the environment (JITFUSE_CACHE_DIR,
  /// JITFUSE_CACHE, JITFUSE_CACHE_MAX_BYTES).
  Compiler();
  explicit Compiler(rt::CacheConfig Config);

  /// Partitions, schedules, generates CUDA, compiles (or finds in the
  /// cache) and loads. Throws jitfuse::Error with the plan when a fusion
  /// contract is not met.
  Executable compile(const Graph &G, const CompileOptions &Opts = {});

  /// compile()'s first stage alone: the partition and each kernel's
  /// schedule, for the same target (the device's, or Opts.Arch; sm_90 with
  /// neither), with no code generated, compiled or loaded. Needs no GPU.
  /// Throws what that stage of compile() throws (an invalid graph or
  /// option, an unmet fusion contract).
  static GraphPlan plan(const Graph &G, const CompileOptions &Opts = {});

  rt::KernelCache &cache() { return *Cache; }
  rt::CacheStats cacheStats() const { return Cache->stats(); }

  /// Background threads of deferred compiles (CompileOptions::DeferVariants)
  /// in this process that have not finished. The last holder of a program's
  /// partial entry (its Executables) joins the thread, so this is 0 once no
  /// Executable of a pending deferred compile is alive.
  static unsigned backgroundThreads();

private:
  std::shared_ptr<rt::KernelCache> Cache;
};

} // namespace jitfuse
