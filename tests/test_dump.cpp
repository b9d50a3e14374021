//===- tests/test_dump.cpp - JITFUSE_DUMP=cubin -------------------------===//
//
// The CUBIN dump: every variant of every kernel lands in JITFUSE_DUMP_DIR as
// ELF files named after the cache key, whether the program was compiled as
// one NVRTC program or in parts (an image bundle), cold or from the cache;
// without a directory nothing binary reaches stderr.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "TestEnv.h"

#include "driver/Compiler.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

using namespace jitfuse;
using namespace jitfuse::test;
namespace fs = std::filesystem;

namespace {

/// Two kernels, each with an aligned and a peeled variant: a row reduction
/// and, after it, an element-wise cast the fusion pass keeps apart (a
/// second output of another shape).
Graph twoKernelGraph(double Bias) {
  Graph G;
  Value X = G.input("x", bf16, {"B", 4096});
  Value W = G.input("w", bf16, {4096});
  G.output("y", cast(nn::rmsNorm(X, W, G.constant(1e-6)), bf16));
  Value Z = G.input("z", f16, {"B", 3, 1000});
  G.output("z1", cast(Z * 2.0 + Bias, f16));
  return G;
}

std::string tempDir() {
  std::string T = "/tmp/jitfuse-dumpcubin-XXXXXX";
  REQUIRE(mkdtemp(T.data()) != nullptr);
  return T;
}

/// Every file of Dir: name -> bytes.
std::map<std::string, std::string> readDir(const std::string &Dir) {
  std::map<std::string, std::string> Out;
  for (const fs::directory_entry &E : fs::directory_iterator(Dir)) {
    std::ifstream F(E.path(), std::ios::binary);
    Out[E.path().filename().string()] =
        std::string(std::istreambuf_iterator<char>(F), std::istreambuf_iterator<char>());
  }
  return Out;
}

} // namespace

TEST_CASE("JITFUSE_DUMP=cubin writes every variant's CUBIN, one program or in parts",
          "[dump]") {
  for (const char *Threads : {"1", "2"}) {
    INFO("JITFUSE_COMPILE_THREADS=" << Threads);
    std::string Dir = tempDir();
    ScopedEnv Dump("JITFUSE_DUMP", "cubin"), DumpDir("JITFUSE_DUMP_DIR", Dir.c_str()),
        T("JITFUSE_COMPILE_THREADS", Threads);
    // A graph no other test compiles (its constant), so the compile is cold.
    Graph G = twoKernelGraph(Threads[0] == '1' ? 0.25 : 0.375);
    CompileOptions Opts;
    Opts.Arch = "sm_90";
    Executable X = testCompiler().compile(G, Opts);
    REQUIRE(X.numKernels() == 2);

    std::map<std::string, std::string> Files = readDir(Dir);
    std::regex Name(R"(jitfuse_[0-9a-f]{16}(\.[0-9]+)?\.cubin)");
    std::string All;
    for (const auto &[F, Bytes] : Files) {
      INFO(F);
      CHECK(std::regex_match(F, Name));
      CHECK(Bytes.substr(0, 4) == "\x7f" "ELF");
      All += Bytes;
    }
    // One program: one file; in parts: one file a part (two or more).
    if (Threads[0] == '1')
      CHECK(Files.size() == 1);
    else
      CHECK(Files.size() >= 2);
    // Every entry point of the program (each variant of each launch) is
    // defined in one of them; ELF symbol names are NUL-terminated strings.
    // (The signature's first line ends with the name and its parenthesis.)
    std::regex Global(R"(__global__ void[^\n]* (\w+)\(\n)");
    const std::string Src = X.source();
    int Entries = 0;
    for (std::sregex_iterator I(Src.begin(), Src.end(), Global), E; I != E; ++I) {
      INFO((*I)[1].str());
      CHECK(All.find((*I)[1].str() + '\0') != std::string::npos);
      ++Entries;
    }
    CHECK(Entries >= 2); // the aligned and the peeled variant at least
    fs::remove_all(Dir);

    // From the cache (memory now): the same files again.
    std::string Again = tempDir();
    ScopedEnv DumpAgain("JITFUSE_DUMP_DIR", Again.c_str());
    Executable Y = testCompiler().compile(G, Opts);
    CHECK(Y.stats().CacheHit);
    CHECK(readDir(Again) == Files);
    fs::remove_all(Again);
  }
}

TEST_CASE("JITFUSE_DUMP=cubin without a directory warns and writes nothing", "[dump]") {
  ScopedEnv Dump("JITFUSE_DUMP", "cubin"), DumpDir("JITFUSE_DUMP_DIR", nullptr);
  CapturedDiagnostics Diag;
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Executable X = testCompiler().compile(twoKernelGraph(0.625), Opts);
  CHECK(X.numKernels() == 2);
  CHECK(Diag.text().find("JITFUSE_DUMP=cubin writes CUBINs only to a directory") !=
        std::string::npos);
}
