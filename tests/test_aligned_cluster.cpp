//===- tests/test_aligned_cluster.cpp - a cluster split for aligned rows --===//
//
// CompileOptions::RowClustersAligned: a long row re-read per stage that has a
// peeled variant also carries the aligned variant of its cluster split
// (KernelPlan::AlignedCluster: the row over the fewest cluster blocks that
// keep it in registers), which the launch runs in place of the plain aligned
// variant when neither few-rows form runs; rows of 4-byte elements run the
// split's variant of the same alignment (RowClustersPeeled), 16-bit rows too
// where the split's peeled variants are bounded to two blocks an SM (kept
// loads <= 192 B a thread, RowClustersPeeledNarrow and Bound), else they
// keep the re-read variant. A split of dependent stages takes the
// blocks that keep 128 B a thread (RowClustersTwoBlocks). The plan, the
// emitted variants and their registers on the CPU (tests/hostpath has the
// launch's choice); on a GPU the reference at row counts that take each
// form, aligned and offset.
//
//===----------------------------------------------------------------------===//
#include "BackwardPatterns.h"
#include "GraphCheck.h"
#include "SweepPatterns.h"
#include "TestEnv.h"

#include "driver/Compiler.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {

CompileOptions alignedClusterOptions(bool On) {
  CompileOptions O;
  O.Arch = "sm_90";
  O.DeferVariants = false;
  O.RowClustersAligned = On;
  return O;
}

struct Case {
  const char *Name;
  Graph G;
  int ClusterX; // the split's blocks
  bool Peeled;  // every variant of the split (4-byte rows, bounded 16-bit ones)
};

/// Graphs whose row kernel (kernel 0) gets the form: the norm backwards'
/// rows of 32064 (session 42's A/B), forward rows too long for one block's
/// registers, and an odd f32 row (peeled variants only).
std::vector<Case> splitCases() {
  std::vector<Case> C;
  // One stage: the fewest blocks that keep 256 B a thread. RMSNorm
  // backward's bf16 rows move in 8-byte chunks (its f32 statistics' width):
  // no peeled split.
  C.push_back({"RMSNorm backward bf16 x 32064", rmsNormBackward(bf16, Dim(32064)), 2, false});
  C.push_back(
      {"LayerNorm backward f32 x 32064", layerNormBackwardOf(f32, Dim(32064)), 4, true});
  // Softmax's max then sum: 4 blocks of 68 B a thread, not 2 of 137.
  C.push_back({"softmax bf16 x 70000", sweepPattern("softmax", bf16, 70000), 4, true});
  C.push_back(
      {"add + RMSNorm bf16 x 128256", sweepPattern("add_rmsnorm", bf16, 128256), 8, true});
  C.push_back({"softmax f32 x 50257", sweepPattern("softmax", f32, 50257), 4, true});
  return C;
}

/// \p G at \p B rows under \p O against the reference, its tensors aligned
/// and misaligned by an element.
void checkAlignedAndShifted(const Graph &G, int64_t B,
                            const std::map<std::string, double> &Scalars, const CheckOptions &O) {
  checkGraph(G, randomBindings(G, {{"B", B}}, Scalars, O), O);
  CheckOptions M = O;
  M.MisalignElems = 1;
  INFO("misaligned by an element");
  checkGraph(G, randomBindings(G, {{"B", B}}, Scalars, M), M);
}

} // namespace

