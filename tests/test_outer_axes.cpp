//===- tests/test_outer_axes.cpp - reductions over outer and mixed axes ---===//
//
// Issue 14, item 1: any set of axes. A reduction that is neither inner nor
// axis 0 of a rank-2 tensor is lowered to a row or column reduction of a
// permuted view (compiler/LowerAxes.h). Checked: the lowered graph against
// the user's under the fp64 interpreter (the lowering's own oracle), the
// plans (one kernel each, prologue and row epilogue inside), the errors for
// dims that cannot merge, NVRTC compiles, and with a GPU fused vs unfused vs
// reference at odd sizes, misaligned pointers and every float dtype.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "compiler/LowerAxes.h"
#include "compiler/Planner.h"
#include "ir/NN.h"
#include "ir/Printer.h"
#include "reference/ErrorBound.h"
#include "reference/Interpreter.h"
#include "ir/ReduceForm.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <set>

using namespace jitfuse;
using Catch::Matchers::Contains;

namespace {
/// Every non-empty set of axes of a rank-R tensor, as axis lists.
std::vector<std::vector<int64_t>> allAxisSets(unsigned R) {
  std::vector<std::vector<int64_t>> Out;
  for (unsigned M = 1; M < (1u << R); ++M) {
    std::vector<int64_t> A;
    for (unsigned I = 0; I < R; ++I)
      if (M & (1u << I))
        A.push_back(I);
    Out.push_back(A);
  }
  return Out;
}

std::string axesStr(llvm::ArrayRef<int64_t> A) {
  std::string S;
  for (int64_t X : A)
    S += (S.empty() ? "" : ",") + std::to_string(X);
  return "{" + S + "}";
}
} // namespace

TEST_CASE("outer axes: the lowered graph computes what the user's does",
          "[reduce-axes][outer-axes]") {
  // Independent of codegen: both graphs under the fp64 interpreter, on
  // shapes with size-1 axes in every position.
  const std::vector<std::vector<int64_t>> Shapes = {
      {3, 4, 5}, {2, 1, 3, 4}, {3, 5, 1}, {1, 4, 3}, {2, 3, 2, 3}, {5, 1, 1, 2},
      // Innermost reduced runs of 32 or more: two stages.
      {3, 4, 40}, {2, 3, 2, 33}, {2, 33, 1}};
  for (const std::vector<int64_t> &S : Shapes)
    for (const std::vector<int64_t> &Axes : allAxisSets(S.size()))
      for (Op O : {Op::ReduceSum, Op::ReduceMean, Op::ReduceMax, Op::ReduceMin}) {
        Graph G;
        Shape Dims(S.begin(), S.end());
        Value X = G.input("x", f64, Dims);
        Value R = reduce(O, X, Axes);
        G.output("r", R);
        G.output("e", X - R); // an epilogue over the operand's shape
        INFO(opName(O).str() << " over " << axesStr(Axes) << " of " << shapeStr(Dims));
        Bindings B = test::randomBindings(G, {}, {});
        std::optional<Graph> L = lowerReduceAxes(G);
        if (!L) {
          CHECK(!needsAxesLowering(R.node()));
          continue;
        }
        std::map<std::string, HostTensor> Want = interpret(G, B), Got = interpret(*L, B);
        for (const char *Name : {"r", "e"}) {
          REQUIRE(Got.at(Name).Dims == Want.at(Name).Dims);
          for (size_t I = 0; I < Want.at(Name).Data.size(); ++I)
            CHECK(Got.at(Name).Data[I] ==
                  Approx(Want.at(Name).Data[I]).epsilon(1e-12).margin(1e-12));
        }
      }
}

