//===- tests/test_gpu_ops.cpp - every op on the GPU vs the reference ------===//
//
// Without a GPU these still compile every kernel with NVRTC (codegen bugs
// surface in CI); with one they run fused and unfused and compare with the
// fp64 reference.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "compiler/Planner.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {
const DType FloatTypes[] = {DType::F32, DType::F16, DType::BF16};
const int64_t OddSizes[] = {1, 3, 4097, 65537};

/// Every unary and binary op of ir/Ops.def (cast has its own test below).
std::vector<Op> opsOfKind(OpKind K) {
  std::vector<Op> Ops;
  for (Op O : AllOps)
    if (opKind(O) == K && O != Op::Cast)
      Ops.push_back(O);
  return Ops;
}
const std::vector<Op> UnaryOps = opsOfKind(OpKind::Unary);
const std::vector<Op> BinaryOps = opsOfKind(OpKind::Binary);
} // namespace

TEST_CASE("every unary op, each float dtype, odd sizes, NaN/Inf", "[gpu][ops]") {
  haveGpu();
  for (DType T : FloatTypes) {
    Graph G;
    Value X = G.input("x", T, {"N"});
    for (Op O : UnaryOps)
      G.output(std::string(opName(O)), unary(O, X));
    for (int64_t N : OddSizes) {
      INFO("dtype " << dtypeName(T).str() << " N=" << N);
      CheckOptions Opts;
      Opts.SpecialValues = true;
      checkGraph(G, randomBindings(G, {{"N", N}}, {}, Opts), Opts);
    }
  }
}

TEST_CASE("every binary op with broadcasting, each float dtype", "[gpu][ops]") {
  haveGpu();
  for (DType T : FloatTypes) {
    Graph G;
    Value A = G.input("a", T, {"R", "C"});
    Value B = G.input("b", T, {"C"});
    Value Col = G.input("col", T, {"R", 1});
    for (Op O : BinaryOps) {
      G.output(std::string(opName(O)), binary(O, A, B));
      G.output(std::string(opName(O)) + "_col", binary(O, Col, A));
    }
    for (auto [R, C] : {std::pair<int64_t, int64_t>{1, 1}, {3, 4097}, {2, 65537}, {5, 8}}) {
      INFO("dtype " << dtypeName(T).str() << " R=" << R << " C=" << C);
      CheckOptions Opts;
      Opts.SpecialValues = true;
      checkGraph(G, randomBindings(G, {{"R", R}, {"C", C}}, {}, Opts), Opts);
    }
  }
}

TEST_CASE("where, fma, scalars and casts between all dtypes", "[gpu][ops]") {
  haveGpu();
  const DType All[] = {DType::F32, DType::F16, DType::BF16, DType::F64,
                       DType::I32, DType::I64, DType::Bool};
  Graph G;
  Value A = G.input("a", f32, {"N"});
  Value B = G.input("b", bf16, {"N"});
  Value C = G.input("c", f16, {"N"});
  Value IA = G.input("ia", i32, {"N"});
  Value IB = G.input("ib", i32, {"N"});
  Value Alpha = G.scalar("alpha", f32);
  G.output("where", where(gt(A, B), A * Alpha, C));
  G.output("fma", fma(A, B, C));
  G.output("scaled", B * Alpha + 1.5);
  // Casts read inputs directly: a cast to an integer of a rounded
  // intermediate would legitimately differ between fused and unfused.
  for (Value Src : {A, B, IA})
    for (DType To : All)
      G.output(fmt::format("cast_{}_{}", dtypeName(Src.dtype()).str(),
                           dtypeName(To).str()),
               cast(Src, To));
  G.output("int_mod", mod(IA * G.constant(37, i32) + G.constant(5, i32), IB));
  G.output("int_max", max(IA, IB));
  for (int64_t N : OddSizes) {
    INFO("N=" << N);
    CheckOptions Opts;
    Opts.Lo = -50;
    Opts.Hi = 50;
    checkGraph(G, randomBindings(G, {{"N", N}}, {{"alpha", 0.37}}, Opts), Opts);
  }
}

