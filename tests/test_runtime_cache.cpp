// KernelCache against a real directory: hits, healing of damaged entries,
// degraded directories, the size bound and concurrency. No GPU needed: the
// "compiler" here is a lambda producing bytes derived from the key parts.
#include "CacheTestUtil.h"

#include "runtime/CacheFile.h"
#include "runtime/KernelCache.h"

#include "support/Error.h"

#include "TestEnv.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace jitfuse;
using namespace jitfuse::rt;
using namespace jitfuse::test;

TEST_CASE("Cache round trip: miss, memory hit, disk hit", "[runtime][cache]") {
  TempDir Dir;
  CacheKeyParts Parts = partsFor("k0");
  std::string Key = cacheKey(Parts).str();
  int Compiles = 0;
  {
    KernelCache Cache(configIn(Dir));
    REQUIRE(Cache.diskEnabled());
    CHECK(Cache.dir() == Dir.str());
    CHECK(Cache.entryPath(Key) == Dir.str() + "/" + Key + ".jfk");
    bool Hit = true;
    auto First = Cache.getOrCompile(
        Parts,
        [&] {
          ++Compiles;
          return fakeCompile(Parts);
        },
        &Hit);
    CHECK_FALSE(Hit);
    auto Second = Cache.getOrCompile(
        Parts,
        [&] {
          ++Compiles;
          return fakeCompile(Parts);
        },
        &Hit);
    CHECK(Hit);
    CHECK(First == Second);
    CacheStats S = Cache.stats();
    CHECK(S.Misses == 1);
    CHECK(S.MemoryHits == 1);
    CHECK(S.DiskHits == 0);
    CHECK(S.CorruptEntries == 0);
    CHECK(S.CompileSeconds >= 0);
  }
  CHECK(fs::exists(Dir / (Key + ".jfk")));
  CHECK(readFile(Dir / (Key + ".cu")) == Parts.Source);

  KernelCache Fresh(configIn(Dir));
  bool Hit = false;
  auto E = Fresh.getOrCompile(
      Parts,
      [&] {
        ++Compiles;
        return fakeCompile(Parts);
      },
      &Hit);
  CHECK(Hit);
  CHECK(Compiles == 1);
  CHECK(E->Image == fakeCompile(Parts).Image);
  CHECK(E->Log == fakeCompile(Parts).Log);
  CHECK(Fresh.stats().DiskHits == 1);
  CHECK(Fresh.stats().Misses == 0);
}

TEST_CASE("A corrupted entry is a miss, rewritten, then a hit",
          "[runtime][cache]") {
  TempDir Dir;
  CacheKeyParts Parts = partsFor("k1");
  fs::path Entry = Dir / (cacheKey(Parts).str() + ".jfk");
  CHECK_FALSE(lookupFresh(configIn(Dir), Parts));

  std::string Bytes = readFile(Entry);
  for (size_t Offset :
       {kCacheHeaderSize + 3, kCacheHeaderSize + 20, Bytes.size() - 1})
    Bytes[Offset] ^= 0x5a;
  writeFile(Entry, Bytes);

  KernelCache Cache(configIn(Dir));
  bool Hit = true;
  int Compiles = 0;
  auto E = Cache.getOrCompile(
      Parts,
      [&] {
        ++Compiles;
        return fakeCompile(Parts);
      },
      &Hit);
  CHECK_FALSE(Hit);
  CHECK(Compiles == 1);
  CHECK(E->Image == fakeCompile(Parts).Image);
  CHECK(Cache.stats().CorruptEntries == 1);
  CHECK(Cache.stats().Misses == 1);
  CHECK(Cache.lastMissReason().find("checksum") != std::string::npos);
  // Healed: a new process hits.
  CHECK(lookupFresh(configIn(Dir), Parts));
}

