//===- ir/Philox.h - Philox-4x32-10 counter-based RNG -----------*- C++ -*-===//
//
// Philox-4x32-10 from Salmon et al., "Parallel Random Numbers: As Easy as
// 1, 2, 3" (SC'11), with the Random123 constants. A counter-based generator
// lets every GPU thread compute the random number of its element directly from
// (index, stream, seed), so fused, unfused and reference runs agree bit for
// bit. The exact rand_uniform contract is in docs/NUMERICS.md ("Random").
//
// Header-only and dependency-free, for the reference interpreter and host
// tests. The generated device code has its own copy of the same arithmetic
// (jf_philox_uniform in codegen/device/jitfuse_device.cuh: NVRTC compiles
// only the embedded helpers); the [gpu] rand_uniform and dropout tests check
// the two agree bit for bit, fused and unfused.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>

namespace jitfuse {

namespace philox_detail {
inline constexpr uint32_t M0 = 0xD2511F53u;
inline constexpr uint32_t M1 = 0xCD9E8D57u;
inline constexpr uint32_t W0 = 0x9E3779B9u; // golden ratio
inline constexpr uint32_t W1 = 0xBB67AE85u; // sqrt(3) - 1

constexpr std::array<uint32_t, 4> round(std::array<uint32_t, 4> C,
                                        std::array<uint32_t, 2> K) {
  uint64_t P0 = uint64_t(M0) * C[0];
  uint64_t P1 = uint64_t(M1) * C[2];
  auto Hi0 = static_cast<uint32_t>(P0 >> 32), Lo0 = static_cast<uint32_t>(P0);
  auto Hi1 = static_cast<uint32_t>(P1 >> 32), Lo1 = static_cast<uint32_t>(P1);
  return {Hi1 ^ C[1] ^ K[0], Lo1, Hi0 ^ C[3] ^ K[1], Lo0};
}
} // namespace philox_detail

/// Ten Philox rounds; the key is bumped by (W0, W1) between rounds.
constexpr std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> Counter,
                                                std::array<uint32_t, 2> Key) {
  for (int R = 0; R < 10; ++R) {
    if (R > 0) {
      Key[0] += philox_detail::W0;
      Key[1] += philox_detail::W1;
    }
    Counter = philox_detail::round(Counter, Key);
  }
  return Counter;
}

/// The rand_uniform value of the element with row-major linear index Index,
/// stream id Stream and seed Seed:
///   Counter = {lo32(Index), hi32(Index), lo32(Stream), hi32(Stream)}
///   Key     = {lo32(Seed), hi32(Seed)}
///   u       = word 0 of philox4x32_10(Counter, Key)
///   value   = (u >> 8) * 2^-24, exact in f32, in [0, 1).
constexpr double philoxUniform(int64_t Index, int64_t Stream, int64_t Seed) {
  auto Lo = [](int64_t V) { return static_cast<uint32_t>(uint64_t(V)); };
  auto Hi = [](int64_t V) { return static_cast<uint32_t>(uint64_t(V) >> 32); };
  std::array<uint32_t, 4> Out = philox4x32_10(
      {Lo(Index), Hi(Index), Lo(Stream), Hi(Stream)}, {Lo(Seed), Hi(Seed)});
  return static_cast<double>(Out[0] >> 8) * (1.0 / 16777216.0);
}

} // namespace jitfuse
