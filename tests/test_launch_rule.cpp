//===- tests/test_launch_rule.cpp - launch geometry pinned per kernel kind -===//
//
// Codegen owns the launch rule (codegen/LaunchRule.h); execution only asks
// it. These cases pin the geometry of each kind for hand-computed sizes, so
// a schedule or skeleton change that moves a grid shows up here first.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "compiler/Fusion.h"
#include "compiler/Schedule.h"
#include "ir/NN.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::codegen;

namespace {

/// The single kernel \p G fuses into, emitted.
EmittedKernel onlyKernel(const Graph &G, const ScheduleOptions &Opts = {}) {
  Partition P = fuseGraph(G);
  REQUIRE(P.Clusters.size() == 1);
  return emitKernel(G, scheduleCluster(G, P.Clusters[0], 0, Opts));
}

void checkShape(const std::optional<LaunchShape> &S, unsigned Grid, unsigned BlockX,
                unsigned BlockY) {
  REQUIRE(S.has_value());
  CHECK(S->GridX == Grid);
  CHECK(S->BlockX == BlockX);
  CHECK(S->BlockY == BlockY);
}

} // namespace

TEST_CASE("Launch rule: RoPE's halves go piece by piece over groups of heads", "[launch]") {
  // bf16, head dim 128: a half is 8 chunks of 8, so a warp takes the first
  // (or second) halves of 4 heads; the grid covers whole groups of 4 rows.
  Graph G;
  Value Q = G.input("q", bf16, {"T", 3, 128});
  Value Cos = G.input("cos", bf16, {"T", 64});
  Value Sin = G.input("sin", bf16, {"T", 64});
  G.output("q_rot", nn::rope(Q, Cos, Sin, nn::RopeStyle::HalfRotation));
  EmittedKernel K = onlyKernel(G);
  REQUIRE(K.Launch.kind() == KernelKind::Elementwise);
  CHECK(concatRowGroup(64, 8) == 4);
  CHECK(concatRowGroup(64, 4) == 2);  // f32: 16 chunks a half
  CHECK(concatRowGroup(32, 8) == 8);  // bf16, head dim 64
  CHECK(concatRowGroup(256, 8) == 1); // a half of 32 chunks fills a warp
  CHECK(concatRowGroup(48, 8) == 1);  // 6 chunks: warps would straddle
  CHECK(concatRowGroup(0, 8) == 1);   // no concat
  // Two halves make groups of 64 chunks, which divide a block of 256, so
  // the grid is that of the rows alone: 66 rows x 16 chunks, 5 blocks.
  checkShape(K.Launch.shape({22 * 3 * 128, 66, 128}, 8, 132), 5, 256, 1);
  // The kernel reads its chunk's row and column from the group.
  CHECK(K.source().find("const long long row = jf_g * 4 + jf_q / 8;") != std::string::npos);

  // ScheduleOptions::ConcatRowGroups = false (CompileOptions::
  // ConcatRowGroups): natural order, the grid of the rows alone.
  ScheduleOptions Natural;
  Natural.ConcatRowGroups = false;
  Partition Part = fuseGraph(G);
  KernelPlan Plan = scheduleCluster(G, Part.Clusters[0], 0, Natural);
  CHECK(Plan.ConcatPiece == 0);
  CHECK(Plan.Why.find("a warp takes") == std::string::npos);
  EmittedKernel N = emitKernel(G, Plan);
  CHECK(N.source().find("jf_g") == std::string::npos);
  CHECK(N.source().find("const long long row = chunk / cpr;") != std::string::npos);
}

TEST_CASE("Launch rule: a concat of three pieces rounds the rows up to whole groups",
          "[launch]") {
  // Pieces of 16 bf16 = 2 chunks: a warp takes one piece of 16 rows, a
  // group is 16 rows x 6 chunks = 96 chunks. 42 rows alone are 252 chunks,
  // 1 block; rounded up to 48 rows, 288 chunks, 2 blocks.
  Graph G;
  Value A = G.input("a", bf16, {"B", 16});
  G.output("y", concat({A * 2.0, A + 1.0, A - 1.0}));
  EmittedKernel K = onlyKernel(G);
  REQUIRE(K.Launch.kind() == KernelKind::Elementwise);
  checkShape(K.Launch.shape({42 * 48, 42, 48}, 8, 132), 2, 256, 1);
  checkShape(K.Launch.shape({48 * 48, 48, 48}, 8, 132), 2, 256, 1);
  // 85 rows: 510 chunks would be 2 blocks; 96 rows, 576 chunks, 3.
  checkShape(K.Launch.shape({85 * 48, 85, 48}, 8, 132), 3, 256, 1);
}

