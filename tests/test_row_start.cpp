//===- tests/test_row_start.cpp - row kernels' chunks at the row start ----===//
//
// CompileOptions::MixRowStartChunks (the rule: a mixed kernel of one-chunk
// rows, two rows an iteration) and RowStartChunks (an experiment: every row
// kernel): the peeled variants keep every row's chunks at the row's start
// instead of where the lead tensor is aligned. Every tensor's chunk is then read
// through the aligned 16-byte blocks that hold it and stored in the widest
// accesses its address allows; a thread adds to the same columns every row,
// so the column terms take the aligned variant's 16-byte slots and (rows of
// one chunk a thread) two rows an iteration. The plan, the generated text
// and the registers on the CPU; on a GPU the reference at odd rows and
// offsets, and the column sums' bits against the lead-aligned variant
// (each column's terms are added in the same row order by both). For every
// row kernel (RowStartChunks): the forward norms and softmax, with row
// clusters and the wide and few-rows forms, against the reference.
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"
#include "SweepPatterns.h"
#include "TestEnv.h"

#include "driver/Compiler.h"

#include <catch2/catch.hpp>
#include <fmt/ranges.h>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

CompileOptions rowStartOptions(bool On) {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixMinRows = 0;
  O.DeferVariants = false;
  O.MixRowStartChunks = On;
  return O;
}

} // namespace

TEST_CASE("MixRowStartChunks: the peeled variant's chunks at the row start",
          "[mix-row-start]") {
  // bf16 x 4095: 512 chunks, one a thread; every row at another phase.
  Graph G = layerNormBackward(Dim(4095));
  GraphPlan Off = Compiler::plan(G, rowStartOptions(false));
  GraphPlan On = Compiler::plan(G, rowStartOptions(true));
  REQUIRE(Off.Kernels.size() == 1);
  REQUIRE(On.Kernels.size() == 1);
  const KernelPlan &K = On.Kernels[0];
  CHECK(K.RowStartChunks);
  CHECK_FALSE(Off.Kernels[0].RowStartChunks);
  CHECK_THAT(K.Why, Contains("(RowStartChunks)"));
  // No lead, so no variant led by the output: one peeled variant.
  CHECK(Off.Kernels[0].OutputLedVariant);
  CHECK_FALSE(K.OutputLedVariant);
  // The aligned variant's bound (two rows an iteration: 1024 threads an SM).
  CHECK(K.PeeledMinBlocksPerSm == K.AlignedMinBlocksPerSm);
  CHECK(K.PeeledMinBlocksPerSm == 2);

  std::string S = testCompiler().compile(G, rowStartOptions(true)).kernels()[0].Source;
  CHECK_THAT(S, Contains("__launch_bounds__(512, 2) jf_k0_cast_p8("));
  CHECK(S.find("jf_k0_cast_o8") == std::string::npos);
  CHECK_THAT(S, Contains("constexpr int jf_h = 0;"));
  // Every row tensor read at its own alignment: no lead's phase.
  CHECK(S.find("jf_phase") == std::string::npos);
  CHECK_THAT(S, Contains("jf_load_whole<jf_bf16, 8>(in_0 + (c0 * 4095) + col)"));
  CHECK_THAT(S, Contains("jf_load_whole<jf_bf16, 8>(in_0 + (c0_1 * 4095) + col)"));
  // Two rows an iteration, each adding its chunk's terms as 16-byte groups
  // (two reductions, two groups of 4 each; 4095 has no aligned variant).
  CHECK_THAT(S, Contains("jf_mr += 2"));
  CHECK_THAT(S, Contains("const int jf_s = (int)((col) / 8);"));
  CHECK(countOf(S, "float4 &jf_q0_0") == 2);
  CHECK(countOf(S, "float4 &jf_q1_1") == 2);

  // Off (the default): the lead's phase, a row an iteration, a slot a
  // column.
  std::string D = testCompiler().compile(G, rowStartOptions(false)).kernels()[0].Source;
  CHECK_THAT(D, Contains("jf_phase<jf_bf16, 8>(in_0)"));
  CHECK(D.find("jf_mr += 2") == std::string::npos);
  CHECK(countOf(D, "float4 &jf_q0_0") == 0);
}

