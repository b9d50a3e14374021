//===- reference/HostTensor.cpp - host tensors, byte layout, data ---------===//
#include "reference/HostTensor.h"

#include "ir/Half.h"
#include "support/Error.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace jitfuse {

int64_t numelOf(llvm::ArrayRef<int64_t> Dims) {
  auto Str = [&] { return fmt::format("[{}]", fmt::join(Dims, ",")); };
  for (int64_t D : Dims)
    if (D < 0)
      fail("tensor shape {} has a negative dim {}", Str(), D);
  // A wrapped product would size buffers too small for the loops over them.
  std::optional<int64_t> N = boundedProduct(Dims);
  if (!N)
    fail("tensor shape {} holds more than 2^48 elements", Str());
  return *N;
}

int64_t HostTensor::numel() const { return numelOf(Dims); }

HostTensor gatherReduced(const HostTensor &X, uint32_t Mask, int64_t &Rows,
                         int64_t &Len) {
  size_t Rank = X.Dims.size();
  std::vector<int64_t> Kept, Red;
  std::vector<size_t> KeptAxes, RedAxes;
  for (size_t I = 0; I < Rank; ++I) {
    bool Reduced = Mask & (1u << I);
    (Reduced ? Red : Kept).push_back(X.Dims[I]);
    (Reduced ? RedAxes : KeptAxes).push_back(I);
  }
  Rows = numelOf(Kept);
  Len = numelOf(Red);
  std::vector<int64_t> Stride(Rank, 1);
  for (size_t I = Rank; I-- > 1;)
    Stride[I - 1] = Stride[I] * X.Dims[I];
  // The input offset of one multi-index over a subset of the axes.
  auto Offset = [&](int64_t Lin, const std::vector<size_t> &Axes) {
    int64_t Off = 0;
    for (size_t J = Axes.size(); J-- > 0;) {
      int64_t D = X.Dims[Axes[J]];
      Off += (Lin % D) * Stride[Axes[J]];
      Lin /= D;
    }
    return Off;
  };
  HostTensor Out;
  Out.Type = X.Type;
  Out.Dims = {Rows, Len};
  Out.Data.resize(static_cast<size_t>(Rows * Len));
  for (int64_t R = 0; R < Rows; ++R) {
    int64_t Base = Offset(R, KeptAxes);
    for (int64_t I = 0; I < Len; ++I)
      Out.Data[static_cast<size_t>(R * Len + I)] =
          X.Data[static_cast<size_t>(Base + Offset(I, RedAxes))];
  }
  return Out;
}

template <typename T> static void put(uint8_t *Dst, T V) {
  std::memcpy(Dst, &V, sizeof(T));
}

template <typename T> static T get(const uint8_t *Src) {
  T V;
  std::memcpy(&V, Src, sizeof(T));
  return V;
}

/// Exact int64 of an already-rounded i64 value; +2^63 (saturated) maps to
/// INT64_MAX because 2^63 itself does not fit.
static int64_t toInt64(double V) {
  if (V >= 9223372036854775808.0)
    return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(V);
}

std::vector<uint8_t> encode(const HostTensor &T) {
  int64_t N = T.numel();
  if (static_cast<int64_t>(T.Data.size()) != N)
    fail("encode: tensor of shape with {} elements holds {} values", N,
         T.Data.size());
  unsigned Size = dtypeBytes(T.Type);
  std::vector<uint8_t> Bytes(static_cast<size_t>(N) * Size);
  for (int64_t I = 0; I < N; ++I) {
    uint8_t *Dst = Bytes.data() + I * Size;
    double V = roundToDType(T.Data[I], T.Type);
    switch (T.Type) {
    case DType::Bool:
      put<uint8_t>(Dst, V != 0 ? 1 : 0);
      break;
    case DType::I32:
      put<int32_t>(Dst, static_cast<int32_t>(V));
      break;
    case DType::I64:
      put<int64_t>(Dst, toInt64(V));
      break;
    case DType::F16:
      put<uint16_t>(Dst, doubleToHalfBits(V));
      break;
    case DType::BF16:
      put<uint16_t>(Dst, doubleToBF16Bits(V));
      break;
    case DType::F32:
      put<float>(Dst, static_cast<float>(V)); // exact after rounding
      break;
    case DType::F64:
      put<double>(Dst, V);
      break;
    }
  }
  return Bytes;
}

HostTensor decode(llvm::ArrayRef<uint8_t> Bytes, DType Type,
                  llvm::ArrayRef<int64_t> Dims) {
  HostTensor T;
  T.Type = Type;
  T.Dims.assign(Dims.begin(), Dims.end());
  int64_t N = T.numel();
  unsigned Size = dtypeBytes(Type);
  if (static_cast<int64_t>(Bytes.size()) != N * Size)
    fail("decode: {} bytes given for a {} tensor of {} elements; expected {}",
         Bytes.size(), dtypeName(Type).str(), N, N * Size);
  T.Data.resize(static_cast<size_t>(N));
  for (int64_t I = 0; I < N; ++I) {
    const uint8_t *Src = Bytes.data() + I * Size;
    double &V = T.Data[I];
    switch (Type) {
    case DType::Bool:
      V = get<uint8_t>(Src) != 0 ? 1 : 0;
      break;
    case DType::I32:
      V = get<int32_t>(Src);
      break;
    case DType::I64:
      V = static_cast<double>(get<int64_t>(Src));
      break;
    case DType::F16:
      V = halfBitsToDouble(get<uint16_t>(Src));
      break;
    case DType::BF16:
      V = bf16BitsToDouble(get<uint16_t>(Src));
      break;
    case DType::F32:
      V = get<float>(Src);
      break;
    case DType::F64:
      V = get<double>(Src);
      break;
    }
  }
  return T;
}

HostTensor randomTensor(DType Type, llvm::ArrayRef<int64_t> Dims,
                        std::mt19937_64 &Rng, double Lo, double Hi) {
  if (!(Lo <= Hi))
    fail("randomTensor: empty range [{}, {}]", Lo, Hi);
  HostTensor T;
  T.Type = Type;
  T.Dims.assign(Dims.begin(), Dims.end());
  int64_t N = T.numel();
  T.Data.resize(static_cast<size_t>(N));
  if (Type == DType::Bool) {
    std::bernoulli_distribution Coin(0.5);
    for (double &V : T.Data)
      V = Coin(Rng) ? 1 : 0;
    return T;
  }
  if (isInt(Type)) {
    double ILo = std::ceil(Lo), IHi = std::floor(Hi);
    if (ILo > IHi)
      fail("randomTensor: no integer in [{}, {}] for {}", Lo, Hi,
           dtypeName(Type).str());
    std::uniform_int_distribution<int64_t> Dist(static_cast<int64_t>(ILo),
                                                static_cast<int64_t>(IHi));
    for (double &V : T.Data)
      V = roundToDType(static_cast<double>(Dist(Rng)), Type);
    return T;
  }
  JITFUSE_CHECK(isFloat(Type), "unhandled dtype");
  std::uniform_real_distribution<double> Dist(Lo, Hi);
  for (double &V : T.Data)
    V = roundToDType(Dist(Rng), Type);
  return T;
}

} // namespace jitfuse