TEST_CASE("Launch rule: element-wise kernels, flat and by rows", "[launch]") {
  Graph G;
  Value X = G.input("x", f32, {"N"});
  G.output("y", exp(X) + X);
  EmittedKernel K = onlyKernel(G);
  REQUIRE(K.Launch.kind() == KernelKind::Elementwise);
  REQUIRE(K.Variants.front().Vec == 4);
  // Two variants: aligned float4, then the peeled float4 (any offset).
  REQUIRE(K.Variants.size() == 2);
  CHECK(K.Variants[1].Vec == 4);
  CHECK(K.Variants[1].Name == "jf_k0_add_p4");
  CHECK(K.Launch.peeled(1));
  CHECK_FALSE(K.Launch.peeled(0));
  // 1000 f32 as float4: 250 chunks, one per thread of a 256-thread block.
  checkShape(K.Launch.shape({1000, 1, 1000}, 4, 132), 1, 256, 1);
  // 1025 elements: 257 chunks (the last one partial) need a second block.
  checkShape(K.Launch.shape({1025, 1, 1025}, 4, 132), 2, 256, 1);
  // Peeled, a range starts at its pointer's phase (up to 3 elements before
  // it): 1021 elements fit 256 chunks, 1022 need 257, a second block.
  checkShape(K.Launch.shape({1021, 1, 1021}, 4, 132, true), 1, 256, 1);
  checkShape(K.Launch.shape({1022, 1, 1022}, 4, 132, true), 2, 256, 1);
  // The scalar variant: one element per thread while the tiled grid would
  // have fewer than 4 blocks per SM (1025 elements: 5 blocks of 256)...
  checkShape(K.Launch.shape({1025, 1, 1025}, 1, 132), 5, 256, 1);
  // ... 8 per thread (2048 a block) from 4 * 132 tiled blocks on: 2^20
  // elements are 512 blocks (below 528: one per thread, 4096 blocks),
  // 2^21 are 1024 tiled blocks.
  checkShape(K.Launch.shape({1 << 20, 1, 1 << 20}, 1, 132), 4096, 256, 1);
  checkShape(K.Launch.shape({1 << 21, 1, 1 << 21}, 1, 132), 1024, 256, 1);
  // Without a device (SmCount 0) nothing is tiled.
  checkShape(K.Launch.shape({1 << 21, 1, 1 << 21}, 1, 0), 8192, 256, 1);
  CHECK_FALSE(K.Launch.shape({0, 1, 0}, 4, 132).has_value());

  // A bias broadcast is not flat: whole rows of RowLen / Vec chunks; peeled,
  // each row starts at its own phase, so a row of 24 bf16 spans up to
  // (24 + 7) / 8 -> 4 chunks of 8.
  Graph H;
  Value A = H.input("a", bf16, {"B", 24});
  Value Bias = H.input("bias", bf16, {24});
  H.output("y", A + Bias);
  EmittedKernel R = onlyKernel(H);
  REQUIRE(R.Variants.front().Vec == 8);
  // 150 rows x 3 chunks = 450 chunks -> 2 blocks of 256; peeled 600 -> 3.
  checkShape(R.Launch.shape({3600, 150, 24}, 8, 132), 2, 256, 1);
  checkShape(R.Launch.shape({3600, 150, 24}, 8, 132, true), 3, 256, 1);
  // Odd rows keep the full width: by rows (FlatRowBroadcast off), 1001 bf16
  // a row, 126 chunks, the peeled variant only.
  Graph O;
  Value A2 = O.input("a", bf16, {"B", 1001});
  Value Bias2 = O.input("bias", bf16, {1001});
  O.output("y", A2 + Bias2);
  ScheduleOptions ByRows;
  ByRows.FlatRowBroadcast = false;
  EmittedKernel RO = onlyKernel(O, ByRows);
  REQUIRE(RO.Variants.size() == 1);
  CHECK(RO.Variants.front().Vec == 8);
  CHECK(RO.Launch.peeled(0));
  checkShape(RO.Launch.shape({1001 * 65, 65, 1001}, 8, 132, true), 32, 256, 1);
  // By default the same rows run flat, both variants: 65065 elements are
  // 8133 whole chunks and 1 tail thread aligned (FlatTailThreads, 32
  // blocks), 8134 chunks peeled (a range starts up to 7 elements early).
  EmittedKernel FO = onlyKernel(O);
  REQUIRE(FO.Variants.size() == 2);
  CHECK_FALSE(FO.Launch.peeled(0));
  checkShape(FO.Launch.shape({1001 * 65, 65, 1001}, 8, 132), 32, 256, 1);
  checkShape(FO.Launch.shape({1001 * 65, 65, 1001}, 8, 132, true), 32, 256, 1);
}