TEST_CASE("outer axes: the stages of each set of axes", "[reduce-axes][outer-axes]") {
  using V = llvm::SmallVector<std::pair<bool, uint32_t>, 2>;
  auto Stages = [](Shape S, uint32_t Mask) {
    V Out;
    for (const ReduceStage &St : reduceStages(S, Mask))
      Out.push_back({St.Row, St.Axes});
    return Out;
  };
  const bool Row = true, Col = false;
  CHECK(Stages({7, 5}, 0b01) == V{{Col, 0b01}});        // rank 2, axis 0
  CHECK(Stages({7, 1}, 0b01) == V{{Col, 0b01}});        // ... even of [R, 1]
  CHECK(Stages({7, 5, 3}, 0b110) == V{{Row, 0b110}});   // inner
  CHECK(Stages({7, 5, 3}, 0b001) == V{{Col, 0b001}});   // outer
  CHECK(Stages({7, 5, 3}, 0b010) == V{{Col, 0b010}});   // middle
  CHECK(Stages({7, 5, 3}, 0b101) == V{{Row, 0b101}});   // short run: one row
  CHECK(Stages({7, 5, 32}, 0b101) == V{{Row, 0b100}, {Col, 0b001}});
  CHECK(Stages({7, 5, "HW"}, 0b101) == V{{Row, 0b100}, {Col, 0b001}});
  CHECK(Stages({2, 7, 3, 64, 1}, 0b01010) == V{{Row, 0b11000}, {Col, 0b00010}});
  CHECK(Stages({2, 7, 1, 64}, 0b0010 | 0b1000) == V{{Row, 0b1000}, {Row, 0b0010}});
  CHECK(Stages({1, 5, 1}, 0b101).empty()); // only size-1 axes
  CHECK(Stages({6, 5, 1}, 0b010) == V{{Row, 0b010}}); // a kept 1 after it
}

TEST_CASE("outer axes: the error bound's depth is the stages' kernels'",
          "[reduce-axes][outer-axes][numerics]") {
  // {0} of [R, 2, C] runs as the column reduction of [R, 2C]: the same
  // terms in the same tree, so the same bound element for element.
  for (int64_t C : {3, 2000}) { // depth 30 at C = 2000; summationDepth(1000) is 46
    Graph A, B;
    Value X = A.input("x", f32, {1000, 2, C});
    A.output("s", sum(X, {0}));
    Value Y = B.input("x", f32, {1000, 2 * C});
    B.output("s", sum(Y, {0}));
    Bindings BX = test::randomBindings(A, {}, {});
    Bindings BY = BX;
    BY.Inputs["x"].Dims = {1000, 2 * C};
    ReferenceResult RA = interpretWithBounds(A, BX), RB = interpretWithBounds(B, BY);
    INFO("C = " << C);
    CHECK(RA.Bounds.at("s").Data == RB.Bounds.at("s").Data);
  }
}

