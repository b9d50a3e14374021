//===- tests/test_mix_block_rows.cpp - several rows a mixed block ---------===//
//
// Several rows a mixed block (launch::MixBlockRowsRule since session 38;
// CompileOptions::MixBlockRows sets another count): the mixed row kernel of
// a narrow row (a few warps a row) works on several rows of its group side
// by side (threadIdx.y), each with its own accumulators and block
// reductions' scratch, and adds them in row order into the group's partial. Rows of a
// warp or less (from launch::MixMinColumns, 256 columns) take the row schedule's rows a
// block the same way. The rows-a-block rule, the plans, the launch, the
// generated code and the option's range on the CPU; on a GPU the reference
// across row counts, element sizes, odd rows and misaligned pointers.
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"

#include "codegen/LaunchRule.h"
#include "driver/Compiler.h"

#include <catch2/catch.hpp>
#include <fmt/ranges.h>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

CompileOptions narrowOptions(int64_t BlockRows) {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixOrderColumns = true;
  O.MixMinRows = 0;
  O.MixMinColumns = codegen::launch::MixMinColumnsAllowed;
  O.MixBlockRows = BlockRows;
  return O;
}

/// The plan's one kernel, a copy: the plan is often a temporary (a
/// reference into it dangled; AddressSanitizer, CI's job 2).
KernelPlan onlyPlan(const GraphPlan &P) {
  REQUIRE(P.Kernels.size() == 1);
  return P.Kernels[0];
}

/// A graph of a [gpu] case, named for its messages.
struct NamedGraph {
  const char *Name;
  Graph G;
};

/// Each graph at each row count B against the reference, with \p Base's
/// options: aligned, then every tensor one element off (the peeled
/// variants). One mixed kernel each.
void checkMixedGraphs(std::vector<NamedGraph> &Cases, std::initializer_list<int64_t> Rows,
                      const CheckOptions &Base) {
  for (NamedGraph &C : Cases)
    for (int64_t B : Rows) {
      INFO(C.Name << " B=" << B);
      CheckOptions O = Base;
      O.ExpectFusedKernels = 1;
      checkGraph(C.G, randomBindings(C.G, {{"B", B}}, {}, O), O);
      O.MisalignElems = 1;
      checkGraph(C.G, randomBindings(C.G, {{"B", B}}, {}, O), O);
    }
}

} // namespace

TEST_CASE("MixBlockRows: rows a block within threads and shared memory", "[mix-block-rows]") {
  using codegen::launch::mixBlockRows;
  CHECK(codegen::launch::MixBlockThreads == 512);
  CHECK(mixBlockRows(128, 8192, 4) == 4);
  CHECK(mixBlockRows(128, 8192, 8) == 4);   // 512 threads
  CHECK(mixBlockRows(64, 6144, 8) == 5);    // 32 KiB of accumulators
  CHECK(mixBlockRows(512, 16384, 4) == 1);  // a row is the block already
  CHECK(mixBlockRows(128, 40000, 4) == 1);  // one row's always fit (mixFits)
  CHECK(mixBlockRows(128, 8192, 0) == 1);
  CHECK(mixBlockRows(32, 1024, 4) == 4);
}

