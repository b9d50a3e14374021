//===- tests/stress/cache_stress_main.cpp - one cache-stress process ------===//
//
// Waits for a start file (so N processes begin together), compiles the
// stress graphs into the given cache directory for sm_90 (no GPU needed),
// checks each entry on disk parses and holds a CUBIN, and prints
// "ok <key> hit|miss" per graph. Exit 0 on success, 1 with "error: ..." on
// stdout otherwise.
//
//===----------------------------------------------------------------------===//
#include "stress/StressGraphs.h"

#include "driver/Compiler.h"
#include "runtime/CacheFile.h"
#include "support/Error.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace jitfuse;

static std::string readFile(const std::string &Path) {
  std::ifstream F(Path, std::ios::binary);
  std::stringstream SS;
  SS << F.rdbuf();
  return SS.str();
}

int main(int Argc, char **Argv) {
  CLI::App App{"jitfuse cache stress helper"};
  std::string Dir, StartFile;
  unsigned Graphs = 3, Rounds = 1;
  App.add_option("--dir", Dir, "cache directory")->required();
  App.add_option("--start-file", StartFile, "wait until this file exists");
  App.add_option("--graphs", Graphs, "number of stress graphs to compile");
  App.add_option("--rounds", Rounds, "compile everything this many times, each with a fresh Compiler");
  CLI11_PARSE(App, Argc, Argv);

  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!StartFile.empty() && !std::filesystem::exists(StartFile)) {
    if (std::chrono::steady_clock::now() > Deadline) {
      std::printf("error: start file %s never appeared\n", StartFile.c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  try {
    for (unsigned Round = 0; Round < Rounds; ++Round) {
      rt::CacheConfig Cfg;
      Cfg.Dir = Dir;
      Compiler C(Cfg);
      for (unsigned K = 0; K < Graphs; ++K) {
        Graph G = test::stressGraph(K);
        CompileOptions Opts;
        Opts.Arch = "sm_90";
        std::string Key;
        bool Hit = false;
        {
          Executable X = C.compile(G, Opts);
          Key = X.cacheKey();
          Hit = X.stats().CacheHit;
        } // waits for the deferred variants, which write the entry
        std::string WhyNot;
        auto Entry = rt::parseCacheEntry(readFile(C.cache().entryPath(Key)), Key, &WhyNot);
        if (!Entry)
          fail("entry {} on disk does not parse: {}", Key, WhyNot);
        if (Entry->Image.empty())
          fail("entry {} holds an empty CUBIN", Key);
        std::printf("ok %s %s\n", Key.c_str(), Hit ? "hit" : "miss");
        std::fflush(stdout);
      }
    }
  } catch (const Error &E) {
    std::printf("error: %s\n", E.what());
    return 1;
  }
  return 0;
}
