//===- tests/hostpath/test_host_path.cpp - run() down to cuLaunchKernel ---===//
//
// Runs against the fake libcuda.so.1 beside this binary (FakeCuda.cpp; the
// CTest entry sets LD_LIBRARY_PATH): compile() uses NVRTC as usual, then
// run() goes through its real hot path and the fake records what reached
// cuLaunchKernel. Checks the arguments, grid and variant of each launch
// against values computed here, that the per-dims state follows the dims,
// that the per-call checks still reject bad pointers, and that a run
// allocates nothing on the heap. [.hostbench] prints the host time of run().
//
//===----------------------------------------------------------------------===//
#include "FakeCuda.h"

#include "driver/Compiler.h"
#include "ir/NN.h"
#include "runtime/Driver.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <new>

using namespace jitfuse;

// Every heap allocation of the process, counted. Replacing the two basic
// forms covers the array and nothrow forms too (they call these).
static std::atomic<uint64_t> Allocations{0};
void *operator new(std::size_t N) {
  ++Allocations;
  if (void *P = std::malloc(N ? N : 1))
    return P;
  throw std::bad_alloc();
}
void *operator new(std::size_t N, std::align_val_t A) {
  ++Allocations;
  std::size_t Al = static_cast<std::size_t>(A);
  if (void *P = std::aligned_alloc(Al, (N + Al - 1) / Al * Al))
    return P;
  throw std::bad_alloc();
}
void operator delete(void *P) noexcept { std::free(P); }
void operator delete(void *P, std::size_t) noexcept { std::free(P); }
void operator delete(void *P, std::align_val_t) noexcept { std::free(P); }
void operator delete(void *P, std::size_t, std::align_val_t) noexcept { std::free(P); }

namespace {

FakeCudaRecord &fake() {
  // The fake exports its record; the real driver does not, so a run that
  // picked up a real libcuda.so.1 fails here instead of testing it.
  static FakeCudaRecord *R = [] {
    void *H = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *Sym = H ? ::dlsym(H, "jitfuse_fake_cuda_record") : nullptr;
    return Sym ? reinterpret_cast<FakeCudaRecord *(*)()>(Sym)() : nullptr;
  }();
  return *R;
}

bool haveFake() {
  if (!rt::Driver::get().available())
    return false;
  return ::dlsym(RTLD_DEFAULT, "jitfuse_fake_cuda_record") ||
         [] {
           void *H = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
           return H && ::dlsym(H, "jitfuse_fake_cuda_record");
         }();
}

/// Fails the case unless the fake driver serves this process: without it
/// the cases would launch on a real GPU or on none.
void requireFake() {
  if (!haveFake())
    FAIL("the fake libcuda.so.1 is not loaded; run through ctest (LD_LIBRARY_PATH)");
}

constexpr int64_t H = 4096;

/// W8's graph: r = x + residual; y = rmsNorm(r, w, eps), bf16 [B, Len];
/// one kernel with parameters x, residual, w, r, y, eps, B.
Executable compileAddRmsNorm(bool Peel = true, int64_t Len = H, bool RowShared = false,
                             bool WideRows = true, bool StageInputs = true,
                             bool WideCache = true, bool PhaseLoop = false) {
  Graph G;
  Value X = G.input("x", DType::BF16, {"B", Len});
  Value Res = G.input("residual", DType::BF16, {"B", Len});
  Value W = G.input("weight", DType::BF16, {Len});
  Value Eps = G.scalar("eps", DType::F32);
  Value R = X + Res;
  G.output("residual_out", R);
  G.output("y", nn::rmsNorm(R, W, Eps));
  Compiler C;
  CompileOptions Opts;
  Opts.PeelAlignment = Peel;
  Opts.RowSharedMemory = RowShared;
  Opts.RowWideRows = WideRows;
  Opts.RowCacheStageInputs = StageInputs;
  Opts.RowCacheWideThreads = WideCache;
  Opts.RowPhaseLoop = PhaseLoop;
  return C.compile(G, Opts);
}

/// Runs compileAddRmsNorm's executable \p X over \p Rows rows with x at
/// byte offset \p Offset; the launch the fake driver saw.
const FakeCudaLaunch &runRows(Executable &X, int64_t Rows, int Offset) {
  CUdeviceptr In[] = {0x100000 + CUdeviceptr(Offset), 0x200000, 0x300000};
  CUdeviceptr Out[] = {0x400000, 0x500000};
  double Eps[] = {1e-6};
  int64_t Dims[] = {Rows};
  X.run(In, Out, Eps, Dims);
  return fake().Last;
}

uint64_t param(const FakeCudaLaunch &L, int I) {
  uint64_t V = 0;
  std::memcpy(&V, L.Params[I], sizeof(V));
  return V;
}

/// The last launch's 7 parameter slots hold exactly these values (in any
/// order: the kernel's parameter order is codegen's business).
void requireParams(const FakeCudaLaunch &L, std::vector<uint64_t> Expected) {
  std::vector<uint64_t> Got;
  for (int I = 0; I < 7; ++I)
    Got.push_back(param(L, I));
  // A float scalar fills the low 4 bytes of its 8-byte slot.
  for (uint64_t &V : Got)
    if (V >> 32 == 0 && V != 0 && std::find(Expected.begin(), Expected.end(), V) == Expected.end())
      V &= 0xffffffffu;
  std::sort(Got.begin(), Got.end());
  std::sort(Expected.begin(), Expected.end());
  REQUIRE(Got == Expected);
}

uint64_t floatBits(float F) {
  uint32_t B;
  std::memcpy(&B, &F, 4);
  return B;
}

std::string suffix(const FakeCudaLaunch &L) {
  std::string N = L.Function->Name;
  return N.substr(N.rfind('_'));
}

/// W8's row kernel over [B, 4096] bf16 (parameters x, residual, w, r, y,
/// eps, B) and an independent element-wise kernel over [N, 1000] f32
/// (parameters z, z2, N): two parts of one horizontal launch.
Graph rowAndFlatParts() {
  Graph G;
  Value X = G.input("x", DType::BF16, {"B", H});
  Value Res = G.input("residual", DType::BF16, {"B", H});
  Value W = G.input("weight", DType::BF16, {H});
  Value Eps = G.scalar("eps", DType::F32);
  Value Z = G.input("z", DType::F32, {"N", 1000});
  Value R = X + Res;
  G.output("residual_out", R);
  G.output("y", nn::rmsNorm(R, W, Eps));
  G.output("z2", Z * 2.0);
  return G;
}

} // namespace

