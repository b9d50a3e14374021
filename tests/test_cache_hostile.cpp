//===- tests/test_cache_hostile.cpp - the cache in hostile directories ----===//
//
// What another user, a careless user or an odd file system can put where the
// kernel cache and the dumps live: FIFOs, symlinks and directories at entry
// paths, directories and entries other users can write, files that are not
// jitfuse's, oversized entries, a file size limit, a directory that cannot be
// listed. Each is a miss, one warning, or memory-only caching; never a hang,
// a crash, a forged hit or a deleted file that jitfuse did not write.
//
//===----------------------------------------------------------------------===//
#include "CacheTestUtil.h"
#include "GraphCheck.h"

#include "runtime/CacheFile.h"
#include "runtime/CacheKey.h"
#include "runtime/KernelCache.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace fs = std::filesystem;
using namespace jitfuse;
using namespace jitfuse::rt;
using namespace jitfuse::test;

namespace {

mode_t modeOf(const fs::path &P) {
  struct stat St {};
  REQUIRE(::lstat(P.c_str(), &St) == 0);
  return St.st_mode & 07777;
}

/// A key-named temp file as the cache writes it.
std::string tempName(const std::string &Key, const char *Ext) {
  return fmt::format("{}.{}.tmp.4242.0123456789abcdef", Key, Ext);
}

/// One lookup in a fresh cache; Compiles counts fake compiles.
std::shared_ptr<const CacheEntry> lookup(KernelCache &Cache,
                                         const CacheKeyParts &Parts,
                                         int &Compiles, bool &Hit,
                                         size_t CubinBytes = 64) {
  return Cache.getOrCompile(
      Parts,
      [&] {
        ++Compiles;
        return fakeCompile(Parts, CubinBytes);
      },
      &Hit);
}

} // namespace

TEST_CASE("A FIFO, symlink or directory at an entry path is a miss, not a "
          "hang or a hit",
          "[cache][hostile]") {
  TempDir Dir, Elsewhere;
  CacheKeyParts Parts = partsFor("fifo");
  std::string Key = cacheKey(Parts).str();
  fs::path Entry = Dir / (Key + ".jfk");
  std::string Kind = GENERATE(as<std::string>{}, "fifo", "symlink",
                              "directory");
  INFO(Kind);
  if (Kind == "fifo") {
    REQUIRE(::mkfifo(Entry.c_str(), 0600) == 0);
  } else if (Kind == "symlink") {
    // A valid entry for this very key, but reached through a symlink: the
    // cache never follows one (whoever planted it chose its target).
    CHECK_FALSE(lookupFresh(configIn(Elsewhere), Parts));
    fs::create_symlink(Elsewhere / (Key + ".jfk"), Entry);
  } else {
    fs::create_directory(Entry);
    writeFile(Entry / "file", "keeps the directory non-empty");
  }

  // In a child with an alarm: a blocking open() of the FIFO must fail the
  // test, not hang the suite.
  ChildResult R = runInChild([&] {
    ::alarm(20);
    KernelCache Cache(configIn(Dir));
    int Compiles = 0;
    bool Hit = true;
    auto E = lookup(Cache, Parts, Compiles, Hit);
    if (Hit || Compiles != 1 || E->Image != fakeCompile(Parts).Image)
      return 1;
    if (Cache.lastMissReason().find("not a regular file") == std::string::npos)
      return 2;
    if (!Cache.diskEnabled())
      return 3; // a bad entry path is no reason to give up the disk cache
    // Another key still reaches the disk.
    CacheKeyParts Other = partsFor("other");
    lookup(Cache, Other, Compiles, Hit);
    if (!fs::is_regular_file(Dir / (cacheKey(Other).str() + ".jfk")))
      return 4;
    return 0;
  });
  INFO("child stderr: " << R.Err);
  // Required: the checks below would block on a FIFO still in place.
  REQUIRE(R.exitedWith(0));
  if (Kind == "directory") {
    // Accurate, once: the entry path is a directory; nothing is "not
    // writable".
    CHECK(countOf(R.Err, "warning:") == 1);
    CHECK(R.Err.find("is a directory") != std::string::npos);
    CHECK(R.Err.find("not writable") == std::string::npos);
  } else {
    CHECK(R.Err.empty());
    // Replaced by a real entry that a fresh process hits.
    CHECK(fs::is_regular_file(fs::symlink_status(Entry)));
    CHECK(lookupFresh(configIn(Dir), Parts));
  }
}