TEST_CASE("last-axis and full reductions over odd lengths", "[gpu][ops]") {
  haveGpu();
  for (DType T : FloatTypes) {
    for (int64_t R : OddSizes) {
      Graph G;
      Value X = G.input("x", T, {"B", R});
      G.output("sum", sum(X));
      G.output("max", reduceMax(X));
      G.output("min", reduceMin(X));
      G.output("mean", mean(X));
      G.output("all_sum", sum(abs(X), ReduceScope::All));
      G.output("all_max", reduceMax(X, ReduceScope::All));
      // A signed full mean cancels to ~1e-4 of its terms, and one scalar
      // output has no rms to scale the rule by (seen under memcheck: 3.9e-9
      // off with 3.3e-9 allowed); the mean of |x| tests the same kernel
      // without measuring the conditioning of the data.
      G.output("all_mean", mean(abs(X), ReduceScope::All));
      INFO("dtype " << dtypeName(T).str() << " R=" << R);
      checkGraph(G, randomBindings(G, {{"B", 3}}, {}));
      checkGraph(G, randomBindings(G, {{"B", 1}}, {}));
    }
  }
}

TEST_CASE("reductions with a dynamic row length and empty tensors", "[gpu][ops]") {
  haveGpu();
  Graph G;
  Value X = G.input("x", f32, {"B", "R"});
  G.output("sum", sum(X));
  G.output("max", reduceMax(X));
  G.output("all", sum(X, ReduceScope::All));
  G.output("y", exp(X));
  for (auto [B, R] : {std::pair<int64_t, int64_t>{3, 1000}, {2, 0}, {0, 5}, {1, 300000}}) {
    INFO("B=" << B << " R=" << R);
    checkGraph(G, randomBindings(G, {{"B", B}, {"R", R}}, {}));
  }
}

TEST_CASE("views: slice, concat, reshape, broadcast", "[gpu][ops]") {
  haveGpu();
  for (DType T : {DType::F32, DType::BF16}) {
    Graph G;
    Value X = G.input("x", T, {"B", 24});
    Value Y = G.input("y", T, {"B", 8});
    G.output("slice", slice(X, 3, 17));
    G.output("concat", concat({Y, slice(X, 0, 5), Y}));
    G.output("reshape", exp(reshape(X, {"B", 4, 6})));
    G.output("bcast", broadcastTo(slice(X, 0, 1), {"B", 7}));
    G.output("mix", slice(X, 8, 16) * Y + reshape(reduceMax(reshape(X, {"B", 8, 3})), {"B", 8}));
    for (int64_t B : {1, 5, 1000}) {
      INFO("dtype " << dtypeName(T).str() << " B=" << B);
      checkGraph(G, randomBindings(G, {{"B", B}}, {}));
    }
  }
}

TEST_CASE("rand_uniform is bit-identical to the reference", "[gpu][ops]") {
  haveGpu();
  Graph G;
  Value Seed = G.scalar("seed", i64);
  G.output("u", randUniform(Seed, {"N", 3}, 7));
  G.output("u2", randUniform(Seed, {"N", 3}, 8) * 2.0);
  for (int64_t N : {1, 4097}) {
    CheckOptions Opts;
    Opts.TolScale = 0; // exact
    checkGraph(G, randomBindings(G, {{"N", N}}, {{"seed", 1234567890123.0}}), Opts);
  }
}

TEST_CASE("misaligned pointers fall back to narrower vectors", "[gpu][ops]") {
  haveGpu();
  Graph G;
  Value X = G.input("x", bf16, {"B", 4096});
  Value W = G.input("w", bf16, {4096});
  Value Eps = G.scalar("eps", f32);
  G.output("y", nn::rmsNorm(X, W, Eps));
  G.output("z", X * W + 1.0);
  for (unsigned M : {0u, 1u, 2u, 4u}) {
    INFO("misaligned by " << M << " elements");
    CheckOptions Opts;
    Opts.MisalignElems = M;
    checkGraph(G, randomBindings(G, {{"B", 7}}, {{"eps", 1e-6}}), Opts);
  }
}