TEST_CASE("run() hands cuLaunchKernel this call's pointers, scalar, dim and grid",
          "[hostpath]") {
  requireFake();
  Executable X = compileAddRmsNorm();
  REQUIRE(X.numKernels() == 1);
  const KernelInfo &K = X.kernels()[0];
  REQUIRE(K.Kind == KernelKind::RowReduce);
  CUdeviceptr In[] = {0x100000, 0x200000, 0x300000}, Out[] = {0x400000, 0x500000};
  double Eps[] = {1e-6};
  uint64_t Before = fake().Launches;
  for (int64_t B : {3, 1000, 3, 0, 7}) {
    int64_t Dims[] = {B};
    X.run(In, Out, Eps, Dims);
    if (B == 0) {
      REQUIRE(fake().Launches == Before); // no rows: nothing launched
      continue;
    }
    REQUIRE(fake().Launches == ++Before);
    const FakeCudaLaunch &L = fake().Last;
    // One block per RowsPerBlock rows, ThreadsX x RowsPerBlock threads.
    REQUIRE(int64_t(L.GridX) == (B + K.RowsPerBlock - 1) / K.RowsPerBlock);
    REQUIRE(L.BlockX == unsigned(K.ThreadsX));
    REQUIRE(L.BlockY == unsigned(K.RowsPerBlock));
    REQUIRE(suffix(L) == "_v" + std::to_string(K.Vecs.front()));
    requireParams(L, {In[0], In[1], In[2], Out[0], Out[1], floatBits(1e-6f), uint64_t(B)});
  }
  // New pointers with the same dims: the slots follow.
  CUdeviceptr In2[] = {0x1100000, 0x1200000, 0x1300000}, Out2[] = {0x1400000, 0x1500000};
  double Eps2[] = {0.5};
  int64_t Dims[] = {7};
  X.run(In2, Out2, Eps2, Dims);
  requireParams(fake().Last,
                {In2[0], In2[1], In2[2], Out2[0], Out2[1], floatBits(0.5f), uint64_t(7)});
}

TEST_CASE("run() picks the widest variant every pointer's alignment allows", "[hostpath]") {
  requireFake();
  // The ladder (PeelAlignment off): one variant per width.
  Executable X = compileAddRmsNorm(/*Peel=*/false);
  const KernelInfo &K = X.kernels()[0];
  REQUIRE(K.Vecs == std::vector<int>{8, 4, 2, 1});
  double Eps[] = {1e-6};
  int64_t Dims[] = {2};
  // bf16: 16-byte aligned allows 8 elements, 8-byte 4, 4-byte 2, 2-byte 1.
  for (auto [Offset, Vec] : {std::pair{0, 8}, std::pair{8, 4}, std::pair{4, 2}, std::pair{2, 1},
                             std::pair{24, 4}, std::pair{0, 8}}) {
    CAPTURE(Offset);
    CUdeviceptr In[] = {0x100000, 0x200000 + CUdeviceptr(Offset), 0x300000};
    CUdeviceptr Out[] = {0x400000, 0x500000};
    X.run(In, Out, Eps, Dims);
    REQUIRE(suffix(fake().Last) == "_v" + std::to_string(Vec));
    // The weight [H] is vectorized too; so are the outputs.
    CUdeviceptr In2[] = {0x100000, 0x200000, 0x300000 + CUdeviceptr(Offset)};
    X.run(In2, Out, Eps, Dims);
    REQUIRE(suffix(fake().Last) == "_v" + std::to_string(Vec));
    CUdeviceptr Out2[] = {0x400000, 0x500000 + CUdeviceptr(Offset)};
    X.run(In, Out2, Eps, Dims);
    REQUIRE(suffix(fake().Last) == "_v" + std::to_string(Vec));
  }
}

