//===- bench/BenchUtil.h - device data, timing and statistics ---*- C++ -*-===//
#pragma once

#include "driver/Compiler.h"
#include "runtime/Memory.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLExtras.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace jitfuse::bench {

double median(std::vector<double> V);

/// Milliseconds since Start on the steady clock.
double msSince(std::chrono::steady_clock::time_point Start);

/// Positional run() arguments of X for named dims/scalars, and the minimal
/// traffic: every input read once and every output written once.
struct RunArgs {
  std::vector<int64_t> Dims;
  std::vector<double> Scalars;
  int64_t MinBytes = 0;
};
RunArgs runArgsFor(const Executable &X, const std::map<std::string, int64_t> &Dims,
                   const std::map<std::string, double> &Scalars);

/// Fills device tensors with random values exact in their dtype, in [-2, 2).
/// Generating 2^28 random values per tensor on the host takes seconds; instead
/// one random block per dtype is tiled over the tensor from a per-tensor
/// starting offset (caches work on addresses, so repeated values do not make
/// the data any more cacheable).
class PatternFiller {
public:
  void fill(CUdeviceptr Dst, DType T, int64_t Elems, uint64_t Salt);

private:
  static constexpr int64_t BlockElems = int64_t(1) << 24;
  /// Per dtype: the encoded random block written twice back to back, so any
  /// rotation of it is one contiguous range.
  std::map<DType, std::vector<uint8_t>> Blocks;
};

/// One set of device buffers holding a workload's inputs and outputs.
struct DeviceSet {
  std::vector<rt::DeviceBuffer> Buffers;
  std::vector<CUdeviceptr> In, Out;
};
DeviceSet allocateSet(const Executable &X, const std::map<std::string, int64_t> &Dims,
                      PatternFiller &Filler, uint64_t Salt);

/// Times Iters calls of Launch(I) (after Warmup untimed ones) on S, each
/// between its own event pair; returns microseconds per call. Before(I),
/// if given, runs ahead of each call, outside its events (an L2 flush).
std::vector<double> timeEach(llvm::function_ref<void(int)> Launch, int Warmup,
                             int Iters, CUstream S,
                             llvm::function_ref<void(int)> Before = nullptr);

/// Back-to-back launches: GPU time per call from one event pair around
/// Calls consecutive launches, and the host's enqueue time per call (the loop
/// without synchronizing). Median over Reps repetitions.
struct PerCallTime {
  double GpuUs = 0;
  double HostUs = 0;
};
PerCallTime timeBackToBack(llvm::function_ref<void()> Launch, int Calls, int Reps,
                           CUstream S);

} // namespace jitfuse::bench