TEST_CASE("Truncated, wrong-version and wrong-magic entries are healed",
          "[runtime][cache]") {
  TempDir Dir;
  CacheKeyParts Parts = partsFor("k2");
  fs::path Entry = Dir / (cacheKey(Parts).str() + ".jfk");
  CHECK_FALSE(lookupFresh(configIn(Dir), Parts));
  const std::string Good = readFile(Entry);

  auto Damage =
      GENERATE(as<std::string>{}, "truncated", "version", "magic", "empty");
  std::string Bad = Good;
  if (Damage == std::string("truncated"))
    Bad.resize(Good.size() / 2);
  else if (Damage == std::string("version"))
    Bad[8] = static_cast<char>(kCacheFormatVersion + 1);
  else if (Damage == std::string("magic"))
    Bad.replace(0, 8, std::string("NOTJITF\0", 8));
  else
    Bad.clear();
  writeFile(Entry, Bad);

  INFO("damage: " << Damage);
  KernelCache Cache(configIn(Dir));
  int Compiles = 0;
  bool Hit = true;
  Cache.getOrCompile(
      Parts,
      [&] {
        ++Compiles;
        return fakeCompile(Parts);
      },
      &Hit);
  CHECK_FALSE(Hit);
  CHECK(Compiles == 1);
  CHECK(Cache.stats().CorruptEntries == 1);
  CHECK(readFile(Entry) == Good);
  CHECK(lookupFresh(configIn(Dir), Parts));
}

TEST_CASE("Leftover temp files are ignored and swept when stale",
          "[runtime][cache]") {
  TempDir Dir;
  CacheKeyParts Parts = partsFor("k3");
  std::string Key = cacheKey(Parts).str();
  fs::path Stale = Dir / (Key + ".jfk.tmp.12345.deadbeefdeadbeef");
  fs::path Fresh = Dir / (Key + ".jfk.tmp.12346.feedfacefeedface");
  writeFile(Stale, "half-written garbage");
  writeFile(Fresh, "another writer in progress");
  setAge(Stale, std::chrono::seconds(KernelCache::kStaleTempSeconds + 60));

  CHECK_FALSE(lookupFresh(configIn(Dir), Parts)); // Temp files are not entries.
  CHECK_FALSE(fs::exists(Stale));
  CHECK(fs::exists(Fresh)); // Might still be renamed into place.
  CHECK(lookupFresh(configIn(Dir), Parts));
}

namespace {

/// The read-only scenario, in a forked child so that it can drop root's
/// privileges (root ignores permission bits, and CI runs as root). Returns 0
/// or the number of the check that failed; stderr goes to ErrFd.
int readOnlyChild(const std::string &Dir, int ErrFd) {
  ::dup2(ErrFd, 2);
  if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0))
    return 10; // cannot become nobody
  int Probe = ::open((Dir + "/probe").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (Probe >= 0)
    return 11; // still writable: the test would prove nothing
  CacheConfig C;
  C.Dir = Dir;
  C.Enabled = true;
  CacheKeyParts Parts = partsFor("k4");
  try {
    KernelCache Cache(C);
    if (Cache.diskEnabled())
      return 12;
    bool Hit = true;
    auto E = Cache.getOrCompile(Parts, [&] { return fakeCompile(Parts); }, &Hit);
    if (Hit || E->Image != fakeCompile(Parts).Image)
      return 13;
    Cache.getOrCompile(Parts, [&] { return fakeCompile(Parts); }, &Hit);
    if (!Hit)
      return 14; // the memory cache serves the second lookup
    KernelCache Second(C); // another cache on the same directory: no new warning
    if (Second.diskEnabled())
      return 16;
  } catch (...) {
    return 15;
  }
  return 0;
}

} // namespace

