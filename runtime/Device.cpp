//===- runtime/Device.cpp - Devices and primary contexts ------------------===//

#include "runtime/Device.h"

#include "runtime/Driver.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <array>
#include <mutex>
#include <unordered_map>

namespace jitfuse::rt {

std::string DeviceInfo::archName() const {
  return fmt::format("sm_{}{}", SmMajor, SmMinor);
}

int deviceCount() {
  const Driver &D = Driver::get();
  int Count = 0;
  D.check(D.api().cuDeviceGetCount(&Count), "cuDeviceGetCount");
  return Count;
}

static CUdevice deviceHandle(int Ordinal) {
  int Count = deviceCount();
  if (Ordinal < 0 || Ordinal >= Count)
    fail("CUDA device {} does not exist: this machine has {} device(s) "
         "(valid ordinals 0..{})",
         Ordinal, Count, Count - 1);
  const Driver &D = Driver::get();
  CUdevice Dev = 0;
  D.check(D.api().cuDeviceGet(&Dev, Ordinal),
          fmt::format("cuDeviceGet({})", Ordinal));
  return Dev;
}

DeviceInfo queryDevice(int Ordinal) {
  CUdevice Dev = deviceHandle(Ordinal);
  const Driver &D = Driver::get();
  const DriverApi &Api = D.api();

  DeviceInfo Info;
  Info.Ordinal = Ordinal;
  std::array<char, 256> Name{};
  D.check(
      Api.cuDeviceGetName(Name.data(), static_cast<int>(Name.size()) - 1, Dev),
      "cuDeviceGetName");
  Info.Name = Name.data();

  auto Attr = [&](CUdevice_attribute A, const char *What) {
    int Value = 0;
    D.check(
        Api.cuDeviceGetAttribute(&Value, A, Dev),
        fmt::format("cuDeviceGetAttribute({}) on device {}", What, Ordinal));
    return Value;
  };
  Info.SmMajor = Attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                      "compute capability major");
  Info.SmMinor = Attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                      "compute capability minor");
  Info.SmCount =
      Attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count");
  Info.MaxThreadsPerBlock =
      Attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block");
  Info.MaxSharedMemPerBlock =
      Attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
           "max shared memory per block");
  Info.MaxSharedMemPerBlockOptin =
      Attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
           "max opt-in shared memory per block");
  Info.L2CacheBytes = Attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 cache size");
  D.check(Api.cuDeviceTotalMem(&Info.TotalMemBytes, Dev), "cuDeviceTotalMem");
  return Info;
}

CUcontext primaryContext(int Ordinal) {
  // Retained once per device and never released: releasing at exit races
  // with the driver's own teardown, and the process owns the GPU anyway.
  static std::mutex Lock;
  static std::unordered_map<int, CUcontext> Retained;

  const Driver &D = Driver::get();
  CUcontext Ctx = nullptr;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    auto It = Retained.find(Ordinal);
    if (It != Retained.end()) {
      Ctx = It->second;
    } else {
      CUdevice Dev = deviceHandle(Ordinal);
      D.check(D.api().cuDevicePrimaryCtxRetain(&Ctx, Dev),
              fmt::format("cuDevicePrimaryCtxRetain(device {})", Ordinal));
      Retained.emplace(Ordinal, Ctx);
    }
  }
  // Current-ness is per thread, so set it on every call, not just the first.
  D.check(D.api().cuCtxSetCurrent(Ctx),
          fmt::format("cuCtxSetCurrent(device {})", Ordinal));
  return Ctx;
}

} // namespace jitfuse::rt
