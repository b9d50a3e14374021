//===- tests/test_stream_loads.cpp - CompileOptions::StreamLoads ----------===//
//
// StreamLoads puts evict_first on the wide loads of inputs an element-wise
// kernel, or a row kernel keeping its row in registers, reads once; inputs
// broadcast over the domain (a weight, a bias) and rows re-read per stage
// load plainly. Correctness runs in the GPU random graphs (a quarter of the
// batches compile with it).
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>

#include <regex>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// The loads of input \p In in the kernels, as "hinted plain" counts.
std::pair<int, int> loadsOf(const std::string &Kernels, int In) {
  std::regex Load("jf_load(_[a-z]+)?<[^>]*>\\(in_" + std::to_string(In) + "\\b");
  std::regex Hinted("jf_load(_[a-z]+)?<[^,>]*, [0-9]+, 2>\\(in_" + std::to_string(In) + "\\b");
  int All = 0, Hint = 0;
  for (auto I = std::sregex_iterator(Kernels.begin(), Kernels.end(), Load);
       I != std::sregex_iterator(); ++I)
    ++All;
  for (auto I = std::sregex_iterator(Kernels.begin(), Kernels.end(), Hinted);
       I != std::sregex_iterator(); ++I)
    ++Hint;
  return {Hint, All - Hint};
}

/// \p Clusters: the cluster forms of a long row (the few-rows form and the
/// aligned split, CompileOptions::RowFewRowsClusters and RowClustersAligned).
Executable compileWith(const Graph &G, bool Stream, bool Clusters = true) {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.StreamLoads = Stream;
  Opts.RowFewRowsClusters = Clusters;
  Opts.RowClustersAligned = Clusters;
  return testCompiler().compile(G, Opts);
}

} // namespace

TEST_CASE("StreamLoads: inputs read once carry evict_first, broadcast ones do not",
          "[codegen][stream]") {
  // Element-wise: x and the bias broadcast over rows.
  // (Inputs made one statement each: x is input 0.)
  Graph E;
  Value EX = E.input("x", DType::BF16, {"B", 4096});
  Value EB = E.input("bias", DType::BF16, {4096});
  E.output("y", nn::geluBias(EX, EB, true));
  // A row kept in registers (LayerNorm: x, then weight and bias).
  Graph L;
  Value LX = L.input("x", DType::F32, {"B", 4096});
  Value LW = L.input("w", DType::F32, {4096});
  Value LB = L.input("b", DType::F32, {4096});
  L.output("y", nn::layerNorm(LX, LW, LB, L.scalar("eps", DType::F32)));
  for (const Graph *G : {&E, &L}) {
    INFO((G == &E ? "bias + GELU" : "LayerNorm"));
    Executable On = compileWith(*G, true), Off = compileWith(*G, false);
    std::string K = kernelSource(On), KOff = kernelSource(Off);
    auto [XHint, XPlain] = loadsOf(K, 0);
    CHECK(XHint > 0);
    CHECK(XPlain == 0);
    for (int In = 1; In < static_cast<int>(On.inputs().size()); ++In) {
      INFO("input " << In);
      auto [Hint, Plain] = loadsOf(K, In);
      CHECK(Hint == 0);
      CHECK(Plain > 0);
    }
    CHECK(loadsOf(KOff, 0).first == 0);
    CHECK(On.plan().find("evict_first; StreamLoads") != std::string::npos);
    CHECK(Off.plan().find("StreamLoads") == std::string::npos);
    CHECK(On.ptx().find("createpolicy.fractional.L2::evict_first") != std::string::npos);
    CHECK(Off.ptx().find("createpolicy") == std::string::npos);
  }
}

TEST_CASE("StreamLoads: a row re-read per stage keeps plain loads", "[codegen][stream]") {
  // f32 rows of 128256 do not fit the registers: read again per stage,
  // where L2 should keep them. (Without the cluster forms, few rows and the
  // aligned split, whose split rows fit the registers of a cluster's blocks
  // and are streamed.)
  Graph G;
  G.output("p", nn::softmax(G.input("x", DType::F32, {"B", 128256})));
  Executable On = compileWith(G, true, /*Clusters=*/false);
  REQUIRE(On.plan().find("row-in-registers") == std::string::npos);
  REQUIRE(On.plan().find("re-read") != std::string::npos);
  CHECK(On.plan().find("StreamLoads") == std::string::npos);
  CHECK(loadsOf(kernelSource(On), 0).first == 0);
}

