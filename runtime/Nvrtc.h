//===- runtime/Nvrtc.h - CUDA C++ to CUBIN with NVRTC -----------*- C++ -*-===//
//
// A thin, checked wrapper over NVRTC. Kernels are extern "C", so no
// name-expression lowering is needed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <string>
#include <vector>

namespace jitfuse::rt {

struct CompiledProgram {
  std::vector<char> Cubin;
  /// Only filled when PTX was requested.
  std::string Ptx;
  /// NVRTC's log for the CUBIN compile (warnings); often empty.
  std::string Log;
};

/// Compiles \p Source to a CUBIN. \p Options must name a real architecture
/// (`--gpu-architecture=sm_XX` or `-arch=sm_XX`): NVRTC only emits a CUBIN
/// for one. With \p WantPtx the source is compiled a second time for the
/// matching virtual architecture (compute_XX), since an sm_ compile yields no
/// PTX; that costs a second front-end pass, so only on request.
/// Throws jitfuse::Error carrying the full NVRTC log and the options.
CompiledProgram compileCuda(llvm::StringRef Source, llvm::StringRef ProgramName,
                            llvm::ArrayRef<std::string> Options,
                            bool WantPtx = false);

/// Compiles each of \p Sources to a CUBIN (compileCuda without PTX) on up
/// to \p Threads threads at once; results in the order of Sources. When a
/// program fails, the error of the first failing one (in that order) is
/// thrown after every thread has finished.
std::vector<CompiledProgram> compileCudaParallel(llvm::ArrayRef<std::string> Sources,
                                                 llvm::StringRef ProgramName,
                                                 llvm::ArrayRef<std::string> Options,
                                                 unsigned Threads);

/// Identifies the NVRTC in use for cache keys: "<major>.<minor>" plus the
/// loaded library's file name and size, so a patch-level upgrade (same
/// major.minor, different code generator) does not reuse stale CUBINs.
/// Computed once per process.
const std::string &nvrtcVersionString();

/// The minimal deterministic option set: target arch, C++17, -minimal,
/// ptxas's resource report in the log (--ptxas-options=-v: the code is the
/// same), and the CUDA include directory jitfuse was built against.
std::vector<std::string> defaultNvrtcOptions(int SmMajor, int SmMinor);

/// What ptxas reported for one compiled kernel (an `.entry`) in an NVRTC
/// log made with --ptxas-options=-v.
struct KernelResources {
  std::string Name;
  int Registers = 0;          // a thread
  int StackBytes = 0;         // stack frame a thread
  int SpillStoreBytes = 0;    // register spills a thread
  int SpillLoadBytes = 0;
  int StaticSharedBytes = 0;  // a block (dynamic shared memory not included)
};

/// Every kernel ptxas reported in \p Log, in the log's order; kernels
/// without a report are absent.
std::vector<KernelResources> parsePtxasReport(llvm::StringRef Log);

} // namespace jitfuse::rt