TEST_CASE("Launch rule: row reductions, short and long rows", "[launch]") {
  {
    // bf16 rows of 4096: 512 chunks of 8 -> 256 threads per row, one row a block.
    Graph G;
    Value X = G.input("x", bf16, {"B", 4096});
    Value W = G.input("w", bf16, {4096});
    G.output("y", nn::rmsNorm(X, W, G.scalar("eps", f32)));
    EmittedKernel K = onlyKernel(G);
    REQUIRE(K.Launch.kind() == KernelKind::RowReduce);
    checkShape(K.Launch.shape({7 * 4096, 7, 4096}, 8, 132), 7, 256, 1);
    CHECK_FALSE(K.Launch.shape({0, 0, 4096}, 8, 132).has_value());
  }
  {
    // f32 rows of 20: 5 chunks -> 8 threads a row, 128 / 8 = 16 rows a block.
    Graph G;
    Value X = G.input("x", f32, {"B", 20});
    G.output("y", nn::softmax(X));
    EmittedKernel K = onlyKernel(G);
    REQUIRE(K.Launch.kind() == KernelKind::RowReduce);
    checkShape(K.Launch.shape({33 * 20, 33, 20}, 4, 132), 3, 8, 16);
  }
}

TEST_CASE("Launch rule: a row of run-time length takes the threads its run picks",
          "[launch][dynamic-rows]") {
  // bf16 softmax over rows of run-time length H, RowThreadsAtLaunch:
  // compiled for 512 threads, the launch picks a block a row of (chunks
  // counted with the peeled variant's extra chunk, 7 elements):
  Graph G;
  G.output("p", nn::softmax(G.input("x", bf16, {"B", "H"})));
  Partition Part = fuseGraph(G);
  REQUIRE(Part.Clusters.size() == 1);
  auto Text = [](const EmittedKernel &E) {
    std::string T;
    for (const EmittedKernel::Variant &V : E.Variants)
      T += V.Text;
    return T;
  };
  ScheduleOptions AtLaunch;
  AtLaunch.RowThreadsAtLaunch = true;
  KernelPlan Plan = scheduleCluster(G, Part.Clusters[0], 0, AtLaunch);
  REQUIRE(Plan.ThreadsAtLaunch);
  CHECK(Plan.ThreadsX == 512);
  EmittedKernel K = onlyKernel(G, AtLaunch);
  REQUIRE(K.Launch.kind() == KernelKind::RowReduce);
  CHECK_THAT(Text(K), Catch::Matchers::Contains("jf_block_reduce_n<512>"));
  CHECK_THAT(Text(K), Catch::Matchers::Contains("__launch_bounds__(512)"));
  CHECK_THAT(Text(K), Catch::Matchers::Contains("j * jf_nt + tx"));
  CHECK_THAT(Text(K), Catch::Matchers::Contains("#pragma unroll 4"));
  auto Shape = [&](int64_t Rows, int64_t H, bool Peeled) {
    return K.Launch.shape({Rows * H, Rows, H}, 8, 132, Peeled);
  };
  // More rows than SMs: a power of two near a quarter of the chunks, 64-512.
  // H 768: (768 + 7 + 7) / 8 = 97 chunks, 97 / 4 = 24 -> 64.
  checkShape(Shape(16384, 768, true), 16384, 64, 1);
  // H 4096: 513 chunks, 128 -> 128 (the aligned variant's 512 chunks: 128).
  checkShape(Shape(16384, 4096, true), 16384, 128, 1);
  checkShape(Shape(16384, 4096, false), 16384, 128, 1);
  // H 8192: 1025 chunks, 256 -> 256; H 16384: 2049, 512 -> 512.
  checkShape(Shape(1000, 8192, true), 1000, 256, 1);
  checkShape(Shape(1000, 16384, true), 1000, 512, 1);
  // H 128256: 16033 chunks -> 512, the most.
  checkShape(Shape(133, 128256, true), 133, 512, 1);
  // Rows at most the SMs: 512 from 384 chunks on, 256 below.
  checkShape(Shape(132, 128256, true), 132, 512, 1);
  checkShape(Shape(1, 3058, true), 1, 512, 1); // (3058 + 14) / 8 = 384 chunks
  checkShape(Shape(1, 3057, true), 1, 256, 1); // 383 chunks
  checkShape(Shape(8, 7, true), 8, 256, 1);
  // Without an SM count (0), the many-rows rule.
  checkShape(K.Launch.shape({8 * 3058, 8, 3058}, 8, 0, true), 8, 64, 1);

  // Off, or a fixed count (RowDynamicThreads): the kernel's own threads.
  ScheduleOptions Fixed;
  Fixed.RowThreadsAtLaunch = false;
  CHECK_FALSE(scheduleCluster(G, Part.Clusters[0], 0, Fixed).ThreadsAtLaunch);
  EmittedKernel F = onlyKernel(G, Fixed);
  checkShape(F.Launch.shape({16384 * 768, 16384, 768}, 8, 132, true), 16384, 256, 1);
  CHECK_THAT(Text(F), Catch::Matchers::Contains("jf_block_reduce<256>"));
  CHECK_THAT(Text(F), !Catch::Matchers::Contains("jf_nt"));
  CHECK_THAT(Text(F), !Catch::Matchers::Contains("#pragma unroll 4"));
  ScheduleOptions Exp = AtLaunch;
  Exp.RowDynamicThreads = 1024;
  CHECK_FALSE(scheduleCluster(G, Part.Clusters[0], 0, Exp).ThreadsAtLaunch);
  EmittedKernel E = onlyKernel(G, Exp);
  checkShape(E.Launch.shape({1 * 768, 1, 768}, 8, 132, true), 1, 1024, 1);
}

