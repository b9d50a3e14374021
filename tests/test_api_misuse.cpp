//===- tests/test_api_misuse.cpp - API misuse and numeric edge cases -------===//
//
// What a careless caller of the C++ API can do: move a graph under its
// values, hand a generic builder an op of the wrong kind, build shapes whose
// sizes overflow, use integer constants out of range, put DOT syntax in
// names. Each must be a jitfuse::Error naming the problem, or work.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"

#include "compiler/Fusion.h"
#include "compiler/Plan.h"
#include "exec/Roofline.h"
#include "reference/HostTensor.h"
#include "ir/Printer.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <sstream>

using namespace jitfuse;
using namespace jitfuse::test;
using Catch::Matchers::Contains;

namespace {


Executable compileSm90(const Graph &G) {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  return testCompiler().compile(G, Opts);
}

constexpr int64_t P32 = int64_t(1) << 32;

} // namespace

//===----------------------------------------------------------------------===//
// Graphs that move (issue 11, item 10)
//===----------------------------------------------------------------------===//

TEST_CASE("values keep working when their graph moves", "[misuse]") {
  // Growing the vector moves Gs[0]; its values used to keep the old address
  // (a heap-use-after-free, then "does not belong to this graph").
  std::vector<Graph> Gs;
  Gs.emplace_back();
  Value X = Gs[0].input("x", f32, {4});
  Value E = exp(X);
  for (int I = 0; I < 32; ++I)
    Gs.emplace_back();
  CHECK(&X.graph() == &Gs[0]);
  CHECK(E.node().Kind == Op::Exp);
  Value Z = E + X;
  CHECK(errorOf([&] { Gs[0].output("z", Z); }) == "");
  CHECK(Gs[0].size() == 3);

  // Moved once more, into a local: the values follow again.
  Graph H = std::move(Gs[0]);
  CHECK(&Z.graph() == &H);
  CHECK(Gs[0].size() == 0);
  CHECK(H.outputs().size() == 1);
  // The moved-from graph is empty and usable, with values of its own.
  Value A = Gs[0].input("a", f32, {2});
  CHECK(&A.graph() == &Gs[0]);
  CHECK_THAT(errorOf([&] { A + X; }), Contains("operands come from different graphs"));

  Bindings B;
  B.Inputs["x"] = HostTensor{f32, {4}, {0.0, 1.0, -2.0, 0.5}};
  std::map<std::string, HostTensor> Out = interpret(H, B);
  const std::vector<double> &Zv = Out.at("z").Data;
  REQUIRE(Zv.size() == 4);
  // exp(x) + x, each rounded to f32 at the output.
  for (size_t I = 0; I < 4; ++I) {
    double Xv = B.Inputs["x"].Data[I];
    CHECK(Zv[I] == static_cast<double>(static_cast<float>(std::exp(Xv) + Xv)));
  }
}

//===----------------------------------------------------------------------===//
// Generic builders and dims (item 11)
//===----------------------------------------------------------------------===//

TEST_CASE("generic builders reject an op of the wrong kind with an Error", "[misuse]") {
  Graph G;
  Value X = G.input("x", f32, {4});
  CHECK(errorOf([&] { unary(Op::Add, X); }) ==
        "unary: op 'add' is a binary op; expected a unary op");
  CHECK(errorOf([&] { binary(Op::Exp, X, X); }) ==
        "binary: op 'exp' is a unary op; expected a binary op");
  CHECK(errorOf([&] { reduce(Op::Add, X, ReduceScope::LastAxis); }) ==
        "reduce: op 'add' is a binary op; expected a reduction op");
  CHECK(errorOf([&] { reduce(Op::Exp, X, ReduceScope::All); }) ==
        "reduce: op 'exp' is a unary op; expected a reduction op");
  CHECK(errorOf([&] { unary(Op::Input, X); }) ==
        "unary: op 'input' is a leaf op; expected a unary op");
  CHECK(errorOf([&] { binary(Op::ReduceSum, X, X); }) ==
        "binary: op 'sum' is a reduction op; expected a binary op");
  CHECK_THAT(errorOf([&] { unary(Op::Cast, X); }), Contains("use cast(x, dtype)"));
  // The right kinds still build.
  CHECK(unary(Op::Exp, X).node().Kind == Op::Exp);
  CHECK(binary(Op::Add, X, X).node().Kind == Op::Add);
  CHECK(reduce(Op::ReduceMax, X, ReduceScope::All).rank() == 0);
}

