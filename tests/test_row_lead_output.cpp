//===- tests/test_row_lead_output.cpp - CompileOptions::RowLeadOutput -----===//
//
// A row kernel's peeled variant with its chunks at the phase of its first
// whole-row output instead of its first input: the plan and the kernel text
// here, the results on the GPU against the reference where the inputs and
// the outputs sit at different phases.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

TEST_CASE("RowLeadOutput: the peeled variant's phase is the first output's",
          "[codegen][rowleadoutput]") {
  for (DType T : {DType::F32, DType::BF16}) {
    for (const Graph &G : {addRmsNorm(T, 4095), layerNorm(T, 4096), softmax(T, 4999)}) {
      CompileOptions On, Off;
      On.Arch = Off.Arch = "sm_90";
      On.RowLeadOutput = true;
      Executable E = testCompiler().compile(G, On), Plain = testCompiler().compile(G, Off);
      INFO(E.plan());
      REQUIRE(E.kernels().size() == 1);
      CHECK(E.plan().find("(RowLeadOutput)") != std::string::npos);
      CHECK(Plain.plan().find("RowLeadOutput") == std::string::npos);
      std::string Name = E.kernels()[0].Name;
      int Vec = E.kernels()[0].Vecs.back();
      std::string Peeled = kernelText(kernelSource(E), fmt::format("{}_p{}", Name, Vec));
      REQUIRE(!Peeled.empty());
      CHECK(Peeled.find(fmt::format("const int jf_off = jf_phase<{}, {}>(out_0);",
                                    T == DType::F32 ? "float" : "jf_bf16", Vec)) !=
            std::string::npos);
      // No input is the lead: x is loaded through its own alignment check.
      CHECK(Peeled.find("jf_load<") == std::string::npos);
      CHECK(kernelSource(Plain).find("jf_phase<") != std::string::npos);
      CHECK(kernelSource(Plain).find("(out_0);") == std::string::npos);
      CHECK(!E.ptx().empty());
    }
  }
}

TEST_CASE("GPU: RowLeadOutput rows match the reference, inputs and outputs at other phases",
          "[gpu][rowleadoutput]") {
  for (DType T : {DType::F32, DType::BF16, DType::F16}) {
    for (int64_t H : {int64_t(1021), int64_t(4095), int64_t(4096)}) {
      Graph Gs[] = {layerNorm(T, H), addRmsNorm(T, H), softmax(T, H)};
      for (const Graph &G : Gs)
        for (int64_t Rows : {int64_t(300), int64_t(7)}) {
          INFO(dtypeName(T).str() << " rows " << Rows << " x " << H);
          CheckOptions CO;
          CO.RowLeadOutput = true;
          checkAlignedAndMisaligned(G, {{"B", Rows}}, CO);
          // Inputs then outputs, cycling: the inputs one element off and
          // the outputs aligned, then the other way round.
          size_t NIn = G.inputs().size(), NOut = G.outputs().size();
          for (unsigned InOff : {1u, 0u}) {
            CheckOptions Each = CO;
            Each.MisalignEach.assign(NIn, InOff);
            Each.MisalignEach.resize(NIn + NOut, 1 - InOff);
            std::map<std::string, double> Scalars;
            if (!G.scalars().empty())
              Scalars["eps"] = 1e-5;
            checkGraph(G, randomBindings(G, {{"B", Rows}}, Scalars), Each);
          }
        }
    }
  }
}