TEST_CASE("New cache directories are created 0700 whatever the umask",
          "[cache][hostile]") {
  TempDir Dir;
  fs::path Nested = Dir / "a" / "b";
  mode_t Old = ::umask(0);
  {
    KernelCache Cache(configIn(Dir));
    CacheConfig C = configIn(Dir);
    C.Dir = Nested.string();
    KernelCache Inner(C);
    CHECK(Inner.diskEnabled());
  }
  ::umask(0777); // Even a umask that would leave no permission at all.
  fs::path Other = Dir / "c";
  {
    CacheConfig C = configIn(Dir);
    C.Dir = Other.string();
    KernelCache Inner(C);
    CHECK(Inner.diskEnabled());
  }
  ::umask(Old);
  CHECK(modeOf(Dir / "a") == 0700);
  CHECK(modeOf(Nested) == 0700);
  CHECK(modeOf(Other) == 0700);
}

TEST_CASE("A cache directory or entry others can write is refused unless "
          "JITFUSE_CACHE_SHARED=1",
          "[cache][hostile]") {
  TempDir Dir;
  CacheKeyParts Parts = partsFor("shared");
  fs::path Entry = Dir / (cacheKey(Parts).str() + ".jfk");
  std::string What = GENERATE(as<std::string>{}, "group-writable directory",
                              "world-writable directory",
                              "group-writable entry", "world-writable entry");
  INFO(What);
  bool IsEntry = What.find("entry") != std::string::npos;
  fs::perms Bit = What.find("group") != std::string::npos
                      ? fs::perms::group_write
                      : fs::perms::others_write;
  if (IsEntry) {
    // A forged entry: another user recomputed the key and checksum.
    CHECK_FALSE(lookupFresh(configIn(Dir), Parts));
    fs::permissions(Entry, Bit, fs::perm_options::add);
  } else {
    fs::permissions(Dir.str(), Bit | fs::perms::group_exec |
                                   fs::perms::others_exec,
                    fs::perm_options::add);
  }
  std::string Before = IsEntry ? readFile(Entry) : "";

  int Compiles = 0;
  std::string Err = captureStderr([&] {
    for (int Round = 0; Round < 2; ++Round) {
      KernelCache Cache(configIn(Dir));
      bool Hit = true;
      auto E = lookup(Cache, Parts, Compiles, Hit);
      CHECK_FALSE(Hit); // Never served from a directory others can write.
      CHECK(E->Image == fakeCompile(Parts).Image);
      CHECK_FALSE(Cache.diskEnabled());
    }
  });
  INFO(Err);
  CHECK(Compiles == 2);
  CHECK(countOf(Err, "warning:") == 1); // One warning per process.
  CHECK(Err.find(IsEntry ? Entry.string() : Dir.str()) != std::string::npos);
  CHECK(Err.find("writable by group or others") != std::string::npos);
  CHECK(Err.find("JITFUSE_CACHE_SHARED=1") != std::string::npos);
  if (IsEntry)
    CHECK(readFile(Entry) == Before); // Memory-only: nothing rewritten.
  else
    CHECK(countFiles(Dir.str()) == 0);

  // Opting in to a shared cache trusts the directory and its entries.
  ScopedEnv EnvDir("JITFUSE_CACHE_DIR", Dir.str().c_str());
  ScopedEnv EnvShared("JITFUSE_CACHE_SHARED", "1");
  KernelCache Shared(CacheConfig::fromEnv());
  CHECK(Shared.diskEnabled());
  bool Hit = false;
  lookup(Shared, Parts, Compiles, Hit);
  CHECK(Hit == IsEntry);
  CHECK(Shared.diskEnabled());
}

