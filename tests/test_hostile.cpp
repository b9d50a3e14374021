//===- tests/test_hostile.cpp - hostile arguments, sizes and names --------===//
//
// What a careless or malicious caller can do to jitfuse: wrong argument
// counts, bad pointers, absurd dims, enormous graphs, names that try to
// escape the generated source or the dump directory, and tensors past 2^31
// elements. Each must be a jitfuse::Error naming the problem, or work.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "codegen/Codegen.h"
#include "codegen/LaunchRule.h"
#include "compiler/Fusion.h"
#include "compiler/Schedule.h"
#include "runtime/Driver.h"
#include "runtime/Memory.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>

using namespace jitfuse;
using namespace jitfuse::test;
namespace fs = std::filesystem;

namespace {


/// x: bf16 [B, 33], w: f32 [33], scalar alpha; y = x * w * alpha.
Graph smallGraph() {
  Graph G;
  Value X = G.input("x", bf16, {"B", 33});
  Value W = G.input("w", f32, {33});
  Value A = G.scalar("alpha", f32);
  G.output("y", cast(X * W * A, bf16));
  return G;
}

Executable compileSm90(const Graph &G) {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  return testCompiler().compile(G, Opts);
}

std::string tempDir(const char *Tag) {
  std::string T = fmt::format("/tmp/jitfuse-{}-XXXXXX", Tag);
  REQUIRE(mkdtemp(T.data()) != nullptr);
  return T;
}

} // namespace

TEST_CASE("Executable::run rejects wrong arguments with a named reason", "[hostile]") {
  Graph G = smallGraph();
  Executable X = compileSm90(G);
  rt::Driver &D = rt::Driver::get();
  if (!D.available()) {
    // Without a device every run() fails first on that, saying why.
    std::string Msg = errorOf([&] { X.run({1, 2}, {3}, {1.0}, {4}); });
    CHECK(Msg.find("no CUDA device") != std::string::npos);
    CHECK(Msg.find(D.unavailableReason()) != std::string::npos);
    CHECK(!X.canRun());
    WARN("GPU part skipped: " << D.unavailableReason());
    return;
  }
  REQUIRE(X.canRun());
  const int64_t B = 5;
  rt::DeviceBuffer XBuf(B * 33 * 2 + 64), WBuf(33 * 4), YBuf(B * 33 * 2 + 64);
  CUdeviceptr XP = XBuf.ptr(), WP = WBuf.ptr(), YP = YBuf.ptr();
  auto Msg = [&](auto F) { return errorOf(F); };
  CHECK(Msg([&] { X.run({XP}, {YP}, {1.0}, {B}); }) ==
        "run: got 1 input pointers, the graph has 2 inputs");
  CHECK(Msg([&] { X.run({XP, WP, WP}, {YP}, {1.0}, {B}); }) ==
        "run: got 3 input pointers, the graph has 2 inputs");
  CHECK(Msg([&] { X.run({XP, WP}, {}, {1.0}, {B}); }) ==
        "run: got 0 output pointers, the graph has 1 outputs");
  CHECK(Msg([&] { X.run({XP, WP}, {YP}, {}, {B}); }) ==
        "run: got 0 scalar values, the graph has 1 scalars");
  CHECK(Msg([&] { X.run({XP, WP}, {YP}, {1.0}, {}); }) ==
        "run: got 0 dynamic dim values, the graph has 1 (B)");
  CHECK(Msg([&] { X.run({XP, WP}, {YP}, {1.0}, {B, B}); }).find("got 2 dynamic dim values") !=
        std::string::npos);
  std::string Neg = Msg([&] { X.run({XP, WP}, {YP}, {1.0}, {-1}); });
  CHECK(Neg.find("dynamic dim 'B' = -1 is out of range") != std::string::npos);
  std::string Huge = Msg([&] { X.run({XP, WP}, {YP}, {1.0}, {(int64_t(1) << 48) + 1}); });
  CHECK(Huge.find("out of range") != std::string::npos);
  // B within 2^48 but B * 33 elements beyond it.
  std::string Big = Msg([&] { X.run({XP, WP}, {YP}, {1.0}, {int64_t(1) << 47}); });
  CHECK(Big.find("would hold") != std::string::npos);
  CHECK(Big.find("'x'") != std::string::npos);
  std::string Null = Msg([&] { X.run({0, WP}, {YP}, {1.0}, {B}); });
  CHECK(Null.find("input 'x' is a null pointer but holds 165 elements") != std::string::npos);
  CHECK(Msg([&] { X.run({XP, WP}, {0}, {1.0}, {B}); }).find("output 'y' is a null pointer") !=
        std::string::npos);
  std::string Odd = Msg([&] { X.run({XP + 1, WP}, {YP}, {1.0}, {B}); });
  CHECK(Odd.find("input 'x' pointer") != std::string::npos);
  CHECK(Odd.find("not aligned to its 2-byte bf16 elements") != std::string::npos);
  CHECK(Msg([&] { X.run({XP, WP + 2}, {YP}, {1.0}, {B}); }).find("4-byte f32") !=
        std::string::npos);
  // numel 0: B = 0 needs no pointers for the B-shaped tensors and runs nothing.
  CHECK(Msg([&] {
          X.run({0, WP}, {0}, {1.0}, {0});
          D.check(D.api().cuCtxSynchronize(), "cuCtxSynchronize");
        }) == "");
  // The same executable still works after all that.
  Bindings Bd = randomBindings(G, {{"B", 3}}, {{"alpha", 0.5}});
  CHECK(checkGraph(G, Bd) == 2);
  Bd = randomBindings(G, {{"B", 0}}, {{"alpha", 0.5}});
  CHECK(checkGraph(G, Bd) == 2);
}

