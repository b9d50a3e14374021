//===- compiler/Compiler.cpp - the compile() driver -----------------------===//
//
// A straight line: verify -> partition -> schedule -> codegen -> contract ->
// NVRTC (through the cache) -> module load -> launch tables.
//
//===----------------------------------------------------------------------===//
#include "compiler/Compiler.h"

#include "codegen/Codegen.h"
#include "compiler/Dump.h"
#include "compiler/ExecutableImpl.h"
#include "compiler/Fusion.h"
#include "compiler/Plan.h"
#include "compiler/Schedule.h"
#include "ir/Printer.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/ImageBundle.h"
#include "runtime/Nvrtc.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

namespace jitfuse {

Compiler::Compiler()
    : Cache(std::make_shared<rt::KernelCache>(rt::CacheConfig::fromEnv())) {}

Compiler::Compiler(rt::CacheConfig Config)
    : Cache(std::make_shared<rt::KernelCache>(std::move(Config))) {}

static void checkContract(const Graph &G, const Partition &P,
                          const CompileOptions &Opts, const std::string &Plan) {
  if (Opts.ExpectKernels && *Opts.ExpectKernels != P.Clusters.size())
    fail("fusion contract broken: expected {} kernel{}, the plan has {}\n{}",
         *Opts.ExpectKernels, *Opts.ExpectKernels == 1 ? "" : "s",
         P.Clusters.size(), Plan);
  for (const std::vector<NodeId> &Group : Opts.SameKernel) {
    int Want = -2;
    for (NodeId N : Group) {
      if (N >= G.size())
        fail("fusion contract: node %{} is not in the graph", N);
      int C = P.ClusterOf[N];
      if (C < 0)
        fail("fusion contract: node %{} ({}) is not computed by any kernel "
             "(a leaf or dead node)",
             N, opName(G.node(N).Kind).str());
      if (Want == -2)
        Want = C;
      else if (C != Want)
        fail("fusion contract broken: nodes %{} and %{} were required to share "
             "a kernel but are in kernels {} and {}\n{}",
             Group.front(), N, Want, C, Plan);
    }
  }
}

static std::pair<int, int> parseArch(llvm::StringRef Arch) {
  unsigned V = 0;
  if (!Arch.consume_front("sm_") || Arch.getAsInteger(10, V) || V < 50)
    fail("compile: arch '{}' is not of the form sm_XX (e.g. sm_90)", Arch.str());
  return {static_cast<int>(V / 10), static_cast<int>(V % 10)};
}

static TensorSource sourceOf(const Graph &G, NodeId N,
                             std::map<NodeId, unsigned> &Inter,
                             ExecutableImpl &X) {
  const Node &Nd = G.node(N);
  if (Nd.Kind == Op::Input)
    return {TensorSource::GraphInput, static_cast<unsigned>(Nd.A0)};
  for (size_t I = 0; I < G.outputs().size(); ++I)
    if (G.outputs()[I].Id == N)
      return {TensorSource::GraphOutput, static_cast<unsigned>(I)};
  auto [It, New] = Inter.try_emplace(N, static_cast<unsigned>(Inter.size()));
  if (New) {
    X.InterNumel.push_back(SizeExpr::of(Nd.Dims, G.dynamicDims()));
    X.InterElemBytes.push_back(dtypeBytes(Nd.Type));
  }
  return {TensorSource::Intermediate, It->second};
}

static LaunchPlan makeLaunch(const Graph &G, const KernelPlan &K,
                             std::map<NodeId, unsigned> &Inter,
                             ExecutableImpl &X) {
  LaunchPlan L;
  L.Kind = K.Kind;
  L.Flat = K.Flat;
  L.ThreadsX = K.ThreadsX;
  L.RowsPerBlock = K.RowsPerBlock;
  L.Vecs = K.Vecs;
  auto Names = G.dynamicDims();
  L.Numel = SizeExpr::of(K.Domain, Names);
  if (!K.Domain.empty()) {
    L.Rows = SizeExpr::of(llvm::ArrayRef<Dim>(K.Domain).drop_back(), Names);
    L.RowLen = SizeExpr::of(llvm::ArrayRef<Dim>(K.Domain).take_back(), Names);
  }
  for (const codegen::KernelParam &P : codegen::kernelParams(G, K)) {
    ArgSlot S;
    S.K = P.K;
    S.Type = P.Type;
    S.ElemBytes = dtypeBytes(P.Type);
    NodeId N = 0;
    switch (P.K) {
    case codegen::KernelParam::Input:
      N = K.Inputs[P.Index];
      break;
    case codegen::KernelParam::Output:
      N = K.Outputs[P.Index];
      break;
    case codegen::KernelParam::Scalar:
      S.Index = static_cast<unsigned>(G.node(K.Scalars[P.Index]).A0);
      break;
    case codegen::KernelParam::DynDim:
      S.Index = static_cast<unsigned>(
          std::find(Names.begin(), Names.end(), K.DynDims[P.Index]) - Names.begin());
      break;
    default:
      break;
    }
    if (P.K == codegen::KernelParam::Input || P.K == codegen::KernelParam::Output) {
      S.Src = sourceOf(G, N, Inter, X);
      const Shape &D = G.node(N).Dims;
      S.Vectorized = staticNumel(D) != std::optional<int64_t>(1);
      S.AlignElems = S.Vectorized ? K.Vecs.front() : 1;
    }
    L.Slots.push_back(S);
  }
  L.Storage.assign(L.Slots.size(), 0);
  for (uint64_t &Slot : L.Storage)
    L.ArgPtrs.push_back(&Slot);
  return L;
}

Executable Compiler::compile(const Graph &G, const CompileOptions &Opts) {
  auto Start = std::chrono::steady_clock::now();
  G.verify();
  if (G.outputs().empty())
    fail("compile: the graph has no outputs; mark results with g.output(name, value)");
  auto X = std::make_unique<ExecutableImpl>();
  X->Device = Opts.Device;
  for (NodeId N : G.inputs())
    X->Inputs.push_back({G.node(N).Name, G.node(N).Type, G.node(N).Dims});
  for (const GraphOutput &O : G.outputs())
    X->Outputs.push_back({O.Name, G.node(O.Id).Type, G.node(O.Id).Dims});
  for (NodeId N : G.scalars())
    X->Scalars.push_back({G.node(N).Name, G.node(N).Type, {}});
  X->DynDims.assign(G.dynamicDims().begin(), G.dynamicDims().end());

  X->Part = Opts.Fuse ? fuseGraph(G) : partitionUnfused(G);
  std::vector<KernelPlan> Plans;
  for (unsigned I = 0; I < X->Part.Clusters.size(); ++I) {
    Plans.push_back(scheduleCluster(G, X->Part.Clusters[I], I));
    Plans.back().FastMath = Opts.FastMath;
  }
  X->GraphText = printGraph(G);
  X->PlanText = explainPlan(G, X->Part, Plans, Opts.Fuse);
  X->PlanDot = planToDot(G, X->Part);
  checkContract(G, X->Part, Opts, X->PlanText);
  // Each kernel is emitted once: its text is both the inspection copy and
  // part of the program (emission dominates a cache hit's CPU time).
  for (size_t I = 0; I < Plans.size(); ++I) {
    const KernelPlan &K = Plans[I];
    X->Kernels.push_back({K.Name, K.Kind, K.Nodes, K.Inputs, K.Outputs, K.Vecs,
                          K.ThreadsX, K.RowsPerBlock, codegen::emitKernel(G, K)});
    X->KernelBytes.push_back(clusterTraffic(G, X->Part.Clusters[I]));
  }
  {
    std::vector<std::string> Texts;
    for (const KernelInfo &K : X->Kernels)
      Texts.push_back(K.Source);
    X->Source = codegen::joinProgram(Texts);
  }

  rt::Driver &D = rt::Driver::get();
  X->HaveDevice = D.available() && Opts.Device < rt::deviceCount();
  std::string Arch = Opts.Arch;
  // The SM count sizes the full-reduction grid whatever Arch says: an
  // explicit Arch must not shrink it to one block.
  if (X->HaveDevice) {
    rt::DeviceInfo Info = rt::queryDevice(Opts.Device);
    X->SmCount = Info.SmCount;
    if (Arch.empty())
      Arch = Info.archName();
  } else if (Arch.empty()) {
    Arch = "sm_90";
  }
  auto [Major, Minor] = parseArch(Arch);
  X->NvrtcOptions = rt::defaultNvrtcOptions(Major, Minor);
  rt::CacheKeyParts Parts{X->Source, X->NvrtcOptions, rt::nvrtcVersionString(), Arch};
  X->Key = rt::cacheKey(Parts);
  dumpCompile(*X, Opts);

  // Several kernel variants compile as parallel NVRTC programs: the front
  // end runs once per part, but a cold compile takes the time of the
  // largest part instead of the sum (ARCHITECTURE.md, "Parallel compile").
  // The cache key stays that of the whole program, whatever the split.
  size_t NumVariants = 0;
  for (const KernelPlan &K : Plans)
    NumVariants += K.Vecs.size();
  unsigned Threads = rt::compileThreads();
  auto CompileNow = [&] {
    if (Threads <= 1 || NumVariants <= 1) {
      rt::CompiledProgram Prog = rt::compileCuda(X->Source, "jitfuse", X->NvrtcOptions,
                                                 Opts.WantPtx);
      if (Opts.WantPtx)
        X->Ptx = Prog.Ptx;
      return rt::CacheEntry{std::move(Prog.Cubin), std::move(Prog.Log), ""};
    }
    std::vector<codegen::ProgramPart> Pieces = codegen::emitProgramParts(G, Plans, Threads);
    std::vector<std::string> Sources;
    for (const codegen::ProgramPart &P : Pieces)
      Sources.push_back(P.Source);
    std::vector<rt::CompiledProgram> Progs =
        rt::compileCudaParallel(Sources, "jitfuse", X->NvrtcOptions, Threads);
    std::vector<rt::BundledImage> Images;
    std::string Log;
    for (size_t I = 0; I < Pieces.size(); ++I) {
      Images.push_back({std::move(Pieces[I].Kernels), std::move(Progs[I].Cubin)});
      Log += Progs[I].Log;
    }
    return rt::CacheEntry{rt::bundleImages(Images), std::move(Log), ""};
  };
  bool Hit = false;
  X->Entry = Cache->getOrCompile(Parts, CompileNow, &Hit);
  X->Stats.CacheHit = Hit;
  X->Log = X->Entry->Log;
  auto Compiled = std::chrono::steady_clock::now();
  X->Stats.CompileMs = std::chrono::duration<double, std::milli>(Compiled - Start).count();
  if (!Hit && X->Stats.CompileMs > 500)
    std::fprintf(stderr, "jitfuse: compiled %zu kernel%s with NVRTC in %.2f s (cache: %s)\n",
                 Plans.size(), Plans.size() == 1 ? "" : "s", X->Stats.CompileMs / 1000,
                 Cache->diskEnabled() ? Cache->dir().c_str() : "memory only");
  if (Opts.WantPtx && X->Ptx.empty())
    X->Ptx = rt::compileCuda(X->Source, "jitfuse", X->NvrtcOptions, true).Ptx;
  dumpPtx(*X, Opts);

  std::map<NodeId, unsigned> Inter;
  for (const KernelPlan &K : Plans)
    X->Launches.push_back(makeLaunch(G, K, Inter, *X));
  X->InterBuffers.resize(X->InterNumel.size());
  if (!X->HaveDevice)
    return Executable(std::move(X));

  // Load; a CUBIN the driver refuses is a stale or damaged entry: drop it
  // and compile once more.
  X->Ctx = rt::primaryContext(Opts.Device);
  std::vector<std::string> Names;
  for (const KernelPlan &K : Plans)
    for (int V : K.Vecs)
      Names.push_back(K.variantName(V));
  try {
    X->Mod = std::make_unique<rt::ModuleSet>(X->Entry->Cubin, Names);
  } catch (const rt::ImageError &) {
    Cache->invalidate(X->Key);
    X->Entry = Cache->getOrCompile(Parts, CompileNow, &Hit);
    X->Mod = std::make_unique<rt::ModuleSet>(X->Entry->Cubin, Names);
  }
  for (size_t I = 0; I < Plans.size(); ++I) {
    for (int V : Plans[I].Vecs)
      X->Launches[I].Fns.push_back(X->Mod->function(Plans[I].variantName(V)));
    if (Plans[I].Kind == KernelKind::FullReduce) {
      LaunchPlan &L = X->Launches[I];
      size_t MaxBlocks = std::max(1, FullReduceBlocksPerSm * X->SmCount);
      L.Partials = rt::DeviceBuffer(MaxBlocks * 8);
      L.Counter = rt::DeviceBuffer(sizeof(unsigned));
      rt::memsetD8(L.Counter.ptr(), 0, sizeof(unsigned));
    }
  }
  X->Stats.LoadMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - Compiled).count();
  return Executable(std::move(X));
}

} // namespace jitfuse