TEST_CASE("aligned pointers run the aligned variant, any other offset the peeled one", "[hostpath]") {
  requireFake();
  Executable X = compileAddRmsNorm();
  REQUIRE(X.kernels()[0].Vecs == std::vector<int>{8, 8});
  double Eps[] = {1e-6};
  int64_t Dims[] = {2};
  for (int Offset : {0, 2, 4, 8, 14, 16}) {
    CAPTURE(Offset);
    CUdeviceptr In[] = {0x100000 + CUdeviceptr(Offset), 0x200000, 0x300000 + CUdeviceptr(Offset)};
    CUdeviceptr Out[] = {0x400000, 0x500000 + CUdeviceptr(Offset)};
    X.run(In, Out, Eps, Dims);
    REQUIRE(suffix(fake().Last) == (Offset % 16 == 0 ? "_v8" : "_p8"));
  }
}

TEST_CASE("a cold compile defers the peeled variant; the first misaligned run loads it",
          "[hostpath]") {
  requireFake();
  Graph G;
  Value X = G.input("x", DType::BF16, {"B", 2048});
  Value W = G.input("weight", DType::BF16, {2048});
  G.output("y", nn::rmsNorm(X, W, G.scalar("eps", DType::F32)));
  rt::CacheConfig MemoryOnly;
  MemoryOnly.Enabled = false;
  Compiler C(MemoryOnly);
  Executable E = C.compile(G);
  REQUIRE(E.kernels()[0].Vecs == std::vector<int>{8, 8});
  CHECK_FALSE(E.stats().CacheHit);
  CHECK(E.stats().DeferredVariants == 1);
  double Eps[] = {1e-6};
  int64_t Dims[] = {3};
  CUdeviceptr Out[] = {0x400000};
  for (int Offset : {0, 2, 0, 6, 16}) {
    CAPTURE(Offset);
    CUdeviceptr In[] = {0x100000 + CUdeviceptr(Offset), 0x300000};
    E.run(In, Out, Eps, Dims);
    REQUIRE(suffix(fake().Last) == (Offset % 16 == 0 ? "_v8" : "_p8"));
  }
  // The same program again: found in memory, nothing deferred, and its
  // peeled variant runs (from the partial entry's background compile, or
  // the complete entry that replaced it).
  Executable Again = C.compile(G);
  CHECK(Again.stats().CacheHit);
  CHECK(Again.stats().DeferredVariants == 0);
  CUdeviceptr In[] = {0x100002, 0x300000};
  Again.run(In, Out, Eps, Dims);
  CHECK(suffix(fake().Last) == "_p8");
  // Opted out: every variant compiled by compile().
  rt::CacheConfig Other = MemoryOnly;
  Compiler Eager(Other);
  CompileOptions NoDefer;
  NoDefer.DeferVariants = false;
  Executable All = Eager.compile(G, NoDefer);
  CHECK_FALSE(All.stats().CacheHit);
  CHECK(All.stats().DeferredVariants == 0);
  All.run(In, Out, Eps, Dims);
  CHECK(suffix(fake().Last) == "_p8");
}

TEST_CASE("long rows: few enough rows launch the cluster form, then the wide one",
          "[hostpath][widerows]") {
  requireFake();
  // add + RMSNorm over rows of 128256 bf16 (16032 chunks: re-read, with a
  // form split over clusters of 8); the fake device has 132 SMs, so up to
  // 132 x 4 / 8 = 66 rows run split (codegen::launch::useFewRows). With
  // RowWideRows, up to 132 rows (one block an SM) then run 1024 threads a
  // row (useWideRows); beyond that, and without it, 512 threads a row.
  for (bool WideRows : {false, true}) {
    CAPTURE(WideRows);
    Executable X = compileAddRmsNorm(true, 128256, false, WideRows);
    REQUIRE(X.kernels().size() == 1);
    CHECK(X.kernels()[0].WideRowsName ==
          (WideRows ? X.kernels()[0].Name + "_t1024" : std::string()));
    for (int64_t Rows : {1, 8, 65, 66, 67, 100, 132, 133, 1000}) {
      CAPTURE(Rows);
      for (int Offset : {0, 2}) {
        CAPTURE(Offset);
        const FakeCudaLaunch &L = runRows(X, Rows, Offset);
        std::string Name = L.Function->Name;
        bool Few = Rows <= 66, Wide = WideRows && !Few && Rows <= 132;
        CHECK((Name.find("_c8_") != std::string::npos) == Few);
        CHECK((Name.find("_t1024_") != std::string::npos) == Wide);
        CHECK(suffix(L) == (Offset ? "_p8" : "_v8"));
        CHECK(L.GridX == uint64_t(Few ? Rows * 8 : Rows));
        CHECK(L.BlockX == (Wide ? 1024u : 512u));
      }
    }
  }
}

