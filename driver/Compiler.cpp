//===- driver/Compiler.cpp - compile() as named stages --------------------===//
//
//   plan     compiler/Planner.h   partition, schedule, plan text, contract
//   emit     codegen/Codegen.h    CUDA text, parameters and launch rules
//   target   runtime/             arch, SM count, NVRTC options, the key
//   compile  runtime/KernelCache  find the binary in memory or on disk, or
//            or find               run NVRTC (in parallel parts): each launch's
//                                  first variant now, the others in the
//                                  background (CompileOptions::DeferVariants)
//   load     exec/                modules, functions, launch tables
//
// Each stage is one function below, called once in that order; the cache
// key is computed once, in the target stage.
//
//===----------------------------------------------------------------------===//
#include "driver/Compiler.h"

#include "codegen/Codegen.h"
#include "codegen/LaunchRule.h"
#include "compiler/Horizontal.h"
#include "compiler/Planner.h"
#include "driver/Dump.h"
#include "exec/ExecutableImpl.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/ImageBundle.h"
#include "runtime/Nvrtc.h"
#include "support/Error.h"
#include "support/Log.h"
#include "support/Settings.h"

#include <fmt/format.h>
#include <llvm/ADT/STLExtras.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <pthread.h>

namespace jitfuse {

Compiler::Compiler()
    : Cache(std::make_shared<rt::KernelCache>(rt::CacheConfig::fromEnv())) {}

Compiler::Compiler(rt::CacheConfig Config)
    : Cache(std::make_shared<rt::KernelCache>(std::move(Config))) {}

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point T) {
  return std::chrono::duration<double, std::milli>(Clock::now() - T).count();
}

std::pair<int, int> parseArch(llvm::StringRef Arch) {
  unsigned V = 0;
  if (!Arch.consume_front("sm_") || Arch.getAsInteger(10, V) || V < 50)
    fail("compile: arch '{}' is not of the form sm_XX (e.g. sm_90)", Arch.str());
  return {static_cast<int>(V / 10), static_cast<int>(V % 10)};
}

/// Stage "target": what the binary is built for, and the key naming it.
struct Target {
  bool HaveDevice = false;
  int SmCount = 0;
  /// The device's L2 bytes (0 without a device).
  int64_t L2Bytes = 0;
  std::string Arch;
  std::vector<std::string> NvrtcOptions;
};

