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
#include <map>
#include <set>
#include <vector>

namespace fs = std::filesystem;

namespace jitfuse::rt {

namespace {

/// A CUBIN (or a bundle of a program's CUBINs) is a few MB at most; an
/// entry past this is refused before it is read, and never written.
constexpr uint64_t kMaxEntryFileBytes = uint64_t(256) << 20;

/// `<pid>.<16 hex>`: the tail writeFileAtomically and probeWritable add.
bool isTempTail(llvm::StringRef Tail) {
  auto [Pid, Hex] = Tail.split('.');
  return !Pid.empty() && Pid.find_first_not_of("0123456789") == Pid.npos &&
         Hex.size() == 16 &&
         Hex.find_first_not_of("0123456789abcdef") == Hex.npos;
}

} // namespace

CacheConfig CacheConfig::fromEnv() {
  Settings S = Settings::fromEnv();
  return {S.CacheDir, S.CacheEnabled, S.CacheMaxBytes, S.CacheShared};
}

CacheFileName classifyCacheFileName(llvm::StringRef Name) {
  CacheFileName Out;
  if (Name.consume_front(".probe.tmp.")) {
    if (isTempTail(Name))
      Out.Kind = CacheFileKind::Temp;
    return Out;
  }
  if (Name.size() < 32 || !isValidCacheKey(Name.take_front(32)))
    return Out;
  llvm::StringRef Key = Name.take_front(32);
  llvm::StringRef Rest = Name.drop_front(32);
  if (Rest == ".jfk" || Rest == ".cu") {
    Out.Kind = Rest == ".jfk" ? CacheFileKind::Entry : CacheFileKind::Source;
    Out.Key = Key.str();
    return Out;
  }
  if ((Rest.consume_front(".jfk.tmp.") || Rest.consume_front(".cu.tmp.")) &&
      isTempTail(Rest))
    Out.Kind = CacheFileKind::Temp;
  return Out;
}

KernelCache::KernelCache(CacheConfig Cfg) : Config(std::move(Cfg)) {
  if (!Config.Enabled)
    return;
  if (Config.Dir.empty()) {
    disableDisk("no directory configured; set JITFUSE_CACHE_DIR");
    return;
  }
  if (std::string Err = createPrivateDirs(Config.Dir); !Err.empty()) {
    disableDisk(fmt::format("cannot create it: {}", Err));
    return;
  }
  std::error_code EC;
  if (!fs::is_directory(Config.Dir, EC)) {
    disableDisk("it is not a directory");
    return;
  }
  if (!Config.Shared) {
    if (std::string Why = checkTrusted(Config.Dir); !Why.empty()) {
      distrust("directory", Config.Dir, Why);
      return;
    }
  }
  // Writability is probed, not predicted from permission bits: root ignores
  // them, and read-only mounts are invisible to them.
  if (std::string Err = probeWritable(Config.Dir); !Err.empty()) {
    disableDisk(Err);
    return;
  }
  DiskEnabled = true;
}

void KernelCache::warnOnce(llvm::StringRef Cause,
                           const std::string &Message) const {
  // One warning per cause per directory per process, however many caches
  // use it: the library is quiet unless something is wrong.
  ::jitfuse::warnOnce(fmt::format("cache:{}:{}", Config.Dir, Cause.str()), Message);
}

void KernelCache::disableDisk(llvm::StringRef Reason) {
  DiskEnabled = false;
  warnOnce("memory-only",
           fmt::format("kernel cache directory '{}' is not writable ({}); "
                       "caching in memory only",
                       Config.Dir, Reason.str()));
}

void KernelCache::distrust(llvm::StringRef What, const std::string &Path,
                           llvm::StringRef Reason) {
  DiskEnabled = false;
  warnOnce("memory-only",
           fmt::format("kernel cache {} '{}' is {}; caching in memory only "
                       "(whoever can write the cache can run code in this "
                       "process; set JITFUSE_CACHE_SHARED=1 to trust a shared "
                       "cache)",
                       What.str(), Path, Reason.str()));
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
KernelCache::getOrCompile(const CacheKey &TheKey, llvm::StringRef Source,
                          llvm::function_ref<CacheEntry()> Compile,
                          bool *WasHit) {
  const std::string &Key = TheKey.str();
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
      // A partial entry stays in memory: complete() writes the whole one.
      if (DiskEnabled && !Entry->Deferred.valid())
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
  ReadOptions Opts;
  Opts.MaxBytes = kMaxEntryFileBytes;
  Opts.RequireTrusted = !Config.Shared;
  Opts.HeaderBytes = kCacheHeaderSize;
  auto CheckHeader = [&](llvm::StringRef Header, uint64_t FileSize) {
    return checkCacheHeader(Header, Key, FileSize);
  };
  Opts.CheckHeader = CheckHeader;
  FileRead File = readRegularFile(Path, Opts);
  if (File.Untrusted) {
    // Neither served nor removed: not ours to judge.
    distrust("entry", Path, File.Error);
    std::lock_guard<std::mutex> Guard(Lock);
    LastMissReason = fmt::format("{}: {}", Path, File.Error);
    return nullptr;
  }
  std::string WhyNot;
  std::optional<CacheEntry> Parsed;
  if (File.Bytes)
    Parsed = parseCacheEntry(*File.Bytes, Key, &WhyNot);
  else
    WhyNot = File.NotFound ? "no entry" : File.Error;

  if (!Parsed) {
    bool Corrupt = !File.NotFound;
    // Remove the damaged entry now, so it cannot outlive a failing compile;
    // the store after the compile writes a good one. (A FIFO or symlink goes
    // too; a non-empty directory stays, and the store says so.)
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
  std::string Bytes = serializeCacheEntry(Key, Entry);
  if (Bytes.size() > kMaxEntryFileBytes)
    return; // It would be refused when read back.
  std::string Path = entryPath(Key);
  std::string Err = writeFileAtomically(Path, Bytes);
  if (!Err.empty()) {
    // Something in the way of this one entry is no reason to give up the
    // whole disk cache, nor to call the directory unwritable.
    std::error_code EC;
    if (fs::is_directory(fs::symlink_status(Path, EC))) {
      warnOnce("entry-is-directory",
               fmt::format("kernel cache entry path '{}' is a directory; "
                           "that kernel is not cached on disk",
                           Path));
      return;
    }
    disableDisk(Err);
    return;
  }
  // Inspection only: a failure here loses nothing that correctness needs.
  (void)writeFileAtomically(sourcePath(Key), Source);
  sweep(Key);
}

void KernelCache::sweep(const std::string &Keep) {
  // A key's entry and source are evicted together and count together.
  struct KeyFiles {
    uint64_t Size = 0;
    fs::file_time_type MTime{};
    bool HasEntry = false;
  };
  std::map<std::string, KeyFiles> Keys;
  uint64_t Total = 0;
  auto Now = fs::file_time_type::clock::now();

  std::error_code EC;
  for (fs::directory_iterator It(Config.Dir, EC), End; !EC && It != End;
       It.increment(EC)) {
    const fs::path &P = It->path();
    CacheFileName Name = classifyCacheFileName(P.filename().string());
    if (Name.Kind == CacheFileKind::Foreign)
      continue;
    std::error_code StatEC;
    if (!fs::is_regular_file(It->symlink_status(StatEC)))
      continue;
    fs::file_time_type MTime = It->last_write_time(StatEC);
    if (StatEC)
      continue; // Removed by another process meanwhile.
    if (Name.Kind == CacheFileKind::Temp) {
      if (Now - MTime > std::chrono::seconds(kStaleTempSeconds))
        fs::remove(P, StatEC);
      continue;
    }
    uint64_t Size = It->file_size(StatEC);
    if (StatEC)
      continue;
    Total += Size;
    KeyFiles &K = Keys[Name.Key];
    K.Size += Size;
    if (Name.Kind == CacheFileKind::Entry) {
      K.HasEntry = true;
      K.MTime = MTime;
    } else if (!K.HasEntry) {
      K.MTime = std::max(K.MTime, MTime);
    }
  }
  if (EC) {
    // E.g. a directory with write but no read permission: stores work, but
    // nothing can be evicted.
    warnOnce("cannot-list",
             fmt::format("cannot list kernel cache directory '{}' ({}); old "
                         "entries are not evicted, so it may grow past "
                         "JITFUSE_CACHE_MAX_BYTES",
                         Config.Dir, EC.message()));
    return;
  }
  if (Total <= Config.MaxBytes)
    return;

  struct Candidate {
    const std::string *Key;
    const KeyFiles *Files;
  };
  std::vector<Candidate> Candidates;
  for (const auto &[Key, Files] : Keys)
    if (Key != Keep)
      Candidates.push_back({&Key, &Files});
  // Sources whose entry is gone are worth nothing: they go first. Then the
  // oldest entries; the key breaks ties so concurrent sweepers agree.
  std::sort(Candidates.begin(), Candidates.end(),
            [](const Candidate &A, const Candidate &B) {
              if (A.Files->HasEntry != B.Files->HasEntry)
                return !A.Files->HasEntry;
              if (A.Files->MTime != B.Files->MTime)
                return A.Files->MTime < B.Files->MTime;
              return *A.Key < *B.Key;
            });
  uint64_t Evicted = 0;
  for (const Candidate &C : Candidates) {
    if (Total <= Config.MaxBytes)
      break;
    std::error_code RemoveEC;
    // Another process may have evicted it first; then there is nothing to
    // count.
    bool Removed =
        C.Files->HasEntry && fs::remove(entryPath(*C.Key), RemoveEC);
    fs::remove(sourcePath(*C.Key), RemoveEC);
    Total -= C.Files->Size;
    Evicted += Removed;
  }
  std::lock_guard<std::mutex> Guard(Lock);
  Stats.Evictions += Evicted;
}

void KernelCache::complete(const CacheKey &TheKey, llvm::StringRef Source,
                           std::shared_ptr<const CacheEntry> Complete) {
  const std::string &Key = TheKey.str();
  if (DiskEnabled)
    storeToDisk(Key, Source, *Complete);
  // The partial entry is released outside the lock: its last holder joins
  // the background thread (CacheEntry::Worker).
  std::shared_ptr<const CacheEntry> Partial = std::move(Complete);
  std::lock_guard<std::mutex> Guard(Lock);
  Memory[Key].swap(Partial);
}

void KernelCache::invalidate(const CacheKey &TheKey) {
  llvm::StringRef Key = TheKey;
  std::shared_ptr<const CacheEntry> Dropped; // released outside the lock
  {
    std::lock_guard<std::mutex> Guard(Lock);
    if (auto It = Memory.find(Key.str()); It != Memory.end()) {
      Dropped = std::move(It->second);
      Memory.erase(It);
    }
  }
  if (!DiskEnabled)
    return;
  std::error_code EC;
  fs::remove(entryPath(Key), EC);
  fs::remove(sourcePath(Key), EC);
}

} // namespace jitfuse::rt
