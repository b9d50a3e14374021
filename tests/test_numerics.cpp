//===- tests/test_numerics.cpp - numeric contract cases -------------------===//
#include "ir/Half.h"
#include "reference/HostTensor.h"
#include "ir/Philox.h"
#include "reference/Tolerance.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {
constexpr double Inf = std::numeric_limits<double>::infinity();
const double NaN = std::numeric_limits<double>::quiet_NaN();

bool isHalfNaN(uint16_t B) { return (B & 0x7c00) == 0x7c00 && (B & 0x03ff); }
bool isBF16NaN(uint16_t B) { return (B & 0x7f80) == 0x7f80 && (B & 0x007f); }

uint32_t floatBits(float F) {
  uint32_t B;
  std::memcpy(&B, &F, sizeof(B));
  return B;
}

/// The usual bit-trick float -> bf16 RNE, an independent oracle for non-NaN.
uint16_t bf16Oracle(float F) {
  uint32_t B = floatBits(F);
  return static_cast<uint16_t>((B + 0x7fffu + ((B >> 16) & 1u)) >> 16);
}
} // namespace

//===----------------------------------------------------------------------===//
// f16 / bf16
//===----------------------------------------------------------------------===//

TEST_CASE("f16: every non-NaN bit pattern round-trips", "[numerics]") {
  for (uint32_t B = 0; B < 65536; ++B) {
    auto Bits = static_cast<uint16_t>(B);
    double V = halfBitsToDouble(Bits);
    if (isHalfNaN(Bits)) {
      REQUIRE(std::isnan(V));
      REQUIRE(isHalfNaN(doubleToHalfBits(V)));
      continue;
    }
    REQUIRE(doubleToHalfBits(V) == Bits);
    REQUIRE(floatToHalfBits(halfBitsToFloat(Bits)) == Bits);
    REQUIRE(static_cast<double>(halfBitsToFloat(Bits)) == V);
    REQUIRE(roundToDType(V, DType::F16) == V);
  }
}

TEST_CASE("bf16: every non-NaN bit pattern round-trips", "[numerics]") {
  for (uint32_t B = 0; B < 65536; ++B) {
    auto Bits = static_cast<uint16_t>(B);
    double V = bf16BitsToDouble(Bits);
    if (isBF16NaN(Bits)) {
      REQUIRE(std::isnan(V));
      REQUIRE(isBF16NaN(doubleToBF16Bits(V)));
      continue;
    }
    REQUIRE(doubleToBF16Bits(V) == Bits);
    REQUIRE(floatToBF16Bits(bf16BitsToFloat(Bits)) == Bits);
    // bf16 is the top half of an f32.
    REQUIRE(floatBits(bf16BitsToFloat(Bits)) == uint32_t(Bits) << 16);
    REQUIRE(roundToDType(V, DType::BF16) == V);
  }
}

TEST_CASE("f16: ties to even, subnormals, overflow, signed zero",
          "[numerics]") {
  auto H = [](double V) { return doubleToHalfBits(V); };
  CHECK(H(1.0) == 0x3c00);
  CHECK(H(1 + std::ldexp(1, -11)) == 0x3c00);     // tie -> even (down)
  CHECK(H(1 + 3 * std::ldexp(1, -11)) == 0x3c02); // tie -> even (up)
  CHECK(H(1 + std::ldexp(1, -11) + std::ldexp(1, -30)) == 0x3c01);
  CHECK(H(65504) == 0x7bff);
  CHECK(H(65519.99) == 0x7bff);
  CHECK(H(65520) == 0x7c00); // tie past the largest finite -> Inf
  CHECK(H(1e300) == 0x7c00);
  CHECK(H(-1e300) == 0xfc00);
  CHECK(H(Inf) == 0x7c00);
  CHECK(H(std::ldexp(1, -14)) == 0x0400);    // smallest normal
  CHECK(H(std::ldexp(1, -24)) == 0x0001);    // smallest subnormal
  CHECK(H(std::ldexp(1, -25)) == 0x0000);    // tie -> even (zero)
  CHECK(H(std::ldexp(1.5, -25)) == 0x0001);  // above the tie
  CHECK(H(std::ldexp(3, -25)) == 0x0002);    // tie between 1 and 2 -> 2
  CHECK(H(-std::ldexp(1, -26)) == 0x8000);   // underflow keeps the sign
  CHECK(H(-0.0) == 0x8000);
  CHECK(halfBitsToDouble(0x3555) == 0.333251953125);
  CHECK(halfBitsToDouble(0xfbff) == -65504);
}