PlanOptions planOptions(const CompileOptions &Opts, const Target &T) {
  auto [SmMajor, SmMinor] = parseArch(T.Arch);
  PlanOptions P;
  P.Fuse = Opts.Fuse;
  P.Fusion.FullReducePrologueOutputs = Opts.FullReducePrologueOutputs;
  P.Fusion.ColumnReduceEpilogue = Opts.ColumnReduceEpilogue;
  P.Fusion.FullReduceEpilogue = Opts.FullReduceEpilogue;
  P.Fusion.RecomputeStoredValues = Opts.RecomputeStoredValues;
  P.Fusion.SiblingColumnReductions = Opts.SiblingColumnReductions;
  P.Fusion.ColumnReducePrologueOutputs = Opts.ColumnReducePrologueOutputs;
  P.Fusion.MixOrderColumns = Opts.MixOrderColumns;
  // Rows of 256 elements or more are 16 16-byte chunks or more of any
  // element size: a row of 16 threads or more, rows a block of 128 threads
  // or more (launch::ShortRowBlockThreads), so the mixed kernel's combining
  // blocks are whole warps. Its rows of a warp or less take several rows a
  // block (KernelPlan::RowsPerBlock), each with its own accumulators.
  if (Opts.MixMinColumns != 0 &&
      (Opts.MixMinColumns < codegen::launch::MixMinColumnsAllowed ||
       Opts.MixMinColumns > (int64_t(1) << 20)))
    fail("CompileOptions::MixMinColumns: {} is neither 0 (the rule's) nor in {} to 2^20",
         Opts.MixMinColumns, codegen::launch::MixMinColumnsAllowed);
  if (Opts.MixMinColumns)
    P.Fusion.MixMinColumns = Opts.MixMinColumns;
  if (Opts.MixMaxSharedBytes != 0 &&
      (Opts.MixMaxSharedBytes < codegen::launch::MixMaxSharedBytes ||
       Opts.MixMaxSharedBytes > codegen::launch::MixMaxSharedBytesAllowed))
    fail("CompileOptions::MixMaxSharedBytes: {} is neither 0 (the rule's) nor in {} to {}",
         Opts.MixMaxSharedBytes, codegen::launch::MixMaxSharedBytes,
         codegen::launch::MixMaxSharedBytesAllowed);
  if (Opts.MixMaxSharedBytes)
    P.Fusion.MixMaxSharedBytes = Opts.MixMaxSharedBytes;
  P.Horizontal = Opts.HorizontalFusion;
  P.HorizontalMaxBytes = Opts.HorizontalMaxBytes.value_or(HorizontalMaxLaunchBytes);
  P.ExpectKernels = Opts.ExpectKernels;
  P.ExpectLaunches = Opts.ExpectLaunches;
  P.SameKernel = Opts.SameKernel;
  P.StreamLoads = SmMajor >= 8 && Opts.StreamLoads;
  P.StreamReadOnlyRows = SmMajor >= 8 && Opts.StreamReadOnlyRows;
  ScheduleOptions &S = P.Schedule;
  S.FastMath = Opts.FastMath;
  S.Peel = Opts.PeelAlignment;
  S.ForceRowCache = Opts.RowCache;
  // Thread-block clusters need sm_90.
  S.Clusters = SmMajor >= 9 && (Opts.RowClusters || Opts.RowCluster);
  S.ForceCluster = Opts.RowCluster;
  if (Opts.RowSharedMemory)
    S.RowSharedBytes = codegen::maxRowSharedBytes(SmMajor, SmMinor);
  // createpolicy and the L2 cache-hint loads need sm_80.
  S.RowL2Hints = SmMajor >= 8 && Opts.RowL2Hints;
  S.RowReadBack = Opts.RowReadBack;
  S.RowOnlineSoftmax = Opts.RowOnlineSoftmax;
  S.RowWelford = Opts.RowWelford;
  S.FewRowsClusters = SmMajor >= 9 && Opts.RowFewRowsClusters;
  S.WideRows = Opts.RowWideRows;
  S.AlignedClusters = SmMajor >= 9 && Opts.RowClustersAligned;
  S.AlignedClustersOverWide = Opts.RowClustersAlignedOverWide;
  S.AlignedClustersPeeled = Opts.RowClustersPeeled;
  S.AlignedClustersPeeledNarrow = Opts.RowClustersPeeledNarrow;
  S.PeeledSamePhase = Opts.PeeledSamePhase;
  S.AlignedClustersPeeledBound = Opts.RowClustersPeeledBound;
  S.ClusterPairs = Opts.RowClusterPairs;
  S.AlignedClustersTwoBlocks = Opts.RowClustersTwoBlocks;
  S.AlignedClustersStageInputs = Opts.RowClustersStageInputs;
  S.AlignedClustersValues = Opts.RowClustersValues;
  S.ConcatRowGroups = Opts.ConcatRowGroups;
  S.AlignedRowCopy = Opts.AlignedRowCopy;
  S.JointReduce = Opts.JointReduce;
  S.RowCacheStageInputs = Opts.RowCacheStageInputs;
  S.RowCacheLateEpilogue = Opts.RowCacheLateEpilogue;
  S.RowCacheLatePeeled = Opts.RowCacheLatePeeled;
  S.RowCacheWideThreads = Opts.RowCacheWideThreads;
  S.PeeledRowOccupancy = Opts.PeeledRowOccupancy;
  S.RowCacheReadOnce = Opts.RowCacheReadOnce;
  S.GroupStores = Opts.GroupStores;
  S.PieceWrapChunks = Opts.PieceWrapChunks;
  S.RowPhaseLoop = Opts.RowPhaseLoop;
  S.PrefixCoords = Opts.PrefixCoords;
  S.OutputLedVariant = Opts.OutputLedVariant;
  S.WholeChunkPaths = Opts.WholeChunkPaths;
  S.FlatRowBroadcast = Opts.FlatRowBroadcast;
  S.FlatTailThreads = Opts.FlatTailThreads;
  S.RowCacheValues = Opts.RowCacheValues;
  S.PerRowInputsSetWidth = Opts.RowStatsSetWidth;
  if (Opts.MixMaxGroups < 0 || Opts.MixMaxGroups > (int64_t(1) << 20))
    fail("CompileOptions::MixMaxGroups: {} is outside 0 (the rule's) to 2^20",
         Opts.MixMaxGroups);
  S.MixMaxGroups = Opts.MixMaxGroups;
  S.MixRowsKnown = Opts.MixRowsKnown;
  if (Opts.MixMinGroupRows < 0 || Opts.MixMinGroupRows > 4096)
    fail("CompileOptions::MixMinGroupRows: {} is outside 0 (the rule's) to 4096",
         Opts.MixMinGroupRows);
  S.MixMinGroupRows = Opts.MixMinGroupRows;
  if (Opts.MixBlockRows < 0 || Opts.MixBlockRows > codegen::launch::MixBlockRowsMax)
    fail("CompileOptions::MixBlockRows: {} is outside 0 (the rule's) to {}", Opts.MixBlockRows,
         codegen::launch::MixBlockRowsMax);
  S.MixBlockRows = Opts.MixBlockRows;
  S.MixThreadsRoundUp = Opts.MixThreadsRoundUp;
  S.MixPhaseSlots = Opts.MixPhaseSlots;
  S.MixRowStartChunks = Opts.MixRowStartChunks;
  S.RowStartChunks = Opts.RowStartChunks;
  S.MixCombineBatches = Opts.MixCombineBatches;
  S.MixPeeledBound = Opts.MixPeeledBound;
  S.MixTwoRows = Opts.MixTwoRows;
  S.RowOkKnown = Opts.RowOkKnown;
  if (int U = Opts.ColumnCombineUnroll; U < 0 || U > 64 || (U & (U - 1)) != 0)
    fail("CompileOptions::ColumnCombineUnroll: {}; expected 0 (the rule's) or a power of two "
         "up to 64",
         U);
  S.ColumnCombineUnroll = Opts.ColumnCombineUnroll;
  if (int U = Opts.MixCombineUnroll; U < 0 || U > 64 || (U & (U - 1)) != 0)
    fail("CompileOptions::MixCombineUnroll: {}; expected 0 (the rule's) or a power of two up "
         "to 64",
         U);
  S.MixCombineUnroll = Opts.MixCombineUnroll;
  if (Opts.RowRereadThreads) {
    unsigned N = *Opts.RowRereadThreads;
    if (N < 32 || N > 1024 || (N & (N - 1)) != 0)
      fail("compile: RowRereadThreads = {}; expected a power of two in [32, 1024]", N);
    S.RowRereadThreads = N;
  }
  S.RowThreadsAtLaunch = Opts.RowThreadsAtLaunch;
  if (Opts.RowDynamicThreads) {
    unsigned N = *Opts.RowDynamicThreads;
    if (N < 32 || N > 1024 || (N & (N - 1)) != 0)
      fail("compile: RowDynamicThreads = {}; expected a power of two in [32, 1024]", N);
    S.RowDynamicThreads = N;
  }
  if (Opts.RowChunksPerThread) {
    unsigned K = *Opts.RowChunksPerThread;
    if (K < 1 || K > 16)
      fail("compile: RowChunksPerThread = {}; expected 1 to 16", K);
    S.RowChunksPerThread = K;
  }
  // Without a device, the H200's share.
  if (T.L2Bytes > 0 && T.SmCount > 0)
    S.RowL2ShareBytes =
        T.L2Bytes / (int64_t(T.SmCount) * codegen::launch::ResidentRowBlocksPerSm);
  if (Opts.RowBlocksPerSm.value_or(0) > 0)
    S.RowPadSharedBytes =
        codegen::occupancyPadBytes(SmMajor, SmMinor, static_cast<int>(*Opts.RowBlocksPerSm));
  return P;
}

