//===- runtime/CacheFile.cpp - On-disk kernel cache entry format ----------===//

#include "runtime/CacheFile.h"

#include "runtime/CacheKey.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <xxhash.h>

#include <algorithm>
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
  Payload.reserve(Entry.Image.size() + Entry.Log.size() + 16);
  appendField(Payload, Entry.Image.data(), Entry.Image.size());
  appendField(Payload, Entry.Log.data(), Entry.Log.size());

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

namespace {

struct Header {
  uint64_t PayloadSize = 0;
  uint64_t Checksum = 0;
};

/// Validates the header of a FileSize-byte entry whose first bytes are
/// \p Bytes; fills \p H. Returns "" or the reason for a miss.
std::string readHeader(llvm::StringRef Bytes, llvm::StringRef Key,
                       uint64_t FileSize, Header &H) {
  std::optional<RawCacheKey> Expected = parseCacheKey(Key);
  if (!Expected)
    return fmt::format("malformed key '{}'", Key.str());
  if (FileSize < kCacheHeaderSize || Bytes.size() < kCacheHeaderSize)
    return fmt::format("truncated header: {} bytes, expected at least {}",
                       std::min<uint64_t>(FileSize, Bytes.size()),
                       kCacheHeaderSize);

  Reader R(Bytes);
  char Magic[sizeof(kCacheMagic)];
  uint32_t Version = 0;
  RawCacheKey StoredKey{};
  // The size check above makes these reads infallible.
  bool HeaderOk = R.read(Magic, sizeof(Magic)) && R.readU32(Version) &&
                  R.read(StoredKey.data(), StoredKey.size()) &&
                  R.readU64(H.PayloadSize) && R.readU64(H.Checksum);
  JITFUSE_CHECK(HeaderOk, "header reads failed after the size check");
  (void)HeaderOk;

  if (std::memcmp(Magic, kCacheMagic, sizeof(kCacheMagic)) != 0)
    return "bad magic: not a jitfuse kernel cache entry";
  if (Version != kCacheFormatVersion)
    return fmt::format("format version {}, expected {}", Version,
                       kCacheFormatVersion);
  if (StoredKey != *Expected)
    return "entry holds a different key than its file name";
  if (H.PayloadSize != FileSize - kCacheHeaderSize)
    return fmt::format("payload size {} in header, {} bytes present",
                       H.PayloadSize, FileSize - kCacheHeaderSize);
  return "";
}

} // namespace

std::string checkCacheHeader(llvm::StringRef Bytes, llvm::StringRef Key,
                             uint64_t FileSize) {
  Header H;
  return readHeader(Bytes, Key, FileSize, H);
}

std::optional<CacheEntry> parseCacheEntry(llvm::StringRef Bytes,
                                          llvm::StringRef Key,
                                          std::string *WhyNot) {
  Header H;
  if (std::string Why = readHeader(Bytes, Key, Bytes.size(), H); !Why.empty())
    return miss(WhyNot, std::move(Why));

  llvm::StringRef Payload = Bytes.substr(kCacheHeaderSize);
  if (XXH3_64bits(Payload.data(), Payload.size()) != H.Checksum)
    return miss(WhyNot, "payload checksum mismatch");

  Reader P(Payload);
  llvm::StringRef Image, Log;
  if (!P.readField(Image) || !P.readField(Log))
    return miss(WhyNot, "malformed payload fields");
  if (P.remaining() != 0)
    return miss(WhyNot,
                fmt::format("{} trailing bytes after the payload fields",
                            P.remaining()));

  CacheEntry Entry;
  Entry.Image.assign(Image.begin(), Image.end());
  Entry.Log = Log.str();
  return Entry;
}

} // namespace jitfuse::rt
