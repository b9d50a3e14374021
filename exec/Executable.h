//===- exec/Executable.h - a compiled graph, ready to run -------*- C++ -*-===//
//
// What compile() (driver/Compiler.h) returns: the kernels' launch tables,
// their module, and everything a user inspects (plan, source, PTX, key).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/KernelPlan.h"
#include "compiler/Partition.h"
#include "ir/Graph.h"
#include "runtime/Nvrtc.h"

#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

namespace jitfuse {

/// A graph input, output or scalar as the executable expects it.
struct TensorDesc {
  std::string Name;
  DType Type;
  Shape Dims;
  /// Element strides as declared (Graph::input/output with strides); empty:
  /// contiguous. Named strides are dynamic dims, bound by run()'s Dims.
  Shape Strides = {};
};

/// One kernel of a compiled graph, for inspection.
struct KernelInfo {
  std::string Name;
  KernelKind Kind;
  std::vector<NodeId> Nodes, Inputs, Outputs;
  std::vector<int> Vecs;
  int ThreadsX = 0, RowsPerBlock = 0;
  /// This kernel's variants, without the helpers. A part of a horizontal
  /// launch: its text as a launch of its own would have it (the program
  /// holds the same bodies as __device__ functions of the launch).
  std::string Source;
  /// The launch running it (several kernels share one when horizontally
  /// fused; Executable::numLaunches).
  unsigned Launch = 0;
  /// Its few-rows form (KernelPlan::FewRows: each row split over a
  /// cluster, launched instead when the run's rows are few enough,
  /// codegen::launch::useFewRows): the name and how many variants it adds
  /// ("" and 0 when there is none).
  std::string FewRowsName;
  unsigned FewRowsVariants = 0;
  /// Its wide form (KernelPlan::WideRows: 1024 threads a row, or 2 chunks
  /// a thread for a row scheduled at 4, launched
  /// when the run's rows are at most one block an SM,
  /// codegen::launch::useWideRows; CompileOptions::RowWideRows): likewise.
  std::string WideRowsName;
  unsigned WideRowsVariants = 0;
  /// Its cluster split (KernelPlan::AlignedCluster, CompileOptions::
  /// RowClustersAligned: run instead of the plain form's variant of the
  /// same index when neither form above runs): the split's name, "" when
  /// none, and its variants: the aligned one, or all
  /// (CompileOptions::RowClustersPeeled, rows of 4-byte elements).
  std::string AlignedClusterName;
  unsigned AlignedClusterVariants = 0;
};

struct CompileStats {
  bool CacheHit = false;
  double CompileMs = 0; // codegen + NVRTC (or cache lookup)
  double LoadMs = 0;    // module load
  /// Variants left to a background compile (CompileOptions::DeferVariants);
  /// 0 on a cache hit.
  unsigned DeferredVariants = 0;
};

/// Counters of CUDA graph mode (Executable::setCudaGraph): what the replays
/// cost, for tests and tuning.
struct CudaGraphStats {
  uint64_t Instantiations = 0; // graphs built and instantiated
  uint64_t Replays = 0;        // cuGraphLaunch calls
  uint64_t NodeUpdates = 0;    // kernel nodes given new arguments, grid or variant
  uint64_t NodeToggles = 0;    // kernel nodes disabled (no elements) or enabled again
};

class ExecutableImpl;

/// A compiled graph, loaded on its device. One Executable serves one thread
/// and one stream at a time: run() fills per-kernel argument slots, and the
/// intermediate buffers between kernels are shared by every run, so two runs
/// must not overlap on the GPU (runs on one stream never do). For concurrent
/// streams or threads, compile the graph once per stream: the second
/// compile() is a cache hit.
class Executable {
public:
  Executable(Executable &&) noexcept;
  Executable &operator=(Executable &&) noexcept;
  ~Executable();

  /// Runs the graph. Pointers are device pointers in graph order
  /// (Graph::inputs(), Graph::outputs()); Scalars in Graph::scalars() order;
  /// Dims gives each dynamic dim in Graph::dynamicDims() order, named
  /// strides included (a strided tensor's span must stay within 2^48
  /// elements and an output's elements must not overlap). Enqueues on
  /// Stream and returns; no allocation unless a dynamic dim grew (or, in
  /// graph mode, on the first run, which builds the graph). At dims where
  /// planAt() is another plan, that plan runs.
  void run(llvm::ArrayRef<CUdeviceptr> Inputs, llvm::ArrayRef<CUdeviceptr> Outputs,
           llvm::ArrayRef<double> Scalars = {}, llvm::ArrayRef<int64_t> Dims = {},
           CUstream Stream = nullptr);

