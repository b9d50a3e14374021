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
/// may hold an image bundle (runtime/ImageBundle.h).
inline constexpr uint32_t kCacheFormatVersion = 2;

struct CacheKeyParts {
  std::string Source;
  std::vector<std::string> Options;
  std::string NvrtcVersion;
  std::string Arch;
};

using RawCacheKey = std::array<uint8_t, 16>;

/// 32 lowercase hex characters; identical across processes and machines for
/// identical parts.
std::string cacheKey(const CacheKeyParts &Parts);

/// True for exactly 32 lowercase hex characters (what cacheKey returns).
bool isValidCacheKey(llvm::StringRef Key);

/// The 16 raw bytes stored in entry headers, or nullopt for an invalid key.
std::optional<RawCacheKey> parseCacheKey(llvm::StringRef Key);

} // namespace jitfuse::rt
