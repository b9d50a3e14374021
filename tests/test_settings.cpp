//===- tests/test_settings.cpp - JITFUSE_* variables and the log ----------===//
//
// One policy for every variable (support/Settings.h): unset or empty is the
// default; a bad value is one warning naming the variable, the value and the
// accepted values, then the default. And the library is quiet unless asked.
//
//===----------------------------------------------------------------------===//
#include "TestEnv.h"

#include "driver/Compiler.h"
#include "support/Settings.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Contains;

TEST_CASE("Settings: defaults when nothing is set", "[settings]") {
  ScopedEnv A("JITFUSE_CACHE", nullptr), B("JITFUSE_CACHE_MAX_BYTES", nullptr),
      C("JITFUSE_CACHE_SHARED", nullptr), D("JITFUSE_COMPILE_THREADS", nullptr),
      E("JITFUSE_DUMP", nullptr), F("JITFUSE_DUMP_DIR", nullptr), L("JITFUSE_LOG", nullptr),
      Dir("JITFUSE_CACHE_DIR", nullptr), Xdg("XDG_CACHE_HOME", "/xdg");
  CapturedDiagnostics Diag;
  Settings S = Settings::fromEnv();
  CHECK(S.CacheDir == "/xdg/jitfuse");
  CHECK(S.CacheEnabled);
  CHECK(S.CacheMaxBytes == (uint64_t(1) << 30));
  CHECK_FALSE(S.CacheShared);
  CHECK(S.CompileThreads >= 1);
  CHECK(S.CompileThreads <= 8);
  CHECK_FALSE((S.DumpGraph || S.DumpPlan || S.DumpCuda || S.DumpPtx || S.DumpCubin));
  CHECK(S.DumpDir.empty());
  CHECK(S.Log == LogLevel::Off);
  CHECK(Diag.lines().empty());
}

TEST_CASE("Settings: good values are taken", "[settings]") {
  ScopedEnv A("JITFUSE_CACHE", "OFF"), B("JITFUSE_CACHE_MAX_BYTES", "512M"),
      C("JITFUSE_CACHE_SHARED", "yes"), D("JITFUSE_COMPILE_THREADS", "3"),
      E("JITFUSE_DUMP", "plan, cuda"), F("JITFUSE_DUMP_DIR", "/tmp/d"),
      L("JITFUSE_LOG", "debug"), Dir("JITFUSE_CACHE_DIR", "/c");
  CapturedDiagnostics Diag;
  Settings S = Settings::fromEnv();
  CHECK(S.CacheDir == "/c");
  CHECK_FALSE(S.CacheEnabled);
  CHECK(S.CacheMaxBytes == (uint64_t(512) << 20));
  CHECK(S.CacheShared);
  CHECK(S.CompileThreads == 3);
  CHECK_FALSE(S.DumpGraph);
  CHECK(S.DumpPlan);
  CHECK(S.DumpCuda);
  CHECK_FALSE(S.DumpPtx);
  CHECK(S.DumpDir == "/tmp/d");
  CHECK(S.Log == LogLevel::Debug);
  CHECK(Diag.lines().empty());
  ScopedEnv All("JITFUSE_DUMP", "all");
  S = Settings::fromEnv();
  CHECK((S.DumpGraph && S.DumpPlan && S.DumpCuda && S.DumpPtx && S.DumpCubin));
}

