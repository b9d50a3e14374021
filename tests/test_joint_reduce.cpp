//===- tests/test_joint_reduce.cpp - CompileOptions::JointReduce ----------===//
//
// A row kernel's stage may end in several block-wide reductions (LLaMA's two
// RMSNorms of one token, sum and max of |x|, softmax's online pair). With
// JointReduce they share two barriers: each warp's partials, one
// __syncthreads, warp 0 combines each, one __syncthreads. Here: the kernel
// text, NVRTC on random graphs, and on the GPU the results bitwise equal to
// the default's (same reduction order) and to the reference.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RandomGraph.h"
#include "TestEnv.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

Executable compileWith(const Graph &G, bool Joint) {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.DeferVariants = false;
  Opts.JointReduce = Joint;
  return testCompiler().compile(G, Opts);
}

/// Two residual-add RMSNorms of one row, the second on the first's sum (a
/// decoder layer's row part): both means in stage 0.
Graph twoNorms(DType T, int64_t H) {
  Graph G;
  Value X = G.input("hidden", T, {"T", H});
  Value R = G.input("residual", T, {"T", H});
  Value A = G.input("attn_out", T, {"T", H});
  Value Eps = G.scalar("eps", f32);
  Value Mid = X + R;
  G.output("mid", Mid);
  G.output("attn_in", nn::rmsNorm(Mid, G.input("w1", T, {H}), Eps));
  Value Out = A + Mid;
  G.output("out", Out);
  G.output("mlp_in", nn::rmsNorm(Out, G.input("w2", T, {H}), Eps));
  return G;
}

} // namespace

TEST_CASE("JointReduce: a stage's block reductions share two barriers",
          "[codegen][joint-reduce]") {
  Graph G = twoNorms(DType::BF16, 4096);
  Executable Off = compileWith(G, false);
  Executable On = compileWith(G, true);
  REQUIRE(On.numKernels() == 1);
  const KernelInfo &K = On.kernels()[0];
  INFO(On.plan() << "\n" << K.Source);
  REQUIRE(K.Kind == KernelKind::RowReduce);
  REQUIRE(K.ThreadsX == 256);
  CHECK(On.plan().find("each stage's block reductions share two barriers") != std::string::npos);
  CHECK(Off.plan().find("JointReduce") == std::string::npos);
  // Each variant: two partials, two combines, two barriers, no
  // jf_block_reduce (three barriers each).
  size_t Variants = K.Vecs.size();
  CHECK(countOf(K.Source, "jf_block_partial(acc") == 2 * Variants);
  CHECK(countOf(K.Source, "jf_block_combine<256>(jf_add_op(), (0.0f), jf_smem") == 2 * Variants);
  // (RowPhaseLoop's peeled variant: one more a row, before the next row's
  // first reduction.)
  bool Loop = On.plan().find("(RowPhaseLoop)") != std::string::npos;
  CHECK(countOf(K.Source, "__syncthreads();") == 2 * Variants + (Loop ? 1 : 0));
  CHECK(K.Source.find("jf_block_reduce<") == std::string::npos);
  CHECK(countOf(Off.kernels()[0].Source, "jf_block_reduce<256>(") == 2 * Variants);
  // The results are the scratch arrays' last slots (256 / 32).
  CHECK(countOf(K.Source, "[8] / (float)R;") == 2 * Variants);

  // In a horizontal launch (a decode layer's row part beside its SwiGLU):
  // the part's barriers are its own threads' (codegen/Horizontal.cpp).
  Graph L = twoNorms(DType::BF16, 4096);
  L.output("act", nn::siluMul(L.input("gate", DType::BF16, {"T", 11008}),
                              L.input("up", DType::BF16, {"T", 11008})));
  Executable Launch = compileWith(L, true);
  CHECK(Launch.numKernels() == 2);
  CHECK(Launch.numLaunches() == 1);
  CHECK(countOf(Launch.source(), "jf_block_partial(acc") >= 2);

  // Softmax's online pair beside a row sum: one partial of the pair type
  // (its Second has none) and one of the sum.
  Graph S;
  Value X = S.input("x", DType::F32, {"B", 50257});
  S.output("p", nn::softmax(X));
  S.output("s", sum(X));
  Executable Pair = compileWith(S, true);
  INFO(Pair.plan());
  // The plain form only: the few-rows form (a row split over a cluster)
  // combines across blocks and keeps its own reductions.
  const KernelInfo &PK = Pair.kernels()[0];
  REQUIRE(!PK.FewRowsName.empty());
  std::string PS = PK.Source.substr(0, PK.Source.find(PK.FewRowsName));
  CHECK(PS.find("jf_block_partial(accp") != std::string::npos);
  CHECK(PS.find("jf_block_combine<512>(jf_online_op<float>(), jf_ms<float>{") !=
        std::string::npos);
  CHECK(countOf(PS, "jf_block_partial(acc") == 2 * PK.Vecs.size());
  CHECK(PS.find("jf_block_reduce<") == std::string::npos);

  // A dynamic row length: the same.
  Graph Dyn;
  Value DX = Dyn.input("x", DType::BF16, {"B", "H"});
  Dyn.output("s", sum(abs(DX)));
  Dyn.output("m", reduceMax(abs(DX)));
  CHECK(countOf(compileWith(Dyn, true).source(), "jf_block_partial(acc") == 2);

  // A stage of one reduction keeps jf_block_reduce (its own three
  // barriers): split, ptxas spilled a cached f32 softmax row.
  Graph One;
  One.output("p", nn::softmax(One.input("x", DType::F32, {"B", 14336})));
  Executable Single = compileWith(One, true);
  CHECK(Single.source().find("jf_block_partial(acc") == std::string::npos);
  CHECK(Single.source().find("jf_block_reduce<512>(") != std::string::npos);
}