Target chooseTarget(const CompileOptions &Opts) {
  Target T;
  rt::Driver &D = rt::Driver::get();
  T.HaveDevice = D.available() && Opts.Device < rt::deviceCount();
  T.Arch = Opts.Arch;
  // The SM count sizes the full-reduction grid whatever Arch says: an
  // explicit Arch must not shrink it to one block.
  if (T.HaveDevice) {
    rt::DeviceInfo Info = rt::queryDevice(Opts.Device);
    T.SmCount = Info.SmCount;
    T.L2Bytes = Info.L2CacheBytes;
    if (T.Arch.empty())
      T.Arch = Info.archName();
  } else if (T.Arch.empty()) {
    T.Arch = "sm_90";
  }
  auto [Major, Minor] = parseArch(T.Arch);
  T.NvrtcOptions = rt::defaultNvrtcOptions(Major, Minor);
  return T;
}

/// NVRTC over \p Kernels in up to \p Threads parts, as images naming their
/// kernels (a bundle, even of one part, so a partial entry says what it
/// holds).
std::vector<rt::BundledImage> compileImages(llvm::ArrayRef<codegen::EmittedKernel> Kernels,
                                            const Target &T, unsigned Threads, std::string &Log) {
  std::vector<codegen::ProgramPart> Pieces = codegen::splitProgram(Kernels, Threads);
  std::vector<std::string> Sources;
  for (const codegen::ProgramPart &P : Pieces)
    Sources.push_back(P.Source);
  std::vector<rt::CompiledProgram> Progs =
      rt::compileCudaParallel(Sources, "jitfuse", T.NvrtcOptions, Threads);
  std::vector<rt::BundledImage> Images;
  for (size_t I = 0; I < Pieces.size(); ++I) {
    Images.push_back({std::move(Pieces[I].Kernels), std::move(Progs[I].Cubin)});
    Log += Progs[I].Log;
  }
  return Images;
}

