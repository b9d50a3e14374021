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
#include "HostPath.h"

#include "../BackwardPatterns.h"

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
#include <tuple>

using namespace jitfuse;
using namespace jitfuse::hostpath;

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
  // Aligned, peeled led by x, peeled led by residual_out.
  REQUIRE(X.kernels()[0].Vecs == std::vector<int>{8, 8, 8});
  double Eps[] = {1e-6};
  int64_t Dims[] = {2};
  for (int Offset : {0, 2, 4, 8, 14, 16}) {
    CAPTURE(Offset);
    CUdeviceptr In[] = {0x100000 + CUdeviceptr(Offset), 0x200000 + CUdeviceptr(Offset),
                        0x300000 + CUdeviceptr(Offset)};
    CUdeviceptr Out[] = {0x400000 + CUdeviceptr(Offset), 0x500000 + CUdeviceptr(Offset)};
    X.run(In, Out, Eps, Dims);
    REQUIRE(suffix(fake().Last) == (Offset % 16 == 0 ? "_v8" : "_p8"));
  }
}

TEST_CASE("ColumnReducePrologueOutputs: the [R, C] output's pointer picks the variant too",
          "[hostpath]") {
  requireFake();
  // ReLU backward + bias gradient in one column kernel: dz stored as 16-byte
  // vectors by the aligned variant, db ([1, C]) one element a thread.
  Graph G = test::reluBackward(Dim(H));
  Compiler C;
  CompileOptions Opts;
  Opts.ColumnReducePrologueOutputs = true;
  Executable X = C.compile(G, Opts);
  REQUIRE(X.numKernels() == 1);
  REQUIRE(X.kernels()[0].Vecs == std::vector<int>{8, 1});
  int64_t Dims[] = {64};
  for (auto [DzOff, DbOff, Want] : {std::tuple{0, 0, "_v8"}, std::tuple{2, 0, "_v1"},
                                    std::tuple{0, 4, "_v8"}, std::tuple{16, 4, "_v8"}}) {
    CAPTURE(DzOff, DbOff);
    CUdeviceptr In[] = {0x100000, 0x200000};
    CUdeviceptr Out[] = {0x300000 + CUdeviceptr(DzOff), 0x400000 + CUdeviceptr(DbOff)};
    X.run(In, Out, {}, Dims);
    REQUIRE(suffix(fake().Last) == Want);
  }
}

TEST_CASE("OutputLedVariant: the peeled variant follows the output when x's phase differs",
          "[hostpath][outputled]") {
  requireFake();
  // add + RMSNorm bf16 x 4096: inputs x, residual, weight; outputs
  // residual_out (the lead output), y. Offsets in bytes; a phase is the
  // offset / 2 mod 8. Without PeeledSamePhase (the test below has it): the
  // two leads' phases alone pick.
  CompileOptions NoSame;
  NoSame.PeeledSamePhase = false;
  Executable X = Compiler().compile(addRmsNormGraph(H), NoSame);
  INFO(X.plan());
  struct Case {
    unsigned X, Res, W, ResOut, Y;
    const char *Variant;
  };
  for (const Case &C : {
           Case{2, 0, 0, 0, 0, "_o8"},    // x a slice: stores stay whole
           Case{2, 2, 2, 2, 2, "_p8"},    // one phase: led by x
           Case{0, 0, 0, 4, 0, "_o8"},    // an output off alone
           Case{2, 0, 0, 2, 0, "_p8"},    // x and the lead output agree
           Case{18, 0, 0, 2, 6, "_p8"},   // x 16 bytes further: the same phase
           Case{16, 2, 0, 0, 0, "_p8"},   // the residual off: x and the output agree
           Case{0, 0, 2, 0, 0, "_p8"},    // the weight off alone
           Case{0, 0, 0, 0, 0, "_v8"},    // every tensor aligned
           Case{14, 0, 0, 6, 0, "_o8"}}) { // phases 7 and 3
    CAPTURE(C.X, C.Res, C.W, C.ResOut, C.Y);
    const FakeCudaLaunch &L = runAtOffsets(X, C.X, C.Res, C.W, C.ResOut, C.Y);
    CHECK(suffix(L) == C.Variant);
    CHECK(L.GridX == 16384u);
  }
  // The option off: one peeled variant, led by x, whatever the outputs.
  Graph G;
  Value Xv = G.input("x", DType::BF16, {"B", H});
  Value Res = G.input("residual", DType::BF16, {"B", H});
  Value W = G.input("weight", DType::BF16, {H});
  Value R = Xv + Res;
  G.output("residual_out", R);
  G.output("y", nn::rmsNorm(R, W, G.scalar("eps", DType::F32)));
  CompileOptions Off;
  Off.OutputLedVariant = false;
  Off.PeeledSamePhase = false;
  Executable One = Compiler().compile(G, Off);
  CHECK(One.kernels()[0].Vecs == std::vector<int>{8, 8});
  CHECK(runRows(One, 16384, 2).Function->Name == One.kernels()[0].Name + "_p8");
}