TEST_CASE("outer axes: the plans of each form", "[reduce-axes][outer-axes]") {
  struct Case {
    std::vector<int64_t> Axes;
    std::vector<KernelKind> Kinds;
  };
  using K = KernelKind;
  // The innermost axis with more than one element decides: kept, one
  // column reduction; reduced, a row reduction, in two stages when another
  // reduced axis lies outside an innermost run of >= 32 terms (the run as
  // contiguous rows, then the rest of the axes over the intermediate,
  // lowered the same way: {1} of [6, 100, 1, 1] is a row).
  for (const Case &C : {Case{{0}, {K::ColumnReduce}}, Case{{1}, {K::ColumnReduce}},
                        Case{{0, 1}, {K::ColumnReduce}}, Case{{0, 2}, {K::ColumnReduce}},
                        Case{{1, 3}, {K::RowReduce, K::RowReduce}},
                        Case{{0, 3}, {K::RowReduce, K::ColumnReduce}}}) {
    Graph G;
    Value X = G.input("x", bf16, {6, 100, 1, 64});
    Value S = sum(cast(X, f32), C.Axes);
    G.output("s", S);
    INFO("axes " << axesStr(C.Axes));
    GraphPlan P = planGraph(G, PlanOptions{});
    CHECK(P.Lowered);
    CHECK_THAT(P.PlanText, Contains("reductions over outer or mixed axes"));
    REQUIRE(P.Kernels.size() == C.Kinds.size());
    for (size_t I = 0; I < C.Kinds.size(); ++I)
      CHECK(P.Kernels[I].Kind == C.Kinds[I]);
    CHECK(P.planned(G).node(P.Kernels.back().Outputs[0]).Dims == S.shape());
  }
  // A short innermost run: one row kernel through the permute, with its
  // epilogue.
  Graph G;
  Value X = G.input("x", f32, {300, 3, 17});
  G.output("y", sum(X, {0, 2}) * 0.5);
  GraphPlan P = planGraph(G, PlanOptions{});
  REQUIRE(P.Kernels.size() == 1);
  CHECK(P.Kernels[0].Kind == K::RowReduce);
  // BatchNorm statistics over {0, 2} of [N, C, HW]: both first stages share
  // one row kernel (rows = N*C runs of HW, f32 partials), then one column
  // kernel each over N; the half-precision input is summed in f32.
  Graph B;
  Value Y = B.input("x", bf16, {"N", 256, "HW"});
  Value Yf = cast(Y, f32);
  B.output("s1", sum(Yf, {0, 2}));
  B.output("s2", sum(Yf * Yf, {0, 2}));
  GraphPlan PB = planGraph(B, PlanOptions{});
  REQUIRE(PB.Kernels.size() == 3);
  CHECK(PB.Kernels[0].Kind == K::RowReduce);
  CHECK(PB.Kernels[0].Outputs.size() == 2);
  CHECK(PB.Kernels[1].Kind == K::ColumnReduce);
  CHECK(PB.Kernels[2].Kind == K::ColumnReduce);
  // A mean of bf16 keeps its partial means in f32 and rounds once, in a
  // third kernel (a column reduction's result starts a new kernel).
  Graph H;
  Value Z = H.input("z", bf16, {4, 7, 64});
  H.output("m", mean(Z, {0, 2}));
  GraphPlan PH = planGraph(H, PlanOptions{});
  REQUIRE(PH.Kernels.size() == 3);
  CHECK(PH.planned(H).node(PH.Kernels[0].Outputs[0]).Type == f32);
  CHECK(PH.planned(H).node(PH.Kernels[1].Outputs[0]).Type == f32);
}

TEST_CASE("outer axes: merged dims are products of names and numbers",
          "[reduce-axes][outer-axes][dims]") {
  // {0, 1} of [B, T, 64]: a column reduction of [B*T, 64].
  Graph G;
  Value X = G.input("x", f32, {"B", "T", 64});
  G.output("s", sum(X, {0, 1}));
  GraphPlan P = planGraph(G, PlanOptions{});
  REQUIRE(P.Kernels.size() == 1);
  CHECK(shapeStr(P.Kernels[0].Domain) == "[B*T,64]");
  // {0} of [6, B, 64] merges the kept B and 64 into one dim, 64*B; {1, 2}
  // of [B, 5, T, 3] reduces 5*T... and both compute what the user's graph
  // does (the reference binds the products' names and multiplies the
  // numbers in).
  Graph H;
  Value Y = H.input("y", f32, {6, "B", 64});
  Value Z = H.input("z", f32, {"B", 5, "T", 3});
  H.output("s", sum(Y, {0}));
  H.output("m", mean(Z, {0, 2}));
  H.output("r", reduceMax(Z, {1, 3}) * 2.0);
  GraphPlan PH = planGraph(H, PlanOptions{});
  CHECK_THAT(PH.PlanText, Contains("64*B"));
  std::optional<Graph> L = lowerReduceAxes(H);
  REQUIRE(L);
  for (int64_t B : {1, 3}) {
    Bindings Bd = test::randomBindings(H, {{"B", B}, {"T", 7}}, {});
    std::map<std::string, HostTensor> Want = interpret(H, Bd), Got = interpret(*L, Bd);
    for (const char *Name : {"s", "m", "r"}) {
      INFO(Name << " B=" << B);
      REQUIRE(Got.at(Name).Dims == Want.at(Name).Dims);
      for (size_t I = 0; I < Want.at(Name).Data.size(); ++I)
        CHECK(Got.at(Name).Data[I] == Approx(Want.at(Name).Data[I]).epsilon(1e-12).margin(1e-12));
    }
  }
  CHECK_NOTHROW(test::testCompiler().compile(H, CompileOptions{}));
}

