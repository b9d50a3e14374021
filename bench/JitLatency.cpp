//===- bench/JitLatency.cpp - C1/C2: compile latency of the JIT -----------===//
#include "JitLatency.h"

#include "BenchUtil.h"
#include "Workloads.h"

#include "driver/Compiler.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace jitfuse::bench {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

namespace {
struct CompileSample {
  double WallMs = 0;
  CompileStats Stats;
  unsigned Kernels = 0;
};
} // namespace

static CompileSample timedCompile(Compiler &C, DType T, int64_t H) {
  Graph G;
  buildAddRmsNorm(G, T, H);
  auto T0 = Clock::now();
  Executable X = C.compile(G);
  CompileSample S;
  S.WallMs = msSince(T0);
  S.Stats = X.stats();
  S.Kernels = X.numKernels();
  return S;
}

/// Median of a few compiles (cache hits are short enough to be noisy).
static CompileSample medianCompile(Compiler &C, DType T, int64_t H, int Reps = 5) {
  std::vector<CompileSample> S;
  for (int I = 0; I < Reps; ++I)
    S.push_back(timedCompile(C, T, H));
  std::sort(S.begin(), S.end(), [](const CompileSample &A, const CompileSample &B) {
    return A.WallMs < B.WallMs;
  });
  return S[S.size() / 2];
}

static rt::CacheConfig cacheAt(const std::string &Dir) {
  rt::CacheConfig Cfg;
  Cfg.Dir = Dir;
  return Cfg;
}

static Json sampleJson(const CompileSample &S, llvm::StringRef What) {
  Json J = Json::object();
  J["what"] = What.str();
  J["wall_ms"] = S.WallMs;
  J["compile_ms"] = S.Stats.CompileMs;
  J["load_ms"] = S.Stats.LoadMs;
  J["cache_hit"] = S.Stats.CacheHit;
  J["kernels"] = S.Kernels;
  return J;
}

/// Driver load + cuInit and primary context creation, timed apart so that C1
/// is the compiler's latency and not CUDA's start-up.
static Json startupJson() {
  Json J = Json::object();
  auto T0 = Clock::now();
  rt::Driver &D = rt::Driver::get();
  J["driver_init_ms"] = msSince(T0);
  J["driver_available"] = D.available();
  if (!D.available())
    return J;
  T0 = Clock::now();
  rt::primaryContext(0);
  J["context_init_ms"] = msSince(T0);
  return J;
}

int runCompileOnlyChild(const std::string &CacheDir) {
  try {
    (void)startupJson();
    Compiler C(cacheAt(CacheDir));
    CompileSample S = timedCompile(C, DType::BF16, 4096);
    fmt::print("JITFUSE_BENCH_COMPILE_ONLY wall_ms={:.4f} compile_ms={:.4f} "
               "load_ms={:.4f} hit={}\n",
               S.WallMs, S.Stats.CompileMs, S.Stats.LoadMs, S.Stats.CacheHit ? 1 : 0);
    std::fflush(stdout);
    return 0;
  } catch (const std::exception &E) {
    fmt::print(stderr, "jitfuse_bench --compile-only: {}\n", E.what());
    return 1;
  }
}

/// Runs the child and parses its result line; Ok is false (with the child's
/// output as the error) when there is none.
static Json runChild(llvm::StringRef SelfExe, const std::string &CacheDir) {
  Json J = Json::object();
  J["what"] = "C2: disk-cache hit in a new process (compile() call in the child)";
  std::string Cmd = fmt::format("'{}' --compile-only '{}' 2>&1", SelfExe.str(), CacheDir);
  auto T0 = Clock::now();
  FILE *P = popen(Cmd.c_str(), "r");
  if (!P) {
    J["error"] = "popen failed";
    return J;
  }
  std::string Output;
  char Buf[512];
  while (size_t N = std::fread(Buf, 1, sizeof(Buf), P))
    Output.append(Buf, N);
  int Status = pclose(P);
  J["process_total_ms"] = msSince(T0);
  std::istringstream Lines(Output);
  for (std::string Line; std::getline(Lines, Line);) {
    if (Line.rfind("JITFUSE_BENCH_COMPILE_ONLY", 0) != 0)
      continue;
    double Wall = 0, Comp = 0, Load = 0;
    int Hit = 0;
    if (std::sscanf(Line.c_str(),
                    "JITFUSE_BENCH_COMPILE_ONLY wall_ms=%lf compile_ms=%lf load_ms=%lf hit=%d",
                    &Wall, &Comp, &Load, &Hit) == 4) {
      J["wall_ms"] = Wall;
      J["compile_ms"] = Comp;
      J["load_ms"] = Load;
      J["cache_hit"] = Hit == 1;
      return J;
    }
  }
  J["error"] = fmt::format("child exited with status {} and printed: {}", Status, Output);
  return J;
}