TEST_CASE("f16: rounding from double is direct, not via float",
          "[numerics]") {
  // 1 + 2^-11 + 2^-40 rounds to float as the f16 tie 1 + 2^-11, which would
  // then go to even (1.0); the correct f16 is 1 + 2^-10.
  double V = 1 + std::ldexp(1, -11) + std::ldexp(1, -40);
  CHECK(floatToHalfBits(static_cast<float>(V)) == 0x3c00);
  CHECK(doubleToHalfBits(V) == 0x3c01);
  CHECK(roundToDType(V, DType::F16) == 1 + std::ldexp(1, -10));
}

TEST_CASE("bf16: ties to even, overflow, matches the bit-trick oracle",
          "[numerics]") {
  auto B = [](double V) { return doubleToBF16Bits(V); };
  CHECK(B(1.0) == 0x3f80);
  CHECK(B(1 + std::ldexp(1, -8)) == 0x3f80);     // tie -> even (down)
  CHECK(B(1 + 3 * std::ldexp(1, -8)) == 0x3f82); // tie -> even (up)
  CHECK(B(std::numeric_limits<float>::max()) == 0x7f80); // rounds past max
  CHECK(B(std::ldexp(2 - std::ldexp(1, -7), 127)) == 0x7f7f);
  CHECK(B(-Inf) == 0xff80);
  CHECK(B(-0.0) == 0x8000);
  CHECK(B(std::ldexp(1, -133)) == 0x0001); // smallest bf16 subnormal

  std::mt19937 Rng(7);
  for (int I = 0; I < 200000; ++I) {
    uint32_t Bits = Rng();
    float F;
    std::memcpy(&F, &Bits, sizeof(F));
    if (std::isnan(F))
      continue;
    REQUIRE(floatToBF16Bits(F) == bf16Oracle(F));
  }
}

#ifdef __FLT16_MAX__
TEST_CASE("f16: matches the compiler's _Float16 conversions", "[numerics]") {
  std::mt19937_64 Rng(11);
  auto Bits16 = [](_Float16 H) {
    uint16_t B;
    std::memcpy(&B, &H, sizeof(B));
    return B;
  };
  for (int I = 0; I < 200000; ++I) {
    // Random doubles concentrated around the f16 range, and random floats.
    double D = std::ldexp(std::uniform_real_distribution<double>(-2, 2)(Rng),
                          static_cast<int>(Rng() % 48) - 30);
    REQUIRE(doubleToHalfBits(D) == Bits16(static_cast<_Float16>(D)));
    auto FB = static_cast<uint32_t>(Rng());
    float F;
    std::memcpy(&F, &FB, sizeof(F));
    if (std::isnan(F))
      continue;
    REQUIRE(floatToHalfBits(F) == Bits16(static_cast<_Float16>(F)));
  }
}
#endif

TEST_CASE("NaN converts to a quiet NaN with its sign", "[numerics]") {
  uint16_t H = doubleToHalfBits(-NaN);
  CHECK(isHalfNaN(H));
  CHECK((H & 0x8000) != 0);
  CHECK((H & 0x0200) != 0); // quiet bit
  uint16_t B = floatToBF16Bits(std::numeric_limits<float>::quiet_NaN());
  CHECK(isBF16NaN(B));
  CHECK((B & 0x0040) != 0);
  // A signalling float NaN with payload only in the low bits stays a NaN.
  uint32_t SNaNBits = 0x7f800001;
  float SNaN;
  std::memcpy(&SNaN, &SNaNBits, sizeof(SNaN));
  CHECK(isBF16NaN(floatToBF16Bits(SNaN)));
  CHECK(isHalfNaN(floatToHalfBits(SNaN)));
  CHECK(std::isnan(roundToDType(NaN, DType::F32)));
  CHECK(std::isnan(roundToDType(NaN, DType::BF16)));
}