TEST_CASE("rows of one warp launch their 2-chunk form for runs of at most SMs rows",
          "[hostpath][widerows]") {
  requireFake();
  // add + RMSNorm over rows of 1024 bf16 (128 chunks): one warp a row at 4
  // chunks a thread, 4 rows a block; its form at 2 chunks a thread (64
  // threads, one row a block) runs up to 132 rows (the fake device's SMs).
  for (bool WideRows : {true, false}) {
    CAPTURE(WideRows);
    Executable X = compileAddRmsNorm(true, 1024, false, WideRows);
    REQUIRE(X.kernels().size() == 1);
    CHECK(X.kernels()[0].FewRowsName.empty());
    CHECK(X.kernels()[0].WideRowsName ==
          (WideRows ? X.kernels()[0].Name + "_t64" : std::string()));
    for (int64_t Rows : {1, 7, 131, 132, 133, 1000}) {
      CAPTURE(Rows);
      for (int Offset : {0, 2}) {
        CAPTURE(Offset);
        const FakeCudaLaunch &L = runRows(X, Rows, Offset);
        std::string Name = L.Function->Name;
        bool Wide = WideRows && Rows <= 132;
        CHECK((Name.find("_t64_") != std::string::npos) == Wide);
        CHECK(suffix(L) == (Offset ? "_p8" : "_v8"));
        CHECK(L.BlockX == (Wide ? 64u : 32u));
        CHECK(L.BlockY == (Wide ? 1u : 4u));
        CHECK(L.GridX == uint64_t(Wide ? Rows : (Rows + 3) / 4));
      }
    }
  }
}

TEST_CASE("StreamReadOnlyRows: runs of at most SMs rows launch the plain copy",
          "[hostpath][stream]") {
  requireFake();
  // sum(|x|) and max(|x|) over rows of 4096 bf16 (512 chunks, 256 threads a
  // row, no wide form of its own): streamed in the main form, whose plain
  // copy (<name>_plain) runs up to 132 rows (the fake device's SMs).
  for (bool Stream : {true, false}) {
    CAPTURE(Stream);
    Graph G;
    Value A = abs(G.input("x", DType::BF16, {"B", H}));
    G.output("s", sum(A));
    G.output("m", reduceMax(A));
    Compiler C;
    CompileOptions Opts;
    Opts.StreamReadOnlyRows = Stream;
    Executable X = C.compile(G, Opts);
    REQUIRE(X.kernels().size() == 1);
    CHECK(X.kernels()[0].WideRowsName ==
          (Stream ? X.kernels()[0].Name + "_plain" : std::string()));
    for (int64_t Rows : {1, 131, 132, 133, 1000}) {
      CAPTURE(Rows);
      for (int Offset : {0, 2}) {
        CAPTURE(Offset);
        CUdeviceptr In[] = {0x100000 + CUdeviceptr(Offset)};
        CUdeviceptr Out[] = {0x400000, 0x500000};
        int64_t Dims[] = {Rows};
        X.run(In, Out, {}, Dims);
        const FakeCudaLaunch &L = fake().Last;
        std::string Name = L.Function->Name;
        CHECK((Name.find("_plain_") != std::string::npos) == (Stream && Rows <= 132));
        CHECK(suffix(L) == (Offset ? "_p8" : "_v8"));
        CHECK(L.GridX == uint64_t(Rows));
        CHECK(L.BlockX == 256u);
      }
    }
  }
}

TEST_CASE("FlatTailThreads: the aligned variant launches a thread per tail element",
          "[hostpath][flattail]") {
  requireFake();
  // silu(g) * u over n bf16 elements, flat, 8 a chunk, 256 threads a block:
  // n = 255 x 8 + 7 is 256 chunks (one block) in the plain rule, and 255
  // whole chunks plus 7 tail threads (two blocks) under the option; the
  // peeled variant (an offset pointer) keeps its chunks.
  for (bool Tail : {false, true}) {
    CAPTURE(Tail);
    Graph G;
    Value Gt = G.input("g", DType::BF16, {"N"});
    Value U = G.input("u", DType::BF16, {"N"});
    G.output("y", nn::siluMul(Gt, U));
    Compiler C;
    CompileOptions Opts;
    Opts.FlatTailThreads = Tail;
    Executable X = C.compile(G, Opts);
    REQUIRE(X.kernels().size() == 1);
    for (int64_t N : {int64_t(255 * 8 + 7), int64_t(256 * 8), int64_t(3)}) {
      CAPTURE(N);
      for (int Offset : {0, 2}) {
        CAPTURE(Offset);
        CUdeviceptr In[] = {0x100000 + CUdeviceptr(Offset), 0x200000 + CUdeviceptr(Offset)};
        CUdeviceptr Out[] = {0x400000 + CUdeviceptr(Offset)};
        int64_t Dims[] = {N};
        X.run(In, Out, {}, Dims);
        const FakeCudaLaunch &L = fake().Last;
        CHECK(suffix(L) == (Offset ? "_p8" : "_v8"));
        int64_t Threads = Offset || !Tail ? (N + (Offset ? 7 : 0) + 7) / 8 : N / 8 + N % 8;
        CHECK(L.GridX == uint64_t((Threads + 255) / 256));
      }
    }
  }
}

