//===- runtime/Driver.cpp - dlopen'ed CUDA driver API ---------------------===//

#include "runtime/Driver.h"

#include "support/Error.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallVector.h>

#include <dlfcn.h>

namespace jitfuse::rt {

// Two levels so the argument is macro-expanded first: cuda.h maps
// cuMemAlloc to cuMemAlloc_v2, and that versioned name is what libcuda
// exports with the ABI the header describes.
#define JITFUSE_STRINGIFY_IMPL(X) #X
#define JITFUSE_STRINGIFY(X) JITFUSE_STRINGIFY_IMPL(X)

/// Names for the results that matter when the driver cannot name them itself
/// (the toolkit's stub library answers cuGetErrorName with an error).
static const char *fallbackErrorName(CUresult R) {
  switch (R) {
  case CUDA_ERROR_NOT_INITIALIZED:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_INVALID_IMAGE:
    return "CUDA_ERROR_INVALID_IMAGE";
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  default:
    return nullptr;
  }
}

Driver &Driver::get() {
  // A function-local static gives thread-safe one-time initialization. The
  // library is never dlclose'd: kernels, modules and contexts may be torn
  // down by other static destructors after this one would run.
  static Driver Instance("libcuda.so.1");
  return Instance;
}

Driver::Driver(llvm::StringRef LibraryName) { load(LibraryName); }

void Driver::load(llvm::StringRef LibraryName) {
  std::string Name = LibraryName.str();
  Handle = ::dlopen(Name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!Handle) {
    const char *Why = ::dlerror();
    Reason = fmt::format("{} not found: {}", Name,
                         Why ? Why : "unknown dlopen error");
    return;
  }

  llvm::SmallVector<std::string, 4> Missing;
  auto Resolve = [&](const char *Symbol, bool Required) -> void * {
    if (void *Ptr = ::dlsym(Handle, Symbol))
      return Ptr;
    // Drivers before 12.8 export only the unversioned cuEventElapsedTime;
    // its signature is the same, so accept it rather than refuse the driver.
    if (llvm::StringRef(Symbol) == "cuEventElapsedTime_v2")
      if (void *Ptr = ::dlsym(Handle, "cuEventElapsedTime"))
        return Ptr;
    if (Required)
      Missing.push_back(Symbol);
    return nullptr;
  };
#define JITFUSE_DRIVER_FN(Fn)                                                  \
  Api.Fn = reinterpret_cast<decltype(Api.Fn)>(                                 \
      Resolve(JITFUSE_STRINGIFY(Fn), true));
#define JITFUSE_DRIVER_OPTIONAL_FN(Fn)                                         \
  Api.Fn = reinterpret_cast<decltype(Api.Fn)>(                                 \
      Resolve(JITFUSE_STRINGIFY(Fn), false));
#include "runtime/DriverFunctions.def"

  if (!Missing.empty()) {
    Reason =
        fmt::format("{} lacks driver entry points ({}); the driver is older "
                    "than the CUDA {}.{} headers jitfuse was built with",
                    Name, fmt::join(Missing, ", "), CUDA_VERSION / 1000,
                    CUDA_VERSION % 1000 / 10);
    return;
  }

  if (CUresult R = Api.cuInit(0); R != CUDA_SUCCESS) {
    Reason = fmt::format("cuInit failed: {}", errorString(R));
    return;
  }
  if (Api.cuDriverGetVersion(&Version) != CUDA_SUCCESS)
    Version = 0;
  Available = true;
}

const DriverApi &Driver::api() const {
  if (!Available)
    fail("the CUDA driver is unavailable: {}", Reason);
  return Api;
}

std::string Driver::errorString(CUresult R) const {
  const char *Name = nullptr;
  const char *Description = nullptr;
  // The error-name functions are usable even when cuInit failed, which is
  // exactly when a good message matters most.
  if (Api.cuGetErrorName && Api.cuGetErrorName(R, &Name) != CUDA_SUCCESS)
    Name = nullptr;
  if (Api.cuGetErrorString &&
      Api.cuGetErrorString(R, &Description) != CUDA_SUCCESS)
    Description = nullptr;
  if (!Name)
    Name = fallbackErrorName(R);
  if (!Name)
    return fmt::format("CUresult {}", static_cast<int>(R));
  if (!Description)
    return Name;
  return fmt::format("{} ({})", Name, Description);
}

void Driver::check(CUresult R, llvm::StringRef What) const {
  if (R == CUDA_SUCCESS)
    return;
  fail("{} failed: {}", What.str(), errorString(R));
}

} // namespace jitfuse::rt
