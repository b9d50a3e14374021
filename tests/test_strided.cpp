//===- tests/test_strided.cpp - strided inputs and outputs ----------------===//
//
// Issue 14, item 3: an input or output declared with element strides (a
// slice of a larger buffer, a transposed view, a KV-cache page) is read and
// written in place. Checked: the builder's validation and printing, the
// span and overlap rules against hand-computed cases, the generated code
// (vectors along a last stride of 1, strides as run-time parameters), and
// with a GPU fused vs unfused vs reference at odd sizes, misaligned
// pointers and odd strides, plus run()'s stride errors. runOnDevice fills a
// strided input's gaps with NaN and checks that a strided output's gaps
// are never written.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "codegen/Codegen.h"
#include "compiler/Planner.h"
#include "ir/NN.h"
#include "ir/Printer.h"
#include "runtime/Memory.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using Catch::Matchers::Contains;

TEST_CASE("strided: the builder checks and prints strides", "[strided]") {
  Graph G;
  Value X = G.input("x", bf16, {"T", 4096}, {"ld", 1});
  CHECK(shapeStr(X.node().Strides) == "[ld,1]");
  CHECK_THAT(printNode(G, X.id()), Contains("\"x\" strides=[ld,1]"));
  // "ld" is a dynamic dim bound at run time like T.
  CHECK(G.dynamicDims() == llvm::ArrayRef<std::string>({"T", "ld"}));
  // The contiguous strides declare a contiguous input.
  Value C = G.input("c", f32, {8, 16}, {16, 1});
  CHECK(C.node().Strides.empty());
  Value D = G.input("d", f32, {"B", "T", 16}, {"T*16", 16, 1});
  CHECK_FALSE(D.node().Strides.empty()); // 16 * T is no Dim: kept as declared
  Value E = G.input("e", f32, {"B", "T"}, {"T", 1});
  CHECK(E.node().Strides.empty());

  CHECK_THROWS_WITH(G.input("y", f32, {4, 5}, {5}),
                    Contains("input 'y': 1 strides for shape [4,5] of rank 2"));
  CHECK_THROWS_WITH(G.input("y", f32, {4, 5}, {-5, 1}),
                    Contains("input 'y': stride -5 of dim 0 is negative"));
  CHECK_THROWS_WITH(G.input("y", f32, {4, 5}, {"a**b", 1}), Contains("empty factor"));
  // A failed declaration adds nothing.
  CHECK(G.inputs().size() == 4);

  // Inputs may repeat elements (a zero stride broadcasts); outputs may not.
  Value Z = G.input("z", f32, {4, 5}, {0, 1});
  CHECK_THROWS_WITH(G.output("o", Z + 1.0, {0, 1}),
                    Contains("output 'o': strides [0,1] for shape [4,5] overlap") &&
                        Contains("dim 0 has 4 elements and stride 0"));
  CHECK_THROWS_WITH(G.output("o", Z + 1.0, {3, 1}),
                    Contains("dim 0 (stride 3) steps inside the 5 elements"));
  G.output("o", Z + 1.0, {1, 4}); // a transposed layout
  CHECK_THAT(printGraph(G), Contains("output \"o\" = %") && Contains("strides=[1,4]"));
  CHECK(shapeStr(G.stridesOf(G.outputNamed("o"))) == "[1,4]");
}

TEST_CASE("strided: span and overlap against hand-computed cases", "[strided]") {
  // [3, 4] rows padded to 10: the last element sits at 2*10 + 3.
  CHECK(stridedSpan({3, 4}, {10, 1}) == std::optional<int64_t>(24));
  CHECK(stridedSpan({3, 0}, {10, 1}) == std::optional<int64_t>(0));
  CHECK(stridedSpan({5, 7}, {0, 0}) == std::optional<int64_t>(1));
  CHECK_FALSE(stridedSpan({int64_t(1) << 30, 2}, {int64_t(1) << 30, 1}));
  CHECK(outputOverlap({3, 4}, {10, 1}).empty());
  CHECK(outputOverlap({3, 4}, {1, 3}).empty());            // column-major
  CHECK(outputOverlap({2, 3, 4}, {12, 1, 3}).empty());     // permuted, dense
  CHECK_FALSE(outputOverlap({2, 3, 4}, {12, 2, 3}).empty()); // 2*... meets 3
  CHECK(outputOverlap({1, 4}, {0, 1}).empty());            // one element: any stride
  CHECK_FALSE(outputOverlap({2, 4}, {3, 1}).empty());
  CHECK(outputOverlap({0, 4}, {0, 0}).empty());            // nothing to overlap
}