TEST_CASE("A read-only cache directory degrades to memory",
          "[runtime][cache]") {
  // chmod a-w (r-x left for everyone, so an unprivileged reader may list it).
  TempDir Dir;
  fs::permissions(Dir.str(),
                  fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                      fs::perms::group_exec | fs::perms::others_read |
                      fs::perms::others_exec,
                  fs::perm_options::replace);
  int Pipe[2];
  REQUIRE(::pipe(Pipe) == 0);
  std::fflush(stderr);
  pid_t Pid = ::fork();
  if (Pid == 0) {
    ::close(Pipe[0]);
    int Rc = readOnlyChild(Dir.str(), Pipe[1]);
    std::fflush(stderr);
    ::_exit(Rc);
  }
  REQUIRE(Pid > 0);
  ::close(Pipe[1]);
  std::string Err;
  char Buf[512];
  for (ssize_t N; (N = ::read(Pipe[0], Buf, sizeof(Buf))) > 0;)
    Err.append(Buf, static_cast<size_t>(N));
  ::close(Pipe[0]);
  int Status = 0;
  REQUIRE(::waitpid(Pid, &Status, 0) == Pid);
  REQUIRE(WIFEXITED(Status));
  INFO("child stderr: " << Err);
  CHECK(WEXITSTATUS(Status) == 0); // 10-16: see readOnlyChild
  // Exactly one warning, naming the directory.
  size_t First = Err.find("is not writable");
  CHECK(First != std::string::npos);
  CHECK(Err.find("is not writable", First + 1) == std::string::npos);
  CHECK(Err.find(Dir.str()) != std::string::npos);
  CHECK(countFiles(Dir.str()) == 0);
  fs::permissions(Dir.str(), fs::perms::owner_all, fs::perm_options::add);
}

TEST_CASE("An unusable cache path warns once and caches in memory",
          "[runtime][cache]") {
  TempDir Dir;
  std::string Path;
  std::string Kind =
      GENERATE(as<std::string>{}, "regular file", "under a file", "proc");
  if (Kind == "regular file") {
    Path = (Dir / "cache").string();
    writeFile(Path, "I am a file");
  } else if (Kind == "under a file") {
    writeFile(Dir / "file", "x");
    Path = (Dir / "file" / "cache").string();
  } else {
    Path = "/proc/jitfuse-cache-test"; // mkdir fails even for root.
  }
  INFO(Kind << ": " << Path);
  CacheConfig Config;
  Config.Dir = Path;
  CacheKeyParts Parts = partsFor("k5");

  std::string Err = captureStderr([&] {
    KernelCache Cache(Config);
    CHECK_FALSE(Cache.diskEnabled());
    KernelCache Second(Config); // Same directory: no second warning.
    int Compiles = 0;
    bool Hit = true;
    CHECK_NOTHROW(Cache.getOrCompile(
        Parts,
        [&] {
          ++Compiles;
          return fakeCompile(Parts);
        },
        &Hit));
    CHECK_FALSE(Hit);
    Cache.getOrCompile(
        Parts,
        [&] {
          ++Compiles;
          return fakeCompile(Parts);
        },
        &Hit);
    CHECK(Hit);
    CHECK(Compiles == 1);
    CHECK_NOTHROW(Cache.invalidate(cacheKey(Parts)));
  });
  INFO(Err);
  std::string Expected = "jitfuse: warning: kernel cache directory '" + Path +
                         "' is not writable (";
  CHECK(Err.rfind(Expected, 0) == 0);
  CHECK(Err.find("caching in memory only\n") != std::string::npos);
  CHECK(Err.find(Expected, 1) == std::string::npos); // Exactly one warning.
}

TEST_CASE("JITFUSE_CACHE=off writes nothing", "[runtime][cache]") {
  TempDir Dir;
  std::string CacheDir = (Dir / "cache").string();
  ScopedEnv EnvDir("JITFUSE_CACHE_DIR", CacheDir.c_str());
  ScopedEnv EnvOff("JITFUSE_CACHE", "off");
  CacheConfig Config = CacheConfig::fromEnv();
  CHECK(Config.Dir == CacheDir);
  CHECK_FALSE(Config.Enabled);

  KernelCache Cache(Config);
  CHECK_FALSE(Cache.diskEnabled());
  CacheKeyParts Parts = partsFor("k6");
  int Compiles = 0;
  bool Hit = true;
  Cache.getOrCompile(
      Parts,
      [&] {
        ++Compiles;
        return fakeCompile(Parts);
      },
      &Hit);
  CHECK_FALSE(Hit);
  Cache.getOrCompile(
      Parts,
      [&] {
        ++Compiles;
        return fakeCompile(Parts);
      },
      &Hit);
  CHECK(Hit); // The memory map still works.
  CHECK(Compiles == 1);
  CHECK_FALSE(fs::exists(CacheDir));
}

