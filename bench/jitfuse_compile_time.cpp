//===- bench/jitfuse_compile_time.cpp - cold compile time per phase -------===//
//
// Issue 12 item 7: how long a cold compile() takes and where NVRTC spends
// it. For each case: the wall time of Compiler::compile with the cache off
// (a fresh Compiler each time, NVRTC already loaded; median of --reps), and
// NVRTC's own per-phase times (`--time`) for each program a cold compile
// hands it. Needs no GPU.
//
//   build/bench/jitfuse_compile_time [--case NAME]... [--reps N]
//
// JITFUSE_COMPILE_THREADS sets the parallel NVRTC programs as in the library.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"
#include "Workloads.h"

#include "codegen/Codegen.h"
#include "compiler/Planner.h"
#include "runtime/Nvrtc.h"
#include "support/Error.h"
#include "support/Settings.h"

#include <CLI/CLI.hpp>
#include <llvm/ADT/STLExtras.h>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <unistd.h>

using namespace jitfuse;
using namespace jitfuse::bench;

namespace {

/// The transcendentals of the mixed chain, and pow (of the chain's value and
/// y), by name: `--per-op` times a chain of each alone.
const std::vector<std::pair<std::string, std::function<Value(Value, Value)>>> &
transcendentals() {
  static const std::vector<std::pair<std::string, std::function<Value(Value, Value)>>> Ops = {
      {"sin", [](Value A, Value) { return sin(A); }},
      {"exp", [](Value A, Value) { return exp(A); }},
      {"tanh", [](Value A, Value) { return tanh(A); }},
      {"erf", [](Value A, Value) { return erf(A); }},
      {"cos", [](Value A, Value) { return cos(A); }},
      {"log", [](Value A, Value) { return log(A); }},
      {"rsqrt", [](Value A, Value) { return rsqrt(A); }},
      {"sigmoid", [](Value A, Value) { return sigmoid(A); }},
      {"gelu_tanh", [](Value A, Value) { return geluTanh(A); }},
      {"exp2", [](Value A, Value) { return exp2(A); }},
      {"pow", [](Value A, Value Y) { return pow(A, Y); }}};
  return Ops;
}

/// An element-wise chain of Ops ops over two [B, 4096] inputs; every
/// SinEvery-th op is a sin (with Mixed, the next of the first ten
/// transcendentals; with Only, that one), the others alternate v * y and
/// v + y.
void buildChain(Graph &G, DType T, int Ops, int SinEvery, bool Mixed = false,
                const std::string &Only = "") {
  Value X = G.input("x", T, {"B", 4096});
  Value Y = G.input("y", T, {"B", 4096});
  Value V = X;
  // The op of every SinEvery-th place: Only's, or the next of the first ten
  // (Mixed), or sin.
  auto Named = llvm::find_if(transcendentals(), [&](const auto &Op) { return Op.first == Only; });
  int Next = 0;
  auto Special = [&](Value A) {
    if (Named != transcendentals().end())
      return Named->second(A, Y);
    return Mixed ? transcendentals()[Next++ % 10].second(A, Y) : sin(A);
  };
  for (int I = 1; I <= Ops; ++I) {
    if (I % SinEvery == 0)
      V = Special(V);
    else if (I % 2)
      V = V * Y;
    else
      V = V + Y;
  }
  G.output("out", V);
}

Graph workloadGraph(llvm::StringRef Id) {
  for (const Workload &W : allWorkloads())
    if (W.Id == Id)
      return buildWorkloadGraph(W);
  fail("no workload {}", Id.str());
}

struct Case {
  std::string Name, What;
  std::function<Graph()> Make;
};

/// A Case's graph from a builder of a Graph in place.
std::function<Graph()> built(std::function<void(Graph &)> Build) {
  return [Build] {
    Graph G;
    Build(G);
    return G;
  };
}

std::vector<Case> allCases(bool PerOp) {
  std::vector<Case> Cases = {
      {"add_rmsnorm", "C1: residual add + RMSNorm, bf16, H=4096",
       built([](Graph &G) { buildAddRmsNorm(G, DType::BF16, 4096); })},
      {"chain50_f32", "50 element-wise ops, 10 sin, f32 [B,4096]",
       built([](Graph &G) { buildChain(G, DType::F32, 50, 5); })},
      {"chain50_bf16", "50 element-wise ops, 10 sin, bf16 [B,4096]",
       built([](Graph &G) { buildChain(G, DType::BF16, 50, 5); })},
      {"chain50_mixed", "50 element-wise ops, 10 transcendentals (sin exp tanh erf cos log "
                        "rsqrt sigmoid gelu_tanh exp2), f32 [B,4096]",
       built([](Graph &G) { buildChain(G, DType::F32, 50, 5, true); })},
      {"chain500_f32", "500 element-wise ops, 100 sin, f32 [B,4096]",
       built([](Graph &G) { buildChain(G, DType::F32, 500, 5); })},
      // Issue 14's patterns (target: <= 200 ms cold on the H200 host).
      {"bias_grad", "W10's column sum", [] { return workloadGraph("W10"); }},
      {"group_norm", "W11, GroupNorm(32) + affine", [] { return workloadGraph("W11"); }},
      {"head_rmsnorm", "W12, per-head RMSNorm", [] { return workloadGraph("W12"); }},
      {"qk_norm_rope", "W13, QK-norm + RoPE", [] { return workloadGraph("W13"); }},
      {"permute_add", "W14, permute + add", [] { return workloadGraph("W14"); }},
      {"transpose_add", "W15, transpose + 1 (tiles)",
       [] { return workloadGraph("W15"); }},
  };
  if (PerOp)
    for (const auto &Op : transcendentals()) {
      std::string Name = Op.first;
      Cases.push_back({"chain50_" + Name, fmt::format("50 element-wise ops, 10 {}, f32", Name),
                       built([Name](Graph &G) { buildChain(G, DType::F32, 50, 5, false, Name); })});
    }
  return Cases;
}

/// NVRTC's `--time` file: a header "File name, phase name, metric, unit",
/// then one line per program and phase ("x, NVVM Optimizer, 301, ms").
/// Summed per phase over the programs.
std::map<std::string, double> parseTimeCsv(const std::string &Path) {
  std::ifstream In(Path);
  std::map<std::string, double> Sum;
  for (std::string Line; std::getline(In, Line);) {
    std::vector<std::string> Cells;
    std::stringstream S(Line);
    for (std::string C; std::getline(S, C, ',');)
      Cells.push_back(C.substr(C.find_first_not_of(' ') == std::string::npos
                                   ? C.size()
                                   : C.find_first_not_of(' ')));
    if (Cells.size() < 4 || Cells[3] != "ms")
      continue;
    Sum[Cells[1]] += std::strtod(Cells[2].c_str(), nullptr);
  }
  return Sum;
}

} // namespace

