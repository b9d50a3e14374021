//===- runtime/Module.h - Loaded CUBINs and kernel launches -----*- C++ -*-===//
#pragma once

#include "support/Error.h"

#include <cuda.h>
#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <string>
#include <vector>

namespace jitfuse::rt {

/// The driver refused the binary itself (corrupt, or built for another GPU).
/// Distinct from other load failures so the caller can invalidate the cache
/// entry and recompile instead of failing.
class ImageError : public Error {
public:
  ImageError(const std::string &Msg, CUresult Result)
      : Error(Msg), Result(Result) {}
  CUresult result() const { return Result; }

private:
  CUresult Result;
};

/// True for the load results that mean "this binary is unusable here":
/// CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_NO_BINARY_FOR_GPU,
/// CUDA_ERROR_INVALID_PTX, CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
bool isImageError(CUresult R);

/// A CUBIN loaded into the current context; unloaded on destruction.
class Module {
public:
  /// Throws ImageError when the driver rejects the image, jitfuse::Error for
  /// any other failure. \p KernelNames, when given, are what the module is
  /// expected to contain; they only improve error messages.
  explicit Module(llvm::ArrayRef<char> Image,
                  llvm::ArrayRef<std::string> KernelNames = {});
  ~Module();
  Module(Module &&Other) noexcept;
  Module &operator=(Module &&Other) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// Throws jitfuse::Error naming \p Name and the kernels the module has.
  CUfunction function(llvm::StringRef Name) const;
  CUmodule get() const { return Handle; }

  /// Kernel names in the module: enumerated by the driver when it can
  /// (CUDA 12.4+), else the names given at construction.
  std::vector<std::string> kernelNames() const;

private:
  void reset() noexcept;

  CUmodule Handle = nullptr;
  std::vector<std::string> ExpectedNames;
};

/// The kernels of one cache entry's blob: one CUBIN, or an image bundle
/// (runtime/ImageBundle.h) loaded as one module per image.
class ModuleSet {
public:
  /// Throws ImageError when the driver rejects an image or the bundle is
  /// damaged, jitfuse::Error for any other failure.
  explicit ModuleSet(llvm::ArrayRef<char> Blob,
                     llvm::ArrayRef<std::string> KernelNames = {});

  /// Throws jitfuse::Error naming \p Name when no image defines it.
  CUfunction function(llvm::StringRef Name) const;
  /// Whether a bundle's images name \p Name (a single CUBIN names nothing,
  /// so false).
  bool names(llvm::StringRef Name) const;
  size_t size() const { return Modules.size(); }

private:
  std::vector<Module> Modules;
  /// Bundle: kernel name -> index into Modules, sorted by name.
  std::vector<std::pair<std::string, unsigned>> Owner;
};

struct LaunchDims {
  unsigned X = 1, Y = 1, Z = 1;
};

/// Lets \p F launch with up to \p Bytes of dynamic shared memory (above
/// 48 KB a kernel must opt in; CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
/// Throws jitfuse::Error naming \p Kernel when the device refuses.
void allowDynamicShared(CUfunction F, unsigned Bytes, llvm::StringRef Kernel);
/// Blocks of \p BlockThreads threads with \p SharedBytes of dynamic shared
/// memory that one SM holds at once for kernel \p F (the driver's occupancy
/// calculator: its registers, shared memory and launch bounds); throws
/// jitfuse::Error naming \p Kernel when the driver fails.
int residentBlocksPerSm(CUfunction F, int BlockThreads, size_t SharedBytes,
                        llvm::StringRef Kernel);

/// cuLaunchKernel with its result checked. \p Args follows cuLaunchKernel's
/// kernelParams convention: one pointer per kernel parameter.
void launchKernel(CUfunction F, LaunchDims Grid, LaunchDims Block,
                  unsigned SharedBytes, CUstream Stream, void **Args);

} // namespace jitfuse::rt