TEST_CASE("CacheConfig::fromEnv defaults and parsing", "[runtime][cache]") {
  ScopedEnv NoDir("JITFUSE_CACHE_DIR", nullptr);
  ScopedEnv NoMode("JITFUSE_CACHE", nullptr);
  ScopedEnv NoMax("JITFUSE_CACHE_MAX_BYTES", nullptr);
  {
    ScopedEnv Xdg("XDG_CACHE_HOME", "/xdg");
    CacheConfig C = CacheConfig::fromEnv();
    CHECK(C.Dir == "/xdg/jitfuse");
    CHECK(C.Enabled);
    CHECK(C.MaxBytes == uint64_t(1) << 30);
  }
  {
    ScopedEnv Xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv Home("HOME", "/home/someone");
    CHECK(CacheConfig::fromEnv().Dir == "/home/someone/.cache/jitfuse");
  }
  {
    ScopedEnv Max("JITFUSE_CACHE_MAX_BYTES", "512M");
    CHECK(CacheConfig::fromEnv().MaxBytes == uint64_t(512) << 20);
  }
  {
    ScopedEnv Max("JITFUSE_CACHE_MAX_BYTES", "12345");
    CHECK(CacheConfig::fromEnv().MaxBytes == 12345);
  }
  // A bad value is one warning and the default (support/Settings.h), never
  // an exception that stops the program.
  {
    ScopedEnv Max("JITFUSE_CACHE_MAX_BYTES", "lots");
    test::CapturedDiagnostics Diag;
    CHECK(CacheConfig::fromEnv().MaxBytes == (uint64_t(1) << 30));
    CHECK_THAT(Diag.text(), Catch::Contains("JITFUSE_CACHE_MAX_BYTES='lots'"));
  }
  {
    ScopedEnv Mode("JITFUSE_CACHE", "maybe");
    test::CapturedDiagnostics Diag;
    CHECK(CacheConfig::fromEnv().Enabled);
    CHECK_THAT(Diag.text(), Catch::Contains("JITFUSE_CACHE='maybe'") &&
                                Catch::Contains("expected on or off"));
  }
  {
    ScopedEnv Mode("JITFUSE_CACHE", "on");
    CHECK(CacheConfig::fromEnv().Enabled);
  }
}

TEST_CASE("The size bound evicts the least recently used entry",
          "[runtime][cache]") {
  TempDir Dir;
  CacheKeyParts A = partsFor("a"), B = partsFor("b"), C = partsFor("c");
  fs::path PathA = Dir / (cacheKey(A).str() + ".jfk");
  fs::path PathB = Dir / (cacheKey(B).str() + ".jfk");
  fs::path PathC = Dir / (cacheKey(C).str() + ".jfk");

  CHECK_FALSE(lookupFresh(configIn(Dir), A));
  CHECK_FALSE(lookupFresh(configIn(Dir), B));
  uint64_t EntrySize = fs::file_size(PathA);
  REQUIRE(fs::file_size(PathB) == EntrySize);
  // A is older than B, but a disk hit makes A the most recently used.
  setAge(PathA, std::chrono::seconds(200));
  setAge(PathB, std::chrono::seconds(100));
  CHECK(lookupFresh(configIn(Dir), A));

  // Room for two entries: storing C must evict exactly B.
  KernelCache Cache(configIn(Dir, 2 * EntrySize + EntrySize / 2));
  Cache.getOrCompile(C, [&] { return fakeCompile(C); });
  CHECK(fs::exists(PathA));
  CHECK_FALSE(fs::exists(PathB));
  CHECK_FALSE(fs::exists(Dir / (cacheKey(B).str() + ".cu")));
  CHECK(fs::exists(PathC));
  CHECK(Cache.stats().Evictions == 1);

  // A bound smaller than one entry keeps the entry just written.
  KernelCache Tiny(configIn(Dir, 1));
  Tiny.getOrCompile(B, [&] { return fakeCompile(B); });
  CHECK(fs::exists(PathB));
  CHECK_FALSE(fs::exists(PathA));
  CHECK_FALSE(fs::exists(PathC));
  CHECK(Tiny.stats().Evictions == 2);
}