TEST_CASE("kernelBytes and kernelRoofline name the dynamic dims they expect", "[misuse]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 16});
  Value Y = G.input("y", f32, {"T"});
  G.output("z", exp(X));
  G.output("w", neg(Y));
  Executable Exe = compileSm90(G);
  CHECK(errorOf([&] { Exe.kernelBytes({}); }) ==
        "kernelBytes: got 0 dynamic dim values, the graph has 2 (B, T)");
  CHECK(errorOf([&] { kernelRoofline(Exe, {}); }) ==
        "kernelBytes: got 0 dynamic dim values, the graph has 2 (B, T)");
  CHECK(errorOf([&] { Exe.kernelBytes({1, 2, 3}); }) ==
        "kernelBytes: got 3 dynamic dim values, the graph has 2 (B, T)");
  CHECK(errorOf([&] { Exe.kernelBytes({-1, 2}); }) ==
        "kernelBytes: dynamic dim 'B' = -1 is negative; expected >= 0");
  // Read and write 4 bytes per element: B*16 and T elements.
  std::vector<int64_t> Bytes = Exe.kernelBytes({3, 5});
  std::sort(Bytes.begin(), Bytes.end());
  CHECK(Bytes == std::vector<int64_t>{5 * 8, 3 * 16 * 8});
}

//===----------------------------------------------------------------------===//
// Sizes that overflow (item 12)
//===----------------------------------------------------------------------===//

TEST_CASE("shapes beyond 2^48 elements are an Error naming the shape", "[misuse]") {
  Graph G;
  // 2^64 elements used to wrap to 0 ("bytes 0" in the plan).
  CHECK(errorOf([&] { G.input("x", f32, {P32, P32}); }) ==
        "input 'x': shape [4294967296,4294967296] holds more than 2^48 elements");
  CHECK(errorOf([&] { G.input("x", f32, {int64_t(1) << 62, 4}); }) ==
        "input 'x': shape [4611686018427387904,4] holds more than 2^48 elements");
  // An empty shape's other dims count too, in either order (found by
  // fuzz_graph_builder: [0, 34, B, 2^49] passed, and the lowering of its
  // reduction over axes 1 and 3 took the run [2^49] as more than 2^48, an
  // internal error).
  CHECK(errorOf([&] { G.input("x", f32, {0, int64_t(1) << 49}); }) ==
        "input 'x': shape [0,562949953421312] holds more than 2^48 elements");
  CHECK(errorOf([&] { G.input("x", f32, {int64_t(1) << 49, 0}); }) ==
        "input 'x': shape [562949953421312,0] holds more than 2^48 elements");
  CHECK(errorOf([&] { G.input("x", f64, {0, 34, "B", int64_t(1) << 49}); }) ==
        "input 'x': shape [0,34,B,562949953421312] holds more than 2^48 elements");
  CHECK(errorOf([&] { G.input("x", f32, {0, int64_t(1) << 24, int64_t(1) << 24}); }).empty());
  // Four [2^47] sum to 2^49 (four [2^62] used to wrap to f32[0]).
  std::vector<Value> Parts;
  for (int I = 0; I < 4; ++I)
    Parts.push_back(G.input(fmt::format("p{}", I), f32, {int64_t(1) << 47}));
  CHECK_THAT(errorOf([&] { concat(Parts); }),
             Contains("concat: the last axes of the operands sum to more than 2^48"));
  // Two inputs within the limit broadcast to a shape beyond it.
  Value Col = G.input("col", f32, {int64_t(1) << 30, 1});
  Value Row = G.input("row", f32, {1, int64_t(1) << 30});
  CHECK(errorOf([&] { Col + Row; }) ==
        "add: result shape [1073741824,1073741824] holds more than 2^48 elements");
  Value Seed = G.scalar("seed", i64);
  CHECK(errorOf([&] { broadcastTo(Col, {int64_t(1) << 30, int64_t(1) << 30}); }) ==
        "broadcast: target shape [1073741824,1073741824] holds more than 2^48 elements");
  CHECK(errorOf([&] { reshape(Col, {P32, P32, 0}); }) ==
        "reshape: target shape [4294967296,4294967296,0] holds more than 2^48 elements");
  CHECK(errorOf([&] { randUniform(Seed, {P32, P32}); }) ==
        "rand_uniform: target shape [4294967296,4294967296] holds more than 2^48 elements");
}

