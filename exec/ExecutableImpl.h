//===- exec/ExecutableImpl.h - what run() needs, precomputed ----*- C++ -*-===//
//
// Private to compiler/. Everything run() touches is laid out at compile time
// so the hot path only fills argument slots and launches.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Codegen.h"
#include "exec/Executable.h"
#include "compiler/SizeExpr.h"
#include "runtime/CacheFile.h"
#include "runtime/Memory.h"
#include "runtime/Module.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace jitfuse {

/// Where a tensor argument comes from at run time.
struct TensorSource {
  enum Kind : uint8_t { GraphInput, GraphOutput, Intermediate } K;
  unsigned Index;
};

struct ArgSlot {
  codegen::KernelParam::Kind K;
  DType Type;
  TensorSource Src{TensorSource::GraphInput, 0}; // tensors
  unsigned Index = 0;    // scalar / dim index into the graph's lists
  unsigned AlignElems = 1; // tensors: elements of alignment the widest variant needs
  bool Vectorized = false; // tensors: does vector width apply to this pointer
  unsigned ElemBytes = 0;
};

/// An argument slot run() writes on every call: a graph input or output
/// pointer, or a scalar. Every other slot (intermediates, dims, partials)
/// only changes with the dims and is written when they change.
struct CallSlot {
  enum Kind : uint8_t { InPtr, OutPtr, ScalarValue } K;
  DType Type;     // scalars: the parameter's type
  unsigned Slot;  // index into LaunchPlan::Storage
  unsigned Index; // into the run's inputs, outputs or scalars
};

/// A vectorized graph pointer of a launch: variant V needs it aligned to
/// Vecs[V] elements, i.e. 2^(VecShift[V] + ElemShift) bytes.
struct AlignCheck {
  bool IsOutput;
  unsigned Index;
  int ElemShift; // log2 of the element size
};

/// KernelPlan::OutputLedVariant: the tensors whose phases pick the peeled
/// variant led by the output over the one led by the input (codegen::
/// peelLeads). One of ours (an intermediate) is aligned: phase 0.
struct LeadPhases {
  std::optional<AlignCheck> In, Out; // nullopt: an intermediate
  uint64_t VecMask = 0;              // the peeled variants' width - 1
  /// KernelPlan::SamePhasePeeled: the tensors (codegen::samePhaseTensors)
  /// the input-led variant needs at In's phase; any other runs the
  /// output-led one.
  std::vector<std::optional<AlignCheck>> Same;
};

/// One kernel of a horizontal launch (codegen::emitHorizontal): what its
/// own launch would compute, to pick its variant and size its block range.
struct LaunchPart {
  explicit LaunchPart(codegen::LaunchRule Rule) : Rule(Rule) {}

  codegen::LaunchRule Rule;
  SizeExpr Rows, RowLen, Numel;
  std::vector<int> Vecs, VecShift;
  unsigned SlotBegin = 0, SlotEnd = 0; // its parameters in LaunchPlan::Slots
  std::vector<AlignCheck> Align;
  /// Dynamic outer strides of its vectorized strided tensors: a wide variant
  /// needs each a multiple of its width (StrideShift: the fewest trailing
  /// zero bits among them at ValidDims; 64 when there are none).
  std::vector<SizeExpr> StrideAlign;
  int StrideShift = 64;
  std::vector<std::optional<codegen::LaunchShape>> Shapes; // per own variant
};

/// One launch, prepared at compile time from what codegen emitted
/// (codegen::EmittedKernel): its rule, variants and parameter slots. A
/// horizontal launch has Parts: variant K runs each part's variant
/// min(K, last), its grid is the sum of the parts' grids, and its
/// BlockOffset slots (from OffsetSlot on) are written per call from
/// PartOffsets[K].
struct LaunchPlan {
  explicit LaunchPlan(codegen::LaunchRule Rule) : Rule(Rule) {}

  std::string Name; // for messages: the kernel's or the launch's prefix
  std::vector<LaunchPart> Parts; // empty: one kernel
  unsigned OffsetSlot = 0;
  unsigned MaxThreads = 0; // horizontal: the block, flat
  /// Per variant: the first block of parts 1.. at ValidDims.
  std::vector<std::vector<uint32_t>> PartOffsets;