TEST_CASE("Interpreter bindings: dtype, shape and dim mismatches name the input",
          "[hostile]") {
  Graph G = smallGraph();
  std::mt19937_64 Rng(1);
  auto Good = [&] {
    Bindings B;
    B.Dims = {{"B", 2}};
    B.Scalars = {{"alpha", 2.0}};
    B.Inputs["x"] = randomTensor(bf16, {2, 33}, Rng);
    B.Inputs["w"] = randomTensor(f32, {33}, Rng);
    return B;
  };
  CHECK(errorOf([&] { interpret(G, Good()); }) == "");
  Bindings B = Good();
  B.Inputs["x"] = randomTensor(f16, {2, 33}, Rng);
  std::string M = errorOf([&] { interpret(G, B); });
  CHECK(M.find("input 'x' is given as f16; expected bf16") != std::string::npos);
  B = Good();
  B.Inputs["w"] = randomTensor(f32, {34}, Rng);
  M = errorOf([&] { interpret(G, B); });
  CHECK(M.find("input 'w' has shape") != std::string::npos);
  B = Good();
  B.Inputs["x"].Data.pop_back();
  CHECK(errorOf([&] { interpret(G, B); }).find("input 'x'") != std::string::npos);
  B = Good();
  B.Dims["B"] = -3;
  CHECK(errorOf([&] { interpret(G, B); }).find("expected a size >= 0") != std::string::npos);
  B = Good();
  B.Inputs.erase("w");
  CHECK(errorOf([&] { interpret(G, B); }).find("input 'w'") != std::string::npos);
  B = Good();
  B.Scalars.clear();
  CHECK(errorOf([&] { interpret(G, B); }).find("scalar 'alpha'") != std::string::npos);
  B = Good();
  B.Inputs["typo"] = B.Inputs["w"];
  CHECK(errorOf([&] { interpret(G, B); }).find("'typo'") != std::string::npos);
}

TEST_CASE("A 10,000-node graph builds, partitions, schedules and emits", "[hostile]") {
  auto Start = std::chrono::steady_clock::now();
  Graph G;
  Value X = G.input("x", f32, {"B", 64});
  Value W = G.input("w", f32, {64});
  Value V = X;
  // Alternate ops so hash-consing cannot collapse the chain.
  while (G.size() < 10000) {
    V = tanh(V * W + X);
    if (G.size() % 997 < 4)
      G.output(fmt::format("y{}", G.size()), V);
  }
  G.output("y", V);
  REQUIRE(G.size() >= 10000);
  G.verify();
  for (bool Fuse : {true, false}) {
    Partition P = Fuse ? fuseGraph(G) : partitionUnfused(G);
    verifyPartition(G, P);
    std::vector<KernelPlan> Plans;
    for (unsigned I = 0; I < P.Clusters.size(); ++I)
      Plans.push_back(scheduleCluster(G, P.Clusters[I], I));
    std::string Src = codegen::emitProgram(G, Plans);
    CHECK(Src.size() > 10000);
  }
  double Secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  std::fprintf(stderr, "hostile: 10,000-node graph through partition+codegen in %.2f s\n", Secs);
  CHECK(Secs < 60);
}

