//===- codegen/Codegen.h - kernel plans to CUDA C++ source ------*- C++ -*-===//
#pragma once

#include "codegen/KernelPlan.h"

#include <string>
#include <vector>

namespace jitfuse::codegen {

/// One kernel parameter, in declaration order. The runtime fills an
/// argument array in exactly this order.
struct KernelParam {
  enum Kind : uint8_t { Input, Output, Scalar, DynDim, Partials, Counter };
  Kind K;
  unsigned Index; // into Plan.Inputs / Outputs / Scalars / DynDims
  DType Type;     // element type (tensors) or value type (scalars)
};

std::vector<KernelParam> kernelParams(const Graph &G, const KernelPlan &P);

/// The device helpers every program starts with (codegen/device/*.cuh).
const std::string &deviceHelpers();

/// CUDA source of every vector-width variant of one kernel. Pure and
/// byte-deterministic.
std::string emitKernel(const Graph &G, const KernelPlan &P);

/// One NVRTC program holding all kernels of a compiled graph.
std::string emitProgram(const Graph &G, llvm::ArrayRef<KernelPlan> Plans);
/// emitProgram from the emitKernel results, for a caller that keeps them.
std::string joinProgram(llvm::ArrayRef<std::string> KernelSources);

/// The same kernels split into up to \p Parts programs (each with the device
/// helpers) for compiling in parallel: every kernel variant in exactly one
/// part, assigned round robin. Pure and byte-deterministic for given Parts.
struct ProgramPart {
  std::string Source;
  std::vector<std::string> Kernels; // variant names defined by Source
};
std::vector<ProgramPart> emitProgramParts(const Graph &G, llvm::ArrayRef<KernelPlan> Plans,
                                          unsigned Parts);

} // namespace jitfuse::codegen
