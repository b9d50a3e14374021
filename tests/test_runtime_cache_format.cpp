// Cache keys and the entry file parser (pure functions; no disk, no GPU).
#include "runtime/CacheFile.h"
#include "runtime/CacheKey.h"

#include <catch2/catch.hpp>

// Header-only, like the runtime uses it.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#include <string>

using namespace jitfuse::rt;

namespace {

CacheKeyParts sampleParts() {
  return {"extern \"C\" __global__ void k(float *P) { P[0] = 1.0f; }",
          {"--gpu-architecture=sm_90", "--std=c++17"},
          "13.0 libnvrtc.so.13 109338064",
          "sm_90"};
}

CacheEntry sampleEntry() {
  CacheEntry E;
  E.Image = {'\x7f', 'E', 'L', 'F', '\0', '\x01', '\x02', '\xff'};
  E.Log = "warning: something";
  return E;
}

void putU32(std::string &Bytes, size_t At, uint32_t V) {
  for (int I = 0; I < 4; ++I)
    Bytes[At + I] = static_cast<char>(V >> (8 * I));
}

void putU64(std::string &Bytes, size_t At, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    Bytes[At + I] = static_cast<char>(V >> (8 * I));
}

/// Rewrites the header's size and checksum to match a modified payload, so a
/// test reaches the field parser past the integrity checks.
void resealPayload(std::string &Bytes) {
  llvm::StringRef Payload = llvm::StringRef(Bytes).substr(kCacheHeaderSize);
  putU64(Bytes, 28, Payload.size());
  putU64(Bytes, 36, XXH3_64bits(Payload.data(), Payload.size()));
}

} // namespace