TEST_CASE("invalidate drops the entry from memory and disk",
          "[runtime][cache]") {
  TempDir Dir;
  KernelCache Cache(configIn(Dir));
  CacheKeyParts Parts = partsFor("k7");
  rt::CacheKey Key = cacheKey(Parts);
  int Compiles = 0;
  Cache.getOrCompile(Parts, [&] {
    ++Compiles;
    return fakeCompile(Parts);
  });
  REQUIRE(fs::exists(Cache.entryPath(Key)));
  Cache.invalidate(Key);
  CHECK_FALSE(fs::exists(Cache.entryPath(Key)));
  bool Hit = true;
  Cache.getOrCompile(
      Parts,
      [&] {
        ++Compiles;
        return fakeCompile(Parts);
      },
      &Hit);
  CHECK_FALSE(Hit);
  CHECK(Compiles == 2);
  // A path can never reach invalidate(): only parse() and cacheKey() make
  // keys, and parse() refuses anything but 32 lowercase hex characters.
  CHECK_FALSE(rt::CacheKey::parse("../escape").has_value());
  CHECK_FALSE(rt::CacheKey::parse("../../../../etc/passwd0123456789").has_value());
  CHECK(rt::CacheKey::parse(Key.str()) == std::optional<rt::CacheKey>(Key));
}

TEST_CASE("A failing compile caches nothing and is retried",
          "[runtime][cache]") {
  TempDir Dir;
  KernelCache Cache(configIn(Dir));
  CacheKeyParts Parts = partsFor("k8");
  CHECK_THROWS_WITH(
      Cache.getOrCompile(Parts, []() -> CacheEntry { fail("nvrtc said no"); }),
      "nvrtc said no");
  CHECK_FALSE(fs::exists(Cache.entryPath(cacheKey(Parts).str())));
  bool Hit = true;
  Cache.getOrCompile(
      Parts, [&] { return fakeCompile(Parts); }, &Hit);
  CHECK_FALSE(Hit);
}

TEST_CASE("Concurrent lookups get correct entries and compile once per key",
          "[runtime][cache]") {
  TempDir Dir;
  KernelCache Cache(configIn(Dir));
  constexpr int kThreads = 8, kKeys = 3, kRounds = 20;
  std::atomic<int> Compiles{0};
  std::atomic<int> Wrong{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < kThreads; ++T) {
    Threads.emplace_back([&, T] {
      for (int R = 0; R < kRounds; ++R) {
        // Thread 0..7 mix a shared key (k0) with per-round different ones.
        CacheKeyParts Parts = partsFor("k" + std::to_string((T + R) % kKeys));
        auto E = Cache.getOrCompile(Parts, [&] {
          ++Compiles;
          std::this_thread::sleep_for(
              std::chrono::milliseconds(5)); // Widen races.
          return fakeCompile(Parts);
        });
        if (E->Image != fakeCompile(Parts).Image ||
            E->Log != fakeCompile(Parts).Log)
          ++Wrong;
      }
    });
  }
  for (std::thread &T : Threads)
    T.join();
  CHECK(Wrong == 0);
  CHECK(Compiles == kKeys);
  CacheStats S = Cache.stats();
  CHECK(S.Misses == kKeys);
  CHECK(S.MemoryHits + S.DiskHits + S.Misses == kThreads * kRounds);
  for (int K = 0; K < kKeys; ++K)
    CHECK(lookupFresh(configIn(Dir), partsFor("k" + std::to_string(K))));
}

