//===- tests/hostpath/FakeCuda.h - what the fake driver records -*- C++ -*-===//
#pragma once

#include <cstdint>

struct FakeCudaFunction {
  char Name[256] = {};
  /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as last set (0: never).
  int MaxDynamicShared = 0;
};

/// One launch (or graph kernel node) as the driver was handed it.
struct FakeCudaLaunch {
  const FakeCudaFunction *Function = nullptr;
  unsigned GridX = 0, BlockX = 0, BlockY = 0;
  unsigned SharedBytes = 0;
  void **Params = nullptr; // the caller's array: valid until its next run
};

struct FakeCudaRecord {
  uint64_t Launches = 0;      // cuLaunchKernel calls
  uint64_t GraphLaunches = 0; // cuGraphLaunch calls
  uint64_t NodeUpdates = 0;   // cuGraphExecKernelNodeSetParams calls
  FakeCudaLaunch Last;        // the latest launch, node added or node updated
};

/// What the fake's cuOccupancyMaxActiveBlocksPerMultiprocessor answers for
/// every kernel.
inline constexpr int FakeResidentBlocksPerSm = 3;

/// Exported by the fake libcuda.so.1; the test finds it with dlsym.
extern "C" FakeCudaRecord *jitfuse_fake_cuda_record();
