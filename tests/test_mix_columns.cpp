//===- tests/test_mix_columns.cpp - column partials in a row kernel -------===//
//
// CompileOptions::MixOrderColumns (an experiment, off): a row kernel takes
// the column reductions of its own rows (compiler/MixColumns.h,
// codegen/MixColumns.cpp). Plans, refusals, the launch rule, the source
// through NVRTC, and on a GPU fused vs unfused vs the fp64 reference (odd
// rows, offsets, no rows, repeated launches).
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"

#include "codegen/Codegen.h"
#include "codegen/LaunchRule.h"
#include "compiler/Fusion.h"
#include "compiler/Planner.h"
#include "compiler/ReduceAxes.h"
#include "ir/NN.h"
#include "runtime/Nvrtc.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

FusionOptions mixed(bool On = true) {
  FusionOptions O;
  O.MixOrderColumns = On;
  return O;
}

CompileOptions cpuOptions(bool On = true, bool RowsKnown = false) {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixOrderColumns = On;
  O.MixRowsKnown = RowsKnown;
  O.MixTwoRows = !RowsKnown; // rows known applies to a row an iteration
  return O;
}

/// The mixed kernel a row an iteration (MixTwoRows off).
CompileOptions oneRowOptions() {
  CompileOptions O = cpuOptions();
  O.MixTwoRows = false;
  return O;
}

size_t countOf(const std::string &Text, const std::string &What) {
  size_t N = 0;
  for (size_t P = Text.find(What); P != std::string::npos; P = Text.find(What, P + 1))
    ++N;
  return N;
}

GraphPlan planOf(const Graph &G, bool On = true) {
  PlanOptions O;
  O.Fusion = mixed(On);
  return planGraph(G, O);
}

} // namespace

TEST_CASE("MixOrderColumns: max and mean and min columns beside a norm", "[mix-columns]") {
  for (int64_t H : {2048, 2051, 2560}) {
    INFO("H=" << H);
    Graph G = normWithColumnStats(bf16, Dim(H));
    GraphPlan P = planOf(G);
    REQUIRE(P.Kernels.size() == 1);
    CHECK(P.Kernels[0].MixColumns.size() == 3);
    CHECK(planOf(G, false).Kernels.size() == 2);
    Executable F = testCompiler().compile(G, cpuOptions());
    REQUIRE(F.numKernels() == 1);
    CHECK_THAT(F.kernels()[0].Source, Contains("jf_max_op()"));
    CHECK_THAT(F.kernels()[0].Source, Contains("jf_min_op()"));
    CHECK_THAT(F.kernels()[0].Source, Contains("tot / (float)nrows"));
  }
  // Three f32 accumulators a column past 32 KiB: dynamic shared memory
  // (launch::MixRuleSharedBytes); past 64 KiB the columns keep their own
  // kernel.
  GraphPlan Dyn = planOf(normWithColumnStats(bf16, Dim(2731)));
  REQUIRE(Dyn.Kernels.size() == 1);
  CHECK(Dyn.Kernels[0].MixDynamicShared);
  CHECK(planOf(normWithColumnStats(bf16, Dim(5461))).Kernels.size() == 1);
  CHECK(planOf(normWithColumnStats(bf16, Dim(5462))).Kernels.size() == 2);
}

TEST_CASE("MixOrderColumns: LayerNorm backward is one kernel", "[mix-columns]") {
  Graph G = layerNormBackward(Dim(4096));
  // Off (the default): the row kernel and the column kernel each read x
  // and dy. On: the row kernel computes dw and db too.
  CHECK(planTotal(G, mixed(false)) == "total: 2 kernels, 40976*B + 40960 bytes");
  CHECK(planTotal(G, mixed()) == "total: 1 kernel, 24584*B + 40960 bytes");
  GraphPlan P = planOf(G);
  REQUIRE(P.Kernels.size() == 1);
  const KernelPlan &K = P.Kernels[0];
  CHECK(K.Kind == KernelKind::RowReduce);
  REQUIRE(K.MixColumns.size() == 2);
  CHECK(K.MixAccBytes == 4);
  // The column reductions are not among the row kernel's nodes; their
  // results are its last outputs, in the order of MixColumns.
  for (NodeId N : K.MixColumns) {
    CHECK(isColumnReduction(P.planned(G).node(N)));
    CHECK_FALSE(llvm::is_contained(K.Nodes, N));
  }
  REQUIRE(K.Outputs.size() == 3);
  CHECK(K.Outputs[1] == K.MixColumns[0]);
  CHECK(K.Outputs[2] == K.MixColumns[1]);
  CHECK(K.RowsPerBlock == 1);
  CHECK(K.ClusterX == 1);
  // One 16-byte chunk of bf16 a thread: the f32 [B, 1] mean and rstd, read
  // once a row, do not set the width (they do in the row kernel without
  // column partials: 8-byte chunks of 4, 2 a thread).
  CHECK(K.Vecs.front() == 8);
  CHECK(K.ThreadsX == 512);
  GraphPlan Off = planOf(G, false);
  REQUIRE(Off.Kernels[0].Kind == KernelKind::RowReduce);
  CHECK(Off.Kernels[0].Vecs.front() == 4);
  CHECK(Off.Kernels[0].ThreadsX == 512);
  CHECK_FALSE(K.FewRows);
  CHECK_FALSE(K.WideRows);
  // Blocks of 512 threads: 256 groups (launch::mixGroupsFor).
  CHECK_THAT(K.Why, Contains("(MixOrderColumns): a block a group of ceil(R / max(1, ceil(R / "
                             "256))) consecutive rows"));
  CHECK_THAT(K.Why, Contains("then 256 more blocks, each 32 columns of one reduction"));
  CHECK_THAT(P.PlanText, Contains("writes %21 -> output \"db\" f32[1,4096]"));
}

