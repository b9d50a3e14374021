//===- tests/test_cuda_graph.cpp - Executable::setCudaGraph ---------------===//
//
// Graph mode must give, for every call, exactly the bytes direct launches
// give on the same pointers: after new pointers, scalars and dims, a dim
// that skips kernels, one that grows the intermediates, and a misaligned
// pointer that changes the vector variant. Each run starts from poisoned
// output allocations (0xFF bytes, NaN for floats) and the whole allocation
// is compared, so an element written by stale arguments or left unwritten
// shows. Results are also checked against the fp64 reference.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "ir/NN.h"
#include "reference/Tolerance.h"
#include "runtime/Memory.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <new>
#include <string>
#include <vector>

// Counts this thread's operator new calls, so the replay path can be shown
// to allocate nothing. Not under a sanitizer, whose allocator stays in
// charge. libstdc++ routes new[], nothrow new and sized delete through these.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define JITFUSE_COUNT_NEW 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                  \
    __has_feature(memory_sanitizer)
#define JITFUSE_COUNT_NEW 0
#endif
#endif
#ifndef JITFUSE_COUNT_NEW
#define JITFUSE_COUNT_NEW 1
#endif

static thread_local uint64_t NewCalls = 0;
// The first callers of operator new while a window counts, kept without
// allocating, so a failure names the call sites (on the H200 they showed
// the window loading a deferred variant: ExecutableImpl::loadDeferred).
static thread_local void *NewCallers[256];
static thread_local unsigned NumNewCallers = 0;
#if JITFUSE_COUNT_NEW
// GCC inlines these into the containers below and then sees free() on
// memory from operator new: the pair is matched (malloc/free).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void *operator new(std::size_t N) {
  ++NewCalls;
  if (NumNewCallers < std::size(NewCallers))
    NewCallers[NumNewCallers++] = __builtin_return_address(0);
  if (void *P = std::malloc(N ? N : 1))
    return P;
  throw std::bad_alloc();
}
void operator delete(void *P) noexcept { std::free(P); }
void operator delete(void *P, std::size_t) noexcept { std::free(P); }
#endif

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// One counted window of operator new calls on this thread.
struct NewWindow {
  uint64_t Start = NewCalls;
  NewWindow() { NumNewCallers = 0; }
  /// The window's allocations; \p Objects gets their callers' shared
  /// objects and first call sites, for the failure message.
  uint64_t count(std::string &Objects) const {
    uint64_t Total = NewCalls - Start;
    // Per object: the count and the first distinct call sites, as offsets
    // into it (addr2line -f -C -e OBJECT OFFSET on the unstripped build).
    std::map<std::string, std::pair<unsigned, std::vector<uintptr_t>>> ByObject;
    for (unsigned I = 0; I < NumNewCallers && I < Total; ++I) {
      Dl_info Info;
      bool Known = dladdr(NewCallers[I], &Info) && Info.dli_fname;
      std::string Obj = Known ? Info.dli_fname : "?";
      auto &[N, Sites] = ByObject[Obj];
      ++N;
      uintptr_t Off = reinterpret_cast<uintptr_t>(NewCallers[I]) -
                      (Known ? reinterpret_cast<uintptr_t>(Info.dli_fbase) : 0);
      if (Sites.size() < 4 && std::find(Sites.begin(), Sites.end(), Off) == Sites.end())
        Sites.push_back(Off);
    }
    for (const auto &[Obj, NS] : ByObject)
      Objects += fmt::format("{} x{} (at {:#x}); ", Obj, NS.first, fmt::join(NS.second, ", "));
    return Total;
  }
};

constexpr int64_t H = 1024;
constexpr int64_t MaxB = 40;

/// Unfused this is one kernel per op (a dozen); fused, a row kernel and a
/// full reduction. Two scalars, one dynamic dim.
Graph addRmsNormChain() {
  Graph G;
  Value X = G.input("x", bf16, {"B", H});
  Value Res = G.input("residual", bf16, {"B", H});
  Value W = G.input("weight", bf16, {H});
  Value Eps = G.scalar("eps", f32);
  Value Alpha = G.scalar("alpha", f32);
  Value R = X + Res;
  Value Y = nn::rmsNorm(R, W, Eps);
  G.output("residual_out", R);
  G.output("y", Y);
  G.output("z", silu(Y) * Alpha);
  G.output("abs_sum", sum(abs(R), ReduceScope::All));
  return G;
}

