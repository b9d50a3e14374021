//===- runtime/CacheKey.cpp - Kernel cache keys ---------------------------===//

#include "runtime/CacheKey.h"

#include <xxhash.h>

namespace jitfuse::rt {

namespace {

void appendU64(std::string &Out, uint64_t V) {
  // Fixed little-endian so the key does not depend on the host.
  for (int I = 0; I < 8; ++I)
    Out.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
}

/// Length-prefixed so no two different part lists serialize the same way
/// (e.g. options {"-a b"} vs {"-a", "b"}).
void appendField(std::string &Out, llvm::StringRef Field) {
  appendU64(Out, Field.size());
  Out.append(Field.data(), Field.size());
}

int hexDigit(char C) {
  if (C >= '0' && C <= '9')
    return C - '0';
  if (C >= 'a' && C <= 'f')
    return C - 'a' + 10;
  return -1;
}

} // namespace

CacheKey cacheKey(const CacheKeyParts &Parts) {
  std::string Buf;
  Buf.reserve(Parts.Source.size() + 256);
  appendField(Buf, "jitfuse-kernel-cache");
  appendU64(Buf, kCacheFormatVersion);
  appendField(Buf, Parts.Source);
  appendU64(Buf, Parts.Options.size());
  for (const std::string &O : Parts.Options)
    appendField(Buf, O);
  appendField(Buf, Parts.NvrtcVersion);
  appendField(Buf, Parts.Arch);

  XXH128_hash_t H = XXH3_128bits(Buf.data(), Buf.size());
  XXH128_canonical_t Canonical;
  XXH128_canonicalFromHash(&Canonical, H);
  static constexpr char Hex[] = "0123456789abcdef";
  std::string Key;
  Key.reserve(32);
  for (unsigned char Byte : Canonical.digest) {
    Key.push_back(Hex[Byte >> 4]);
    Key.push_back(Hex[Byte & 0xf]);
  }
  return CacheKey(std::move(Key));
}

std::optional<CacheKey> CacheKey::parse(llvm::StringRef Text) {
  if (!isValidCacheKey(Text))
    return std::nullopt;
  return CacheKey(Text.str());
}

bool isValidCacheKey(llvm::StringRef Key) {
  return parseCacheKey(Key).has_value();
}

std::optional<RawCacheKey> parseCacheKey(llvm::StringRef Key) {
  RawCacheKey Raw{};
  if (Key.size() != 2 * Raw.size())
    return std::nullopt;
  for (size_t I = 0; I < Raw.size(); ++I) {
    int Hi = hexDigit(Key[2 * I]);
    int Lo = hexDigit(Key[2 * I + 1]);
    if (Hi < 0 || Lo < 0)
      return std::nullopt;
    Raw[I] = static_cast<uint8_t>(Hi << 4 | Lo);
  }
  return Raw;
}

} // namespace jitfuse::rt