TEST_CASE("strided: random inputs agree where a zero stride repeats them", "[strided]") {
  // [3, 2] at strides {0, 1}: every row is the buffer's one row, so a test
  // input must hold row 0 three times (the reference sees what the device
  // reads); a layout without repeats is left alone.
  Graph G;
  G.input("x", f32, {3, 2}, {0, 1});
  G.input("y", f32, {2, "R"}, {1, "ly"});
  Bindings B;
  B.Dims = {{"R", 2}, {"ly", 2}};
  B.Inputs["x"] = HostTensor{DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6}};
  B.Inputs["y"] = HostTensor{DType::F32, {2, 2}, {7, 8, 9, 10}};
  foldStridedInputs(G, B);
  CHECK(B.Inputs["x"].Data == std::vector<double>{1, 2, 1, 2, 1, 2});
  CHECK(B.Inputs["y"].Data == std::vector<double>{7, 8, 9, 10});
}

TEST_CASE("strided: kernels take strides as parameters and keep vectors", "[strided]") {
  Graph G;
  Value X = G.input("x", bf16, {"T", 4096}, {"ld", 1});
  Value W = G.input("w", bf16, {4096});
  Value Xf = cast(X, f32);
  Value Y = Xf * rsqrt(mean(Xf * Xf) + 1e-6) * cast(W, f32);
  G.output("y", cast(Y, bf16), {"ldo", 1});
  GraphPlan P = planGraph(G, PlanOptions{});
  REQUIRE(P.Kernels.size() == 1);
  std::string Src = codegen::emitProgram(G, P.Kernels);
  // The row starts at c0 * ld: a per-chunk checked wide load, and the
  // output's row at c0 * ldo.
  CHECK_THAT(Src, Contains("c0 * d_1") && Contains("c0 * d_2"));
  CHECK_THAT(Src, Contains("jf_load_whole<jf_bf16, 8>(in_0 + (c0 * d_1) + col)") &&
                      Contains("jf_store_whole<jf_bf16, 8>(out_0 + (c0 * d_2 + col)"));
  // The aligned variant loads unchecked: run() picks it only when ld and
  // ldo are multiples of 8 (and the pointers 16-byte aligned).
  CHECK_THAT(Src, Contains("jf_load<jf_bf16, 8>(in_0 + (c0 * d_1) + col)"));
  // A transposed view reads one element a lane, at its strides.
  Graph T;
  Value A = T.input("a", f32, {"T", 64}, {1, "T"});
  T.output("b", A * 2.0);
  std::string TSrc = codegen::emitProgram(T, planGraph(T, PlanOptions{}).Kernels);
  CHECK_THAT(TSrc, Contains("* d_0"));
  CHECK(TSrc.find("jf_load_whole<float, 4>(in_0") == std::string::npos);
  CHECK(TSrc.find("jf_load<float, 4>(in_0") == std::string::npos);
}

namespace {
void checkBoth(const Graph &G, const std::map<std::string, int64_t> &Dims,
               test::CheckOptions O = {}) {
  test::checkGraph(G, test::randomBindings(G, Dims, {}, O), O);
  O.MisalignEach = {1, 3, 0, 2};
  test::checkGraph(G, test::randomBindings(G, Dims, {}, O), O);
}
} // namespace

TEST_CASE("strided: fused vs unfused vs reference", "[gpu][strided]") {
  test::haveGpu();
  for (DType T : {f32, bf16, f16}) {
    INFO(dtypeName(T).str());
    // Element-wise: a padded-row input and output, a contiguous operand.
    {
      Graph G;
      Value X = G.input("x", T, {"R", 37}, {"ldx", 1});
      Value Y = G.input("y", T, {"R", 37});
      G.output("z", X * 2.0 + Y, {"ldz", 1});
      test::CheckOptions O;
      O.ExpectFusedKernels = 1;
      checkBoth(G, {{"R", 9}, {"ldx", 45}, {"ldz", 40}}, O);
      checkBoth(G, {{"R", 5}, {"ldx", 48}, {"ldz", 64}}, O); // wide-variant strides
      checkBoth(G, {{"R", 3}, {"ldx", 37}, {"ldz", 37}}, O); // dense at run time
    }
    // A transposed view in, a column-major output, static strides.
    {
      Graph G;
      Value X = G.input("x", T, {"R", 24}, {1, "R"});
      G.output("y", exp(cast(X, f32)), {1, "R"});
      G.output("s", X - 1.0, {32, 1});
      checkBoth(G, {{"R", 13}});
    }
    // RMSNorm over padded rows (a KV-cache page), strided output and a
    // strided per-row output.
    {
      Graph G;
      Value X = G.input("x", T, {"R", 136}, {"ld", 1});
      Value W = G.input("w", T, {136});
      Value Xf = cast(X, f32);
      Value Ms = mean(Xf * Xf);
      G.output("y", cast(Xf * rsqrt(Ms + 1e-6) * cast(W, f32), T), {144, 1});
      G.output("ms", Ms, {"lm", 1});
      test::CheckOptions O;
      O.ExpectFusedKernels = 1;
      checkBoth(G, {{"R", 11}, {"ld", 141}, {"lm", 3}}, O);
      checkBoth(G, {{"R", 200}, {"ld", 136}, {"lm", 1}}, O);
    }
    // Softmax over the other axis of a transposed view (per-lane strided
    // rows), a column sum of a padded buffer, a full sum with a zero stride.
    {
      Graph G;
      Value X = G.input("x", T, {"R", 19}, {1, "R"});
      Value Xf = cast(X, f32);
      Value E = exp(Xf - reduceMax(Xf));
      G.output("p", E / sum(E));
      Value C = G.input("c", T, {"N", 40}, {"lc", 1});
      G.output("colsum", sum(cast(C, f32), {0}), {1, 1});
      Value B = G.input("b", f32, {"N", 40}, {0, 1}); // one row, read N times
      G.output("tot", sum(B, ReduceScope::All));
      checkBoth(G, {{"R", 7}, {"N", 33}, {"lc", 43}});
    }
    // Reductions over the two innermost axes of a padded [B, G, C] buffer
    // (GroupNorm-like), the output back in a padded layout.
    {
      Graph G;
      Value X = G.input("x", T, {"B", 4, 10}, {"lb", 10, 1});
      Value Xf = cast(X, f32);
      Value M = mean(Xf, {-2, -1});
      G.output("y", cast(Xf - M, T), {48, 10, 1});
      checkBoth(G, {{"B", 5}, {"lb", 47}});
    }
  }
}