/// Device allocations for every input and output, sized for MaxB plus
/// slack, so one set serves every dim and misalignment below.
struct DeviceSet {
  std::vector<rt::DeviceBuffer> In, Out;
  std::vector<size_t> OutElemBytes;
};

size_t capacityBytes(const TensorDesc &T) {
  return (numelOf(resolveShape(T.Dims, {{"B", MaxB}})) + 16) * dtypeBytes(T.Type);
}

DeviceSet allocateSet(const Executable &X) {
  DeviceSet S;
  for (const TensorDesc &T : X.inputs())
    S.In.emplace_back(capacityBytes(T));
  for (const TensorDesc &T : X.outputs()) {
    S.Out.emplace_back(capacityBytes(T));
    S.OutElemBytes.push_back(dtypeBytes(T.Type));
  }
  return S;
}

/// One run's arguments: pointers into a set (offset by Misalign elements),
/// scalars and dims, with the host inputs for the reference.
struct Call {
  Bindings B;
  std::vector<CUdeviceptr> In, Out;
  std::vector<double> Scalars;
  std::vector<int64_t> Dims;
};

Call prepareCall(const Graph &G, const Executable &X, DeviceSet &S, int64_t Batch, double Eps,
                 double Alpha, unsigned Misalign) {
  Call C;
  C.B = randomBindings(G, {{"B", Batch}}, {{"eps", Eps}, {"alpha", Alpha}});
  for (size_t I = 0; I < X.inputs().size(); ++I) {
    const TensorDesc &T = X.inputs()[I];
    CUdeviceptr P = S.In[I].ptr() + Misalign * dtypeBytes(T.Type);
    std::vector<uint8_t> Bytes = encode(C.B.Inputs.at(T.Name));
    rt::copyToDevice(P, Bytes.data(), Bytes.size());
    C.In.push_back(P);
  }
  for (size_t I = 0; I < X.outputs().size(); ++I)
    C.Out.push_back(S.Out[I].ptr() + Misalign * S.OutElemBytes[I]);
  C.Scalars = {Eps, Alpha};
  C.Dims = {Batch};
  return C;
}

void poison(DeviceSet &S) {
  for (rt::DeviceBuffer &B : S.Out)
    rt::memsetD8(B.ptr(), 0xFF, B.size());
}

/// The whole allocation of every output, poison included.
std::vector<std::vector<uint8_t>> download(const DeviceSet &S) {
  std::vector<std::vector<uint8_t>> R;
  for (const rt::DeviceBuffer &B : S.Out) {
    R.emplace_back(B.size());
    rt::copyToHost(R.back().data(), B.ptr(), B.size());
  }
  return R;
}

/// Checks graph-mode bytes against direct-mode bytes (equal everywhere),
/// the poison outside each output (intact) and the values (reference).
void compareCall(const Graph &G, const Executable &X, const Call &C, const DeviceSet &S,
                 const std::vector<std::vector<uint8_t>> &GraphBytes,
                 const std::vector<std::vector<uint8_t>> &DirectBytes) {
  std::map<std::string, HostTensor> Ref = interpret(G, C.B);
  for (size_t I = 0; I < X.outputs().size(); ++I) {
    const TensorDesc &T = X.outputs()[I];
    INFO("output '" << T.Name << "'");
    CHECK(GraphBytes[I] == DirectBytes[I]);
    std::vector<int64_t> Dims = resolveShape(T.Dims, C.B.Dims);
    size_t Begin = C.Out[I] - S.Out[I].ptr();
    size_t End = Begin + numelOf(Dims) * dtypeBytes(T.Type);
    bool PoisonKept = true;
    for (size_t K = 0; K < GraphBytes[I].size(); ++K)
      if ((K < Begin || K >= End) && GraphBytes[I][K] != 0xFF)
        PoisonKept = false;
    CHECK(PoisonKept);
    HostTensor Got = decode(llvm::ArrayRef<uint8_t>(GraphBytes[I]).slice(Begin, End - Begin),
                            T.Type, Dims);
    NodeId Id = G.outputs()[I].Id;
    double Tol = toleranceFor(T.Type, maxReductionLength(G, Id, C.B.Dims));
    CompareResult R = compareTensors(Got, Ref.at(T.Name), Tol, "graph-mode output " + T.Name);
    INFO(R.Message);
    CHECK(R.Ok);
  }
}