TEST_CASE("composites match the reference", "[gpu][nn]") {
  haveGpu();
  for (DType T : FloatTypes) {
    Graph G;
    Value X = G.input("x", T, {"B", 1000});
    Value Res = G.input("res", T, {"B", 1000});
    Value W = G.input("w", T, {1000});
    Value Bias = G.input("bias", T, {1000});
    Value Eps = G.scalar("eps", f32);
    Value Seed = G.scalar("seed", i64);
    Value R = X + Res;
    G.output("r", R);
    G.output("rms", nn::rmsNorm(R, W, Eps));
    G.output("ln", nn::layerNorm(R, W, Bias, Eps));
    G.output("sm", nn::softmax(X + Bias));
    G.output("drop", nn::dropout(nn::softmax(X), 0.1, Seed));
    G.output("gelu", nn::geluBias(X, Bias));
    G.output("swiglu", nn::swiglu(X));
    INFO("dtype " << dtypeName(T).str());
    checkGraph(G, randomBindings(G, {{"B", 5}}, {{"eps", 1e-5}, {"seed", 42}}));
  }
}

TEST_CASE("rope, both styles", "[gpu][nn]") {
  haveGpu();
  for (DType T : {DType::F32, DType::BF16}) {
    Graph G;
    Value Q = G.input("q", T, {"T", 4, 64});
    Value Cos = G.input("cos", T, {"T", 32});
    Value Sin = G.input("sin", T, {"T", 32});
    G.output("half", nn::rope(Q, Cos, Sin, nn::RopeStyle::HalfRotation));
    G.output("inter", nn::rope(Q, Cos, Sin, nn::RopeStyle::Interleaved));
    checkGraph(G, randomBindings(G, {{"T", 9}}, {}));
  }
}

TEST_CASE("rope: warps take one half of several heads, any head count, dtype and offset",
          "[gpu][nn]") {
  // The halves' chunks go piece by piece over groups of rows
  // (codegen::concatRowGroup: 2 to 8 heads for these head dims and types);
  // T x heads below leaves the last group part empty, and offsets run the
  // peeled variant, whose chunks stay at the head start.
  haveGpu();
  std::vector<std::vector<unsigned>> Layouts = {{0}, {1}, {3, 0, 1, 2}};
  for (DType T : {DType::F32, DType::BF16, DType::F16})
    for (auto [Heads, D] : {std::pair<int64_t, int64_t>{3, 128}, {5, 64}, {1, 32}}) {
      INFO("dtype " << dtypeName(T).str() << ", " << Heads << " heads of " << D);
      Graph G;
      Value Q = G.input("q", T, {"T", Heads, D});
      Value Cos = G.input("cos", T, {"T", D / 2});
      Value Sin = G.input("sin", T, {"T", D / 2});
      G.output("half", nn::rope(Q, Cos, Sin, nn::RopeStyle::HalfRotation));
      for (const std::vector<unsigned> &L : Layouts) {
        INFO("offsets " << fmt::format("{}", fmt::join(L, "/")));
        CheckOptions Opts;
        Opts.MisalignEach = L;
        checkGraph(G, randomBindings(G, {{"T", 7}}, {}), Opts);
      }
    }
}

TEST_CASE("full reductions are bitwise deterministic run to run", "[gpu][ops]") {
  if (!haveGpu())
    return;
  Graph G;
  Value X = G.input("x", f32, {1 << 22});
  G.output("s", sum(abs(X), ReduceScope::All));
  Executable E = testCompiler().compile(G);
  Bindings B = randomBindings(G, {}, {});
  HostTensor First = runOnDevice(E, B).at("s");
  for (int I = 0; I < 5; ++I)
    CHECK(runOnDevice(E, B).at("s").Data[0] == First.Data[0]);
}

TEST_CASE("one-element views keep their offsets when broadcast", "[gpu][ops]") {
  // Found by the random-graph tier: slice(x, 1, 2) broadcast to [13] read
  // x[0] once the slice was recomputed inside the broadcast's kernel.
  haveGpu();
  Graph G;
  Value X = G.input("x", f32, {13});
  G.output("y", broadcastTo(slice(X, 1, 2), {13}));
  G.output("z", broadcastTo(reshape(slice(X, 5, 6), {1, 1}), {3, 13}) + 1.0);
  G.output("w", concat({slice(X, 2, 3), slice(X, 7, 8)}) * 2.0);
  checkGraph(G, randomBindings(G, {}, {}));
}