TEST_CASE("roundToDType", "[numerics]") {
  CHECK(roundToDType(0.1, DType::F64) == 0.1);
  CHECK(roundToDType(0.1, DType::F32) == static_cast<double>(0.1f));
  CHECK(roundToDType(1e39, DType::F32) == Inf);
  CHECK(roundToDType(-1e39, DType::F32) == -Inf);
  CHECK(roundToDType(1e5, DType::F16) == Inf);
  CHECK(roundToDType(3.7, DType::I32) == 3);
  CHECK(roundToDType(-3.7, DType::I32) == -3);
  CHECK(roundToDType(NaN, DType::I32) == 0);
  CHECK(roundToDType(NaN, DType::I64) == 0);
  CHECK(roundToDType(1e10, DType::I32) == 2147483647.0);
  CHECK(roundToDType(-1e10, DType::I32) == -2147483648.0);
  CHECK(roundToDType(Inf, DType::I32) == 2147483647.0);
  CHECK(roundToDType(1e30, DType::I64) == std::ldexp(1, 63));
  CHECK(roundToDType(-1e30, DType::I64) == -std::ldexp(1, 63));
  CHECK(roundToDType(NaN, DType::Bool) == 1);
  CHECK(roundToDType(-0.0, DType::Bool) == 0);
  CHECK(roundToDType(0.25, DType::Bool) == 1);

  // f32 rounding agrees with the hardware double -> float conversion.
  std::mt19937_64 Rng(3);
  for (int I = 0; I < 200000; ++I) {
    double D = std::ldexp(std::uniform_real_distribution<double>(-2, 2)(Rng),
                          static_cast<int>(Rng() % 300) - 150);
    REQUIRE(roundToDType(D, DType::F32) ==
            static_cast<double>(static_cast<float>(D)));
  }
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

TEST_CASE("HostTensor: encode/decode layout and round trips", "[numerics]") {
  HostTensor H{DType::F16, {2}, {1.0, -2.0}};
  CHECK(encode(H) == std::vector<uint8_t>{0x00, 0x3c, 0x00, 0xc0});
  HostTensor BF{DType::BF16, {1}, {1.0}};
  CHECK(encode(BF) == std::vector<uint8_t>{0x80, 0x3f});
  HostTensor Bool{DType::Bool, {3}, {0, 1, 5}};
  CHECK(encode(Bool) == std::vector<uint8_t>{0, 1, 1});
  HostTensor I64{DType::I64, {1}, {1e30}};
  std::vector<uint8_t> Bytes = encode(I64);
  int64_t Got;
  std::memcpy(&Got, Bytes.data(), sizeof(Got));
  CHECK(Got == std::numeric_limits<int64_t>::max());

  std::mt19937_64 Rng(5);
  for (DType T : {DType::Bool, DType::I32, DType::I64, DType::F16, DType::BF16,
                  DType::F32, DType::F64}) {
    HostTensor X = randomTensor(T, {3, 5}, Rng, -100, 100);
    std::vector<uint8_t> B = encode(X);
    REQUIRE(B.size() == 15 * dtypeBytes(T));
    HostTensor Y = decode(B, T, {3, 5});
    CHECK(Y.Type == T);
    CHECK(Y.Dims == X.Dims);
    CHECK(Y.Data == X.Data);
  }
  // Rank 0 is one element.
  HostTensor S{DType::F32, {}, {2.5}};
  CHECK(decode(encode(S), DType::F32, {}).Data == std::vector<double>{2.5});

  CHECK_THROWS_WITH(decode(std::vector<uint8_t>(7), DType::F32, {2}),
                    Contains("7 bytes") && Contains("expected 8"));
  HostTensor Bad{DType::F32, {2, 2}, {1, 2, 3}};
  CHECK_THROWS_AS(encode(Bad), Error);
}

TEST_CASE("HostTensor: randomTensor values are exact in their dtype",
          "[numerics]") {
  std::mt19937_64 Rng(9);
  for (DType T : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    HostTensor X = randomTensor(T, {1000}, Rng, -3, 5);
    CHECK(X.numel() == 1000);
    for (double V : X.Data) {
      REQUIRE(roundToDType(V, T) == V);
      REQUIRE(V >= -3);
      REQUIRE(V <= 5);
    }
  }
  HostTensor I = randomTensor(DType::I32, {1000}, Rng, -2.5, 3.5);
  bool SawLo = false, SawHi = false;
  for (double V : I.Data) {
    REQUIRE(V == std::trunc(V));
    REQUIRE(V >= -2);
    REQUIRE(V <= 3);
    SawLo |= V == -2;
    SawHi |= V == 3;
  }
  CHECK(SawLo);
  CHECK(SawHi);
  HostTensor B = randomTensor(DType::Bool, {1000}, Rng);
  int Ones = 0;
  for (double V : B.Data) {
    REQUIRE((V == 0 || V == 1));
    Ones += V == 1;
  }
  CHECK(Ones > 400);
  CHECK(Ones < 600);
  CHECK(randomTensor(DType::F32, {0, 3}, Rng).Data.empty());
}

//===----------------------------------------------------------------------===//
// Philox
//===----------------------------------------------------------------------===//

// The published Random123 known-answer vectors for philox4x32-10.
static_assert(philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
              std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                      0x9b00dbd8});