TEST_CASE("A cache directory or entry owned by another user is refused",
          "[cache][hostile]") {
  if (::geteuid() != 0) {
    WARN("skipped: making a file owned by another user needs root");
    return;
  }
  // Root plays the victim here: a root process must not load kernels from a
  // directory an unprivileged user controls.
  TempDir Dir;
  CacheKeyParts Parts = partsFor("owner");
  fs::path Entry = Dir / (cacheKey(Parts).str() + ".jfk");
  bool IsEntry = GENERATE(false, true);
  INFO((IsEntry ? "entry" : "directory"));
  if (IsEntry) {
    CHECK_FALSE(lookupFresh(configIn(Dir), Parts));
    REQUIRE(::chown(Entry.c_str(), kNobody, kNobody) == 0);
  } else {
    REQUIRE(::chown(Dir.str().c_str(), kNobody, kNobody) == 0);
  }
  int Compiles = 0;
  std::string Err = captureStderr([&] {
    KernelCache Cache(configIn(Dir));
    bool Hit = true;
    lookup(Cache, Parts, Compiles, Hit);
    CHECK_FALSE(Hit);
    CHECK_FALSE(Cache.diskEnabled());
  });
  INFO(Err);
  CHECK(Compiles == 1);
  CHECK(countOf(Err, "warning:") == 1);
  CHECK(Err.find(fmt::format("owned by uid {}", kNobody)) != std::string::npos);
}

TEST_CASE("The stale-temp sweep and eviction touch only jitfuse's own files",
          "[cache][hostile]") {
  TempDir Dir;
  CacheKeyParts A = partsFor("a"), B = partsFor("b");
  std::string KeyA = cacheKey(A).str();
  // Things a user keeps in $HOME or /tmp, old enough to look stale.
  std::vector<std::string> Foreign = {
      "notes.tmp.txt",       "backup.tmp.1",        "my_project_kernel.cu",
      "data.jfk",            KeyA + ".jfk.tmp.old", KeyA + ".txt",
      KeyA.substr(1) + ".cu", tempName("nothex", "jfk")};
  for (const std::string &Name : Foreign) {
    writeFile(Dir / Name, std::string(4096, 'u'));
    setAge(Dir / Name, std::chrono::seconds(KernelCache::kStaleTempSeconds + 60));
  }
  // jitfuse's own leftovers: a crashed writer's temp files and probe.
  std::vector<std::string> Ours = {tempName(KeyA, "jfk"), tempName(KeyA, "cu"),
                                   ".probe.tmp.4242.0123456789abcdef"};
  for (const std::string &Name : Ours) {
    writeFile(Dir / Name, "half-written");
    setAge(Dir / Name, std::chrono::seconds(KernelCache::kStaleTempSeconds + 60));
  }

  CHECK_FALSE(lookupFresh(configIn(Dir), A));
  // A bound of one byte evicts every entry but the one just written.
  CHECK_FALSE(lookupFresh(configIn(Dir, 1), B));
  for (const std::string &Name : Foreign) {
    INFO(Name);
    CHECK(fs::exists(Dir / Name));
  }
  for (const std::string &Name : Ours) {
    INFO(Name);
    CHECK_FALSE(fs::exists(Dir / Name));
  }
  CHECK_FALSE(fs::exists(Dir / (KeyA + ".jfk")));
  CHECK(fs::exists(Dir / (cacheKey(B).str() + ".jfk")));
}

TEST_CASE("Orphan sources count toward the bound and are evicted first",
          "[cache][hostile]") {
  // Concurrent eviction can remove an entry between its writer's two
  // renames, leaving `<key>.cu` without `<key>.jfk`. Planted here directly.
  TempDir Dir;
  CacheKeyParts A = partsFor("a"), B = partsFor("b");
  CHECK_FALSE(lookupFresh(configIn(Dir), A));
  uint64_t PairBytes = fs::file_size(Dir / (cacheKey(A).str() + ".jfk")) +
                       fs::file_size(Dir / (cacheKey(A).str() + ".cu"));
  std::vector<fs::path> Orphans;
  for (int I = 0; I < 20; ++I) {
    fs::path P = Dir / (cacheKey(partsFor("orphan" + std::to_string(I))).str() + ".cu");
    writeFile(P, std::string(1024, 's'));
    Orphans.push_back(P);
  }
  // Room for the two entries with their sources, not for the orphans.
  uint64_t Bound = 2 * PairBytes + 512;
  CHECK_FALSE(lookupFresh(configIn(Dir, Bound), B));
  for (const fs::path &P : Orphans) {
    INFO(P);
    CHECK_FALSE(fs::exists(P));
  }
  // Both entries survive: orphans go before any entry.
  CHECK(lookupFresh(configIn(Dir, Bound), A));
  CHECK(lookupFresh(configIn(Dir, Bound), B));
  uint64_t Total = 0;
  for (const fs::directory_entry &E : fs::directory_iterator(Dir.str()))
    Total += E.file_size();
  CHECK(Total <= Bound);

  // invalidate() removes the source with its entry.
  KernelCache Cache(configIn(Dir));
  Cache.invalidate(cacheKey(A));
  CHECK_FALSE(fs::exists(Dir / (cacheKey(A).str() + ".jfk")));
  CHECK_FALSE(fs::exists(Dir / (cacheKey(A).str() + ".cu")));
}