TEST_CASE("a kept row over half the budget launches 1024 threads a row at any row count",
          "[hostpath][rowcache]") {
  requireFake();
  // add + RMSNorm over rows of 32064 bf16 (4008 chunks): x and residual
  // kept (RowCacheStageInputs), 256 B a thread at 512 threads, so 1024
  // (RowCacheWideThreads), the plain form at every row count. Without it,
  // 512 threads a row, and the wide form (re-read, 1024 threads) up to 132
  // rows; 4008 chunks are too few for the cluster form.
  for (bool WideCache : {true, false}) {
    CAPTURE(WideCache);
    Executable X = compileAddRmsNorm(true, 32064, false, true, true, WideCache);
    REQUIRE(X.kernels().size() == 1);
    CHECK(X.kernels()[0].FewRowsName.empty());
    CHECK(X.kernels()[0].WideRowsName.empty() == WideCache);
    for (int64_t Rows : {1, 66, 132, 133, 4185}) {
      CAPTURE(Rows);
      for (int Offset : {0, 2}) {
        CAPTURE(Offset);
        const FakeCudaLaunch &L = runRows(X, Rows, Offset);
        std::string Name = L.Function->Name;
        bool Wide = !WideCache && Rows <= 132;
        CHECK((Name.find("_t1024_") != std::string::npos) == Wide);
        CHECK(suffix(L) == (Offset ? "_p8" : "_v8"));
        CHECK(L.GridX == uint64_t(Rows));
        CHECK(L.BlockX == (WideCache || Wide ? 1024u : 512u));
      }
    }
  }
}

TEST_CASE("run() still rejects bad pointers and dims, then runs again", "[hostpath]") {
  requireFake();
  Executable X = compileAddRmsNorm();
  CUdeviceptr In[] = {0x100000, 0x200000, 0x300000}, Out[] = {0x400000, 0x500000};
  double Eps[] = {1e-6};
  int64_t One[] = {1}, Zero[] = {0}, Neg[] = {-1}, Huge[] = {int64_t(1) << 40};
  X.run(In, Out, Eps, One);
  CUdeviceptr NullX[] = {0, 0x200000, 0x300000};
  REQUIRE_THROWS_WITH(X.run(NullX, Out, Eps, One),
                      Catch::Contains("input 'x' is a null pointer but holds 4096 elements"));
  CUdeviceptr OddY[] = {0x400000, 0x500001};
  REQUIRE_THROWS_WITH(X.run(In, OddY, Eps, One),
                      Catch::Contains("output 'y' pointer 0x500001 is not aligned to its "
                                      "2-byte bf16 elements"));
  // No rows: x, residual and the outputs hold nothing and may be null; the
  // weight still holds 4096 elements.
  CUdeviceptr NullRows[] = {0, 0, 0x300000}, NullOut[] = {0, 0};
  uint64_t Before = fake().Launches;
  X.run(NullRows, NullOut, Eps, Zero);
  REQUIRE(fake().Launches == Before);
  CUdeviceptr NullW[] = {0x100000, 0x200000, 0};
  REQUIRE_THROWS_WITH(X.run(NullW, Out, Eps, Zero),
                      Catch::Contains("input 'weight' is a null pointer but holds 4096"));
  // The same null rows are an error once the dims give them elements.
  REQUIRE_THROWS_WITH(X.run(NullRows, NullOut, Eps, One),
                      Catch::Contains("input 'x' is a null pointer but holds 4096 elements"));
  REQUIRE_THROWS_WITH(X.run(In, Out, Eps, Neg),
                      Catch::Contains("dynamic dim 'B' = -1 is out of range"));
  REQUIRE_THROWS_WITH(X.run(In, Out, Eps, Huge),
                      Catch::Contains("input 'x' [B,4096] would hold"));
  // A failed preparation leaves nothing stale behind.
  X.run(In, Out, Eps, One);
  REQUIRE(fake().Launches == Before + 1);
  REQUIRE(fake().Last.GridX == 1);
  REQUIRE(param(fake().Last, 6) == 1);
}

TEST_CASE("CUDA graph mode updates only the nodes whose arguments changed", "[hostpath]") {
  requireFake();
  Executable X = compileAddRmsNorm();
  X.setCudaGraph(true);
  CUdeviceptr In[] = {0x100000, 0x200000, 0x300000}, Out[] = {0x400000, 0x500000};
  double Eps[] = {1e-6};
  int64_t Dims[] = {5};
  uint64_t Launches = fake().Launches, Replays = fake().GraphLaunches;
  X.run(In, Out, Eps, Dims);
  X.run(In, Out, Eps, Dims);
  REQUIRE(X.cudaGraphStats().Instantiations == 1);
  REQUIRE(X.cudaGraphStats().NodeUpdates == 0);
  REQUIRE(fake().GraphLaunches == Replays + 2);
  REQUIRE(fake().Launches == Launches);
  int64_t Dims2[] = {9};
  CUdeviceptr In2[] = {0x100000, 0x210000, 0x300000};
  X.run(In2, Out, Eps, Dims2);
  REQUIRE(X.cudaGraphStats().NodeUpdates == 1);
  const FakeCudaLaunch &L = fake().Last;
  requireParams(L, {In2[0], In2[1], In2[2], Out[0], Out[1], floatBits(1e-6f), 9});
  REQUIRE(int64_t(L.GridX) == (9 + X.kernels()[0].RowsPerBlock - 1) / X.kernels()[0].RowsPerBlock);
}

