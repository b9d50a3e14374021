//===- tests/CacheTestUtil.h - helpers of the kernel cache tests ----------===//
//
// A temp directory, scoped environment variables, stderr capture, a fake
// compiler and a child process that runs as an unprivileged user: what
// test_runtime_cache.cpp and test_cache_hostile.cpp share. No GPU needed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/CacheFile.h"
#include "runtime/KernelCache.h"

#include "TestEnv.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace jitfuse::test {

using rt::CacheConfig;
using rt::CacheEntry;
using rt::CacheKeyParts;
using rt::KernelCache;

/// A fresh mkdtemp directory, removed with its contents at scope exit.
class TempDir {
public:
  TempDir() {
    std::string Pattern =
        (std::filesystem::temp_directory_path() / "jitfuse-cache-test-XXXXXX").string();
    REQUIRE(::mkdtemp(Pattern.data()) != nullptr);
    Path = Pattern;
  }
  ~TempDir() {
    std::error_code EC;
    std::filesystem::permissions(Path, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, EC);
    std::filesystem::remove_all(Path, EC);
  }
  std::string str() const { return Path.string(); }
  std::filesystem::path operator/(const std::string &Name) const { return Path / Name; }

private:
  std::filesystem::path Path;
};


/// Runs \p Fn with stderr redirected to a file and returns what it printed.
template <typename FnT> std::string captureStderr(FnT Fn) {
  TempDir Dir;
  std::string File = (Dir / "stderr.txt").string();
  std::fflush(stderr);
  int Saved = ::dup(2);
  int Fd = ::open(File.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(Fd >= 0);
  ::dup2(Fd, 2);
  ::close(Fd);
  try {
    Fn();
  } catch (...) {
    std::fflush(stderr);
    ::dup2(Saved, 2);
    ::close(Saved);
    throw;
  }
  std::fflush(stderr);
  ::dup2(Saved, 2);
  ::close(Saved);
  std::ifstream In(File);
  std::stringstream SS;
  SS << In.rdbuf();
  return SS.str();
}

inline CacheKeyParts partsFor(const std::string &Name) {
  return {"extern \"C\" __global__ void " + Name + "() {}",
          {"--gpu-architecture=sm_90", "--std=c++17"},
          "13.0",
          "sm_90"};
}

/// The fake compiler's output: recognizably tied to its source.
inline CacheEntry fakeCompile(const CacheKeyParts &Parts, size_t CubinBytes = 64) {
  CacheEntry E;
  E.Image.assign(CubinBytes, 'c');
  std::copy(Parts.Source.begin(),
            Parts.Source.begin() + std::min(CubinBytes, Parts.Source.size()),
            E.Image.begin());
  E.Log = "log for " + Parts.Source;
  return E;
}

inline CacheConfig configIn(const TempDir &Dir, uint64_t MaxBytes = uint64_t(1)
                                                             << 30) {
  CacheConfig C;
  C.Dir = Dir.str();
  C.Enabled = true;
  C.MaxBytes = MaxBytes;
  return C;
}

inline std::string readFile(const std::filesystem::path &P) {
  std::ifstream In(P, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(In), {});
}

inline void writeFile(const std::filesystem::path &P, const std::string &Bytes) {
  std::ofstream Out(P, std::ios::binary | std::ios::trunc);
  Out << Bytes;
}

inline void setAge(const std::filesystem::path &P, std::chrono::seconds Age) {
  std::filesystem::last_write_time(P, std::filesystem::file_time_type::clock::now() - Age);
}

inline size_t countFiles(const std::string &Dir) {
  if (!std::filesystem::exists(Dir))
    return 0;
  return static_cast<size_t>(
      std::distance(std::filesystem::directory_iterator(Dir), std::filesystem::directory_iterator()));
}

/// One lookup with a fresh cache instance (a new process, as far as the
/// disk is concerned); returns whether it was a hit.
inline bool lookupFresh(const CacheConfig &Config, const CacheKeyParts &Parts,
                 int *Compiles = nullptr) {
  KernelCache Cache(Config);
  bool Hit = false;
  auto E = Cache.getOrCompile(
      Parts,
      [&] {
        if (Compiles)
          ++*Compiles;
        return fakeCompile(Parts);
      },
      &Hit);
  CHECK(E->Image == fakeCompile(Parts).Image);
  return Hit;
}

/// The uid and gid an unprivileged child runs as ("nobody").
inline constexpr uid_t kNobody = 65534;

/// How a forked child ended, and what it wrote to stderr.
struct ChildResult {
  int Status = 0;
  std::string Err;
  /// True when the child exited (was not killed) with \p Code.
  bool exitedWith(int Code) const {
    return WIFEXITED(Status) && WEXITSTATUS(Status) == Code;
  }
};

/// Runs \p Fn in a forked child and returns its verdict: Fn returns the exit
/// code (0 for success) and must not use Catch2 macros. With \p Unprivileged
/// a root parent's child first becomes kNobody, since root ignores
/// permission bits (and CI runs as root); it exits 100 if it cannot.
template <typename FnT>
ChildResult runInChild(FnT Fn, bool Unprivileged = false) {
  int Pipe[2];
  REQUIRE(::pipe(Pipe) == 0);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t Pid = ::fork();
  if (Pid == 0) {
    ::close(Pipe[0]);
    ::dup2(Pipe[1], 2);
    if (Unprivileged && ::geteuid() == 0 &&
        (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0))
      ::_exit(100);
    int Rc = 99;
    try {
      Rc = Fn();
    } catch (...) {
      Rc = 98;
    }
    std::fflush(stderr);
    ::_exit(Rc);
  }
  REQUIRE(Pid > 0);
  ::close(Pipe[1]);
  ChildResult R;
  char Buf[512];
  for (ssize_t N; (N = ::read(Pipe[0], Buf, sizeof(Buf))) > 0;)
    R.Err.append(Buf, static_cast<size_t>(N));
  ::close(Pipe[0]);
  REQUIRE(::waitpid(Pid, &R.Status, 0) == Pid);
  return R;
}

} // namespace jitfuse::test