TEST_CASE("outer axes: kernels compile with NVRTC for odd shapes and every op",
          "[reduce-axes][outer-axes]") {
  for (DType T : {f32, bf16})
    for (const std::vector<int64_t> &Axes : allAxisSets(3)) {
      Graph G;
      Value X = G.input("x", T, {5, 9, 37});
      G.output("sum", sum(cast(X, f32), Axes));
      G.output("max", reduceMax(X, Axes));
      G.output("mean", mean(X, Axes) + 1.0);
      INFO(dtypeName(T).str() << " axes " << axesStr(Axes));
      CHECK_NOTHROW(test::testCompiler().compile(G, CompileOptions{}));
    }
  // Dynamic dims merged with static ones, every axis set (the [gpu] case
  // runs these shapes).
  for (const std::vector<int64_t> &Axes : allAxisSets(4)) {
    Graph G;
    Value X = G.input("x", bf16, {"B", 7, "T", 41});
    G.output("sum", sum(cast(X, f32), Axes));
    G.output("mean", mean(X, Axes) * 0.5);
    INFO("axes " << axesStr(Axes) << " of [B,7,T,41]");
    CHECK_NOTHROW(test::testCompiler().compile(G, CompileOptions{}));
  }
  // A dynamic reduced axis between static kept ones: a column reduction of
  // [R, 5*37].
  Graph G;
  Value X = G.input("x", bf16, {5, "R", 37});
  G.output("s", sum(cast(X, f32), {1}));
  Executable E = test::testCompiler().compile(G, CompileOptions{});
  CHECK(E.numKernels() == 1);
}

TEST_CASE("outer axes: a reduction over size-1 axes only is a kernel that writes its output",
          "[reduce-axes][outer-axes]") {
  // Lowered, sum over axis 1 of [7, 1, 1000] is its operand: the output
  // mapped to the input node, and the plan had no kernel for it (the [gpu]
  // tier's random graphs found its buffer unwritten, fused and unfused).
  Graph G;
  Value X = G.input("x", f32, {7, 1, 1000});
  Value S = sum(X, {1});
  G.output("s", S);
  G.output("m", reduceMax(S, {1})); // the other output's node, lowered again
  G.output("t", mean(X * 2.0, {0, 1}));
  for (bool Fuse : {true, false}) {
    PlanOptions O;
    O.Fuse = Fuse;
    GraphPlan P = planGraph(G, O);
    INFO(P.PlanText);
    std::set<NodeId> Written;
    for (const KernelPlan &K : P.Kernels)
      for (NodeId N : K.Outputs)
        Written.insert(N);
    const Graph &View = P.planned(G);
    std::set<NodeId> Outs;
    for (const GraphOutput &Out : View.outputs()) {
      INFO("output " << Out.Name);
      CHECK(View.node(Out.Id).Kind != Op::Input);
      CHECK(Written.count(Out.Id) == 1);
      Outs.insert(Out.Id);
    }
    CHECK(Outs.size() == 3); // each its own buffer
  }
}