/// A number or bool of J as the table shows it; "-" when missing or null.
static std::string text(const Json &J, const char *Key) {
  auto It = J.find(Key);
  if (It == J.end() || It->is_null())
    return "-";
  if (It->is_number())
    return fmt::format("{:.9g}", It->get<double>());
  return It->dump();
}

static void printRow(llvm::StringRef What, const Json &J) {
  auto Num = [&](const char *Key) { return text(J, Key); };
  fmt::print("  {:<44} {:>10} {:>10} {:>8} {:>6}\n", What.str(), Num("wall_ms"),
             Num("compile_ms"), Num("load_ms"), Num("cache_hit"));
}

Json measureJitLatency(llvm::StringRef SelfExe) {
  Json J = Json::object();
  J["graph"] = "add+RMSNorm (r = x + residual; y = rmsNorm(r, w, eps)), bf16, "
               "H=4096, dynamic rows";
  J["startup"] = startupJson();

  char Tmpl[] = "/tmp/jitfuse-bench-jit-XXXXXX";
  if (!mkdtemp(Tmpl))
    fail("bench: cannot create a temp directory under /tmp");
  std::filesystem::path Root(Tmpl);
  std::string Dir1 = (Root / "c1").string(), Dir2 = (Root / "c1b").string();

  Compiler First(cacheAt(Dir1));
  J["c1_first_in_process"] = sampleJson(
      timedCompile(First, DType::BF16, 4096),
      "C1: cold compile, empty cache, first NVRTC use in the process");
  Compiler Second(cacheAt(Dir2));
  J["c1_cold_nvrtc_warm"] = sampleJson(
      timedCompile(Second, DType::BF16, 8192),
      "C1: cold compile, empty cache, NVRTC already used (variant H=8192)");
  J["memory_hit"] = sampleJson(medianCompile(First, DType::BF16, 4096),
                               "in-process memory-cache hit (same Compiler), median of 5");
  // A fresh Compiler per sample: each finds only the disk entry.
  std::vector<CompileSample> Disk;
  for (int I = 0; I < 5; ++I) {
    Compiler Fresh(cacheAt(Dir1));
    Disk.push_back(timedCompile(Fresh, DType::BF16, 4096));
  }
  std::sort(Disk.begin(), Disk.end(), [](const CompileSample &A, const CompileSample &B) {
    return A.WallMs < B.WallMs;
  });
  J["disk_hit_in_process"] = sampleJson(
      Disk[Disk.size() / 2], "in-process disk-cache hit (fresh Compiler each), median of 5");
  J["c2_new_process"] = runChild(SelfExe, Dir1);
  std::error_code EC;
  std::filesystem::remove_all(Root, EC);

  fmt::print("JIT latency (ms) of the add+RMSNorm graph:\n");
  const Json &S = J["startup"];
  fmt::print("  driver init (dlopen + cuInit) {} ms, primary context {} ms\n",
             text(S, "driver_init_ms"), text(S, "context_init_ms"));
  fmt::print("  {:<44} {:>10} {:>10} {:>8} {:>6}\n", "", "wall", "compile", "load", "hit");
  printRow("C1 cold, first NVRTC use in process", J["c1_first_in_process"]);
  printRow("C1 cold, NVRTC warm (H=8192 variant)", J["c1_cold_nvrtc_warm"]);
  printRow("in-process memory hit", J["memory_hit"]);
  printRow("in-process disk hit (fresh Compiler)", J["disk_hit_in_process"]);
  const Json &C2 = J["c2_new_process"];
  if (auto Err = C2.find("error"); Err != C2.end())
    fmt::print("  C2 new process: FAILED: {}\n", Err->get<std::string>());
  else {
    printRow("C2 disk hit, new process", C2);
    fmt::print("  C2 child process total (spawn + start-up + compile + exit): {} ms\n",
               text(C2, "process_total_ms"));
  }
  return J;
}

} // namespace jitfuse::bench