TEST_CASE("MixBlockRows: plans, launch and code of several rows a block", "[mix-block-rows]") {
  // LayerNorm backward bf16 x 1021: 128 chunks, 128 threads a row; 4 rows
  // a block (2 x 1024 slots x 4 bytes = 8 KiB of accumulators a row).
  Graph G = layerNormBackward(Dim(1021));
  const KernelPlan &K = onlyPlan(Compiler::plan(G, narrowOptions(4)));
  CHECK(K.MixColumns.size() == 2);
  CHECK(K.ThreadsX == 128);
  CHECK(K.RowsPerBlock == 4);
  CHECK(!K.MixTwoRows);
  CHECK(!K.RowOkKnown);
  CHECK_THAT(K.Why, Contains("4 rows at a time (threadIdx.y; 128 threads a row)"));
  codegen::LaunchRule L(K);
  auto S = L.shape({int64_t(1000) * 1021, 1000, 1021}, 8, 132, true);
  REQUIRE(S);
  CHECK(S->BlockX == 128);
  CHECK(S->BlockY == 4);
  // Blocks of 512 threads: 256 groups at most, of at least 4 rows (a
  // block's): 250 groups of 4 rows, then 2 x 32 combining tiles.
  CHECK(K.MixMaxGroups == 256);
  CHECK(K.MixMinGroupRows == 4);
  CHECK(S->GridX == 250 + 64);

  Executable X = testCompiler().compile(G, narrowOptions(4));
  REQUIRE(X.numKernels() == 1);
  const std::string &Src = X.source();
  CHECK_THAT(Src, Contains("__launch_bounds__(512"));
  CHECK_THAT(Src, Contains("const int jf_tid = threadIdx.y * 128 + threadIdx.x;"));
  CHECK_THAT(Src, Contains("jf_mr += 4)"));
  CHECK_THAT(Src, Contains("row = jf_mr + threadIdx.y;"));
  CHECK_THAT(Src, Contains("const bool rowOk = row < jf_r1;"));
  CHECK_THAT(Src, Contains("float *const jf_mrow = jf_macc + threadIdx.y * 2048;"));
  CHECK_THAT(Src, Contains("jf_macc[8192];"));
  // Each row's block reductions use its own scratch.
  CHECK_THAT(Src, Contains("[4][5];"));
  CHECK_THAT(Src, Contains("[threadIdx.y]"));
  // The group's partial adds the rows' accumulators in order.
  CHECK_THAT(Src, Contains("a = jf_add_op()(a, jf_macc[6144 + jf_sl]);"));
  CHECK_THAT(Src, Contains("for (int c = jf_tid; c < 1021; c += 512)"));

  // f32 x 1024: 256 threads a row, 2 rows a block at most (512 threads);
  // RMSNorm bf16 x 768: 64 threads a row, 8 rows (6 KiB... 3 KiB a row).
  const KernelPlan &F = onlyPlan(Compiler::plan(layerNormBackwardOf(f32, Dim(1024)),
                                                narrowOptions(32)));
  CHECK(F.ThreadsX == 256);
  CHECK(F.RowsPerBlock == 2);
  const KernelPlan &R = onlyPlan(Compiler::plan(rmsNormBackward(bf16, Dim(768)),
                                                narrowOptions(32)));
  CHECK(R.ThreadsX == 64);
  CHECK(R.RowsPerBlock == 8);
  CHECK(testCompiler().compile(rmsNormBackward(bf16, Dim(768)), narrowOptions(32))
            .numKernels() == 1);
}

TEST_CASE("MixBlockRows: a row of a whole block keeps its kernel", "[mix-block-rows]") {
  CompileOptions O = narrowOptions(0);
  O.MixMinColumns = 0;
  Graph G = layerNormBackward(Dim(4096));
  const KernelPlan &K = onlyPlan(Compiler::plan(G, O));
  CHECK(K.RowsPerBlock == 1);
  CHECK(K.MixTwoRows);
  std::string Src = testCompiler().compile(G, O).source();
  CHECK_THAT(Src, !Contains("jf_tid"));
  CHECK_THAT(Src, !Contains("jf_mrow"));
  CHECK_THAT(Src, Contains("if (threadIdx.x == 0) jf_ticket = atomicAdd(jf_counter, 1u);"));
  // A row of 512 threads is a whole block: the option changes nothing.
  O.MixBlockRows = 4;
  CHECK(testCompiler().compile(G, O).source() == Src);
  // Its range.
  O.MixBlockRows = -1;
  CHECK_THROWS_AS(Compiler::plan(G, O), Error);
  O.MixBlockRows = 33;
  CHECK_THROWS_AS(Compiler::plan(G, O), Error);
}