  codegen::LaunchRule Rule;
  SizeExpr Rows;    // product of every domain dim but the last
  SizeExpr RowLen;  // the last domain dim
  SizeExpr Numel;   // whole domain
  std::vector<int> Vecs;
  /// The plain form's variants come first; a kernel with a few-rows form
  /// (KernelPlan::FewRows) has as many more, launched by FewRule when
  /// codegen::launch::useFewRows, then a wide form's (KernelPlan::WideRows)
  /// by WideRule when useWideRows and not the former; then, with
  /// AlignedRule, NumSplit variants: the cluster split's aligned one
  /// (KernelPlan::AlignedCluster), or all its variants
  /// (AlignedClusterPeeled), run instead of the plain form's variant of the
  /// same index when the plain form runs.
  size_t NumPlain = 0;
  size_t NumSplit = 0;
  std::optional<codegen::LaunchRule> FewRule, WideRule, AlignedRule;
  /// AlignedRule's variant stands in for the wide form's variant 0 too
  /// (KernelPlan::AlignedClusterOverWide).
  bool AlignedOverWide = false;
  /// The first variant of the form this run launches (set with the dims).
  size_t FormBase = 0;
  /// The launch rule of variant V's form.
  const codegen::LaunchRule &ruleOf(size_t V) const {
    if (V < NumPlain)
      return Rule;
    if (AlignedRule && V + NumSplit >= Vecs.size())
      return *AlignedRule;
    if (FewRule && V < 2 * NumPlain)
      return *FewRule;
    return *WideRule;
  }
  std::vector<std::string> FnNames; // per variant, widest first
  std::vector<CUfunction> Fns;      // per variant, once loaded
  /// Per variant with LaunchShape::RowLoop: its blocks resident an SM, as
  /// the driver reports once it is loaded (0: not asked yet).
  std::vector<int> Resident;
  std::vector<ArgSlot> Slots;
  std::vector<uint64_t> Storage; // one 8-byte slot per parameter
  std::vector<void *> ArgPtrs;   // points into Storage
  rt::DeviceBuffer Partials, Counter; // full reductions

  // The hot path's tables (ExecutableImpl::prepareHotPath).
  std::vector<CallSlot> PerCall;
  std::vector<AlignCheck> Align;
  std::vector<SizeExpr> StrideAlign; // as LaunchPart's
  int StrideShift = 64;
  /// log2 of each plain variant's width that pointers choose among: all but
  /// an output-led variant, which Lead picks instead of the one before it.
  std::vector<int> VecShift;
  std::optional<LeadPhases> Lead;
  /// Per variant, at ExecutableImpl::ValidDims: the launch shape, or
  /// nullopt when the launch has no elements (skipped).
  std::vector<std::optional<codegen::LaunchShape>> Shapes;

  /// A horizontal launch that splits at large dims (compiler/Horizontal.h
  /// splitsWhenLarge): its parts as launches of their own, in part order
  /// (the same kernels, compiled beside the combined one), which run
  /// instead of it where its parts move more than MaxCombinedBytes
  /// together. Empty: always combined.
  std::vector<LaunchPlan> Alone;
  SizeSum Bytes; // with Alone: the parts' bytes together
  int64_t MaxCombinedBytes = 0;
  /// Whether this launch runs at ValidDims: false for a launch with Alone
  /// above MaxCombinedBytes, and for its Alone launches below.
  bool Active = true;

  /// Whether the launch runs as one at these dims (not its Alone parts).
  bool combinedAt(llvm::ArrayRef<int64_t> Dims) const {
    return Alone.empty() || Bytes.eval(Dims) <= MaxCombinedBytes;
  }
};

/// Calls \p F on every launch plan in launch order: each of \p Launches,
/// followed by its Alone launches.
template <typename Fn> void forEachPlan(std::vector<LaunchPlan> &Launches, Fn F) {
  for (LaunchPlan &L : Launches) {
    F(L);
    for (LaunchPlan &A : L.Alone)
      F(A);
  }
}

/// One launch as run() prepared it: the variant, the grid, or that it is
/// skipped (no elements). Its argument bytes are in LaunchPlan::Storage.
struct PreparedLaunch {
  bool Skip = false;
  CUfunction Fn = nullptr;
  rt::LaunchDims Grid, Block;
  unsigned SharedBytes = 0; // dynamic shared memory (LaunchShape::SharedBytes)
};

/// What the instantiated CUDA graph holds for one launch's kernel node.
struct GraphNodeState {
  CUgraphNode Node = nullptr;
  CUfunction Fn = nullptr;
  rt::LaunchDims Grid, Block;
  unsigned SharedBytes = 0;
  bool Enabled = true;
  std::vector<uint64_t> Args; // same size as LaunchPlan::Storage
};