TEST_CASE("An oversized or foreign entry is rejected before it is read",
          "[cache][hostile]") {
  TempDir Dir;
  CacheKeyParts Parts = partsFor("big");
  std::string Key = cacheKey(Parts).str();
  fs::path Entry = Dir / (Key + ".jfk");
  CHECK_FALSE(lookupFresh(configIn(Dir), Parts));
  std::string Good = readFile(Entry);
  constexpr uint64_t kGiB = uint64_t(1) << 30;

  bool ValidHeader = GENERATE(false, true);
  INFO((ValidHeader ? "valid header, 1 GiB payload" : "1 GiB of zeros"));
  {
    // Sparse: 1 GiB on paper, a few bytes on disk.
    std::string Header;
    if (ValidHeader) {
      Header = Good.substr(0, kCacheHeaderSize);
      uint64_t Payload = kGiB - kCacheHeaderSize;
      for (int I = 0; I < 8; ++I)
        Header[28 + I] = static_cast<char>((Payload >> (8 * I)) & 0xff);
    }
    int Fd = ::open(Entry.c_str(), O_WRONLY | O_TRUNC);
    REQUIRE(Fd >= 0);
    REQUIRE(::write(Fd, Header.data(), Header.size()) ==
            static_cast<ssize_t>(Header.size()));
    REQUIRE(::ftruncate(Fd, static_cast<off_t>(kGiB)) == 0);
    ::close(Fd);
  }
  // In a child, so its peak memory is its own.
  ChildResult R = runInChild([&] {
    struct rusage Before {}, After {};
    ::getrusage(RUSAGE_SELF, &Before);
    KernelCache Cache(configIn(Dir));
    int Compiles = 0;
    bool Hit = true;
    lookup(Cache, Parts, Compiles, Hit);
    ::getrusage(RUSAGE_SELF, &After);
    if (Hit || Compiles != 1)
      return 1;
    std::string Why = Cache.lastMissReason();
    std::fprintf(stderr, "miss reason: %s\n", Why.c_str());
    if (Why.find(ValidHeader ? "byte limit" : "bad magic") == std::string::npos)
      return 2;
    // ru_maxrss is in KiB: far less than the 1 GiB a whole read costs.
    if (After.ru_maxrss - Before.ru_maxrss > 64 * 1024)
      return 3;
    return 0;
  });
  INFO("child stderr: " << R.Err);
  CHECK(R.exitedWith(0));
  CHECK(readFile(Entry) == Good); // Healed.
}

TEST_CASE("A directory that cannot be listed warns that it is not evicted",
          "[cache][hostile]") {
  // Write and search permission but no read: entries can be stored and
  // loaded by name, but the sweep cannot see them.
  TempDir Dir;
  if (::geteuid() == 0)
    REQUIRE(::chown(Dir.str().c_str(), kNobody, kNobody) == 0);
  fs::permissions(Dir.str(), fs::perms::owner_write | fs::perms::owner_exec,
                  fs::perm_options::replace);
  ChildResult R = runInChild(
      [&] {
        int Probe = ::open(Dir.str().c_str(), O_RDONLY | O_DIRECTORY);
        if (Probe >= 0)
          return 10; // still listable: the test would prove nothing
        for (int Round = 0; Round < 2; ++Round) {
          KernelCache Cache(configIn(Dir, 1));
          if (!Cache.diskEnabled())
            return 1;
          for (const char *Name : {"a", "b"}) {
            CacheKeyParts Parts = partsFor(Name);
            int Compiles = 0;
            bool Hit = false;
            lookup(Cache, Parts, Compiles, Hit);
          }
        }
        return 0;
      },
      /*Unprivileged=*/true);
  fs::permissions(Dir.str(), fs::perms::owner_all, fs::perm_options::add);
  INFO("child stderr: " << R.Err);
  CHECK(R.exitedWith(0));
  CHECK(countOf(R.Err, "warning:") == 1);
  CHECK(R.Err.find("cannot list") != std::string::npos);
  CHECK(R.Err.find("JITFUSE_CACHE_MAX_BYTES") != std::string::npos);
}