TEST_CASE("Concurrent caches in one directory stay consistent",
          "[runtime][cache]") {
  // Separate instances stand in for separate processes sharing the disk.
  TempDir Dir;
  std::atomic<int> Wrong{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < 8; ++T) {
    Threads.emplace_back([&, T] {
      KernelCache Cache(configIn(Dir));
      for (int R = 0; R < 10; ++R) {
        CacheKeyParts Parts = partsFor("p" + std::to_string((T * 7 + R) % 4));
        auto E = Cache.getOrCompile(Parts, [&] { return fakeCompile(Parts); });
        if (E->Image != fakeCompile(Parts).Image)
          ++Wrong;
      }
    });
  }
  for (std::thread &T : Threads)
    T.join();
  CHECK(Wrong == 0);
  size_t Temps = 0;
  for (const auto &F : fs::directory_iterator(Dir.str()))
    Temps += F.path().filename().string().find(".tmp.") != std::string::npos;
  CHECK(Temps == 0);
}

TEST_CASE("Eviction never breaks a process that is reading the entry",
          "[runtime][cache]") {
  // Eviction is unlink(2): a reader that already opened the entry keeps the
  // whole file through its descriptor, and a reader that opens it later sees
  // a miss. A forked child plays the reader, paused halfway through its read
  // while this process evicts the entry.
  TempDir Dir;
  CacheKeyParts A = partsFor("a"), B = partsFor("b"), C = partsFor("c");
  std::string KeyA = cacheKey(A).str();
  fs::path PathA = Dir / (KeyA + ".jfk");
  CHECK_FALSE(lookupFresh(configIn(Dir), A));
  CHECK_FALSE(lookupFresh(configIn(Dir), B));
  uint64_t EntrySize = fs::file_size(PathA);
  setAge(PathA, std::chrono::seconds(200)); // A is the LRU victim.

  int ToParent[2], ToChild[2];
  REQUIRE(::pipe(ToParent) == 0);
  REQUIRE(::pipe(ToChild) == 0);
  pid_t Pid = ::fork();
  if (Pid == 0) {
    // Child: no Catch2 macros; the exit code is the verdict.
    int Fd = ::open(PathA.c_str(), O_RDONLY);
    if (Fd < 0)
      ::_exit(10);
    std::string Bytes(EntrySize, '\0');
    size_t Half = EntrySize / 2;
    if (::read(Fd, Bytes.data(), Half) != static_cast<ssize_t>(Half))
      ::_exit(11);
    char Go = 'r';
    if (::write(ToParent[1], &Go, 1) != 1 || ::read(ToChild[0], &Go, 1) != 1)
      ::_exit(12);
    if (::read(Fd, Bytes.data() + Half, EntrySize - Half) !=
        static_cast<ssize_t>(EntrySize - Half))
      ::_exit(13);
    auto Entry = parseCacheEntry(Bytes, KeyA);
    ::_exit(Entry && Entry->Image == fakeCompile(A).Image ? 0 : 14);
  }
  REQUIRE(Pid > 0);
  char Go = 0;
  REQUIRE(::read(ToParent[0], &Go, 1) == 1);
  {
    // Room for two entries: storing C evicts A while the child holds it.
    KernelCache Cache(configIn(Dir, 2 * EntrySize + EntrySize / 2));
    Cache.getOrCompile(C, [&] { return fakeCompile(C); });
    CHECK(Cache.stats().Evictions == 1);
  }
  CHECK_FALSE(fs::exists(PathA));
  REQUIRE(::write(ToChild[1], &Go, 1) == 1);
  int Status = 0;
  REQUIRE(::waitpid(Pid, &Status, 0) == Pid);
  REQUIRE(WIFEXITED(Status));
  CHECK(WEXITSTATUS(Status) == 0); // 0: the child read a whole, valid entry A
  for (int *P : {ToParent, ToChild}) {
    ::close(P[0]);
    ::close(P[1]);
  }
  // A reader arriving after the eviction: a miss, compiled and stored again.
  int Compiles = 0;
  CHECK_FALSE(lookupFresh(configIn(Dir), A, &Compiles));
  CHECK(Compiles == 1);
  CHECK(lookupFresh(configIn(Dir), A));
}