/// Runs call C through X (graph mode or not) and through Direct, each into
/// freshly poisoned outputs, and compares the two (compareCall).
void runBothAndCompare(const Graph &G, Executable &X, Executable &Direct, const Call &C,
                       DeviceSet &S, rt::Stream &Stream) {
  poison(S);
  X.run(C.In, C.Out, C.Scalars, C.Dims, Stream.get());
  Stream.synchronize();
  auto GraphBytes = download(S);
  poison(S);
  Direct.run(C.In, C.Out, C.Scalars, C.Dims, Stream.get());
  Stream.synchronize();
  compareCall(G, X, C, S, GraphBytes, download(S));
}

Executable compileChain(const Graph &G, bool Fuse) {
  CompileOptions O;
  O.Fuse = Fuse;
  return testCompiler().compile(G, O);
}

} // namespace

TEST_CASE("setCudaGraph records the mode, without a device run() says why", "[cuda-graph]") {
  Graph G = addRmsNormChain();
  Executable X = compileChain(G, false);
  CHECK(X.numKernels() >= 6); // the graph-mode tests below need many kernels
  CHECK_FALSE(X.cudaGraph());
  X.setCudaGraph(true);
  CHECK(X.cudaGraph());
  X.setCudaGraph(true); // idempotent
  Executable Y = std::move(X);
  CHECK(Y.cudaGraph());
  CHECK(Y.cudaGraphStats().Instantiations == 0);
  CHECK(Y.cudaGraphStats().Replays == 0);
  if (!Y.canRun()) {
    CUdeviceptr Fake[3] = {256, 256, 256};
    CHECK_THROWS_WITH(Y.run(Fake, {256, 256, 256, 256}, {1e-6, 1.0}, {2}),
                      Catch::Contains("no CUDA device"));
    CHECK(Y.cudaGraphStats().Instantiations == 0);
  }
  Y.setCudaGraph(false);
  CHECK_FALSE(Y.cudaGraph());
}

TEST_CASE("CUDA graph replay equals direct launches as pointers, scalars, dims and alignment "
          "change",
          "[gpu][cuda-graph]") {
  if (!haveGpu())
    return;
  Graph G = addRmsNormChain();
  for (bool Fuse : {false, true}) {
    INFO((Fuse ? "fused" : "unfused"));
    Executable X = compileChain(G, Fuse), Direct = compileChain(G, Fuse);
    X.setCudaGraph(true);
    if (!Fuse)
      REQUIRE(X.numKernels() >= 6);
    DeviceSet Sets[2] = {allocateSet(X), allocateSet(X)};
    rt::Stream Streams[2];
    struct Step {
      int64_t B;
      double Eps, Alpha;
      int Set;
      unsigned Misalign;
      const char *Why;
    };
    const Step Steps[] = {
        {4, 1e-6, 1.5, 0, 0, "first run: build and instantiate"},
        {4, 1e-6, 1.5, 0, 0, "same arguments: replay as is"},
        {4, 1e-6, 1.5, 1, 0, "other pointers"},
        {4, 0.25, -0.75, 1, 0, "other scalars"},
        {1, 0.25, -0.75, 1, 0, "smaller dim"},
        {0, 0.25, -0.75, 0, 0, "dim 0: row kernels skipped"},
        {3, 1e-6, 2.0, 0, 0, "dim 3: skipped kernels back"},
        {37, 1e-6, 2.0, 1, 0, "dim 37: intermediates grow"},
        {5, 1e-6, 2.0, 0, 1, "misaligned by one element: narrower variants"},
        {4, 1e-6, 1.5, 0, 0, "aligned again"},
    };
    for (size_t K = 0; K < std::size(Steps); ++K) {
      const Step &St = Steps[K];
      INFO("step " << K << ": " << St.Why << " (B=" << St.B << ")");
      DeviceSet &S = Sets[St.Set];
      Call C = prepareCall(G, X, S, St.B, St.Eps, St.Alpha, St.Misalign);
      CudaGraphStats Before = X.cudaGraphStats();
      runBothAndCompare(G, X, Direct, C, S, Streams[K % 2]);

      const CudaGraphStats &After = X.cudaGraphStats();
      CHECK(After.Replays == Before.Replays + 1);
      if (K == 1) {
        CHECK(After.NodeUpdates == Before.NodeUpdates);
        CHECK(After.NodeToggles == Before.NodeToggles);
      } else if (K > 1) {
        CHECK(After.NodeUpdates + After.NodeToggles > Before.NodeUpdates + Before.NodeToggles);
      }
      if (St.B == 0 || K == 6)
        CHECK(After.NodeToggles > Before.NodeToggles);
    }
    INFO("a second instantiation means the driver refused to change a node's kernel in "
         "place and the graph was rebuilt (correct, but slow)");
    CHECK(X.cudaGraphStats().Instantiations == 1);
  }
}

