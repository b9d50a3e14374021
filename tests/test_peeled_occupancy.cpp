//===- tests/test_peeled_occupancy.cpp - CompileOptions::PeeledRowOccupancy ===//
//
// The peeled variant of a 512-thread row that keeps 128 B or more a thread
// in registers is compiled at its aligned variant's occupancy:
// `__launch_bounds__(512, 2)`, at most 64 registers a thread, where the
// per-lane head and tail took more (one block an SM instead of two).
//
//===----------------------------------------------------------------------===//
#include "GraphCheck.h"
#include "RowPatterns.h"

#include <catch2/catch.hpp>

using namespace jitfuse;
using namespace jitfuse::test;

namespace {

Executable compileOcc(const Graph &G, bool On) {
  CompileOptions Opts;
  Opts.Arch = "sm_90";
  Opts.DeferVariants = false;
  Opts.PeeledRowOccupancy = On;
  // Off, the peeled variant would take PeeledSamePhase's form (not with the
  // bound): the comparison is of the bound alone.
  Opts.PeeledSamePhase = false;
  return testCompiler().compile(G, Opts);
}

const rt::KernelResources *resources(const std::vector<rt::KernelResources> &R,
                                     const std::string &Name) {
  for (const rt::KernelResources &K : R)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

} // namespace

TEST_CASE("PeeledRowOccupancy: a kept row's peeled variant is bounded to 64 registers",
          "[codegen][rowcache][occupancy]") {
  // add + RMSNorm bf16 x 14336: 512 threads a row, kept in registers; the
  // peeled variant took 73 registers unbounded.
  Graph G = addRmsNorm(DType::BF16, 14336);
  Executable On = compileOcc(G, true), Off = compileOcc(G, false);
  INFO(On.plan());
  REQUIRE(On.kernels().size() == 1);
  CHECK(On.plan().find("peeled variant bounded to 2 blocks an SM, 64 registers a thread "
                       "(row kept at 192 B a thread, PeeledRowOccupancy)") != std::string::npos);
  CHECK(Off.plan().find("PeeledRowOccupancy") == std::string::npos);
  std::string KOn = kernelSource(On), KOff = kernelSource(Off);
  CHECK(KOn.find("__launch_bounds__(512, 2) jf_k0_add_p8(") != std::string::npos);
  CHECK(KOff.find("__launch_bounds__(512) jf_k0_add_p8(") != std::string::npos);
  // The aligned variant is unchanged, and the peeled one's body.
  CHECK(KOn.find("__launch_bounds__(512) jf_k0_add_v8(") != std::string::npos);
  CHECK(kernelText(KOn, "jf_k0_add_v8") == kernelText(KOff, "jf_k0_add_v8"));
  CHECK(kernelText(KOn, "jf_k0_add_p8") == kernelText(KOff, "jf_k0_add_p8"));
  // kernelResources() returns a copy: keep it while pointing into it.
  const std::vector<rt::KernelResources> ROn = On.kernelResources(),
                                         ROff = Off.kernelResources();
  const rt::KernelResources *P = resources(ROn, "jf_k0_add_p8");
  REQUIRE(P != nullptr);
  CHECK(P->Registers <= 64);
  const rt::KernelResources *POff = resources(ROff, "jf_k0_add_p8");
  REQUIRE(POff != nullptr);
  CHECK(POff->Registers > 64); // what the bound is for
  std::printf("PeeledRowOccupancy: add + RMSNorm bf16 x 14336 peeled %d -> %d registers, "
              "%d B spilled\n",
              POff->Registers, P->Registers, P->SpillStoreBytes);

  // Not for rows of fewer threads (LayerNorm bf16 x 4999: 128 threads, the
  // bound spilled 104 B), nor for 512-thread rows keeping less than 128 B
  // (softmax bf16 x 11008: ptxas took 55 registers under the bound, 40
  // without), nor at 1024 threads (one block an SM already).
  CHECK(compileOcc(layerNorm(DType::BF16, 4999), true).plan().find("PeeledRowOccupancy") ==
        std::string::npos);
  CHECK(compileOcc(softmax(DType::BF16, 11008), true).plan().find("PeeledRowOccupancy") ==
        std::string::npos);
  Graph L = layerNorm(DType::F32, 32064);
  Executable LOn = compileOcc(L, true);
  INFO(LOn.plan());
  CHECK(LOn.plan().find("RowCacheWideThreads") != std::string::npos);
  CHECK(LOn.plan().find("PeeledRowOccupancy") == std::string::npos);
}

TEST_CASE("GPU: kept rows under the peeled bound match the reference, any offset",
          "[gpu][rowcache][occupancy]") {
  for (DType T : {DType::F32, DType::BF16}) {
    for (int64_t H : {int64_t(1021), int64_t(4095), int64_t(14336)}) {
      Graph Gs[] = {layerNorm(T, H), addRmsNorm(T, H), softmax(T, H)};
      for (const Graph &G : Gs)
        for (int64_t Rows : {int64_t(7), int64_t(300)}) {
          INFO(dtypeName(T).str() << " rows " << Rows << " x " << H);
          CheckOptions CO;
          CO.PeeledRowOccupancy = true;
          checkAlignedAndMisaligned(G, {{"B", Rows}}, CO);
        }
    }
  }
}