/// Graph mode (Executable::setCudaGraph, exec/ExecutableGraph.cpp): one
/// kernel node per LaunchPlan Active when it was built (forEachPlan's
/// order), chained in launch order (the stream order of direct launches).
/// One graph per form (ExecutableImpl::GraphForms): disabled nodes are
/// not free in a replay (0.3 us each, W9). Built on the first graph-mode run, then updated in
/// place; destroys the graph and its instance.
class LaunchGraph {
public:
  LaunchGraph() = default;
  ~LaunchGraph();
  LaunchGraph(const LaunchGraph &) = delete;
  LaunchGraph &operator=(const LaunchGraph &) = delete;

  CUgraph Graph = nullptr;
  CUgraphExec Exec = nullptr;
  std::vector<GraphNodeState> Nodes; // forEachPlan's order, Active plans
  std::vector<LaunchPlan *> Plans;   // the same order
};

class ExecutableImpl {
public:
  std::vector<TensorDesc> Inputs, Outputs, Scalars;
  std::vector<std::string> DynDims;
  std::vector<KernelInfo> Kernels;
  std::vector<LaunchPlan> Launches;
  Partition Part;
  std::string PlanText, PlanDot, GraphText, Source, Ptx, Log, Key;
  std::vector<std::string> NvrtcOptions;
  CompileStats Stats;
  std::vector<SizeSum> KernelBytes;
  /// CompileOptions::MixMinRows with dynamic rows: the plan without
  /// MixOrderColumns, which runs take when a mixed kernel's rows
  /// (MixedRows, at the run's dims) are fewer than UnmixedBelow.
  std::unique_ptr<Executable> Unmixed;
  std::vector<SizeExpr> MixedRows;
  int64_t UnmixedBelow = 0;
  /// Whether a run at \p Dims takes Unmixed (false for dims of the wrong
  /// count or negative: the checks of the call report those).
  bool unmixedAt(llvm::ArrayRef<int64_t> Dims) const;

  // Intermediates between kernels: sizes and their current buffers.
  std::vector<SizeExpr> InterNumel;
  // Element counts of the graph's inputs and outputs (for checkArgs).
  std::vector<SizeExpr> InNumel, OutNumel;
  /// A strided input or output: its sizes and strides in the dynamic dims,
  /// checked by prepareDims (span, and an output's overlap).
  struct StridedDesc {
    bool IsOutput;
    unsigned Index;
    std::vector<SizeExpr> Sizes, Strides;
  };
  std::vector<StridedDesc> Strided;
  std::vector<unsigned> InterElemBytes;
  std::vector<rt::DeviceBuffer> InterBuffers;

  // What run() checks per call, laid out once (prepareHotPath): per graph
  // input and output, the element size minus one (pointers must have these
  // bits clear) and whether it holds elements at ValidDims.
  std::vector<uint64_t> InAlignMask, OutAlignMask;
  std::vector<uint8_t> InNonEmpty, OutNonEmpty;
  /// The dims everything that depends only on dims (the tensors' sizes,
  /// intermediate buffers, launch shapes, dim and buffer argument slots) was
  /// last prepared for; a run with the same dims skips all of it.
  std::vector<int64_t> ValidDims;
  bool DimsValid = false;

  std::shared_ptr<const rt::CacheEntry> Entry;
  std::unique_ptr<rt::ModuleSet> Mod;
  /// A partial Entry's background compile (CompileOptions::DeferVariants):
  /// the variants Mod lacks, loaded into DeferredMod by the first run() that
  /// picks one (loadDeferred).
  std::shared_future<std::shared_ptr<const rt::CacheEntry>> Deferred;
  std::unique_ptr<rt::ModuleSet> DeferredMod;
  CUcontext Ctx = nullptr;
  int Device = 0;
  int SmCount = 0;
  bool HaveDevice = false;

  // Graph mode. Declared last: the instance is destroyed before the module
  // whose functions it launches.
  bool UseCudaGraph = false;
  CudaGraphStats GraphStats;
  /// The forms a run has taken: per launch with Alone plans, whether it
  /// ran combined (Active). GraphForm: the form at ValidDims. CudaGraphs:
  /// each form's graph once built (at most MaxGraphForms are kept).
  std::vector<std::vector<bool>> GraphForms;
  size_t GraphForm = 0;
  static constexpr size_t MaxGraphForms = 8;
  std::vector<std::unique_ptr<LaunchGraph>> CudaGraphs;

