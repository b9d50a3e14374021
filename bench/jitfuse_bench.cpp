//===- bench/jitfuse_bench.cpp - the jitfuse performance benchmark --------===//
//
// Times the workloads of BENCHMARKS.md fused and unfused against a copy
// ceiling measured in the same run, after checking each against the fp64
// reference interpreter on small inputs, and measures JIT latency (C1/C2).
// Without a CUDA driver it still measures compile latency and compiles every
// selected workload, then says why the GPU part was skipped and exits 0.
//
//===----------------------------------------------------------------------===//
#include "BenchUtil.h"
#include "JitLatency.h"
#include "SweepSchedule.h"
#include "Workloads.h"

#include "driver/Compiler.h"
#include "exec/HostRun.h"
#include "compiler/Plan.h"
#include "exec/Roofline.h"
#include "reference/Interpreter.h"
#include "reference/Tolerance.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/Module.h"
#include "runtime/Nvrtc.h"
#include "support/Error.h"

#include <CLI/CLI.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

using namespace jitfuse;
using namespace jitfuse::bench;
// Object keys keep insertion order, so the file diffs cleanly run to run;
// NaN and infinities are written as null (JSON has no NaN).
using Json = nlohmann::ordered_json;

namespace {

struct Options {
  std::vector<std::string> Only;
  int Iters = 20;
  int Warmup = 5;
  int Calls = 1000;
  std::string JsonPath;
  std::string CompileOnlyDir;
  bool SkipJit = false;
  bool Ladder = false;
  bool NoHorizontal = false;
  std::optional<int64_t> HorizontalMaxBytes;
  /// NAME=VALUE: the timed size of every selected workload with dim NAME.
  std::vector<std::string> SetDims;
  /// Fusion-pass options turned off for same-binary comparisons (fused
  /// side only).
  bool NoFullReducePrologueOutputs = false, NoColumnReduceEpilogue = false;
  bool NoFullReduceEpilogue = false, NoRecomputeStoredValues = false;
  bool NoSiblingColumnReductions = false, NoColumnReducePrologueOutputs = false;
  /// Schedule options (bench/SweepSchedule.h, jitfuse_sweep's flags), for
  /// both sides.
  ScheduleFlags Schedule;
  uint64_t Seed = 20261129;
};

/// What every timed workload shares.
struct Context {
  Context(const Options &O, Compiler &C) : Opts(O), Jit(C) {}
  const Options &Opts;
  Compiler &Jit;
  PatternFiller Filler;
  rt::Stream *Stream = nullptr; // null without a GPU
  int64_t L2Bytes = 60 << 20;
  double CeilingGBs = 0;
  /// Per workload id: the fused executable's formatRoofline text, printed
  /// after the table.
  std::vector<std::pair<std::string, std::string>> FusedRoofline;
};

constexpr double kReferenceStreamGBs = 4434, kReferenceCopyGBs = 4241;

bool selected(const Workload &W, const Options &O) {
  if (O.Only.empty())
    return true;
  return std::any_of(O.Only.begin(), O.Only.end(), [&](const std::string &S) {
    return llvm::StringRef(S).equals_insensitive(W.Group) ||
           llvm::StringRef(S).equals_insensitive(W.Id);
  });
}

std::string selfExe() {
  std::error_code EC;
  auto P = std::filesystem::read_symlink("/proc/self/exe", EC);
  return EC ? std::string("jitfuse_bench") : P.string();
}

/// Median, min, max, bandwidth and every sample of Us, added to J.
void addStats(Json &J, const std::vector<double> &Us, int64_t Bytes, double CeilingGBs) {
  double Med = median(Us);
  J["median_us"] = Med;
  J["min_us"] = *std::min_element(Us.begin(), Us.end());
  J["max_us"] = *std::max_element(Us.begin(), Us.end());
  double GBs = Bytes / (Med * 1e3);
  J["gbs"] = GBs;
  J["pct_of_copy_ceiling"] = CeilingGBs > 0 ? 100 * GBs / CeilingGBs : NAN;
  J["samples_us"] = Us;
}

/// One object per kernel: name, level, predicted bytes, and the median time,
/// GB/s and % of the copy ceiling (null when not timed).
Json rooflineJson(llvm::ArrayRef<KernelRoofline> Rows) {
  Json A = Json::array();
  for (const KernelRoofline &R : Rows) {
    Json K = Json::object();
    K["name"] = R.Name;
    K["level"] = clusterLevel(R.Kind).str();
    K["bytes"] = R.Bytes;
    bool Timed = R.MedianUs > 0;
    K["median_us"] = Timed ? Json(R.MedianUs) : Json();
    K["gbs"] = Timed ? Json(R.GBs) : Json();
    K["pct_ceiling"] = R.PctCeiling > 0 ? Json(R.PctCeiling) : Json();
    A.push_back(std::move(K));
  }
  return A;
}

/// "" when both executables match the reference on small random inputs,
/// else the first mismatch.
std::string checkAgainstReference(const Graph &G, const Workload &W,
                                  Executable &Fused, Executable &Unfused, uint64_t Seed) {
  std::mt19937_64 Rng(Seed);
  Bindings B;
  B.Dims = W.CheckDims;
  B.Scalars = W.Scalars;
  for (NodeId Id : G.inputs()) {
    const Node &N = G.node(Id);
    B.Inputs[N.Name] = randomTensor(N.Type, resolveShape(N.Dims, B.Dims), Rng);
  }
  foldStridedInputs(G, B);
  std::map<std::string, HostTensor> Ref = interpret(G, B);
  for (auto [X, Mode] : {std::pair{&Fused, "fused"}, std::pair{&Unfused, "unfused"}}) {
    // Per-call workloads are also timed as CUDA graph replays: check those.
    for (bool Graph : {false, true}) {
      if (Graph && !W.PerCall)
        continue;
      X->setCudaGraph(Graph);
      std::map<std::string, HostTensor> Got = runOnDevice(*X, B);
      X->setCudaGraph(false);
      for (const GraphOutput &O : G.outputs()) {
        DType T = G.node(O.Id).Type;
        double Tol = toleranceFor(T, maxReductionLength(G, O.Id, B.Dims));
        CompareResult R = compareTensors(
            Got.at(O.Name), Ref.at(O.Name), Tol,
            fmt::format("{}{} output '{}'", Mode, Graph ? " (CUDA graph)" : "", O.Name));
        if (!R.Ok)
          return fmt::format("{} (check seed {})", R.Message, Seed);
      }
    }
  }
  return "";
}

/// The driver's own cost of the per-call loop: an empty kernel with \p Params
/// 8-byte parameters launched straight through cuLaunchKernel (one block of
/// 32 threads), timed like the workload. What run() adds is its time minus
/// this one; a host-time target below it cannot be met by direct launches.
Json measureLaunchFloor(Context &Ctx, unsigned Params) {
  std::string Src = "extern \"C\" __global__ void jf_floor(";
  for (unsigned I = 0; I < Params; ++I)
    Src += fmt::format("{}unsigned long long p{}", I ? ", " : "", I);
  Src += ") {}\n";
  rt::DeviceInfo Info = rt::queryDevice(0);
  rt::CompiledProgram Prog =
      rt::compileCuda(Src, "jf_floor", rt::defaultNvrtcOptions(Info.SmMajor, Info.SmMinor));
  rt::Module M(Prog.Cubin, {"jf_floor"});
  CUfunction F = M.function("jf_floor");
  std::vector<unsigned long long> Values(Params, 0);
  std::vector<void *> Args;
  for (unsigned long long &V : Values)
    Args.push_back(&V);
  CUstream S = Ctx.Stream->get();
  PerCallTime T = timeBackToBack(
      [&] { rt::launchKernel(F, {1, 1, 1}, {32, 1, 1}, 0, S, Args.data()); }, Ctx.Opts.Calls, 5,
      S);
  Ctx.Stream->synchronize();
  Json J = Json::object();
  J["params"] = Params;
  J["per_call_gpu_us"] = T.GpuUs;
  J["host_enqueue_us"] = T.HostUs;
  return J;
}

/// Times the whole graph fused and unfused, then (except per-call workloads)
/// each kernel; FusedRows gets the fused executable's timed roofline. A
/// failed per-kernel profile keeps the whole-graph numbers, leaves the
/// predicted rows, records the error and sets Failed.
void timeWorkload(Context &Ctx, const Workload &W, Executable &Fused, Executable &Unfused,
                  Json &J, std::vector<KernelRoofline> &FusedRows, bool &Failed) {
  RunArgs FA = runArgsFor(Fused, W.Dims, W.Scalars);
  RunArgs UA = runArgsFor(Unfused, W.Dims, W.Scalars);
  // Both modes share the buffers, laid out in the fused executable's order.
  auto Names = [](llvm::ArrayRef<TensorDesc> Ts) {
    std::vector<std::string> N;
    for (const TensorDesc &T : Ts)
      N.push_back(T.Name);
    return N;
  };
  if (Names(Fused.inputs()) != Names(Unfused.inputs()) ||
      Names(Fused.outputs()) != Names(Unfused.outputs()))
    fail("bench: fused and unfused executables of {} order their tensors differently", W.Id);
  // Rotate over enough copies that one pass touches ~4x L2, so no run finds
  // its inputs cached by the previous one. W8 and W9 deliberately run hot.
  int64_t Copies = W.PerCall ? 1
                             : std::clamp<int64_t>((4 * Ctx.L2Bytes + FA.MinBytes - 1) /
                                                       FA.MinBytes,
                                                   1, 64);
  J["copies"] = Copies;
  std::vector<DeviceSet> Sets;
  for (int64_t K = 0; K < Copies; ++K)
    Sets.push_back(allocateSet(Fused, W.Dims, Ctx.Filler, 17 * K + 1));
  CUstream S = Ctx.Stream->get();
  auto Launch = [&](Executable &X, const RunArgs &A, int I) {
    const DeviceSet &D = Sets[I % Copies];
    X.run(D.In, D.Out, A.Scalars, A.Dims, S);
  };
  for (auto [X, A, Key] : {std::tuple{&Fused, &FA, "fused"}, std::tuple{&Unfused, &UA, "unfused"}}) {
    Json &K = J[Key];
    if (W.PerCall) {
      PerCallTime T = timeBackToBack([&] { Launch(*X, *A, 0); }, Ctx.Opts.Calls, 5, S);
      K["per_call_gpu_us"] = T.GpuUs;
      K["host_enqueue_us"] = T.HostUs;
      K["calls"] = Ctx.Opts.Calls;
      // The same calls as replays of one CUDA graph (Executable::setCudaGraph).
      X->setCudaGraph(true);
      PerCallTime TG = timeBackToBack([&] { Launch(*X, *A, 0); }, Ctx.Opts.Calls, 5, S);
      X->setCudaGraph(false);
      Json &KG = K["graph"];
      KG = Json::object();
      KG["per_call_gpu_us"] = TG.GpuUs;
      KG["host_enqueue_us"] = TG.HostUs;
      if (X == &Fused && X->numLaunches() == 1) {
        Json Floor = measureLaunchFloor(Ctx, X->inputs().size() + X->outputs().size() +
                                                 A->Scalars.size() + A->Dims.size());
        fmt::print("  {} fused: run() {:.2f} us host / {:.2f} us GPU per call; an empty kernel "
                   "through cuLaunchKernel {:.2f} / {:.2f} us (the driver's floor)\n",
                   W.Id, T.HostUs, T.GpuUs, Floor["host_enqueue_us"].get<double>(),
                   Floor["per_call_gpu_us"].get<double>());
        J["launch_floor"] = std::move(Floor);
      }
      continue;
    }
    std::vector<double> Us = timeEach([&](int I) { Launch(*X, *A, I); }, Ctx.Opts.Warmup,
                                      Ctx.Opts.Iters, S);
    addStats(K, Us, FA.MinBytes, Ctx.CeilingGBs);
    // Per-kernel roofline: each kernel between CUDA events, median of Iters
    // runs after one untimed run (Executable::profileKernels). These runs use
    // the first buffer set only, not rotated; every workload's row-sized
    // tensors are larger than L2 (on the H200 Copies is 1 above as well), so
    // only small broadcast operands (norm weights, the mask, RoPE's cos/sin)
    // fit in it, as in the whole-graph runs.
    try {
      const DeviceSet &D = Sets[0];
      std::vector<double> KernelUs =
          X->profileKernels(D.In, D.Out, A->Scalars, A->Dims, S, Ctx.Opts.Iters);
      std::vector<KernelRoofline> Rows = kernelRoofline(*X, A->Dims, KernelUs, Ctx.CeilingGBs);
      K["kernels_roofline"] = rooflineJson(Rows);
      if (X == &Fused)
        FusedRows = std::move(Rows);
    } catch (const std::exception &E) {
      fmt::print("jitfuse_bench: {} {}: per-kernel profile failed: {}\n", W.Id, Key, E.what());
      K["kernels_roofline_error"] = std::string(E.what());
      Failed = true;
    }
  }
  Ctx.Stream->synchronize();
}

Json runWorkload(Context &Ctx, const Workload &W, bool &Failed) {
  Json J = Json::object();
  J["id"] = W.Id;
  J["group"] = W.Group;
  J["desc"] = W.Desc;
  Json Dims = Json::object();
  for (auto &[K, V] : W.Dims)
    Dims[K] = V;
  J["dims"] = std::move(Dims);
  J["per_call"] = W.PerCall;
  J["fused"] = Json::object();
  J["unfused"] = Json::object();
  try {
    Graph G = buildWorkloadGraph(W);
    // Both sides take the schedule flags; the fusion pass's only the fused.
    CompileOptions FO = scheduleCompileOptions(Ctx.Opts.Schedule), UO = FO;
    UO.Fuse = false;
    FO.FastMath = UO.FastMath = W.FastMath;
    FO.PeelAlignment = UO.PeelAlignment = !Ctx.Opts.Ladder;
    FO.HorizontalFusion = !Ctx.Opts.NoHorizontal;
    FO.HorizontalMaxBytes = Ctx.Opts.HorizontalMaxBytes;
    FO.FullReducePrologueOutputs = !Ctx.Opts.NoFullReducePrologueOutputs;
    FO.ColumnReduceEpilogue = !Ctx.Opts.NoColumnReduceEpilogue;
    FO.FullReduceEpilogue = !Ctx.Opts.NoFullReduceEpilogue;
    FO.RecomputeStoredValues = !Ctx.Opts.NoRecomputeStoredValues;
    FO.SiblingColumnReductions = !Ctx.Opts.NoSiblingColumnReductions;
    FO.ColumnReducePrologueOutputs = !Ctx.Opts.NoColumnReducePrologueOutputs;
    Executable Fused = Ctx.Jit.compile(G, FO);
    Executable Unfused = Ctx.Jit.compile(G, UO);
    J["fused"]["kernels"] = Fused.numKernels();
    J["unfused"]["kernels"] = Unfused.numKernels();
    J["fused"]["launches"] = Fused.numLaunches();
    RunArgs FA = runArgsFor(Fused, W.Dims, W.Scalars);
    J["min_bytes"] = FA.MinBytes;
    // The compiler's own traffic model, summed over kernels: equal to
    // min_bytes for a perfect fusion, larger for unfused intermediates.
    for (auto [X, Key] : {std::pair{&Fused, "fused"}, std::pair{&Unfused, "unfused"}}) {
      std::vector<int64_t> KB = X->kernelBytes(runArgsFor(*X, W.Dims, W.Scalars).Dims);
      J[Key]["predicted_bytes"] = std::accumulate(KB.begin(), KB.end(), int64_t(0));
    }
    // Per-kernel roofline rows, predicted bytes only until timeWorkload
    // replaces them with timed ones: the JSON has the same keys with or
    // without a GPU. Per-call workloads (W8, W9) have none.
    std::vector<KernelRoofline> FusedRows;
    auto NoteRoofline = [&] {
      if (!W.PerCall)
        Ctx.FusedRoofline.emplace_back(W.Id, formatRoofline(FusedRows, Ctx.CeilingGBs));
    };
    if (!W.PerCall)
      for (auto [X, Key] : {std::pair{&Fused, "fused"}, std::pair{&Unfused, "unfused"}}) {
        std::vector<KernelRoofline> Rows =
            kernelRoofline(*X, runArgsFor(*X, W.Dims, W.Scalars).Dims);
        J[Key]["kernels_roofline"] = rooflineJson(Rows);
        if (X == &Fused)
          FusedRows = std::move(Rows);
      }
    if (!Ctx.Stream) {
      J["status"] = "compiled only (no GPU)";
      NoteRoofline();
      return J;
    }
    std::string Bad = checkAgainstReference(G, W, Fused, Unfused, Ctx.Opts.Seed);
    if (!Bad.empty()) {
      fmt::print("jitfuse_bench: {} gives WRONG results, not timed: {}\n", W.Id, Bad);
      J["status"] = "mismatch";
      J["error"] = Bad;
      Failed = true;
      NoteRoofline();
      return J;
    }
    timeWorkload(Ctx, W, Fused, Unfused, J, FusedRows, Failed);
    J["status"] = "ok";
    NoteRoofline();
  } catch (const std::exception &E) {
    fmt::print("jitfuse_bench: {} failed: {}\n", W.Id, E.what());
    J["status"] = "error";
    J["error"] = std::string(E.what());
    Failed = true;
  }
  return J;
}

/// The copy ceiling: cuMemcpyDtoD and a jitfuse copy graph (out = x * s,
/// s = 1 at run time), f32 2^28; the larger is the ceiling.
Json measureCeiling(Context &Ctx) {
  constexpr int64_t N = int64_t(1) << 28;
  constexpr int64_t Bytes = 2 * N * 4;
  Json J = Json::object();
  rt::DeviceBuffer Src(N * 4), Dst(N * 4);
  Ctx.Filler.fill(Src.ptr(), DType::F32, N, 99);
  rt::Driver &D = rt::Driver::get();
  // cuMemcpyDtoD runs on the legacy default stream; time it there.
  std::vector<double> Memcpy = timeEach(
      [&](int) { D.check(D.api().cuMemcpyDtoD(Dst.ptr(), Src.ptr(), N * 4), "cuMemcpyDtoD"); },
      Ctx.Opts.Warmup, Ctx.Opts.Iters, nullptr);
  Graph G;
  Value X = G.input("x", DType::F32, {"N"});
  G.output("y", X * G.scalar("s", DType::F32));
  Executable Copy = Ctx.Jit.compile(G);
  CUdeviceptr In[] = {Src.ptr()}, Out[] = {Dst.ptr()};
  double Scalars[] = {1.0};
  int64_t Dims[] = {N};
  std::vector<double> Jf = timeEach(
      [&](int) { Copy.run(In, Out, Scalars, Dims, Ctx.Stream->get()); }, Ctx.Opts.Warmup,
      Ctx.Opts.Iters, Ctx.Stream->get());
  double MemcpyGBs = Bytes / (median(Memcpy) * 1e3), JfGBs = Bytes / (median(Jf) * 1e3);
  J["bytes"] = Bytes;
  J["memcpy_dtod_median_us"] = median(Memcpy);
  J["memcpy_dtod_gbs"] = MemcpyGBs;
  J["jitfuse_copy_median_us"] = median(Jf);
  J["jitfuse_copy_gbs"] = JfGBs;
  J["ceiling_gbs"] = std::max(MemcpyGBs, JfGBs);
  J["reference_stream_kernel_gbs"] = kReferenceStreamGBs;
  J["reference_copy_gbs"] = kReferenceCopyGBs;
  Ctx.CeilingGBs = std::max(MemcpyGBs, JfGBs);
  fmt::print("Copy ceiling (f32 2^28, read+write {:.2f} GB): cuMemcpyDtoD {:.0f} GB/s, "
             "jitfuse copy graph {:.0f} GB/s -> ceiling {:.0f} GB/s (reference: copy {:.0f}, "
             "stream {:.0f})\n",
             Bytes / 1e9, MemcpyGBs, JfGBs, Ctx.CeilingGBs, kReferenceCopyGBs,
             kReferenceStreamGBs);
  return J;
}

/// The number J[Key], or NaN when it is missing, null or not a number.
double number(const Json &J, const char *Key) {
  auto It = J.find(Key);
  return It != J.end() && It->is_number() ? It->get<double>() : NAN;
}

std::string num(const Json &J, const char *Key, const char *Fmt = "{:.1f}") {
  double V = number(J, Key);
  return std::isnan(V) ? "-" : fmt::format(fmt::runtime(Fmt), V);
}

/// GPU time per call of the CUDA graph replays of a per-call mode.
std::string graphNum(const Json &Mode) {
  auto G = Mode.find("graph");
  return G != Mode.end() ? num(*G, "per_call_gpu_us", "{:.2f}") : "-";
}

void printTable(const Json &Rows) {
  fmt::print("\n{:<16} {:>10} {:>8} {:>6} {:>4} | {:>11} {:>8} {:>4} | {:>7}  {}\n", "workload",
             "fused us", "GB/s", "%copy", "kern", "unfused us", "GB/s", "kern", "speedup",
             "status");
  for (const Json &R : Rows) {
    const Json &F = R.at("fused"), &U = R.at("unfused");
    std::string Status = R.value("status", "-");
    std::string Id = R.at("id").get<std::string>();
    if (R.value("per_call", false)) {
      fmt::print("{:<16} {:>10} {:>8} {:>6} {:>4} | {:>11} {:>8} {:>4} | {:>7}  {} (per call, "
                 "host enqueue fused {} us / unfused {} us; CUDA graph replay fused {} us / "
                 "unfused {} us)\n",
                 Id, num(F, "per_call_gpu_us", "{:.2f}"), "", "",
                 num(F, "kernels", "{:.0f}"), num(U, "per_call_gpu_us", "{:.2f}"), "",
                 num(U, "kernels", "{:.0f}"), "", Status, num(F, "host_enqueue_us", "{:.2f}"),
                 num(U, "host_enqueue_us", "{:.2f}"), graphNum(F), graphNum(U));
      continue;
    }
    double Speedup = number(U, "median_us") / number(F, "median_us");
    fmt::print("{:<16} {:>10} {:>8} {:>6} {:>4} | {:>11} {:>8} {:>4} | {:>7}  {}\n",
               Id, num(F, "median_us"), num(F, "gbs", "{:.0f}"),
               num(F, "pct_of_copy_ceiling"), num(F, "kernels", "{:.0f}"),
               num(U, "median_us"), num(U, "gbs", "{:.0f}"), num(U, "kernels", "{:.0f}"),
               std::isnan(Speedup) ? "-" : fmt::format("{:.2f}x", Speedup), Status);
  }
}

Json metaJson(const Options &O, int Argc, char **Argv) {
  Json M = Json::object();
  M["tool"] = "jitfuse_bench";
  M["time_utc"] = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  std::string Cmd;
  for (int I = 0; I < Argc; ++I)
    Cmd += (I ? " " : "") + std::string(Argv[I]);
  M["command"] = Cmd;
  M["iters"] = O.Iters;
  M["warmup"] = O.Warmup;
  M["w8_calls"] = O.Calls;
  M["check_seed"] = O.Seed;
  M["bytes_formula"] = "each graph input read once + each graph output written once";
  M["json_writer"] = fmt::format("nlohmann::ordered_json {}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR,
                                 NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH);
  return M;
}

Compiler makeCompiler() {
  try {
    return Compiler(rt::CacheConfig::fromEnv());
  } catch (const Error &E) {
    fmt::print("jitfuse_bench: {}; using the default cache\n", E.what());
    return Compiler(rt::CacheConfig{});
  }
}

} // namespace