TEST_CASE("a row kept in shared memory launches with its bytes, opted in per kernel",
          "[hostpath][rowshared]") {
  requireFake();
  // bf16 rows of 32064: x and residual, 8 chunks of 8 a thread, 512
  // threads: 8 x 512 x 8 x (2 + 2) B = 128 KB a block (above the 48 KB a
  // kernel gets without opting in).
  constexpr unsigned Bytes = 131072;
  // RowCacheStageInputs off: with it x and residual (256 B a thread) stay
  // in registers and shared memory is not needed.
  Executable X = compileAddRmsNorm(true, 32064, true, true, false);
  REQUIRE(X.numKernels() == 1);
  CUdeviceptr In[] = {0x100000, 0x200000, 0x300000}, Out[] = {0x400000, 0x500000};
  CUdeviceptr Odd[] = {0x100002, 0x200000, 0x300000};
  double Eps[] = {1e-6};
  int64_t Dims[] = {3};
  for (bool Graph : {false, true}) {
    X.setCudaGraph(Graph);
    for (llvm::ArrayRef<CUdeviceptr> P : {llvm::ArrayRef<CUdeviceptr>(In), {Odd}}) {
      X.run(P, Out, Eps, Dims);
      const FakeCudaLaunch &L = fake().Last;
      INFO((Graph ? "graph mode, " : "direct, ") << "variant " << suffix(L));
      CHECK(L.SharedBytes == Bytes);
      CHECK(L.Function->MaxDynamicShared == int(Bytes));
    }
  }
  // Without the option the same kernel takes none.
  Executable Plain = compileAddRmsNorm(true, 32064, false);
  Plain.run(In, Out, Eps, Dims);
  CHECK(fake().Last.SharedBytes == 0);
  CHECK(fake().Last.Function->MaxDynamicShared == 0);
}

TEST_CASE("RowPhaseLoop: a peeled run of many rows launches the resident blocks",
          "[hostpath][rowphaseloop]") {
  requireFake();
  // add + RMSNorm bf16 x 4096: 256 threads a row, kept in registers, the
  // weight a row vector. The fake answers 3 blocks an SM on 132 SMs: 396
  // slots, 392 as a multiple of the 8-element vector.
  Executable X = compileAddRmsNorm(true, H, false, true, true, true, /*PhaseLoop=*/true);
  INFO(X.plan());
  REQUIRE(X.plan().find("(RowPhaseLoop)") != std::string::npos);
  const unsigned Slots = 132 * FakeResidentBlocksPerSm - (132 * FakeResidentBlocksPerSm) % 8;
  struct Case {
    int64_t Rows;
    int Offset;
    const char *Variant;
    unsigned Grid;
  };
  for (const Case &C : {Case{16384, 2, "_p8", Slots}, Case{16384, 0, "_v8", 16384u},
                        Case{Slots + 1, 6, "_p8", Slots}, Case{Slots, 6, "_p8", Slots},
                        Case{300, 2, "_p8", 300u}, Case{16384, 2, "_p8", Slots}}) {
    CAPTURE(C.Rows, C.Offset);
    const FakeCudaLaunch &L = runRows(X, C.Rows, C.Offset);
    CHECK(suffix(L) == C.Variant);
    CHECK(L.GridX == C.Grid);
    CHECK(L.BlockX == 256u);
  }
  // The option off (the default): a block a row.
  Executable Off = compileAddRmsNorm();
  CHECK(Off.plan().find("RowPhaseLoop") == std::string::npos);
  const FakeCudaLaunch &L = runRows(Off, 16384, 2);
  CHECK(suffix(L) == "_p8");
  CHECK(L.GridX == 16384u);
}

TEST_CASE("run() allocates nothing per call, direct or in CUDA graph mode", "[hostpath]") {
  requireFake();
  Executable X = compileAddRmsNorm();
  CUdeviceptr In[] = {0x100000, 0x200000, 0x300000}, Out[] = {0x400000, 0x500000};
  double Eps[] = {1e-6};
  int64_t Dims[] = {1};
  for (bool Graph : {false, true}) {
    CAPTURE(Graph);
    X.setCudaGraph(Graph);
    X.run(In, Out, Eps, Dims); // first graph-mode run builds the graph
    uint64_t Before = Allocations.load();
    for (int I = 0; I < 1000; ++I) {
      In[1] = 0x200000 + 16 * (I % 4); // new pointers: slots rewritten, nodes updated
      // Every third call at a 2-byte offset (the peeled variant: a graph
      // node's function changes) and with rows 0 or 3 (a node disabled, then
      // enabled again), as the [gpu] case does on the H200.
      In[0] = 0x100000 + (I % 3 == 1 ? 2 : 0);
      Dims[0] = I % 3 == 2 ? 0 : 1 + 2 * (I % 2);
      X.run(In, Out, Eps, Dims);
    }
    uint64_t After = Allocations.load();
    REQUIRE(After - Before == 0);
  }
}

