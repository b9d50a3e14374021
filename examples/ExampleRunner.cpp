//===- examples/ExampleRunner.cpp - compile, run and check an example -----===//
#include "examples/ExampleRunner.h"

#include "driver/Compiler.h"
#include "exec/HostRun.h"
#include "exec/Roofline.h"
#include "reference/Interpreter.h"
#include "ir/Printer.h"
#include "reference/Tolerance.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <random>

namespace jitfuse::examples {

namespace {

uint64_t chooseSeed(const RunOptions &Opts) {
  if (Opts.Seed)
    return *Opts.Seed;
  if (const char *Env = std::getenv("JITFUSE_EXAMPLE_SEED"))
    return std::strtoull(Env, nullptr, 10);
  return 1;
}

std::string humanBytes(int64_t B) {
  if (B >= (int64_t(1) << 20))
    return fmt::format("{:.2f} MiB", B / double(1 << 20));
  if (B >= 1024)
    return fmt::format("{:.1f} KiB", B / 1024.0);
  return fmt::format("{} B", B);
}

std::string dimsText(const std::map<std::string, int64_t> &Dims) {
  std::string S;
  for (const auto &[Name, Size] : Dims)
    S += fmt::format("{}{}={}", S.empty() ? "" : ", ", Name, Size);
  return S.empty() ? "static shapes" : S;
}

std::vector<int64_t> dimsInOrder(const Executable &X,
                                 const std::map<std::string, int64_t> &Dims) {
  std::vector<int64_t> Out;
  for (const std::string &D : X.dynamicDims()) {
    auto It = Dims.find(D);
    if (It == Dims.end())
      fail("example binds no size for dynamic dim '{}'", D);
    Out.push_back(It->second);
  }
  return Out;
}

int64_t totalBytes(const Executable &X, llvm::ArrayRef<int64_t> Dims) {
  int64_t Sum = 0;
  for (int64_t B : X.kernelBytes(Dims))
    Sum += B;
  return Sum;
}

/// How many of the example's "should share a kernel" groups the plan keeps
/// together. Informational: the example still runs when fusion is weaker.
unsigned groupsMet(const ExampleGraph &E, const Executable &X) {
  const std::vector<int> &ClusterOf = X.partition().ClusterOf;
  unsigned Met = 0;
  for (const std::vector<NodeId> &Group : E.SameKernel) {
    bool Same = llvm::all_of(Group, [&](NodeId N) {
      return ClusterOf[N] >= 0 && ClusterOf[N] == ClusterOf[Group.front()];
    });
    Met += Same;
  }
  return Met;
}

void printCompile(llvm::StringRef Mode, const Executable &X) {
  const CompileStats &S = X.stats();
  std::string Launches =
      X.numLaunches() == X.numKernels()
          ? std::string()
          : fmt::format(" in {} launch{}", X.numLaunches(), X.numLaunches() == 1 ? "" : "es");
  fmt::print("{:<8} {:>3} kernel{}{} compiled in {:8.1f} ms ({})\n", Mode.str(),
             X.numKernels(), X.numKernels() == 1 ? " " : "s", Launches, S.CompileMs,
             S.CacheHit ? "cache hit" : "cache miss, NVRTC");
}

/// Largest |got - ref| over elements where both are finite; infinity when a
/// non-finite value appears on one side only.
double maxAbsError(const HostTensor &Got, const HostTensor &Ref) {
  double Max = 0;
  for (size_t I = 0; I < Got.Data.size() && I < Ref.Data.size(); ++I) {
    double G = Got.Data[I], R = Ref.Data[I];
    if (std::isnan(G) && std::isnan(R))
      continue;
    if (!std::isfinite(G) || !std::isfinite(R)) {
      if (G != R)
        Max = INFINITY;
      continue;
    }
    Max = std::max(Max, std::fabs(G - R));
  }
  return Max;
}

/// Runs X on B and compares every output with Ref; returns the mismatches.
unsigned runAndCompare(const ExampleGraph &E, Executable &X, const Bindings &B,
                       const std::map<std::string, HostTensor> &Ref,
                       llvm::StringRef Mode, std::vector<double> *KernelUs) {
  HostRunOptions HO;
  if (KernelUs) {
    HO.ProfileReps = 20;
    HO.KernelMedianUs = KernelUs;
  }
  std::map<std::string, HostTensor> Got = runOnDevice(X, B, HO);
  const Graph &G = *E.G;
  unsigned Failures = 0;
  for (const GraphOutput &O : G.outputs()) {
    const Node &N = G.node(O.Id);
    double Rtol = toleranceFor(N.Type, maxReductionLength(G, O.Id, B.Dims));
    const HostTensor &GotT = Got.at(O.Name);
    const HostTensor &RefT = Ref.at(O.Name);
    CompareResult R = compareTensors(GotT, RefT, Rtol,
                                     fmt::format("{} output '{}'", Mode.str(), O.Name));
    fmt::print("{:<8} {:<14} {:<16} max|err| {:9.3e}  rtol {:8.2e}  {}\n",
               Mode.str(), O.Name,
               dtypeName(N.Type).str() + shapeStr(N.Dims), maxAbsError(GotT, RefT),
               Rtol, R.Ok ? "PASS" : "FAIL");
    if (!R.Ok) {
      fmt::print("         {}\n", R.Message);
      ++Failures;
    }
  }
  return Failures;
}

Bindings randomBindings(const ExampleGraph &E, uint64_t Seed) {
  std::mt19937_64 Rng(Seed);
  Bindings B;
  B.Dims = E.Dims;
  B.Scalars = E.Scalars;
  const Graph &G = *E.G;
  for (NodeId Id : G.inputs()) {
    const Node &N = G.node(Id);
    B.Inputs[N.Name] = randomTensor(N.Type, resolveShape(N.Dims, E.Dims), Rng);
  }
  return B;
}

} // namespace

int runExample(const ExampleGraph &E, const RunOptions &Opts) {
  const Graph &G = *E.G;
  fmt::print("== {}: {}\n", E.Name, E.Description);
  if (Opts.PrintGraph)
    fmt::print("\n-- graph\n{}", printGraph(G));

  Compiler C;
  CompileOptions Fused;
  Fused.MixOrderColumns = Opts.MixOrderColumns;
  Executable XF = C.compile(G, Fused);
  if (Opts.PrintPlan)
    fmt::print("\n-- fused plan\n{}", XF.plan());
  CompileOptions Unfused;
  Unfused.Fuse = false;
  Executable XU = C.compile(G, Unfused);

  fmt::print("\n-- compile\n");
  const rt::KernelCache &Cache = C.cache();
  fmt::print("cache dir: {}{}\n", Cache.dir().empty() ? "(none)" : Cache.dir(),
             Cache.diskEnabled() ? "" : " (disk cache off: memory only)");
  printCompile("fused", XF);
  printCompile("unfused", XU);
  std::vector<int64_t> Dims = dimsInOrder(XF, E.Dims);
  int64_t BytesF = totalBytes(XF, Dims), BytesU = totalBytes(XU, Dims);
  fmt::print("traffic for {}: fused {} vs unfused {} ({:.2f}x less)\n",
             dimsText(E.Dims), humanBytes(BytesF), humanBytes(BytesU),
             BytesF ? double(BytesU) / double(BytesF) : 0.0);
  if (!E.SameKernel.empty())
    fmt::print("fusion groups kept in one kernel: {}/{}\n", groupsMet(E, XF),
               E.SameKernel.size());

  if (!XF.canRun()) {
    const std::string &Why = rt::Driver::get().unavailableReason();
    fmt::print("\nno CUDA driver: {}; showing the plan only\n",
               Why.empty() ? "no CUDA device" : Why);
    return 0;
  }

  uint64_t Seed = chooseSeed(Opts);
  fmt::print("\n-- run on {} ({}; seed {}, JITFUSE_EXAMPLE_SEED to change)\n",
             rt::queryDevice(0).Name, dimsText(E.Dims), Seed);
  Bindings B = randomBindings(E, Seed);
  std::map<std::string, HostTensor> Ref = interpret(G, B);
  std::vector<double> UsF, UsU;
  unsigned Failures = runAndCompare(E, XF, B, Ref, "fused", Opts.Profile ? &UsF : nullptr) +
                      runAndCompare(E, XU, B, Ref, "unfused", Opts.Profile ? &UsU : nullptr);
  if (Failures) {
    fmt::print("{}: {} output comparison{} FAILED\n", E.Name, Failures,
               Failures == 1 ? "" : "s");
    return 1;
  }
  fmt::print("{}: all outputs match the reference\n", E.Name);
  if (Opts.Profile) {
    fmt::print("\n-- profile ({}; median of 20 runs per kernel, inputs not rotated)\n",
               dimsText(E.Dims));
    fmt::print("fused {}", formatRoofline(kernelRoofline(XF, Dims, UsF)));
    fmt::print("unfused {}", formatRoofline(kernelRoofline(XU, Dims, UsU)));
  }
  return 0;
}

int exampleMain(llvm::StringRef Name, const RunOptions &Opts) {
  try {
    return runExample(buildExample(Name), Opts);
  } catch (const Error &Err) {
    fmt::print(stderr, "{}: error: {}\n", Name.str(), Err.what());
    return 1;
  }
}

} // namespace jitfuse::examples