TEST_CASE("MixOrderColumns: the mixed kernel compiles with NVRTC for odd shapes",
          "[mix-columns]") {
  for (int64_t H : {2048, 2051, 4095, 4096}) {
    INFO("LayerNorm backward H=" << H);
    Executable F = testCompiler().compile(layerNormBackward(Dim(H)), cpuOptions());
    REQUIRE(F.numKernels() == 1);
    CHECK(F.kernels()[0].Kind == KernelKind::RowReduce);
    CHECK_THAT(F.kernels()[0].Source, Contains("__shared__ __align__(16) float jf_macc["));
    CHECK_THAT(F.kernels()[0].Source, Contains("atomicAdd(jf_counter, 1u)"));
  }
  for (DType T : {f32, bf16, f16})
    for (int64_t H : {4099, 8192}) {
      INFO("RMSNorm backward " << dtypeName(T).str() << " H=" << H);
      Executable F = testCompiler().compile(rmsNormBackward(T, Dim(H)), cpuOptions());
      REQUIRE(F.numKernels() == 1);
      CHECK_THAT(F.kernels()[0].Source, Contains("jf_macc"));
    }
}

TEST_CASE("MixOrderColumns: every variant compiles without a warning or a spill",
          "[mix-columns]") {
  auto Check = [](const Graph &G) {
    CompileOptions O = cpuOptions();
    O.DeferVariants = false;
    Executable F = testCompiler().compile(G, O);
    REQUIRE(F.numKernels() == 1);
    CHECK(F.compileLog().find("warning") == std::string::npos);
    std::vector<rt::KernelResources> R = F.kernelResources();
    CHECK(R.size() == F.kernels()[0].Vecs.size());
    for (const rt::KernelResources &K : R) {
      INFO("kernel " << K.Name << ": " << K.Registers << " registers");
      CHECK(K.SpillStoreBytes == 0);
      CHECK(K.SpillLoadBytes == 0);
      CHECK(K.StackBytes == 0);
    }
  };
  for (int64_t H : {2048, 4095, 4096}) {
    INFO("LayerNorm backward H=" << H);
    Check(layerNormBackward(Dim(H)));
  }
  // 2048 and 4096: one chunk a thread, the aligned variant's registers
  // bounded for MixResidentThreads (16-bit x 4096 took 49-53 without).
  for (DType T : {f32, bf16, f16})
    for (int64_t H : {2048, 4096, 4099, 8192}) {
      INFO("RMSNorm backward " << dtypeName(T).str() << " H=" << H);
      Check(rmsNormBackward(T, Dim(H)));
    }
}

TEST_CASE("MixOrderColumns: the aligned variant: no barrier at a row's end, 16-byte slots",
          "[mix-columns]") {
  // A thread of the aligned variant adds each row's terms to the same
  // columns' slots; a peeled row's chunks move with its phase, so the
  // peeled variants keep the barrier that ends a row. (A row an
  // iteration; two rows, the default, are the case below.)
  Executable F = testCompiler().compile(layerNormBackward(Dim(4096)), oneRowOptions());
  REQUIRE(F.numKernels() == 1);
  const std::string &Src = F.kernels()[0].Source;
  std::string K = kernelSource(F);
  std::string V = kernelText(K, "jf_k0_cast_v8"), Pv = kernelText(K, "jf_k0_cast_p8");
  REQUIRE(!V.empty());
  REQUIRE(!Pv.empty());
  CHECK(countOf(V, "__syncthreads()") + 1 == countOf(Pv, "__syncthreads()"));
  // Its column terms in 16-byte groups of slots: per reduction, two
  // read-modify-writes of 4 columns a chunk of 8; the peeled variants'
  // slots stay one column each.
  CHECK(countOf(V, "reinterpret_cast<float4 *>(jf_macc") == 4);
  CHECK(countOf(Pv, "reinterpret_cast<float4 *>(jf_macc") == 0);
  // One chunk a thread: the aligned variant's registers bounded for 3
  // blocks of 512 an SM; the peeled variants' not.
  CHECK_THAT(Src, Contains("__launch_bounds__(512, 3) jf_k0_cast_v8"));
  CHECK_THAT(Src, Contains("__launch_bounds__(512) jf_k0_cast_p8"));
  CHECK(Compiler::plan(layerNormBackward(Dim(4096)), oneRowOptions()).Kernels[0]
            .AlignedMinBlocksPerSm == 3);
  // Two rows an iteration: 2 blocks (launch::MixTwoRowsResidentThreads).
  CHECK(Compiler::plan(layerNormBackward(Dim(4096)), cpuOptions()).Kernels[0]
            .AlignedMinBlocksPerSm == 2);
  // Rows of more chunks than threads (f32 x 4096: 2 a thread) are not
  // bounded: RMSNorm backward 16-bit x 8192 spilled under the bound.
  CHECK(Compiler::plan(layerNormBackwardOf(f32, Dim(4096)), cpuOptions()).Kernels[0]
            .AlignedMinBlocksPerSm == 0);
  // Nor are their slots grouped (f32 RMSNorm backward x 6144: 64 -> 70
  // registers with them).
  CHECK(testCompiler()
            .compile(layerNormBackwardOf(f32, Dim(4096)), cpuOptions())
            .kernels()[0]
            .Source.find("float4 *>(jf_macc") == std::string::npos);
}