TEST_CASE("a horizontal launch hands each part its block range and variant", "[hostpath]") {
  requireFake();
  // Two independent kernels in one launch: W8's row kernel over [B, 4096]
  // bf16 (parameters x, residual, w, r, y, eps, B) and an element-wise one
  // over [N, 1000] f32 (parameters z, z2, N), then the offset of part 1.
  Graph G = rowAndFlatParts();
  Compiler C;
  CompileOptions O;
  O.ExpectKernels = 2;
  O.ExpectLaunches = 1;
  Executable E = C.compile(G, O);
  REQUIRE(E.kernels()[0].Kind == KernelKind::RowReduce);
  REQUIRE(E.kernels()[1].Kind == KernelKind::Elementwise);
  const KernelInfo &Row = E.kernels()[0], &Flat = E.kernels()[1];
  REQUIRE(Row.Vecs == std::vector<int>{8, 8});
  REQUIRE(Flat.Vecs == std::vector<int>{4, 4});
  REQUIRE(Flat.ThreadsX == 256);
  double Sc[] = {1e-6};
  struct Step {
    int64_t B, N;
    CUdeviceptr ZOffset; // bytes: 16 keeps part 1 aligned, 4 makes it peel
    CUdeviceptr XOffset; // likewise for part 0 (bf16: 2 makes it peel)
    const char *Variant;
  };
  const Step Steps[] = {
      {3, 5, 0, 0, "_x0"},      {3, 5, 4, 0, "_x1"},   {3, 5, 0, 2, "_x1"},
      {1000, 1, 16, 0, "_x0"},  {7, 0, 0, 0, "_x0"},   {0, 9, 4, 0, "_x1"},
      {0, 0, 0, 0, nullptr},
  };
  for (const Step &S : Steps) {
    CAPTURE(S.B, S.N, S.ZOffset, S.XOffset);
    CUdeviceptr In[] = {0x100000 + S.XOffset, 0x200000, 0x300000, 0x400000 + S.ZOffset};
    CUdeviceptr Out[] = {0x500000, 0x600000, 0x700000};
    int64_t Dims[] = {S.B, S.N};
    REQUIRE(E.dynamicDims()[0] == "B");
    uint64_t Before = fake().Launches;
    E.run(In, Out, Sc, Dims);
    if (!S.Variant) {
      REQUIRE(fake().Launches == Before); // no part has blocks
      continue;
    }
    REQUIRE(fake().Launches == Before + 1);
    const FakeCudaLaunch &L = fake().Last;
    REQUIRE(suffix(L) == S.Variant);
    // Part 0: one block per RowsPerBlock rows. Part 1: one thread per chunk
    // of 4 elements; the peeled variant's range may start up to 3 elements
    // early, so it may need one chunk more.
    bool Peeled = std::string(S.Variant) == "_x1";
    int64_t RowBlocks = (S.B + Row.RowsPerBlock - 1) / Row.RowsPerBlock;
    int64_t Chunks = (S.N * 1000 + (Peeled ? 3 : 0) + 3) / 4;
    int64_t FlatBlocks = (Chunks + 255) / 256;
    REQUIRE(int64_t(L.GridX) == RowBlocks + FlatBlocks);
    REQUIRE(L.BlockX == unsigned(std::max(Row.ThreadsX * Row.RowsPerBlock, 256)));
    REQUIRE(L.BlockY == 1u);
    REQUIRE((param(L, 10) & 0xffffffffu) == uint64_t(RowBlocks)); // jf_b1
    REQUIRE(param(L, 0) == In[0]);
    REQUIRE(param(L, 6) == uint64_t(S.B));
    REQUIRE(param(L, 7) == In[3]);
    REQUIRE(param(L, 8) == Out[2]);
    REQUIRE(param(L, 9) == uint64_t(S.N));
  }
  // Graph mode: one node; a part that turns misaligned changes the node's
  // variant, grid and offset in place.
  E.setCudaGraph(true);
  CUdeviceptr In[] = {0x100000, 0x200000, 0x300000, 0x400000};
  CUdeviceptr Out[] = {0x500000, 0x600000, 0x700000};
  int64_t Dims[] = {3, 5};
  E.run(In, Out, Sc, Dims);
  REQUIRE(suffix(fake().Last) == "_x0");
  REQUIRE(E.cudaGraphStats().NodeUpdates == 0);
  In[3] = 0x400004;
  E.run(In, Out, Sc, Dims);
  REQUIRE(E.cudaGraphStats().Instantiations == 1);
  REQUIRE(E.cudaGraphStats().NodeUpdates == 1);
  const FakeCudaLaunch &L = fake().Last;
  REQUIRE(suffix(L) == "_x1");
  int64_t RowBlocks = (3 + Row.RowsPerBlock - 1) / Row.RowsPerBlock;
  REQUIRE(int64_t(L.GridX) == RowBlocks + (5 * 1000 + 6) / 4 / 256 + 1);
  REQUIRE((param(L, 10) & 0xffffffffu) == uint64_t(RowBlocks));
  REQUIRE(param(L, 7) == In[3]);
}

