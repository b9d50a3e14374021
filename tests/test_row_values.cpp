//===- tests/test_row_values.cpp - CompileOptions::RowCacheValues ---------===//
//
// A long row read again whose stage inputs do not fit the register budget
// keeps the values its first loop computes from them (add + RMSNorm's
// x + residual) instead of reading the row again. The CPU cases check when
// the schedule takes it (plan), that the kernel reads each input once and
// reads no output back (source), and that ptxas keeps it in registers; the
// GPU case runs such rows against the reference at every offset and row
// count that selects another form.
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "TestEnv.h"

#include "ir/NN.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

/// add + RMSNorm (or add + LayerNorm) over rows of \p H.
Graph addNorm(DType T, int64_t H, bool Layer) {
  Graph G;
  Value X = G.input("x", T, {"B", H});
  Value R = X + G.input("residual", T, {"B", H});
  Value Eps = G.scalar("eps", DType::F32);
  G.output("residual_out", R);
  if (Layer)
    G.output("y", nn::layerNorm(R, G.input("w", T, {H}), G.input("b", T, {H}), Eps));
  else
    G.output("y", nn::rmsNorm(R, G.input("w", T, {H}), Eps));
  return G;
}

/// softmax(x + mask) over f32 rows of \p H, the mask one per row.
Graph maskedSoftmax(int64_t H) {
  Graph G;
  Value X = G.input("x", DType::F32, {"B", H});
  G.output("p", nn::softmax(X + G.input("mask", DType::F32, {"B", H})));
  return G;
}

/// The source of kernel \p Name: from its `__global__` line to the next.
std::string kernelSource(const std::string &Src, const std::string &Name) {
  size_t At = Src.find(" " + Name + "(");
  if (At == std::string::npos)
    return "";
  size_t End = Src.find("__global__", At);
  return Src.substr(At, End == std::string::npos ? std::string::npos : End - At);
}

} // namespace

TEST_CASE("RowCacheValues: a long row keeps x + residual instead of re-reading them",
          "[codegen][rowvalues]") {
  for (bool Layer : {false, true}) {
    for (int64_t H : {int64_t(32064), int64_t(20011), int64_t(32768)}) {
      INFO((Layer ? "add + LayerNorm" : "add + RMSNorm") << " f32 x " << H);
      CompileOptions On, Off;
      On.Arch = Off.Arch = "sm_90";
      On.DeferVariants = false;
      Off.RowCacheValues = false;
      Executable E = testCompiler().compile(addNorm(DType::F32, H, Layer), On);
      INFO(E.plan());
      REQUIRE(E.kernels().size() == 1);
      CHECK(E.plan().find("(RowCacheValues)") != std::string::npos);
      CHECK(E.plan().find("1024 threads a row") != std::string::npos);
      // The plain variants (the aligned one only where 4 divides the row).
      std::vector<std::string> Names = {"jf_k0_add_p4"};
      if (H % 4 == 0)
        Names.push_back("jf_k0_add_v4");
      for (const std::string &V : Names) {
        std::string K = kernelSource(E.source(), V);
        INFO("kernel " << V << "\n" << K);
        REQUIRE(!K.empty());
        // x and residual read by the first loop only; nothing read back.
        CHECK(countOf(K, "(in_0 +") == 1);
        CHECK(countOf(K, "(in_1 +") == 1);
        CHECK(countOf(K, "(out_0 +") == 1); // the store
        CHECK(K.find("jf_vec<float, 4> kv") != std::string::npos);
      }
      // ptxas keeps the values in registers, in every variant and form.
      for (const rt::KernelResources &K : E.kernelResources()) {
        INFO("kernel " << K.Name << ": " << K.Registers << " registers");
        CHECK(K.SpillStoreBytes == 0);
        CHECK(K.StackBytes == 0);
      }
      Executable Re = testCompiler().compile(addNorm(DType::F32, H, Layer), Off);
      CHECK(Re.plan().find("RowCacheValues") == std::string::npos);
      CHECK(Re.plan().find("row re-read from memory per stage") != std::string::npos);
    }
  }
}