int main(int Argc, char **Argv) {
  Options O;
  CLI::App App{"jitfuse benchmark: workloads W1-W22 fused/unfused vs the copy ceiling, "
               "and JIT latency C1/C2 (see BENCHMARKS.md)"};
  App.add_option("--only", O.Only, "Workload groups or ids to run (W1..W22, W3-bf16-H4096)")
      ->delimiter(',');
  App.add_option("--iters", O.Iters, "Timed runs per workload and mode")->check(CLI::Range(1, 100000));
  App.add_option("--warmup", O.Warmup, "Untimed runs first")->check(CLI::Range(0, 100000));
  App.add_option("--calls", O.Calls, "W8, W9: back-to-back calls per repetition")
      ->check(CLI::Range(1, 1000000));
  App.add_option("--json", O.JsonPath, "Write every number to this JSON file");
  App.add_option("--seed", O.Seed, "Seed of the correctness-check inputs");
  App.add_flag("--skip-jit", O.SkipJit, "Skip the JIT latency measurements (C1/C2)");
  App.add_flag("--ladder", O.Ladder,
               "Compile the ladder of vector variants (CompileOptions::PeelAlignment off) for a "
               "same-run comparison with the peeled kernels");
  App.add_flag("--no-horizontal", O.NoHorizontal,
               "Give every fused kernel its own launch (CompileOptions::HorizontalFusion off) "
               "for a same-run comparison with horizontal launches");
  App.add_option("--horizontal-max-bytes", O.HorizontalMaxBytes,
                 "CompileOptions::HorizontalMaxBytes: a horizontal launch runs its kernels "
                 "one by one above these bytes (-1: never), for a same-run comparison")
      ->check(CLI::Range(int64_t(-1), INT64_MAX));
  App.add_option("--dims", O.SetDims,
                 "NAME=VALUE: time the selected workloads with dynamic dim NAME at VALUE "
                 "(e.g. --only W9L --dims T=256)")
      ->delimiter(',');
  App.add_flag("--no-full-reduce-prologue-outputs", O.NoFullReducePrologueOutputs,
               "CompileOptions::FullReducePrologueOutputs = false, fused, for a same-binary "
               "comparison");
  App.add_flag("--no-column-reduce-epilogue", O.NoColumnReduceEpilogue,
               "CompileOptions::ColumnReduceEpilogue = false, fused, for a same-binary "
               "comparison");
  App.add_flag("--no-full-reduce-epilogue", O.NoFullReduceEpilogue,
               "CompileOptions::FullReduceEpilogue = false, fused, for a same-binary "
               "comparison");
  App.add_flag("--no-recompute-stored-values", O.NoRecomputeStoredValues,
               "CompileOptions::RecomputeStoredValues = false, fused, for a same-binary "
               "comparison");
  App.add_flag("--no-sibling-column-reductions", O.NoSiblingColumnReductions,
               "CompileOptions::SiblingColumnReductions = false, fused, for a same-binary "
               "comparison");
  App.add_flag("--no-column-prologue-outputs", O.NoColumnReducePrologueOutputs,
               "CompileOptions::ColumnReducePrologueOutputs = false, fused, for a "
               "same-binary comparison");
  // jitfuse_sweep's schedule flags (bench/SweepSchedule.h), both sides.
  addScheduleFlags(App, O.Schedule);
  App.add_option("--compile-only", O.CompileOnlyDir,
                 "Internal (C2): compile the add+RMSNorm graph with this cache dir, print the "
                 "time, exit");
  CLI11_PARSE(App, Argc, Argv);
  if (!O.CompileOnlyDir.empty())
    return runCompileOnlyChild(O.CompileOnlyDir);

  bool Failed = false;
  try {
    Json Root = Json::object();
    Root["meta"] = metaJson(O, Argc, Argv);
    // First: "first NVRTC use in the process" is only true before anything
    // else compiles.
    if (!O.SkipJit)
      Root["jit_latency"] = measureJitLatency(selfExe());

    Compiler Jit = makeCompiler();
    Context Ctx(O, Jit);
    rt::Driver &D = rt::Driver::get();
    std::optional<rt::Stream> Stream;
    Json Dev = Json::object();
    if (!D.available()) {
      fmt::print("jitfuse_bench: no CUDA driver ({}); GPU timing skipped, workloads are only "
                 "compiled\n",
                 D.unavailableReason());
      Dev["available"] = false;
      Dev["reason"] = D.unavailableReason();
    } else {
      rt::primaryContext(0);
      rt::DeviceInfo Info = rt::queryDevice(0);
      Dev["available"] = true;
      Dev["name"] = Info.Name;
      Dev["arch"] = Info.archName();
      Dev["sm_count"] = Info.SmCount;
      Dev["l2_bytes"] = Info.L2CacheBytes;
      Dev["total_mem_bytes"] = static_cast<uint64_t>(Info.TotalMemBytes);
      Dev["driver_version"] = D.version();
      fmt::print("Device: {} ({}, {} SMs, L2 {} MiB), driver {}\n", Info.Name, Info.archName(),
                 Info.SmCount, Info.L2CacheBytes >> 20, D.version());
      if (Info.L2CacheBytes > 0)
        Ctx.L2Bytes = Info.L2CacheBytes;
      Stream.emplace();
      Ctx.Stream = &*Stream;
      Root["ceiling"] = measureCeiling(Ctx);
    }
    Root["device"] = std::move(Dev);

    Json Rows = Json::array();
    for (Workload W : allWorkloads()) {
      if (!selected(W, O))
        continue;
      for (const std::string &S : O.SetDims) {
        size_t Eq = S.find('=');
        int64_t V = 0;
        if (Eq == std::string::npos || Eq == 0 ||
            llvm::StringRef(S).drop_front(Eq + 1).getAsInteger(10, V) || V < 0)
          fail("--dims {}: expected NAME=VALUE with VALUE >= 0", S);
        auto It = W.Dims.find(S.substr(0, Eq));
        if (It == W.Dims.end())
          fail("--dims {}: workload {} has no dynamic dim '{}'", S, W.Id,
               S.substr(0, Eq));
        It->second = V;
      }
      fmt::print("{}: {} ...\n", W.Id, W.Desc);
      std::fflush(stdout);
      Rows.push_back(runWorkload(Ctx, W, Failed));
    }
    if (Rows.empty() && !O.Only.empty()) {
      fmt::print(stderr, "jitfuse_bench: --only {} matched no workload; expected W1..W22 or an "
                 "id like W3-bf16-H4096\n", fmt::join(O.Only, ","));
      Failed = true;
    }
    if (!Rows.empty())
      printTable(Rows);
    if (!Ctx.FusedRoofline.empty()) {
      fmt::print("\nPer-kernel roofline, jitfuse fused ({}):\n",
                 Ctx.Stream ? fmt::format("Executable::profileKernels, median of {} runs, "
                                          "inputs not rotated",
                                          O.Iters)
                            : std::string("predicted bytes only, no GPU"));
      for (auto &[Id, Text] : Ctx.FusedRoofline)
        fmt::print("{} {}", Id, Text);
    }
    Root["workloads"] = std::move(Rows);
    if (!O.JsonPath.empty()) {
      std::ofstream F(O.JsonPath);
      // Invalid UTF-8 (say, in a compiler log quoted in an error) becomes
      // U+FFFD rather than an exception.
      F << Root.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
      if (!F)
        fail("cannot write the JSON file '{}'", O.JsonPath);
      fmt::print("wrote {}\n", O.JsonPath);
    }
  } catch (const std::exception &E) {
    fmt::print(stderr, "jitfuse_bench: {}\n", E.what());
    return 1;
  }
  return Failed ? 1 : 0;
}