TEST_CASE("Settings: a bad value warns once, naming it, and keeps the default",
          "[settings]") {
  struct Case {
    const char *Name, *Value, *Accepted;
  };
  // Values unique to this test: warnings are once per variable and value
  // per process.
  for (Case C : {Case{"JITFUSE_CACHE", "maybe-t1", "on or off"},
                 Case{"JITFUSE_CACHE_SHARED", "perhaps-t1", "on or off"},
                 Case{"JITFUSE_CACHE_MAX_BYTES", "lots-t1", "a byte count"},
                 Case{"JITFUSE_COMPILE_THREADS", "-7", "an integer from 1 to 64"},
                 Case{"JITFUSE_COMPILE_THREADS", "0x11", "an integer from 1 to 64"},
                 Case{"JITFUSE_LOG", "verbose-t1", "off, info or debug"}}) {
    INFO(C.Name << "=" << C.Value);
    Settings Default;
    {
      ScopedEnv Unset(C.Name, nullptr);
      Default = Settings::fromEnv();
    }
    ScopedEnv E(C.Name, C.Value);
    CapturedDiagnostics Diag;
    Settings S = Settings::fromEnv();
    CHECK(S.CacheEnabled == Default.CacheEnabled);
    CHECK(S.CacheShared == Default.CacheShared);
    CHECK(S.CacheMaxBytes == Default.CacheMaxBytes);
    CHECK(S.CompileThreads == Default.CompileThreads);
    CHECK(S.Log == Default.Log);
    REQUIRE(Diag.lines().size() == 1);
    CHECK_THAT(Diag.lines()[0], Contains("jitfuse: warning:") && Contains(C.Name) &&
                                    Contains(std::string("'") + C.Value + "'") &&
                                    Contains(C.Accepted) && Contains("default"));
    // The same cause again: quiet.
    (void)Settings::fromEnv();
    CHECK(Diag.lines().size() == 1);
  }
}

TEST_CASE("Settings: JITFUSE_COMPILE_THREADS is clamped, with a warning", "[settings]") {
  ScopedEnv E("JITFUSE_COMPILE_THREADS", "1000");
  CapturedDiagnostics Diag;
  CHECK(Settings::fromEnv().CompileThreads == Settings::kMaxCompileThreads);
  REQUIRE(Diag.lines().size() == 1);
  CHECK_THAT(Diag.lines()[0], Contains("JITFUSE_COMPILE_THREADS='1000'") && Contains("64"));
}

TEST_CASE("Settings: unknown JITFUSE_DUMP words are named, known ones still count",
          "[settings]") {
  ScopedEnv E("JITFUSE_DUMP", "plan,cuad,graphs");
  CapturedDiagnostics Diag;
  Settings S = Settings::fromEnv();
  CHECK(S.DumpPlan);
  CHECK_FALSE(S.DumpCuda);
  CHECK_FALSE(S.DumpGraph);
  REQUIRE(Diag.lines().size() == 1);
  CHECK_THAT(Diag.lines()[0], Contains("'cuad', 'graphs'") && Contains("graph, plan, cuda, ptx, cubin, all"));
}

namespace {
Graph smallGraph() {
  Graph G;
  Value X = G.input("x", f32, {"N"});
  G.output("y", exp(X) * 2.0);
  return G;
}
} // namespace

TEST_CASE("compile() is quiet by default and logs with JITFUSE_LOG", "[settings][log]") {
  rt::CacheConfig Memory;
  Memory.Enabled = false;
  Compiler C(Memory);
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  {
    ScopedEnv L("JITFUSE_LOG", nullptr);
    ScopedEnv D("JITFUSE_DUMP", nullptr);
    CapturedDiagnostics Diag;
    (void)C.compile(smallGraph(), Opts);
    CHECK(Diag.lines().empty());
  }
  {
    ScopedEnv L("JITFUSE_LOG", "info");
    CapturedDiagnostics Diag;
    (void)C.compile(smallGraph(), Opts);
    REQUIRE(Diag.lines().size() == 1);
    CHECK_THAT(Diag.lines()[0], Contains("jitfuse: compiled 1 kernel (fused)") &&
                                    Contains("cache hit"));
  }
  {
    ScopedEnv L("JITFUSE_LOG", "debug");
    CapturedDiagnostics Diag;
    Opts.Fuse = false;
    (void)C.compile(smallGraph(), Opts);
    REQUIRE(Diag.lines().size() == 2);
    CHECK_THAT(Diag.lines()[0], Contains("compiled 2 kernels (unfused)") && Contains("NVRTC"));
    CHECK_THAT(Diag.lines()[1], Contains("stages: plan") && Contains("emit") &&
                                    Contains("compile or find") && Contains("load"));
  }
}