// Found by fuzz_graph_builder: a row of 2^38 elements made the row
// scheduler's power-of-two floor wrap to 0 and loop forever.
TEST_CASE("Rows of 2^38 and more elements schedule with a bounded thread count",
          "[hostile]") {
  for (int64_t H : {int64_t(1) << 38, (int64_t(1) << 40) + 3, (int64_t(1) << 47) + 1}) {
    INFO("row length " << H);
    Graph G;
    Value X = G.input("x", f32, {"B", H});
    Value S = sum(X * X, {1});
    G.output("y", X * rsqrt(S));
    for (bool Fuse : {true, false}) {
      Partition P = Fuse ? fuseGraph(G) : partitionUnfused(G);
      for (unsigned I = 0; I < P.Clusters.size(); ++I) {
        KernelPlan K = scheduleCluster(G, P.Clusters[I], I);
        CHECK(K.ThreadsX >= 1);
        CHECK(K.ThreadsX <= codegen::launch::MaxRowThreads);
      }
    }
  }
}

// Found by fuzz_graph_builder: an empty row domain ([0, 5, 7]) holds as
// many elements as its row reduction ([0, 1, 7]), so codegen stored the
// reduced value as an element of the row (an internal error). Empty
// outputs are stored nowhere.
TEST_CASE("Empty tensors: a middle-axis sum beside a view of its input compiles",
          "[hostile]") {
  CHECK(emptyShape(Shape{3, 0, 7}));
  CHECK(emptyShape(Shape{"B", 0}));
  CHECK(!emptyShape(Shape{"B", 1}));
  CHECK(!emptyShape(Shape{}));
  for (Shape S : {Shape{0, 5, 7}, Shape{0, 0, 0}, Shape{3, 5, 0}, Shape{3, 0, 7}}) {
    INFO("x " << S[0].Size << " x " << S[1].Size << " x " << S[2].Size);
    Graph G;
    Value X = G.input("x0", f16, S);
    G.output("y0", sum(-X, {1}));
    G.output("y1", broadcastTo(X, S));
    for (bool Fuse : {true, false}) {
      Partition P = Fuse ? fuseGraph(G) : partitionUnfused(G);
      std::vector<KernelPlan> Plans;
      for (unsigned I = 0; I < P.Clusters.size(); ++I)
        Plans.push_back(scheduleCluster(G, P.Clusters[I], I));
      CHECK_FALSE(codegen::emitProgram(G, Plans).empty());
    }
    checkGraph(G, randomBindings(G, {}, {}));
  }
}

// Found by fuzz_graph_builder: a slice of one element reshaped to a scalar
// made a flat kernel of one element that held a slice (an internal error).
TEST_CASE("A one-element slice reshaped to a scalar reads its element", "[hostile]") {
  Graph G;
  Value X = G.input("x", f32, {40});
  Value S = reshape(slice(X, 24, 25), {});
  G.output("y", S);
  G.output("z", S * 2.0);
  Executable E = testCompiler().compile(G, CompileOptions{});
  CHECK_THAT(E.source(), Catch::Matchers::Contains("in_0[((0 + 24))]"));
  checkGraph(G, randomBindings(G, {}, {}));
}

TEST_CASE("A 600-node chain compiles with NVRTC", "[hostile]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 64});
  Value V = X;
  for (int I = 0; I < 200; ++I)
    V = tanh(V * 0.75 + X);
  G.output("y", V);
  Executable Ex = compileSm90(G);
  CHECK(Ex.numKernels() >= 1);
  if (haveGpu()) {
    Bindings B = randomBindings(G, {{"B", 7}}, {});
    CHECK(checkGraph(G, B) >= 1);
  }
}

TEST_CASE("Odd names compile, run and dump to safe file names", "[hostile]") {
  const std::string Long(1000, 'n');
  const std::vector<std::string> Names = {
      "q\"uote", "back\\slash\\", "new\nline\r", "\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
      "*/ int main() { /*", "?" "?=trigraph?" "?/", Long, "../../etc/passwd", "%s%n{}"};
  Graph G;
  Value Acc;
  std::vector<Value> Ins;
  for (size_t I = 0; I < Names.size(); ++I) {
    Value In = G.input(Names[I] + "_in", I % 2 ? f16 : f32, {"B", 7});
    Acc = I ? Acc + In : In;
  }
  Value S = G.scalar(Names[0] + "_scalar*/", f32);
  for (size_t I = 0; I < Names.size(); ++I)
    G.output(Names[I] + "_out", Acc * S + static_cast<double>(I));

  std::string Dir = tempDir("dump");
  ::setenv("JITFUSE_DUMP", "graph,plan,cuda", 1);
  ::setenv("JITFUSE_DUMP_DIR", Dir.c_str(), 1);
  std::string Err = errorOf([&] {
    for (bool Fuse : {true, false}) {
      CompileOptions Opts;
      Opts.Fuse = Fuse;
      Opts.Arch = "sm_90";
      Executable Ex = testCompiler().compile(G, Opts);
      CHECK(!Ex.source().empty());
    }
  });
  ::unsetenv("JITFUSE_DUMP");
  ::unsetenv("JITFUSE_DUMP_DIR");
  CHECK(Err == "");
  std::regex Safe(R"(jitfuse_[0-9a-f]{16}\.(graph\.txt|plan\.txt|cu))");
  int Files = 0;
  for (const fs::directory_entry &E : fs::recursive_directory_iterator(Dir)) {
    std::string Name = E.path().filename().string();
    INFO(E.path());
    CHECK(E.path().parent_path() == fs::path(Dir));
    CHECK(std::regex_match(Name, Safe));
    CHECK(fs::file_size(E.path()) > 0);
    ++Files;
  }
  CHECK(Files == 6); // graph, plan, cu for fused and unfused
  fs::remove_all(Dir);

  if (haveGpu()) {
    std::map<std::string, double> Sc = {{Names[0] + "_scalar*/", 1.5}};
    Bindings B = randomBindings(G, {{"B", 5}}, Sc);
    CHECK(checkGraph(G, B) == 2 * static_cast<int>(Names.size()));
  }
}