TEST_CASE("MixOrderColumns: MixRowsKnown drops the row test of one-chunk rows (an experiment)",
          "[mix-columns]") {
  Graph G = layerNormBackward(Dim(4096));
  CompileOptions O = cpuOptions(true, true);
  O.DeferVariants = false;
  Executable F = testCompiler().compile(G, O);
  REQUIRE(F.numKernels() == 1);
  const std::string &Src = F.kernels()[0].Source;
  CHECK_THAT(Src, Contains("constexpr bool rowOk = true;"));
  CHECK(Src.find("const bool rowOk") == std::string::npos);
  CHECK_THAT(F.plan(), Contains("MixRowsKnown"));
  CHECK(F.compileLog().find("warning") == std::string::npos);
  for (const rt::KernelResources &K : F.kernelResources()) {
    INFO("kernel " << K.Name << ": " << K.Registers << " registers");
    CHECK(K.SpillStoreBytes == 0);
    if (K.Name == "jf_k0_cast_v8")
      CHECK(K.Registers <= 40); // 3 blocks of 512 an SM
  }
  // Off by default; and rows of two chunks a thread keep the test.
  CHECK_THAT(testCompiler().compile(G, cpuOptions()).kernels()[0].Source,
             Contains("const bool rowOk"));
  CHECK_THAT(testCompiler().compile(layerNormBackwardOf(f32, Dim(4096)), cpuOptions(true, true))
                 .kernels()[0].Source,
             Contains("const bool rowOk"));
}

TEST_CASE("MixOrderColumns: MixTwoRows takes two one-chunk rows an iteration (an experiment)",
          "[mix-columns]") {
  Graph G = layerNormBackward(Dim(4096));
  CompileOptions O = cpuOptions();
  O.MixTwoRows = true;
  O.MixRowsKnown = true; // two rows take precedence: the second row is tested
  O.DeferVariants = false;
  Executable F = testCompiler().compile(G, O);
  REQUIRE(F.numKernels() == 1);
  const std::string &Src = F.kernels()[0].Source;
  CHECK_THAT(F.plan(), Contains("MixTwoRows"));
  CHECK(F.plan().find("MixRowsKnown") == std::string::npos);
  std::string Aligned = kernelText(Src, "jf_k0_cast_v8");
  REQUIRE(!Aligned.empty());
  CHECK_THAT(Src, Contains("__launch_bounds__(512, 2) jf_k0_cast_v8("));
  CHECK_THAT(Aligned, Contains("jf_mr < jf_r1; jf_mr += 2)"));
  CHECK_THAT(Aligned, Contains("const long long row_1 = jf_mr + 1;"));
  CHECK_THAT(Aligned, Contains("const bool rowOk_1 = row_1 < jf_r1;"));
  // The second row's loads, reductions and stores are its own, behind the
  // first row's two barriers (4 in the loop: none added, none at its end).
  CHECK_THAT(Aligned, Contains("(c0_1 * 4096) + col"));
  CHECK_THAT(Aligned, Contains("jf_block_partial(acc12_1, jf_add_op(), jf_smem12_1);"));
  CHECK_THAT(Aligned, Contains("out_0 + rowc_1 * R + col"));
  CHECK_THAT(Aligned, Contains("__shared__ float jf_smem12_1[17];"));
  size_t Loop = Aligned.find("jf_mr += 2");
  CHECK(countOf(Aligned.substr(Loop), "__syncthreads();") == 2 + 2); // + the group's end
  // Each row's code names only its own values: no first-row name is used
  // in the second row's copy of the stores.
  size_t Second = Aligned.find("if (rowOk_1) {", Aligned.find("out_0 + rowc * R + col"));
  REQUIRE(Second != std::string::npos);
  std::string Tail = Aligned.substr(Second, Aligned.find("__syncthreads();", Second) - Second);
  for (const char *First : {"(rowc ", " red12)", " red14)", "cv0[j]", "cv1[j]", "cv2[j]"})
    CHECK(Tail.find(First) == std::string::npos);
  // Its column terms are added after the first row's (each column's rows
  // in order).
  CHECK_THAT(Tail, Contains("jf_fresh_vec(cv0_1[j]);"));
  CHECK(countOf(Aligned, "float4 &jf_q0_0 = ") == 2);
  CHECK(countOf(Tail, "float4 &jf_q0_0 = ") == 1);
  // The peeled variant takes two rows too, its chunks at each row's start
  // (MixRowStartChunks, session 42; no output-led twin); led by a tensor's
  // phase, a row an iteration.
  CHECK(kernelText(Src, "jf_k0_cast_p8").find("row_1") != std::string::npos);
  CHECK(kernelText(Src, "jf_k0_cast_o8").empty());
  CompileOptions Lead = O;
  Lead.MixRowStartChunks = false;
  std::string LeadSrc = testCompiler().compile(G, Lead).kernels()[0].Source;
  CHECK(kernelText(LeadSrc, "jf_k0_cast_p8").find("row_1") == std::string::npos);
  CHECK_FALSE(kernelText(LeadSrc, "jf_k0_cast_o8").empty());
  CHECK(F.compileLog().find("warning") == std::string::npos);
  for (const rt::KernelResources &K : F.kernelResources()) {
    INFO("kernel " << K.Name << ": " << K.Registers << " registers");
    CHECK(K.SpillStoreBytes == 0);
  }
  // On by default (with MixOrderColumns); rows of two chunks a thread keep
  // a row an iteration.
  CHECK(CompileOptions().MixTwoRows);
  CompileOptions One = cpuOptions();
  One.MixTwoRows = false;
  CHECK(testCompiler().compile(G, One).kernels()[0].Source.find("row_1") == std::string::npos);
  CompileOptions F32 = cpuOptions();
  F32.MixTwoRows = true;
  CHECK(testCompiler().compile(layerNormBackwardOf(f32, Dim(4096)), F32).kernels()[0]
            .Source.find("row_1") == std::string::npos);
}