TEST_CASE("one node returned under two output names fills both", "[gpu][ops]") {
  // Found by the random-graph tier: the second output buffer kept its poison.
  haveGpu();
  Graph G;
  Value X = G.input("x", f32, {2, 3, 17});
  Value Y = exp(X);
  G.output("y1", Y);
  G.output("y2", Y);
  G.output("y3", Y);
  G.output("x_again", X);
  CHECK(G.outputs()[0].Id != G.outputs()[1].Id);
  CHECK(G.outputs()[1].Id != G.outputs()[2].Id);
  checkGraph(G, randomBindings(G, {}, {}));
}

TEST_CASE("f64 -> f16/bf16 casts round once, half constants hold their rounded value",
          "[gpu][ops]") {
  // Rounding f64 -> f32 -> half rounds twice: 1 + 2^-11 + 2^-40 lands on the
  // f32 tie 1 + 2^-11 and then on 1 in f16, where one rounding gives
  // 1 + 2^-10. The tolerance rule would accept that one-ulp error, so the
  // casts are compared bit for bit.
  bool Gpu = haveGpu();
  const double P40 = std::ldexp(1.0, -40);
  std::vector<double> Vals = {
      1 + std::ldexp(1.0, -11) + P40,     // f16: 1 + 2^-10
      -(1 + std::ldexp(1.0, -11) + P40),  //
      1 + std::ldexp(1.0, -8) + P40,      // bf16: 1 + 2^-7
      -(1 + std::ldexp(1.0, -8) + P40),   //
      1 + std::ldexp(1.0, -8) - P40,      // bf16: 1 (below the tie)
      65520 - std::ldexp(1.0, -30),       // f16: 65504 (just below the overflow tie)
      65520,                              // f16: inf (the tie goes to inf)
      3.4e38, -1e300, 1e-300, -0.0, 0.0, // bf16 inf, -inf; tiny -> +0/-0
      std::ldexp(1.0, -133) * (1 + std::ldexp(1.0, -1) + P40), // bf16 subnormal
      INFINITY, -INFINITY, NAN};
  for (DType To : {DType::F16, DType::BF16}) {
    Graph G;
    Value X = G.input("x", DType::F64, {static_cast<int64_t>(Vals.size())});
    G.output("y", cast(X, To));
    Bindings B;
    B.Inputs["x"] = HostTensor{DType::F64, {static_cast<int64_t>(Vals.size())}, Vals};
    std::map<std::string, HostTensor> Ref = interpret(G, B);
    for (bool Fuse : {true, false}) {
      CompileOptions Opts;
      Opts.Fuse = Fuse;
      if (!Gpu)
        Opts.Arch = "sm_90";
      Executable E = testCompiler().compile(G, Opts);
      if (!Gpu)
        continue;
      // Values decoded from the stored half bits: equal, or both NaN; zeros
      // keep their sign.
      std::map<std::string, HostTensor> Out = runOnDevice(E, B);
      const std::vector<double> &Got = Out.at("y").Data;
      const std::vector<double> &Want = Ref.at("y").Data;
      for (size_t I = 0; I < Vals.size(); ++I) {
        INFO(dtypeName(To).str() << (Fuse ? " fused" : " unfused") << " x = "
                                 << fmt::format("{:a}", Vals[I]) << " got "
                                 << fmt::format("{:a}", Got[I]) << " want "
                                 << fmt::format("{:a}", Want[I]));
        if (std::isnan(Want[I])) {
          CHECK(std::isnan(Got[I]));
          continue;
        }
        CHECK(Got[I] == Want[I]);
        CHECK(std::signbit(Got[I]) == std::signbit(Want[I]));
      }
    }
  }

  // Integers past f32's 24 bits: 2^24 + 2^16 + 1 is above the bf16 tie
  // 2^24 + 2^16, so it rounds up to 2^24 + 2^17; through a rounded f32 it
  // landed on the tie and went to 2^24.
  for (DType From : {DType::I32, DType::I64}) {
    Graph G;
    Value X = G.input("i", From, {4});
    G.output("y", cast(X, DType::BF16));
    Bindings B;
    B.Inputs["i"] = HostTensor{From, {4}, {16842753, -16842753, 16842752, 2147483647}};
    std::map<std::string, HostTensor> Ref = interpret(G, B);
    CHECK(Ref.at("y").Data[0] == 16908288); // 2^24 + 2^17
    CompileOptions Opts;
    if (!Gpu)
      Opts.Arch = "sm_90";
    Executable E = testCompiler().compile(G, Opts);
    if (Gpu)
      CHECK(runOnDevice(E, B).at("y").Data == Ref.at("y").Data);
  }

  // A bf16 constant 0.1 is 0.10009765625: an f32 result shows the difference
  // (1e-4 relative, far above the f32 tolerance).
  Graph G;
  Value X = G.input("x", DType::F32, {"N"});
  G.output("y", X * G.constant(0.1, DType::BF16) + G.constant(1.0 / 3, DType::F16));
  checkGraph(G, randomBindings(G, {{"N", 1031}}, {}));
}