namespace {

Graph sumAmax(llvm::ArrayRef<Dim> Dims, DType T) {
  Graph G;
  Value A = abs(G.input("x", T, Dims));
  G.output("s", sum(A));
  G.output("m", reduceMax(A));
  return G;
}

Executable compileReadOnly(const Graph &G, bool On) {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.StreamReadOnlyRows = On;
  return testCompiler().compile(G, Opts);
}

} // namespace

TEST_CASE("StreamReadOnlyRows: rows with per-row outputs stream, a plain copy for few rows",
          "[codegen][stream]") {
  Graph G = sumAmax({Dim("B"), Dim(4096)}, DType::BF16);
  Executable On = compileReadOnly(G, true), Off = compileReadOnly(G, false);
  std::string K = kernelSource(On);
  INFO(On.plan());
  REQUIRE(On.plan().find("StreamReadOnlyRows") != std::string::npos);
  REQUIRE(On.plan().find("jf_k0_sum_plain instead") != std::string::npos);
  // The main kernel streams x; its plain copy, for runs of <= SMs rows,
  // loads it plainly.
  std::string Main = kernelText(K, "jf_k0_sum"), Plain = kernelText(K, "jf_k0_sum_plain");
  REQUIRE(!Main.empty());
  REQUIRE(!Plain.empty());
  CHECK(loadsOf(Main, 0).first > 0);
  CHECK(loadsOf(Main, 0).second == 0);
  CHECK(loadsOf(Plain, 0).first == 0);
  CHECK(loadsOf(Plain, 0).second > 0);
  // Off: no hint, no copy.
  CHECK(loadsOf(kernelSource(Off), 0).first == 0);
  CHECK(kernelSource(Off).find("jf_k0_sum_plain") == std::string::npos);

  // Static rows beyond any SM count: streamed, no copy.
  Executable Static = compileReadOnly(sumAmax({Dim(4096), Dim(4096)}, DType::BF16), true);
  CHECK(loadsOf(kernelSource(Static), 0).first > 0);
  CHECK(kernelSource(Static).find("_plain") == std::string::npos);

  // A row kernel that writes rows (softmax) keeps plain loads.
  Graph S;
  S.output("p", nn::softmax(S.input("x", DType::BF16, {"B", 4096})));
  Executable SOn = compileReadOnly(S, true);
  CHECK(loadsOf(kernelSource(SOn), 0).first == 0);
  CHECK(SOn.plan().find("StreamReadOnlyRows") == std::string::npos);
}

TEST_CASE("GPU: streamed rows match the reference, both forms, any offset",
          "[gpu][stream]") {
  // Read-only rows (sum/amax) under StreamReadOnlyRows on both sides of
  // 132 rows (the plain copy below, the streamed form above on an H200),
  // and softmax and bias + GELU under StreamLoads: the hint changes only
  // where L2 keeps lines, never a value.
  for (DType T : {DType::F32, DType::BF16}) {
    for (int64_t Len : {int64_t(1021), int64_t(4096)}) {
      Graph R = sumAmax({Dim("B"), Dim(Len)}, T);
      for (int64_t Rows : {int64_t(7), int64_t(131), int64_t(300)}) {
        for (unsigned Off : {0u, 1u}) {
          INFO(dtypeName(T).str() << " rows " << Rows << " x " << Len << " offset " << Off);
          CheckOptions CO;
          CO.StreamReadOnlyRows = true;
          CO.MisalignElems = Off;
          CO.SpecialValues = Off == 1;
          checkGraph(R, randomBindings(R, {{"B", Rows}}, {}, CO), CO);
        }
      }
    }
    Graph S;
    S.output("p", nn::softmax(S.input("x", T, {"B", 4095})));
    Graph E;
    Value EX = E.input("x", T, {"B", 4096});
    Value EB = E.input("bias", T, {4096});
    E.output("y", nn::geluBias(EX, EB, true));
    for (const Graph *G : {&S, &E}) {
      CheckOptions CO;
      CO.StreamLoads = true;
      CO.MisalignElems = 1;
      checkGraph(*G, randomBindings(*G, {{"B", 257}}, {}, CO), CO);
    }
  }
}