TEST_CASE("CUDA graph replays enqueued back to back keep their own arguments",
          "[gpu][cuda-graph]") {
  if (!haveGpu())
    return;
  Graph G = addRmsNormChain();
  Executable X = compileChain(G, false), Direct = compileChain(G, false);
  X.setCudaGraph(true);
  // Largest dim first: the intermediates grow before anything is in flight.
  const int64_t Batches[] = {37, 4, 0, 5};
  const double Alphas[] = {1.0, -2.0, 0.5, 3.0};
  const unsigned Misalign[] = {0, 1, 0, 0};
  std::vector<DeviceSet> Sets;
  std::vector<Call> Calls;
  for (size_t K = 0; K < std::size(Batches); ++K) {
    Sets.push_back(allocateSet(X));
    Calls.push_back(prepareCall(G, X, Sets[K], Batches[K], 1e-5, Alphas[K], Misalign[K]));
    poison(Sets[K]);
  }
  rt::Stream S;
  // Every run updates nodes of an instance whose earlier launches may not
  // have started yet; they must keep the arguments they were launched with.
  for (const Call &C : Calls)
    X.run(C.In, C.Out, C.Scalars, C.Dims, S.get());
  S.synchronize();
  std::vector<std::vector<std::vector<uint8_t>>> GraphBytes;
  for (const DeviceSet &D : Sets)
    GraphBytes.push_back(download(D));
  for (size_t K = 0; K < Calls.size(); ++K) {
    INFO("call " << K << " (B=" << Batches[K] << ")");
    poison(Sets[K]);
    Direct.run(Calls[K].In, Calls[K].Out, Calls[K].Scalars, Calls[K].Dims, S.get());
    S.synchronize();
    compareCall(G, X, Calls[K], Sets[K], GraphBytes[K], download(Sets[K]));
  }
  CHECK(X.cudaGraphStats().Replays == Calls.size());
}