TEST_CASE("the scalar variant's tiled path: misaligned and odd-row tensors large enough to tile",
          "[gpu][ops]") {
  // Past 4 tiled blocks per SM (about 1.1M elements on 132 SMs) the scalar
  // variant gives each thread 8 elements a grid apart (codegen/LaunchRule.h):
  // full tiles unrolled without bound checks, the last one checked. With the
  // ladder of variants (PeelAlignment off) a misaligned pointer selects the
  // scalar variant; so does an odd row.
  haveGpu();
  CheckOptions Misaligned;
  Misaligned.MisalignElems = 1;
  Misaligned.PeelAlignment = false;
  {
    // Flat: silu(g) * u over 2^21 + 37 elements (a partial last tile).
    Graph G;
    Value Gt = G.input("g", bf16, {"N"});
    Value U = G.input("u", bf16, {"N"});
    G.output("y", nn::siluMul(Gt, U));
    checkGraph(G, randomBindings(G, {{"N", (int64_t(1) << 21) + 37}}, {}), Misaligned);
  }
  {
    // A bias broadcast over rows of 4999 (odd: scalar even aligned), by
    // rows and walked flat (FlatRowBroadcast, the default).
    Graph G;
    Value X = G.input("x", bf16, {"B", 4999});
    Value Bias = G.input("bias", bf16, {4999});
    G.output("y", nn::geluBias(X, Bias));
    for (bool Flat : {false, true}) {
      INFO("FlatRowBroadcast " << Flat);
      CheckOptions Ladder, Peeled = Misaligned;
      Ladder.PeelAlignment = false;
      Ladder.FlatRowBroadcast = Peeled.FlatRowBroadcast = Flat;
      checkGraph(G, randomBindings(G, {{"B", 301}}, {}), Ladder);
      checkGraph(G, randomBindings(G, {{"B", 301}}, {}), Peeled);
    }
  }
}

