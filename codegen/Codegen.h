//===- codegen/Codegen.h - kernel plans to CUDA C++ source ------*- C++ -*-===//
//
// Codegen owns a kernel's interface: emitKernel returns its text (every
// vector-width variant), its parameter list in declaration order and its
// launch rule. Execution fills arguments and launches from these alone.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/KernelPlan.h"
#include "codegen/LaunchRule.h"

#include <llvm/ADT/STLExtras.h>

#include <optional>
#include <string>
#include <vector>

namespace jitfuse::codegen {

/// One kernel parameter, in declaration order. The runtime fills an
/// argument array in exactly this order.
struct KernelParam {
  /// BlockOffset: a horizontal launch's first block of part Index (>= 1);
  /// never in a single kernel's list.
  enum Kind : uint8_t { Input, Output, Scalar, DynDim, Partials, Counter, BlockOffset };
  Kind K;
  unsigned Index; // into Plan.Inputs / Outputs / Scalars / DynDims
  DType Type;     // element type (tensors) or value type (scalars)
};

/// One kernel as emitted: what a program needs (text) and what execution
/// needs (variant names, parameters, launch rule).
struct EmittedKernel {
  struct Variant {
    int Vec;          // elements per vector access
    std::string Name; // the __global__ function's name
    std::string Text; // its definition
    /// The plain form's variants come first, then the few-rows form's
    /// (KernelPlan::FewRows), then the wide form's (KernelPlan::WideRows),
    /// then the cluster split's aligned variant (KernelPlan::AlignedCluster;
    /// with AlignedClusterPeeled, all its variants in the plain order).
    enum Form : uint8_t { Plain, FewRows, WideRows, AlignedCluster } F = Plain;
    /// The peeled variant (any alignment), not the aligned one.
    bool Peeled = false;
    /// The peeled variant led by the output (KernelPlan::OutputLedVariant).
    bool OutputLed = false;
  };
  /// Comment block: what it computes, its params. A horizontal launch's
  /// header also defines the parts' device functions its variants call
  /// (joinProgram and splitProgram put the header before the variants in
  /// every program that holds one).
  std::string Header;
  /// Widest first; the last plain one has Vec 1. Then the few-rows form's
  /// variants, if any, in the same order (the launch picks the same index
  /// among them), the wide form's likewise, and last the cluster split's
  /// aligned variant (KernelPlan::AlignedCluster), if any.
  std::vector<Variant> Variants;
  std::vector<KernelParam> Params;
  LaunchRule Launch;
  /// The few-rows form's launch rule (KernelPlan::FewRows).
  std::optional<LaunchRule> FewRowsLaunch;
  /// The wide form's launch rule (KernelPlan::WideRows).
  std::optional<LaunchRule> WideRowsLaunch;
  /// The cluster split's launch rule (KernelPlan::AlignedCluster): its
  /// variants are the last (one, the aligned, or as many as the plain form's
  /// with KernelPlan::AlignedClusterPeeled).
  std::optional<LaunchRule> AlignedClusterLaunch;
  /// KernelPlan::AlignedClusterOverWide.
  bool AlignedClusterOverWide = false;