TEST_CASE("GPU: several rows a mixed block match the reference", "[gpu][mix-block-rows]") {
  if (!haveGpu())
    return;
  struct Case {
    const char *Name;
    Graph G;
    int64_t BlockRows;
  };
  std::vector<Case> Cases;
  Cases.push_back({"LayerNorm bf16 x 1021", layerNormBackward(Dim(1021)), 4});
  Cases.push_back({"LayerNorm f32 x 768", layerNormBackwardOf(f32, Dim(768)), 32});
  Cases.push_back({"RMSNorm bf16 x 768", rmsNormBackward(bf16, Dim(768)), 32});
  Cases.push_back({"RMSNorm f16 x 1024", rmsNormBackward(f16, Dim(1024)), 3});
  // Rows of a warp: the row schedule's 4 rows a block.
  Cases.push_back({"LayerNorm bf16 x 256", layerNormBackward(Dim(256)), 0});
  Cases.push_back({"column stats bf16 x 1000", normWithColumnStats(bf16, Dim(1000)), 4});
  for (Case &C : Cases)
    for (int64_t B : {1, 3, 130, 1001}) {
      INFO(C.Name << " B=" << B);
      CheckOptions O;
      O.MixOrderColumns = true;
      O.MixMinRows = 0;
      O.MixMinColumns = codegen::launch::MixMinColumnsAllowed;
      O.MixBlockRows = C.BlockRows;
      O.ExpectFusedKernels = 1;
      checkGraph(C.G, randomBindings(C.G, {{"B", B}}, {}, O), O);
      // Misaligned pointers: the peeled variant.
      O.MisalignElems = 1;
      checkGraph(C.G, randomBindings(C.G, {{"B", B}}, {}, O), O);
    }
}

TEST_CASE("MixBlockRows: the narrow rows' mixed kernels keep everything in registers",
          "[mix-block-rows][resources]") {
  int MaxRegisters = 0;
  for (bool LayerNorm : {true, false})
    for (DType T : {DType::F32, DType::BF16, DType::F16})
      for (int64_t H : {int64_t(768), int64_t(1021), int64_t(1024), int64_t(1536)})
        for (int64_t Rows : {int64_t(0), int64_t(4), int64_t(32)}) {
          CompileOptions O = narrowOptions(Rows);
          O.DeferVariants = false;
          Graph G = LayerNorm ? layerNormBackwardOf(T, Dim(H)) : rmsNormBackward(T, Dim(H));
          Executable E = testCompiler().compile(G, O);
          INFO((LayerNorm ? "LayerNorm" : "RMSNorm") << " backward " << dtypeName(T).str()
                                                     << " x " << H << ", MixBlockRows " << Rows
                                                     << "\n"
                                                     << E.plan());
          REQUIRE(E.numKernels() == 1);
          CHECK(E.compileLog().find("warning") == std::string::npos);
          // The peeled variants under MixPeeledBound's 64 registers (rows
          // of two chunks on some threads) trade a few spilled bytes for a
          // fourth block an SM (1.17-1.41x at 16-bit offsets, H100, session
          // 39): at most 72 B (68 the most seen); every other variant none.
          const bool Bounded = onlyPlan(Compiler::plan(G, O)).PeeledMinBlocksPerSm > 0;
          for (const rt::KernelResources &K : E.kernelResources()) {
            INFO("kernel " << K.Name << ": " << K.Registers << " registers, "
                           << K.SpillStoreBytes << " B spilled");
            // Variants end in _v<width> (aligned), _p<width> (peeled) or
            // _o<width> (the output-led peeled one).
            const size_t Us = K.Name.rfind('_');
            const bool Peeled = Us != std::string::npos && Us + 1 < K.Name.size() &&
                                (K.Name[Us + 1] == 'p' || K.Name[Us + 1] == 'o');
            const int64_t Allowed = Bounded && Peeled ? 72 : 0;
            CHECK(K.SpillStoreBytes <= Allowed);
            CHECK(K.SpillLoadBytes <= Allowed);
            CHECK(K.StackBytes <= Allowed);
            if (Bounded && Peeled)
              CHECK(K.Registers <= 64);
            MaxRegisters = std::max(MaxRegisters, K.Registers);
          }
        }
  std::printf("narrow mixed kernels: at most %d registers a thread\n", MaxRegisters);
}

