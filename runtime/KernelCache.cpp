//===- runtime/KernelCache.cpp - Memory + disk cache of CUBINs ------------===//

#include "runtime/KernelCache.h"

#include "runtime/CacheIO.h"
#include "support/Error.h"
#include "support/Settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <vector>

namespace fs = std::filesystem;

namespace jitfuse::rt {

namespace {

/// A CUBIN is a few MB at most; refuse to slurp a damaged multi-GB file.
constexpr uint64_t kMaxEntryFileBytes = uint64_t(1) << 30;

/// Keys are validated before they become file names: a malformed one could
/// otherwise name a file outside the cache directory.
void requireValidKey(llvm::StringRef Key) {
  if (!isValidCacheKey(Key))
    fail("'{}' is not a kernel cache key: expected 32 lowercase hex characters",
         Key.str());
}

} // namespace

CacheConfig CacheConfig::fromEnv() {
  Settings S = Settings::fromEnv();
  CacheConfig C;
  C.Dir = S.CacheDir;
  C.Enabled = S.CacheEnabled;
  C.MaxBytes = S.CacheMaxBytes;
  return C;
}

KernelCache::KernelCache(CacheConfig Cfg) : Config(std::move(Cfg)) {
  if (!Config.Enabled)
    return;
  if (Config.Dir.empty()) {
    disableDisk("no directory configured; set JITFUSE_CACHE_DIR");
    return;
  }
  std::error_code EC;
  fs::create_directories(Config.Dir, EC);
  if (EC) {
    disableDisk(fmt::format("cannot create it: {}", EC.message()));
    return;
  }
  if (!fs::is_directory(Config.Dir, EC)) {
    disableDisk("it is not a directory");
    return;
  }
  // Writability is probed, not predicted from permission bits: root ignores
  // them, and read-only mounts are invisible to them.
  if (std::string Err = probeWritable(Config.Dir); !Err.empty()) {
    disableDisk(Err);
    return;
  }
  DiskEnabled = true;
}

void KernelCache::disableDisk(llvm::StringRef Reason) {
  DiskEnabled = false;
  // One warning per directory per process, however many caches use it.
  warnOnce("cache-dir:" + Config.Dir,
           fmt::format("kernel cache directory '{}' is not writable ({}); caching in memory only",
                       Config.Dir, Reason.str()));
}

std::string KernelCache::entryPath(llvm::StringRef Key) const {
  return fmt::format("{}/{}.jfk", Config.Dir, Key.str());
}

std::string KernelCache::sourcePath(llvm::StringRef Key) const {
  return fmt::format("{}/{}.cu", Config.Dir, Key.str());
}

CacheStats KernelCache::stats() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Stats;
}

std::string KernelCache::lastMissReason() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return LastMissReason;
}

std::shared_ptr<const CacheEntry>
KernelCache::getOrCompile(const CacheKeyParts &Parts,
                          llvm::function_ref<CacheEntry()> Compile,
                          bool *WasHit) {
  return getOrCompile(cacheKey(Parts), Parts.Source, Compile, WasHit);
}

std::shared_ptr<const CacheEntry>
KernelCache::getOrCompile(llvm::StringRef KeyRef, llvm::StringRef Source,
                          llvm::function_ref<CacheEntry()> Compile,
                          bool *WasHit) {
  requireValidKey(KeyRef);
  std::string Key = KeyRef.str();
  if (WasHit)
    *WasHit = true;

  std::promise<EntryPtr> Promise;
  {
    std::unique_lock<std::mutex> Guard(Lock);
    if (auto It = Memory.find(Key); It != Memory.end()) {
      ++Stats.MemoryHits;
      return It->second;
    }
    if (auto It = InFlight.find(Key); It != InFlight.end()) {
      // Another thread is loading or compiling this key: wait for it rather
      // than compile the same source twice. get() rethrows its failure.
      std::shared_future<EntryPtr> Pending = It->second;
      Guard.unlock();
      EntryPtr Entry = Pending.get();
      std::lock_guard<std::mutex> Relock(Lock);
      ++Stats.MemoryHits;
      return Entry;
    }
    InFlight.emplace(Key, Promise.get_future().share());
  }

  // The lock is not held from here on: disk I/O and compiles run in
  // parallel across keys.
  EntryPtr Entry;
  try {
    if (DiskEnabled)
      Entry = loadFromDisk(Key);
    if (!Entry) {
      if (WasHit)
        *WasHit = false;
      auto Start = std::chrono::steady_clock::now();
      Entry = std::make_shared<const CacheEntry>(Compile());
      std::chrono::duration<double> Took =
          std::chrono::steady_clock::now() - Start;
      {
        std::lock_guard<std::mutex> Guard(Lock);
        ++Stats.Misses;
        Stats.CompileSeconds += Took.count();
      }
      if (DiskEnabled)
        storeToDisk(Key, Source, *Entry);
    }
  } catch (...) {
    std::lock_guard<std::mutex> Guard(Lock);
    InFlight.erase(Key);
    Promise.set_exception(std::current_exception());
    throw;
  }

  std::lock_guard<std::mutex> Guard(Lock);
  Memory.emplace(Key, Entry);
  InFlight.erase(Key);
  Promise.set_value(Entry);
  return Entry;
}