  /// How many variants are the cluster split's (the last ones).
  size_t splitVariants() const {
    return static_cast<size_t>(llvm::count_if(
        Variants, [](const Variant &V) { return V.F == Variant::AlignedCluster; }));
  }
  /// How many variants are of the plain form (the first ones).
  size_t plainVariants() const {
    size_t N = 0;
    while (N < Variants.size() && Variants[N].F == Variant::Plain)
      ++N;
    return N;
  }
  /// The plain variants a horizontal launch shares: all but an output-led
  /// one, which is picked from two pointers of this kernel alone.
  size_t sharedVariants() const {
    size_t N = plainVariants();
    return N > 1 && Variants[N - 1].OutputLed ? N - 1 : N;
  }
  /// Header and every variant: the kernel's part of the program.
  std::string source() const;
};

/// The opening of variant \p VariantName's definition up to its parameter
/// list: `extern "C" __global__ void __launch_bounds__(threads[, blocks
/// an SM]) [__cluster_dims__(...)] name(`; \p Peeled: the peeled variant's
/// (KernelPlan::PeeledMinBlocksPerSm). Horizontal fusion rewrites it.
std::string kernelOpening(const KernelPlan &P, const std::string &VariantName, bool Peeled);

/// The tensors a peeled variant of \p P aligns its chunks to (indices into
/// P.Inputs and P.Outputs, -1 for none): the first input over the whole
/// domain (loads are most of the traffic) and the first such output. The
/// variant follows the input when there is one, unless it is the output-led
/// copy (KernelPlan::OutputLedVariant); the launch compares their phases.
struct PeelLeads {
  int Input = -1;
  int Output = -1;
};
PeelLeads peelLeads(const Graph &G, const KernelPlan &P);

/// KernelPlan::SamePhasePeeled: the tensors the input-led peeled variant
/// takes to sit at the lead input's phase (indices into P.Inputs and
/// P.Outputs, the lead input not among them): those of the domain's own
/// shape, contiguous, with the lead's element size, so that a chunk aligned
/// for the lead is aligned for them whenever their pointers' phases are the
/// lead's; inputs also a row vector of a static row that is whole chunks
/// (a norm's weight). Empty unless P.SamePhasePeeled.
struct SamePhaseTensors {
  std::vector<int> Inputs, Outputs;
  bool empty() const { return Inputs.empty() && Outputs.empty(); }
};
SamePhaseTensors samePhaseTensors(const Graph &G, const KernelPlan &P);

/// Emits every vector-width variant of one kernel. Pure and
/// byte-deterministic.
EmittedKernel emitKernel(const Graph &G, const KernelPlan &P);

/// Horizontal fusion: the kernels \p Parts (indices into \p Plans and \p
/// PartKernels, their emitted forms) as one launch named \p Name. Each part
/// variant becomes a __device__ function of the same body that reads
/// blockIdx, gridDim and threadIdx from parameters; the __global__ variant
/// dispatches a block to part I when blockIdx.x is in [b_I, b_I+1) (b_0 = 0,
/// b_n = gridDim.x), hands it blockIdx.x - b_I, a grid of b_I+1 - b_I and
/// the part's 2-D thread index of the flat threadIdx.x, and lets the threads
/// beyond the part's block (whole warps) return first. The offsets b_1 ..
/// b_n-1 are BlockOffset parameters, after every part's own: the host
/// computes them from each part's LaunchRule at the run's dims. Variant K
/// runs variant min(K, last) of each part, so variant K serves the pointers
/// every part's variant K (or its last) serves; the last variant serves any.
/// Params: every part's parameters in part order, then the offsets.
EmittedKernel emitHorizontal(const Graph &G, llvm::ArrayRef<KernelPlan> Plans,
                             llvm::ArrayRef<EmittedKernel> PartKernels,
                             llvm::ArrayRef<unsigned> Parts, const std::string &Name);

/// The device helpers every program starts with (codegen/device/*.cuh).
const std::string &deviceHelpers();

/// One NVRTC program holding all kernels of a compiled graph.
std::string joinProgram(llvm::ArrayRef<EmittedKernel> Kernels);
/// joinProgram of freshly emitted kernels.
std::string emitProgram(const Graph &G, llvm::ArrayRef<KernelPlan> Plans);

/// The same kernels split into up to \p Parts programs (each with the device
/// helpers) for compiling in parallel: every kernel variant in exactly one
/// part, assigned round robin. Pure and byte-deterministic for given Parts.
struct ProgramPart {
  std::string Source;
  std::vector<std::string> Kernels; // variant names defined by Source
};
std::vector<ProgramPart> splitProgram(llvm::ArrayRef<EmittedKernel> Kernels, unsigned Parts);
/// splitProgram of freshly emitted kernels.
std::vector<ProgramPart> emitProgramParts(const Graph &G, llvm::ArrayRef<KernelPlan> Plans,
                                          unsigned Parts);

} // namespace jitfuse::codegen