TEST_CASE("A file size limit (SIGXFSZ) fails the write cleanly",
          "[cache][hostile]") {
  TempDir Dir;
  CacheKeyParts Parts = partsFor("fsize");
  ChildResult R = runInChild([&] {
    struct rlimit Limit {
      512, 512
    };
    if (::setrlimit(RLIMIT_FSIZE, &Limit) != 0)
      return 10;
    KernelCache Cache(configIn(Dir));
    int Compiles = 0;
    bool Hit = true;
    auto E = lookup(Cache, Parts, Compiles, Hit, /*CubinBytes=*/4096);
    if (Hit || E->Image != fakeCompile(Parts, 4096).Image)
      return 1;
    lookup(Cache, Parts, Compiles, Hit, 4096);
    if (!Hit || Compiles != 1)
      return 2; // the memory cache still serves it
    return 0;
  });
  INFO("child stderr: " << R.Err);
  CHECK(R.exitedWith(0)); // Not killed by SIGXFSZ.
  CHECK(countOf(R.Err, "warning:") == 1);
  CHECK(R.Err.find("File too large") != std::string::npos);
  for (const fs::directory_entry &E : fs::directory_iterator(Dir.str())) {
    INFO(E.path());
    CHECK(E.path().filename().string().find(".tmp.") == std::string::npos);
  }
}

TEST_CASE("Dump files replace a planted symlink or FIFO instead of opening it",
          "[hostile][dump]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 7});
  G.output("y", X * 2.0 + X);
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  std::string Key = testCompiler().compile(G, Opts).cacheKey();

  TempDir Dir, VictimDir;
  fs::path Victim = VictimDir / "victim.txt";
  writeFile(Victim, "precious");
  std::string Stem = "jitfuse_" + Key.substr(0, 16);
  fs::path GraphDump = Dir / (Stem + ".graph.txt");
  fs::path PlanDump = Dir / (Stem + ".plan.txt");
  fs::create_symlink(Victim, GraphDump);
  REQUIRE(::mkfifo(PlanDump.c_str(), 0600) == 0);

  // Hang guard: a compile blocked opening the FIFO for writing is released
  // after 10 s by opening its read end, so the test fails instead of hanging.
  std::mutex M;
  std::condition_variable Cv;
  bool Done = false;
  std::thread Watchdog([&] {
    std::unique_lock<std::mutex> Guard(M);
    if (Cv.wait_for(Guard, std::chrono::seconds(10), [&] { return Done; }))
      return;
    int Fd = ::open(PlanDump.c_str(), O_RDONLY | O_NONBLOCK);
    Cv.wait(Guard, [&] { return Done; });
    if (Fd >= 0)
      ::close(Fd);
  });
  std::string GraphText, PlanText;
  {
    ScopedEnv Dump("JITFUSE_DUMP", "graph,plan");
    ScopedEnv DumpDir("JITFUSE_DUMP_DIR", Dir.str().c_str());
    Executable Ex = testCompiler().compile(G, Opts);
    GraphText = Ex.graphText();
    PlanText = Ex.plan();
  }
  {
    std::lock_guard<std::mutex> Guard(M);
    Done = true;
  }
  Cv.notify_all();
  Watchdog.join();

  CHECK(readFile(Victim) == "precious");
  CHECK(fs::is_regular_file(fs::symlink_status(GraphDump)));
  CHECK(readFile(GraphDump) == GraphText);
  // Required: reading a FIFO still in place would block.
  REQUIRE(fs::is_regular_file(fs::symlink_status(PlanDump)));
  CHECK(readFile(PlanDump) == PlanText);
  for (const fs::directory_entry &E : fs::directory_iterator(Dir.str())) {
    INFO(E.path());
    CHECK(E.path().filename().string().find(".tmp.") == std::string::npos);
  }
}