TEST_CASE("Philox-4x32-10 known-answer vectors", "[philox]") {
  using A4 = std::array<uint32_t, 4>;
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
        A4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                      {0xffffffff, 0xffffffff}) ==
        A4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                      {0xa4093822, 0x299f31d0}) ==
        A4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("philoxUniform follows the documented contract", "[philox]") {
  // Index, stream and seed split into lo/hi 32-bit words as documented.
  int64_t Index = 0x123456789abLL, Stream = 7, Seed = -5;
  auto Out = philox4x32_10({0x456789ab, 0x123, 7, 0},
                           {0xfffffffb, 0xffffffff});
  double Expected = static_cast<double>(Out[0] >> 8) / 16777216.0;
  CHECK(philoxUniform(Index, Stream, Seed) == Expected);
  // All-zero inputs: word 0 is 0x6627e8d5.
  CHECK(philoxUniform(0, 0, 0) == static_cast<double>(0x6627e8d5u >> 8) *
                                      std::ldexp(1, -24));

  double Sum = 0;
  for (int64_t I = 0; I < 10000; ++I) {
    double U = philoxUniform(I, 1, 42);
    REQUIRE(U >= 0);
    REQUIRE(U < 1);
    REQUIRE(static_cast<double>(static_cast<float>(U)) == U); // exact in f32
    Sum += U;
  }
  CHECK(Sum / 10000 == Approx(0.5).margin(0.02));
  CHECK(philoxUniform(3, 0, 42) != philoxUniform(3, 1, 42));
  CHECK(philoxUniform(3, 0, 42) != philoxUniform(3, 0, 43));
}

//===----------------------------------------------------------------------===//
// Tolerance
//===----------------------------------------------------------------------===//

TEST_CASE("compareTensors: planted mismatch, NaN, Inf, ints", "[numerics]") {
  HostTensor Ref{DType::F32, {2, 3}, {1, 2, NaN, Inf, -Inf, 0}};
  HostTensor Got = Ref;
  CompareResult R = compareTensors(Got, Ref, 1e-6, "y");
  CHECK(R.Ok);
  CHECK(R.Mismatches == 0);
  CHECK(R.Message.empty());

  Got.Data[1] = 2.001; // planted
  R = compareTensors(Got, Ref, 1e-6, "y");
  CHECK_FALSE(R.Ok);
  CHECK(R.Mismatches == 1);
  CHECK_THAT(R.Message, Contains("y:") && Contains("1 of 6") &&
                            Contains("[1] got 2.001 ref 2"));
  CHECK(compareTensors(Got, Ref, 1e-3, "y").Ok);

  Got = Ref;
  Got.Data[2] = 0; // NaN expected
  CHECK_FALSE(compareTensors(Got, Ref, 1, "y").Ok);
  Got = Ref;
  Got.Data[3] = 1e30; // +Inf expected
  CHECK_FALSE(compareTensors(Got, Ref, 1, "y").Ok);
  Got = Ref;
  Got.Data[4] = Inf; // -Inf expected
  CHECK_FALSE(compareTensors(Got, Ref, 1, "y").Ok);
  Got = Ref;
  Got.Data[5] = NaN; // finite expected
  CHECK_FALSE(compareTensors(Got, Ref, 1, "y").Ok);

  HostTensor IRef{DType::I32, {3}, {1, 2, 3}};
  HostTensor IGot{DType::I32, {3}, {1, 2, 4}};
  CHECK_FALSE(compareTensors(IGot, IRef, 1, "i").Ok);
  CHECK_THAT(compareTensors(IGot, IRef, 1, "i").Message, Contains("[2]"));

  HostTensor Short{DType::F32, {5}, {1, 2, 3, 4, 5}};
  CHECK_THAT(compareTensors(Short, Ref, 1, "y").Message, Contains("shape"));
}