TEST_CASE("PeeledSamePhase: the input-led variant runs only where every tensor of the row's "
          "layout shares x's phase",
          "[hostpath][outputled]") {
  requireFake();
  // add + RMSNorm bf16 x 4096 (a multiple of 8: the weight is one of them
  // too) and x 4099 (odd: the weight is not, the rows' tensors are).
  for (int64_t Len : {H, int64_t(4099)}) {
    Graph G = addRmsNormGraph(Len);
    CompileOptions Opts;
    Opts.PeeledSamePhase = true;
    Executable X = Compiler().compile(G, Opts);
    INFO("x " << Len << "\n" << X.plan());
    const bool WeightToo = Len % 8 == 0;
    struct Case {
      unsigned X, Res, W, ResOut, Y;
      bool Led; // the input-led (same-phase) variant, else the output-led
    };
    for (const Case &C : {
             Case{2, 2, 2, 2, 2, true},      // one phase
             Case{18, 2, 34, 2, 18, true},   // the same phases, 16 bytes apart
             Case{2, 0, 0, 0, 0, false},     // x a slice
             Case{2, 0, 0, 2, 0, false},     // the residual and y aligned
             Case{16, 2, 0, 0, 0, false},    // the residual off alone
             Case{0, 0, 0, 0, 4, false},     // y off alone
             Case{2, 2, 0, 2, 2, !WeightToo}, // the weight's phase differs
             Case{14, 0, 0, 6, 0, false}}) {
      CAPTURE(C.X, C.Res, C.W, C.ResOut, C.Y);
      CHECK(suffix(runAtOffsets(X, C.X, C.Res, C.W, C.ResOut, C.Y)) == (C.Led ? "_p8" : "_o8"));
    }
    // Aligned pointers of a row of 4096 run the aligned variant as before.
    if (Len % 8 == 0)
      CHECK(suffix(runRows(X, 16384, 0)) == "_v8");
  }
}

TEST_CASE("a cold compile defers the peeled variant, the first misaligned run loads it",
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
  // The peeled variants led by x and by y are left to the background.
  REQUIRE(E.kernels()[0].Vecs == std::vector<int>{8, 8, 8});
  CHECK_FALSE(E.stats().CacheHit);
  CHECK(E.stats().DeferredVariants == 2);
  double Eps[] = {1e-6};
  int64_t Dims[] = {3};
  CUdeviceptr Out[] = {0x400000};
  for (int Offset : {0, 2, 0, 6, 16}) {
    CAPTURE(Offset);
    CUdeviceptr In[] = {0x100000 + CUdeviceptr(Offset), 0x300000};
    E.run(In, Out, Eps, Dims);
    // x alone off: the variant led by the output.
    REQUIRE(suffix(fake().Last) == (Offset % 16 == 0 ? "_v8" : "_o8"));
  }
  // The same program again: found in memory, nothing deferred, and its
  // peeled variant runs (from the partial entry's background compile, or
  // the complete entry that replaced it).
  Executable Again = C.compile(G);
  CHECK(Again.stats().CacheHit);
  CHECK(Again.stats().DeferredVariants == 0);
  CUdeviceptr In[] = {0x100002, 0x300000};
  Again.run(In, Out, Eps, Dims);
  CHECK(suffix(fake().Last) == "_o8");
  // Opted out: every variant compiled by compile().
  rt::CacheConfig Other = MemoryOnly;
  Compiler Eager(Other);
  CompileOptions NoDefer;
  NoDefer.DeferVariants = false;
  Executable All = Eager.compile(G, NoDefer);
  CHECK_FALSE(All.stats().CacheHit);
  CHECK(All.stats().DeferredVariants == 0);
  All.run(In, Out, Eps, Dims);
  CHECK(suffix(fake().Last) == "_o8");
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
  REQUIRE(Row.Vecs == std::vector<int>{8, 8, 8}); // the last led by the output
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
  // Cold: the parts' own kernels (3 + 2 variants: the row kernel's output-
  // led variant is not shared, so the merged launch has two) compile in the
  // background with the merged launch's peeled variant; the first run at
  // large dims loads them.
  CHECK_FALSE(E.stats().CacheHit);
  CHECK(E.stats().DeferredVariants == 6);
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