/// Stage "compile": NVRTC over the program, or over up to \p Threads parts
/// of it compiled at once. Several kernel variants compile as parallel NVRTC
/// programs: the front end runs once per part, but a cold compile takes the
/// time of the largest part instead of the sum (ARCHITECTURE.md, "Parallel
/// compile"). The cache key stays that of the whole program, whatever the
/// split.
rt::CacheEntry runNvrtc(llvm::ArrayRef<codegen::EmittedKernel> Kernels,
                        const std::string &Source, const Target &T, unsigned Threads,
                        bool WantPtx, std::string &Ptx) {
  size_t NumVariants = 0;
  for (const codegen::EmittedKernel &K : Kernels)
    NumVariants += K.Variants.size();
  if (Threads <= 1 || NumVariants <= 1) {
    rt::CompiledProgram Prog = rt::compileCuda(Source, "jitfuse", T.NvrtcOptions, WantPtx);
    if (WantPtx)
      Ptx = Prog.Ptx;
    return rt::CacheEntry{std::move(Prog.Cubin), std::move(Prog.Log), {}, {}};
  }
  std::string Log;
  std::vector<rt::BundledImage> Images = compileImages(Kernels, T, Threads, Log);
  return rt::CacheEntry{rt::bundleImages(Images), std::move(Log), {}, {}};
}

/// Each of the first \p NumLaunched kernels' first variant (the widest: what
/// aligned pointers run) and its cluster split's aligned variant (what they
/// run on many rows, KernelPlan::AlignedCluster) in Eager, the others in
/// Rest, and every variant of the kernels after them (a split launch's parts
/// alone: they run only at large dims); the count of Rest's variants.
size_t splitVariants(llvm::ArrayRef<codegen::EmittedKernel> Kernels, size_t NumLaunched,
                     std::vector<codegen::EmittedKernel> &Eager,
                     std::vector<codegen::EmittedKernel> &Rest) {
  using Variant = codegen::EmittedKernel::Variant;
  size_t N = 0;
  for (size_t I = 0; I < Kernels.size(); ++I) {
    const codegen::EmittedKernel &K = Kernels[I];
    if (I >= NumLaunched) {
      N += K.Variants.size();
      Rest.push_back(K);
      continue;
    }
    auto IsEager = [&](size_t V) {
      return V == 0 || (K.Variants[V].F == Variant::AlignedCluster && !K.Variants[V].Peeled);
    };
    codegen::EmittedKernel First = K, Others = K;
    First.Variants.clear();
    Others.Variants.clear();
    for (size_t V = 0; V < K.Variants.size(); ++V)
      (IsEager(V) ? First : Others).Variants.push_back(K.Variants[V]);
    Eager.push_back(std::move(First));
    if (Others.Variants.empty())
      continue;
    N += Others.Variants.size();
    Rest.push_back(std::move(Others));
  }
  return N;
}

/// Deferred compiles' threads that have not finished (thread-local
/// destructors included).
std::atomic<unsigned> BackgroundThreads{0};

/// Owns \p T and joins it when the last copy is released. The release may
/// happen on T itself (KernelCache::complete drops the partial entry from
/// memory there); T cannot join itself, and is then about to return anyway,
/// so it is detached.
std::shared_ptr<void> joinedOnRelease(std::thread T) {
  return std::shared_ptr<std::thread>(new std::thread(std::move(T)), [](std::thread *P) {
    if (P->get_id() == std::this_thread::get_id())
      P->detach();
    else
      P->join();
    delete P;
  });
}

