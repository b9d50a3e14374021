//===- tests/test_flat_row_broadcast.cpp - flat element-wise experiments ---===//
//
// CompileOptions::FlatRowBroadcast: an element-wise kernel over odd rows
// whose other inputs are broadcast over the rows (a bias) walks its domain
// as one flat range and reads the bias at the flat index mod the row length
// (jf_m0, jf_load_wrap), wrapping where a chunk crosses into the next row.
// CompileOptions::FlatTailThreads: a flat kernel's aligned variant gives
// the last partial chunk one thread an element.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// x [B, T, H] * scale [1, 1, H] + shift [H] - a second input of x's shape.
Graph scaleShift(DType T, int64_t H) {
  Graph G;
  Value X = G.input("x", T, {"B", 3, H});
  Value S = G.input("scale", T, {1, 1, H});
  Value Sh = G.input("shift", T, {H});
  Value Y = G.input("y", T, {"B", 3, H});
  G.output("out", X * S + Sh - Y);
  return G;
}

Executable compileFlat(const Graph &G, bool On) {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.FlatRowBroadcast = On;
  Opts.DeferVariants = false; // every variant through NVRTC now
  return testCompiler().compile(G, Opts);
}

} // namespace

TEST_CASE("FlatRowBroadcast: odd rows with a broadcast bias run as one flat range",
          "[codegen][flatrow]") {
  Executable On = compileFlat(biasGelu(DType::BF16, 4095), true);
  INFO(On.plan());
  CHECK(On.plan().find("one flat range") != std::string::npos);
  CHECK(On.plan().find("mod 4095 (FlatRowBroadcast)") != std::string::npos);
  std::string K = kernelSource(On);
  CHECK(K.find("jf_m0 = (col + 4095) % 4095;") != std::string::npos);
  CHECK(K.find("jf_load_wrap<jf_bf16, 8>(in_1, jf_m0, 4095)") != std::string::npos);
  // Two variants: aligned pointers, and peeled.
  CHECK(K.find("jf_k0_gelu_tanh_v8(") != std::string::npos);
  CHECK(K.find("jf_k0_gelu_tanh_p8(") != std::string::npos);
  // Off: by rows, peeled only.
  Executable Off = compileFlat(biasGelu(DType::BF16, 4095), false);
  CHECK(Off.plan().find("by rows") != std::string::npos);
  CHECK(kernelSource(Off).find("jf_load_wrap") == std::string::npos);

  // A 3-D domain with [1, 1, H] and [H] row vectors and a same-shape input.
  Executable S = compileFlat(scaleShift(DType::F32, 1021), true);
  INFO(S.plan());
  CHECK(S.plan().find("(FlatRowBroadcast)") != std::string::npos);
  CHECK(kernelSource(S).find("jf_load_wrap<float, 4>(in_1, jf_m0, 1021)") != std::string::npos);

  // Not taken: rows the width divides (the aligned by-rows kernel serves
  // them), dynamic rows, and inputs broadcast along another axis.
  CHECK(compileFlat(biasGelu(DType::BF16, 4096), true).plan().find("FlatRowBroadcast") ==
        std::string::npos);
  Graph D;
  D.output("y", D.input("x", DType::F32, {"B", "H"}) + D.input("b", DType::F32, {"H"}));
  CHECK(compileFlat(D, true).plan().find("FlatRowBroadcast") == std::string::npos);
  Graph Col;
  Col.output("y", Col.input("x", DType::F32, {"B", 1021}) + Col.input("c", DType::F32, {"B", 1}));
  CHECK(compileFlat(Col, true).plan().find("FlatRowBroadcast") == std::string::npos);
}

TEST_CASE("FlatRowBroadcast: every element width compiles with NVRTC", "[codegen][flatrow]") {
  // 8-byte elements (chunks of 2), 4-byte integers, and a bool row vector
  // (a mask) beside f32 values: the row of 9 wraps in almost every chunk.
  for (DType T : {DType::F64, DType::I32, DType::I64}) {
    INFO(dtypeName(T).str());
    Graph G;
    G.output("y", G.input("x", T, {"B", 9}) * G.input("s", T, {9}));
    Executable E = compileFlat(G, true);
    CHECK(E.plan().find("(FlatRowBroadcast)") != std::string::npos);
    CHECK(kernelSource(E).find("jf_load_wrap<") != std::string::npos);
  }
  Graph M;
  Value X = M.input("x", DType::F32, {"B", 9});
  M.output("y", where(M.input("m", DType::Bool, {9}), X, X * 2.0));
  Executable E = compileFlat(M, true);
  INFO(E.plan());
  CHECK(E.plan().find("(FlatRowBroadcast)") != std::string::npos);
}

