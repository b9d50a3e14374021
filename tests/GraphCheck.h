//===- tests/GraphCheck.h - fused vs unfused vs reference -------*- C++ -*-===//
//
// The one oracle loop of the GPU tier: compile a graph fused and unfused
// (NVRTC runs everywhere, so codegen bugs show on CPU-only machines too),
// and where a GPU exists run both on fresh random inputs with poisoned
// outputs and compare every output to the fp64 reference interpreter.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "driver/Compiler.h"
#include "exec/HostRun.h"
#include "reference/Interpreter.h"
#include "support/Error.h"

#include <random>
#include <string>

namespace jitfuse::test {

/// True when a CUDA device is present; otherwise prints one line saying why
/// the GPU part is skipped.
bool haveGpu();

/// A Compiler whose cache lives in a per-process temp directory.
Compiler &testCompiler();

/// The most a cluster split's peeled variant bounded to two blocks an SM
/// (CompileOptions::RowClustersPeeledBound) may spill: 4-16 B as measured
/// faster than unbounded (bench/ab/s46a.txt).
constexpr int BoundedSplitSpillBytes = 16;

/// Whether variant \p Name of \p E is a peeled (or output-led) variant of
/// a kernel's cluster split bounded by RowClustersPeeledBound.
inline bool boundedSplitVariant(const Executable &E, const std::string &Name) {
  if (E.plan().find("RowClustersPeeledBound)") == std::string::npos)
    return false;
  for (const KernelInfo &K : E.kernels())
    if (!K.AlignedClusterName.empty() && (Name.rfind(K.AlignedClusterName + "_p", 0) == 0 ||
                                          Name.rfind(K.AlignedClusterName + "_o", 0) == 0))
      return true;
  return false;
}

/// The generated program after the device helpers it starts with
/// (codegen/device/jitfuse_device.cuh): the kernels alone, for tests of
/// what they call.
std::string kernelSource(const Executable &E);

/// The text of the kernel named \p Name in \p Kernels (kernelSource), its
/// first variant on, or of the one variant \p Name names ("jf_k0_mul_v8"):
/// from its signature to the next kernel's; "" if absent.
std::string kernelText(const std::string &Kernels, const std::string &Name);

/// Fresh seed per check, printed on failure.
std::mt19937_64 &rng();

/// How checkGraph compiles and runs a graph: the compile options of both
/// compiles (Fuse is set by each: the fused and the unfused plan; the
/// experiments and rules under test are the base's fields, one table of
/// them in driver/Compiler.h) and the check's own choices below.
struct CheckOptions : CompileOptions {
  bool Fused = true;
  bool Unfused = true;
  unsigned MisalignElems = 0;
  /// Per-tensor offsets (HostRunOptions::MisalignEach).
  std::vector<unsigned> MisalignEach;
  /// Inject NaN/+Inf/-Inf into float inputs.
  bool SpecialValues = false;
  double Lo = -2, Hi = 2;
  /// Extra factor on the documented tolerance (1 = the rule as written).
  double TolScale = 1;
  /// Expected kernel count of the fused plan, when set.
  int ExpectFusedKernels = -1;
  /// Expected launch count of the fused plan (horizontal fusion), when set.
  int ExpectFusedLaunches = -1;
};

/// Random bindings for every input (values exact in their dtype) and the
/// given scalars/dims.
Bindings randomBindings(const Graph &G, const std::map<std::string, int64_t> &Dims,
                        const std::map<std::string, double> &Scalars,
                        const CheckOptions &Opts = {});

/// Compiles (and on a GPU runs and compares) G; returns the number of
/// outputs compared on the GPU (0 without one). An output element passes
/// the rtol rule (toleranceFor) or, failing it, the reference's per-element
/// error bound (reference/ErrorBound.h), as in the random-graph tier: a sum
/// that cancels to a small result carries the rounding of its terms. On a GPU, a fused plan with
/// horizontal launches is also run with one launch per kernel
/// (CompileOptions::HorizontalFusion off), so each form has the reference
/// as its oracle. Fails the current Catch2
/// test with the mismatch description.
int checkGraph(const Graph &G, const Bindings &B, const CheckOptions &Opts = {});

/// The coarsest float dtype computed on any path into Out. A partition may
/// materialize (round) any computed node at a kernel boundary, and the
/// unfused run rounds them all, so a correct run is only as exact as that.
DType coarsestComputed(const Graph &G, NodeId Out);

/// The random tier's rtol for output Out: toleranceFor the coarsest computed
/// dtype on its path and its longest reduction.
double pathTolerance(const Graph &G, NodeId Out, const std::map<std::string, int64_t> &Dims);

/// The message of the jitfuse::Error \p F throws ("" when it does not
/// throw).
template <typename Fn> std::string errorOf(Fn &&F) {
  try {
    F();
  } catch (const Error &E) {
    return E.what();
  }
  return "";
}

} // namespace jitfuse::test
