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
  REQUIRE(Options.size() == 4);
  CHECK(Options[0] == "--gpu-architecture=sm_90");
  CHECK(Options[1] == "--std=c++17");
  CHECK(Options[2] == "-minimal");
  CHECK(Options[3].rfind("-I/", 0) == 0);
  CHECK(defaultNvrtcOptions(9, 0) == Options);
  CHECK(defaultNvrtcOptions(10, 0)[0] == "--gpu-architecture=sm_100");
}