TEST_CASE("Tensors that can exceed 2^31 elements get 64-bit indexing", "[hostile]") {
  auto PlanOf = [](const Graph &G) {
    Partition P = fuseGraph(G);
    REQUIRE(P.Clusters.size() == 1);
    KernelPlan K = scheduleCluster(G, P.Clusters[0], 0);
    return std::make_pair(K, codegen::emitKernel(G, K).source());
  };
  {
    Graph G;
    Value X = G.input("x", bf16, {"B", 17});
    G.output("y", X * 2.0 + 1.0);
    auto [K, Src] = PlanOf(G);
    CHECK(K.Index64);
    CHECK(Src.find("long long") != std::string::npos);
  }
  {
    Graph G;
    Value X = G.input("x", f32, {(int64_t(1) << 31) + 5});
    G.output("y", X * 2.0 + 1.0);
    auto [K, Src] = PlanOf(G);
    CHECK(K.Index64);
    CHECK(Src.find("long long") != std::string::npos);
  }
  {
    // Control: small static tensors keep 32-bit indices.
    Graph G;
    Value X = G.input("x", f32, {1000, 17});
    G.output("y", X * 2.0 + 1.0);
    CHECK(!PlanOf(G).first.Index64);
  }
}

TEST_CASE("GPU: y = x * 2 + 1 over 2^31 + 16 bf16 elements", "[hostile][gpu]") {
  if (!haveGpu())
    return;
  const int64_t N = (int64_t(1) << 31) + 16;
  const size_t Bytes = static_cast<size_t>(N) * 2;
  rt::Driver &D = rt::Driver::get();
  rt::DeviceBuffer Probe(16); // makes the context current for cuMemGetInfo
  size_t Free = 0, Total = 0;
  D.check(D.api().cuMemGetInfo(&Free, &Total), "cuMemGetInfo");
  if (Free < 2 * Bytes + (size_t(1) << 30)) {
    WARN("skipped: needs " << 2 * Bytes << " bytes of device memory, " << Free << " free");
    return;
  }
  Graph G;
  Value X = G.input("x", bf16, {"N"});
  G.output("y", X * 2.0 + 1.0);
  Executable Ex = testCompiler().compile(G);
  // Values k - 3 for k in 0..6: x and 2x + 1 are exact in bf16.
  auto Bf16Bits = [](float F) {
    uint32_t U;
    std::memcpy(&U, &F, 4);
    return static_cast<uint16_t>(U >> 16);
  };
  uint16_t In[7], Want[7];
  for (int K = 0; K < 7; ++K) {
    In[K] = Bf16Bits(static_cast<float>(K - 3));
    Want[K] = Bf16Bits(static_cast<float>(2 * (K - 3) + 1));
  }
  std::vector<uint16_t> Host(static_cast<size_t>(N));
  for (int64_t I = 0; I < N; ++I)
    Host[I] = In[I % 7];
  rt::DeviceBuffer XB(Bytes), YB(Bytes);
  rt::copyToDevice(XB.ptr(), Host.data(), Bytes);
  rt::memsetD8(YB.ptr(), 0xFF, Bytes);
  Ex.run({XB.ptr()}, {YB.ptr()}, {}, {N});
  D.check(D.api().cuCtxSynchronize(), "cuCtxSynchronize");
  rt::copyToHost(Host.data(), YB.ptr(), Bytes);
  int64_t Bad = 0, FirstBad = -1;
  for (int64_t I = 0; I < N; ++I)
    if (Host[I] != Want[I % 7] && Bad++ == 0)
      FirstBad = I;
  INFO("first bad element " << FirstBad);
  CHECK(Bad == 0);
}
