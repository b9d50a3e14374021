//===- tests/test_install.cpp - the installed package ---------------------===//
//
// Installs this build tree into a temporary prefix, then configures, builds
// and runs tests/consumer against it with find_package(jitfuse CONFIG), the
// way a user of the library would. Catches headers or targets missing from
// the install rules and a package config that does not resolve its
// dependencies. Needs cmake and ninja on PATH (scripts/setup-deps).
//
//===----------------------------------------------------------------------===//
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

/// A fresh directory under the system temp dir, removed on success only so a
/// failure leaves its logs behind.
struct TempDir {
  fs::path Path;
  bool Keep = false;
  TempDir() {
    std::random_device Rd;
    Path = fs::temp_directory_path() /
           fmt::format("jitfuse-install-{}-{:08x}", ::getpid(), Rd());
    fs::create_directories(Path);
  }
  ~TempDir() {
    std::error_code EC;
    if (!Keep)
      fs::remove_all(Path, EC);
  }
};

std::string readFile(const fs::path &P) {
  std::ifstream F(P);
  std::stringstream S;
  S << F.rdbuf();
  return S.str();
}

/// Runs Cmd through the shell with stdout+stderr in Log; returns the exit
/// status (-1 when it did not exit normally).
int runLogged(const std::string &Cmd, const fs::path &Log) {
  std::string Full = fmt::format("{} > '{}' 2>&1", Cmd, Log.string());
  int Status = std::system(Full.c_str());
  if (Status == -1 || !WIFEXITED(Status))
    return -1;
  return WEXITSTATUS(Status);
}

/// The number after "<Label>: " at the start of a line of Text, or -1.
int countAfter(const std::string &Text, const std::string &Label) {
  std::istringstream In(Text);
  const std::string Prefix = Label + ": ";
  for (std::string Line; std::getline(In, Line);)
    if (Line.rfind(Prefix, 0) == 0)
      return std::atoi(Line.c_str() + Prefix.size());
  return -1;
}

} // namespace

TEST_CASE("installed package builds and runs a consumer", "[install]") {
  TempDir Tmp;
  Tmp.Keep = true; // cleared at the end when every step passed
  const fs::path Prefix = Tmp.Path / "prefix";
  const fs::path Build = Tmp.Path / "consumer-build";
  const std::string Consumer = std::string(JITFUSE_SOURCE_DIR) + "/tests/consumer";
  INFO("temp dir (kept on failure): " << Tmp.Path.string());

  const fs::path InstallLog = Tmp.Path / "install.log";
  int Rc = runLogged(fmt::format("cmake --install '{}' --prefix '{}'", JITFUSE_BINARY_DIR,
                                 Prefix.string()),
                     InstallLog);
  INFO("cmake --install:\n" << readFile(InstallLog));
  REQUIRE(Rc == 0);
  CHECK(fs::exists(Prefix / "include/jitfuse/jitfuse.h"));
  CHECK(fs::exists(Prefix / "include/jitfuse/driver/Compiler.h"));
  CHECK(fs::exists(Prefix / "include/jitfuse/ir/Ops.def"));
  CHECK(fs::exists(Prefix / "include/jitfuse/runtime/DriverFunctions.def"));

  // No build type: the consumer's own code is tiny and -O0 builds fastest.
  const fs::path ConfigureLog = Tmp.Path / "configure.log";
  Rc = runLogged(fmt::format("cmake -S '{}' -B '{}' -G Ninja -DCMAKE_PREFIX_PATH='{}'", Consumer,
                             Build.string(), Prefix.string()),
                 ConfigureLog);
  INFO("consumer configure:\n" << readFile(ConfigureLog));
  REQUIRE(Rc == 0);

  const fs::path BuildLog = Tmp.Path / "build.log";
  Rc = runLogged(fmt::format("cmake --build '{}'", Build.string()), BuildLog);
  INFO("consumer build:\n" << readFile(BuildLog));
  REQUIRE(Rc == 0);

  // The consumer gets its own kernel cache so it never touches the user's.
  const fs::path RunLog = Tmp.Path / "run.log";
  Rc = runLogged(fmt::format("JITFUSE_CACHE_DIR='{}' '{}'", (Tmp.Path / "cache").string(),
                             (Build / "consumer").string()),
                 RunLog);
  std::string Out = readFile(RunLog);
  INFO("consumer output:\n" << Out);
  REQUIRE(Rc == 0);
  // relu(a + b) * s: add, relu, mul are one kernel each when unfused and one
  // Level 1 element-wise kernel fused.
  CHECK(countAfter(Out, "unfused kernels") == 3);
  CHECK(countAfter(Out, "fused kernels") == 1);
  // The consumer compiled a translation unit including every installed
  // header; count them here independently.
  int Headers = 0;
  for (const fs::directory_entry &E :
       fs::recursive_directory_iterator(Prefix / "include/jitfuse"))
    Headers += E.path().extension() == ".h";
  CHECK(Headers > 30);
  CHECK(countAfter(Out, "installed headers") == Headers);
  Tmp.Keep = false;
}
