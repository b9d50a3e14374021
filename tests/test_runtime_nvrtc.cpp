// NVRTC wrapper: runs on machines without a GPU (NVRTC needs no driver).
#include "runtime/Nvrtc.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <string>

using namespace jitfuse;
using namespace jitfuse::rt;

namespace {

const char *kBf16Kernel = R"(
#include <cuda_bf16.h>
extern "C" __global__ void scale_bf16(const __nv_bfloat16 *In, __nv_bfloat16 *Out,
                                      float Alpha, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Out[I] = __float2bfloat16(Alpha * __bfloat162float(In[I]));
}
)";

} // namespace

TEST_CASE("NVRTC compiles a bf16 kernel to a CUBIN for sm_90",
          "[runtime][nvrtc]") {
  CompiledProgram P =
      compileCuda(kBf16Kernel, "scale_bf16.cu", defaultNvrtcOptions(9, 0),
                  /*WantPtx=*/false);
  REQUIRE(P.Cubin.size() > 4);
  // A CUBIN is an ELF image.
  CHECK(std::string(P.Cubin.begin(), P.Cubin.begin() + 4) == "\177ELF");
  CHECK(P.Ptx.empty());
}

TEST_CASE("NVRTC gives PTX with an .entry on request", "[runtime][nvrtc]") {
  CompiledProgram P =
      compileCuda(kBf16Kernel, "scale_bf16.cu", defaultNvrtcOptions(9, 0),
                  /*WantPtx=*/true);
  CHECK_FALSE(P.Cubin.empty());
  CHECK(P.Ptx.find(".entry") != std::string::npos);
  CHECK(P.Ptx.find("scale_bf16") != std::string::npos);
  CHECK(P.Ptx.find(".target sm_90") != std::string::npos);
  CHECK(P.Ptx.back() != '\0');
}

TEST_CASE("NVRTC syntax errors raise an Error with the log and options",
          "[runtime][nvrtc]") {
  const char *Bad =
      "extern \"C\" __global__ void broken(int *P) {\n  P[0] = 1 +;\n}\n";
  try {
    compileCuda(Bad, "broken_kernel.cu", defaultNvrtcOptions(9, 0), false);
    FAIL("compileCuda accepted a syntax error");
  } catch (const Error &E) {
    std::string Msg = E.what();
    INFO(Msg);
    // The NVRTC log line: "<program>(<line>): error: ...".
    CHECK(Msg.find("broken_kernel.cu(2): error") != std::string::npos);
    CHECK(Msg.find("--gpu-architecture=sm_90") != std::string::npos);
    CHECK(Msg.find("--std=c++17") != std::string::npos);
  }
}

TEST_CASE("compileCuda requires a real architecture", "[runtime][nvrtc]") {
  std::vector<std::string> Options = {"--gpu-architecture=compute_90",
                                      "--std=c++17"};
  CHECK_THROWS_WITH(compileCuda("extern \"C\" __global__ void k() {}", "k.cu",
                                Options, false),
                    Catch::Contains("expected --gpu-architecture=sm_XX"));
  // The -arch= spelling is accepted too.
  CompiledProgram P = compileCuda("extern \"C\" __global__ void k() {}", "k.cu",
                                  {"-arch=sm_90"}, true);
  CHECK_FALSE(P.Cubin.empty());
  CHECK(P.Ptx.find(".entry k") != std::string::npos);
}

TEST_CASE("NVRTC version string and default options are stable",
          "[runtime][nvrtc]") {
  const std::string &V = nvrtcVersionString();
  INFO(V);
  CHECK(V.rfind("13.", 0) == 0);
  CHECK(V.find("libnvrtc") != std::string::npos);
  CHECK(&V == &nvrtcVersionString());

  std::vector<std::string> Options = defaultNvrtcOptions(9, 0);
  REQUIRE(Options.size() == 5);
  CHECK(Options[0] == "--gpu-architecture=sm_90");
  CHECK(Options[1] == "--std=c++17");
  CHECK(Options[2] == "-minimal");
  CHECK(Options[3] == "--ptxas-options=-v");
  CHECK(Options[4].rfind("-I/", 0) == 0);
  CHECK(defaultNvrtcOptions(9, 0) == Options);
  CHECK(defaultNvrtcOptions(10, 0)[0] == "--gpu-architecture=sm_100");
}

TEST_CASE("ptxas's report is read per kernel from the log", "[runtime][nvrtc]") {
  // A log as NVRTC 13 writes it with --ptxas-options=-v (two entries, a
  // warning before them), numbers chosen by hand.
  const char *Log = "k.cu(3): warning #177-D: variable \"col\" was declared but never "
                    "referenced\n"
                    "ptxas info    : 0 bytes gmem\n"
                    "ptxas info    : Compiling entry function 'jf_k0_add_p8' for 'sm_90'\n"
                    "ptxas info    : Function properties for jf_k0_add_p8\n"
                    "ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes "
                    "spill loads\n"
                    "ptxas info    : Used 255 registers, used 1 barriers, 36 bytes smem\n"
                    "ptxas info    : Compile time = 31.719 ms\n"
                    "ptxas info    : Compiling entry function 'jf_k0_add_v8' for 'sm_90'\n"
                    "ptxas info    : Function properties for jf_k0_add_v8\n"
                    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
                    "spill loads\n"
                    "ptxas info    : Used 64 registers, used 1 barriers, 36 bytes smem\n";
  std::vector<KernelResources> R = parsePtxasReport(Log);
  REQUIRE(R.size() == 2);
  CHECK(R[0].Name == "jf_k0_add_p8");
  CHECK(R[0].Registers == 255);
  CHECK(R[0].StackBytes == 24);
  CHECK(R[0].SpillStoreBytes == 8);
  CHECK(R[0].SpillLoadBytes == 12);
  CHECK(R[0].StaticSharedBytes == 36);
  CHECK(R[1].Name == "jf_k0_add_v8");
  CHECK(R[1].Registers == 64);
  CHECK(R[1].SpillStoreBytes == 0);
  CHECK(parsePtxasReport("").empty());
  CHECK(parsePtxasReport("ptxas info    : Used 12 registers\n").empty());

  // A real compile with the default options reports its one kernel.
  CompiledProgram P = compileCuda(kBf16Kernel, "scale_bf16.cu", defaultNvrtcOptions(9, 0));
  std::vector<KernelResources> Real = parsePtxasReport(P.Log);
  REQUIRE(Real.size() == 1);
  CHECK(Real[0].Name == "scale_bf16");
  CHECK(Real[0].Registers > 0);
  CHECK(Real[0].Registers <= 255);
  CHECK(Real[0].SpillStoreBytes == 0);

  // A kernel indexing a local array at run time gets a stack frame.
  const char *Stack = R"(
extern "C" __global__ void stacky(float *Out, const int *Idx) {
  float A[64];
  for (int K = 0; K < 64; ++K)
    A[Idx[K] & 63] = Out[K];
  for (int K = 0; K < 64; ++K)
    Out[K] = A[Idx[K + 64] & 63];
}
)";
  std::vector<KernelResources> S =
      parsePtxasReport(compileCuda(Stack, "stacky.cu", defaultNvrtcOptions(9, 0)).Log);
  REQUIRE(S.size() == 1);
  CHECK(S[0].Name == "stacky");
  CHECK(S[0].StackBytes >= 256);
}