TEST_CASE("compareTensors: the rms term judges near-zero results by the "
          "tensor's scale",
          "[numerics]") {
  // x - mean(x) style: one element cancels to ~0, others are O(1).
  HostTensor Ref{DType::F32, {4}, {1.5, -1.5, 1e-9, 0.5}};
  HostTensor Got = Ref;
  Got.Data[2] = 3e-7; // relative error huge, absolute error tiny
  CHECK(compareTensors(Got, Ref, toleranceFor(DType::F32), "c").Ok);
  Got.Data[2] = 1e-4;
  CHECK_FALSE(compareTensors(Got, Ref, toleranceFor(DType::F32), "c").Ok);

  // More than five mismatches: the message is capped and gives the count.
  HostTensor Z{DType::F32, {10}, std::vector<double>(10, 1.0)};
  HostTensor W{DType::F32, {10}, std::vector<double>(10, 2.0)};
  CompareResult R = compareTensors(W, Z, 1e-3, "w");
  CHECK(R.Mismatches == 10);
  CHECK_THAT(R.Message, Contains("10 of 10") && Contains("[4]") &&
                            !Contains("[5]"));
}

TEST_CASE("toleranceFor", "[numerics]") {
  CHECK(toleranceFor(DType::F32, 1) == 8 * std::ldexp(1, -23) * 1.25);
  CHECK(toleranceFor(DType::F32, 1024) == 8 * std::ldexp(1, -23) * 9);
  CHECK(toleranceFor(DType::F16, 16) ==
        8 * std::ldexp(1, -10) + 8 * std::ldexp(1, -23) * 2);
  CHECK(toleranceFor(DType::BF16, 1) ==
        8 * std::ldexp(1, -7) + 8 * std::ldexp(1, -23) * 1.25);
  // A long reduction does not loosen the half-precision storage term.
  CHECK(toleranceFor(DType::BF16, 4096) < 0.07);
  // f64 outputs keep the f32 floor: kernels compute through f32 intrinsics.
  CHECK(toleranceFor(DType::F64, 1) == toleranceFor(DType::F32, 1));
  CHECK(toleranceFor(DType::I32, 100) == 0);
  CHECK(toleranceFor(DType::Bool, 1) == 0);
  CHECK(dtypeEpsilon(DType::BF16) == std::ldexp(1, -7));
}

TEST_CASE("maxReductionLength", "[numerics]") {
  Graph G;
  Value X = G.input("x", DType::F32, {"B", 300});
  Value Y = G.input("y", DType::F32, {"B", 20});
  Value Soft = exp(X - reduceMax(X));
  Value P = Soft / sum(Soft);
  Value Q = Y * mean(Y);
  Value Total = sum(Y, ReduceScope::All);
  G.output("p", P);
  G.output("q", Q);
  G.output("t", Total);
  G.output("plain", Y + 1.0);
  std::map<std::string, int64_t> Dims{{"B", 7}};
  CHECK(maxReductionLength(G, P.id(), Dims) == 300);
  CHECK(maxReductionLength(G, Q.id(), Dims) == 20);
  CHECK(maxReductionLength(G, Total.id(), Dims) == 140);
  CHECK(maxReductionLength(G, G.outputNamed("plain"), Dims) == 1);
  CHECK_THROWS_WITH(maxReductionLength(G, Total.id(), {}),
                    Contains("'B'"));
}
