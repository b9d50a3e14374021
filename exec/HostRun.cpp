//===- exec/HostRun.cpp - run an executable on host tensors ---------------===//
#include "exec/HostRun.h"

#include "runtime/Memory.h"
#include "support/Error.h"

#include <cstring>

namespace jitfuse {

namespace {
/// A strided tensor's layout at the bound dims: each logical element's
/// offset (elements) in a buffer of Span elements.
struct Layout {
  int64_t Span = 0;
  std::vector<int64_t> Offsets; // by linear index
};

Layout stridedLayout(llvm::StringRef Name, llvm::ArrayRef<Dim> Dims, llvm::ArrayRef<Dim> St,
                     const Bindings &B) {
  std::vector<int64_t> Sizes = resolveShape(Dims, B.Dims);
  std::vector<int64_t> Strides = resolveShape(St, B.Dims);
  std::optional<int64_t> Span = stridedSpan(Sizes, Strides);
  if (!Span)
    fail("tensor '{}' spans more than 2^48 elements", Name.str());
  Layout L;
  L.Span = *Span;
  int64_t N = numelOf(Sizes);
  L.Offsets.resize(N);
  for (int64_t K = 0; K < N; ++K) {
    int64_t Rest = K, Off = 0;
    for (size_t D = Sizes.size(); D-- > 0;) {
      Off += (Rest % Sizes[D]) * Strides[D];
      Rest /= Sizes[D];
    }
    L.Offsets[K] = Off;
  }
  return L;
}

Layout stridedLayout(const TensorDesc &T, const Bindings &B) {
  return stridedLayout(T.Name, T.Dims, T.Strides, B);
}

/// For each logical element, the first element at its offset (itself,
/// unless a zero stride repeats it).
std::vector<int64_t> firstAtOffset(const Layout &L) {
  std::vector<int64_t> ByOffset(L.Span, -1), First(L.Offsets.size());
  for (size_t K = 0; K < L.Offsets.size(); ++K) {
    int64_t &F = ByOffset[L.Offsets[K]];
    if (F < 0)
      F = static_cast<int64_t>(K);
    First[K] = F;
  }
  return First;
}
} // namespace

void foldStridedInputs(const Graph &G, Bindings &B) {
  for (NodeId N : G.inputs()) {
    const Node &Nd = G.node(N);
    auto It = B.Inputs.find(Nd.Name);
    if (Nd.Strides.empty() || It == B.Inputs.end())
      continue;
    std::vector<int64_t> First = firstAtOffset(stridedLayout(Nd.Name, Nd.Dims, Nd.Strides, B));
    std::vector<double> &Data = It->second.Data;
    for (size_t K = 0; K < First.size() && K < Data.size(); ++K)
      Data[K] = Data[First[K]];
  }
}

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
    if (!T.Strides.empty()) {
      // Strided: the elements at their offsets, 0xFF (NaN) in every gap, so
      // a read of a wrong offset shows.
      Layout L = stridedLayout(T, B);
      size_t Elem = dtypeBytes(T.Type);
      std::vector<uint8_t> Spread(L.Span * Elem, 0xFF);
      std::vector<int64_t> First = firstAtOffset(L);
      for (size_t K = 0; K < L.Offsets.size(); ++K) {
        if (std::memcmp(&Bytes[First[K] * Elem], &Bytes[K * Elem], Elem) != 0)
          fail("runOnDevice: input '{}' puts elements {} and {} at offset {} but their values "
               "differ (foldStridedInputs makes them agree)",
               T.Name, First[K], K, L.Offsets[K]);
        std::memcpy(&Spread[L.Offsets[K] * Elem], &Bytes[K * Elem], Elem);
      }
      Bytes = std::move(Spread);
    }
    CUdeviceptr P = Alloc(T.Type, static_cast<int64_t>(Bytes.size() / dtypeBytes(T.Type)));
    if (!Bytes.empty())
      rt::copyToDevice(P, Bytes.data(), Bytes.size());
    In.push_back(P);
  }
  std::vector<std::vector<int64_t>> OutDims;
  std::vector<Layout> OutLayouts;
  for (const TensorDesc &T : X.outputs()) {
    OutDims.push_back(resolveShape(T.Dims, B.Dims));
    int64_t N = numelOf(OutDims.back());
    OutLayouts.push_back(T.Strides.empty() ? Layout{N, {}} : stridedLayout(T, B));
    const Layout &L = OutLayouts.back();
    CUdeviceptr P = Alloc(T.Type, L.Span);
    if (Opts.Poison && N && T.Strides.empty())
      rt::memsetD8(P, 0xFF, N * dtypeBytes(T.Type));
    if (!T.Strides.empty()) {
      // Strided: the gaps keep the guard pattern (checked after the run);
      // the elements are poisoned.
      size_t Elem = dtypeBytes(T.Type);
      std::vector<uint8_t> Spread(L.Span * Elem, 0xA5);
      for (int64_t Off : L.Offsets)
        std::memset(&Spread[Off * Elem], Opts.Poison ? 0xFF : 0, Elem);
      if (!Spread.empty())
        rt::copyToDevice(P, Spread.data(), Spread.size());
    }
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
    size_t Elem = dtypeBytes(T.Type);
    size_t End = Begin + OutLayouts[I].Span * Elem;
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
    llvm::ArrayRef<uint8_t> Bytes = llvm::ArrayRef<uint8_t>(All).slice(Begin, End - Begin);
    std::vector<uint8_t> Gathered;
    if (!T.Strides.empty()) {
      // The elements from their offsets; every other byte of the span must
      // still hold the guard pattern.
      std::vector<uint8_t> Mine(OutLayouts[I].Span, 0);
      for (int64_t Off : OutLayouts[I].Offsets) {
        Mine[Off] = 1;
        Gathered.insert(Gathered.end(), Bytes.begin() + Off * Elem,
                        Bytes.begin() + (Off + 1) * Elem);
      }
      for (size_t K = 0; K < Bytes.size(); ++K)
        if (!Mine[K / Elem] && Bytes[K] != 0xA5)
          fail("runOnDevice: output '{}' was written between its strided elements (element "
               "offset {})",
               T.Name, K / Elem);
      Bytes = Gathered;
    }
    Result[T.Name] = decode(Bytes, T.Type, OutDims[I]);
  }
  return Result;
}

} // namespace jitfuse