TEST_CASE("RowClustersAligned: long re-read rows carry their split's aligned variant",
          "[aligned-cluster]") {
  for (Case &C : splitCases()) {
    INFO(C.Name);
    GraphPlan Off = Compiler::plan(C.G, alignedClusterOptions(false));
    GraphPlan On = Compiler::plan(C.G, alignedClusterOptions(true));
    REQUIRE_FALSE(Off.Kernels.empty());
    REQUIRE(Off.Kernels.size() == On.Kernels.size());
    CHECK_FALSE(Off.Kernels[0].AlignedCluster);
    const KernelPlan &K = On.Kernels[0];
    INFO(K.Why);
    REQUIRE(K.AlignedCluster);
    const KernelPlan &S = *K.AlignedCluster;
    // The plain form re-reads its row; the split keeps it.
    CHECK_FALSE(K.CacheRow);
    CHECK(K.ClusterX == 1);
    CHECK(S.CacheRow);
    CHECK(S.ClusterX == C.ClusterX);
    CHECK(S.Vecs == K.Vecs);
    CHECK(S.Name == K.Name + "_ac" + std::to_string(C.ClusterX));
    CHECK(K.AlignedClusterPeeled == C.Peeled);
    CHECK_THAT(K.Why, Contains(C.Peeled ? "(RowClustersAligned, Peeled)" : "(RowClustersAligned)"));
    CHECK_THAT(K.Why, Contains("neither form above runs: kernel " + S.Name + "'s"));
    if (K.WideRows) {
      // OverWide: the split also in place of the wide form, said so.
      CompileOptions W = alignedClusterOptions(true);
      W.RowClustersAlignedOverWide = true;
      const GraphPlan PW = Compiler::plan(C.G, W);
      REQUIRE_FALSE(PW.Kernels.empty());
      const KernelPlan &KW = PW.Kernels[0];
      CHECK(KW.AlignedClusterOverWide);
      CHECK_THAT(KW.Why, Contains("the few-rows form does not run: kernel " + S.Name + "'s"));
    }
    // Every other kernel, and the kernel's own forms, as without it.
    for (size_t I = 1; I < On.Kernels.size(); ++I)
      CHECK_FALSE(On.Kernels[I].AlignedCluster);
    CHECK(bool(K.FewRows) == bool(Off.Kernels[0].FewRows));
    CHECK(bool(K.WideRows) == bool(Off.Kernels[0].WideRows));

    // The split's aligned variant last, or all its variants; no spill
    // anywhere but in the bounded peeled variants, at most 16 B there (what
    // the measured ones spilled: bench/ab/s46a.txt).
    Executable E = testCompiler().compile(C.G, alignedClusterOptions(true));
    const KernelInfo &Info = E.kernels()[0];
    CHECK(Info.AlignedClusterName == S.Name);
    CHECK(Info.AlignedClusterVariants == (C.Peeled ? S.Vecs.size() : 1u));
    CHECK_THAT(Info.Source, Contains("__cluster_dims__(" + std::to_string(C.ClusterX)));
    CHECK_THAT(Info.Source, Contains(S.variantNameAt(0) + "("));
    CHECK((Info.Source.find(S.variantNameAt(S.Vecs.size() - 1) + "(") != std::string::npos) ==
          (C.Peeled && S.Vecs.size() > 1));
    for (const rt::KernelResources &R : E.kernelResources()) {
      INFO("kernel " << R.Name << ": " << R.Registers << " registers");
      const bool Bounded = boundedSplitVariant(E, R.Name);
      if (Bounded)
        CHECK(S.PeeledMinBlocksPerSm == 2);
      CHECK(R.SpillStoreBytes <= (Bounded ? BoundedSplitSpillBytes : 0));
      CHECK(R.StackBytes <= (Bounded ? BoundedSplitSpillBytes : 0));
      if (Bounded)
        CHECK(R.Registers <= 64);
    }
  }
}

