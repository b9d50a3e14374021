//===- tests/test_piece_wrap.cpp - CompileOptions::PieceWrapChunks --------===//
//
// An element-wise row that is a concat of equal pieces (RoPE's halves) takes,
// in its peeled variant, chunks aligned to the lead tensor inside each piece:
// a thread takes one slot of every piece (the pieces share their loads), the
// last slot the piece's first and last elements (jf_w lanes one piece later:
// jf_load_rot, jf_store_rot_row), in a copy without alignment checks when every
// tensor sits at the lead's phase (jf_al). The CPU cases read the plan and
// the kernel text and compile the PTX; the GPU cases run RoPE and other
// concat rows at offsets that put the tensors at one phase, at different
// phases, and at none, against the reference, fused and unfused (guard
// bytes around every output catch a store outside it).
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RopeGraph.h"
#include "TestEnv.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// Three pieces of \p Piece: a row vector's product, a shift, an exp; a
/// second output, the same pieces in another order (read per lane: only the
/// first concat picks its piece per chunk).
Graph threePieces(DType T, int64_t Piece) {
  Graph G;
  Value X = G.input("x", T, {"T", 3 * Piece});
  Value W = G.input("w", T, {Piece});
  Value A = slice(X, 0, Piece) * W;
  Value B = slice(X, Piece, 2 * Piece) + G.scalar("s", T);
  Value C = exp(slice(X, 2 * Piece, 3 * Piece));
  G.output("y", concat({A, B, C}));
  G.output("y2", concat({C, A, B}));
  return G;
}

/// The text of the kernel's peeled variant (`..._p<vec>(`), to the end.
std::string peeledKernel(const std::string &Source) {
  for (const char *Name : {"_p8(", "_p4(", "_p2(", "_p16("})
    if (size_t At = Source.find(Name); At != std::string::npos)
      return Source.substr(At);
  return {};
}

} // namespace

TEST_CASE("PieceWrapChunks: the plan, the peeled kernel's accesses, the option off",
          "[codegen][piecewrap]") {
  for (DType T : {DType::BF16, DType::F16, DType::F32}) {
    for (int64_t D : {int64_t(16), int64_t(128), int64_t(1024)}) {
      INFO("dtype " << dtypeName(T).str() << ", head dim " << D);
      CompileOptions On, Off;
      On.Arch = Off.Arch = "sm_90";
      Off.PieceWrapChunks = false;
      Executable E = testCompiler().compile(ropeGraph(T, 3, D), On);
      INFO(E.plan());
      CHECK(E.plan().find("(PieceWrapChunks)") != std::string::npos);
      // GroupStores needs chunks at the row start: not with the option.
      CHECK(E.plan().find("(GroupStores)") == std::string::npos);
      std::string Peeled = peeledKernel(E.source());
      REQUIRE(!Peeled.empty());
      std::string ST = T == DType::F32 ? "float" : T == DType::BF16 ? "jf_bf16" : "jf_f16";
      // One store of both pieces in each copy (every tensor at the lead's
      // phase, and the general one); the loads of the two halves are shared.
      CHECK(countOf(Peeled, "jf_store_rot_row<") == 2u);
      // The aligned copy shares the blocks between rows (a row's lanes are
      // the piece's chunks apart); the other does not.
      CHECK(countOf(Peeled, fmt::format("jf_store_rot_row<{}, {}, true, 2, {}>(", ST,
                                        16 / dtypeBytes(T), D / 2 * dtypeBytes(T) / 16)) == 1u);
      CHECK(countOf(Peeled, fmt::format("jf_store_rot_row<{}, {}, false, 2, 0>(", ST,
                                        16 / dtypeBytes(T))) == 1u);
      CHECK(countOf(Peeled, "jf_load_rot<") == 8u);
      CHECK(Peeled.find("const bool jf_al") != std::string::npos);
      // q and its other half are the lead: known aligned in both copies.
      CHECK(countOf(Peeled, fmt::format("jf_load_rot<{}, {}, 0, true>(in_0", ST,
                                        16 / dtypeBytes(T))) == 4u);
      CHECK(Peeled.find("jf_store_group<") == std::string::npos);
      CHECK(Peeled.find("jf_hi") == std::string::npos); // every chunk is whole
      CHECK(!E.ptx().empty());
      Executable Plain = testCompiler().compile(ropeGraph(T, 3, D), Off);
      CHECK(Plain.plan().find("PieceWrapChunks") == std::string::npos);
      CHECK(Plain.source().find("jf_load_rot<") == std::string::npos);
    }
  }
}