// Accumulators past the 32 KiB of static shared memory are the launch's
// dynamic shared memory: up to the rule's 64 KiB (launch::
// MixRuleSharedBytes), and past it with CompileOptions::MixMaxSharedBytes.
TEST_CASE("MixMaxSharedBytes: long rows keep their accumulators in dynamic shared memory",
          "[mix-block-rows]") {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixOrderColumns = true;
  O.MixMinRows = 0;
  Graph G = rmsNormBackward(bf16, Dim(11008));
  O.MixMaxSharedBytes = 32768; // the static limit only
  CHECK(Compiler::plan(G, O).Kernels.size() > 1);
  O.MixMaxSharedBytes = 0; // the rule's 64 KiB
  const KernelPlan &K = onlyPlan(Compiler::plan(G, O));
  CHECK(K.MixDynamicShared);
  CHECK(K.RowsPerBlock == 1);
  codegen::LaunchRule L(K);
  // 11008 f32 accumulators (8 lanes x 1376 slots).
  CHECK(L.dynamicSharedBytes(8) == 11008 * 4);
  auto S = L.shape({int64_t(1000) * 11008, 1000, 11008}, 8, 132, false);
  REQUIRE(S);
  CHECK(S->SharedBytes == 11008 * 4);
  CompileOptions R = O;
  R.DeferVariants = false;
  Executable X = testCompiler().compile(G, R);
  REQUIRE(X.numKernels() == 1);
  CHECK_THAT(X.source(), Contains("extern __shared__ __align__(16) unsigned char jf_dyn[];"));
  CHECK_THAT(X.source(), Contains("float *const jf_macc = reinterpret_cast<float *>(jf_dyn);"));
  CHECK_THAT(X.source(), !Contains("__shared__ __align__(16) float jf_macc["));
  for (const rt::KernelResources &KR : X.kernelResources()) {
    INFO(KR.Name << ": " << KR.Registers << " registers");
    CHECK(KR.SpillStoreBytes == 0);
    CHECK(KR.StackBytes == 0);
  }
  // LayerNorm backward f32 x 6144: 48 KiB of accumulators, within the
  // rule's; bf16 x 11008's 86 KiB past it.
  Graph LN = layerNormBackwardOf(f32, Dim(6144));
  CHECK(Compiler::plan(LN, O).Kernels.size() == 1);
  Graph LN11 = layerNormBackward(Dim(11008));
  CHECK(Compiler::plan(LN11, O).Kernels.size() > 1);
  O.MixMaxSharedBytes = 90112;
  CHECK(Compiler::plan(LN11, O).Kernels.size() == 1);
  O.MixMaxSharedBytes = 0;
  // Under the rule's 32 KiB nothing changes: the same kernel text.
  Graph W21 = layerNormBackward(Dim(4096));
  std::string Rule = testCompiler().compile(W21, O).source();
  O.MixMaxSharedBytes = 200 * 1024;
  CHECK(testCompiler().compile(W21, O).source() == Rule);
  // The range.
  O.MixMaxSharedBytes = 32767;
  CHECK_THROWS_AS(Compiler::plan(G, O), Error);
  O.MixMaxSharedBytes = 200 * 1024 + 1;
  CHECK_THROWS_AS(Compiler::plan(G, O), Error);
}

TEST_CASE("GPU: long rows' dynamic shared accumulators match the reference",
          "[gpu][mix-block-rows]") {
  if (!haveGpu())
    return;
  std::vector<NamedGraph> Cases;
  Cases.push_back({"RMSNorm bf16 x 11008", rmsNormBackward(bf16, Dim(11008))});
  Cases.push_back({"LayerNorm f32 x 6144", layerNormBackwardOf(f32, Dim(6144))});
  Cases.push_back({"LayerNorm bf16 x 14335", layerNormBackward(Dim(14335))});
  CheckOptions O;
  O.MixOrderColumns = true;
  O.MixMinRows = 0;
  O.MixMaxSharedBytes = 200 * 1024;
  checkMixedGraphs(Cases, {1, 7, 600}, O);
}

