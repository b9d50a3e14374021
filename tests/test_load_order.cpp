//===- tests/test_load_order.cpp - a thread's loads issued together -------===//
//
// A thread's loads should be in flight together: a load emitted where its
// value is first used waits for everything before it, and behind an IEEE
// division (whose slow path is a call) or a guarded chunk the compiler
// does not move it up. The CPU cases read the PTX: an element-wise chunk
// loads every input (and each slice of one, as a merged gate_up's halves)
// before its first arithmetic (KernelWriter::hoistInputLoads), and a short row read once loads all its
// chunks and its head/tail element before reducing them
// (CompileOptions::RowCacheReadOnce). The GPU case runs such rows against
// the reference with the option on and off; the element-wise kernels are
// the [gpu] tier's (random graphs, fused vs unfused vs reference).
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "TestEnv.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <functional>
#include <map>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// Calls \p Check with the PTX of each kernel of \p E that has a plain
/// 16-byte global load and the position of the first (a peeled variant
/// reads through shifted loads and is skipped); the kernels checked.
size_t eachWideKernel(Executable &E,
                      const std::function<void(const std::string &, size_t)> &Check) {
  size_t Checked = 0;
  for (const auto &[Name, Body] : ptxEntries(E.ptx())) {
    INFO("kernel " << Name);
    size_t Wide = Body.find("ld.global.nc.v4");
    if (Wide == std::string::npos)
      continue;
    ++Checked;
    Check(Body, Wide);
  }
  return Checked;
}

} // namespace

TEST_CASE("element-wise chunks load every input before their first arithmetic",
          "[codegen][loadorder]") {
  // silu(g) * u: u's load used to follow g's value and first quotient.
  // Also a three-input chain, and a bias read at other coordinates (its
  // load is not one of the chunk's own).
  for (DType T : {DType::F32, DType::BF16}) {
    Graph G;
    Value Gate = G.input("g", T, {"B", 1024});
    Value Up = G.input("u", T, {"B", 1024});
    Value Z = G.input("z", T, {"B", 1024});
    Value Bias = G.input("bias", T, {1024});
    G.output("swiglu", silu(Gate) * Up);
    G.output("chain", sigmoid(Z + Bias) / (Gate + Up));
    CompileOptions Opts;
    Opts.Arch = "sm_90";
    Executable E = testCompiler().compile(G, Opts);
    INFO("dtype " << dtypeName(T).str() << "\n" << E.plan());
    REQUIRE(E.plan().find("1 kernel") != std::string::npos);
    std::map<std::string, std::string> Kernels = ptxEntries(E.ptx());
    REQUIRE(Kernels.size() == 2); // aligned and peeled variants
    for (const auto &[Name, Body] : Kernels) {
      INFO("kernel " << Name);
      // The chunk's path: after the scalar tail loop (emitted first in the
      // aligned variant's PTX, or absent), the wide loads, then exp.
      size_t Wide = Body.find(".v4.");
      REQUIRE(Wide != std::string::npos);
      Wide = Body.rfind('\n', Wide); // the start of that load's line
      size_t FirstExp = Body.find("ex2.approx", Wide);
      REQUIRE(FirstExp != std::string::npos);
      // g, u and z are the chunk's own inputs, each one 16-byte load (bf16:
      // 8 lanes; f32: 4) ahead of the first exp.
      size_t Loads = countOf(Body.substr(Wide, FirstExp - Wide), "ld.global");
      CHECK(Loads >= 3);
    }
  }
}

TEST_CASE("element-wise chunks load both halves of a merged input before their first arithmetic",
          "[codegen][loadorder]") {
  // SwiGLU over a merged gate_up projection (W5): g and u are slices of one
  // input. u's load used to follow g's first quotient (the IEEE division's
  // slow-path branch in between), two memory latencies a thread.
  for (DType T : {DType::F32, DType::BF16, DType::F16}) {
    Graph G;
    Value GU = G.input("gate_up", T, {"B", 2 * 1024});
    G.output("act", nn::swiglu(GU));
    CompileOptions Opts;
    Opts.Arch = "sm_90";
    Executable E = testCompiler().compile(G, Opts);
    INFO("dtype " << dtypeName(T).str() << "\n" << E.plan());
    REQUIRE(E.plan().find("1 kernel") != std::string::npos);
    size_t Checked = eachWideKernel(E, [](const std::string &Body, size_t Wide) {
      Wide = Body.rfind('\n', Wide); // the start of that load's line
      size_t FirstExp = Body.find("ex2.approx", Wide);
      REQUIRE(FirstExp != std::string::npos);
      CHECK(countOf(Body.substr(Wide, FirstExp - Wide), "ld.global.nc.v4") == 2);
    });
    CHECK(Checked >= 1);
  }
}