  /// CUDA graph mode; off by default. When on, run() enqueues all kernels
  /// with one cuGraphLaunch: the first run builds and instantiates a graph
  /// with one kernel node per launch (a horizontal launch is one node), in launch order; each later run
  /// compares every node's argument bytes, grid and vector variant with what
  /// the instantiated graph holds and updates only the nodes that differ
  /// (cuGraphExecKernelNodeSetParams), so new pointers, scalars and dims
  /// never re-instantiate; a kernel with no elements is disabled, not
  /// removed. Results are bitwise those of direct launches. Off destroys
  /// the graph. Throws jitfuse::Error when the device's driver lacks the
  /// graph calls (CUDA 12.0+); without a device it only records the mode
  /// and run() throws its usual no-device error.
  void setCudaGraph(bool On);

  /// The plan a run at \p Dims takes: this one, or (CompileOptions::
  /// MixMinRows, a mixed kernel's rows dynamic) the plan without
  /// MixOrderColumns when a mixed kernel's rows are fewer than the
  /// option's. run() and setCudaGraph() follow it; every other call
  /// describes or times this plan (call it on planAt(Dims) for the plan
  /// that runs). Dims of the wrong count or negative: this plan.
  const Executable &planAt(llvm::ArrayRef<int64_t> Dims) const;
  /// That other plan, or null when every run takes this one.
  const Executable *unmixed() const;

  /// Times each kernel: runs the executable Reps times with direct launches
  /// (graph mode or not), each kernel between CUDA events on Stream, waits
  /// for the results, and returns the median microseconds per kernel in
  /// kernels() order (0 for a kernel with no elements at these dims; the
  /// kernels of one horizontal launch each get the launch's time). Same
  /// arguments and checks as run(); it synchronizes, so it is for tuning,
  /// not for the hot path. Inputs are not rotated: tensors smaller than the
  /// L2 cache time from L2. exec/Roofline.h turns the times into GB/s.
  std::vector<double> profileKernels(llvm::ArrayRef<CUdeviceptr> Inputs,
                                     llvm::ArrayRef<CUdeviceptr> Outputs,
                                     llvm::ArrayRef<double> Scalars = {},
                                     llvm::ArrayRef<int64_t> Dims = {},
                                     CUstream Stream = nullptr, unsigned Reps = 20);
  bool cudaGraph() const;
  const CudaGraphStats &cudaGraphStats() const;

  /// Fused kernels of the plan (kernels() has one entry each), whether or
  /// not some share a launch.
  unsigned numKernels() const;
  /// Kernel launches per run: numKernels() less the kernels that run inside
  /// another's launch (horizontal fusion, CompileOptions::HorizontalFusion).
  unsigned numLaunches() const;
  /// Whether launch \p Launch (a horizontal one) runs its kernels as
  /// launches of their own at these dims: its parts move more than
  /// CompileOptions::HorizontalMaxBytes together (compiler/Horizontal.h).
  bool launchSplitAt(unsigned Launch, llvm::ArrayRef<int64_t> Dims) const;
  /// Kernel launches a run at these dims makes (numLaunches(), plus the
  /// parts of each launch split there, less one each), empty ones included.
  unsigned numLaunchesAt(llvm::ArrayRef<int64_t> Dims) const;
  llvm::ArrayRef<KernelInfo> kernels() const;
  llvm::ArrayRef<TensorDesc> inputs() const;
  llvm::ArrayRef<TensorDesc> outputs() const;
  llvm::ArrayRef<TensorDesc> scalars() const;
  llvm::ArrayRef<std::string> dynamicDims() const;
  const Partition &partition() const;
  /// The fusion plan: kernels, nodes, bytes, and why each boundary exists.
  const std::string &plan() const;
  /// The plan as Graphviz DOT, clusters as subgraphs.
  const std::string &planDot() const;
  const std::string &graphText() const;
  /// The whole NVRTC program (helpers + every kernel).
  const std::string &source() const;
  /// PTX; compiled on first request unless CompileOptions::WantPtx.
  const std::string &ptx();
  /// NVRTC's log: warnings, and ptxas's report of each compiled variant
  /// (variants deferred to the background join it once loaded).
  const std::string &compileLog() const;
  /// Registers, stack, spills and static shared memory of each compiled
  /// kernel variant, read from compileLog() (rt::parsePtxasReport).
  std::vector<rt::KernelResources> kernelResources() const;
  const std::string &cacheKey() const;
  const CompileStats &stats() const;
  /// Bytes each kernel reads and writes for these dims (minimal traffic).
  std::vector<int64_t> kernelBytes(llvm::ArrayRef<int64_t> Dims) const;
  /// Whether a CUDA driver and device are present to run on.
  bool canRun() const;

private:
  friend class Compiler;
  explicit Executable(std::unique_ptr<ExecutableImpl> Impl);
  std::unique_ptr<ExecutableImpl> Impl;
};

} // namespace jitfuse
