//===- runtime/CacheFile.cpp - On-disk kernel cache entry format ----------===//

#include "runtime/CacheFile.h"

#include "runtime/CacheKey.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <xxhash.h>

#include <cstring>

namespace jitfuse::rt {

namespace {

void appendU32(std::string &Out, uint32_t V) {
  for (int I = 0; I < 4; ++I)
    Out.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
}

void appendU64(std::string &Out, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    Out.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
}

void appendField(std::string &Out, const char *Data, size_t Size) {
  appendU64(Out, Size);
  Out.append(Data, Size);
}

/// A bounds-checked cursor: every read says whether it fit.
class Reader {
public:
  explicit Reader(llvm::StringRef Bytes) : Bytes(Bytes) {}

  size_t remaining() const { return Bytes.size() - Pos; }

  bool read(void *Dst, size_t Size) {
    if (Size > remaining())
      return false;
    std::memcpy(Dst, Bytes.data() + Pos, Size);
    Pos += Size;
    return true;
  }

  bool readU32(uint32_t &V) {
    unsigned char B[4];
    if (!read(B, sizeof(B)))
      return false;
    V = 0;
    for (int I = 3; I >= 0; --I)
      V = V << 8 | B[I];
    return true;
  }

  bool readU64(uint64_t &V) {
    unsigned char B[8];
    if (!read(B, sizeof(B)))
      return false;
    V = 0;
    for (int I = 7; I >= 0; --I)
      V = V << 8 | B[I];
    return true;
  }

  /// A u64 length then that many bytes; refuses lengths past the end before
  /// allocating anything.
  bool readField(llvm::StringRef &Field) {
    uint64_t Size = 0;
    if (!readU64(Size) || Size > remaining())
      return false;
    Field = Bytes.substr(Pos, Size);
    Pos += Size;
    return true;
  }

private:
  llvm::StringRef Bytes;
  size_t Pos = 0;
};

std::optional<CacheEntry> miss(std::string *WhyNot, std::string Reason) {
  if (WhyNot)
    *WhyNot = std::move(Reason);
  return std::nullopt;
}

} // namespace

std::string serializeCacheEntry(llvm::StringRef Key, const CacheEntry &Entry) {
  std::optional<RawCacheKey> Raw = parseCacheKey(Key);
  JITFUSE_CHECK(Raw, "serializing a cache entry under a malformed key");

  std::string Payload;
  Payload.reserve(Entry.Cubin.size() + Entry.Log.size() +
                  Entry.Metadata.size() + 24);
  appendField(Payload, Entry.Cubin.data(), Entry.Cubin.size());
  appendField(Payload, Entry.Log.data(), Entry.Log.size());
  appendField(Payload, Entry.Metadata.data(), Entry.Metadata.size());

  std::string Out;
  Out.reserve(kCacheHeaderSize + Payload.size());
  Out.append(kCacheMagic, sizeof(kCacheMagic));
  appendU32(Out, kCacheFormatVersion);
  Out.append(reinterpret_cast<const char *>(Raw->data()), Raw->size());
  appendU64(Out, Payload.size());
  appendU64(Out, XXH3_64bits(Payload.data(), Payload.size()));
  JITFUSE_CHECK(Out.size() == kCacheHeaderSize, "header layout drifted from kCacheHeaderSize");
  Out += Payload;
  return Out;
}

std::optional<CacheEntry> parseCacheEntry(llvm::StringRef Bytes,
                                          llvm::StringRef Key,
                                          std::string *WhyNot) {
  std::optional<RawCacheKey> Expected = parseCacheKey(Key);
  if (!Expected)
    return miss(WhyNot, fmt::format("malformed key '{}'", Key.str()));
  if (Bytes.size() < kCacheHeaderSize)
    return miss(WhyNot,
                fmt::format("truncated header: {} bytes, expected at least {}",
                            Bytes.size(), kCacheHeaderSize));

  Reader R(Bytes);
  char Magic[sizeof(kCacheMagic)];
  uint32_t Version = 0;
  RawCacheKey StoredKey{};
  uint64_t PayloadSize = 0, Checksum = 0;
  // The size check above makes these reads infallible.
  bool HeaderOk = R.read(Magic, sizeof(Magic)) && R.readU32(Version) &&
                  R.read(StoredKey.data(), StoredKey.size()) &&
                  R.readU64(PayloadSize) && R.readU64(Checksum);
  JITFUSE_CHECK(HeaderOk, "header reads failed after the size check");
  (void)HeaderOk;

  if (std::memcmp(Magic, kCacheMagic, sizeof(kCacheMagic)) != 0)
    return miss(WhyNot, "bad magic: not a jitfuse kernel cache entry");
  if (Version != kCacheFormatVersion)
    return miss(WhyNot, fmt::format("format version {}, expected {}", Version,
                                    kCacheFormatVersion));
  if (StoredKey != *Expected)
    return miss(WhyNot, "entry holds a different key than its file name");
  if (PayloadSize != R.remaining())
    return miss(WhyNot,
                fmt::format("payload size {} in header, {} bytes present",
                            PayloadSize, R.remaining()));

  llvm::StringRef Payload = Bytes.substr(kCacheHeaderSize);
  if (XXH3_64bits(Payload.data(), Payload.size()) != Checksum)
    return miss(WhyNot, "payload checksum mismatch");

  Reader P(Payload);
  llvm::StringRef Cubin, Log, Metadata;
  if (!P.readField(Cubin) || !P.readField(Log) || !P.readField(Metadata))
    return miss(WhyNot, "malformed payload fields");
  if (P.remaining() != 0)
    return miss(WhyNot,
                fmt::format("{} trailing bytes after the payload fields",
                            P.remaining()));

  CacheEntry Entry;
  Entry.Cubin.assign(Cubin.begin(), Cubin.end());
  Entry.Log = Log.str();
  Entry.Metadata = Metadata.str();
  return Entry;
}

} // namespace jitfuse::rt