/// The compile of a cold, deferred program: Eager's variants, as a partial
/// entry whose Deferred future a background thread fulfils with Rest's
/// images, after it stored the complete entry (both parts' images) under
/// Key. The background compile starts first, so with threads to spare both
/// run at once and compile() returns after the eager part alone: on the
/// development machine the peeled variant of add + RMSNorm takes 3-4x the
/// aligned one's NVRTC time (docs/MEASUREMENTS.md).
rt::CacheEntry compileDeferred(std::shared_ptr<rt::KernelCache> Cache, const rt::CacheKey &Key,
                               const std::string &Source,
                               std::vector<codegen::EmittedKernel> Eager,
                               std::vector<codegen::EmittedKernel> Rest, const Target &T,
                               unsigned Threads) {
  using Images = std::vector<rt::BundledImage>;
  std::promise<std::pair<Images, std::string>> FirstPromise;
  std::promise<std::shared_ptr<const rt::CacheEntry>> Promise;
  rt::CacheEntry Out;
  Out.Deferred = Promise.get_future().share();
  // It owns what it uses (the cache by shared_ptr) and touches nothing after
  // fulfilling the promise; whoever holds the future can wait for that
  // (~ExecutableImpl does, and so does a failing eager compile), and the last
  // holder of the entry joins it (Out.Worker), so no background thread
  // outlives the Executables of its program.
  // Only spare threads run beside the eager compile: with as many eager
  // variants as threads, the background starts after it (on 2 cores, 4
  // NVRTC programs at once made a 500-op chain's compile() 2.5x slower).
  size_t NumEager = 0;
  for (const codegen::EmittedKernel &K : Eager)
    NumEager += K.Variants.size();
  unsigned Spare = NumEager < Threads ? Threads - static_cast<unsigned>(NumEager) : 0;
  auto Body = [Cache = std::move(Cache), Key, Source, Rest = std::move(Rest), T, Threads, Spare,
               First = FirstPromise.get_future().share(),
               Promise = std::move(Promise)]() mutable {
    pthread_setname_np(pthread_self(), "jitfuse-defer");
    // Counted until the thread's thread-local destructors run, the last
    // code of its own before it exits (Compiler::backgroundThreads).
    thread_local struct ExitCount {
      ~ExitCount() { BackgroundThreads.fetch_sub(1); }
    } Counted;
    (void)Counted;
    try {
      if (!Spare)
        (void)First.get(); // a failed eager compile ends this one too
      std::string Log;
      Images Mine = compileImages(Rest, T, Spare ? Spare : Threads, Log);
      auto Deferred = std::make_shared<const rt::CacheEntry>(
          rt::CacheEntry{rt::bundleImages(Mine), Log, {}, {}});
      bool EagerOk = false;
      try {
        auto [All, FirstLog] = First.get();
        EagerOk = true;
        All.insert(All.end(), std::make_move_iterator(Mine.begin()),
                   std::make_move_iterator(Mine.end()));
        Cache->complete(Key, Source,
                        std::make_shared<const rt::CacheEntry>(
                            rt::CacheEntry{rt::bundleImages(All), FirstLog + Log, {}, {}}));
      } catch (...) {
        if (EagerOk)
          throw;
        // The eager compile failed and threw from compile(): nothing to store.
      }
      Cache.reset();
      Promise.set_value(std::move(Deferred));
    } catch (...) {
      // Nothing is stored; the next compile() of this program starts over.
      Cache->invalidate(Key);
      Cache.reset();
      Promise.set_exception(std::current_exception());
    }
  };
  // Counted from before the thread exists, so a caller never sees 0 while
  // it is starting; a thread that fails to start is not counted.
  BackgroundThreads.fetch_add(1);
  std::thread Worker;
  try {
    Worker = std::thread(std::move(Body));
  } catch (...) {
    BackgroundThreads.fetch_sub(1);
    throw;
  }
  Out.Worker = joinedOnRelease(std::move(Worker));
  try {
    std::string Log;
    Images First = compileImages(Eager, T, Threads, Log);
    Out.Image = rt::bundleImages(First);
    Out.Log = Log;
    FirstPromise.set_value({std::move(First), std::move(Log)});
  } catch (...) {
    FirstPromise.set_exception(std::current_exception());
    Out.Deferred.wait();
    throw;
  }
  return Out;
}

