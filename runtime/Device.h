//===- runtime/Device.h - Devices and primary contexts ----------*- C++ -*-===//
//
// Device properties that schedules depend on, and the primary context of any
// device made current on the calling thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda.h>

#include <string>

namespace jitfuse::rt {

struct DeviceInfo {
  int Ordinal = 0;
  std::string Name;
  int SmMajor = 0;
  int SmMinor = 0;
  int SmCount = 0;
  int MaxThreadsPerBlock = 0;
  /// Without opting in (cuFuncSetAttribute); the opt-in maximum is larger.
  int MaxSharedMemPerBlock = 0;
  int MaxSharedMemPerBlockOptin = 0;
  int L2CacheBytes = 0;
  size_t TotalMemBytes = 0;

  /// "sm_90" for compute capability 9.0.
  std::string archName() const;
};

/// Number of CUDA devices. Throws jitfuse::Error when the driver is
/// unavailable.
int deviceCount();

/// Properties of device \p Ordinal. Throws jitfuse::Error naming the device
/// count when \p Ordinal is out of range.
DeviceInfo queryDevice(int Ordinal);

/// Retains the primary context of device \p Ordinal (once per device, kept
/// for the life of the process) and makes it current on the calling thread.
/// Thread-safe; any ordinal, not only 0.
CUcontext primaryContext(int Ordinal);

} // namespace jitfuse::rt
