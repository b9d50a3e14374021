//===- runtime/CacheFile.h - On-disk kernel cache entry format --*- C++ -*-===//
//
// One entry file `<key>.jfk`, all integers little-endian:
//
//   offset  size  field
//        0     8  magic "JITFUSE\0"
//        8     4  u32 format version (kCacheFormatVersion)
//       12    16  raw key (the 16 bytes the 32-hex-char key spells)
//       28     8  u64 payload size
//       36     8  u64 XXH3-64 of the payload
//       44     -  payload: three length-prefixed (u64) fields:
//                 CUBIN bytes (one CUBIN, or an image bundle of several:
//                 runtime/ImageBundle.h), compile log, caller metadata
//
// The parser is written for hostile input (it will be fuzzed): every defect
// is a miss with a reason, never an exception, assert or out-of-bounds read.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace jitfuse::rt {

struct CacheEntry {
  /// What the driver loads: one CUBIN, or an image bundle of several
  /// (runtime/ImageBundle.h) when the program was compiled in parts.
  std::vector<char> Image;
  /// NVRTC's log (warnings); often empty.
  std::string Log;
  /// Set on a partial entry, whose Image holds only some of the program's
  /// kernels (an image bundle naming them) while the rest compile in the
  /// background: it yields those kernels' entry, or the compile's error.
  /// A partial entry lives in memory only (KernelCache::getOrCompile never
  /// writes it to disk); KernelCache::complete replaces it.
  std::shared_future<std::shared_ptr<const CacheEntry>> Deferred;
  /// With Deferred: the thread that fulfils it, joined when the last holder
  /// of the partial entry lets go (driver/Compiler.cpp). A detached thread
  /// could still be exiting after its waiter, and the process, had gone on:
  /// LeakSanitizer then reported the thread's thread-local blocks as leaked.
  std::shared_ptr<void> Worker;
};

inline constexpr char kCacheMagic[8] = {'J', 'I', 'T', 'F',
                                        'U', 'S', 'E', '\0'};
inline constexpr size_t kCacheHeaderSize = 8 + 4 + 16 + 8 + 8;

/// The complete file contents for \p Entry under \p Key (a valid key).
std::string serializeCacheEntry(llvm::StringRef Key, const CacheEntry &Entry);

/// Checks the header at the start of \p Bytes (at least kCacheHeaderSize
/// bytes of a file of \p FileSize bytes) against \p Key: magic, version,
/// key, and a payload size that matches the file. Returns "" or why the file
/// is not the entry, in parseCacheEntry's words. A reader calls it after
/// reading the header only, so a foreign or oversized file is refused
/// without reading the rest.
std::string checkCacheHeader(llvm::StringRef Bytes, llvm::StringRef Key,
                             uint64_t FileSize);

/// Parses file contents \p Bytes expected to hold the entry for \p Key.
/// Returns nullopt and sets \p WhyNot (when non-null) on any defect: wrong
/// magic, version or key, truncation, payload size or checksum mismatch,
/// malformed fields, trailing bytes.
std::optional<CacheEntry> parseCacheEntry(llvm::StringRef Bytes,
                                          llvm::StringRef Key,
                                          std::string *WhyNot = nullptr);

} // namespace jitfuse::rt