TEST_CASE("RowCacheValues: softmax(x + mask) keeps the sum, not x and the mask",
          "[codegen][rowvalues]") {
  // Three loops (max, sum of exp, the quotients) read x + mask: kept, the
  // row crosses HBM once instead of twice (online softmax, re-read).
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Executable E = testCompiler().compile(maskedSoftmax(32064), Opts);
  INFO(E.plan());
  REQUIRE(E.kernels().size() == 1);
  CHECK(E.plan().find("(RowCacheValues)") != std::string::npos);
  std::string K = kernelSource(E.source(), E.kernels().front().Name + "_v4");
  REQUIRE(!K.empty());
  CHECK(countOf(K, "(in_0 +") == 1);
  CHECK(countOf(K, "(in_1 +") == 1);
  // A plain softmax row (one input) has nothing to gain: unchanged.
  Graph Plain;
  Plain.output("p", nn::softmax(Plain.input("x", DType::F32, {"B", 32064})));
  Executable P = testCompiler().compile(Plain, Opts);
  CHECK(P.plan().find("RowCacheValues") == std::string::npos);
}

TEST_CASE("RowCacheValues: not where the values save nothing or an input is read again",
          "[codegen][rowvalues]") {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  // bf16: one f32 value per two 2-byte inputs, the same bytes: re-read.
  Executable Half = testCompiler().compile(addNorm(DType::BF16, 50257, false), Opts);
  INFO(Half.plan());
  CHECK(Half.plan().find("RowCacheValues") == std::string::npos);
  // The epilogue reads x itself, not only through x + r: x would be read
  // again whatever is kept.
  Graph G;
  Value X = G.input("x", DType::F32, {"B", 32064});
  Value R = X + G.input("residual", DType::F32, {"B", 32064});
  G.output("y", X * rsqrt(mean(R * R) + 1e-6));
  Executable Again = testCompiler().compile(G, Opts);
  INFO(Again.plan());
  CHECK(Again.plan().find("RowCacheValues") == std::string::npos);
  // Rows whose stage inputs fit keep the inputs, as before.
  Executable Short = testCompiler().compile(addNorm(DType::F32, 8192, false), Opts);
  INFO(Short.plan());
  CHECK(Short.plan().find("RowCacheValues") == std::string::npos);
  CHECK(Short.plan().find("row kept in registers") != std::string::npos);
}

TEST_CASE("GPU: rows keeping their computed values match the reference",
          "[gpu][rowvalues]") {
  for (int64_t Rows : {int64_t(1), int64_t(133)})
    for (unsigned Off : {0u, 1u}) {
      INFO("softmax(x + mask) f32 x 32064, " << Rows << " rows, offset " << Off);
      Graph G = maskedSoftmax(32064);
      CheckOptions CO;
      CO.MisalignElems = Off;
      CO.SpecialValues = Off == 1;
      checkGraph(G, randomBindings(G, {{"B", Rows}}, {}, CO), CO);
    }
  for (bool Layer : {false, true})
    for (int64_t H : {int64_t(32064), int64_t(20011)})
      for (int64_t Rows : {int64_t(1), int64_t(7), int64_t(133), int64_t(300)})
        for (unsigned Off : {0u, 1u}) {
          for (bool Values : {true, false}) {
            INFO((Layer ? "add + LayerNorm" : "add + RMSNorm")
                 << " f32 x " << H << ", " << Rows << " rows, offset " << Off
                 << (Values ? "" : " (RowCacheValues off)"));
            Graph G = addNorm(DType::F32, H, Layer);
            CheckOptions CO;
            CO.RowCacheValues = Values;
            CO.MisalignElems = Off;
            CO.SpecialValues = H == 20011 && Rows == 7;
            Bindings B = randomBindings(G, {{"B", Rows}}, {{"eps", 1e-5}}, CO);
            checkGraph(G, B, CO);
          }
        }
}
