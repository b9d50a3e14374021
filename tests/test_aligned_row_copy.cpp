//===- tests/test_aligned_row_copy.cpp - CompileOptions::AlignedRowCopy ---===//
//
// The peeled variant of a row kernel aligns its chunks to a lead tensor; the
// other tensors' chunks are shifted (loads) or split (stores) at any offset.
// With AlignedRowCopy a chunk loop that has such accesses gets a second copy
// with plain wide ones, which a warp runs when jf_al says every one of them
// is aligned in its rows (all tensors at the same offset and rows a
// multiple of 16 bytes: the copy avoids the shifts' selects). Here: the
// kernel text on the CPU, NVRTC on random graphs, and values on the GPU at
// offsets that take either copy, and warps whose rows disagree.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RandomGraph.h"
#include "TestEnv.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

Executable compileWith(const Graph &G, bool AlignedRowCopy) {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.DeferVariants = false;
  Opts.AlignedRowCopy = AlignedRowCopy;
  return testCompiler().compile(G, Opts);
}

} // namespace

TEST_CASE("AlignedRowCopy: the flag, and a plain copy of the loops that shift or split",
          "[codegen][aligned-copy]") {
  Graph G;
  Value X = G.input("x", DType::BF16, {"B", 32064});
  G.output("y", nn::layerNorm(X, G.input("w", DType::BF16, {32064}),
                              G.input("b", DType::BF16, {32064}), G.scalar("eps", f32)));
  Executable Off = compileWith(G, false);
  Executable On = compileWith(G, true);
  REQUIRE(On.numKernels() == 1);
  const KernelInfo &K = On.kernels()[0];
  REQUIRE(K.Vecs == std::vector<int>{8, 8, 8}); // aligned, peeled led by x, by y
  INFO(On.plan());
  CHECK(On.plan().find("each chunk loop twice, plain wide accesses where a warp's chunked "
                       "tensors all sit at the lead's alignment") != std::string::npos);
  CHECK(Off.plan().find("AlignedRowCopy") == std::string::npos);
  CHECK(Off.source().find("jf_al") == std::string::npos);

  // The peeled variant only: the aligned one has no shifted access.
  size_t Peeled = K.Source.find(K.Name + "_p8(");
  REQUIRE(Peeled != std::string::npos);
  // Up to the next kernel: the wide form's twins (RowWideRows) follow.
  size_t Next = K.Source.find("__global__", Peeled);
  std::string P = K.Source.substr(Peeled, Next == std::string::npos ? Next : Next - Peeled);
  std::string A = K.Source.substr(0, Peeled);
  CHECK(A.find("jf_al") == std::string::npos);
  // The flag checks the weight, the bias and the output (not x, the lead)
  // at the row's first whole chunk, one value a warp.
  CHECK(countOf(P, "const bool jf_al = __all_sync(__activemask(), [&] {") == 1);
  CHECK(countOf(P, "const long long col = jf_h;") == 1);
  for (const char *Access : {"in_1 + col", "in_2 + col", "out_0 + rowc * R + col"})
    CHECK(countOf(P, fmt::format("jf_chunk_wide<jf_bf16, 8>({}, 0, 8)", Access)) == 1);
  CHECK(P.find("jf_chunk_wide<jf_bf16, 8>(in_0") == std::string::npos);
  // Mean and variance read only x: their loops stay single. The epilogue's
  // loop has both copies: plain wide in the first, shifted and split in
  // the second.
  CHECK(countOf(P, "if (jf_al) {") == 1);
  size_t Copy = P.find("if (jf_al) {"), Else = P.find("else {", Copy);
  REQUIRE(Else != std::string::npos);
  std::string Plain = P.substr(Copy, Else - Copy), General = P.substr(Else);
  CHECK(countOf(Plain, "jf_load<jf_bf16, 8>(in_1 + col)") == 1);
  CHECK(countOf(Plain, "jf_load<jf_bf16, 8>(in_2 + col)") == 1);
  CHECK(countOf(Plain, "jf_store_wide<jf_bf16, 8>(out_0 + rowc * R + col") == 1);
  CHECK(Plain.find("_whole") == std::string::npos);
  CHECK(countOf(General, "jf_load_whole<jf_bf16, 8>(in_1 + col)") == 1);
  CHECK(countOf(General, "jf_store_whole<jf_bf16, 8>(out_0 + rowc * R + col") == 1);

  // A dynamic row length: the flag names the row's own variable.
  Graph D;
  Value DX = D.input("x", DType::F16, {"B", "H"});
  D.output("y", nn::rmsNorm(DX, D.input("w", DType::F16, {"H"}), D.scalar("eps", f32)));
  Executable Dyn = compileWith(D, true);
  // One flag in each peeled variant: led by x, and by y (OutputLedVariant).
  CHECK(countOf(kernelText(Dyn.source(), Dyn.kernels()[0].Name + "_p8"),
                "const bool jf_al = __all_sync(") == 1);
  CHECK(countOf(Dyn.source(), "const bool jf_al = __all_sync(") == 2);
  CHECK(Dyn.source().find("jf_chunk_wide<jf_f16, 8>(in_1 + col, 0, 8)") != std::string::npos);

  // Sums of |x| chunk only x, the lead: nothing to copy, no flag.
  Graph S;
  Value Y = S.input("x", DType::BF16, {"B", 4999});
  S.output("s", sum(abs(Y)));
  S.output("m", reduceMax(abs(Y)));
  Executable Sums = compileWith(S, true);
  CHECK(Sums.source().find("jf_al") == std::string::npos);
}