TEST_CASE("strided: a merged reduction needs its strided rows contiguous", "[strided]") {
  // mean over {-2, -1} runs over rows of 4 x 10 merged into 40: a layout
  // whose [4, 10] part is padded cannot be one row.
  Graph G;
  Value X = G.input("x", f32, {"B", 4, 10}, {"lb", 10, 1});
  Value M = mean(X, {-2, -1});
  G.output("y", X - M, {48, 12, 1});
  CHECK_THROWS_WITH(planGraph(G, PlanOptions{}),
                    Contains("output 'y' has strides [48,12,1], and the merge joins its dims "
                             "[4,10] into one row"));
  Graph H;
  Value Y = H.input("x", f32, {"B", 4, 10}, {"lb", 12, 1});
  H.output("y", Y - mean(Y, {-2, -1}));
  CHECK_THROWS_WITH(planGraph(H, PlanOptions{}), Contains("input 'x' has strides [lb,12,1]"));
}

TEST_CASE("strided: run() rejects overlapping output strides and huge spans",
          "[gpu][strided]") {
  if (!test::haveGpu())
    return;
  Graph G;
  Value X = G.input("x", f32, {"R", 8}, {"lx", 1});
  G.output("y", X + 1.0, {"ly", 1});
  Executable Ex = test::testCompiler().compile(G);
  rt::DeviceBuffer In(4096), Out(4096);
  CHECK_THROWS_WITH(Ex.run({In.ptr()}, {Out.ptr()}, {}, {4, 8, 4}),
                    Contains("output 'y' of shape [R,8] = [4, 8] at strides [ly,1] = [4, 1] "
                             "overlaps itself") &&
                        Contains("dim 0 (stride 4) steps inside the 8 elements"));
  CHECK_THROWS_WITH(Ex.run({In.ptr()}, {Out.ptr()}, {}, {4, 8, 0}),
                    Contains("dim 0 has 4 elements and stride 0"));
  CHECK_THROWS_WITH(Ex.run({In.ptr()}, {Out.ptr()}, {}, {4, int64_t(1) << 47, 8}),
                    Contains("input 'x' of shape [R,8]") && Contains("spans more than 2^48"));
  // Valid again after the errors: the same executable runs.
  Ex.run({In.ptr()}, {Out.ptr()}, {}, {4, 8, 8});
  // The harness refuses data a zero stride cannot hold.
  Graph Z;
  Value B = Z.input("b", f32, {3, 2}, {0, 1});
  Z.output("c", B * 2.0);
  Executable EZ = test::testCompiler().compile(Z);
  Bindings Bad;
  Bad.Inputs["b"] = HostTensor{DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6}};
  CHECK_THROWS_WITH(runOnDevice(EZ, Bad),
                    Contains("input 'b' puts elements 0 and 2 at offset 0 but their values "
                             "differ"));
}

TEST_CASE("strided: the README's snippet builds, with dims in the order it says",
          "[strided]") {
  namespace jf = jitfuse;
  jf::Graph g;
  auto q = g.input("q", jf::bf16, {"T", 4096}, {"ld", 1});
  auto kt = g.input("kt", jf::f32, {"T", 64}, {1, "T"});
  auto w = g.input("w", jf::bf16, {4096});
  g.output("y", jf::nn::rmsNorm(q, w, g.constant(1e-6)), {"ldy", 1});
  g.output("k2", kt * 2.0);
  CHECK(g.dynamicDims() == llvm::ArrayRef<std::string>({"T", "ld", "ldy"}));
  GraphPlan P = planGraph(g, PlanOptions{});
  CHECK(P.Kernels.size() == 2);
}
