//===- runtime/CacheKey.h - Kernel cache keys -------------------*- C++ -*-===//
//
// A cache key names one compiled CUBIN: XXH3-128 over everything that can
// change the binary. Forgetting a component is the classic stale-cache bug
// (an old CUBIN after a compiler upgrade); adding a volatile one (a
// timestamp, a pointer) is the classic always-miss bug.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jitfuse::rt {

/// Bump whenever the entry file layout or the key serialization changes:
/// both old entries and old keys then stop matching. 2: the CUBIN field
/// may hold an image bundle (runtime/ImageBundle.h). 3: the unused metadata
/// field is gone (payload: image, log).
inline constexpr uint32_t kCacheFormatVersion = 3;

struct CacheKeyParts {
  std::string Source;
  std::vector<std::string> Options;
  std::string NvrtcVersion;
  std::string Arch;
};

using RawCacheKey = std::array<uint8_t, 16>;

/// A kernel cache key: 32 lowercase hex characters naming one compiled
/// binary. Only cacheKey() (which hashes) and parse() (which validates) make
/// one, so holding a CacheKey means the hash was computed and the text is a
/// safe file name: the cache takes keys only in this form.
class CacheKey {
public:
  /// The key spelled by \p Text, or nullopt unless it is exactly 32
  /// lowercase hex characters.
  static std::optional<CacheKey> parse(llvm::StringRef Text);

  const std::string &str() const { return Hex; }
  operator llvm::StringRef() const { return Hex; }
  friend bool operator==(const CacheKey &A, const CacheKey &B) { return A.Hex == B.Hex; }

private:
  explicit CacheKey(std::string Hex) : Hex(std::move(Hex)) {}
  friend CacheKey cacheKey(const CacheKeyParts &Parts);
  std::string Hex;
};

/// XXH3-128 of the parts; identical across processes and machines for
/// identical parts.
CacheKey cacheKey(const CacheKeyParts &Parts);

/// True for exactly 32 lowercase hex characters (what cacheKey returns).
bool isValidCacheKey(llvm::StringRef Key);

/// The 16 raw bytes stored in entry headers, or nullopt for an invalid key.
std::optional<RawCacheKey> parseCacheKey(llvm::StringRef Key);

} // namespace jitfuse::rt