TEST_CASE("Launch rule: full reductions launch a fixed grid per device", "[launch]") {
  Graph G;
  Value X = G.input("x", f32, {"N"});
  G.output("s", sum(abs(X), ReduceScope::All));
  EmittedKernel K = onlyKernel(G);
  REQUIRE(K.Launch.kind() == KernelKind::FullReduce);
  // Capped at 8 blocks per SM: 132 SMs -> 1056 blocks, whatever N.
  CHECK(K.Launch.maxBlocks(132) == 1056);
  checkShape(K.Launch.shape({int64_t(1) << 30, 1, int64_t(1) << 30}, 4, 132), 1056, 256, 1);
  // Small inputs: one block per 256 chunks; peeled, 4096 f32 are 1024
  // chunks and one more for a range that starts off alignment -> 5 blocks.
  checkShape(K.Launch.shape({4096, 1, 4096}, 4, 132), 4, 256, 1);
  checkShape(K.Launch.shape({4092, 1, 4092}, 4, 132, true), 4, 256, 1);
  checkShape(K.Launch.shape({4096, 1, 4096}, 4, 132, true), 5, 256, 1);
  // An empty reduction still launches (it writes the identity).
  checkShape(K.Launch.shape({0, 1, 0}, 4, 132), 1, 256, 1);
  // No device (SmCount 0): one block.
  CHECK(K.Launch.maxBlocks(0) == 1);
}

TEST_CASE("Launch rule: a grid past CUDA's limit is a clear error", "[launch]") {
  Graph G;
  Value X = G.input("x", f32, {"N"});
  G.output("y", exp(X));
  EmittedKernel K = onlyKernel(G);
  int64_t Huge = int64_t(1) << 45;
  CHECK_THROWS_WITH(K.Launch.shape({Huge, 1, Huge}, 1, 132),
                    Catch::Contains("exceed the CUDA grid limit"));
}

TEST_CASE("Emitted kernels list one parameter per argument slot", "[launch]") {
  Graph G;
  Value X = G.input("x", f32, {"N"});
  Value A = G.scalar("alpha", f32);
  G.output("s", sum(X * A, ReduceScope::All));
  EmittedKernel K = onlyKernel(G);
  // in_0, out_0, s_0, d_0 (N), then the partials and the counter.
  REQUIRE(K.Params.size() == 6);
  CHECK(K.Params[0].K == KernelParam::Input);
  CHECK(K.Params[1].K == KernelParam::Output);
  CHECK(K.Params[2].K == KernelParam::Scalar);
  CHECK(K.Params[3].K == KernelParam::DynDim);
  CHECK(K.Params[4].K == KernelParam::Partials);
  CHECK(K.Params[5].K == KernelParam::Counter);
  // The variants' names are the __global__ functions the text defines.
  for (const EmittedKernel::Variant &V : K.Variants)
    CHECK(K.source().find(" " + V.Name + "(") != std::string::npos);
}
