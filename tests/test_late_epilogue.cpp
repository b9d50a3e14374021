//===- tests/test_late_epilogue.cpp - CompileOptions::RowCacheLateEpilogue ===//
//
// A row that fits the register budget whole keeps only the inputs its
// reduction stages read in the form for many rows; the epilogue loads a
// norm's weight and bias where it uses them. Runs of at most SMs rows
// launch the kernel the default rule makes. RowCacheLatePeeled does so in
// the peeled variants only.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

Executable compileLate(const Graph &G, bool Late, bool PeeledOnly = false) {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.RowCacheLateEpilogue = Late;
  Opts.RowCacheLatePeeled = PeeledOnly;
  return testCompiler().compile(G, Opts);
}

/// Register-cache arrays ("cvN[") a kernel's text declares.
int cacheArrays(const std::string &Text) {
  int N = 0;
  for (size_t At = Text.find("> cv"); At != std::string::npos; At = Text.find("> cv", At + 1))
    ++N;
  return N;
}

} // namespace

TEST_CASE("RowCacheLateEpilogue: the many-rows form keeps the stage inputs, few rows the "
          "rule's kernel",
          "[codegen][rowcache][late]") {
  // LayerNorm f32 x 4096: the rule keeps x, w and b (192 B a thread), and
  // has a 512-thread form for runs of <= SMs rows.
  Graph L = layerNorm(DType::F32, 4096);
  Executable Rule = compileLate(L, false), Late = compileLate(L, true);
  INFO(Late.plan());
  REQUIRE(Rule.kernels().size() == 1);
  REQUIRE(Late.kernels().size() == 1);
  const std::string &Name = Late.kernels()[0].Name;
  CHECK(Late.plan().find("RowCacheLateEpilogue") != std::string::npos);
  CHECK(Rule.plan().find("RowCacheLateEpilogue") == std::string::npos);
  // Few rows: the rule's own wide form, the same name and text.
  REQUIRE(!Rule.kernels()[0].WideRowsName.empty());
  CHECK(Late.kernels()[0].WideRowsName == Rule.kernels()[0].WideRowsName);
  std::string KRule = kernelSource(Rule), KLate = kernelSource(Late);
  CHECK(kernelText(KLate, Late.kernels()[0].WideRowsName) ==
        kernelText(KRule, Rule.kernels()[0].WideRowsName));
  // Many rows: x alone in registers, three arrays before.
  CHECK(cacheArrays(kernelText(KRule, Name)) == 3);
  CHECK(cacheArrays(kernelText(KLate, Name)) == 1);

  // add + RMSNorm bf16 x 4999 (peeled): x and the residual are stage
  // inputs, w only the epilogue's; without a wide form of its own, the
  // rule's kernel itself becomes the few-rows form (<name>_all).
  Graph A = addRmsNorm(DType::BF16, 4999);
  Executable ARule = compileLate(A, false), ALate = compileLate(A, true);
  INFO(ALate.plan());
  REQUIRE(ALate.kernels().size() == 1);
  const std::string &AName = ALate.kernels()[0].Name;
  std::string AWide = ALate.kernels()[0].WideRowsName;
  CHECK((AWide == AName + "_all" || AWide == ARule.kernels()[0].WideRowsName));
  std::string AKRule = kernelSource(ARule), AKLate = kernelSource(ALate);
  CHECK(cacheArrays(kernelText(AKLate, AName)) < cacheArrays(kernelText(AKRule, AName)));

  // Softmax has no epilogue-only input: unchanged.
  Graph S;
  S.output("p", nn::softmax(S.input("x", DType::F32, {"B", 4096})));
  CHECK(compileLate(S, true).plan().find("RowCacheLateEpilogue") == std::string::npos);
}

TEST_CASE("RowCacheLatePeeled: the peeled variants keep the stage inputs, the aligned one "
          "every input",
          "[codegen][rowcache][late]") {
  // LayerNorm f32 x 4096: x, w and b kept (192 B a thread) by the rule; its
  // aligned (_v4), peeled (_p4) and output-led (_o4) variants.
  Graph L = layerNorm(DType::F32, 4096);
  Executable Rule = compileLate(L, false), Peeled = compileLate(L, false, true);
  INFO(Peeled.plan());
  REQUIRE(Peeled.kernels().size() == 1);
  const std::string &Name = Peeled.kernels()[0].Name;
  CHECK(Peeled.plan().find("RowCacheLatePeeled") != std::string::npos);
  CHECK(Peeled.plan().find("the aligned variant keeps every input") != std::string::npos);
  std::string KRule = kernelSource(Rule), KPeeled = kernelSource(Peeled);
  for (const char *V : {"_v4", "_p4", "_o4"}) {
    INFO(V);
    REQUIRE(!kernelText(KRule, Name + V).empty());
    CHECK(cacheArrays(kernelText(KRule, Name + V)) == 3);
  }
  CHECK(cacheArrays(kernelText(KPeeled, Name + "_v4")) == 3);
  CHECK(cacheArrays(kernelText(KPeeled, Name + "_p4")) == 1);
  CHECK(cacheArrays(kernelText(KPeeled, Name + "_o4")) == 1);
  // The aligned variant is the rule's, character for character.
  CHECK(kernelText(KPeeled, Name + "_v4") == kernelText(KRule, Name + "_v4"));
  // Few rows: the rule's own wide form, as with RowCacheLateEpilogue.
  REQUIRE(!Rule.kernels()[0].WideRowsName.empty());
  CHECK(Peeled.kernels()[0].WideRowsName == Rule.kernels()[0].WideRowsName);
  // Without a peeled variant (the ladder) the option changes nothing.
  CompileOptions Ladder;
  Ladder.Arch = "sm_90";
  Ladder.PeelAlignment = false;
  Ladder.RowCacheLatePeeled = true;
  CHECK(testCompiler().compile(L, Ladder).plan().find("RowCacheLatePeeled") ==
        std::string::npos);
}

TEST_CASE("GPU: late epilogue loads match the reference, both forms, any offset",
          "[gpu][rowcache][late]") {
  // Runs of 7 rows launch the rule's kernel, 300 the late form (an H200
  // has 132 SMs); odd rows and offsets take the peeled variant.
  for (DType T : {DType::F32, DType::BF16}) {
    for (int64_t H : {int64_t(1021), int64_t(4096), int64_t(4999)}) {
      Graph Gs[] = {layerNorm(T, H), addRmsNorm(T, H)};
      for (const Graph &G : Gs)
        for (int64_t Rows : {int64_t(7), int64_t(300)})
          for (unsigned Off : {0u, 1u}) {
            INFO(dtypeName(T).str() << " rows " << Rows << " x " << H << " offset " << Off);
            // RowCacheLateEpilogue, then RowCacheLatePeeled (the aligned
            // variant with every input kept, the peeled ones without).
            for (bool PeeledOnly : {false, true}) {
              CheckOptions CO;
              CO.RowCacheLateEpilogue = !PeeledOnly;
              CO.RowCacheLatePeeled = PeeledOnly;
              CO.MisalignElems = Off;
              CO.SpecialValues = Off == 1;
              checkGraph(G, randomBindings(G, {{"B", Rows}}, {{"eps", 1e-5}}, CO), CO);
            }
          }
    }
  }
}
