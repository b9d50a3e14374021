//===- bench/BenchUtil.cpp - device data, timing and statistics -----------===//
#include "BenchUtil.h"

#include "reference/HostTensor.h"
#include "reference/Interpreter.h"
#include "support/Error.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

namespace jitfuse::bench {

double median(std::vector<double> V) {
  if (V.empty())
    return 0;
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]);
}

double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
      .count();
}

RunArgs runArgsFor(const Executable &X, const std::map<std::string, int64_t> &Dims,
                   const std::map<std::string, double> &Scalars) {
  RunArgs A;
  for (const std::string &D : X.dynamicDims()) {
    auto It = Dims.find(D);
    if (It == Dims.end())
      fail("bench: dynamic dim '{}' has no size", D);
    A.Dims.push_back(It->second);
  }
  for (const TensorDesc &S : X.scalars()) {
    auto It = Scalars.find(S.Name);
    if (It == Scalars.end())
      fail("bench: scalar '{}' has no value", S.Name);
    A.Scalars.push_back(It->second);
  }
  for (llvm::ArrayRef<TensorDesc> List : {X.inputs(), X.outputs()})
    for (const TensorDesc &T : List)
      A.MinBytes += numelOf(resolveShape(T.Dims, Dims)) * dtypeBytes(T.Type);
  return A;
}

void PatternFiller::fill(CUdeviceptr Dst, DType T, int64_t Elems, uint64_t Salt) {
  size_t Elem = dtypeBytes(T);
  std::vector<uint8_t> &Block = Blocks[T];
  if (Block.empty()) {
    std::mt19937_64 Rng(0x6a66 + static_cast<unsigned>(T));
    std::vector<uint8_t> Bytes = encode(randomTensor(T, {BlockElems}, Rng));
    Block = Bytes;
    Block.insert(Block.end(), Bytes.begin(), Bytes.end());
  }
  // Salt picks a rotation so tensors of one workload differ.
  int64_t Offset = static_cast<int64_t>((Salt * 0x9E3779B97F4A7C15ull) >> 40) % BlockElems;
  for (int64_t Done = 0; Done < Elems;) {
    int64_t N = std::min(BlockElems, Elems - Done);
    rt::copyToDevice(Dst + Done * Elem, Block.data() + Offset * Elem, N * Elem);
    Done += N;
  }
}

DeviceSet allocateSet(const Executable &X, const std::map<std::string, int64_t> &Dims,
                      PatternFiller &Filler, uint64_t Salt) {
  DeviceSet S;
  S.Buffers.reserve(X.inputs().size() + X.outputs().size());
  // A strided tensor's buffer spans its strides (its gaps filled too).
  auto Elems = [&](const TensorDesc &T) {
    std::vector<int64_t> Sizes = resolveShape(T.Dims, Dims);
    if (T.Strides.empty())
      return numelOf(Sizes);
    std::optional<int64_t> Span = stridedSpan(Sizes, resolveShape(T.Strides, Dims));
    if (!Span)
      fail("bench: tensor '{}' spans more than 2^48 elements", T.Name);
    return *Span;
  };
  for (const TensorDesc &T : X.inputs()) {
    int64_t N = Elems(T);
    S.Buffers.emplace_back(std::max<size_t>(N * dtypeBytes(T.Type), 16));
    Filler.fill(S.Buffers.back().ptr(), T.Type, N, Salt++);
    S.In.push_back(S.Buffers.back().ptr());
  }
  for (const TensorDesc &T : X.outputs()) {
    int64_t N = Elems(T);
    S.Buffers.emplace_back(std::max<size_t>(N * dtypeBytes(T.Type), 16));
    S.Out.push_back(S.Buffers.back().ptr());
  }
  return S;
}

std::vector<double> timeEach(llvm::function_ref<void(int)> Launch, int Warmup,
                             int Iters, CUstream S, llvm::function_ref<void(int)> Before) {
  for (int I = 0; I < Warmup; ++I) {
    if (Before)
      Before(I);
    Launch(I);
  }
  std::vector<rt::Event> Start, End;
  Start.reserve(Iters);
  End.reserve(Iters);
  for (int I = 0; I < Iters; ++I) {
    Start.emplace_back();
    End.emplace_back();
  }
  for (int I = 0; I < Iters; ++I) {
    if (Before)
      Before(Warmup + I);
    Start[I].record(S);
    Launch(Warmup + I);
    End[I].record(S);
  }
  std::vector<double> Us;
  for (int I = 0; I < Iters; ++I) {
    End[I].synchronize();
    Us.push_back(1000.0 * rt::Event::elapsedMs(Start[I], End[I]));
  }
  return Us;
}

PerCallTime timeBackToBack(llvm::function_ref<void()> Launch, int Calls, int Reps,
                           CUstream S) {
  for (int I = 0; I < Calls / 10 + 1; ++I)
    Launch();
  rt::Event Start, End;
  std::vector<double> Gpu, Host;
  for (int R = 0; R < Reps; ++R) {
    // Start from an idle stream so a full launch queue never throttles the
    // host loop by earlier work.
    End.record(S);
    End.synchronize();
    Start.record(S);
    auto T0 = std::chrono::steady_clock::now();
    for (int I = 0; I < Calls; ++I)
      Launch();
    Host.push_back(1000.0 * msSince(T0) / Calls);
    End.record(S);
    End.synchronize();
    Gpu.push_back(1000.0 * rt::Event::elapsedMs(Start, End) / Calls);
  }
  return {median(Gpu), median(Host)};
}

} // namespace jitfuse::bench