/// CompileOptions::MixMinRows, resolved: 0 when no run falls back.
int64_t mixMinRows(const CompileOptions &Opts) {
  if (Opts.MixMinRows < -1)
    fail("CompileOptions::MixMinRows: {} is neither -1 (the rule's) nor 0 or more",
         Opts.MixMinRows);
  if (!Opts.MixOrderColumns)
    return 0;
  return Opts.MixMinRows < 0 ? codegen::launch::MixMinRows : Opts.MixMinRows;
}

/// The plan's mixed row kernels (KernelPlan::MixColumns) against a least
/// row count: one with too few static rows, else one whose rows are
/// dynamic, else enough (or none).
enum class MixedRows { Enough, TooFew, Dynamic };

MixedRows mixedRows(const GraphPlan &P, int64_t MinRows) {
  MixedRows R = MixedRows::Enough;
  for (const KernelPlan &K : P.Kernels) {
    if (K.MixColumns.empty())
      continue;
    llvm::ArrayRef<Dim> Outer = llvm::ArrayRef<Dim>(K.Domain).drop_back();
    if (llvm::any_of(Outer, [](const Dim &D) { return D.isDynamic(); })) {
      R = MixedRows::Dynamic;
      continue;
    }
    std::optional<int64_t> Rows = boundedStaticNumel(Outer);
    if (Rows && *Rows < MinRows)
      return MixedRows::TooFew;
  }
  return R;
}

/// The options of the plan without MixOrderColumns that runs of too few
/// rows take (the kernel and launch counts expected of the mixed plan do
/// not apply to it).
CompileOptions unmixedOptions(const CompileOptions &Opts) {
  CompileOptions O = Opts;
  O.MixOrderColumns = false;
  O.ExpectKernels.reset();
  O.ExpectLaunches.reset();
  return O;
}

} // namespace

GraphPlan Compiler::plan(const Graph &G, const CompileOptions &Opts) {
  GraphPlan P = planGraph(G, planOptions(Opts, chooseTarget(Opts)));
  if (int64_t Min = mixMinRows(Opts); Min > 0 && mixedRows(P, Min) == MixedRows::TooFew)
    return plan(G, unmixedOptions(Opts));
  return P;
}

