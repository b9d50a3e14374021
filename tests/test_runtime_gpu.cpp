// End-to-end on a real GPU: NVRTC -> KernelCache -> Module -> launch -> copy
// back. Every test returns early (and passes) where no driver is present, so
// the suite stays CPU-only; on the GPU machine these are the smoke tests of
// the driver paths the CPU tests cannot reach.
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/KernelCache.h"
#include "runtime/Memory.h"
#include "runtime/Module.h"
#include "runtime/Nvrtc.h"

#include "support/Error.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <vector>

using namespace jitfuse;
using namespace jitfuse::rt;

namespace {

const char *kScaleKernel = R"(
extern "C" __global__ void scale(const float *In, float *Out, float Alpha, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Out[I] = Alpha * In[I];
}
)";

/// Device 0 made current, or nullopt (test passes vacuously) without a GPU.
std::optional<DeviceInfo> gpuOrSkip() {
  if (!Driver::get().available() || deviceCount() == 0)
    return std::nullopt;
  primaryContext(0);
  return queryDevice(0);
}

} // namespace

TEST_CASE("GPU: compile, cache, load and launch a kernel", "[runtime][gpu]") {
  std::optional<DeviceInfo> Dev = gpuOrSkip();
  if (!Dev)
    return;

  std::string Pattern =
      (std::filesystem::temp_directory_path() / "jitfuse-gpu-test-XXXXXX")
          .string();
  REQUIRE(::mkdtemp(Pattern.data()) != nullptr);
  CacheConfig Config;
  Config.Dir = Pattern;
  KernelCache Cache(Config);

  CacheKeyParts Parts{kScaleKernel,
                      defaultNvrtcOptions(Dev->SmMajor, Dev->SmMinor),
                      nvrtcVersionString(), Dev->archName()};
  auto Compile = [&] {
    CompiledProgram P = compileCuda(Parts.Source, "scale.cu", Parts.Options);
    return CacheEntry{std::move(P.Cubin), std::move(P.Log), {}, {}};
  };
  bool Hit = true;
  auto Entry = Cache.getOrCompile(Parts, Compile, &Hit);
  CHECK_FALSE(Hit);

  Module M(Entry->Image, {"scale"});
  CUfunction F = M.function("scale");
  REQUIRE(F != nullptr);
  CHECK_THROWS_WITH(M.function("no_such_kernel"),
                    Catch::Contains("no_such_kernel") &&
                        Catch::Contains("scale"));

  const int N = 1000;
  std::vector<float> In(N), Out(N, -1.0f);
  for (int I = 0; I < N; ++I)
    In[I] = static_cast<float>(I);
  DeviceBuffer DIn(N * sizeof(float)), DOut(N * sizeof(float));
  copyToDevice(DIn.ptr(), In.data(), N * sizeof(float));
  memsetD8(DOut.ptr(), 0, N * sizeof(float));

  Stream S;
  Event Start, End;
  Start.record(S.get());
  CUdeviceptr InPtr = DIn.ptr(), OutPtr = DOut.ptr();
  float Alpha = 2.5f;
  int Count = N;
  void *Args[] = {&InPtr, &OutPtr, &Alpha, &Count};
  launchKernel(F, {(N + 255) / 256, 1, 1}, {256, 1, 1}, 0, S.get(), Args);
  End.record(S.get());
  End.synchronize();
  CHECK(Event::elapsedMs(Start, End) >= 0.0f);

  copyToHostAsync(Out.data(), DOut.ptr(), N * sizeof(float), S.get());
  S.synchronize();
  for (int I = 0; I < N; ++I)
    REQUIRE(Out[I] == 2.5f * static_cast<float>(I));

  // Too many threads per block is a launch error naming the configuration.
  CHECK_THROWS_WITH(launchKernel(F, {1, 1, 1}, {4096, 1, 1}, 0, S.get(), Args),
                    Catch::Contains("cuLaunchKernel") &&
                        Catch::Contains("4096x1x1"));

  // A fresh cache (a new process) loads the same CUBIN from disk.
  KernelCache Fresh(Config);
  auto Again = Fresh.getOrCompile(Parts, Compile, &Hit);
  CHECK(Hit);
  CHECK(Again->Image == Entry->Image);
  std::filesystem::remove_all(Pattern);
}

TEST_CASE("GPU: a CUBIN for another architecture is an ImageError",
          "[runtime][gpu]") {
  std::optional<DeviceInfo> Dev = gpuOrSkip();
  if (!Dev)
    return;
  // An sm_90 CUBIN does not run on newer majors, nor an sm_100 one on Hopper.
  int OtherMajor = Dev->SmMajor >= 10 ? 9 : 10;
  CompiledProgram P =
      compileCuda(kScaleKernel, "scale.cu", defaultNvrtcOptions(OtherMajor, 0));
  try {
    Module M(P.Cubin);
    FAIL("the driver loaded a CUBIN for sm_" << OtherMajor << "0");
  } catch (const ImageError &E) {
    CHECK(isImageError(E.result()));
    CHECK(std::string(E.what()).find("cuModuleLoadData") != std::string::npos);
  }
}

TEST_CASE("GPU: every device's primary context can be made current",
          "[runtime][gpu]") {
  if (!gpuOrSkip())
    return;
  int Count = deviceCount();
  for (int I = 0; I < Count; ++I) {
    CUcontext Ctx = primaryContext(I);
    CUcontext Current = nullptr;
    const Driver &D = Driver::get();
    D.check(D.api().cuCtxGetCurrent(&Current), "cuCtxGetCurrent");
    CHECK(Current == Ctx);
    DeviceBuffer B(256);
    CHECK(B.ptr() != 0);
    DeviceBuffer Moved = std::move(B);
    CHECK(B.ptr() == 0);
    CHECK(Moved.size() == 256);
  }
  primaryContext(0);
  CHECK_THROWS_WITH(primaryContext(Count),
                    Catch::Contains(std::to_string(Count) + " device"));
}
