//===- runtime/CacheIO.h - File primitives for the kernel cache -*- C++ -*-===//
//
// POSIX file operations the cache needs, each reporting failure as a reason
// string instead of throwing: a cache that cannot read or write is a slow
// cache, not an error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>
#include <string>

namespace jitfuse::rt {

/// Outcome of readRegularFile: the bytes, or why not. NotFound separates a
/// plain miss from a damaged or unreadable entry; Untrusted from both.
struct FileRead {
  std::optional<std::string> Bytes;
  bool NotFound = false;
  /// The file fails the rules of untrustedReason; Error says how.
  bool Untrusted = false;
  std::string Error;
};

struct ReadOptions {
  /// Larger files are refused before any byte is read.
  uint64_t MaxBytes = 0;
  /// Refuse a file that untrustedReason objects to.
  bool RequireTrusted = true;
  /// When set, the first HeaderBytes bytes (fewer in a shorter file) are
  /// read and given to CheckHeader with the file size before anything else:
  /// a foreign or oversized file costs one small read. It returns "" or why
  /// the file is refused.
  size_t HeaderBytes = 0;
  llvm::function_ref<std::string(llvm::StringRef Header, uint64_t FileSize)>
      CheckHeader;
};

/// Reads the regular file \p Path. Never follows a symlink at \p Path and
/// never blocks: a FIFO, socket, device, directory or symlink there is
/// refused with a reason, like a file over the size limit.
FileRead readRegularFile(const std::string &Path, const ReadOptions &Opts);

/// Writes \p Bytes to `<Path>.tmp.<pid>.<random>` in the same directory and
/// renames it over \p Path, so readers see the old file or the new one,
/// never a mix, even with many writers. The temp file is created exclusively
/// and the rename replaces whatever is at \p Path (a planted symlink or FIFO
/// included) without opening it. A file size limit (`ulimit -f`) is a write
/// error, not SIGXFSZ. On any failure the temp file is removed. Returns an
/// error message or "".
std::string writeFileAtomically(const std::string &Path, llvm::StringRef Bytes);

/// Sets the file's mtime to now (the LRU clock), not following a symlink.
/// Failure is ignored: a read-only shared cache still serves hits.
void touchFile(const std::string &Path);

/// Creates \p Dir and its missing parents with mode 0700 whatever the
/// umask; existing directories are left as they are. Returns an error
/// message or "".
std::string createPrivateDirs(const std::string &Dir);

/// Why a file or directory with owner \p Uid and mode \p Mode must not be
/// trusted to hold kernels, or "": owned by neither this process's effective
/// user nor root, or writable by group or others. Whoever can write the
/// cache can run code in this process.
std::string untrustedReason(uint32_t Uid, uint32_t Mode);

/// untrustedReason for \p Path (following symlinks: the configured
/// directory may be one), or why it cannot be checked.
std::string checkTrusted(const std::string &Path);

/// Creates and removes a probe file in \p Dir. Returns an error message or "".
std::string probeWritable(const std::string &Dir);

/// A fresh random 64-bit value as 16 hex chars, for unique temp names.
std::string randomHex();

} // namespace jitfuse::rt