TEST_CASE("JointReduce: random graphs compile with NVRTC", "[random][joint-reduce]") {
  // Long rows (a block of many warps a row, where stages reduce
  // block-wide), and beside each random graph a row sum and a row max of
  // each of its inputs: stage-0 siblings of whatever else reads them.
  int Joint = 0;
  for (uint64_t I = 0; I < 30; ++I) {
    GenOptions GO;
    GO.LongRows = true;
    Recipe R = randomRecipe(9300007 + I, GO);
    Graph G = buildGraph(R);
    std::vector<NodeId> Inputs(G.inputs().begin(), G.inputs().end());
    for (NodeId N : Inputs) {
      if (G.node(N).rank() < 2)
        continue;
      Value In = G.value(N);
      G.output(G.node(N).Name + "_sum", sum(abs(In)));
      G.output(G.node(N).Name + "_max", reduceMax(In));
    }
    INFO("seed " << R.Seed << "\n" << printAsCpp(G));
    Executable X = compileWith(G, true);
    Joint += X.source().find("jf_block_combine<") != std::string::npos;
  }
  CHECK(Joint > 0);
}

TEST_CASE("JointReduce: the same bits as three barriers a reduction, and the reference",
          "[gpu][joint-reduce]") {
  bool Gpu = haveGpu();
  for (DType T : {DType::F32, DType::BF16}) {
    INFO("dtype " << dtypeName(T).str());
    for (int64_t H : {100, 4096, 5003, 50257}) {
      INFO("row length " << H);
      Graph G = twoNorms(T, H);
      Value X = G.input("x", T, {"T", H});
      G.output("sum", sum(abs(X)));
      G.output("max", reduceMax(abs(X)));
      G.output("p", nn::softmax(X));
      G.output("ln", nn::layerNorm(X, G.input("lw", T, {H}), G.input("lb", T, {H}),
                                   G.scalar("eps2", f32)));
      // An independent element-wise part: at few rows, one launch with the
      // row kernel (horizontal fusion).
      G.output("act", nn::siluMul(G.input("gate", T, {"T", 1000}), G.input("up", T, {"T", 1000})));
      // More rows than SMs, but fewer at the longest row: the fp64
      // reference of 300 rows of 50257 took ~9 s a dtype on a CPU (20 s
      // with its error bounds) and the whole case ran past 2 minutes.
      for (int64_t Rows : {int64_t(1), int64_t(7), H > 10000 ? int64_t(150) : int64_t(300)}) {
        INFO(Rows << " rows");
        Bindings B = randomBindings(G, {{"T", Rows}}, {{"eps", 1e-6}, {"eps2", 1e-5}});
        CheckOptions Opts;
        Opts.JointReduce = true;
        checkGraph(G, B, Opts);
        if (!Gpu)
          continue;
        // Bitwise equal to the default kernels: each value is reduced in the
        // same order, only the barriers moved.
        Executable Default = compileWith(G, false), Joint = compileWith(G, true);
        std::map<std::string, HostTensor> A = runOnDevice(Default, B, {});
        std::map<std::string, HostTensor> J = runOnDevice(Joint, B, {});
        for (const auto &[Name, Tensor] : A) {
          INFO("output " << Name);
          CHECK(Tensor.Data == J.at(Name).Data);
        }
      }
    }
    // A dynamic row length (one variant, peeled).
    Graph D;
    Value X = D.input("x", T, {"B", "H"});
    D.output("s", sum(abs(X)));
    D.output("m", reduceMax(abs(X)));
    D.output("p", nn::softmax(X));
    for (int64_t H : {512, 4099}) {
      INFO("dynamic row length " << H);
      Bindings B = randomBindings(D, {{"B", 11}, {"H", H}}, {});
      CheckOptions Opts;
      Opts.JointReduce = true;
      checkGraph(D, B, Opts);
    }
  }
}