TEST_CASE("RowClustersAligned: rows without an aligned variant or kept whole get none",
          "[aligned-cluster]") {
  // bf16 x 50257 is odd (a peeled variant only: the split's aligned one
  // would never run); without RowClustersPeeledNarrow such 16-bit rows keep
  // the re-read peeled variant, with it (the default) they split over 4
  // blocks (176 B of kept loads a thread). Rows of 4096 and bf16 softmax x
  // 32064 are kept in registers (not re-read).
  {
    CompileOptions NoNarrow = alignedClusterOptions(true);
    NoNarrow.RowClustersPeeledNarrow = false;
    Graph Odd = rmsNormBackward(bf16, Dim(50257));
    CHECK_FALSE(Compiler::plan(Odd, NoNarrow).Kernels.at(0).AlignedCluster);
    KernelPlan K = Compiler::plan(Odd, alignedClusterOptions(true)).Kernels.at(0);
    INFO(K.Why);
    REQUIRE(K.AlignedCluster);
    CHECK(K.AlignedClusterPeeled);
    CHECK(K.AlignedCluster->ClusterX == 4);
    CHECK(K.AlignedCluster->PeeledMinBlocksPerSm == 2);
  }
  std::vector<Graph> Graphs;
  Graphs.push_back(rmsNormBackward(bf16, Dim(4096)));
  Graphs.push_back(sweepPattern("softmax", bf16, 32064));
  for (const Graph &G : Graphs) {
    GraphPlan P = Compiler::plan(G, alignedClusterOptions(true));
    for (const KernelPlan &K : P.Kernels) {
      INFO(K.Name << ": " << K.Why);
      CHECK_FALSE(K.AlignedCluster);
    }
  }
  // LayerNorm's mean then variance over 8 blocks: two cluster-wide combines
  // in turn (0.85-0.97x on an H100, session 43).
  // The measured points: bf16 x 128256 and f32 x 65536. Keeping only x
  // (RowClustersStageInputs, the default) they split over 4 blocks.
  for (auto [T, H] : {std::pair{bf16, int64_t(128256)}, std::pair{f32, int64_t(65536)}}) {
    CompileOptions AllInputs = alignedClusterOptions(true);
    AllInputs.RowClustersStageInputs = false;
    KernelPlan K = Compiler::plan(sweepPattern("layernorm", T, H), AllInputs).Kernels.at(0);
    INFO("LayerNorm " << dtypeName(T).str() << " x " << H << ": " << K.Why);
    CHECK_FALSE(K.AlignedCluster);
    CHECK_THAT(K.Why, Contains("2 stages x 8 blocks > 8 (RowClustersAligned)"));
    KernelPlan X =
        Compiler::plan(sweepPattern("layernorm", T, H), alignedClusterOptions(true)).Kernels.at(0);
    INFO("RowClustersStageInputs: " << X.Why);
    REQUIRE(X.AlignedCluster);
    CHECK(X.AlignedCluster->ClusterX == 4);
    CHECK(X.AlignedCluster->RowCacheInputs.size() == 1u);
  }
  // Without RowClustersPeeled the odd f32 row gets none, and the f32 one of
  // 32064 its aligned variant only.
  CompileOptions NoPeel = alignedClusterOptions(true);
  NoPeel.RowClustersPeeled = false;
  CHECK_FALSE(Compiler::plan(sweepPattern("softmax", f32, 50257), NoPeel).Kernels.at(0)
                  .AlignedCluster);
  KernelPlan F32 = Compiler::plan(layerNormBackwardOf(f32, Dim(32064)), NoPeel).Kernels.at(0);
  CHECK(F32.AlignedCluster);
  CHECK_FALSE(F32.AlignedClusterPeeled);
  // Before sm_90 there are no clusters.
  CompileOptions Old = alignedClusterOptions(true);
  Old.Arch = "sm_80";
  GraphPlan P = Compiler::plan(rmsNormBackward(bf16, Dim(32064)), Old);
  CHECK_FALSE(P.Kernels.at(0).AlignedCluster);
}

TEST_CASE("RowClustersTwoBlocks: splits of dependent stages take the blocks of 128 B a thread",
          "[aligned-cluster]") {
  // softmax 16-bit x 128256 (max then sum): 4 blocks of 125 B a thread, not
  // the fewest that keep the row (2 of 250 B, 127 registers); f32 x 128256
  // would need 8 (2 stages x 8 > 8): the fewest, 4. The norm backwards'
  // one stage keeps the fewest (LayerNorm backward f32 x 32064: 4).
  struct Want {
    const char *Name;
    Graph G;
    int With, Without;
  };
  std::vector<Want> Wants;
  Wants.push_back({"softmax bf16 x 128256", sweepPattern("softmax", bf16, 128256), 4, 2});
  Wants.push_back({"softmax f32 x 128256", sweepPattern("softmax", f32, 128256), 4, 4});
  Wants.push_back(
      {"LayerNorm backward f32 x 32064", layerNormBackwardOf(f32, Dim(32064)), 4, 4});
  for (Want &W : Wants) {
    INFO(W.Name);
    for (bool Two : {true, false}) {
      CompileOptions O = alignedClusterOptions(true);
      O.RowClustersTwoBlocks = Two;
      KernelPlan K = Compiler::plan(W.G, O).Kernels.at(0);
      INFO("RowClustersTwoBlocks " << Two << ": " << K.Why);
      REQUIRE(K.AlignedCluster);
      CHECK(K.AlignedCluster->ClusterX == (Two ? W.With : W.Without));
    }
  }
}