int main(int Argc, char **Argv) {
  CLI::App App{"jitfuse cold compile time per case and NVRTC phase (issue 12 item 7)"};
  std::vector<std::string> Names;
  int Reps = 3;
  bool Phases = true;
  bool DeferVariants = true;
  bool PerOp = false;
  App.add_option("--case", Names, "Cases to run (default all)");
  App.add_flag("--per-op", PerOp,
               "Also a 50-op f32 chain of each transcendental alone (chain50_<op>)");
  App.add_option("--reps", Reps, "Cold compiles per case (median)");
  App.add_flag("!--no-phases", Phases, "Skip the NVRTC --time breakdown");
  App.add_flag("!--no-defer", DeferVariants, "CompileOptions::DeferVariants = false");
  CLI11_PARSE(App, Argc, Argv);

  try {
    Settings Env = Settings::fromEnv();
    fmt::print("compile threads {}, NVRTC {}\n", Env.CompileThreads, rt::nvrtcVersionString());
    // Load NVRTC once, so the first case is not charged its start-up.
    (void)rt::compileCuda("extern \"C\" __global__ void k() {}", "warm",
                          rt::defaultNvrtcOptions(9, 0));
    for (const Case &C : allCases(PerOp)) {
      if (!Names.empty() && std::find(Names.begin(), Names.end(), C.Name) == Names.end())
        continue;
      Graph G = C.Make();
      std::vector<double> Wall, All;
      std::string Source;
      unsigned Kernels = 0, Deferred = 0;
      for (int R = 0; R < Reps; ++R) {
        rt::CacheConfig Cfg;
        Cfg.Enabled = false;
        Compiler Comp(Cfg);
        CompileOptions Opts;
        Opts.Arch = "sm_90";
        Opts.DeferVariants = DeferVariants;
        auto T0 = std::chrono::steady_clock::now();
        {
          Executable X = Comp.compile(G, Opts);
          Wall.push_back(msSince(T0));
          Source = X.source();
          Kernels = X.numKernels();
          Deferred = X.stats().DeferredVariants;
        } // waits for the deferred variants' background compile
        All.push_back(msSince(T0));
      }
      fmt::print("{:<14} {:<48} kernels {:>2}  cold compile() median {:>8.1f} ms, "
                 "{} deferred variants done at {:.1f} ms (of {})\n",
                 C.Name, C.What, Kernels, median(Wall), Deferred, median(All), Reps);
      if (!Phases)
        continue;
      // The whole program as one NVRTC program on one thread: where the
      // time goes, independent of the split.
      std::string Csv = fmt::format("/tmp/jitfuse-time-{}-{}.csv", ::getpid(), C.Name);
      std::remove(Csv.c_str());
      std::vector<std::string> O = rt::defaultNvrtcOptions(9, 0);
      O.push_back("--time=" + Csv);
      auto T0 = std::chrono::steady_clock::now();
      (void)rt::compileCuda(Source, C.Name, O);
      double Ms = msSince(T0);
      std::map<std::string, double> P = parseTimeCsv(Csv);
      std::remove(Csv.c_str());
      std::string Line;
      for (auto &[K, V] : P)
        Line += fmt::format("{} {:.1f}; ", K, V);
      fmt::print("{:<14} one program, one thread: {:.1f} ms; {}\n", "", Ms, Line);
    }
  } catch (const std::exception &E) {
    fmt::print(stderr, "jitfuse_compile_time: {}\n", E.what());
    return 1;
  }
  return 0;
}