KernelCache::EntryPtr KernelCache::loadFromDisk(const std::string &Key) {
  std::string Path = entryPath(Key);
  FileRead File = readWholeFile(Path, kMaxEntryFileBytes);
  std::string WhyNot;
  std::optional<CacheEntry> Parsed;
  if (File.Bytes)
    Parsed = parseCacheEntry(*File.Bytes, Key, &WhyNot);
  else
    WhyNot = File.NotFound ? "no entry" : File.Error;

  if (!Parsed) {
    bool Corrupt = !File.NotFound;
    // Remove the damaged entry now, so it cannot outlive a failing compile;
    // the store after the compile writes a good one.
    if (Corrupt) {
      std::error_code EC;
      fs::remove(Path, EC);
    }
    std::lock_guard<std::mutex> Guard(Lock);
    if (Corrupt)
      ++Stats.CorruptEntries;
    LastMissReason = fmt::format("{}: {}", Path, WhyNot);
    return nullptr;
  }

  touchFile(Path); // Recently used: last to be evicted.
  std::lock_guard<std::mutex> Guard(Lock);
  ++Stats.DiskHits;
  return std::make_shared<const CacheEntry>(std::move(*Parsed));
}

void KernelCache::storeToDisk(const std::string &Key, llvm::StringRef Source,
                              const CacheEntry &Entry) {
  std::string Err =
      writeFileAtomically(entryPath(Key), serializeCacheEntry(Key, Entry));
  if (!Err.empty()) {
    disableDisk(Err);
    return;
  }
  // Inspection only: a failure here loses nothing that correctness needs.
  (void)writeFileAtomically(sourcePath(Key), Source);
  sweep(Key);
}

void KernelCache::sweep(const std::string &Keep) {
  struct Candidate {
    fs::path Path;
    uint64_t Size;
    fs::file_time_type MTime;
  };
  std::vector<Candidate> Entries;
  uint64_t Total = 0;
  auto Now = fs::file_time_type::clock::now();
  std::string KeepName = Keep + ".jfk";

  std::error_code EC;
  for (fs::directory_iterator It(Config.Dir, EC), End; !EC && It != End;
       It.increment(EC)) {
    std::error_code StatEC;
    if (!It->is_regular_file(StatEC))
      continue;
    const fs::path &P = It->path();
    std::string Name = P.filename().string();
    fs::file_time_type MTime = It->last_write_time(StatEC);
    if (StatEC)
      continue; // Removed by another process meanwhile.
    if (Name.find(".tmp.") != std::string::npos) {
      if (Now - MTime > std::chrono::seconds(kStaleTempSeconds))
        fs::remove(P, StatEC);
      continue;
    }
    if (!llvm::StringRef(Name).endswith(".jfk"))
      continue;
    uint64_t Size = It->file_size(StatEC);
    if (StatEC)
      continue;
    Total += Size;
    if (Name != KeepName)
      Entries.push_back({P, Size, MTime});
  }
  if (Total <= Config.MaxBytes)
    return;

  // Oldest first; the name breaks ties so concurrent sweepers agree.
  std::sort(Entries.begin(), Entries.end(),
            [](const Candidate &A, const Candidate &B) {
              return A.MTime != B.MTime ? A.MTime < B.MTime : A.Path < B.Path;
            });
  uint64_t Evicted = 0;
  for (const Candidate &C : Entries) {
    if (Total <= Config.MaxBytes)
      break;
    std::error_code RemoveEC;
    bool Removed = fs::remove(C.Path, RemoveEC);
    Total -= C.Size;
    if (!Removed)
      continue; // Another process evicted it first.
    fs::path Source = C.Path;
    fs::remove(Source.replace_extension(".cu"), RemoveEC);
    ++Evicted;
  }
  std::lock_guard<std::mutex> Guard(Lock);
  Stats.Evictions += Evicted;
}

void KernelCache::invalidate(llvm::StringRef Key) {
  requireValidKey(Key);
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Memory.erase(Key.str());
  }
  if (!DiskEnabled)
    return;
  std::error_code EC;
  fs::remove(entryPath(Key), EC);
}

} // namespace jitfuse::rt
