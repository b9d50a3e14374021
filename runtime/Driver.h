//===- runtime/Driver.h - the CUDA driver, dlopen'ed ------------*- C++ -*-===//
//
// jitfuse never links libcuda: the library, its tools and its CPU tests must
// load on machines without a GPU driver. The driver is dlopen'ed on first use
// and its entry points are kept in one table of function pointers whose types
// come from <cuda.h>.
//
//   const auto &D = Driver::get();
//   D.check(D.api().cuCtxSynchronize(), "cuCtxSynchronize");
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cuda.h>

#include <string>

namespace jitfuse::rt {

/// Function pointers into libcuda.so.1. Members are named like the cuda.h
/// functions; cuda.h's macros rename both the member and every call site to
/// the versioned symbol, so `Api.cuMemAlloc(...)` calls cuMemAlloc_v2.
struct DriverApi {
#define JITFUSE_DRIVER_FN(Name) decltype(&::Name) Name = nullptr;
#include "runtime/DriverFunctions.def"
};

class Driver {
public:
  /// The process-wide driver; loaded and cuInit'ed on the first call
  /// (thread-safe). Never throws: check available().
  static Driver &get();

  /// Loads \p LibraryName in a fresh instance. For tests and diagnostics
  /// (e.g. loading the toolkit's stub library); production code uses get().
  explicit Driver(llvm::StringRef LibraryName);
  ~Driver() = default;
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

  bool available() const { return Available; }
  /// Why the driver cannot be used, e.g. "libcuda.so.1 not found: <dlerror>"
  /// or "cuInit failed: CUDA_ERROR_NO_DEVICE (...)". Empty when available.
  const std::string &unavailableReason() const { return Reason; }

  /// The function table. Throws jitfuse::Error naming the reason when the
  /// driver is unavailable, so no caller can reach a null pointer.
  const DriverApi &api() const;

  /// Throws jitfuse::Error("<What> failed: CUDA_ERROR_XXX (<description>)")
  /// unless \p R is CUDA_SUCCESS.
  void check(CUresult R, llvm::StringRef What) const;

  /// "CUDA_ERROR_XXX (<description>)", or "CUresult <n>" when the driver
  /// cannot name it.
  std::string errorString(CUresult R) const;

  /// The driver's CUDA version as reported by cuDriverGetVersion (e.g. 13000),
  /// 0 when unavailable.
  int version() const { return Version; }

private:
  void load(llvm::StringRef LibraryName);

  void *Handle = nullptr;
  DriverApi Api;
  bool Available = false;
  int Version = 0;
  std::string Reason;
};

} // namespace jitfuse::rt
