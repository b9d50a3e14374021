//===- runtime/CacheIO.h - File primitives for the kernel cache -*- C++ -*-===//
//
// POSIX file operations the cache needs, each reporting failure as a reason
// string instead of throwing: a cache that cannot read or write is a slow
// cache, not an error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>
#include <string>

namespace jitfuse::rt {

/// Outcome of readWholeFile: the bytes, or why not. NotFound separates a
/// plain miss from a damaged or unreadable entry.
struct FileRead {
  std::optional<std::string> Bytes;
  bool NotFound = false;
  std::string Error;
};

/// Reads a regular file of at most \p MaxBytes.
FileRead readWholeFile(const std::string &Path, uint64_t MaxBytes);

/// Writes \p Bytes to `<Path>.tmp.<pid>.<random>` in the same directory and
/// renames it over \p Path, so readers see the old file or the new one,
/// never a mix, even with many writers. Returns an error message or "".
std::string writeFileAtomically(const std::string &Path, llvm::StringRef Bytes);

/// Sets the file's mtime to now (the LRU clock). Failure is ignored: a
/// read-only shared cache still serves hits.
void touchFile(const std::string &Path);

/// Creates and removes a probe file in \p Dir. Returns an error message or "".
std::string probeWritable(const std::string &Dir);

/// A fresh random 64-bit value as 16 hex chars, for unique temp names.
std::string randomHex();

} // namespace jitfuse::rt