TEST_CASE("GPU: flat rows with a wrapped bias match the reference, any offset",
          "[gpu][flatrow]") {
  // Rows shorter and longer than a block's chunks, rows of 9 (a chunk wraps
  // almost every row), both variants (offset 0 and odd offsets).
  for (DType T : {DType::F32, DType::BF16, DType::F16}) {
    for (int64_t H : {int64_t(9), int64_t(1021), int64_t(4095)}) {
      for (int64_t Rows : {int64_t(1), int64_t(7), int64_t(300)}) {
        for (unsigned Off : {0u, 1u, 3u}) {
          INFO(dtypeName(T).str() << " rows " << Rows << " x " << H << " offset " << Off);
          CheckOptions CO;
          CO.FlatRowBroadcast = true;
          CO.MisalignElems = Off;
          CO.SpecialValues = Off == 1;
          Graph G = biasGelu(T, H);
          checkGraph(G, randomBindings(G, {{"B", Rows}}, {}, CO), CO);
        }
      }
    }
    Graph S = scaleShift(T, 1021);
    for (unsigned Off : {0u, 1u}) {
      CheckOptions CO;
      CO.FlatRowBroadcast = true;
      CO.MisalignElems = Off;
      checkGraph(S, randomBindings(S, {{"B", 5}}, {}, CO), CO);
    }
    // Tensors at different offsets: x aligned, the bias and the output not.
    CheckOptions CO;
    CO.FlatRowBroadcast = true;
    CO.MisalignEach = {0, 3, 1};
    Graph G = biasGelu(T, 1021);
    checkGraph(G, randomBindings(G, {{"B", 33}}, {}, CO), CO);
  }
}

TEST_CASE("FlatTailThreads: the last partial chunk one element a thread", "[codegen][flattail]") {
  Graph G;
  G.output("y", nn::siluMul(G.input("g", DType::BF16, {"N"}), G.input("u", DType::BF16, {"N"})));
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.FlatTailThreads = true;
  Executable On = testCompiler().compile(G, Opts);
  INFO(On.plan());
  CHECK(On.plan().find("(FlatTailThreads)") != std::string::npos);
  std::string K = kernelSource(On);
  // The aligned variant: whole chunks below jf_full, one element above;
  // no loop over the tail. The peeled variant is unchanged.
  std::string V = kernelText(K, "jf_k0_mul_v8");
  INFO(V);
  CHECK(V.find("const long long jf_full = n / 8;") != std::string::npos);
  CHECK(V.find("if (chunk < jf_full)") != std::string::npos);
  CHECK(V.find("jf_tcol") == std::string::npos);
  Opts.FlatTailThreads = false;
  std::string Plain = kernelSource(testCompiler().compile(G, Opts));
  CHECK(kernelText(Plain, "jf_k0_mul_v8").find("jf_tcol") != std::string::npos);
  CHECK(kernelText(K, "jf_k0_mul_p8") == kernelText(Plain, "jf_k0_mul_p8"));
}

TEST_CASE("GPU: flat tails one element a thread match the reference", "[gpu][flattail]") {
  // Sizes around the chunk (8 bf16, 4 f32) and around a block's chunks,
  // aligned (the variant with the tail threads) and offset; with
  // FlatRowBroadcast too (odd rows, a bias).
  for (DType T : {DType::F32, DType::BF16}) {
    Graph G;
    G.output("y", nn::siluMul(G.input("g", T, {"N"}), G.input("u", T, {"N"})));
    for (int64_t N : {int64_t(1), int64_t(7), int64_t(9), int64_t(2047), int64_t(4999),
                      int64_t(100003)})
      for (unsigned Off : {0u, 1u}) {
        INFO(dtypeName(T).str() << " n " << N << " offset " << Off);
        CheckOptions CO;
        CO.FlatTailThreads = true;
        CO.MisalignElems = Off;
        CO.SpecialValues = Off == 1;
        checkGraph(G, randomBindings(G, {{"N", N}}, {}, CO), CO);
      }
    Graph B = biasGelu(T, 4999);
    for (int64_t Rows : {int64_t(1), int64_t(3)}) {
      CheckOptions CO;
      CO.FlatTailThreads = true;
      CO.FlatRowBroadcast = true;
      checkGraph(B, randomBindings(B, {{"B", Rows}}, {}, CO), CO);
    }
  }
}