TEST_CASE("MixOrderColumns: MixMinColumns raises the row length it takes (an experiment)",
          "[mix-columns]") {
  // The rule takes rows from 256 columns (16 chunks of any element size;
  // rows of a warp or less take several rows a block, each with its own
  // accumulators: bf16 rows of 256, a warp a row, 4 rows a block), planned
  // and compiled; the option raises the bound, and under 256 it is an error.
  Graph G = layerNormBackward(Dim(512));
  GraphPlan P = Compiler::plan(G, cpuOptions());
  REQUIRE(P.Kernels.size() == 1);
  CHECK(P.Kernels[0].MixColumns.size() == 2);
  CompileOptions O = cpuOptions();
  O.MixMinColumns = 512;
  CHECK(Compiler::plan(G, O).Kernels.size() == 1);
  O.MixMinColumns = 513;
  CHECK(Compiler::plan(G, O).Kernels.size() == 2);
  O.MixMinColumns = -1;
  CHECK_THROWS_AS(Compiler::plan(G, O), Error);
  Graph Short = layerNormBackward(Dim(256));
  GraphPlan SP = Compiler::plan(Short, cpuOptions());
  REQUIRE(SP.Kernels.size() == 1);
  CHECK(SP.Kernels[0].ThreadsX == 32);
  CHECK(SP.Kernels[0].RowsPerBlock == 4);
  CHECK(testCompiler().compile(Short, cpuOptions()).numKernels() == 1);
  O.MixMinColumns = 257;
  CHECK(Compiler::plan(Short, O).Kernels.size() == 2);
  O.MixMinColumns = 255;
  CHECK_THROWS_AS(Compiler::plan(G, O), Error);
}