/// Every axis set of a \p T tensor of shape \p S: a sum, a mean, a max and
/// a min over it, fused and unfused against the reference, aligned and
/// with the inputs off by 1 and 3 elements, under \p Base's options.
static void checkAxisSets(DType T, const std::vector<int64_t> &S,
                          const test::CheckOptions &Base) {
  for (const std::vector<int64_t> &Axes : allAxisSets(S.size())) {
    Graph G;
    Value X = G.input("x", T, Shape(S.begin(), S.end()));
    Value Y = G.input("y", T, Shape(S.begin(), S.end()));
    Value R = sum(cast(X, f32), Axes);
    G.output("sum", R);
    G.output("mean", mean(X * Y, Axes));
    G.output("max", reduceMax(X, Axes));
    G.output("min", reduceMin(Y, Axes) * 2.0);
    INFO(dtypeName(T).str() << " axes " << axesStr(Axes) << " of " << shapeStr(G.node(0).Dims));
    test::checkGraph(G, test::randomBindings(G, {}, {}), Base);
    test::CheckOptions O = Base;
    O.MisalignEach = {1, 3};
    test::checkGraph(G, test::randomBindings(G, {}, {}, O), O);
  }
}

TEST_CASE("outer axes: fused vs unfused vs reference", "[gpu][reduce-axes][outer-axes]") {
  if (!test::haveGpu())
    return;
  // Odd sizes everywhere; [3, 129, 8] and [2, 5, 3, 40] have kept inner
  // runs the vector width divides; f16 on the first shape only (the
  // dtypes share the code paths; the tier's time is finite).
  // [7, 1, 50]: axis sets of size-1 axes only (their reduction is the
  // element itself; it used to leave the output unwritten).
  const std::vector<std::vector<int64_t>> Shapes = {{7, 33, 41}, {3, 129, 8}, {2, 5, 3, 40},
                                                    {300, 3, 17}, {7, 1, 50}};
  for (DType T : {f32, bf16, f16})
    for (const std::vector<int64_t> &S : Shapes)
      if (T != f16 || S == Shapes.front())
        checkAxisSets(T, S, test::CheckOptions{});
  // Dynamic dims merged with static ones ("41*B", "B*T"): every axis set.
  for (DType T : {f32, bf16})
    for (const std::vector<int64_t> &Axes : allAxisSets(4)) {
      Graph G;
      Value X = G.input("x", T, {"B", 7, "T", 41});
      G.output("sum", sum(cast(X, f32), Axes));
      G.output("mean", mean(X, Axes) * 0.5);
      INFO(dtypeName(T).str() << " axes " << axesStr(Axes) << " of [B,7,T,41]");
      test::checkGraph(G, test::randomBindings(G, {{"B", 3}, {"T", 5}}, {}));
      test::checkGraph(G, test::randomBindings(G, {{"B", 1}, {"T", 33}}, {}));
    }
}

/// The CUDA text of \p G's one kernel, compiled for sm_90 (no GPU needed).
static std::string kernelText(const Graph &G, bool PrefixCoords) {
  CompileOptions O;
  O.Arch = "sm_90";
  O.PrefixCoords = PrefixCoords;
  Executable E = test::testCompiler().compile(G, O);
  REQUIRE(E.numKernels() == 1);
  return E.source();
}