TEST_CASE("Cache keys are 32 lowercase hex chars and deterministic",
          "[runtime][cache]") {
  std::string Key = cacheKey(sampleParts()).str();
  CHECK(Key.size() == 32);
  CHECK(Key.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(isValidCacheKey(Key));
  CHECK(cacheKey(sampleParts()).str() == Key);
  // Pinned: the key must be identical in every process and on every machine.
  // If this changes on purpose, bump kCacheFormatVersion.
  CHECK(Key == "0c3d52461de5ec3d2e15a0a529b457f3"); // format version 3
}

TEST_CASE("Every key component changes the key", "[runtime][cache]") {
  const std::string Base = cacheKey(sampleParts()).str();
  auto Changed = [&](auto Mutate) {
    CacheKeyParts P = sampleParts();
    Mutate(P);
    return cacheKey(P).str() != Base;
  };
  CHECK(Changed([](CacheKeyParts &P) { P.Source += " "; }));
  CHECK(Changed([](CacheKeyParts &P) { P.Options.push_back("-lineinfo"); }));
  CHECK(Changed([](CacheKeyParts &P) { P.Options[1] = "--std=c++20"; }));
  CHECK(
      Changed([](CacheKeyParts &P) { std::swap(P.Options[0], P.Options[1]); }));
  CHECK(Changed([](CacheKeyParts &P) { P.NvrtcVersion = "13.1"; }));
  CHECK(Changed([](CacheKeyParts &P) { P.Arch = "sm_100"; }));
  // Length prefixes: moving text between fields must not collide.
  CHECK(Changed([](CacheKeyParts &P) {
    P.Options = {"--gpu-architecture=sm_90 --std=c++17"};
  }));
  CHECK(Changed([](CacheKeyParts &P) {
    P.Arch = "";
    P.NvrtcVersion += "sm_90";
  }));
}

TEST_CASE("Cache key parsing accepts only cacheKey's spelling",
          "[runtime][cache]") {
  std::string Key = cacheKey(sampleParts()).str();
  CHECK(parseCacheKey(Key).has_value());
  CHECK_FALSE(isValidCacheKey(""));
  CHECK_FALSE(isValidCacheKey(Key.substr(1)));
  CHECK_FALSE(isValidCacheKey(Key + "0"));
  std::string Upper = Key;
  Upper[0] = 'A';
  CHECK_FALSE(isValidCacheKey(Upper));
  CHECK_FALSE(isValidCacheKey("../../../../etc/passwd0123456789"));
}

TEST_CASE("Cache entries round-trip through the file format",
          "[runtime][cache]") {
  std::string Key = cacheKey(sampleParts()).str();
  std::string Bytes = serializeCacheEntry(Key, sampleEntry());
  CHECK(Bytes.size() == kCacheHeaderSize + 2 * 8 + 8 + 18); // two fields: image, log
  CHECK(Bytes.compare(0, 8, std::string("JITFUSE\0", 8)) == 0);

  std::string WhyNot;
  std::optional<CacheEntry> E = parseCacheEntry(Bytes, Key, &WhyNot);
  REQUIRE(E.has_value());
  CHECK(E->Image == sampleEntry().Image);
  CHECK(E->Log == "warning: something");

  CacheEntry Empty;
  std::optional<CacheEntry> E2 =
      parseCacheEntry(serializeCacheEntry(Key, Empty), Key);
  REQUIRE(E2.has_value());
  CHECK(E2->Image.empty());
}

TEST_CASE("Every single-byte corruption of an entry is a miss",
          "[runtime][cache]") {
  std::string Key = cacheKey(sampleParts()).str();
  const std::string Good = serializeCacheEntry(Key, sampleEntry());
  for (size_t I = 0; I < Good.size(); ++I) {
    for (unsigned char Flip : {0x01, 0x80, 0xff}) {
      std::string Bad = Good;
      Bad[I] = static_cast<char>(Bad[I] ^ Flip);
      std::string WhyNot;
      INFO("byte " << I << " xor " << int(Flip));
      CHECK_FALSE(parseCacheEntry(Bad, Key, &WhyNot).has_value());
      CHECK_FALSE(WhyNot.empty());
    }
  }
}

TEST_CASE("Every truncation of an entry is a miss", "[runtime][cache]") {
  std::string Key = cacheKey(sampleParts()).str();
  const std::string Good = serializeCacheEntry(Key, sampleEntry());
  for (size_t Len = 0; Len < Good.size(); ++Len) {
    INFO("length " << Len);
    CHECK_FALSE(
        parseCacheEntry(llvm::StringRef(Good).substr(0, Len), Key).has_value());
  }
  std::string Longer = Good + "x";
  CHECK_FALSE(parseCacheEntry(Longer, Key).has_value());
}

TEST_CASE("Entry parse failures say why", "[runtime][cache]") {
  std::string Key = cacheKey(sampleParts()).str();
  const std::string Good = serializeCacheEntry(Key, sampleEntry());
  std::string WhyNot;

  std::string BadMagic = Good;
  BadMagic[0] = 'X';
  CHECK_FALSE(parseCacheEntry(BadMagic, Key, &WhyNot));
  CHECK(WhyNot.find("magic") != std::string::npos);

  std::string OldVersion = Good;
  putU32(OldVersion, 8, kCacheFormatVersion + 1);
  CHECK_FALSE(parseCacheEntry(OldVersion, Key, &WhyNot));
  CHECK(WhyNot.find("format version") != std::string::npos);

  CacheKeyParts Other = sampleParts();
  Other.Arch = "sm_80";
  CHECK_FALSE(parseCacheEntry(Good, cacheKey(Other).str(), &WhyNot));
  CHECK(WhyNot.find("different key") != std::string::npos);

  CHECK_FALSE(parseCacheEntry(Good, "not-a-key", &WhyNot));
  CHECK(WhyNot.find("malformed key") != std::string::npos);

  CHECK_FALSE(
      parseCacheEntry(llvm::StringRef(Good).drop_back(3), Key, &WhyNot));
  CHECK(WhyNot.find("payload size") != std::string::npos);

  CHECK_FALSE(
      parseCacheEntry(llvm::StringRef(Good).take_front(10), Key, &WhyNot));
  CHECK(WhyNot.find("truncated header") != std::string::npos);

  std::string BadSum = Good;
  BadSum.back() ^= 0x10;
  CHECK_FALSE(parseCacheEntry(BadSum, Key, &WhyNot));
  CHECK(WhyNot.find("checksum") != std::string::npos);
}

TEST_CASE("Hostile field lengths behind a valid checksum are a miss",
          "[runtime][cache]") {
  std::string Key = cacheKey(sampleParts()).str();
  const std::string Good = serializeCacheEntry(Key, sampleEntry());
  std::string WhyNot;

  // CUBIN length claims ~2^64 bytes: must not allocate or read past the end.
  std::string Huge = Good;
  putU64(Huge, kCacheHeaderSize, ~uint64_t(0));
  resealPayload(Huge);
  CHECK_FALSE(parseCacheEntry(Huge, Key, &WhyNot));
  CHECK(WhyNot.find("malformed payload") != std::string::npos);

  // Fields shorter than the payload leave trailing bytes.
  std::string Trailing = Good + "junk";
  resealPayload(Trailing);
  CHECK_FALSE(parseCacheEntry(Trailing, Key, &WhyNot));
  CHECK(WhyNot.find("trailing") != std::string::npos);

  // An empty payload has no fields at all.
  std::string NoFields = Good.substr(0, kCacheHeaderSize);
  resealPayload(NoFields);
  CHECK_FALSE(parseCacheEntry(NoFields, Key, &WhyNot));
  CHECK(WhyNot.find("malformed payload") != std::string::npos);
}