TEST_CASE("MixOrderColumns: what does not merge", "[mix-columns]") {
  auto Kernels = [](const Graph &G) { return planOf(G).Kernels.size(); };
  // Rows under 256 (launch::MixMinColumns: not measured), and two f32
  // accumulators a column past 64 KiB (8193 x 2 x 4 bytes; from 32 KiB in
  // dynamic shared memory).
  CHECK(Kernels(layerNormBackward(Dim(255))) == 2);
  CHECK(Kernels(layerNormBackward(Dim(256))) == 1);
  CHECK(Kernels(layerNormBackward(Dim(767))) == 1);
  CHECK(Kernels(layerNormBackward(Dim(768))) == 1);
  CHECK(Kernels(layerNormBackward(Dim(2047))) == 1);
  CHECK(Kernels(layerNormBackward(Dim(2048))) == 1);
  CHECK(Kernels(layerNormBackward(Dim(4097))) == 1);
  CHECK(Kernels(layerNormBackward(Dim(8192))) == 1);
  CHECK(Kernels(layerNormBackward(Dim(8193))) == 2);
  CHECK(Kernels(rmsNormBackward(bf16, Dim(16384))) == 1);
  CHECK(Kernels(rmsNormBackward(bf16, Dim(16385))) == 2);
  // f32 RMSNorm backward: recomputing dy * xhat in the column kernel loads
  // x and dy, as many bytes as storing it and loading it back, so without
  // MixColumns RecomputeStoredValues keeps it stored (2 kernels, the column
  // kernel reading the row kernel's value). With it the equal trade is
  // taken for a column reader whose copy reads only what the row kernel
  // loads, and the column sum then joins the row kernel.
  Graph F32 = rmsNormBackward(f32, Dim(4096));
  CHECK(Kernels(F32) == 1);
  GraphPlan F32Off = planOf(F32, false);
  REQUIRE(F32Off.Kernels.size() == 2);
  CHECK(F32Off.Kernels[0].Outputs.size() == 2); // dx and the stored dy * xhat
  CHECK(F32Off.Kernels[1].Inputs.size() == 1);
  // A row length known at run time.
  Graph Dyn = layerNormBackward(Dim("H"));
  CHECK(Kernels(Dyn) == planOf(Dyn, false).Kernels.size());
  for (const KernelPlan &K : planOf(Dyn).Kernels)
    CHECK(K.MixColumns.empty());
  auto Base = [](Graph &G, Value &Dy, Value &Xh) {
    Value X = cast(G.input("x", bf16, {"B", 2560}), f32);
    Dy = cast(G.input("dy", bf16, {"B", 2560}), f32);
    Value Rstd = G.input("rstd", f32, {"B", 1});
    Xh = X * Rstd;
    G.output("dx", cast(Rstd * (Dy - Xh * mean(Dy * Xh)), bf16));
  };
  {
    // The column sum reads z, which the row kernel does not load.
    Graph G;
    Value Dy, Xh;
    Base(G, Dy, Xh);
    Value Z = cast(G.input("z", bf16, {"B", 2560}), f32);
    G.output("dw", sum(Z * Xh, llvm::ArrayRef<int64_t>{0}));
    CHECK(Kernels(G) == 2);
  }
  {
    // Element-wise work on the column result (its epilogue).
    Graph G;
    Value Dy, Xh;
    Base(G, Dy, Xh);
    G.output("dw2", sum(Dy * Xh, llvm::ArrayRef<int64_t>{0}) * G.constant(2.0));
    CHECK(Kernels(G) == 2);
  }
  {
    // A value both kernels compute, stored by the row kernel: the column
    // kernel recomputes it from x, dy and rstd, which the row kernel loads.
    Graph G;
    Value Dy, Xh;
    Base(G, Dy, Xh);
    Value T = Dy * Xh;
    G.output("t", cast(T, bf16));
    G.output("dw", sum(T, llvm::ArrayRef<int64_t>{0}));
    CHECK(Kernels(G) == 1);
  }
  {
    // The column sum over the row kernel's output (reads the other cluster).
    Graph G;
    Value Dy, Xh;
    Base(G, Dy, Xh);
    Value Dx = Dy - Xh * mean(Dy * Xh);
    G.output("ddx", sum(Dx, llvm::ArrayRef<int64_t>{0}));
    GraphPlan P = planOf(G);
    for (const KernelPlan &K : P.Kernels)
      CHECK(K.MixColumns.empty());
  }
  {
    // The merge is what allows it: the same graph merges.
    Graph G;
    Value Dy, Xh;
    Base(G, Dy, Xh);
    G.output("dw", sum(Dy * Xh, llvm::ArrayRef<int64_t>{0}));
    CHECK(Kernels(G) == 1);
  }
}