TEST_CASE("MixRowStartChunks: rows of several chunks a thread and several rows a block",
          "[mix-row-start]") {
  // x 4999 (625 chunks of 8 over 512 threads: some threads two) and x 1021
  // (several rows a block): a row an iteration, so MixRowStartChunks keeps
  // the lead there (0.78-0.96x with row-start chunks, H100 session 42);
  // RowStartChunks applies it: the aligned variant's slots (one index,
  // constant offsets; 16-byte groups only under its one-chunk bound).
  for (int64_t H : {int64_t(4999), int64_t(1021)}) {
    INFO("LayerNorm backward bf16 x " << H);
    Graph G = layerNormBackward(Dim(H));
    KernelPlan Rule = Compiler::plan(G, rowStartOptions(true)).Kernels.at(0);
    CHECK_FALSE(Rule.RowStartChunks);
    CHECK(Rule.OutputLedVariant);
    CompileOptions All = rowStartOptions(true);
    All.RowStartChunks = true;
    KernelPlan K = Compiler::plan(G, All).Kernels.at(0);
    CHECK(K.RowStartChunks);
    CHECK_FALSE(K.MixTwoRows);
    std::string S = testCompiler().compile(G, All).kernels()[0].Source;
    CHECK_THAT(S, Contains("constexpr int jf_h = 0;"));
    CHECK(S.find("jf_mr += 2") == std::string::npos);
    CHECK(countOf(S, "const int jf_s = (int)((col) / 8);") == 1); // peeled only
  }
}

TEST_CASE("MixRowStartChunks: the norm backwards' kernels keep their registers",
          "[mix-row-start][resources]") {
  // Every dtype, odd, narrow and one-chunk rows: no spill, no stack, but
  // for the variants under MixPeeledBound (rows of several rows a block,
  // some threads two chunks), which may spill a little as the lead-aligned
  // ones do (LayerNorm backward 16-bit x 768: 40 B by the lead, 88 B here).
  for (DType T : {DType::F32, DType::BF16, DType::F16})
    for (int64_t H : {int64_t(768), int64_t(1021), int64_t(2048), int64_t(4095), int64_t(4999),
                      int64_t(6144)})
      for (bool Rms : {false, true}) {
        Graph G = Rms ? rmsNormBackward(T, Dim(H)) : layerNormBackwardOf(T, Dim(H));
        Executable E = testCompiler().compile(G, rowStartOptions(true));
        INFO((Rms ? "RMSNorm" : "LayerNorm") << " backward " << dtypeName(T).str() << " x " << H
                                             << "\n"
                                             << E.plan());
        const int Limit =
            E.plan().find("(MixPeeledBound)") != std::string::npos ? 64 : 0;
        for (const rt::KernelResources &K : E.kernelResources()) {
          INFO("kernel " << K.Name << ": " << K.Registers << " registers");
          CHECK(K.SpillStoreBytes <= Limit);
          CHECK(K.SpillLoadBytes <= Limit);
          CHECK(K.StackBytes <= Limit);
        }
        CHECK(E.compileLog().find("warning") == std::string::npos);
      }
}

TEST_CASE("GPU: row-start chunks match the reference", "[gpu][mix-row-start]") {
  if (!haveGpu())
    return;
  struct Case {
    const char *Name;
    Graph G;
  };
  std::vector<Case> Cases;
  Cases.push_back({"LayerNorm bf16 x 4095", layerNormBackward(Dim(4095))});
  Cases.push_back({"RMSNorm f16 x 4095", rmsNormBackward(f16, Dim(4095))});
  Cases.push_back({"LayerNorm bf16 x 4096", layerNormBackward(Dim(4096))});
  Cases.push_back({"LayerNorm f32 x 2047", layerNormBackwardOf(f32, Dim(2047))});
  Cases.push_back({"RMSNorm bf16 x 4999", rmsNormBackward(bf16, Dim(4999))});
  Cases.push_back({"LayerNorm f16 x 1021", layerNormBackwardOf(f16, Dim(1021))});
  Cases.push_back({"LayerNorm bf16 x 768", layerNormBackward(Dim(768))});
  // The rule (MixRowStartChunks: x 4095, x 4096, f32 x 2047), then row-start
  // chunks on every mixed kernel (RowStartChunks: x 4999, x 1021, x 768 too).
  for (bool All : {false, true}) {
    CheckOptions O;
    O.MixMinRows = 0;
    O.RowStartChunks = All;
    O.ExpectFusedKernels = 1;
    for (Case &C : Cases)
      for (int64_t B : {1, 2, 7, 130, 1001}) {
        INFO(C.Name << " B=" << B << (All ? " RowStartChunks" : ""));
        checkGraph(C.G, randomBindings(C.G, {{"B", B}}, {}, O), O);
        CheckOptions M = O;
        M.MisalignElems = 1;
        checkGraph(C.G, randomBindings(C.G, {{"B", B}}, {}, M), M);
      }
    // Tensors at phases of their own (x, dy, w and dx each elsewhere).
    for (Case &C : Cases)
      for (const std::vector<unsigned> &L :
           {std::vector<unsigned>{3}, std::vector<unsigned>{1, 2, 0, 0, 0, 3},
            std::vector<unsigned>{0, 0, 0, 0, 0, 5}}) {
        INFO(C.Name << " offsets " << fmt::format("{}", fmt::join(L, "/"))
                    << (All ? " RowStartChunks" : ""));
        CheckOptions Each = O;
        Each.MisalignEach = L;
        checkGraph(C.G, randomBindings(C.G, {{"B", 333}}, {}, Each), Each);
      }
  }
}