  /// Builds Launches (and the intermediate buffers' sizes) from the plan and
  /// the emitted kernels (exec/LaunchTable.cpp).
  /// \p Groups: the kernels (indices into Plans and PartEmitted) of each
  /// launch; \p Emitted: each launch as emitted.
  /// \p Splits: per launch, whether its parts also run alone above
  /// \p MaxBytes (LaunchPlan::Alone; their kernels are PartEmitted's).
  void buildLaunches(const Graph &G, llvm::ArrayRef<KernelPlan> Plans,
                     llvm::ArrayRef<std::vector<unsigned>> Groups,
                     llvm::ArrayRef<codegen::EmittedKernel> PartEmitted,
                     llvm::ArrayRef<codegen::EmittedKernel> Emitted,
                     llvm::ArrayRef<SizeSum> LaunchBytes, const std::vector<bool> &Splits,
                     int64_t MaxBytes);
  /// Resolves every launch's variants in Mod and allocates the full
  /// reductions' partials (exec/LaunchTable.cpp).
  void bindFunctions();
  /// Waits for the background compile (rethrowing its error), loads its
  /// variants and fills the launches' missing functions.
  void loadDeferred();

  ExecutableImpl() = default;
  ExecutableImpl(const ExecutableImpl &) = delete;
  ExecutableImpl &operator=(const ExecutableImpl &) = delete;
  /// Waits for a background compile still running (never an error).
  ~ExecutableImpl();
  /// Lays out the per-call tables above from Inputs, Outputs and Launches.
  /// Called once, when the Executable is made.
  void prepareHotPath();

  void setCudaGraph(bool On);
  // exec/ExecutableProfile.cpp
  std::vector<double> profileKernels(llvm::ArrayRef<CUdeviceptr> In,
                                     llvm::ArrayRef<CUdeviceptr> Out,
                                     llvm::ArrayRef<double> Sc, llvm::ArrayRef<int64_t> Dims,
                                     CUstream Stream, unsigned Reps);
  void run(llvm::ArrayRef<CUdeviceptr> In, llvm::ArrayRef<CUdeviceptr> Out,
           llvm::ArrayRef<double> Scalars, llvm::ArrayRef<int64_t> Dims,
           CUstream Stream);

private:
  /// Every check of run()'s arguments, then (when the dims differ from
  /// ValidDims) prepareDims. Formats nothing unless an argument is wrong.
  void checkArgs(llvm::ArrayRef<CUdeviceptr> In, llvm::ArrayRef<CUdeviceptr> Out,
                 llvm::ArrayRef<double> Sc, llvm::ArrayRef<int64_t> Dims);
  /// Checks the dims and the sizes they give every tensor, grows the
  /// intermediates, and recomputes launch shapes and the dim and buffer
  /// argument slots; sets ValidDims. Throws with DimsValid false.
  void prepareDims(llvm::ArrayRef<int64_t> Dims);
  /// A strided tensor's span and (outputs) overlap at these dims.
  void checkStrides(const StridedDesc &D, llvm::ArrayRef<int64_t> Dims) const;
  [[noreturn]] void badPointer(const TensorDesc &T, const SizeExpr &Numel, CUdeviceptr P,
                               const char *What, llvm::ArrayRef<int64_t> Dims) const;
  void growIntermediates(llvm::ArrayRef<int64_t> Dims);
  /// Makes the executable's context current on this thread (run() may be
  /// called from any thread).
  void makeCurrent() const;
  /// Picks L's variant for these pointers, its shape at ValidDims, and
  /// writes the per-call slots of L.Storage (not when the launch is
  /// skipped). Only after checkArgs.
  PreparedLaunch prepareLaunch(LaunchPlan &L, llvm::ArrayRef<CUdeviceptr> In,
                               llvm::ArrayRef<CUdeviceptr> Out, llvm::ArrayRef<double> Sc);
  /// L's launch shapes, stride shifts and dim and buffer slots at Dims.
  void prepareLaunchDims(LaunchPlan &L, llvm::ArrayRef<int64_t> Dims);
  /// The launch shapes of a horizontal launch at these sizes: each part's,
  /// then per variant the sum and the parts' offsets.
  void prepareHorizontalShapes(LaunchPlan &L, llvm::ArrayRef<int64_t> Dims);
  // Graph mode (exec/ExecutableGraph.cpp).
  void runGraph(llvm::ArrayRef<CUdeviceptr> In, llvm::ArrayRef<CUdeviceptr> Out,
                llvm::ArrayRef<double> Sc, CUstream Stream);
  void buildGraph(llvm::ArrayRef<CUdeviceptr> In, llvm::ArrayRef<CUdeviceptr> Out,
                  llvm::ArrayRef<double> Sc);
};

} // namespace jitfuse
