//===- tests/test_mix_few_groups.cpp - the mixed kernel's few-group combine ===//
//
// CompileOptions::MixFewGroups (an experiment, off): a mixed row kernel's
// launch of 1 to launch::MixFewGroups groups has no combining blocks; its
// groups' blocks add the partials (KernelWriter::mixFewCombine). The
// launch rule, the source through NVRTC, and on a GPU the same bits as the
// combining blocks and the fp64 reference, at 1-9 rows and none, repeated
// launches and row counts that switch between the two forms.
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"

#include "codegen/Codegen.h"
#include "codegen/LaunchRule.h"
#include "driver/Compiler.h"
#include "exec/HostRun.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

CompileOptions fewOptions(bool Few = true) {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixOrderColumns = true;
  O.MixFewGroups = Few;
  return O;
}

} // namespace

TEST_CASE("MixFewGroups: launches of 1-8 groups have no combining blocks", "[mix-few]") {
  CHECK(!CompileOptions().MixFewGroups);
  CHECK(codegen::launch::mixFew(1, 512, true));
  CHECK(codegen::launch::mixFew(8, 512, true));
  CHECK(!codegen::launch::mixFew(9, 512, true));
  CHECK(!codegen::launch::mixFew(0, 512, true));
  CHECK(!codegen::launch::mixFew(3, 512, false));
  // 16 rows in 2 groups of 8 when the groups are at most 2.
  CHECK(codegen::launch::mixFew(16, 2, true));

  Graph G = layerNormBackward(Dim(4096));
  GraphPlan P = Compiler::plan(G, fewOptions());
  REQUIRE(P.Kernels.size() == 1);
  CHECK(P.Kernels[0].MixFewGroups);
  CHECK_THAT(P.Kernels[0].Why, Contains("MixFewGroups"));
  codegen::LaunchRule L(P.Kernels[0]);
  for (int V : P.Kernels[0].Vecs) {
    for (int64_t Rows : {1, 5, 8}) {
      auto S = L.shape({Rows * 4096, Rows, 4096}, V, 132, false);
      REQUIRE(S);
      CHECK(S->GridX == static_cast<unsigned>(Rows));
    }
    // 9 groups and more, or none: the combining blocks (2 x 4096 / 32).
    auto S9 = L.shape({9 * 4096, 9, 4096}, V, 132, false);
    REQUIRE(S9);
    CHECK(S9->GridX == 9 + 256);
    auto S0 = L.shape({0, 0, 4096}, V, 132, false);
    REQUIRE(S0);
    CHECK(S0->GridX == 256);
  }
  // Off: the combining blocks at any row count.
  GraphPlan Off = Compiler::plan(G, fewOptions(false));
  auto S1 = codegen::LaunchRule(Off.Kernels[0]).shape({4096, 1, 4096}, 8, 132, false);
  REQUIRE(S1);
  CHECK(S1->GridX == 1 + 256);
}

TEST_CASE("MixFewGroups: every variant calls the combine and compiles", "[mix-few]") {
  std::vector<std::pair<std::string, Graph>> Graphs;
  Graphs.emplace_back("LayerNorm backward bf16 x 4096", layerNormBackward(Dim(4096)));
  Graphs.emplace_back("LayerNorm backward f32 x 2051", layerNormBackwardOf(f32, Dim(2051)));
  Graphs.emplace_back("RMSNorm backward f16 x 4099", rmsNormBackward(f16, Dim(4099)));
  Graphs.emplace_back("column max mean min bf16 x 2048", normWithColumnStats(bf16, Dim(2048)));
  for (auto &[Name, G] : Graphs) {
    INFO(Name);
    GraphPlan P = Compiler::plan(G, fewOptions());
    REQUIRE(P.Kernels.size() == 1);
    codegen::EmittedKernel E = codegen::emitKernel(P.planned(G), P.Kernels[0]);
    for (const codegen::EmittedKernel::Variant &V : E.Variants) {
      INFO(V.Name);
      std::string Fn = "jf_few_" + V.Name;
      // Declared once, called once, after the group's partials are counted.
      CHECK(V.Text.find("static __device__ __noinline__ void " + Fn + "(") != std::string::npos);
      size_t Call = V.Text.find("if (jf_ng <= 8) " + Fn + "(");
      REQUIRE(Call != std::string::npos);
      CHECK(V.Text.find("atomicAdd(jf_counter + 1, 1u)") < Call);
    }
    // The whole program through NVRTC (sm_90).
    Executable F = testCompiler().compile(G, fewOptions());
    CHECK(F.numKernels() == 1);
    CHECK_THAT(F.kernels()[0].Source, Contains("jf_few_"));
    // Off: no such function.
    GraphPlan Off = Compiler::plan(G, fewOptions(false));
    codegen::EmittedKernel EO = codegen::emitKernel(Off.planned(G), Off.Kernels[0]);
    CHECK(EO.Variants[0].Text.find("jf_few_") == std::string::npos);
  }
}

// Against the fp64 reference and the combining blocks' bits: every row
// count of one to nine groups, none, aligned and offset, NaN and
// infinities through the max/min combine.
TEST_CASE("GPU: the few-group combine matches the reference and the combining blocks' bits",
          "[gpu][mix-few]") {
  if (!haveGpu())
    return;
  std::vector<std::pair<std::string, Graph>> Graphs;
  Graphs.emplace_back("LayerNorm backward bf16 x 4096", layerNormBackward(Dim(4096)));
  Graphs.emplace_back("LayerNorm backward f32 x 2051", layerNormBackwardOf(f32, Dim(2051)));
  Graphs.emplace_back("RMSNorm backward f16 x 4099", rmsNormBackward(f16, Dim(4099)));
  Graphs.emplace_back("column max mean min bf16 x 2048", normWithColumnStats(bf16, Dim(2048)));
  for (auto &[Name, G] : Graphs) {
    Executable Few = testCompiler().compile(G, fewOptions());
    Executable Many = testCompiler().compile(G, fewOptions(false));
    REQUIRE(Few.numKernels() == 1);
    for (int64_t B : {1, 2, 3, 7, 8, 9, 0, 5}) {
      INFO(Name << " B=" << B);
      CheckOptions O;
      O.MixOrderColumns = true;
      O.MixFewGroups = true;
      O.ExpectFusedKernels = 1;
      O.SpecialValues = B == 7;
      checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
      O.MisalignEach = {1, 3, 0, 2};
      checkGraph(G, randomBindings(G, {{"B", B}}, {}, O), O);
      // The same bits as the combining blocks, twice (the counters reset).
      Bindings In = randomBindings(G, {{"B", B}}, {});
      std::map<std::string, HostTensor> A = runOnDevice(Many, In);
      for (int I = 0; I < 2; ++I) {
        std::map<std::string, HostTensor> C = runOnDevice(Few, In);
        for (const auto &[Out, T] : A)
          CHECK(C.at(Out).Data == T.Data);
      }
    }
  }
}