TEST_CASE("RowClustersStageInputs: a split past the stage bound keeps its stages' inputs",
          "[aligned-cluster]") {
  // LayerNorm forward (mean then variance: 2 stages) keeping x, weight and
  // bias: f32 x 50257 needs 8 blocks (2 x 8 > 8), f32 x 128256 and bf16 x
  // 128256 no block count. Keeping x alone: 4 blocks, the weight and bias
  // loaded by the epilogue. add + RMSNorm f32 x 128256 (one stage): x and
  // the residual over 8 blocks (RowClustersValues off: on, it keeps their
  // sum).
  struct Want {
    const char *Name;
    Graph G;
    int Blocks;
    int64_t Kept; // bytes of kept loads a thread
  };
  std::vector<Want> Wants;
  Wants.push_back({"LayerNorm f32 x 50257", sweepPattern("layernorm", f32, 50257), 4, 112});
  Wants.push_back({"LayerNorm f32 x 128256", sweepPattern("layernorm", f32, 128256), 4, 256});
  Wants.push_back({"LayerNorm bf16 x 128256", sweepPattern("layernorm", bf16, 128256), 4, 128});
  Wants.push_back(
      {"add + RMSNorm f32 x 128256", sweepPattern("add_rmsnorm", f32, 128256), 8, 256});
  for (Want &W : Wants) {
    INFO(W.Name);
    CompileOptions O = alignedClusterOptions(true);
    O.RowClustersValues = false;
    O.RowClustersStageInputs = false;
    KernelPlan Off = Compiler::plan(W.G, O).Kernels.at(0);
    INFO("without: " << Off.Why);
    CHECK_FALSE(Off.AlignedCluster);
    O.RowClustersStageInputs = true;
    KernelPlan K = Compiler::plan(W.G, O).Kernels.at(0);
    INFO("with: " << K.Why);
    REQUIRE(K.AlignedCluster);
    const KernelPlan &S = *K.AlignedCluster;
    CHECK(S.ClusterX == W.Blocks);
    CHECK(S.KeptLoadBytes == W.Kept);
    // Only the inputs the stages read are kept: x (and the residual).
    CHECK(S.RowCacheInputs.size() == (W.Blocks == 8 ? 2u : 1u));
    CHECK_FALSE(K.CacheRow); // the re-read plan is unchanged
  }
  // A split that passes the bound keeping every input keeps them all
  // (add + RMSNorm bf16 x 128256: x, residual and weight over 8 blocks).
  CompileOptions O = alignedClusterOptions(true);
  CHECK(O.RowClustersStageInputs); // the default
  KernelPlan K = Compiler::plan(sweepPattern("add_rmsnorm", bf16, 128256), O).Kernels.at(0);
  REQUIRE(K.AlignedCluster);
  CHECK(K.AlignedCluster->ClusterX == 8);
  CHECK(K.AlignedCluster->RowCacheInputs.empty());
}

TEST_CASE("RowClusterPairs (experiment): LayerNorm's split takes one stage",
          "[aligned-cluster]") {
  // LayerNorm forward's split over 8 blocks: mean then variance are two
  // cluster-wide stages, over the bound; with RowClusterPairs one Welford
  // pair, each block's combined across the cluster in rank order. As
  // measured (s45a): before RowClustersStageInputs, which splits x alone
  // over 4 blocks.
  for (auto [T, H] : {std::pair{bf16, int64_t(128256)}, std::pair{f32, int64_t(65536)}}) {
    Graph G = sweepPattern("layernorm", T, H);
    INFO("LayerNorm " << dtypeName(T).str() << " x " << H);
    CompileOptions O = alignedClusterOptions(true);
    O.RowClustersStageInputs = false;
    CHECK_FALSE(Compiler::plan(G, O).Kernels.at(0).AlignedCluster);
    O.RowClusterPairs = true;
    O.RowClustersPeeledBound = false; // as measured (s45a): unbounded
    KernelPlan K = Compiler::plan(G, O).Kernels.at(0);
    INFO(K.Why);
    REQUIRE(K.AlignedCluster);
    const KernelPlan &S = *K.AlignedCluster;
    CHECK(S.ClusterX == 8);
    REQUIRE(S.RowPairs.size() == 1);
    CHECK(S.RowPairs[0].Welford);
    // The re-read plain form keeps its own pairs (its Welford as before).
    CHECK(K.RowPairs.size() == 1);
    Executable E = testCompiler().compile(G, O);
    const std::string &Src = E.kernels()[0].Source;
    CHECK_THAT(Src, Contains("__shared__ jf_wf<float> jf_cl"));
    CHECK_THAT(Src, Contains("= jf_welford_op<float>()(rp"));
    // The split's variants keep everything in registers (the wide form of
    // f32 x 65536 spills 32 B with or without the option: not this test's).
    for (const rt::KernelResources &R : E.kernelResources()) {
      if (R.Name.find(S.Name) == std::string::npos)
        continue;
      INFO("kernel " << R.Name << ": " << R.Registers << " registers");
      CHECK(R.SpillStoreBytes == 0);
    }
  }
}

