//===- exec/HostRun.cpp - run an executable on host tensors ---------------===//
#include "exec/HostRun.h"

#include "runtime/Memory.h"
#include "support/Error.h"

namespace jitfuse {

std::map<std::string, HostTensor> runOnDevice(Executable &X, const Bindings &B,
                                              const HostRunOptions &Opts) {
  std::vector<int64_t> Dims;
  for (const std::string &D : X.dynamicDims()) {
    auto It = B.Dims.find(D);
    if (It == B.Dims.end())
      fail("runOnDevice: dynamic dim '{}' is not bound", D);
    Dims.push_back(It->second);
  }
  std::vector<rt::DeviceBuffer> Buffers;
  std::vector<CUdeviceptr> In, Out;
  auto Alloc = [&](DType T, int64_t N) {
    size_t Elem = dtypeBytes(T);
    Buffers.emplace_back((N + Opts.MisalignElems) * Elem + 16);
    return Buffers.back().ptr() + Opts.MisalignElems * Elem;
  };
  for (const TensorDesc &T : X.inputs()) {
    auto It = B.Inputs.find(T.Name);
    if (It == B.Inputs.end())
      fail("runOnDevice: input '{}' is not bound", T.Name);
    std::vector<uint8_t> Bytes = encode(It->second);
    CUdeviceptr P = Alloc(T.Type, It->second.numel());
    if (!Bytes.empty())
      rt::copyToDevice(P, Bytes.data(), Bytes.size());
    In.push_back(P);
  }
  std::vector<std::vector<int64_t>> OutDims;
  for (const TensorDesc &T : X.outputs()) {
    OutDims.push_back(resolveShape(T.Dims, B.Dims));
    int64_t N = numelOf(OutDims.back());
    CUdeviceptr P = Alloc(T.Type, N);
    if (Opts.Poison && N)
      rt::memsetD8(P, 0xFF, N * dtypeBytes(T.Type));
    Out.push_back(P);
  }
  std::vector<double> Scalars;
  for (const TensorDesc &S : X.scalars()) {
    auto It = B.Scalars.find(S.Name);
    if (It == B.Scalars.end())
      fail("runOnDevice: scalar '{}' is not bound", S.Name);
    Scalars.push_back(It->second);
  }
  rt::Stream S;
  for (unsigned R = 0; R < std::max(1u, Opts.Repeat); ++R)
    X.run(In, Out, Scalars, Dims, S.get());
  S.synchronize();
  if (Opts.ProfileReps > 0 && Opts.KernelMedianUs)
    *Opts.KernelMedianUs = X.profileKernels(In, Out, Scalars, Dims, S.get(), Opts.ProfileReps);
  std::map<std::string, HostTensor> Result;
  for (size_t I = 0; I < X.outputs().size(); ++I) {
    const TensorDesc &T = X.outputs()[I];
    std::vector<uint8_t> Bytes(numelOf(OutDims[I]) * dtypeBytes(T.Type));
    if (!Bytes.empty())
      rt::copyToHost(Bytes.data(), Out[I], Bytes.size());
    Result[T.Name] = decode(Bytes, T.Type, OutDims[I]);
  }
  return Result;
}

} // namespace jitfuse