TEST_CASE("MixMaxSharedBytes: long rows' mixed kernels keep everything in registers",
          "[mix-block-rows][resources]") {
  int MaxRegisters = 0, Mixed = 0;
  for (bool LayerNorm : {true, false})
    for (DType T : {DType::F32, DType::BF16})
      // 4999-8192: LayerNorm's two reductions past 32 KiB within the rule's
      // 64 KiB (RMSNorm's one within the static 32).
      for (int64_t H : {int64_t(4999), int64_t(6144), int64_t(8192), int64_t(11008),
                        int64_t(14336), int64_t(32064)}) {
        CompileOptions O;
        O.Arch = "sm_90";
        O.MixOrderColumns = true;
        O.MixMinRows = 0;
        O.MixMaxSharedBytes = 200 * 1024;
        O.DeferVariants = false;
        Graph G = LayerNorm ? layerNormBackwardOf(T, Dim(H)) : rmsNormBackward(T, Dim(H));
        Executable E = testCompiler().compile(G, O);
        INFO((LayerNorm ? "LayerNorm" : "RMSNorm") << " backward " << dtypeName(T).str() << " x "
                                                   << H << "\n"
                                                   << E.plan());
        // One f32 accumulator a column and reduction within 200 KiB.
        int64_t Bytes = (LayerNorm ? 2 : 1) * H * 4;
        CHECK((E.numKernels() == 1) == (Bytes <= 200 * 1024));
        Mixed += E.numKernels() == 1;
        CHECK_THAT(E.compileLog(), !Contains("warning"));
        for (const rt::KernelResources &K : E.kernelResources()) {
          INFO("kernel " << K.Name << ": " << K.Registers << " registers, "
                         << K.SpillStoreBytes << " B spilled");
          const int Limit = boundedSplitVariant(E, K.Name) ? BoundedSplitSpillBytes : 0;
          CHECK(K.SpillStoreBytes <= Limit);
          CHECK(K.StackBytes <= Limit);
          MaxRegisters = std::max(MaxRegisters, K.Registers);
        }
      }
  std::printf("long mixed kernels: %d mixed, at most %d registers a thread\n", Mixed,
              MaxRegisters);
}

// CompileOptions::MixThreadsRoundUp (an experiment): rows whose chunks are
// not a power of two take the power of two above them, one chunk a thread
// (16-bit x 768: 96 chunks, 128 threads, a quarter idle) instead of the one
// below with two chunks on some threads (64 threads), whose peeled
// variants needed 79-82 registers (ptxas, session 38).
TEST_CASE("MixThreadsRoundUp: one chunk a thread, fewer registers", "[mix-block-rows]") {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixMinRows = 0;
  Graph G = layerNormBackward(Dim(768));
  CHECK(onlyPlan(Compiler::plan(G, O)).ThreadsX == 64);
  O.MixThreadsRoundUp = true;
  KernelPlan K = onlyPlan(Compiler::plan(G, O));
  CHECK(K.ThreadsX == 128);
  CHECK(K.RowsPerBlock == 4);
  CHECK(K.MixMaxGroups == 256); // 512 threads a block
  CHECK_THAT(K.Why, Contains("128 threads a row (1 chunk each)"));
  // A power of two of chunks keeps its count: bf16 x 1024, 128 threads.
  CHECK(onlyPlan(Compiler::plan(layerNormBackward(Dim(1024)), O)).ThreadsX == 128);
  int MaxRegisters = 0;
  for (bool LayerNorm : {true, false})
    for (DType T : {DType::F32, DType::BF16})
      for (int64_t H : {int64_t(768), int64_t(1536)}) {
        O.DeferVariants = false;
        Graph N = LayerNorm ? layerNormBackwardOf(T, Dim(H)) : rmsNormBackward(T, Dim(H));
        Executable E = testCompiler().compile(N, O);
        INFO((LayerNorm ? "LayerNorm" : "RMSNorm") << " backward " << dtypeName(T).str() << " x "
                                                   << H << "\n"
                                                   << E.plan());
        REQUIRE(E.numKernels() == 1);
        for (const rt::KernelResources &R : E.kernelResources()) {
          INFO("kernel " << R.Name << ": " << R.Registers << " registers");
          CHECK(R.SpillStoreBytes == 0);
          CHECK(R.StackBytes == 0);
          // Under the launch bound of 1024 threads an SM (64 registers).
          CHECK(R.Registers <= 64);
          MaxRegisters = std::max(MaxRegisters, R.Registers);
        }
      }
  std::printf("mixed kernels of rows rounded up: at most %d registers a thread\n", MaxRegisters);
}

