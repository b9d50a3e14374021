//===- reference/HostTensor.h - host tensors for tests ----------*- C++ -*-===//
//
// A dtype-tagged, row-major tensor whose values are held as doubles. Every
// jitfuse dtype's values are exactly representable as doubles (i64 up to
// 2^53), so one container serves all dtypes; encode()/decode() convert to and
// from the bytes a device buffer holds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Types.h"

#include <llvm/ADT/ArrayRef.h>

#include <cstdint>
#include <random>
#include <vector>

namespace jitfuse {

struct HostTensor {
  DType Type = DType::F32;
  std::vector<int64_t> Dims; // empty = rank 0 (one element)
  std::vector<double> Data;  // row-major, numel() values

  int64_t numel() const;
};

/// Product of Dims (1 for rank 0). Throws on a negative dim and on more
/// than MaxElements (2^48) elements.
int64_t numelOf(llvm::ArrayRef<int64_t> Dims);

/// X laid out as Rows x Len for a keepdim reduction over the axes in Mask
/// (bit I: axis I): row R holds the elements that reduce to output element R
/// (row-major over the kept axes), in row-major order of the reduced axes.
/// Mask == the last axis only is X itself.
HostTensor gatherReduced(const HostTensor &X, uint32_t Mask, int64_t &Rows,
                         int64_t &Len);

/// The bytes of T in its dtype's device layout (little-endian; f16/bf16 as
/// IEEE/brain-float bits rounded to nearest even; bool as one byte 0/1;
/// integers truncated and saturated as roundToDType does). Values are rounded
/// to the dtype first, so a tensor with unrounded values still encodes.
/// Throws when Data does not hold numel() values.
std::vector<uint8_t> encode(const HostTensor &T);

/// The tensor held in Bytes. Throws when the byte count is not
/// numel(Dims) * dtypeBytes(Type). A bool byte other than 0 reads as 1.
HostTensor decode(llvm::ArrayRef<uint8_t> Bytes, DType Type,
                  llvm::ArrayRef<int64_t> Dims);

/// A tensor of random values that are exact in Type: floats uniform in
/// [Lo, Hi) then rounded to the dtype (so Hi itself can appear for a coarse
/// dtype); integers uniform in
/// [ceil(Lo), floor(Hi)]; bool 0 or 1 with probability 1/2 each.
HostTensor randomTensor(DType Type, llvm::ArrayRef<int64_t> Dims,
                        std::mt19937_64 &Rng, double Lo = -2, double Hi = 2);

} // namespace jitfuse