TEST_CASE("RowClustersPeeledNarrow and RowClustersPeeledBound: 16-bit peeled splits, bounded",
          "[aligned-cluster]") {
  // add + RMSNorm bf16 x 128256: the split over 8 blocks keeps 192 B of
  // loads a thread: every variant, the peeled ones __launch_bounds__(512, 2)
  // (76 registers unbounded).
  Graph G = sweepPattern("add_rmsnorm", bf16, 128256);
  CompileOptions O = alignedClusterOptions(true);
  KernelPlan K = Compiler::plan(G, O).Kernels.at(0);
  INFO(K.Why);
  REQUIRE(K.AlignedCluster);
  CHECK(K.AlignedClusterPeeled);
  const KernelPlan &S = *K.AlignedCluster;
  CHECK(S.KeptLoadBytes == 192);
  CHECK(S.PeeledMinBlocksPerSm == 2);
  CHECK_THAT(K.Why, Contains("(Narrow: 16-bit rows of 16-byte chunks, bounded)"));
  CHECK_THAT(K.Why, Contains("192 B of kept loads a thread <= 192: RowClustersPeeledBound"));
  Executable E = testCompiler().compile(G, O);
  const std::string &Src = E.kernels()[0].Source;
  CHECK_THAT(Src, Contains("__launch_bounds__(512, 2) __cluster_dims__(8, 1, 1) " +
                           S.variantNameAt(S.Vecs.size() - 1) + "("));
  CHECK_THAT(Src, Contains("__launch_bounds__(512) __cluster_dims__(8, 1, 1) " +
                           S.variantNameAt(0) + "("));
  for (const rt::KernelResources &R : E.kernelResources())
    if (R.Name.find(S.Name) != std::string::npos) {
      INFO("kernel " << R.Name);
      CHECK(R.Registers <= 64);
    }
  // Either option off: the aligned variant only (narrow splits unbounded
  // lost 0.76-0.93x, s46a), and no bound.
  for (bool NarrowOff : {true, false}) {
    CompileOptions Off = O;
    (NarrowOff ? Off.RowClustersPeeledNarrow : Off.RowClustersPeeledBound) = false;
    KernelPlan P = Compiler::plan(G, Off).Kernels.at(0);
    REQUIRE(P.AlignedCluster);
    CHECK_FALSE(P.AlignedClusterPeeled);
    CHECK(P.AlignedCluster->PeeledMinBlocksPerSm == 0);
  }
  // Beyond 192 B a thread: add + RMSNorm bf16 x 65537 over 4 blocks keeps 5
  // chunks of three tensors (240 B; bounded it lost 0.94x): no peeled
  // split, and its row is odd, so no split at all.
  CHECK_FALSE(Compiler::plan(sweepPattern("add_rmsnorm", bf16, 65537), O).Kernels.at(0)
                  .AlignedCluster);
  // f32 rows keep their peeled split there, unbounded (LayerNorm backward
  // f32 x 70000 over 8 blocks: 240 B).
  KernelPlan F = Compiler::plan(layerNormBackwardOf(f32, Dim(70000)), O).Kernels.at(0);
  INFO(F.Why);
  REQUIRE(F.AlignedCluster);
  CHECK(F.AlignedClusterPeeled);
  CHECK(F.AlignedCluster->KeptLoadBytes > 192);
  CHECK(F.AlignedCluster->PeeledMinBlocksPerSm == 0);
}