TEST_CASE("GPU: rows rounded up to a power of two of threads match the reference",
          "[gpu][mix-block-rows]") {
  if (!haveGpu())
    return;
  std::vector<NamedGraph> Cases;
  Cases.push_back({"LayerNorm bf16 x 768", layerNormBackward(Dim(768))});
  Cases.push_back({"RMSNorm bf16 x 1536", rmsNormBackward(bf16, Dim(1536))});
  Cases.push_back({"LayerNorm f32 x 1021", layerNormBackwardOf(f32, Dim(1021))});
  CheckOptions O;
  O.MixMinRows = 0; // the mixed kernel at 1 row too
  O.MixThreadsRoundUp = true;
  checkMixedGraphs(Cases, {1, 130, 1001}, O);
}

// CompileOptions::MixPhaseSlots (an experiment): a peeled variant of rows
// of whole chunks (C % Vec == 0) keeps column col's accumulator at the
// slot of (col + jf_mph) % C, jf_mph the lead's phase, so a whole chunk's
// columns take constant offsets from one index (16-byte groups where the
// aligned variant has them) and the head's and tail's elements share slot
// chunk 0. Rows of another length keep the slots of their columns.
TEST_CASE("MixPhaseSlots: peeled slots shifted by the lead's phase", "[mix-block-rows]") {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixMinRows = 0;
  O.MixPhaseSlots = true;
  O.DeferVariants = false;
  auto Sources = [&](const Graph &G) {
    Executable E = testCompiler().compile(G, O);
    REQUIRE(E.numKernels() == 1);
    return E.kernels()[0].Source;
  };
  std::string S = Sources(layerNormBackward(Dim(1536)));
  // The peeled and the output-led variants, from their own lead.
  CHECK_THAT(S, Contains("const int jf_mph = jf_phase<jf_bf16, 8>(in_0);"));
  CHECK_THAT(S, Contains("const int jf_mph = jf_phase<jf_bf16, 8>(out_0);"));
  CHECK_THAT(S, Contains("const int jf_s = (int)((col + jf_mph) / 8);"));
  CHECK_THAT(S, Contains("(c) + jf_mph < 1536 ? (c) + jf_mph : (c) + jf_mph - 1536"));
  // f32 x 1024, one chunk a thread: the 16-byte groups in the peeled
  // variants too.
  std::string F = Sources(layerNormBackwardOf(f32, Dim(1024)));
  CHECK_THAT(F, Contains("const int jf_s = (int)((col + jf_mph) / 4);"));
  size_t Groups = 0;
  for (size_t At = F.find("float4 &jf_q0_0"); At != std::string::npos;
       At = F.find("float4 &jf_q0_0", At + 1))
    ++Groups;
  CHECK(Groups == 3); // aligned, peeled, output-led
  // 1021 columns: rows at several phases, the columns' own slots.
  CHECK(Sources(layerNormBackward(Dim(1021))).find("jf_mph") == std::string::npos);
  // Off (the default): no shift.
  O.MixPhaseSlots = false;
  CHECK(Sources(layerNormBackward(Dim(1536))).find("jf_mph") == std::string::npos);
}