namespace {

struct ToolRun {
  int Status = 0;
  std::string Out;
};

/// Runs build/tools/jitfuse with \p Args; stdout and stderr together.
ToolRun runTool(const std::vector<std::string> &Args, const TempDir &Scratch) {
  std::string OutFile = (Scratch / "tool-output.txt").string();
  std::vector<char *> Argv;
  std::string Tool = JITFUSE_TOOL_PATH;
  Argv.push_back(Tool.data());
  std::vector<std::string> Copy = Args;
  for (std::string &A : Copy)
    Argv.push_back(A.data());
  Argv.push_back(nullptr);
  posix_spawn_file_actions_t FA;
  posix_spawn_file_actions_init(&FA);
  posix_spawn_file_actions_addopen(&FA, 1, OutFile.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&FA, 1, 2);
  pid_t Pid = 0;
  int Rc = posix_spawn(&Pid, Argv[0], &FA, nullptr, Argv.data(), environ);
  posix_spawn_file_actions_destroy(&FA);
  REQUIRE(Rc == 0);
  ToolRun R;
  REQUIRE(::waitpid(Pid, &R.Status, 0) == Pid);
  R.Out = readFile(OutFile);
  return R;
}

} // namespace

TEST_CASE("jitfuse cache survives symlink loops and clears only its own files",
          "[cache][hostile][tool]") {
#ifndef JITFUSE_TOOL_PATH
  WARN("skipped: the jitfuse tool is not built (no examples)");
#else
  // The test binary may run away from its build tree (the GPU machine gets
  // stripped binaries only).
  if (!fs::exists(JITFUSE_TOOL_PATH)) {
    WARN("skipped: the jitfuse tool " << JITFUSE_TOOL_PATH << " is not here");
    return;
  }
  TempDir Dir, Scratch;
  CacheKeyParts A = partsFor("a");
  std::string KeyA = cacheKey(A).str();
  CHECK_FALSE(lookupFresh(configIn(Dir), A));
  std::string KeyLoop = cacheKey(partsFor("loop")).str();
  fs::create_symlink(KeyLoop + ".jfk", Dir / (KeyLoop + ".jfk"));
  fs::create_symlink("self.cu", Dir / "self.cu");
  std::vector<std::string> Foreign = {"my_project_kernel.cu", "notes.jfk",
                                      KeyA + ".jfk.txt"};
  for (const std::string &Name : Foreign)
    writeFile(Dir / Name, "the user's");

  ScopedEnv Env("JITFUSE_CACHE_DIR", Dir.str().c_str());
  ToolRun Show = runTool({"cache"}, Scratch);
  INFO(Show.Out);
  REQUIRE(WIFEXITED(Show.Status));
  CHECK(WEXITSTATUS(Show.Status) == 0);
  CHECK(Show.Out.find("entries:     1 kernel binaries") != std::string::npos);
  CHECK(Show.Out.find("sources:     1 CUDA sources") != std::string::npos);

  ToolRun Clear = runTool({"cache", "--clear"}, Scratch);
  INFO(Clear.Out);
  REQUIRE(WIFEXITED(Clear.Status));
  CHECK(WEXITSTATUS(Clear.Status) == 0);
  CHECK_FALSE(fs::exists(Dir / (KeyA + ".jfk")));
  CHECK_FALSE(fs::exists(Dir / (KeyA + ".cu")));
  for (const std::string &Name : Foreign) {
    INFO(Name);
    CHECK(readFile(Dir / Name) == "the user's");
  }
  CHECK_FALSE(fs::exists(fs::symlink_status(Dir / (KeyLoop + ".jfk"))));
  CHECK(fs::is_symlink(Dir / "self.cu"));

  // The tool says when the library would refuse the directory.
  CHECK(Show.Out.find("refused") == std::string::npos);
  fs::permissions(Dir.str(), fs::perms::group_write, fs::perm_options::add);
  ToolRun Refused = runTool({"cache"}, Scratch);
  INFO(Refused.Out);
  CHECK(Refused.Out.find("trust:       refused, writable by group or others") !=
        std::string::npos);
#endif
}
