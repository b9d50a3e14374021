//===- fuzz/fuzz_cache_file.cpp - libFuzzer target: cache entry parser ----===//
//
// Mode 0: the bytes are a whole entry file, checked under the key its own
// header spells (so the fuzzer only has to find a checksum, not a key).
// Mode 1: the bytes become a valid entry (CUBIN, log, metadata), which must
// round-trip, and then a corrupted copy (one byte changed, or truncated)
// that must parse to a miss with a reason or to an identical entry.
// Mode 2: the bytes are an image bundle (runtime/ImageBundle.h), the blob a
// cache entry's CUBIN field may hold; an accepted bundle must re-serialize
// to the same bytes.
// Any crash, sanitizer report or exception is a bug.
//
//===----------------------------------------------------------------------===//
#include "runtime/CacheFile.h"
#include "runtime/CacheKey.h"
#include "runtime/ImageBundle.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace jitfuse::rt;

static void require(bool Ok, const char *What) {
  if (!Ok) {
    std::fprintf(stderr, "fuzz_cache_file: %s\n", What);
    std::abort();
  }
}

static void parseRaw(llvm::StringRef Bytes) {
  std::string Key = "0123456789abcdef0123456789abcdef";
  if (Bytes.size() >= 28) {
    Key.clear();
    for (size_t I = 12; I < 28; ++I)
      Key += fmt::format("{:02x}", static_cast<uint8_t>(Bytes[I]));
  }
  std::string Why;
  auto E = parseCacheEntry(Bytes, Key, &Why);
  if (E)
    require(serializeCacheEntry(Key, *E) == Bytes.str(), "accepted entry does not round-trip");
  else
    require(!Why.empty(), "a miss without a reason");
}

static void roundTrip(llvm::StringRef Bytes) {
  // Layout of the input: [cut1][cut2][pos:4][value][rest...]
  if (Bytes.size() < 7)
    return;
  auto U8 = [&](size_t I) { return static_cast<uint8_t>(Bytes[I]); };
  uint32_t Pos = U8(2) | U8(3) << 8 | U8(4) << 16 | static_cast<uint32_t>(U8(5)) << 24;
  uint8_t Value = U8(6);
  llvm::StringRef Rest = Bytes.drop_front(7);
  size_t C1 = std::min<size_t>(U8(0), Rest.size());
  size_t C2 = std::min<size_t>(C1 + U8(1), Rest.size());
  CacheEntry In;
  In.Image.assign(Rest.begin(), Rest.begin() + C1);
  In.Log = Rest.slice(C1, C2).str();
  const std::string Key = cacheKey({Rest.str(), {"-x"}, "v", "sm_90"}).str();
  std::string File = serializeCacheEntry(Key, In);
  std::string Why;
  auto Out = parseCacheEntry(File, Key, &Why);
  require(Out.has_value(), "a serialized entry does not parse");
  require(Out->Image == In.Image && Out->Log == In.Log,
          "round trip changed the entry");
  std::string Bad = File;
  if (Pos & 0x80000000u)
    Bad.resize((Pos & 0x7fffffffu) % (File.size() + 1));
  else
    Bad[Pos % File.size()] = static_cast<char>(Value);
  auto Corrupt = parseCacheEntry(Bad, Key, &Why);
  if (Bad != File)
    require(!Corrupt.has_value(), "a corrupted entry was accepted");
  require(!parseCacheEntry(File, Key.substr(0, 31) + (Key[31] == '0' ? "1" : "0"), &Why),
          "an entry was accepted under another key");
}

static void parseBundle(llvm::StringRef Bytes) {
  // Start from the magic so the fuzzer explores the fields, not the magic.
  std::vector<char> Blob(kImageBundleMagic, kImageBundleMagic + 8);
  Blob.insert(Blob.end(), Bytes.begin(), Bytes.end());
  std::string Why;
  auto Parts = parseImageBundle(Blob, &Why);
  if (Parts)
    require(bundleImages(*Parts) == Blob, "accepted bundle does not round-trip");
  else
    require(!Why.empty(), "a rejected bundle without a reason");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  llvm::StringRef Bytes(reinterpret_cast<const char *>(Data + 1), Size - 1);
  switch (Data[0] % 3) {
  case 0: parseRaw(Bytes); break;
  case 1: roundTrip(Bytes); break;
  default: parseBundle(Bytes); break;
  }
  return 0;
}
