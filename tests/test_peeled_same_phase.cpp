//===- tests/test_peeled_same_phase.cpp - the same-phase peeled variant ---===//
//
// CompileOptions::PeeledSamePhase (an experiment): a row kernel's input-led
// peeled variant takes every tensor of the row's layout (and a row vector of
// a row that is a multiple of the width) to sit at the lead's phase, so
// their whole chunks are plain 16-byte accesses; the launch runs it only
// when their pointers agree, else the output-led variant, which keeps the
// checked accesses. On the CPU: which tensors, the emitted accesses, the
// horizontal launch that may not use it (tests/hostpath has the launch's
// choice). On a GPU: the reference at per-tensor offsets that take either
// variant, in every form of a long row.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"
#include "SweepPatterns.h"
#include "TestEnv.h"

#include "codegen/Codegen.h"
#include "compiler/Schedule.h"
#include "driver/Compiler.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <regex>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

CompileOptions samePhaseOptions(bool On) {
  CompileOptions O;
  O.Arch = "sm_90";
  O.DeferVariants = false;
  O.PeeledSamePhase = On;
  return O;
}

/// The text of variant \p Name's definition in \p Src.
std::string variantText(const std::string &Src, const std::string &Name) {
  size_t B = Src.find(" " + Name + "(");
  REQUIRE(B != std::string::npos);
  size_t E = Src.find("extern \"C\"", B);
  return Src.substr(B, E == std::string::npos ? std::string::npos : E - B);
}

bool shiftedLoad(const std::string &Text, int Input) {
  return std::regex_search(Text,
                           std::regex(fmt::format(R"(jf_load_whole<[^>]*>\(in_{} )", Input)));
}

} // namespace

TEST_CASE("PeeledSamePhase: the tensors of the row's layout, the row vector where rows are "
          "whole chunks",
          "[same-phase]") {
  for (int64_t H : {int64_t(4096), int64_t(4099)}) {
    INFO("x " << H);
    Graph G = addRmsNorm(bf16, H);
    GraphPlan Off = Compiler::plan(G, samePhaseOptions(false));
    GraphPlan On = Compiler::plan(G, samePhaseOptions(true));
    REQUIRE(On.Kernels.size() == 1);
    const KernelPlan &K = On.Kernels[0];
    INFO(K.Why);
    CHECK_FALSE(Off.Kernels[0].SamePhasePeeled);
    REQUIRE(K.SamePhasePeeled);
    REQUIRE(K.OutputLedVariant);
    CHECK_THAT(K.Why, Catch::Matchers::Contains("PeeledSamePhase"));
    // x leads; the residual always, the weight only where a row is whole
    // chunks (every row's chunks then sit at one phase of it); both outputs.
    codegen::SamePhaseTensors S = codegen::samePhaseTensors(On.planned(G), K);
    CHECK(S.Inputs == (H % 8 == 0 ? std::vector<int>{1, 2} : std::vector<int>{1}));
    CHECK(S.Outputs == std::vector<int>{0, 1});
    // The forms carry it too.
    for (const auto *Form : {&K.FewRows, &K.WideRows})
      if (*Form)
        CHECK((*Form)->SamePhasePeeled);

    // The input-led variant: plain loads of the residual (and the weight),
    // plain stores; the output-led one keeps its checked accesses.
    Executable E = testCompiler().compile(G, samePhaseOptions(true));
    const std::string &Src = E.kernels()[0].Source;
    std::string Led = variantText(Src, K.variantName(8, true));
    std::string OutLed = variantText(Src, K.variantName(8, true, true));
    CHECK_FALSE(shiftedLoad(Led, 1));
    CHECK(shiftedLoad(Led, 2) == (H % 8 != 0));
    CHECK(Led.find("jf_store_whole") == std::string::npos);
    CHECK(shiftedLoad(OutLed, 1));
    CHECK(shiftedLoad(OutLed, 2));
    Executable Before = testCompiler().compile(G, samePhaseOptions(false));
    CHECK(shiftedLoad(variantText(Before.kernels()[0].Source, K.variantName(8, true)), 1));
  }
  // An output of another element size than x's (f32 y of bf16 rows) is not
  // one of them: its chunks are 32 bytes.
  Graph Wide;
  {
    Value X = Wide.input("x", bf16, {"B", 4096});
    Value R = X + Wide.input("residual", bf16, {"B", 4096});
    Wide.output("residual_out", R);
    Wide.output("y", cast(nn::rmsNorm(R, Wide.input("weight", bf16, {4096}),
                                      Wide.scalar("eps", f32)),
                          f32));
  }
  GraphPlan P = Compiler::plan(Wide, samePhaseOptions(true));
  CHECK(codegen::samePhaseTensors(P.planned(Wide), P.Kernels.at(0)).Outputs ==
        std::vector<int>{0});
}