TEST_CASE("GPU: RowClustersAligned matches the reference", "[gpu][aligned-cluster]") {
  if (!haveGpu())
    return;
  // 140 and 300 rows: more than the H100's and H200's 132 SMs, so aligned
  // pointers run the split; 1 and 67 rows take the few-rows and wide forms.
  for (Case &C : splitCases()) {
    CheckOptions O;
    O.RowClustersAligned = true;
    const std::map<std::string, double> Scalars = epsScalars(C.G);
    for (int64_t B : {1, 67, 140, 300}) {
      if (B == 300 && C.G.node(0).Dims.back().Size > 70000)
        continue; // the fp64 reference over 38M elements takes long
      INFO(C.Name << " B=" << B);
      checkAlignedAndShifted(C.G, B, Scalars, O);
    }
    // RowClusterPairs: the splits with their pairs (LayerNorm below).
    CheckOptions Pairs = O;
    Pairs.RowClusterPairs = true;
    Pairs.Unfused = false;
    INFO(C.Name << " B=140 RowClusterPairs");
    checkGraph(C.G, randomBindings(C.G, {{"B", 140}}, Scalars, Pairs), Pairs);
    // Without RowClustersPeeledBound (for comparisons): the f32 peeled
    // splits unbounded, the 16-bit rows re-read, at an element's offset.
    CheckOptions Unbounded = O;
    Unbounded.RowClustersPeeledBound = false;
    Unbounded.Unfused = false;
    Unbounded.MisalignElems = 1;
    INFO(C.Name << " B=140 without RowClustersPeeledBound, misaligned by an element");
    checkGraph(C.G, randomBindings(C.G, {{"B", 140}}, Scalars, Unbounded), Unbounded);
    // RowClustersAlignedOverWide: the split at the wide form's row counts.
    CheckOptions W = O;
    W.RowClustersAlignedOverWide = true;
    W.Unfused = false;
    for (int64_t B : {67, 100}) {
      INFO(C.Name << " B=" << B << " RowClustersAlignedOverWide");
      checkGraph(C.G, randomBindings(C.G, {{"B", B}}, Scalars, W), W);
    }
  }
  // RowClusterPairs (an experiment): LayerNorm's split, one Welford stage
  // combined across 8 blocks, aligned and at an element's offset (f32: the
  // split's peeled variants), and its few-rows form at 1 row.
  for (auto [T, H] : {std::pair{bf16, int64_t(128256)}, std::pair{f32, int64_t(65536)}}) {
    Graph G = sweepPattern("layernorm", T, H);
    CheckOptions O;
    O.RowClusterPairs = true;
    for (int64_t B : {1, 140}) {
      INFO("LayerNorm " << dtypeName(T).str() << " x " << H << " B=" << B << " RowClusterPairs");
      checkAlignedAndShifted(G, B, epsScalars(G), O);
    }
  }
}

TEST_CASE("GPU: RowClustersStageInputs matches the reference",
          "[gpu][aligned-cluster][stage-inputs]") {
  if (!haveGpu())
    return;
  // RowClustersStageInputs: LayerNorm and add + RMSNorm splits that keep
  // only x (and the residual; RowClustersValues off, as on it keeps their
  // sum), the weights loaded by the epilogue; aligned, at an element's
  // offset, and the few-rows forms.
  // LayerNorm f32 x 128256: peeled variants at 256 B of kept loads a
  // thread (106 registers).
  for (auto [Name, T, H] : {std::tuple{"layernorm", f32, int64_t(50257)},
                            std::tuple{"layernorm", bf16, int64_t(128256)},
                            std::tuple{"layernorm", f32, int64_t(128256)},
                            std::tuple{"add_rmsnorm", f32, int64_t(100003)}}) {
    Graph G = sweepPattern(Name, T, H);
    CheckOptions O;
    O.RowClustersStageInputs = true;
    O.RowClustersValues = false;
    for (int64_t B : {1, 140}) {
      INFO(Name << " " << dtypeName(T).str() << " x " << H << " B=" << B
                << " RowClustersStageInputs");
      checkAlignedAndShifted(G, B, epsScalars(G), O);
    }
  }
}

