//===- tests/hostpath/test_host_path_rows.cpp - row forms at the launch ---===//
//
// The host path of row kernels with more than one form or launch rule: the
// cluster and wide forms, the 2-chunk form, the streamed copy, flat tails,
// 1024-thread rows, rows in shared memory and RowPhaseLoop's grid, each
// checked against the launch the fake driver saw (test_host_path.cpp has
// the rest and the header's notes).
//
//===----------------------------------------------------------------------===//
#include "HostPath.h"

using namespace jitfuse;
using namespace jitfuse::hostpath;

TEST_CASE("long rows: few enough rows launch the cluster form, then the wide one",
          "[hostpath][widerows]") {
  requireFake();
  // add + RMSNorm over rows of 128256 bf16 (16032 chunks: re-read, with a
  // form split over clusters of 8); the fake device has 132 SMs, so up to
  // 132 x 4 / 8 = 66 rows run split (codegen::launch::useFewRows). With
  // RowWideRows, up to 132 rows (one block an SM) then run 1024 threads a
  // row (useWideRows); beyond that, and without it, its cluster split
  // (RowClustersAligned, 8 blocks), at +2 B too (RowClustersPeeledNarrow:
  // 192 B of kept loads a thread, bounded).
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
        bool Split = !Few && !Wide;
        CHECK((Name.find("_c8_") != std::string::npos) == Few);
        CHECK((Name.find("_t1024_") != std::string::npos) == Wide);
        CHECK((Name.find("_ac8_") != std::string::npos) == Split);
        CHECK(suffix(L) == (Offset ? "_o8" : "_v8"));
        CHECK(L.GridX == uint64_t(Few || Split ? Rows * 8 : Rows));
        CHECK(L.BlockX == (Wide ? 1024u : 512u));
      }
    }
  }
}

TEST_CASE("RowClustersAligned: aligned runs of many long rows launch the cluster split",
          "[hostpath][widerows][aligned-cluster]") {
  requireFake();
  // add + RMSNorm over rows of 128256 bf16, re-read per stage: with
  // RowClustersAligned the kernel also carries its cluster split's aligned
  // variant (KernelPlan::AlignedCluster), which runs in place of the plain
  // aligned variant: aligned pointers, and more rows than the few-rows (66)
  // and wide (132) forms take on the fake device's 132 SMs. A pointer at
  // +2 B keeps the re-read peeled variant here (RowClustersPeeledNarrow
  // off; the test above has it on).
  Graph G = addRmsNormGraph(128256);
  // RowClustersAlignedOverWide (an experiment): the split's variant runs in
  // place of the wide form's aligned one too.
  for (auto [Aligned, OverWide] : {std::pair{true, false}, std::pair{false, false},
                                   std::pair{true, true}}) {
    CAPTURE(Aligned, OverWide);
    CompileOptions Opts;
    Opts.RowClustersAligned = Aligned;
    Opts.RowClustersAlignedOverWide = OverWide;
    Opts.RowClustersPeeledNarrow = false;
    Executable X = Compiler().compile(G, Opts);
    REQUIRE(X.kernels().size() == 1);
    const std::string &Split = X.kernels()[0].AlignedClusterName;
    CHECK(Split.empty() == !Aligned);
    // The split's cluster size, from its name (RowClusters' choice: the
    // fewest blocks of 2-8 that keep the row in registers).
    int K = Aligned ? std::stoi(Split.substr(Split.rfind("_ac") + 3)) : 1;
    CHECK((K == 1 || K == 2 || K == 4 || K == 8));
    CHECK((Aligned ? K > 1 : true));
    for (int64_t Rows : {1, 66, 67, 132, 133, 1000}) {
      CAPTURE(Rows);
      for (int Offset : {0, 2}) {
        CAPTURE(Offset);
        const FakeCudaLaunch &L = runRows(X, Rows, Offset);
        std::string Name = L.Function->Name;
        bool Few = Rows <= 66, Wide = !Few && Rows <= 132;
        bool Split = Aligned && !Few && (!Wide || OverWide) && Offset == 0;
        CHECK((Name.find("_ac") != std::string::npos) == Split);
        CHECK((Name.find("_t1024_") != std::string::npos) == (Wide && !Split));
        CHECK(suffix(L) == (Offset ? "_o8" : "_v8"));
        CHECK(L.GridX == uint64_t(Few ? Rows * 8 : Split ? Rows * K : Rows));
        CHECK(L.BlockX == (Wide && !Split ? 1024u : 512u));
      }
    }
  }
}

TEST_CASE("RowClustersPeeled: f32 runs of many long rows launch the split at any offset",
          "[hostpath][aligned-cluster]") {
  requireFake();
  // add + RMSNorm over rows of f32: 65536 (aligned and peeled variants) and
  // 50257 (odd: peeled only). With RowClustersPeeled every variant of the
  // cluster split runs in place of the plain form's of the same index at
  // more rows than the wide form takes: x at +4 B runs the split's peeled
  // (or output-led) variant; without it, only aligned pointers split.
  for (int64_t Len : {int64_t(65536), int64_t(50257)}) {
    for (bool Peeled : {true, false}) {
      CAPTURE(Len, Peeled);
      CompileOptions Opts;
      Opts.RowClustersPeeled = Peeled;
      Executable X = Compiler().compile(addRmsNormGraph(Len, DType::F32), Opts);
      REQUIRE(X.kernels().size() == 1);
      const std::string &Split = X.kernels()[0].AlignedClusterName;
      bool Odd = Len % 4 != 0;
      // An odd row has no aligned variant: the split only with Peeled.
      REQUIRE(Split.empty() == (Odd && !Peeled));
      int K = Split.empty() ? 1 : std::stoi(Split.substr(Split.rfind("_ac") + 3));
      for (int64_t Rows : {1, 132, 133, 1000}) {
        CAPTURE(Rows);
        for (int Offset : {0, 4}) {
          CAPTURE(Offset);
          const FakeCudaLaunch &L = runRows(X, Rows, Offset);
          std::string Name = L.Function->Name;
          bool Many = Rows > 132, Aligned = !Odd && Offset == 0;
          bool SplitRun = Many && (Peeled || Aligned);
          CHECK((Name.find("_ac") != std::string::npos) == SplitRun);
          CHECK((suffix(L) == "_v4") == Aligned);
          if (Many)
            CHECK(L.GridX == uint64_t(SplitRun ? Rows * K : Rows));
        }
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
        CHECK(suffix(L) == (Offset ? "_o8" : "_v8"));
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
        // x alone off: the output-led variant, at 1024 threads a row too.
        CHECK(suffix(L) == (Offset ? "_o8" : "_v8"));
        CHECK(L.GridX == uint64_t(Rows));
        CHECK(L.BlockX == (WideCache || Wide ? 1024u : 512u));
      }
    }
  }
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
  // x alone off: the peeled variant led by the output (OutputLedVariant),
  // which loops over rows as the input-led one does.
  for (const Case &C : {Case{16384, 2, "_o8", Slots}, Case{16384, 0, "_v8", 16384u},
                        Case{Slots + 1, 6, "_o8", Slots}, Case{Slots, 6, "_o8", Slots},
                        Case{300, 2, "_o8", 300u}, Case{16384, 2, "_o8", Slots}}) {
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
  CHECK(suffix(L) == "_o8");
  CHECK(L.GridX == 16384u);
}