TEST_CASE("PieceWrapChunks: not for strided tensors, three pieces compile",
          "[codegen][piecewrap]") {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  {
    // A strided q (a view of a fused projection) is read at its own
    // coordinates: the chunks stay at the row start.
    Graph G;
    Value Q = G.input("q", DType::BF16, {"T", 4, 64}, {"S", 64, 1});
    Value Cos = G.input("cos", DType::BF16, {"T", 32});
    Value Sin = G.input("sin", DType::BF16, {"T", 32});
    G.output("r", nn::rope(Q, Cos, Sin, nn::RopeStyle::HalfRotation));
    Executable E = testCompiler().compile(G, Opts);
    INFO(E.plan());
    CHECK(E.plan().find("PieceWrapChunks") == std::string::npos);
    CHECK(E.source().find("jf_load_rot<") == std::string::npos);
  }
  for (DType T : {DType::BF16, DType::F32}) {
    Executable E = testCompiler().compile(threePieces(T, 40), Opts);
    INFO(E.plan());
    CHECK(E.plan().find("(PieceWrapChunks)") != std::string::npos);
    std::string Peeled = peeledKernel(E.source());
    // Three pieces stored together, two outputs, two copies.
    CHECK(countOf(Peeled, fmt::format("jf_store_rot_row<{}, {}, true, 3, {}>(",
                                      T == DType::F32 ? "float" : "jf_bf16",
                                      T == DType::F32 ? 4 : 8, T == DType::F32 ? 10 : 5)) == 2u);
    CHECK(countOf(Peeled, "jf_store_rot_row<") == 4u);
    CHECK(E.plan().find("kernel 1") == std::string::npos); // one kernel
    CHECK(!E.ptx().empty());
  }
}

TEST_CASE("GPU: PieceWrapChunks RoPE matches the reference at every offset",
          "[gpu][piecewrap]") {
  // Offsets in elements per tensor (q, cos, sin, out), cycling: all at one
  // phase (jf_al holds), the output or a table at another phase than q,
  // odd ones. 7 and 133 rows leave the last group of rows part empty.
  std::vector<std::vector<unsigned>> Layouts = {{0},          {1},          {3},
                                                {7},          {3, 0, 1, 2}, {0, 0, 0, 5},
                                                {6, 2, 2, 1}, {1, 1, 1, 0}, {2, 2, 2, 3}};
  for (DType T : {DType::BF16, DType::F16, DType::F32})
    for (auto [Heads, D] :
         {std::pair<int64_t, int64_t>{5, 64}, {3, 128}, {1, 16}, {2, 1024}, {4, 8}})
      for (int64_t Rows : {int64_t(7), int64_t(133)}) {
        Graph G = ropeGraph(T, Heads, D);
        for (const std::vector<unsigned> &L : Layouts) {
          // 4-byte elements take offsets below their 4-element chunk.
          if (T == DType::F32 && llvm::any_of(L, [](unsigned O) { return O > 3; }))
            continue;
          INFO("dtype " << dtypeName(T).str() << ", " << Heads << " heads of " << D << ", "
                        << Rows << " rows, offsets " << fmt::format("{}", fmt::join(L, "/")));
          CheckOptions Opts;
          Opts.MisalignEach = L;
          checkGraph(G, randomBindings(G, {{"T", Rows}}, {}), Opts);
        }
      }
}

TEST_CASE("GPU: PieceWrapChunks over three pieces", "[gpu][piecewrap]") {
  std::vector<std::vector<unsigned>> Layouts = {{1}, {5}, {1, 0, 1, 1}, {3, 3, 2, 3}};
  for (DType T : {DType::BF16, DType::F32})
    for (int64_t Piece : {int64_t(8), int64_t(40), int64_t(256)})
      for (const std::vector<unsigned> &L : Layouts) {
        INFO("dtype " << dtypeName(T).str() << ", pieces of " << Piece << ", offsets "
                      << fmt::format("{}", fmt::join(L, "/")));
        Graph G = threePieces(T, Piece);
        CheckOptions Opts;
        Opts.MisalignEach = L;
        checkGraph(G, randomBindings(G, {{"T", 37}}, {{"s", 0.5}}), Opts);
      }
}
