//===- runtime/Module.cpp - Loaded CUBINs and kernel launches -------------===//

#include "runtime/Module.h"

#include "runtime/Driver.h"
#include "runtime/ImageBundle.h"

#include <algorithm>

#include <fmt/format.h>

#include <utility>

namespace jitfuse::rt {

bool isImageError(CUresult R) {
  switch (R) {
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    return true;
  default:
    return false;
  }
}

Module::Module(llvm::ArrayRef<char> Image,
               llvm::ArrayRef<std::string> KernelNames)
    : ExpectedNames(KernelNames.begin(), KernelNames.end()) {
  const Driver &D = Driver::get();
  if (Image.empty())
    throw ImageError("cannot load an empty CUBIN", CUDA_ERROR_INVALID_IMAGE);
  CUresult R = D.api().cuModuleLoadData(&Handle, Image.data());
  if (R == CUDA_SUCCESS)
    return;
  Handle = nullptr;
  std::string Msg = fmt::format("cuModuleLoadData ({} byte image) failed: {}",
                                Image.size(), D.errorString(R));
  if (isImageError(R))
    throw ImageError(Msg, R);
  throw Error(Msg);
}

Module::~Module() { reset(); }

Module::Module(Module &&Other) noexcept
    : Handle(std::exchange(Other.Handle, nullptr)),
      ExpectedNames(std::move(Other.ExpectedNames)) {}

Module &Module::operator=(Module &&Other) noexcept {
  if (this == &Other)
    return *this;
  reset();
  Handle = std::exchange(Other.Handle, nullptr);
  ExpectedNames = std::move(Other.ExpectedNames);
  return *this;
}

void Module::reset() noexcept {
  if (Handle)
    (void)Driver::get().api().cuModuleUnload(Handle);
  Handle = nullptr;
}

std::vector<std::string> Module::kernelNames() const {
  const DriverApi &Api = Driver::get().api();
  if (!Handle || !Api.cuModuleGetFunctionCount ||
      !Api.cuModuleEnumerateFunctions || !Api.cuFuncGetName)
    return ExpectedNames;
  unsigned Count = 0;
  if (Api.cuModuleGetFunctionCount(&Count, Handle) != CUDA_SUCCESS)
    return ExpectedNames;
  std::vector<CUfunction> Functions(Count);
  if (Count && Api.cuModuleEnumerateFunctions(Functions.data(), Count,
                                              Handle) != CUDA_SUCCESS)
    return ExpectedNames;
  std::vector<std::string> Names;
  for (CUfunction F : Functions) {
    const char *Name = nullptr;
    if (Api.cuFuncGetName(&Name, F) == CUDA_SUCCESS && Name)
      Names.emplace_back(Name);
  }
  return Names;
}

CUfunction Module::function(llvm::StringRef Name) const {
  const Driver &D = Driver::get();
  CUfunction F = nullptr;
  std::string N = Name.str();
  CUresult R = D.api().cuModuleGetFunction(&F, Handle, N.c_str());
  if (R == CUDA_SUCCESS)
    return F;
  std::string Known;
  for (const std::string &K : kernelNames())
    Known += Known.empty() ? K : ", " + K;
  fail("kernel '{}' is not in the module ({}); the module has: {}", N,
       D.errorString(R), Known.empty() ? "<unknown>" : Known);
}

ModuleSet::ModuleSet(llvm::ArrayRef<char> Blob, llvm::ArrayRef<std::string> KernelNames) {
  if (!isImageBundle(Blob)) {
    Modules.emplace_back(Blob, KernelNames);
    return;
  }
  std::string WhyNot;
  std::optional<std::vector<BundledImage>> Parts = parseImageBundle(Blob, &WhyNot);
  if (!Parts)
    throw ImageError(fmt::format("damaged kernel image bundle ({} bytes): {}", Blob.size(),
                                 WhyNot),
                     CUDA_ERROR_INVALID_IMAGE);
  for (unsigned I = 0; I < Parts->size(); ++I) {
    const BundledImage &P = (*Parts)[I];
    Modules.emplace_back(P.Image, P.Kernels);
    for (const std::string &K : P.Kernels)
      Owner.emplace_back(K, I);
  }
  std::sort(Owner.begin(), Owner.end());
}

bool ModuleSet::names(llvm::StringRef Name) const {
  auto It = std::lower_bound(Owner.begin(), Owner.end(), Name,
                             [](const auto &E, llvm::StringRef N) { return E.first < N; });
  return It != Owner.end() && It->first == Name;
}

CUfunction ModuleSet::function(llvm::StringRef Name) const {
  if (Owner.empty())
    return Modules.front().function(Name);
  auto It = std::lower_bound(Owner.begin(), Owner.end(), Name,
                             [](const auto &E, llvm::StringRef N) { return E.first < N; });
  if (It == Owner.end() || It->first != Name)
    fail("kernel '{}' is not in any of the {} images of the bundle", Name.str(),
         Modules.size());
  return Modules[It->second].function(Name);
}

void allowDynamicShared(CUfunction F, unsigned Bytes, llvm::StringRef Kernel) {
  const Driver &D = Driver::get();
  CUresult R = D.api().cuFuncSetAttribute(F, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          static_cast<int>(Bytes));
  if (R == CUDA_SUCCESS)
    return;
  fail("kernel '{}' needs {} B of dynamic shared memory; the device refused it ({})",
       Kernel.str(), Bytes, D.errorString(R));
}

int residentBlocksPerSm(CUfunction F, int BlockThreads, size_t SharedBytes,
                        llvm::StringRef Kernel) {
  const Driver &D = Driver::get();
  int Blocks = 0;
  CUresult R =
      D.api().cuOccupancyMaxActiveBlocksPerMultiprocessor(&Blocks, F, BlockThreads, SharedBytes);
  if (R == CUDA_SUCCESS)
    return Blocks;
  fail("kernel '{}': the driver's occupancy query failed ({})", Kernel.str(), D.errorString(R));
}

void launchKernel(CUfunction F, LaunchDims Grid, LaunchDims Block,
                  unsigned SharedBytes, CUstream Stream, void **Args) {
  const Driver &D = Driver::get();
  CUresult R =
      D.api().cuLaunchKernel(F, Grid.X, Grid.Y, Grid.Z, Block.X, Block.Y,
                             Block.Z, SharedBytes, Stream, Args, nullptr);
  if (R == CUDA_SUCCESS)
    return;
  fail("cuLaunchKernel(grid {}x{}x{}, block {}x{}x{}, {} B shared) failed: {}",
       Grid.X, Grid.Y, Grid.Z, Block.X, Block.Y, Block.Z, SharedBytes,
       D.errorString(R));
}

} // namespace jitfuse::rt
