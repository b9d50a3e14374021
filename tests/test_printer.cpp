//===- tests/test_printer.cpp - text and DOT views of a graph -------------===//
#include "ir/Printer.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using Catch::Matchers::Contains;

TEST_CASE("printGraph prints one line per node then the outputs", "[printer]") {
  Graph G;
  Value X = G.input("x", bf16, {"B", 4});
  Value W = G.input("w", f32, {4});
  Value Eps = G.scalar("eps", f32);
  Value Seed = G.scalar("seed", i64);
  Value Y = cast(X, f32) * W;
  Value R = rsqrt(mean(Y * Y) + Eps);
  Value Z = Y * R * 0.5;
  Value Total = sum(abs(slice(Z, 1, 3)), ReduceScope::All);
  Value Noise = randUniform(Seed, {"B", 4}, 3);
  G.output("z", Z);
  G.output("total", Total);
  G.output("noise", Noise);

  const char *Expected = R"(%0 = input() : bf16[B,4] "x"
%1 = input() : f32[4] "w"
%2 = scalar() : f32[] "eps"
%3 = scalar() : i64[] "seed"
%4 = cast(%0) : f32[B,4]
%5 = mul(%4, %1) : f32[B,4]
%6 = mul(%5, %5) : f32[B,4]
%7 = mean(%6) : f32[B,1] last-axis
%8 = add(%7, %2) : f32[B,1]
%9 = rsqrt(%8) : f32[B,1]
%10 = mul(%5, %9) : f32[B,4]
%11 = constant() : f32[] 0.5
%12 = mul(%10, %11) : f32[B,4]
%13 = slice(%12) : f32[B,2] [1:3]
%14 = abs(%13) : f32[B,2]
%15 = sum(%14) : f32[] all
%16 = rand_uniform(%3) : f32[B,4] stream=3
output "z" = %12
output "total" = %15
output "noise" = %16
)";
  CHECK(printGraph(G) == Expected);
  CHECK(printNode(G, 7) == "%7 = mean(%6) : f32[B,1] last-axis");
}

TEST_CASE("printGraph spells constants, concat and reshape", "[printer]") {
  Graph G;
  Value X = G.input("x", f32, {2, 4});
  Value C = concat({X, X * 1e-6});
  G.output("c", reshape(C, {16}));
  Value Cond = gt(X, G.constant(0.1));
  G.output("w", where(Cond, X, G.constant(-2.5, f16)));

  const char *Expected = R"(%0 = input() : f32[2,4] "x"
%1 = constant() : f32[] 1e-06
%2 = mul(%0, %1) : f32[2,4]
%3 = concat(%0, %2) : f32[2,8]
%4 = reshape(%3) : f32[16]
%5 = constant() : f32[] 0.1
%6 = gt(%0, %5) : bool[2,4]
%7 = constant() : f16[] -2.5
%8 = where(%6, %0, %7) : f32[2,4]
output "c" = %4
output "w" = %8
)";
  CHECK(printGraph(G) == Expected);
}

TEST_CASE("printGraph of an empty graph is empty", "[printer]") {
  Graph G;
  CHECK(printGraph(G).empty());
}

TEST_CASE("graphToDot has every node and edge and escapes names", "[printer]") {
  Graph G;
  Value A = G.input("a\"b", f32, {4});
  Value W = G.input("w\\", f32, {4});
  G.output("o\"ut", A + W);

  std::string Dot = graphToDot(G);
  CHECK_THAT(Dot, Contains("digraph jitfuse {"));
  CHECK_THAT(
      Dot,
      Contains(R"(n0 [label="%0 input \"a\"b\"\nf32[4]", style=rounded];)"));
  CHECK_THAT(
      Dot,
      Contains(R"(n1 [label="%1 input \"w\\\"\nf32[4]", style=rounded];)"));
  CHECK_THAT(Dot, Contains(R"(n2 [label="%2 add\nf32[4]"];)"));
  CHECK_THAT(Dot, Contains("n0 -> n2;"));
  CHECK_THAT(Dot, Contains("n1 -> n2;"));
  CHECK_THAT(Dot, Contains(R"(out0 [label="o\"ut", shape=ellipse];)"));
  CHECK_THAT(Dot, Contains("n2 -> out0;"));
  CHECK(Dot.back() == '\n');
  CHECK(Dot.substr(Dot.size() - 2) == "}\n");

  // Every quote inside the file is either a delimiter or escaped: each line
  // has an even number of unescaped quotes.
  size_t Start = 0;
  while (Start < Dot.size()) {
    size_t End = Dot.find('\n', Start);
    int Unescaped = 0;
    for (size_t I = Start; I < End; ++I) {
      if (Dot[I] == '\\') {
        ++I;
        continue;
      }
      Unescaped += Dot[I] == '"';
    }
    CHECK(Unescaped % 2 == 0);
    Start = End + 1;
  }
}

TEST_CASE("formatDouble gives short round-tripping C-locale literals",
          "[printer]") {
  CHECK(formatDouble(0.5) == "0.5");
  CHECK(formatDouble(2.0) == "2");
  CHECK(formatDouble(0.1) == "0.1");
  CHECK(formatDouble(-0.0) == "-0");
  CHECK(std::stod(formatDouble(1.0 / 3.0)) == 1.0 / 3.0);
}
