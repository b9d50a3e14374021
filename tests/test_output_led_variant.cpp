//===- tests/test_output_led_variant.cpp - CompileOptions::OutputLedVariant ===//
//
// A row kernel's peeled variant compiled twice: its chunks at the phase of
// its first input over the whole row, and at its first such output's. The
// plan and the kernel text here (the launch's pick is in tests/hostpath), the
// results on the GPU against the reference where the inputs and the outputs
// sit at different phases, so that the output-led variant runs.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

using namespace jitfuse;
using namespace jitfuse::test;

TEST_CASE("OutputLedVariant: a peeled row kernel has a second variant led by its output",
          "[codegen][outputled]") {
  for (DType T : {DType::F32, DType::BF16}) {
    for (const Graph &G : {addRmsNorm(T, 4095), layerNorm(T, 4096), softmax(T, 4999)}) {
      CompileOptions On, Off;
      On.Arch = Off.Arch = "sm_90";
      Off.OutputLedVariant = false;
      // The input-led variant as it is without a second one: one that
      // checks every other tensor (tests/test_peeled_same_phase.cpp has
      // PeeledSamePhase's).
      On.PeeledSamePhase = false;
      Executable E = testCompiler().compile(G, On), Plain = testCompiler().compile(G, Off);
      INFO(E.plan());
      REQUIRE(E.kernels().size() == 1);
      CHECK(E.plan().find("a second peeled variant led by the output") != std::string::npos);
      CHECK(Plain.plan().find("led by the output") == std::string::npos);
      const KernelInfo &K = E.kernels()[0];
      // The aligned variant when the width divides the row, the peeled one
      // led by x, the one led by the output: the same width.
      std::vector<int> PlainVecs = Plain.kernels()[0].Vecs;
      std::vector<int> Want = PlainVecs;
      Want.push_back(PlainVecs.back());
      CHECK(K.Vecs == Want);
      int Vec = K.Vecs.back();
      std::string Type = T == DType::F32 ? "float" : "jf_bf16";
      std::string Src = kernelSource(E);
      std::string ByInput = kernelText(Src, fmt::format("{}_p{}", K.Name, Vec));
      std::string ByOutput = kernelText(Src, fmt::format("{}_o{}", K.Name, Vec));
      REQUIRE(!ByInput.empty());
      REQUIRE(!ByOutput.empty());
      CHECK(ByInput.find(fmt::format("const int jf_off = jf_phase<{}, {}>(in_0);", Type, Vec)) !=
            std::string::npos);
      CHECK(ByOutput.find(fmt::format("const int jf_off = jf_phase<{}, {}>(out_0);", Type,
                                      Vec)) != std::string::npos);
      // No input is the lead: x is loaded through its own alignment check.
      CHECK(ByOutput.find("jf_load<") == std::string::npos);
      // The input-led variant is the one compiled with the option off (up
      // to its closing brace: kernelText runs on to the next definition).
      auto Body = [](const std::string &S) { return S.substr(0, S.rfind('}') + 1); };
      CHECK(Body(kernelText(kernelSource(Plain), fmt::format("{}_p{}", K.Name, Vec))) ==
            Body(ByInput));
      CHECK(kernelSource(Plain).find(fmt::format("{}_o{}", K.Name, Vec)) == std::string::npos);
      CHECK(!E.ptx().empty());
    }
  }
}

