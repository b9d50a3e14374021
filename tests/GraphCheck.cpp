//===- tests/GraphCheck.cpp - compile, run, compare against the reference -===//
#include "GraphCheck.h"

#include "codegen/Codegen.h"
#include "reference/ErrorBound.h"
#include "reference/Tolerance.h"
#include "runtime/Driver.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

namespace jitfuse::test {

bool haveGpu() {
  rt::Driver &D = rt::Driver::get();
  if (D.available())
    return true;
  WARN("GPU part skipped: " << D.unavailableReason());
  return false;
}

std::string kernelSource(const Executable &E) {
  const std::string &Helpers = codegen::deviceHelpers();
  size_t At = E.source().find(Helpers);
  REQUIRE(At != std::string::npos);
  return E.source().substr(At + Helpers.size());
}

std::string kernelText(const std::string &Kernels, const std::string &Name) {
  size_t At = Kernels.find(" " + Name + "_");
  if (At == std::string::npos)
    At = Kernels.find(" " + Name + "("); // a variant's full name
  if (At == std::string::npos)
    return "";
  size_t End = Kernels.find("__global__", At);
  return Kernels.substr(At, End == std::string::npos ? std::string::npos : End - At);
}

Compiler &testCompiler() {
  static Compiler C([] {
    rt::CacheConfig Cfg;
    if (const char *Env = std::getenv("JITFUSE_CACHE_DIR")) {
      Cfg.Dir = Env;
    } else {
      char Tmpl[] = "/tmp/jitfuse-test-cache-XXXXXX";
      Cfg.Dir = mkdtemp(Tmpl);
    }
    return Cfg;
  }());
  return C;
}

std::mt19937_64 &rng() {
  static std::mt19937_64 R([] {
    uint64_t Seed = std::random_device{}();
    if (const char *Env = std::getenv("JITFUSE_TEST_SEED"))
      Seed = std::strtoull(Env, nullptr, 10);
    std::fprintf(stderr, "jitfuse tests: random seed %llu (JITFUSE_TEST_SEED to repeat)\n",
                 static_cast<unsigned long long>(Seed));
    return Seed;
  }());
  return R;
}

Bindings randomBindings(const Graph &G, const std::map<std::string, int64_t> &Dims,
                        const std::map<std::string, double> &Scalars,
                        const CheckOptions &Opts) {
  Bindings B;
  B.Dims = Dims;
  B.Scalars = Scalars;
  for (NodeId Id : G.inputs()) {
    const Node &N = G.node(Id);
    HostTensor T = randomTensor(N.Type, resolveShape(N.Dims, Dims), rng(), Opts.Lo, Opts.Hi);
    if (Opts.SpecialValues && isFloat(N.Type) && T.numel() > 0) {
      const double Special[] = {NAN, INFINITY, -INFINITY};
      for (int K = 0; K < 3; ++K)
        T.Data[rng()() % T.Data.size()] = Special[K];
    }
    B.Inputs[N.Name] = std::move(T);
  }
  foldStridedInputs(G, B);
  return B;
}

/// The reference's per-element error bounds of G on B, computed on first
/// use: an output the rtol rule rejects may still be within them (a column
/// sum of 1001 f32 values whose result cancels to 0.036: its f32 rounding
/// is relative to the terms, not the result).
struct LazyBounds {
  const Graph &G;
  const Bindings &B;
  std::optional<std::map<std::string, HostTensor>> Bounds;
  const HostTensor &of(const std::string &Output) {
    if (!Bounds)
      Bounds = interpretWithBounds(G, B).Bounds;
    return Bounds->at(Output);
  }
};

static int runAndCompare(const Graph &G, Executable &X, const Bindings &B,
                         const CheckOptions &Opts, const char *Mode,
                         const std::map<std::string, HostTensor> &Ref, LazyBounds &Bounds) {
  HostRunOptions RO;
  RO.MisalignElems = Opts.MisalignElems;
  RO.MisalignEach = Opts.MisalignEach;
  std::map<std::string, HostTensor> Got = runOnDevice(X, B, RO);
  int Compared = 0;
  for (const GraphOutput &O : G.outputs()) {
    DType T = G.node(O.Id).Type;
    double Tol = toleranceFor(T, maxReductionLength(G, O.Id, B.Dims)) * Opts.TolScale;
    std::string What = std::string(Mode) + " output '" + O.Name + "'";
    CompareResult R = compareTensors(Got.at(O.Name), Ref.at(O.Name), Tol, What);
    if (!R.Ok)
      R = compareTensors(Got.at(O.Name), Ref.at(O.Name), Bounds.of(O.Name), Tol, What);
    INFO(R.Message);
    CHECK(R.Ok);
    ++Compared;
  }
  return Compared;
}

int checkGraph(const Graph &G, const Bindings &B, const CheckOptions &Opts) {
  Compiler &C = testCompiler();
  bool Gpu = rt::Driver::get().available();
  std::map<std::string, HostTensor> Ref;
  if (Gpu)
    Ref = interpret(G, B);
  LazyBounds Bounds{G, B, std::nullopt};
  int Compared = 0;
  for (bool Fuse : {true, false}) {
    if ((Fuse && !Opts.Fused) || (!Fuse && !Opts.Unfused))
      continue;
    CompileOptions CO = Opts; // the compile options, without the check's own
    CO.Fuse = Fuse;
    Executable X = C.compile(G, CO);
    if (Fuse && Opts.ExpectFusedKernels >= 0)
      CHECK(X.numKernels() == static_cast<unsigned>(Opts.ExpectFusedKernels));
    if (Fuse && Opts.ExpectFusedLaunches >= 0)
      CHECK(X.numLaunches() == static_cast<unsigned>(Opts.ExpectFusedLaunches));
    if (!Fuse)
      CHECK(X.numLaunches() == X.numKernels());
    if (!Gpu)
      continue;
    Compared += runAndCompare(G, X, B, Opts, Fuse ? "fused" : "unfused", Ref, Bounds);
    if (X.numLaunches() == X.numKernels())
      continue;
    CO.HorizontalFusion = false;
    Executable Apart = C.compile(G, CO);
    CHECK(Apart.numLaunches() == Apart.numKernels());
    Compared += runAndCompare(G, Apart, B, Opts, "fused, one launch per kernel", Ref, Bounds);
  }
  return Compared;
}

DType coarsestComputed(const Graph &G, NodeId Out) {
  DType Worst = G.node(Out).Type;
  std::vector<bool> Seen(G.size());
  std::vector<NodeId> Stack = {Out};
  while (!Stack.empty()) {
    NodeId N = Stack.back();
    Stack.pop_back();
    if (Seen[N])
      continue;
    Seen[N] = true;
    const Node &Nd = G.node(N);
    if (Nd.isLeaf())
      continue;
    if (isFloat(Nd.Type) && dtypeEpsilon(Nd.Type) > dtypeEpsilon(Worst))
      Worst = Nd.Type;
    Stack.insert(Stack.end(), Nd.Operands.begin(), Nd.Operands.end());
  }
  return Worst;
}

double pathTolerance(const Graph &G, NodeId Out, const std::map<std::string, int64_t> &Dims) {
  return toleranceFor(coarsestComputed(G, Out), maxReductionLength(G, Out, Dims));
}

} // namespace jitfuse::test