TEST_CASE("a shape of exactly 2^48 elements compiles with exact byte counts", "[misuse]") {
  Graph G;
  Value X = G.input("x", f32, {int64_t(1) << 24, int64_t(1) << 24});
  G.output("y", X * 2.0);
  Executable Exe = compileSm90(G);
  // Read 4 bytes and write 4 bytes per element.
  CHECK(Exe.kernelBytes({}) == std::vector<int64_t>{int64_t(8) << 48});
  CHECK_THAT(Exe.plan(), Contains("bytes  2251799813685248\n"));
}

TEST_CASE("the interpreter rejects bound dims whose product overflows", "[misuse]") {
  Graph G;
  Value X = G.input("x", f32, {"A", "B"});
  G.output("y", X + 1.0);
  // 2^64 elements wrapped to 0, so an empty Data passed the count check and
  // the evaluation read through a null pointer.
  Bindings B;
  B.Dims = {{"A", P32}, {"B", P32}};
  B.Inputs["x"] = HostTensor{f32, {P32, P32}, {}};
  CHECK(errorOf([&] { interpret(G, B); }) ==
        "interpret: input 'x' of shape [4294967296,4294967296] holds more than 2^48 "
        "elements");

  // No input at all: rand_uniform over two bound dims.
  Graph R;
  R.output("u", randUniform(R.scalar("seed", i64), {Dim("A"), Dim("B")}));
  Bindings RB;
  RB.Dims = {{"A", P32}, {"B", P32}};
  RB.Scalars["seed"] = 1;
  CHECK_THAT(errorOf([&] { interpret(R, RB); }),
             Contains("[4294967296,4294967296] holds more than 2^48 elements"));
  CHECK(errorOf([&] { numelOf({P32, P32}); }) ==
        "tensor shape [4294967296,4294967296] holds more than 2^48 elements");
  CHECK(numelOf({int64_t(1) << 24, int64_t(1) << 24}) == int64_t(1) << 48);
}

//===----------------------------------------------------------------------===//
// Integer constants (item 13)
//===----------------------------------------------------------------------===//

TEST_CASE("integer constants are converted once, when built", "[misuse]") {
  Graph G;
  const double NaN = std::numeric_limits<double>::quiet_NaN();
  // Truncate toward zero, saturate at the range, NaN -> 0.
  CHECK(G.constant(1e10, i32).node().F == 2147483647.0);
  CHECK(G.constant(-1e10, i32).node().F == -2147483648.0);
  CHECK(G.constant(NaN, i32).node().F == 0.0);
  CHECK(G.constant(3.9, i32).node().F == 3.0);
  CHECK(G.constant(-3.9, i32).node().F == -3.0);
  CHECK(G.constant(1e30, i64).node().F == 9223372036854775808.0); // INT64_MAX
  CHECK(G.constant(-1e30, i64).node().F == -9223372036854775808.0);
  CHECK(G.constant(NaN, i64).node().F == 0.0);
  CHECK(G.constant(NaN, boolean).node().F == 1.0);
  CHECK(G.constant(0.25, boolean).node().F == 1.0);
  // Equal after conversion: one node.
  CHECK(G.constant(1e10, i32).id() == G.constant(2147483647.0, i32).id());
  // Float constants keep their value (the emitter and reference round them).
  CHECK(G.constant(0.1, f32).node().F == 0.1);
}