TEST_CASE("AlignedRowCopy: random graphs compile with NVRTC, the copies where they apply",
          "[random][aligned-copy]") {
  // The flag evaluates the copies' addresses before the loops, and the
  // copies double them: NVRTC sees both for arbitrary row graphs (views,
  // broadcasts, read-back outputs, cached rows, long rows).
  int WithFlag = 0, RowGraphs = 0;
  for (uint64_t I = 0; I < 60; ++I) {
    GenOptions GO;
    GO.LongRows = I % 3 == 0;
    Recipe R = randomRecipe(9100003 + I, GO);
    Graph G = buildGraph(R);
    INFO("seed " << R.Seed << "\n" << printAsCpp(G));
    Executable X = compileWith(G, true);
    bool Row = false;
    for (const KernelInfo &K : X.kernels())
      Row |= K.Kind == KernelKind::RowReduce;
    RowGraphs += Row;
    WithFlag += X.source().find("const bool jf_al") != std::string::npos;
    // Elementwise and full-reduction kernels have no row loops to copy.
    if (!Row)
      CHECK(X.source().find("jf_al") == std::string::npos);
  }
  INFO(RowGraphs << " graphs with a row kernel");
  CHECK(WithFlag > 0);
}

TEST_CASE("AlignedRowCopy: fused vs unfused vs reference at offsets that take either copy",
          "[gpu][ops][aligned-copy]") {
  // Offsets per tensor (inputs then outputs, cycling): {1} and {3} put every
  // tensor at the lead's phase (the plain copy where rows are a multiple of
  // 16 bytes; rows of 1001 or 4095 change phase row to row, so warps over
  // several rows disagree and take the general copy); {1, 0, 5} and
  // {0, 7, 2, 3} put them apart (the general copy).
  haveGpu();
  std::vector<std::vector<unsigned>> Layouts = {{1}, {3}, {1, 0, 5}, {0, 7, 2, 3}, {2, 2, 2, 10}};
  for (DType T : {DType::F32, DType::BF16, DType::F16}) {
    INFO("dtype " << dtypeName(T).str());
    for (int64_t H : {24, 1001, 4096, 4095, 32064}) {
      INFO("row length " << H);
      Graph G;
      Value X = G.input("x", T, {"B", H});
      Value Res = G.input("res", T, {"B", H});
      Value W = G.input("w", T, {H});
      Value Eps = G.scalar("eps", f32);
      Value Sum = X + Res;
      G.output("sum", Sum);                                   // read back
      G.output("rms", nn::rmsNorm(Sum, W, Eps));
      G.output("ln", nn::layerNorm(X * Res, W, G.input("bias", T, {H}), Eps));
      G.output("sm", nn::softmax(X * W));
      Bindings B = randomBindings(G, {{"B", 37}}, {{"eps", 1e-5}});
      for (const std::vector<unsigned> &L : Layouts) {
        INFO("offsets " << fmt::format("{}", fmt::join(L, "/")));
        CheckOptions Opts;
        Opts.MisalignEach = L;
        Opts.AlignedRowCopy = true;
        checkGraph(G, B, Opts);
      }
    }
    // A dynamic row length, bound to a multiple of 8 and to an odd one.
    Graph D;
    Value X = D.input("x", T, {"B", "H"});
    D.output("y", nn::rmsNorm(X * D.input("g", T, {"B", "H"}), D.input("w", T, {"H"}),
                              D.scalar("eps", f32)));
    for (int64_t H : {2048, 3001}) {
      INFO("dynamic row length " << H);
      Bindings B = randomBindings(D, {{"B", 29}, {"H", H}}, {{"eps", 1e-5}});
      for (const std::vector<unsigned> &L : Layouts) {
        INFO("offsets " << fmt::format("{}", fmt::join(L, "/")));
        CheckOptions Opts;
        Opts.MisalignEach = L;
        Opts.AlignedRowCopy = true;
        checkGraph(D, B, Opts);
      }
    }
  }
}