TEST_CASE("long rows split over a thread-block cluster", "[gpu][ops]") {
  // Rows read again that do not fit one block's registers run on a cluster
  // of 2-8 blocks that combine their block results through distributed shared
  // memory (codegen/RowKernel.cpp rowStages): every stage kind (max, a sum
  // after it, mean-centering, per-row outputs), aligned and peeled, odd and
  // prime lengths, 1 row and more rows than SMs. HostRun's guard bytes
  // catch a write outside any output.
  haveGpu();
  std::vector<std::vector<unsigned>> Layouts = {{0}, {1, 0, 3}};
  for (DType T : {DType::F32, DType::BF16}) {
    INFO("dtype " << dtypeName(T).str());
    for (int64_t H : {16411, 50257, 128256}) {
      INFO("row length " << H);
      Graph G;
      Value X = G.input("x", T, {"B", H});
      Value W = G.input("w", T, {H});
      G.output("sm", nn::softmax(X));
      G.output("ln", nn::layerNorm(X, W, W, G.scalar("eps", f32)));
      G.output("rowmax", reduceMax(X * W));
      G.output("rowsum", sum(abs(X)));
      PlanOptions PO;
      PO.Schedule.Clusters = true;
      GraphPlan P = planGraph(G, PO);
      bool Split = false;
      for (const KernelPlan &K : P.Kernels)
        Split |= K.ClusterX > 1;
      CHECK(Split == !(T == DType::BF16 && H == 16411)); // bf16 16411 fits one block
      for (int64_t Rows : {1, 3, 40}) {
        if (H == 128256 && Rows == 40)
          continue; // the fp64 reference with bounds takes long
        Bindings B = randomBindings(G, {{"B", Rows}}, {{"eps", 1e-5}});
        for (const std::vector<unsigned> &L : Layouts) {
          INFO("rows " << Rows << ", offsets " << fmt::format("{}", fmt::join(L, "/")));
          CheckOptions Opts;
          Opts.MisalignEach = L;
          Opts.RowClusters = true;
          checkGraph(G, B, Opts);
        }
      }
    }
  }
}

TEST_CASE("peeled kernels: odd rows, pointer offsets, tensors at different phases",
          "[gpu][ops]") {
  // One vector variant aligns its chunks to a lead tensor at run time (a
  // partial head and tail per row or range); every other access checks its
  // own alignment. Offsets per tensor (inputs then outputs, cycling) put the
  // lead and the rest at different phases; HostRun's guard bytes catch a
  // write outside any output.
  haveGpu();
  std::vector<std::vector<unsigned>> Layouts = {{0}, {1}, {3}, {1, 0, 5}, {0, 7, 2, 3}, {6, 1}};
  auto Check = [&](const Graph &G, const Bindings &B) {
    for (const std::vector<unsigned> &L : Layouts) {
      INFO("offsets " << fmt::format("{}", fmt::join(L, "/")));
      CheckOptions Opts;
      Opts.MisalignEach = L;
      checkGraph(G, B, Opts);
    }
  };
  for (DType T : {DType::F32, DType::BF16, DType::F16}) {
    INFO("dtype " << dtypeName(T).str());
    for (int64_t H : {1, 7, 24, 1001, 4095}) {
      INFO("row length " << H);
      Graph G;
      Value X = G.input("x", T, {"B", H});
      Value Res = G.input("res", T, {"B", H});
      Value W = G.input("w", T, {H});
      Value Eps = G.scalar("eps", f32);
      G.output("rms", nn::rmsNorm(X + Res, W, Eps));        // rows, cached
      G.output("sm", nn::softmax(X));                        // rows, two stages
      G.output("bias", nn::geluBias(X, W));                  // element-wise by rows
      G.output("rowmax", reduceMax(X * W));                  // per-row output
      Check(G, randomBindings(G, {{"B", 37}}, {{"eps", 1e-5}}));
    }
    {
      // Flat element-wise and full reductions, a partial chunk at each end.
      Graph G;
      Value X = G.input("x", T, {"N"});
      Value Y = G.input("y", T, {"N"});
      G.output("silu", nn::siluMul(X, Y));
      G.output("s", sum(abs(X), ReduceScope::All));
      Check(G, randomBindings(G, {{"N", 100003}}, {}));
    }
    {
      // A dynamic row length (vectorized now) and a half-rotation RoPE whose
      // halves are chunk-aligned only when the row is.
      Graph G;
      Value X = G.input("x", T, {"B", "H"});
      G.output("sm", nn::softmax(X));
      Check(G, randomBindings(G, {{"B", 5}, {"H", 2053}}, {}));
      Graph R;
      Value Q = R.input("q", T, {"T", 4, 64});
      Value Cos = R.input("cos", T, {"T", 32});
      Value Sin = R.input("sin", T, {"T", 32});
      R.output("half", nn::rope(Q, Cos, Sin, nn::RopeStyle::HalfRotation));
      Check(R, randomBindings(R, {{"T", 9}}, {}));
    }
  }
}