TEST_CASE("MixOrderColumns: the launch rule", "[mix-columns]") {
  namespace launch = codegen::launch;
  // Groups of consecutive rows: at most 256-512 of them (about a wave of
  // the blocks at 1024 threads an SM), by the plan and the row count.
  CHECK(launch::mixGroupsFor(1024) == 256);
  CHECK(launch::mixGroupsFor(512) == 256);
  CHECK(launch::mixGroupsFor(384) == 341);
  CHECK(launch::mixGroupsFor(256) == 512);
  CHECK(launch::mixGroupsFor(32) == 512);
  CHECK(launch::mixRowsPerGroup(1) == 1);
  CHECK(launch::mixGroups(0) == 0);
  CHECK(launch::mixGroups(1) == 1);
  CHECK(launch::mixGroups(512) == 512);
  CHECK(launch::mixRowsPerGroup(513) == 2);
  CHECK(launch::mixGroups(513) == 257);
  CHECK(launch::mixRowsPerGroup(16384) == 32);
  CHECK(launch::mixGroups(16384) == 512);
  CHECK(launch::mixRowsPerGroup(16385) == 33);
  CHECK(launch::mixGroups(16385) == 497);
  CHECK(launch::mixCombiners(4096, 2) == 256);
  CHECK(launch::mixCombiners(4095, 1) == 128);
  CHECK(launch::mixCombiners(2049, 1) == 65);

  GraphPlan P = planOf(layerNormBackward(Dim(4096)));
  REQUIRE(P.Kernels.size() == 1);
  codegen::LaunchRule L(P.Kernels[0]);
  // 512 threads a block: 256 groups' partials.
  CHECK(P.Kernels[0].MixMaxGroups == 256);
  CHECK(L.partialsBytes(132) == size_t(256) * 4096 * 2 * 4);
  CHECK(L.counters() == 3);
  for (int V : P.Kernels[0].Vecs) {
    // No rows: the combining blocks still write the identity.
    auto S0 = L.shape({0, 0, 4096}, V, 132, false);
    REQUIRE(S0);
    CHECK(S0->GridX == 256);
    auto S = L.shape({int64_t(16384) * 4096, 16384, 4096}, V, 132, false);
    REQUIRE(S);
    CHECK(S->GridX == 256 + 256);
    CHECK(S->BlockX == static_cast<unsigned>(P.Kernels[0].ThreadsX));
    CHECK(S->BlockY == 1);
    // 513 rows: 171 groups of 3.
    auto S1 = L.shape({513 * 4096, 513, 4096}, V, 132, true);
    REQUIRE(S1);
    CHECK(S1->GridX == 171 + 256);
  }
}

TEST_CASE("MixOrderColumns: MixMaxGroups sets the group count (an experiment)",
          "[mix-columns]") {
  Graph G = layerNormBackward(Dim(4096));
  CompileOptions O = cpuOptions();
  O.MixMaxGroups = 1024;
  GraphPlan P = Compiler::plan(G, O);
  REQUIRE(P.Kernels.size() == 1);
  CHECK(P.Kernels[0].MixMaxGroups == 1024);
  CHECK_THAT(P.Kernels[0].Why, Contains("ceil(R / max(1, ceil(R / 1024)))"));
  codegen::LaunchRule L(P.Kernels[0]);
  CHECK(L.partialsBytes(132) == size_t(1024) * 4096 * 2 * 4);
  auto S = L.shape({int64_t(16384) * 4096, 16384, 4096}, 8, 132, false);
  REQUIRE(S);
  CHECK(S->GridX == 1024 + 256);
  codegen::EmittedKernel E = codegen::emitKernel(P.planned(G), P.Kernels[0]);
  CHECK_THAT(E.Variants[0].Text, Contains("nrows <= 1024 ? (long long)1 : (nrows + 1023) / 1024"));
  // The rule's count by default; out-of-range values are errors.
  CHECK(Compiler::plan(G, cpuOptions()).Kernels[0].MixMaxGroups == 256);
  O.MixMaxGroups = -1;
  CHECK_THROWS_AS(Compiler::plan(G, O), Error);
}

// Rows in one group each, groups of several rows (3 and 65 at 256 groups,
// the last one short), no rows; odd rows and offsets take the peeled
// variants. A case per row length and form: in one case the fp64
// references took 263 s of the [gpu] tier (session 33), and a later run's
// 290-s limit killed it; a case per row length took 210 s on a slower host
// (session 38), the tier's longest.
enum class LnForm {
  Aligned,
  Misaligned,
  /// A row an iteration (its bits are two rows', a case below), with the
  /// experiment of rows known to be rows (one-chunk rows), aligned. The
  /// default's two rows an iteration take groups of 1, 3 and 65 rows.
  RowAnIteration,
};

static void checkLayerNormBackwardColumns(int64_t H, LnForm Form,
                                          llvm::ArrayRef<int64_t> Rows = {0, 1, 37, 513, 16385}) {
  Graph G = layerNormBackward(Dim(H));
  for (int64_t B : Rows) {
    INFO("LayerNorm backward H=" << H << " B=" << B << " form " << static_cast<int>(Form));
    CheckOptions O;
    O.MixOrderColumns = true;
    O.MixMinRows = 0; // the mixed kernel at any rows
    O.ExpectFusedKernels = 1;
    if (Form == LnForm::Misaligned)
      O.MisalignEach = {1, 3, 0, 2};
    if (Form == LnForm::RowAnIteration) {
      O.MixTwoRows = false;
      O.MixRowsKnown = true;
    }
    checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
  }
}

TEST_CASE("GPU: column partials match the reference: LayerNorm backward H 2051",
          "[gpu][mix-columns]") {
  if (!haveGpu())
    return;
  for (LnForm F : {LnForm::Aligned, LnForm::Misaligned, LnForm::RowAnIteration})
    checkLayerNormBackwardColumns(2051, F);
}

TEST_CASE("GPU: column partials match the reference: LayerNorm backward H 4095",
          "[gpu][mix-columns]") {
  if (haveGpu())
    checkLayerNormBackwardColumns(4095, LnForm::Aligned);
}