TEST_CASE("CUDA graph replays and node updates do not allocate", "[gpu][cuda-graph]") {
  if (!JITFUSE_COUNT_NEW) {
    WARN("allocation count skipped: built with a sanitizer");
    return;
  }
  if (!haveGpu())
    return;
  Graph G = addRmsNormChain();
  Executable X = compileChain(G, false), Direct = compileChain(G, false);
  X.setCudaGraph(true);
  DeviceSet Sets[2] = {allocateSet(X), allocateSet(X)};
  Call Calls[3] = {prepareCall(G, X, Sets[0], 4, 1e-6, 1.0, 0),
                   prepareCall(G, X, Sets[1], 4, 1e-3, 2.0, 1),
                   prepareCall(G, X, Sets[0], 0, 1e-6, 1.0, 0)};
  rt::Stream S;
  auto Run = [&](Executable &E, const Call &C) {
    E.run(C.In, C.Out, C.Scalars, C.Dims, S.get());
  };
  Run(X, Calls[0]); // builds the graph: allowed to allocate
  // Each call once: the first run that picks a deferred variant (the
  // misaligned call's) loads it, which allocates. A cold kernel cache
  // defers it; a warm one had compiled it whole, which is how this case
  // passed until it ran first in a fresh process (49 allocations, H200).
  for (const Call &C : Calls) {
    Run(X, C);
    Run(Direct, C);
  }
  Run(X, Calls[0]); // the graph back at call 0's arguments
  S.synchronize();
  const CudaGraphStats Warm = X.cudaGraphStats();

  std::string SameBy, ChangingBy, DirectBy;
  uint64_t Same, Changing, DirectCalls;
  {
    NewWindow W;
    for (int I = 0; I < 100; ++I)
      Run(X, Calls[0]);
    Same = W.count(SameBy);
  }
  CudaGraphStats AfterSame = X.cudaGraphStats();
  {
    // New pointers, scalars, a misaligned variant, a skipped kernel, and back.
    NewWindow W;
    for (int I = 0; I < 99; ++I)
      Run(X, Calls[I % 3]);
    Changing = W.count(ChangingBy);
  }
  {
    NewWindow W;
    for (int I = 0; I < 100; ++I)
      Run(Direct, Calls[I % 3]);
    DirectCalls = W.count(DirectBy);
  }
  S.synchronize();

  INFO("callers: replays " << SameBy << " updates " << ChangingBy << " direct " << DirectBy);
  CHECK(Same == 0);
  CHECK(Changing == 0);
  CHECK(DirectCalls == 0);
  const CudaGraphStats &End = X.cudaGraphStats();
  CHECK(AfterSame.NodeUpdates == Warm.NodeUpdates);
  CHECK(End.NodeUpdates > Warm.NodeUpdates);
  CHECK(End.NodeToggles > Warm.NodeToggles);
  CHECK(End.Instantiations == 1);
  CHECK(End.Replays == Warm.Replays + 199);
}

TEST_CASE("a rejected call leaves graph mode usable, off and on again rebuilds",
          "[gpu][cuda-graph]") {
  if (!haveGpu())
    return;
  Graph G = addRmsNormChain();
  Executable X = compileChain(G, false), Direct = compileChain(G, false);
  X.setCudaGraph(true);
  DeviceSet Set = allocateSet(X);
  rt::Stream S;
  Call A = prepareCall(G, X, Set, 6, 1e-6, 1.0, 0);
  X.run(A.In, A.Out, A.Scalars, A.Dims, S.get());
  S.synchronize();

  std::vector<CUdeviceptr> NullIn = A.In;
  NullIn[0] = 0;
  CHECK_THROWS_WITH(X.run(llvm::ArrayRef<CUdeviceptr>(A.In).drop_back(), A.Out, A.Scalars,
                          A.Dims, S.get()),
                    Catch::Contains("input pointers"));
  CHECK_THROWS_WITH(X.run(NullIn, A.Out, A.Scalars, A.Dims, S.get()),
                    Catch::Contains("null pointer"));
  CHECK_THROWS_WITH(X.run(A.In, A.Out, A.Scalars, {-1}, S.get()),
                    Catch::Contains("out of range"));
  CHECK(X.cudaGraphStats().Replays == 1);

  Call B = prepareCall(G, X, Set, 9, 1e-2, -1.0, 1);
  runBothAndCompare(G, X, Direct, B, Set, S);
  X.setCudaGraph(false);
  // B's upload replaced A's inputs in the shared buffers: upload fresh ones.
  Call A2 = prepareCall(G, X, Set, 6, 1e-6, 1.0, 0);
  runBothAndCompare(G, X, Direct, A2, Set, S); // direct again
  X.setCudaGraph(true);
  Call B2 = prepareCall(G, X, Set, 9, 1e-2, -1.0, 1);
  runBothAndCompare(G, X, Direct, B2, Set, S);
  CHECK(X.cudaGraphStats().Instantiations == 2);
}
