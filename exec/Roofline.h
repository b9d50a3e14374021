//===- exec/Roofline.h - per-kernel bytes, time and bandwidth ---*- C++ -*-===//
//
// The plan predicts each kernel's minimal traffic (every input read once,
// every output written once). After a timed run (Executable::profileKernels)
// the roofline puts the achieved bandwidth beside it, as GB/s and as a share
// of a measured ceiling, so a kernel that misses the memory limit is named.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "exec/Executable.h"

#include <llvm/ADT/ArrayRef.h>

#include <string>
#include <vector>

namespace jitfuse {

struct KernelRoofline {
  std::string Name;
  KernelKind Kind = KernelKind::Elementwise;
  int64_t Bytes = 0;      // predicted minimal bytes at the given dims
  double MedianUs = 0;    // 0: not timed (or skipped: no elements)
  double GBs = 0;         // Bytes / MedianUs; 0 when not timed
  double PctCeiling = 0;  // GBs / ceiling * 100; 0 without a ceiling
  /// The launch running it (KernelInfo::Launch). Kernels sharing a launch
  /// (horizontal fusion) cannot be timed apart: MedianUs, GBs and
  /// PctCeiling are then the launch's (all its kernels' bytes in its time).
  unsigned Launch = 0;
  bool SharedLaunch = false;
};

/// One row per kernel of X at Dims (Executable::dynamicDims() order).
/// MedianUs is empty (prediction only) or holds one time per kernel;
/// CeilingGBs <= 0 leaves the percentage out. Throws jitfuse::Error when
/// MedianUs has the wrong length or a negative time.
std::vector<KernelRoofline> kernelRoofline(const Executable &X, llvm::ArrayRef<int64_t> Dims,
                                           llvm::ArrayRef<double> MedianUs = {},
                                           double CeilingGBs = 0);

/// A readable table of Rows with a total line (each launch's time counted
/// once); "-" where nothing was timed.
std::string formatRoofline(llvm::ArrayRef<KernelRoofline> Rows, double CeilingGBs = 0);

} // namespace jitfuse