TEST_CASE("GPU: column partials match the reference: LayerNorm backward H 4095, offsets",
          "[gpu][mix-columns]") {
  if (haveGpu())
    checkLayerNormBackwardColumns(4095, LnForm::Misaligned);
}

TEST_CASE("GPU: column partials match the reference: LayerNorm backward H 4095, a row an "
          "iteration",
          "[gpu][mix-columns]") {
  if (haveGpu())
    checkLayerNormBackwardColumns(4095, LnForm::RowAnIteration);
}

TEST_CASE("GPU: column partials match the reference: LayerNorm backward H 4096",
          "[gpu][mix-columns]") {
  if (haveGpu())
    checkLayerNormBackwardColumns(4096, LnForm::Aligned);
}

TEST_CASE("GPU: column partials match the reference: LayerNorm backward H 4096, offsets",
          "[gpu][mix-columns]") {
  if (haveGpu())
    checkLayerNormBackwardColumns(4096, LnForm::Misaligned);
}

TEST_CASE("GPU: column partials match the reference: LayerNorm backward H 4096, a row an "
          "iteration",
          "[gpu][mix-columns]") {
  if (haveGpu())
    checkLayerNormBackwardColumns(4096, LnForm::RowAnIteration);
}

// Two reductions' 39 KiB of accumulators: dynamic shared memory by the
// rule (launch::MixRuleSharedBytes). 2601 rows (237 groups of 11, the last
// of 5), not 16385: at 16385 its references passed 200 s of a 14-process
// tier (H100 host, session 38).
TEST_CASE("GPU: column partials match the reference: LayerNorm backward H 4999",
          "[gpu][mix-columns]") {
  if (!haveGpu())
    return;
  for (LnForm F : {LnForm::Aligned, LnForm::Misaligned, LnForm::RowAnIteration})
    checkLayerNormBackwardColumns(4999, F, {0, 1, 37, 513, 2601});
}

// A case a dtype: one case for all three took 135 s of session 38's
// 14-process [gpu] tier.
static void checkRmsNormBackwardColumns(DType T) {
  for (int64_t H : {4099, 8192}) {
    Graph G = rmsNormBackward(T, Dim(H));
    for (int64_t B : {3, 2049}) {
      INFO("RMSNorm backward " << dtypeName(T).str() << " H=" << H << " B=" << B);
      CheckOptions O;
      O.MixOrderColumns = true;
      O.MixMinRows = 0; // the mixed kernel at any rows
      O.ExpectFusedKernels = 1;
      O.SpecialValues = B == 3;
      checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
      O.MixTwoRows = false;
      O.MixRowsKnown = true;
      checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
    }
  }
}

TEST_CASE("GPU: column partials match the reference: RMSNorm backward", "[gpu][mix-columns]") {
  if (haveGpu())
    checkRmsNormBackwardColumns(f32);
}

TEST_CASE("GPU: column partials match the reference: RMSNorm backward bf16",
          "[gpu][mix-columns]") {
  if (haveGpu())
    checkRmsNormBackwardColumns(bf16);
}

TEST_CASE("GPU: column partials match the reference: RMSNorm backward f16",
          "[gpu][mix-columns]") {
  if (haveGpu())
    checkRmsNormBackwardColumns(f16);
}

TEST_CASE("GPU: max and mean and min column partials match the reference", "[gpu][mix-columns]") {
  if (!haveGpu())
    return;
  for (DType T : {f32, bf16})
    for (int64_t H : {2048, 2051}) {
      Graph G = normWithColumnStats(T, Dim(H));
      for (int64_t B : {0, 1, 700, 3001}) {
        INFO(dtypeName(T).str() << " H=" << H << " B=" << B);
        CheckOptions O;
        O.MixOrderColumns = true;
        O.MixMinRows = 0; // the mixed kernel at any rows
        O.ExpectFusedKernels = 1;
        checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
        // NaN and infinities through the max/min combine; offsets.
        O.SpecialValues = true;
        O.MisalignEach = {1, 0, 3};
        checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
      }
    }
}

TEST_CASE("GPU: column partials are reproducible launch to launch", "[gpu][mix-columns]") {
  if (!haveGpu())
    return;
  // The counters reset by the last combining block: a second and third
  // launch of the same executable give the same bits.
  Graph G = layerNormBackward(Dim(4096));
  Executable F = testCompiler().compile(G, [] {
    CompileOptions O;
    O.MixOrderColumns = true;
    return O;
  }());
  REQUIRE(F.numKernels() == 1);
  Bindings B = randomBindings(G, {{"B", 1500}}, {});
  std::map<std::string, HostTensor> First = runOnDevice(F, B);
  for (int I = 0; I < 2; ++I) {
    std::map<std::string, HostTensor> Again = runOnDevice(F, B);
    for (const char *Out : {"dx", "dw", "db"})
      CHECK(Again.at(Out).Data == First.at(Out).Data);
  }
  // Replays of a CUDA graph reuse the counters the same way.
  F.setCudaGraph(true);
  for (int I = 0; I < 3; ++I) {
    std::map<std::string, HostTensor> Again = runOnDevice(F, B);
    for (const char *Out : {"dx", "dw", "db"})
      CHECK(Again.at(Out).Data == First.at(Out).Data);
  }
}

