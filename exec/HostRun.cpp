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
  size_t NextTensor = 0;
  // Each tensor: [guard][offset][N elements][guard], the allocation aligned.
  auto Alloc = [&](DType T, int64_t N) {
    size_t Elem = dtypeBytes(T);
    unsigned Mis = Opts.MisalignEach.empty()
                       ? Opts.MisalignElems
                       : Opts.MisalignEach[NextTensor % Opts.MisalignEach.size()];
    ++NextTensor;
    size_t Lead = Opts.GuardBytes + Mis * Elem;
    Buffers.emplace_back(Lead + N * Elem + Opts.GuardBytes + 16);
    rt::memsetD8(Buffers.back().ptr(), 0xA5, Buffers.back().size());
    return Buffers.back().ptr() + Lead;
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
  // Each output's whole allocation comes back once: the tensor is decoded
  // from its middle and the guards on both sides must still hold 0xA5.
  size_t FirstOut = X.inputs().size();
  std::map<std::string, HostTensor> Result;
  std::vector<uint8_t> All;
  for (size_t I = 0; I < X.outputs().size(); ++I) {
    const TensorDesc &T = X.outputs()[I];
    const rt::DeviceBuffer &Buf = Buffers[FirstOut + I];
    size_t Begin = Out[I] - Buf.ptr();
    size_t End = Begin + numelOf(OutDims[I]) * dtypeBytes(T.Type);
    All.resize(Buf.size());
    rt::copyToHost(All.data(), Buf.ptr(), All.size());
    auto Check = [&](size_t From, size_t To) {
      for (size_t K = From; K < To; ++K)
        if (All[K] != 0xA5)
          fail("runOnDevice: output '{}' was written outside its {} bytes (byte {} of the "
               "allocation, the tensor at [{}, {}))",
               T.Name, End - Begin, K, Begin, End);
    };
    if (Opts.GuardBytes) {
      Check(0, Begin);
      Check(End, All.size());
    }
    Result[T.Name] = decode(llvm::ArrayRef<uint8_t>(All).slice(Begin, End - Begin), T.Type,
                            OutDims[I]);
  }
  return Result;
}

} // namespace jitfuse