TEST_CASE("an out-of-range i32 constant is the same number in the kernel and the reference",
          "[misuse]") {
  Graph G;
  Value X = G.input("x", i32, {4});
  G.output("y", X + G.constant(1e10, i32));
  G.output("lo", X + G.constant(-1e30, i64));
  G.output("hi", X + G.constant(1e30, i64));
  Executable Exe = compileSm90(G);
  // static_cast<int32_t>(1e10) is undefined; on x86 it gave INT_MIN.
  CHECK_THAT(Exe.source(), Contains(" + 2147483647);"));
  CHECK_THAT(Exe.source(), !Contains(" + -2147483648);"));
  CHECK_THAT(Exe.source(), Contains(" + (int)(9223372036854775807LL));"));
  CHECK_THAT(Exe.source(), Contains(" + (int)((-9223372036854775807LL - 1)));"));

  // The reference: x + INT32_MAX with two's-complement wrap at 32 bits.
  Bindings B;
  B.Inputs["x"] = HostTensor{i32, {4}, {1, -5, 0, 7}};
  std::map<std::string, HostTensor> Out = interpret(G, B);
  CHECK(Out.at("y").Data ==
        std::vector<double>{-2147483648.0, 2147483642.0, 2147483647.0, -2147483642.0});
  // On a GPU: 3 outputs compared fused and unfused against the reference.
  if (haveGpu())
    CHECK(checkGraph(G, B) == 2 * 3);
}

//===----------------------------------------------------------------------===//
// DOT escaping (item 14)
//===----------------------------------------------------------------------===//

namespace {
/// Every line of Dot has balanced unescaped quotes and no raw CR: nothing in
/// a label ended the string or the statement.
void checkDotWellFormed(const std::string &Dot) {
  CHECK(Dot.find('\r') == std::string::npos);
  std::istringstream In(Dot);
  for (std::string Line; std::getline(In, Line);) {
    unsigned Quotes = 0;
    for (size_t I = 0; I < Line.size(); ++I) {
      if (Line[I] == '\\') {
        ++I; // skip the escaped character
        continue;
      }
      Quotes += Line[I] == '"';
    }
    INFO(Line);
    CHECK(Quotes % 2 == 0);
  }
}
} // namespace

TEST_CASE("DOT views escape names and dims with one function", "[misuse]") {
  CHECK(dotEscape("a\"b\\c") == "a\\\"b\\\\c");
  CHECK(dotEscape("l1\nl2\rl3") == "l1\\nl2\\nl3");
  CHECK(dotEscape(std::string("t\x01") + "\x7f") == "t\\\\x01\\\\x7f");

  Graph G;
  const std::string Evil = "B\"]; evil [label=\"x\r";
  Value X = G.input("in\"put\r", f32, {Dim(Evil), 4});
  G.output("out\"\r\n", exp(X));
  std::string Dot = graphToDot(G);
  checkDotWellFormed(Dot);
  CHECK_THAT(Dot, Contains("f32[B\\\"]; evil [label=\\\"x\\n,4]"));

  // What Executable::planDot() holds, without an NVRTC compile.
  std::string Plan = planToDot(G, fuseGraph(G));
  checkDotWellFormed(Plan);
  CHECK_THAT(Plan, Contains("label=\"out\\\"\\n\\n\""));
}

TEST_CASE("schedule experiments out of range are an Error naming the option", "[misuse]") {
  Graph G;
  Value X = G.input("x", f32, {"B", 4096});
  G.output("s", sum(X));
  for (unsigned K : {0u, 17u}) {
    CompileOptions O;
    O.Arch = "sm_90";
    O.RowChunksPerThread = K;
    CHECK(errorOf([&] { testCompiler().compile(G, O); }) ==
          fmt::format("compile: RowChunksPerThread = {}; expected 1 to 16", K));
  }
  for (unsigned T : {16u, 96u, 2048u}) {
    CompileOptions O;
    O.Arch = "sm_90";
    O.RowRereadThreads = T;
    CHECK(errorOf([&] { testCompiler().compile(G, O); }) ==
          fmt::format("compile: RowRereadThreads = {}; expected a power of two in [32, 1024]", T));
    O.RowRereadThreads.reset();
    O.RowDynamicThreads = T;
    CHECK(errorOf([&] { testCompiler().compile(G, O); }) ==
          fmt::format("compile: RowDynamicThreads = {}; expected a power of two in [32, 1024]", T));
  }
}
