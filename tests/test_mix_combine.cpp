//===- tests/test_mix_combine.cpp - the mixed kernel's combine ------------===//
//
// The combining blocks of a row kernel with column partials
// (codegen/MixColumns.cpp mixCombine): CompileOptions::MixCombineUnroll and
// MixCombineBatches change how many partials a thread has in flight, never
// the order they are added in. Sources and options on the CPU; on a GPU,
// the same bits as the rule's.
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"

#include "codegen/LaunchRule.h"
#include "driver/Compiler.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

/// Plans and code for sm_90 without a GPU, the mixed kernel on.
CompileOptions cpuOptions() {
  CompileOptions O;
  O.Arch = "sm_90";
  O.MixOrderColumns = true;
  return O;
}

} // namespace

TEST_CASE("MixCombineUnroll: the combine's loads in flight", "[mix-columns]") {
  Graph G = layerNormBackward(Dim(1536));
  CompileOptions O = cpuOptions();
  O.MixCombineUnroll = 16;
  GraphPlan P = Compiler::plan(G, O);
  REQUIRE(P.Kernels.size() == 1);
  CHECK(P.Kernels[0].CombineUnroll == 16);
  Executable E = testCompiler().compile(G, O);
  CHECK(E.kernels()[0].Source.find("#pragma unroll 16") != std::string::npos);
  // The rule's: batches of launch::MixCombineBatch loads, then the loop
  // unrolled 4; without MixCombineBatches the loop alone.
  const std::string Rule = testCompiler().compile(G, cpuOptions()).kernels()[0].Source;
  const std::string Batch = "float v[" + std::to_string(codegen::launch::MixCombineBatch) + "];";
  const std::string Unroll = "#pragma unroll " + std::to_string(codegen::launch::MixCombineUnroll);
  CHECK_THAT(Rule, Contains(Batch));
  CHECK_THAT(Rule, Contains(Unroll));
  CompileOptions L = cpuOptions();
  L.MixCombineBatches = false;
  const std::string Loop = testCompiler().compile(G, L).kernels()[0].Source;
  CHECK(Loop.find(Batch) == std::string::npos);
  CHECK_THAT(Loop, Contains(Unroll));
  for (int Bad : {-1, 3, 128}) {
    O.MixCombineUnroll = Bad;
    CHECK_THROWS_WITH(Compiler::plan(G, O), Contains("MixCombineUnroll"));
  }
}

TEST_CASE("GPU: the combine's unroll and batches keep every bit", "[gpu][mix-columns]") {
  if (!haveGpu())
    return;
  // The unroll and the batches only change how many partials are in
  // flight, not the order they are added in: dx, dw and db are the rule's
  // bits at 1-512 groups (a thread's 0-64 partials: every batch count).
  for (int64_t H : {768, 1021}) {
    Graph G = layerNormBackward(Dim(H));
    CompileOptions Rule;
    Rule.MixMinRows = 0;
    CompileOptions Wide = Rule, Loop = Rule;
    Wide.MixCombineUnroll = 16;
    Loop.MixCombineBatches = false;
    Executable F1 = testCompiler().compile(G, Rule), F2 = testCompiler().compile(G, Wide),
               F3 = testCompiler().compile(G, Loop);
    REQUIRE(F1.kernels()[0].Source.find("float v[16];") != std::string::npos);
    REQUIRE(F2.kernels()[0].Source.find("#pragma unroll 16") != std::string::npos);
    REQUIRE(F3.kernels()[0].Source.find("float v[16];") == std::string::npos);
    for (int64_t B : {1, 37, 300, 1025, 3001, 16385}) {
      INFO("H=" << H << " B=" << B);
      Bindings In = randomBindings(G, {{"B", B}}, {});
      std::map<std::string, HostTensor> A = runOnDevice(F1, In), C = runOnDevice(F2, In),
                                        D = runOnDevice(F3, In);
      for (const char *Out : {"dx", "dw", "db"}) {
        CHECK(A.at(Out).Data == C.at(Out).Data);
        CHECK(A.at(Out).Data == D.at(Out).Data);
      }
    }
  }
}
