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

/// One kernel as emitted: what a program needs (text) and what execution
/// needs (variant names, parameters, launch rule).
struct EmittedKernel {
  struct Variant {
    int Vec;          // elements per vector access
    std::string Name; // the __global__ function's name
    std::string Text; // its definition
  };
  std::string Header;            // comment block: what it computes, its params
  std::vector<Variant> Variants; // widest first; the last has Vec 1
  std::vector<KernelParam> Params;
  LaunchRule Launch;

  /// Header and every variant: the kernel's part of the program.
  std::string source() const;
};

/// Emits every vector-width variant of one kernel. Pure and
/// byte-deterministic.
EmittedKernel emitKernel(const Graph &G, const KernelPlan &P);

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