TEST_CASE("GPU: two rows an iteration give a row an iteration's bits", "[gpu][mix-columns]") {
  if (!haveGpu())
    return;
  // MixTwoRows adds each column's terms in the same row order, so dx, dw
  // and db are the one-row kernel's bits, at odd group sizes (33 and 65 rows
  // at 16385, 2 and 3 at 513, 1 at 37) and with a last row alone.
  for (int64_t H : {2048, 4096}) {
    Graph G = layerNormBackward(Dim(H));
    CompileOptions One;
    One.MixOrderColumns = true;
    One.MixMinRows = 0; // the mixed kernel at 37 rows too
    One.MixBlockRows = 1; // two rows an iteration need a row a block
    One.MixTwoRows = false;
    CompileOptions Two = One;
    Two.MixTwoRows = true;
    Executable F1 = testCompiler().compile(G, One), F2 = testCompiler().compile(G, Two);
    REQUIRE(F2.kernels()[0].Source.find("row_1") != std::string::npos);
    for (int64_t B : {37, 513, 16385}) {
      INFO("H=" << H << " B=" << B);
      Bindings In = randomBindings(G, {{"B", B}}, {});
      std::map<std::string, HostTensor> A = runOnDevice(F1, In), C = runOnDevice(F2, In);
      for (const char *Out : {"dx", "dw", "db"})
        CHECK(A.at(Out).Data == C.at(Out).Data);
    }
  }
}

TEST_CASE("MixOrderColumns: a column and a row reduction of an input itself",
          "[mix-columns]") {
  // Found by the random graphs (seed 1321995046): the column reduction
  // reads the graph input the row reduction reads, with nothing between.
  for (int64_t H : {1000, 2048})
    for (bool DynamicRows : {false, true}) {
      INFO("H=" << H << (DynamicRows ? " rows dynamic" : " one row"));
      Graph G;
      Value X = DynamicRows ? G.input("x", bf16, {"B", H}) : G.input("x", bf16, {1, H});
      G.output("cmax", reduce(Op::ReduceMax, X, {0}));
      G.output("rmax", reduce(Op::ReduceMax, X, ReduceScope::LastAxis));
      CompileOptions O = cpuOptions();
      O.MixMinRows = 0;
      GraphPlan P = Compiler::plan(G, O);
      CHECK(P.Kernels.size() == 1);
      CHECK_NOTHROW(testCompiler().compile(G, O));
    }
}

TEST_CASE("GPU: a column and a row reduction of an input itself match the reference",
          "[gpu][mix-columns]") {
  if (!haveGpu())
    return;
  for (int64_t H : {1000, 2048}) {
    Graph G;
    Value X = G.input("x", bf16, {1, H});
    G.output("cmax", reduce(Op::ReduceMax, X, {0}));
    G.output("rmax", reduce(Op::ReduceMax, X, ReduceScope::LastAxis));
    INFO("H=" << H);
    CheckOptions O;
    O.MixMinRows = 0;
    O.ExpectFusedKernels = 1;
    checkGraph(G, randomBindings(G, {}, {}, O), O);
    O.MisalignElems = 1;
    checkGraph(G, randomBindings(G, {}, {}, O), O);
  }
}

TEST_CASE("MixOrderColumns: a row kernel reading a column result through another kernel "
          "keeps it apart",
          "[mix-columns]") {
  // A random graph (seed 987765543 of the CPU random-graph case, shrunk):
  // the row kernel of y1 reads exp(column max of x0) from a third kernel
  // (the reduction fusions off), which reads the column max. The clusters
  // are not in a topological order when the mixed pass merges them, so the
  // merge's check of the clusters between two indices missed the chain and
  // the partition formed a cycle (an internal error) before
  // mergeClusters followed reads through other clusters.
  Graph G;
  auto X0 = G.input("x0", DType::F16, {Dim("B"), Dim(1000)});
  auto V1 = unary(Op::Exp, X0);
  auto V2 = reduce(Op::ReduceMax, X0, {0});
  auto V3 = unary(Op::Exp, V2);
  auto V4 = reduce(Op::ReduceMax, V1, ReduceScope::LastAxis);
  auto V5 = fma(V4, V3, V1);
  G.output("y1", V5);
  G.output("y2", V3);
  for (bool Edges : {true, false}) {
    FusionOptions FO;
    FO.FullReducePrologueOutputs = FO.ColumnReduceEpilogue = FO.FullReduceEpilogue =
        FO.RecomputeStoredValues = FO.SiblingColumnReductions =
            FO.ColumnReducePrologueOutputs = Edges;
    INFO("reduction fusions " << Edges);
    CHECK_NOTHROW(fuseGraph(G, FO));
  }
  CHECK_NOTHROW(testCompiler().compile(G, cpuOptions()));
}