TEST_CASE("PrefixCoords: a reshape keeping the domain's leading dims divides no row index",
          "[reduce-axes][outer-axes][prefixcoords]") {
  // W18's mean pooling: {1} of [8, T, 4096] is the column reduction of
  // [T, 32768] read through a permute. Without the option each row's
  // element is found from the domain's linear index (row * 32768 + col);
  // with it the row coordinate is the domain's and only the column is
  // unflattened (col / 4096 the batch, col % 4096 the channel).
  Graph G;
  Value X = G.input("x", bf16, {8, "T", 4096});
  G.output("m", mean(cast(X, f32), {1}));
  std::string Off = kernelText(G, false), On = kernelText(G, true);
  CHECK_THAT(Off, Contains("c0 * 32768 + col"));
  CHECK_THAT(On, !Contains("c0 * 32768"));
  CHECK_THAT(On, Contains("(t0 / 4096) * (d_0 * 4096) + c0 * 4096) + (t0 % 4096)"));
  CHECK_THAT(On, Contains("const long long t0 = (col);"));
  // Rows seen through a reshape that keeps the leading dim (per-head RMS
  // norm of [T, 4096] as [T, 32, 128]) compile too, and a reshape that
  // keeps none ([6, 10] as [4, 15]) is as without the option.
  Graph H;
  Value Y = H.input("y", bf16, {"T", 4096});
  Value Heads = reshape(Y, {"T", 32, 128});
  H.output("n", nn::rmsNorm(Heads, H.input("w", bf16, {128}), H.constant(1e-6)));
  CHECK_NOTHROW(kernelText(H, true));
  Graph F;
  Value Z = F.input("z", f32, {6, 10});
  F.output("r", reshape(Z, {4, 15}) * 2.0);
  CHECK(kernelText(F, true) == kernelText(F, false));
}

TEST_CASE("PrefixCoords: fused vs unfused vs reference", "[gpu][reduce-axes][outer-axes][prefixcoords]") {
  if (!test::haveGpu())
    return;
  // Three outer-axes shapes of the case above and reshaped rows, with the
  // option on (the default) and off.
  for (bool On : {true, false}) {
    INFO("PrefixCoords " << On);
    test::CheckOptions O;
    O.PrefixCoords = On;
    for (DType T : {f32, bf16})
      for (const std::vector<int64_t> &S :
           std::vector<std::vector<int64_t>>{{7, 33, 41}, {3, 129, 8}, {2, 5, 3, 40}})
        checkAxisSets(T, S, O);
    Graph G;
    Value X = G.input("x", bf16, {3, "T", 264});
    G.output("m", mean(cast(X, f32), {1}));
    test::checkGraph(G, test::randomBindings(G, {{"T", 301}}, {}), O);
    Graph H;
    Value Y = H.input("y", bf16, {"T", 4096});
    H.output("n", reshape(nn::rmsNorm(reshape(Y, {"T", 32, 128}), H.input("w", bf16, {128}),
                                      H.constant(1e-6)),
                          {"T", 4096}));
    test::checkGraph(H, test::randomBindings(H, {{"T", 37}}, {}), O);
  }
}

TEST_CASE("outer axes: the README's snippet plans as it says", "[reduce-axes][outer-axes]") {
  namespace jf = jitfuse;
  jf::Graph g;
  auto x = g.input("x", jf::bf16, {8, "T", 4096});
  auto pooled = jf::mean(jf::cast(x, jf::f32), {1}); // [8, 1, 4096]: one column kernel
  auto a = g.input("a", jf::bf16, {"N", 256, "HW"});
  auto af = jf::cast(a, jf::f32);
  auto s1 = jf::sum(af, {0, 2});
  auto s2 = jf::sum(af * af, {0, 2});
  g.output("pooled", pooled);
  g.output("s1", s1);
  g.output("s2", s2);
  CHECK(shapeStr(pooled.shape()) == "[8,1,4096]");
  GraphPlan P = planGraph(g, PlanOptions{});
  REQUIRE(P.Kernels.size() == 4);
  int Rows = 0, Columns = 0;
  for (const KernelPlan &K : P.Kernels) {
    Rows += K.Kind == KernelKind::RowReduce;
    Columns += K.Kind == KernelKind::ColumnReduce;
  }
  CHECK(Rows == 1);
  CHECK(Columns == 3);
  // Mean pooling with a dynamic batch: the kept [B, 4096] merge into one
  // dim, 4096*B.
  jf::Graph h;
  h.output("p", jf::mean(h.input("y", jf::bf16, {"B", "T", 4096}), {1}));
  GraphPlan PH = planGraph(h, PlanOptions{});
  REQUIRE(PH.Kernels.size() == 1);
  CHECK(shapeStr(PH.Kernels[0].Domain) == "[T,4096*B]");
}
