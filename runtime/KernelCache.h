//===- runtime/KernelCache.h - Memory + disk cache of CUBINs ----*- C++ -*-===//
//
// getOrCompile() looks in memory, then on disk, then compiles and stores in
// both. The disk store is shared by every process of the user (atomic
// renames, checksummed entries), bounded in size (LRU by mtime), and optional:
// an unusable directory degrades to memory-only with one warning, never an
// exception. The directory is trusted code (whoever can write it can run
// code in this process), so one that another user owns or can write is
// refused the same way unless the user opts into sharing it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/CacheFile.h"
#include "runtime/CacheKey.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringRef.h>

#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace jitfuse::rt {

struct CacheConfig {
  std::string Dir;
  /// False keeps the in-memory map but never touches the disk.
  bool Enabled = true;
  /// Bound on the total size of the `<key>.jfk` entries and `<key>.cu`
  /// sources in Dir.
  uint64_t MaxBytes = uint64_t(1) << 30;
  /// Trust a directory and entries that other users own or can write (a
  /// cache shared by a group). Off: such a directory or entry makes the
  /// cache memory-only with one warning, since its writers could run code
  /// in this process.
  bool Shared = false;

  /// JITFUSE_CACHE_DIR (default $XDG_CACHE_HOME/jitfuse, else
  /// $HOME/.cache/jitfuse), JITFUSE_CACHE=off|on, JITFUSE_CACHE_MAX_BYTES
  /// (bytes, with an optional K/M/G suffix; default 1 GiB),
  /// JITFUSE_CACHE_SHARED=1|0 (default 0). Throws jitfuse::Error on a value
  /// it cannot understand.
  static CacheConfig fromEnv();
};

struct CacheStats {
  uint64_t MemoryHits = 0;
  uint64_t DiskHits = 0;
  /// Lookups that ran the compile function.
  uint64_t Misses = 0;
  /// Disk entries that failed validation (counted in Misses too once
  /// recompiled).
  uint64_t CorruptEntries = 0;
  double CompileSeconds = 0;
  uint64_t Evictions = 0;
};

/// What a file name in the cache directory is to jitfuse. Only these names
/// are ever read, counted, swept or deleted: a user's `notes.tmp.txt` or
/// `my_kernel.cu` in the same directory is none of the cache's business.
enum class CacheFileKind {
  Foreign, ///< Not a name jitfuse creates.
  Entry,   ///< `<key>.jfk`
  Source,  ///< `<key>.cu`
  Temp,    ///< `<key>.jfk|cu.tmp.<pid>.<16 hex>`, `.probe.tmp.<pid>.<16 hex>`
};

struct CacheFileName {
  CacheFileKind Kind = CacheFileKind::Foreign;
  /// The key of an Entry or Source, else "".
  std::string Key;
};

/// Classifies a file name (no directory part) of the cache directory.
CacheFileName classifyCacheFileName(llvm::StringRef Name);

class KernelCache {
public:
  explicit KernelCache(CacheConfig Config);
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;

  /// Returns the entry for cacheKey(Parts), running \p Compile only when
  /// neither memory nor disk has a valid one. Concurrent callers for the same
  /// key wait for one compile instead of repeating it; if \p Compile throws,
  /// every waiter gets that exception and nothing is cached.
  std::shared_ptr<const CacheEntry>
  getOrCompile(const CacheKeyParts &Parts,
               llvm::function_ref<CacheEntry()> Compile,
               bool *WasHit = nullptr);
  /// Same with a key computed once by the caller; \p Source is written
  /// beside the entry as `<key>.cu` for inspection only.
  std::shared_ptr<const CacheEntry>
  getOrCompile(const CacheKey &Key, llvm::StringRef Source,
               llvm::function_ref<CacheEntry()> Compile,
               bool *WasHit = nullptr);

  /// Replaces the (partial) entry of \p Key in memory with \p Complete and
  /// writes it to disk: the end of a background compile (CacheEntry::Deferred).
  void complete(const CacheKey &Key, llvm::StringRef Source,
                std::shared_ptr<const CacheEntry> Complete);

  /// Forgets \p Key in memory and deletes its disk entry and source, e.g.
  /// after the driver refused the CUBIN (ImageError), so the next lookup
  /// recompiles.
  void invalidate(const CacheKey &Key);

  CacheStats stats() const;
  /// Why the most recent disk lookup missed ("" if none did).
  std::string lastMissReason() const;

  std::string entryPath(llvm::StringRef Key) const;
  std::string sourcePath(llvm::StringRef Key) const;
  const std::string &dir() const { return Config.Dir; }
  bool diskEnabled() const { return DiskEnabled.load(); }
  uint64_t maxBytes() const { return Config.MaxBytes; }

  /// Temp files older than this are leftovers of crashed writers.
  static constexpr int kStaleTempSeconds = 600;

private:
  using EntryPtr = std::shared_ptr<const CacheEntry>;

  EntryPtr loadFromDisk(const std::string &Key);
  void storeToDisk(const std::string &Key, llvm::StringRef Source,
                   const CacheEntry &Entry);
  /// Removes jitfuse's stale temp files and, over the size bound, sources
  /// without an entry and then the least recently used entries (with their
  /// sources) other than \p Keep.
  void sweep(const std::string &Keep);
  /// Memory-only from now on: the directory cannot be written.
  void disableDisk(llvm::StringRef Reason);
  /// Memory-only from now on: \p Path (the directory or an entry) fails
  /// the ownership and permission rules (untrustedReason).
  void distrust(llvm::StringRef What, const std::string &Path,
                llvm::StringRef Reason);
  /// Prints \p Message unless this process already printed one for
  /// \p Cause in this cache's directory.
  void warnOnce(llvm::StringRef Cause, const std::string &Message) const;

  CacheConfig Config;
  std::atomic<bool> DiskEnabled{false};

  mutable std::mutex Lock;
  std::unordered_map<std::string, EntryPtr> Memory;
  std::unordered_map<std::string, std::shared_future<EntryPtr>> InFlight;
  CacheStats Stats;
  std::string LastMissReason;
};

} // namespace jitfuse::rt
