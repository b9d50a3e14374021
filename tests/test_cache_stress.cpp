//===- tests/test_cache_stress.cpp - concurrent cache users ---------------===//
//
// Single-process cache behaviour is covered in test_runtime_cache*.cpp. Here:
// 8 processes (tests/stress/cache_stress_main.cpp) released together compile
// the same graphs into one empty directory; writers killed with SIGKILL at
// random moments; and 8 threads compiling (and on a GPU running) through one
// Compiler.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "stress/StressGraphs.h"

#include "reference/Tolerance.h"
#include "runtime/CacheFile.h"
#include "runtime/CacheKey.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace jitfuse;
using namespace jitfuse::test;
namespace fs = std::filesystem;

namespace {

constexpr unsigned NumGraphs = 3;

std::string helperPath() {
  if (const char *Env = std::getenv("JITFUSE_CACHE_STRESS_BIN"))
    return Env;
  return JITFUSE_BINARY_DIR "/tests/stress/jitfuse_cache_stress";
}

std::string readFile(const fs::path &P) {
  std::ifstream F(P, std::ios::binary);
  std::stringstream SS;
  SS << F.rdbuf();
  return SS.str();
}

/// The keys the stress graphs must get, computed in this process.
std::set<std::string> expectedKeys() {
  rt::CacheConfig Cfg;
  Cfg.Enabled = false;
  static Compiler C(Cfg);
  std::set<std::string> Keys;
  for (unsigned K = 0; K < NumGraphs; ++K) {
    CompileOptions Opts;
    Opts.Arch = "sm_90";
    Keys.insert(C.compile(stressGraph(K), Opts).cacheKey());
  }
  return Keys;
}

struct Child {
  pid_t Pid = -1;
  std::string OutPath;
};

Child spawnHelper(const std::string &Dir, const std::string &Start, const std::string &Out,
                  unsigned Rounds = 1) {
  Child C;
  C.OutPath = Out;
  std::vector<std::string> Args = {helperPath(), "--dir", Dir, "--start-file", Start,
                                   "--graphs", std::to_string(NumGraphs), "--rounds",
                                   std::to_string(Rounds)};
  std::vector<char *> Argv;
  for (std::string &A : Args)
    Argv.push_back(A.data());
  Argv.push_back(nullptr);
  posix_spawn_file_actions_t FA;
  posix_spawn_file_actions_init(&FA);
  posix_spawn_file_actions_addopen(&FA, 1, Out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&FA, 2, (Out + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int Rc = posix_spawn(&C.Pid, Argv[0], &FA, nullptr, Argv.data(), environ);
  posix_spawn_file_actions_destroy(&FA);
  REQUIRE(Rc == 0);
  return C;
}

int waitFor(pid_t Pid) {
  int Status = 0;
  REQUIRE(::waitpid(Pid, &Status, 0) == Pid);
  return Status;
}

std::string makeTemp() {
  char T[] = "/tmp/jitfuse-stress-XXXXXX";
  REQUIRE(mkdtemp(T) != nullptr);
  return T;
}

/// Every .jfk in Dir is a valid entry for its key with a CUBIN; returns the
/// keys. Other files must be the `<key>.cu` sources, or (AllowTemps) temp
/// files of writers that were killed.
std::set<std::string> checkCacheDir(const std::string &Dir, bool AllowTemps) {
  std::set<std::string> Keys;
  for (const fs::directory_entry &E : fs::directory_iterator(Dir)) {
    std::string Name = E.path().filename().string();
    INFO("cache file " << Name);
    if (E.path().extension() == ".jfk") {
      std::string Key = E.path().stem().string();
      CHECK(rt::isValidCacheKey(Key));
      std::string Why;
      auto Entry = rt::parseCacheEntry(readFile(E.path()), Key, &Why);
      INFO(Why);
      REQUIRE(Entry.has_value());
      CHECK(!Entry->Image.empty());
      Keys.insert(Key);
    } else if (E.path().extension() == ".cu") {
      CHECK(rt::isValidCacheKey(E.path().stem().string()));
    } else {
      CHECK(AllowTemps);
      CHECK(Name.find(".tmp.") != std::string::npos);
    }
  }
  return Keys;
}

} // namespace

TEST_CASE("8 processes released together compile into one empty cache", "[stress]") {
  if (!fs::exists(helperPath())) {
    WARN("skipped: helper " << helperPath() << " is not built");
    return;
  }
  std::set<std::string> Want = expectedKeys();
  REQUIRE(Want.size() == NumGraphs);
  for (int Round = 0; Round < 2; ++Round) {
    std::string Dir = makeTemp(), Work = makeTemp();
    std::string Start = Work + "/go";
    std::vector<Child> Kids;
    for (int I = 0; I < 8; ++I)
      Kids.push_back(spawnHelper(Dir, Start, fmt::format("{}/out{}", Work, I)));
    std::ofstream(Start).put('1');
    unsigned Misses = 0;
    for (const Child &K : Kids) {
      int Status = waitFor(K.Pid);
      std::string Out = readFile(K.OutPath);
      INFO("helper output:\n" << Out << readFile(K.OutPath + ".err"));
      CHECK(WIFEXITED(Status));
      CHECK(WEXITSTATUS(Status) == 0);
      std::istringstream In(Out);
      std::string Ok, Key, How;
      std::set<std::string> Got;
      while (In >> Ok >> Key >> How) {
        CHECK(Ok == "ok");
        Got.insert(Key);
        Misses += How == "miss";
      }
      CHECK(Got == Want);
    }
    // At least one process compiled each graph; the rest may have raced it.
    CHECK(Misses >= NumGraphs);
    CHECK(checkCacheDir(Dir, /*AllowTemps=*/false) == Want);
    fs::remove_all(Dir);
    fs::remove_all(Work);
  }
}

TEST_CASE("Writers killed mid-compile leave a cache the next compile heals", "[stress]") {
  if (!fs::exists(helperPath())) {
    WARN("skipped: helper " << helperPath() << " is not built");
    return;
  }
  std::set<std::string> Want = expectedKeys();
  std::mt19937_64 Rng(rng()());
  for (int Round = 0; Round < 5; ++Round) {
    std::string Dir = makeTemp(), Work = makeTemp();
    std::string Start = Work + "/go";
    std::vector<Child> Kids;
    for (int I = 0; I < 4; ++I)
      Kids.push_back(spawnHelper(Dir, Start, fmt::format("{}/out{}", Work, I), 20));
    std::ofstream(Start).put('1');
    // Kill two writers at random moments of their compile/write loop.
    for (int I = 0; I < 2; ++I) {
      std::this_thread::sleep_for(std::chrono::milliseconds(Rng() % 400));
      ::kill(Kids[I].Pid, SIGKILL);
    }
    for (size_t I = 0; I < Kids.size(); ++I) {
      int Status = waitFor(Kids[I].Pid);
      INFO("helper " << I << " output:\n" << readFile(Kids[I].OutPath));
      if (I >= 2) {
        CHECK(WIFEXITED(Status));
        CHECK(WEXITSTATUS(Status) == 0);
      } else {
        // Killed, or it finished first; never a crash of its own.
        CHECK((WIFSIGNALED(Status) ? WTERMSIG(Status) == SIGKILL : WEXITSTATUS(Status) == 0));
      }
    }
    checkCacheDir(Dir, /*AllowTemps=*/true);
    // The next compile heals: hit or miss, the right entry, no crash.
    Child Heal = spawnHelper(Dir, "", Work + "/heal");
    int Status = waitFor(Heal.Pid);
    INFO("heal output:\n" << readFile(Heal.OutPath));
    CHECK(WIFEXITED(Status));
    CHECK(WEXITSTATUS(Status) == 0);
    CHECK(checkCacheDir(Dir, /*AllowTemps=*/true) == Want);
    fs::remove_all(Dir);
    fs::remove_all(Work);
  }
}

TEST_CASE("8 threads compile (and run) graphs through one Compiler", "[stress]") {
  std::string Dir = makeTemp();
  rt::CacheConfig Cfg;
  Cfg.Dir = Dir;
  Compiler C(Cfg);
  bool Gpu = haveGpu();
  std::set<std::string> Want = expectedKeys();
  std::mutex Lock;
  std::vector<std::string> Errors;
  std::vector<std::set<std::string>> KeysByThread(8);
  std::atomic<int> Compared{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < 8; ++T) {
    Threads.emplace_back([&, T] {
      try {
        std::mt19937_64 Rng(T);
        for (int I = 0; I < 6; ++I) {
          unsigned K = static_cast<unsigned>((T + I) % NumGraphs);
          Graph G = stressGraph(K);
          CompileOptions Opts;
          Opts.Fuse = (T + I) % 2 == 0;
          if (!Gpu)
            Opts.Arch = "sm_90";
          Executable X = C.compile(G, Opts);
          if (Opts.Fuse)
            KeysByThread[T].insert(X.cacheKey());
          if (!Gpu)
            continue;
          Bindings B;
          B.Dims = {{"B", 3 + T}};
          for (NodeId N : G.inputs())
            B.Inputs[G.node(N).Name] =
                randomTensor(G.node(N).Type, resolveShape(G.node(N).Dims, B.Dims), Rng);
          auto Ref = interpret(G, B);
          auto Got = runOnDevice(X, B);
          for (const GraphOutput &O : G.outputs()) {
            double Tol = toleranceFor(G.node(O.Id).Type, maxReductionLength(G, O.Id, B.Dims));
            CompareResult R = compareTensors(Got.at(O.Name), Ref.at(O.Name), Tol, O.Name);
            if (!R.Ok) {
              std::lock_guard<std::mutex> L(Lock);
              Errors.push_back(R.Message);
            }
            ++Compared;
          }
        }
      } catch (const std::exception &E) {
        std::lock_guard<std::mutex> L(Lock);
        Errors.push_back(E.what());
      }
    });
  }
  for (std::thread &T : Threads)
    T.join();
  for (const std::string &E : Errors)
    FAIL_CHECK(E);
  std::set<std::string> All;
  for (const auto &S : KeysByThread)
    All.insert(S.begin(), S.end());
  if (!Gpu)
    CHECK(All == Want); // fused sm_90 keys equal the other processes' keys
  CHECK(C.cacheStats().Misses <= 2 * NumGraphs);
  if (Gpu)
    CHECK(Compared == 8 * 6 * 2);
  checkCacheDir(Dir, /*AllowTemps=*/false);
  fs::remove_all(Dir);
}