TEST_CASE("a horizontal launch runs its parts one by one above HorizontalMaxBytes",
          "[hostpath][horizontal]") {
  requireFake();
  // The launch of the case above with a 1 MiB limit: at B = 3, N = 5 its
  // parts move ~136 KB (one launch), at B = 1000 ~32 MB (two).
  Graph G = rowAndFlatParts();
  rt::CacheConfig MemoryOnly;
  MemoryOnly.Enabled = false;
  Compiler C(MemoryOnly);
  CompileOptions O;
  O.ExpectLaunches = 1;
  O.HorizontalMaxBytes = 1 << 20;
  Executable E = C.compile(G, O);
  // Cold: the parts' own kernels (2 + 2 variants) compile in the
  // background with the merged launch's peeled variant; the first run at
  // large dims loads them.
  CHECK_FALSE(E.stats().CacheHit);
  CHECK(E.stats().DeferredVariants == 5);
  double Sc[] = {1e-6};
  CUdeviceptr In[] = {0x100000, 0x200000, 0x300000, 0x400000};
  CUdeviceptr Out[] = {0x500000, 0x600000, 0x700000};
  const std::string FlatName = E.kernels()[1].Name;
  for (int64_t B : {3, 1000, 3, 1000}) {
    CAPTURE(B);
    int64_t Dims[] = {B, 5};
    uint64_t Before = fake().Launches;
    E.run(In, Out, Sc, Dims);
    REQUIRE(E.numLaunchesAt(Dims) == (B == 3 ? 1u : 2u));
    REQUIRE(fake().Launches == Before + E.numLaunchesAt(Dims));
    const FakeCudaLaunch &L = fake().Last;
    if (B == 3) {
      REQUIRE(std::string(L.Function->Name).rfind("jf_l0_h_x", 0) == 0);
      continue;
    }
    // The last launch is part 1 alone: its own parameters and grid.
    REQUIRE(std::string(L.Function->Name).rfind(FlatName + "_", 0) == 0);
    REQUIRE(param(L, 0) == In[3]);
    REQUIRE(param(L, 1) == Out[2]);
    REQUIRE(param(L, 2) == 5);
    REQUIRE(L.GridX > 0);
  }
  // Graph mode: a graph per form, each built once; neither launches
  // kernels directly.
  E.setCudaGraph(true);
  uint64_t Launches = fake().Launches, Replays = fake().GraphLaunches;
  for (int64_t B : {3, 1000, 3, 1000, 1000}) {
    int64_t Dims[] = {B, 5};
    E.run(In, Out, Sc, Dims);
  }
  REQUIRE(E.cudaGraphStats().Instantiations == 2);
  REQUIRE(fake().GraphLaunches == Replays + 5);
  REQUIRE(fake().Launches == Launches);
}

TEST_CASE("a horizontal part with few-rows and wide forms runs its plain variant",
          "[hostpath]") {
  requireFake();
  // Part 0: a long f32 row re-read per stage (x - mean(x) over 50257, odd:
  // peeled only), which has a few-rows and a wide form; part 1: an
  // independent element-wise kernel. The horizontal kernel holds part 0's
  // plain variant only. Before, the part counted its forms as variants, and
  // a misaligned x picked "variant" 1 or 2 of the part, past the launch's
  // one: a host crash in prepareLaunch (the [gpu] long-row tier, session 16).
  Graph G;
  Value X = G.input("x", DType::F32, {"B", 50257});
  Value Z = G.input("z", DType::BF16, {"B", 50257});
  G.output("centered", X - mean(X));
  G.output("z2", Z * 2.0);
  Compiler C;
  CompileOptions O;
  O.ExpectKernels = 2;
  O.ExpectLaunches = 1;
  O.HorizontalMaxBytes = -1; // combined at B = 200 too (120 MB)
  Executable E = C.compile(G, O);
  const KernelInfo &Row = E.kernels()[0];
  REQUIRE(Row.Kind == KernelKind::RowReduce);
  REQUIRE_FALSE(Row.FewRowsName.empty()); // the part has its forms ...
  REQUIRE_FALSE(Row.WideRowsName.empty());
  for (CUdeviceptr XOffset : {CUdeviceptr(0), CUdeviceptr(4), CUdeviceptr(8)}) {
    for (int64_t B : {int64_t(1), int64_t(3), int64_t(200)}) {
      CAPTURE(XOffset, B);
      CUdeviceptr In[] = {0x100000 + XOffset, 0x200000};
      CUdeviceptr Out[] = {0x300000 + XOffset, 0x400000};
      int64_t Dims[] = {B};
      uint64_t Before = fake().Launches;
      E.run(In, Out, {}, Dims);
      // ... and still one launch, the horizontal kernel's only variant.
      REQUIRE(fake().Launches == Before + 1);
      const FakeCudaLaunch &L = fake().Last;
      REQUIRE(suffix(L) == "_x0");
      // Part 0 is one block a row at its plain form's threads.
      REQUIRE((param(L, 6) & 0xffffffffu) == uint64_t(B)); // part 1's block offset
      REQUIRE(L.BlockX == unsigned(Row.ThreadsX));
    }
  }
}

TEST_CASE("host time of run() for a 1-launch graph (fake driver)", "[.hostbench]") {
  requireFake();
  Executable X = compileAddRmsNorm();
  CUdeviceptr In[] = {0x100000, 0x200000, 0x300000}, Out[] = {0x400000, 0x500000};
  double Eps[] = {1e-6};
  int64_t Dims[] = {1};
  for (bool Graph : {false, true}) {
    X.setCudaGraph(Graph);
    X.run(In, Out, Eps, Dims);
    double Best = 1e9;
    for (int Rep = 0; Rep < 5; ++Rep) {
      constexpr int Calls = 200000;
      auto T0 = std::chrono::steady_clock::now();
      for (int I = 0; I < Calls; ++I)
        X.run(In, Out, Eps, Dims);
      double Ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - T0)
                      .count() / Calls;
      Best = std::min(Best, Ns);
    }
    std::printf("run() of W8's graph (1 launch), %s: %.1f ns per call host time "
                "(best of 5 x 200000; the fake driver's calls cost ~nothing)\n",
                Graph ? "CUDA graph mode" : "direct", Best);
  }
}