Executable Compiler::compile(const Graph &G, const CompileOptions &Opts) {
  Clock::time_point Start = Clock::now();
  Settings Env = Settings::fromEnv();

  // Stage "plan" (for the target's architecture: row clusters need sm_90).
  Target T = chooseTarget(Opts);
  PlanOptions PO = planOptions(Opts, T);
  GraphPlan Plan = planGraph(G, PO);
  // A mixed kernel of too few rows: the plan without it; of dynamic rows:
  // both, each run taking one (Executable::planAt).
  const int64_t MixMin = mixMinRows(Opts);
  const MixedRows Mixed = MixMin > 0 ? mixedRows(Plan, MixMin) : MixedRows::Enough;
  if (Mixed == MixedRows::TooFew)
    return compile(G, unmixedOptions(Opts));
  // The other plan compiles beside this one (Compiler is thread-safe): a
  // cold LayerNorm backward took 330 + 410 ms one after the other on the
  // 2-core development machine.
  std::future<Executable> Unmixed;
  if (Mixed == MixedRows::Dynamic)
    Unmixed = std::async(std::launch::async,
                         [this, &G, O = unmixedOptions(Opts)] { return compile(G, O); });
  double PlanMs = msSince(Start);

  // Stage "emit": each kernel once; its text is both the inspection copy and
  // part of the program (emission dominates a cache hit's CPU time).
  // Kernels are written for the graph the plan was made for (the user's, or
  // its lowering and row view when reductions run over axes: Planner.h). A
  // horizontal launch is emitted from its parts' kernels (its device
  // functions); the program holds one entry per launch, then the parts of
  // each horizontal launch that runs them one by one at large dims
  // (compiler/Horizontal.h splitsWhenLarge) as kernels of their own.
  const Graph &PG = Plan.planned(G);
  std::vector<codegen::EmittedKernel> PartEmitted, Program;
  for (const KernelPlan &K : Plan.Kernels)
    PartEmitted.push_back(codegen::emitKernel(PG, K));
  for (size_t L = 0; L < Plan.Launches.size(); ++L) {
    const std::vector<unsigned> &Parts = Plan.Launches[L];
    if (Parts.size() == 1)
      Program.push_back(PartEmitted[Parts.front()]);
    else
      Program.push_back(codegen::emitHorizontal(PG, Plan.Kernels, PartEmitted, Parts,
                                                fmt::format("jf_l{}_h", L)));
  }
  const size_t NumLaunched = Program.size();
  for (size_t L = 0; L < Plan.Launches.size(); ++L) {
    if (!Plan.Splits[L])
      continue;
    // The header (a comment) is already in the launch's, with the parts'.
    for (unsigned K : Plan.Launches[L]) {
      Program.push_back(PartEmitted[K]);
      Program.back().Header = fmt::format("// kernel {} alone: launch jf_l{}_h at large dims\n",
                                          Plan.Kernels[K].Name, L);
    }
  }
  // Each launch as emitted; the program's later kernels are split parts.
  llvm::ArrayRef<codegen::EmittedKernel> Emitted(Program.data(), NumLaunched);
  auto X = std::make_unique<ExecutableImpl>();
  X->Source = codegen::joinProgram(Program);
  double EmitMs = msSince(Start) - PlanMs;

  // Stage "target" (chosen before the plan), and the key, once.
  X->NvrtcOptions = T.NvrtcOptions;
  const rt::CacheKey Key =
      rt::cacheKey({X->Source, T.NvrtcOptions, rt::nvrtcVersionString(), T.Arch});
  X->Key = Key.str();
  if (Env.DumpGraph)
    writeDump(Env, X->Key, "graph.txt", Plan.GraphText);
  if (Env.DumpPlan)
    writeDump(Env, X->Key, "plan.txt", Plan.PlanText);
  if (Env.DumpCuda)
    writeDump(Env, X->Key, "cu", X->Source);

  // Stage "compile or find".
  bool WantPtx = Opts.WantPtx || Env.DumpPtx;
  auto CompileNow = [&] {
    return runNvrtc(Program, X->Source, T, Env.CompileThreads, WantPtx, X->Ptx);
  };
  bool Hit = false;
  size_t NumVariants = 0;
  for (const codegen::EmittedKernel &K : Program)
    NumVariants += K.Variants.size();
  // A CUBIN dump holds every variant, so nothing is left to the background.
  if (Opts.DeferVariants && !WantPtx && !Env.DumpCubin && NumVariants > Emitted.size()) {
    auto CompileFirst = [&] {
      std::vector<codegen::EmittedKernel> Eager, Rest;
      X->Stats.DeferredVariants =
          static_cast<unsigned>(splitVariants(Program, Emitted.size(), Eager, Rest));
      return compileDeferred(Cache, Key, X->Source, std::move(Eager), std::move(Rest), T,
                             Env.CompileThreads);
    };
    X->Entry = Cache->getOrCompile(Key, X->Source, CompileFirst, &Hit);
  } else {
    X->Entry = Cache->getOrCompile(Key, X->Source, CompileNow, &Hit);
  }
  X->Deferred = X->Entry->Deferred;
  X->Stats.CacheHit = Hit;
  X->Log = X->Entry->Log;
  X->Stats.CompileMs = msSince(Start);
  if (WantPtx && X->Ptx.empty())
    X->Ptx = rt::compileCuda(X->Source, "jitfuse", X->NvrtcOptions, true).Ptx;
  if (Env.DumpPtx)
    writeDump(Env, X->Key, "ptx", X->Ptx);
  if (Env.DumpCubin)
    writeCubinDump(Env, X->Key,
                   X->Entry->Deferred.valid() ? X->Entry->Deferred.get()->Image
                                              : X->Entry->Image);

  // Stage "load": the executable's tables, then (with a device) the module.
  X->Device = Opts.Device;
  X->HaveDevice = T.HaveDevice;
  X->SmCount = T.SmCount;
  for (NodeId N : G.inputs())
    X->Inputs.push_back({G.node(N).Name, G.node(N).Type, G.node(N).Dims, G.node(N).Strides});
  for (const GraphOutput &O : G.outputs())
    X->Outputs.push_back({O.Name, G.node(O.Id).Type, G.node(O.Id).Dims, O.Strides});
  for (NodeId N : G.scalars())
    X->Scalars.push_back({G.node(N).Name, G.node(N).Type, {}});
  X->DynDims.assign(G.dynamicDims().begin(), G.dynamicDims().end());
  for (size_t I = 0; I < Plan.Kernels.size(); ++I) {
    const KernelPlan &K = Plan.Kernels[I];
    // Every node the kernel computes: a row kernel's column partials too.
    std::vector<NodeId> Nodes = K.Nodes;
    Nodes.insert(Nodes.end(), K.MixColumns.begin(), K.MixColumns.end());
    llvm::sort(Nodes);
    X->Kernels.push_back({K.Name, K.Kind, Nodes, K.Inputs, K.Outputs, K.Vecs, K.ThreadsX,
                          K.RowsPerBlock, PartEmitted[I].source(), 0,
                          K.FewRows ? K.FewRows->Name : std::string(),
                          K.FewRows ? static_cast<unsigned>(K.FewRows->Vecs.size()) : 0u,
                          K.WideRows ? K.WideRows->Name : std::string(),
                          K.WideRows ? static_cast<unsigned>(K.WideRows->Vecs.size()) : 0u,
                          K.AlignedCluster ? K.AlignedCluster->Name : std::string(),
                          static_cast<unsigned>(K.alignedClusterVariants())});
  }
  for (size_t L = 0; L < Plan.Launches.size(); ++L)
    for (unsigned I : Plan.Launches[L])
      X->Kernels[I].Launch = static_cast<unsigned>(L);
  X->buildLaunches(PG, Plan.Kernels, Plan.Launches, PartEmitted, Emitted, Plan.LaunchBytes,
                   Plan.Splits, PO.HorizontalMaxBytes);
  X->Part = std::move(Plan.Part);
  X->KernelBytes = std::move(Plan.KernelBytes);
  X->GraphText = std::move(Plan.GraphText);
  X->PlanText = std::move(Plan.PlanText);
  X->PlanDot = std::move(Plan.PlanDot);
  Clock::time_point LoadStart = Clock::now();
  if (X->HaveDevice) {
    X->Ctx = rt::primaryContext(Opts.Device);
    std::vector<std::string> Names;
    for (const codegen::EmittedKernel &K : Program)
      for (const codegen::EmittedKernel::Variant &V : K.Variants)
        Names.push_back(V.Name);
    // A CUBIN the driver refuses is a stale or damaged entry: drop it and
    // compile once more.
    try {
      X->Mod = std::make_unique<rt::ModuleSet>(X->Entry->Image, Names);
    } catch (const rt::ImageError &) {
      Cache->invalidate(Key);
      X->Entry = Cache->getOrCompile(Key, X->Source, CompileNow, &Hit);
      X->Deferred = {};
      X->Mod = std::make_unique<rt::ModuleSet>(X->Entry->Image, Names);
    }
    X->bindFunctions();
  }
  X->Stats.LoadMs = msSince(LoadStart);

  // Formatted only when asked for (Env already read JITFUSE_LOG).
  if (Env.Log >= LogLevel::Info)
    logMessage(LogLevel::Info,
               fmt::format("compiled {} kernel{} ({}) in {:.1f} ms: {}, key {}", Emitted.size(),
                           Emitted.size() == 1 ? "" : "s", Opts.Fuse ? "fused" : "unfused",
                           X->Stats.CompileMs + X->Stats.LoadMs,
                           Hit ? std::string("cache hit")
                               : fmt::format("NVRTC (cache: {})", Cache->diskEnabled()
                                                                      ? Cache->dir()
                                                                      : "memory only"),
                           X->Key.substr(0, 16)));
  if (Env.Log >= LogLevel::Debug)
    logMessage(LogLevel::Debug,
               fmt::format("stages: plan {:.2f} ms, emit {:.2f} ms, compile or find {:.2f} ms, "
                           "load {:.2f} ms",
                           PlanMs, EmitMs, X->Stats.CompileMs - PlanMs - EmitMs,
                           X->Stats.LoadMs));
  if (Mixed == MixedRows::Dynamic) {
    X->Unmixed = std::make_unique<Executable>(Unmixed.get());
    X->UnmixedBelow = MixMin;
    for (const LaunchPlan &L : X->Launches) {
      if (L.Rule.mixesColumns())
        X->MixedRows.push_back(L.Rows);
      for (const LaunchPart &Part : L.Parts)
        if (Part.Rule.mixesColumns())
          X->MixedRows.push_back(Part.Rows);
    }
    X->PlanText += fmt::format("runs of fewer than {} rows take the plan without "
                               "MixOrderColumns ({} kernels; CompileOptions::MixMinRows, "
                               "Executable::planAt)\n",
                               MixMin, X->Unmixed->numKernels());
  }
  return Executable(std::move(X));
}

unsigned Compiler::backgroundThreads() { return BackgroundThreads.load(); }

} // namespace jitfuse