TEST_CASE("GPU: row-start chunks give the lead-aligned variant's column sums",
          "[gpu][mix-row-start]") {
  if (!haveGpu())
    return;
  // Rows of 4095 run the peeled variant at every pointer; both forms add
  // each column's terms over a group's rows in row order, then the groups
  // in order: dw and db are bit for bit the same (dx's row sums are not:
  // a thread's elements differ).
  for (DType T : {DType::BF16, DType::F32}) {
    Graph G = layerNormBackwardOf(T, Dim(4095));
    Executable Lead = testCompiler().compile(G, rowStartOptions(false));
    Executable Start = testCompiler().compile(G, rowStartOptions(true));
    for (int64_t B : {3, 513, 16385}) {
      INFO(dtypeName(T).str() << " B=" << B);
      Bindings In = randomBindings(G, {{"B", B}}, {});
      std::map<std::string, HostTensor> A = runOnDevice(Lead, In), C = runOnDevice(Start, In);
      for (const char *Out : {"dw", "db"})
        CHECK(A.at(Out).Data == C.at(Out).Data);
    }
  }
}

TEST_CASE("RowStartChunks: every row kernel's peeled variants, and their forms",
          "[mix-row-start]") {
  CompileOptions O;
  O.Arch = "sm_90";
  O.DeferVariants = false;
  O.RowStartChunks = true;
  O.RowClusters = true;
  // x 50257 (the cluster form; the few-rows and wide forms beside it).
  Graph G = sweepPattern("add_rmsnorm", DType::BF16, 50257);
  GraphPlan P = Compiler::plan(G, O);
  REQUIRE(P.Kernels.size() == 1);
  const KernelPlan &K = P.Kernels[0];
  CHECK(K.RowStartChunks);
  CHECK_FALSE(K.OutputLedVariant);
  CHECK_THAT(K.Why, Contains("(RowStartChunks)"));
  for (const std::shared_ptr<const KernelPlan> &F : {K.FewRows, K.WideRows})
    if (F)
      CHECK(F->RowStartChunks);
  Executable E = testCompiler().compile(G, O);
  std::string S = E.kernels()[0].Source;
  CHECK_THAT(S, Contains("constexpr int jf_h = 0;"));
  CHECK(S.find("jf_phase") == std::string::npos);
  CHECK(E.compileLog().find("warning") == std::string::npos);
  // Off: the lead, and the output-led twin.
  O.RowStartChunks = false;
  KernelPlan D = Compiler::plan(G, O).Kernels.at(0);
  CHECK_FALSE(D.RowStartChunks);
  CHECK(D.OutputLedVariant);
}

TEST_CASE("GPU: row-start chunks of every row kernel match the reference",
          "[gpu][mix-row-start]") {
  if (!haveGpu())
    return;
  for (const char *Name : {"add_rmsnorm", "layernorm", "softmax"})
    for (DType T : {DType::BF16, DType::F32})
      // An odd row and a vocabulary-sized one (81 s on an H100 with x 4096
      // too: the [gpu] tier's shards run about 300 s).
      for (int64_t H : {int64_t(1021), int64_t(50257)})
        for (bool Clusters : {false, true}) {
          if (Clusters && H < 50257)
            continue;
          Graph G = sweepPattern(Name, T, H);
          CheckOptions O;
          O.RowStartChunks = true;
          O.RowClusters = Clusters;
          O.ExpectFusedKernels = 1;
          // Rows of 50257 x 700 took the [gpu] tier's shard past its time
          // (the fp64 reference, fused and unfused): up to 133 rows.
          for (int64_t B : {1, 3, 133}) {
            INFO(Name << " " << dtypeName(T).str() << " x " << H << " B=" << B
                      << (Clusters ? " clusters" : ""));
            std::map<std::string, double> Eps;
            if (std::string(Name) != "softmax")
              Eps["eps"] = 1e-5;
            O.MisalignElems = 1;
            checkGraph(G, randomBindings(G, {{"B", B}}, Eps, O), O);
            CheckOptions Each = O;
            Each.MisalignElems = 0;
            Each.MisalignEach = {3, 0, 1, 2};
            checkGraph(G, randomBindings(G, {{"B", B}}, Eps, Each), Each);
          }
        }
  // The norm backwards' long rows on clusters (two kernels).
  for (int64_t H : {int64_t(32064), int64_t(50257)}) {
    Graph G = rmsNormBackward(bf16, Dim(H));
    CheckOptions O;
    O.RowStartChunks = true;
    O.RowClusters = true;
    for (int64_t B : {2, 300}) {
      INFO("RMSNorm backward bf16 x " << H << " B=" << B);
      O.MisalignElems = 1;
      checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
    }
  }
}