TEST_CASE("f16 RoPE converts q in its piece's branch, after the chunk's loads",
          "[codegen][loadorder]") {
  // Both branches of RoPE's concat load q at the chunk's own address; NVVM
  // hoisted that load and its cvt above the branch, and ptxas then issued
  // q's other half, cos and sin only after the cvt had waited for q (SASS,
  // BENCHMARKS.md session 17). Pinned (a volatile cvt,
  // Emitter::pinConversion), the cvt stays in the branches, where ptxas
  // puts all four loads first. The PTX shows the cause: no cvt between the
  // hoisted load and the branch.
  Graph G;
  Value Q = G.input("q", DType::F16, {"B", 32, 128});
  Value Cos = G.input("cos", DType::F16, {"B", 64});
  Value Sin = G.input("sin", DType::F16, {"B", 64});
  G.output("q_rot", nn::rope(Q, Cos, Sin, nn::RopeStyle::HalfRotation));
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Executable E = testCompiler().compile(G, Opts);
  INFO(E.plan());
  REQUIRE(E.plan().find("1 kernel") != std::string::npos);
  size_t Checked = eachWideKernel(E, [](const std::string &Body, size_t Wide) {
    size_t Branch = Body.find(" bra", Wide);
    REQUIRE(Branch != std::string::npos);
    size_t FirstCvt = Body.find("cvt.f32.f16", Wide);
    REQUIRE(FirstCvt != std::string::npos);
    CHECK(FirstCvt > Branch);
  });
  CHECK(Checked >= 1);
}

namespace {

/// Sum and max of |x| over rows of \p H: a row read once.
Graph sumAbsAmax(DType T, int64_t H) {
  Graph G;
  Value X = G.input("x", T, {"B", H});
  Value A = abs(X);
  G.output("sum_abs", sum(A));
  G.output("amax", reduceMax(A));
  return G;
}

} // namespace

TEST_CASE("RowCacheReadOnce: a row read once loads its chunks before reducing them",
          "[codegen][loadorder][rowcache]") {
  CompileOptions On, Off;
  On.Arch = Off.Arch = "sm_90";
  Off.RowCacheReadOnce = false;
  // Plain loads and one kernel (no StreamReadOnlyRows copy): the order of
  // the loads is what is tested here.
  On.StreamReadOnlyRows = Off.StreamReadOnlyRows = false;
  // f32 rows of 4095: 1024 chunks, 2 a thread (32 B) and a head/tail element.
  Executable E = testCompiler().compile(sumAbsAmax(DType::F32, 4095), On);
  INFO(E.plan());
  CHECK(E.plan().find("row read once (one reduction stage, no whole-row output), its 32 B a "
                      "thread loaded into registers before the reduction (RowCacheReadOnce)") !=
        std::string::npos);
  Executable Old = testCompiler().compile(sumAbsAmax(DType::F32, 4095), Off);
  CHECK(Old.plan().find("row read once (one reduction stage, no whole-row output): not kept") !=
        std::string::npos);
  // In the PTX of the peeled kernel (the only variant: 4 does not divide
  // 4095): both chunks' wide loads and the scalar element's come before the
  // first |x|. Without the option the second chunk's load followed the
  // first chunk's math.
  auto LoadsBeforeAbs = [](Executable &X) {
    std::map<std::string, std::string> K = ptxEntries(X.ptx());
    REQUIRE(K.size() == 1);
    const std::string &Body = K.begin()->second;
    size_t Abs = Body.find("abs.f32");
    REQUIRE(Abs != std::string::npos);
    std::string Before = Body.substr(0, Abs);
    return std::make_pair(countOf(Before, "ld.global.nc.v4"), countOf(Before, "ld.global"));
  };
  auto [WideOn, AllOn] = LoadsBeforeAbs(E);
  CHECK(WideOn == 2);
  CHECK(AllOn == 3);
  auto [WideOff, AllOff] = LoadsBeforeAbs(Old);
  CHECK(WideOff == 1);
  CHECK(AllOff == 1);
  // Rows whose loads pass 64 B a thread stay as they were (bf16 rows of
  // 50257 kept in registers took 124 registers, one block an SM).
  Executable Long = testCompiler().compile(sumAbsAmax(DType::BF16, 50257), On);
  CHECK(Long.plan().find("row read once (one reduction stage, no whole-row output): not kept") !=
        std::string::npos);
  // A row read again is the register cache's own rule: unchanged.
  Graph Soft;
  Value X = Soft.input("x", DType::F32, {"B", 4095});
  Soft.output("y", nn::softmax(X));
  Executable S = testCompiler().compile(Soft, On);
  CHECK(S.plan().find("RowCacheReadOnce") == std::string::npos);
}

TEST_CASE("GPU: rows read once and loaded ahead match the reference, any offset",
          "[gpu][loadorder][rowcache]") {
  for (DType T : {DType::F32, DType::BF16}) {
    for (int64_t H : {int64_t(4095), int64_t(1021), int64_t(4096), int64_t(7)}) {
      for (int64_t Rows : {int64_t(1), int64_t(133)}) {
        for (bool ReadOnce : {true, false}) {
          INFO("dtype " << dtypeName(T).str() << " H=" << H << " rows " << Rows
                        << (ReadOnce ? "" : " (RowCacheReadOnce off)"));
          Graph G = sumAbsAmax(T, H);
          CheckOptions CO;
          CO.RowCacheReadOnce = ReadOnce;
          CO.MisalignElems = 1;
          CO.SpecialValues = H == 1021; // NaN and +-Inf in the sums and maxima
          Bindings B = randomBindings(G, {{"B", Rows}}, {}, CO);
          checkGraph(G, B, CO);
        }
      }
    }
  }
}