TEST_CASE("OutputLedVariant: not for rows without a whole-row output, in every form and width",
          "[codegen][outputled]") {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  // A row sum writes [B]: nothing over the whole row to follow.
  {
    Graph G;
    G.output("s", sum(abs(G.input("x", DType::BF16, {"B", 4095}))));
    Executable E = testCompiler().compile(G, Opts);
    INFO(E.plan());
    REQUIRE(E.kernels().size() == 1);
    CHECK(E.plan().find("led by the output") == std::string::npos);
    CHECK(kernelSource(E).find("_o8(") == std::string::npos);
  }
  // A row kept at 1024 threads (RowCacheWideThreads), 64 registers a thread:
  // the output-led copy too (session 26; up to 64 B spilled, the resource
  // test's bound), led by the output y.
  {
    Executable E = testCompiler().compile(layerNorm(DType::BF16, 50257), Opts);
    INFO(E.plan());
    const KernelInfo &K = E.kernels()[0];
    REQUIRE(K.ThreadsX == 1024);
    CHECK(E.plan().find("led by the output") != std::string::npos);
    CHECK(K.Vecs == std::vector<int>{8, 8});
    CHECK(kernelText(kernelSource(E), K.Name + "_o8").find("jf_phase<jf_bf16, 8>(out_0)") !=
          std::string::npos);
  }
  // A vocabulary-sized softmax has a few-rows form (a cluster a row): it
  // has the output-led variant too, at the same index.
  {
    Executable E = testCompiler().compile(softmax(DType::BF16, 128256), Opts);
    INFO(E.plan());
    const KernelInfo &K = E.kernels()[0];
    REQUIRE(!K.FewRowsName.empty());
    CHECK(K.FewRowsVariants == K.Vecs.size());
    std::string Src = kernelSource(E);
    CHECK(!kernelText(Src, K.Name + "_o8").empty());
    CHECK(kernelText(Src, K.FewRowsName + "_o8").find("jf_phase<jf_bf16, 8>(out_0)") !=
          std::string::npos);
  }
}

namespace {

/// G over Rows rows against the reference: every tensor aligned, then one
/// element off; inputs off with the outputs aligned (the output-led variant
/// runs), then the other way round (led by the output too), then only the
/// first input off.
void checkLeadLayouts(const Graph &G, int64_t Rows) {
  CheckOptions CO;
  checkAlignedAndMisaligned(G, {{"B", Rows}}, CO);
  size_t NIn = G.inputs().size(), NOut = G.outputs().size();
  for (int Layout : {0, 1, 2}) {
    INFO("layout " << Layout);
    CheckOptions Each = CO;
    Each.MisalignEach.assign(NIn, Layout == 1 ? 0u : 1u);
    if (Layout == 2)
      std::fill(Each.MisalignEach.begin() + 1, Each.MisalignEach.end(), 0u);
    Each.MisalignEach.resize(NIn + NOut, Layout == 1 ? 1u : 0u);
    std::map<std::string, double> Scalars;
    if (!G.scalars().empty())
      Scalars["eps"] = 1e-5;
    checkGraph(G, randomBindings(G, {{"B", Rows}}, Scalars), Each);
  }
}

} // namespace

TEST_CASE("GPU: output-led rows match the reference, inputs and outputs at other phases",
          "[gpu][outputled]") {
  for (DType T : {DType::F32, DType::BF16, DType::F16}) {
    for (int64_t H : {int64_t(1021), int64_t(4095), int64_t(4096)}) {
      Graph Gs[] = {layerNorm(T, H), addRmsNorm(T, H), softmax(T, H)};
      for (const Graph &G : Gs)
        for (int64_t Rows : {int64_t(300), int64_t(7)}) {
          INFO(dtypeName(T).str() << " rows " << Rows << " x " << H);
          checkLeadLayouts(G, Rows);
        }
    }
  }
}

TEST_CASE("GPU: output-led rows kept at 1024 threads match the reference",
          "[gpu][outputled]") {
  // Rows kept in registers at 1024 threads a row (64 registers a thread),
  // the output-led copy included since session 26; LayerNorm bf16 x 50257's
  // copy spills (4 B).
  struct Case {
    Graph G;
    int64_t Rows;
  };
  Case Cases[] = {{addRmsNorm(DType::F32, 14336), 140}, {addRmsNorm(DType::BF16, 32064), 140},
                  {layerNorm(DType::F32, 32064), 140},  {softmax(DType::F32, 32064), 7},
                  {layerNorm(DType::BF16, 50257), 140}, {softmax(DType::F16, 50257), 7}};
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  for (const Case &C : Cases) {
    Executable E = testCompiler().compile(C.G, Opts);
    INFO(E.plan());
    REQUIRE(E.kernels().size() == 1);
    REQUIRE(E.kernels()[0].ThreadsX == 1024);
    REQUIRE(E.plan().find("led by the output") != std::string::npos);
    checkLeadLayouts(C.G, C.Rows);
  }
}