// CompileOptions::MixPeeledBound (the rule, session 39): the peeled
// variants of a mixed kernel whose rows take more chunks than threads (some
// threads two) under the aligned one's launch bound of several rows a
// block (1024 threads an SM); rows of one chunk a thread and dynamic shared
// accumulators stay unbounded.
TEST_CASE("MixPeeledBound: the peeled variants' launch bound", "[mix-block-rows]") {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixMinRows = 0;
  Graph G = layerNormBackward(Dim(1536));
  KernelPlan K = onlyPlan(Compiler::plan(G, O));
  REQUIRE(K.ThreadsX * K.RowsPerBlock == 256);
  CHECK(K.PeeledMinBlocksPerSm == 4);
  CHECK_THAT(K.Why, Contains("the peeled variants' registers bounded for 4 blocks an SM"));
  std::string S = testCompiler().compile(G, O).kernels()[0].Source;
  CHECK_THAT(S, Contains("__launch_bounds__(256, 4) jf_k0_cast_p8("));
  CHECK_THAT(S, Contains("__launch_bounds__(256, 4) jf_k0_cast_o8("));
  // The rule's other 16-bit narrow rows, two chunks on some threads.
  for (int64_t H : {int64_t(384), int64_t(640), int64_t(767), int64_t(768), int64_t(1000)}) {
    INFO("LayerNorm backward bf16 x " << H);
    CHECK(onlyPlan(Compiler::plan(layerNormBackward(Dim(H)), O)).PeeledMinBlocksPerSm > 0);
  }
  // One chunk a thread (bf16 x 1024: 128 chunks, 128 threads).
  CHECK(onlyPlan(Compiler::plan(layerNormBackward(Dim(1024)), O)).PeeledMinBlocksPerSm == 0);
  // Dynamic shared accumulators stay unbounded (they spilled under it).
  CompileOptions D = O;
  D.MixMaxSharedBytes = 200 * 1024;
  CHECK(onlyPlan(Compiler::plan(layerNormBackward(Dim(11008)), D)).PeeledMinBlocksPerSm == 0);
  O.MixPeeledBound = false;
  CHECK(onlyPlan(Compiler::plan(G, O)).PeeledMinBlocksPerSm == 0);
}

TEST_CASE("GPU: peeled slots shifted by the lead's phase match the reference",
          "[gpu][mix-block-rows]") {
  if (!haveGpu())
    return;
  std::vector<NamedGraph> Cases;
  Cases.push_back({"LayerNorm bf16 x 768", layerNormBackward(Dim(768))});
  Cases.push_back({"RMSNorm bf16 x 1536", rmsNormBackward(bf16, Dim(1536))});
  Cases.push_back({"LayerNorm f32 x 1024", layerNormBackwardOf(f32, Dim(1024))});
  Cases.push_back({"LayerNorm bf16 x 256", layerNormBackward(Dim(256))});
  Cases.push_back({"LayerNorm bf16 x 1021", layerNormBackward(Dim(1021))});
  CheckOptions O;
  O.MixMinRows = 0;
  O.MixPhaseSlots = true;
  checkMixedGraphs(Cases, {1, 7, 130, 1001}, O);
  // Other phases, and tensors at phases of their own (the output-led
  // variant when dx's differs from x's).
  for (NamedGraph &C : Cases)
    for (const std::vector<unsigned> &L :
         {std::vector<unsigned>{3}, std::vector<unsigned>{1, 2, 0, 0, 0, 3},
          std::vector<unsigned>{0, 0, 0, 0, 0, 5}}) {
      INFO(C.Name << " offsets " << fmt::format("{}", fmt::join(L, "/")));
      CheckOptions Each = O;
      Each.ExpectFusedKernels = 1;
      Each.MisalignEach = L;
      checkGraph(C.G, randomBindings(C.G, {{"B", 333}}, {}, Each), Each);
    }
}

// MixPeeledBound by the rule: the bounded peeled variants (24-68 B spilled)
// of 16-bit rows of two chunks on some threads, at odd rows and offsets.
TEST_CASE("GPU: peeled variants under the bound match the reference", "[gpu][mix-block-rows]") {
  if (!haveGpu())
    return;
  std::vector<NamedGraph> Cases;
  Cases.push_back({"LayerNorm bf16 x 384", layerNormBackward(Dim(384))});
  Cases.push_back({"RMSNorm f16 x 640", rmsNormBackward(f16, Dim(640))});
  Cases.push_back({"LayerNorm bf16 x 767", layerNormBackward(Dim(767))});
  Cases.push_back({"RMSNorm bf16 x 1000", rmsNormBackward(bf16, Dim(1000))});
  Cases.push_back({"LayerNorm bf16 x 1536", layerNormBackward(Dim(1536))});
  CheckOptions O;
  O.MixMinRows = 0;
  checkMixedGraphs(Cases, {1, 130, 1001}, O);
}