TEST_CASE("RowClustersValues: a split keeps the values covering its inputs",
          "[aligned-cluster]") {
  // add + RMSNorm f32 keeps x + residual (one f32 value for two f32
  // inputs) over the blocks that keep 128 B of it a thread: x 128256 has no
  // split keeping its inputs (x, residual and weight: 384 B a thread at 8
  // blocks), x 50257 keeps them over 8 blocks and its values over 4.
  struct Want {
    const char *Name;
    Graph G;
    int Without; // the split's blocks without the option (0: none)
    int With;
  };
  std::vector<Want> Wants;
  Wants.push_back({"add + RMSNorm f32 x 128256", sweepPattern("add_rmsnorm", f32, 128256), 0, 8});
  Wants.push_back({"add + RMSNorm f32 x 50257", sweepPattern("add_rmsnorm", f32, 50257), 8, 4});
  Wants.push_back({"add + RMSNorm f32 x 100003", sweepPattern("add_rmsnorm", f32, 100003), 0, 8});
  for (Want &W : Wants) {
    INFO(W.Name);
    CompileOptions O = alignedClusterOptions(true);
    CHECK(O.RowClustersValues); // the default
    O.RowClustersValues = false;
    O.RowClustersStageInputs = false;
    KernelPlan Off = Compiler::plan(W.G, O).Kernels.at(0);
    INFO("without: " << Off.Why);
    CHECK(bool(Off.AlignedCluster) == (W.Without > 0));
    if (Off.AlignedCluster)
      CHECK(Off.AlignedCluster->ClusterX == W.Without);
    O.RowClustersValues = true; // the defaults
    O.RowClustersStageInputs = true;
    KernelPlan K = Compiler::plan(W.G, O).Kernels.at(0);
    INFO("with: " << K.Why);
    CHECK_FALSE(K.CacheRow); // the re-read plan is unchanged
    REQUIRE(K.AlignedCluster);
    const KernelPlan &S = *K.AlignedCluster;
    CHECK(S.ClusterX == W.With);
    CHECK(S.CacheRow);
    CHECK(S.RowCacheValuesOnly);
    CHECK(S.KeptLoadBytes == 0);
    // The value kept is the add that both inputs feed (the plan's first node).
    REQUIRE_FALSE(S.CachedValues.empty());
    CHECK(W.G.node(S.CachedValues[0]).Kind == Op::Add);
    CHECK_THAT(K.Why, Contains("as the values of %" + std::to_string(S.CachedValues[0])));
    CHECK_THAT(K.Why, Contains(", Values)"));
    // Two blocks an SM: no variant of the split over 64 registers or spilling.
    Executable E = testCompiler().compile(W.G, O);
    for (const rt::KernelResources &R : E.kernelResources())
      if (R.Name.find(S.Name) != std::string::npos) {
        INFO("kernel " << R.Name << ": " << R.Registers << " registers");
        CHECK(R.Registers <= 64);
        CHECK(R.SpillStoreBytes == 0);
      }
  }
  // Rows whose values are no fewer bytes than their inputs keep the rule's
  // split: LayerNorm and softmax (x alone), add + RMSNorm bf16 (two 16-bit
  // inputs, one f32 value).
  for (auto [Name, T, H] : {std::tuple{"layernorm", f32, int64_t(50257)},
                            std::tuple{"softmax", bf16, int64_t(128256)},
                            std::tuple{"add_rmsnorm", bf16, int64_t(128256)}}) {
    INFO(Name << " " << dtypeName(T).str() << " x " << H);
    Graph G = sweepPattern(Name, T, H);
    CompileOptions O = alignedClusterOptions(true);
    O.RowClustersValues = false;
    GraphPlan Off = Compiler::plan(G, O);
    O.RowClustersValues = true;
    GraphPlan On = Compiler::plan(G, O);
    CHECK(On.Kernels.at(0).Why == Off.Kernels.at(0).Why);
  }
}

TEST_CASE("GPU: RowClustersValues matches the reference",
          "[gpu][aligned-cluster][cluster-values]") {
  if (!haveGpu())
    return;
  // RowClustersValues: add + RMSNorm f32 splits that keep
  // x + residual, not the inputs; aligned, at an element's offset, an odd
  // row (peeled only), and the few-rows forms.
  for (int64_t H : {int64_t(128256), int64_t(50257), int64_t(100003)}) {
    Graph G = sweepPattern("add_rmsnorm", f32, H);
    CheckOptions O;
    O.RowClustersValues = true;
    for (int64_t B : {1, 140}) {
      INFO("add_rmsnorm f32 x " << H << " B=" << B << " RowClustersValues");
      checkAlignedAndShifted(G, B, epsScalars(G), O);
    }
  }
}
