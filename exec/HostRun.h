//===- exec/HostRun.h - run an executable on host tensors -------*- C++ -*-===//
//
// For tests, examples and tools: copies host tensors to the device, runs,
// and copies the outputs back. Not the hot path (it allocates).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "exec/Executable.h"
#include "reference/Interpreter.h"

#include <map>
#include <string>
#include <vector>

namespace jitfuse {

struct HostRunOptions {
  /// Fill outputs with 0xFF bytes (NaN for floats) first, so elements the
  /// kernels never write show up.
  bool Poison = true;
  /// Offset every input and output by this many elements from an aligned
  /// allocation, to exercise the narrower vector variants.
  unsigned MisalignElems = 0;
  /// When not empty: each tensor's own offset in elements instead, inputs
  /// then outputs in order, cycling (tensors at different phases exercise a
  /// peeled kernel's per-access alignment checks).
  std::vector<unsigned> MisalignEach;
  /// Bytes of 0xA5 guard before and after every output, checked after the
  /// runs: a kernel that writes outside its tensor fails with an Error.
  unsigned GuardBytes = 64;
  /// Runs of the executable (>1 to check determinism or reuse).
  unsigned Repeat = 1;
  /// After the runs, time each kernel over this many more runs
  /// (Executable::profileKernels) and store the medians here; 0: don't.
  unsigned ProfileReps = 0;
  std::vector<double> *KernelMedianUs = nullptr;
};

/// Runs X on B's tensors. A strided input is spread over its strides with
/// NaN (0xFF bytes) in the gaps; one whose strides put several elements at
/// one offset (a zero stride) must hold equal values there (an Error
/// otherwise: the device sees one of them). A strided output's gaps must
/// stay untouched.
std::map<std::string, HostTensor> runOnDevice(Executable &X, const Bindings &B,
                                              const HostRunOptions &Opts = {});

/// Makes B's tensor of every strided input of G consistent with its layout
/// at B's dims: elements its strides place at one offset (a zero stride)
/// take the value of the first of them, as a buffer read through those
/// strides would give. For tests and tools that draw random inputs.
void foldStridedInputs(const Graph &G, Bindings &B);

} // namespace jitfuse