TEST_CASE("PeeledSamePhase: not where the kept loads pass PeeledOccupancyMaxBytes",
          "[same-phase][aligned-cluster]") {
  // Softmax f32 split over 4 blocks: x 50257 keeps 112 B a thread and takes
  // the variant; x 128256 keeps 256 B (105 registers, 128 with the
  // variant's plain loads: 0.94x, bench/ab/s47a.txt) and does not, while
  // its re-read plain form, keeping nothing, does.
  for (auto [H, Same] : {std::pair{int64_t(50257), true}, std::pair{int64_t(128256), false}}) {
    INFO("softmax f32 x " << H);
    CompileOptions O = samePhaseOptions(true);
    O.RowClustersAligned = true;
    KernelPlan K = Compiler::plan(sweepPattern("softmax", f32, H), O).Kernels.at(0);
    INFO(K.Why);
    CHECK(K.SamePhasePeeled);
    REQUIRE(K.AlignedCluster);
    CHECK(K.AlignedCluster->SamePhasePeeled == Same);
    CHECK((K.AlignedCluster->KeptLoadBytes <= ScheduleOptions::PeeledOccupancyMaxBytes) == Same);
  }
}

TEST_CASE("PeeledSamePhase: not in a horizontal launch, whose parts serve any pointers",
          "[same-phase][horizontal]") {
  // Two independent add + RMSNorm rows of few static rows: one launch.
  Graph G;
  Value Eps = G.scalar("eps", f32);
  for (const char *Name : {"a", "b"}) {
    Value X = G.input(fmt::format("x_{}", Name), bf16, {4, 4096});
    Value Res = G.input(fmt::format("res_{}", Name), bf16, {4, 4096});
    Value W = G.input(fmt::format("w_{}", Name), bf16, {4096});
    G.output(fmt::format("y_{}", Name), nn::rmsNorm(X + Res, W, Eps));
  }
  GraphPlan P = Compiler::plan(G, samePhaseOptions(true));
  INFO(P.PlanText);
  REQUIRE(P.Launches.size() == 1);
  REQUIRE(P.Launches[0].size() == 2);
  for (const KernelPlan &K : P.Kernels) {
    CHECK_FALSE(K.SamePhasePeeled);
    CHECK_THAT(K.Why, Catch::Matchers::Contains("a part of a horizontal launch"));
  }
}

TEST_CASE("GPU: PeeledSamePhase matches the reference at offsets that take either variant",
          "[gpu][same-phase]") {
  if (!haveGpu())
    return;
  // Offsets in elements, inputs then outputs, cycling: {1} and {3} put
  // every tensor at one phase (the same-phase variant); {1, 1, 0} the
  // weight apart (on rows of 4096 the output-led variant, on odd rows the
  // same-phase one); {1, 0, 5} and {0, 7, 2, 3} apart.
  std::vector<std::vector<unsigned>> Layouts = {{1}, {3}, {1, 1, 0}, {1, 0, 5}, {0, 7, 2, 3}};
  struct Case {
    int64_t H;
    std::vector<int64_t> Rows;
  };
  // Long rows in every form: the few-rows cluster (1 row), the wide form
  // (67), the plain re-read row (300); short ones kept in registers.
  for (const Case &C : {Case{4096, {37}}, Case{4099, {37}}, Case{1021, {129}},
                        Case{128256, {1, 67, 300}}, Case{50257, {300}}}) {
    Graph G = addRmsNorm(bf16, C.H);
    for (int64_t B : C.Rows) {
      Bindings Bd = randomBindings(G, {{"B", B}}, {{"eps", 1e-5}});
      for (const std::vector<unsigned> &L : Layouts) {
        INFO("x " << C.H << " B=" << B << " offsets " << fmt::format("{}", fmt::join(L, "/")));
        CheckOptions O;
        O.PeeledSamePhase = true;
        O.MisalignEach = L;
        O.Unfused = B < 100;
        checkGraph(G, Bd, O);
      }
    }
  }
  // Softmax (x and y only) and LayerNorm (weight and bias) at the offsets.
  for (const char *Name : {"softmax", "layernorm"}) {
    Graph G = sweepPattern(Name, bf16, 32064);
    Bindings Bd = randomBindings(G, {{"B", 140}}, epsScalars(G));
    for (const std::vector<unsigned> &L : Layouts) {
      INFO(Name << " offsets " << fmt::format("{}", fmt::join(L, "/")));
      CheckOptions O;
      O.PeeledSamePhase = true;
      O.MisalignEach = L;
      O.Unfused = false;
      checkGraph(G, Bd, O);
    }
  }
}
