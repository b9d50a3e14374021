// The dlopen'ed driver. These tests pass with or without a GPU: without one
// they check the "unavailable" paths, with one the basic device queries.
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/Memory.h"
#include "runtime/Module.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace jitfuse;
using namespace jitfuse::rt;

TEST_CASE("Driver::get reports availability with a reason",
          "[runtime][driver]") {
  const Driver &D = Driver::get();
  CHECK(&D == &Driver::get());
  if (D.available()) {
    CHECK(D.unavailableReason().empty());
    CHECK(D.version() > 0);
    CHECK(deviceCount() >= 0);
    return;
  }
  INFO(D.unavailableReason());
  REQUIRE_FALSE(D.unavailableReason().empty());
  // Either dlopen failed or cuInit did; both are about libcuda.
  bool MentionsDriver =
      D.unavailableReason().find("libcuda") != std::string::npos ||
      D.unavailableReason().find("cuInit") != std::string::npos;
  CHECK(MentionsDriver);
  CHECK_THROWS_AS(D.api(), Error);
  CHECK_THROWS_WITH(D.api(), Catch::Contains(D.unavailableReason()));
  CHECK_THROWS_WITH(deviceCount(), Catch::Contains("unavailable"));
  CHECK_THROWS_AS(queryDevice(0), Error);
  CHECK_THROWS_AS(primaryContext(0), Error);
  CHECK_THROWS_AS(DeviceBuffer(16), Error);
  CHECK_THROWS_AS(Stream(), Error);
}

TEST_CASE("A missing driver library is named in the reason",
          "[runtime][driver]") {
  Driver D("libjitfuse-no-such-driver.so.1");
  CHECK_FALSE(D.available());
  CHECK(D.unavailableReason().find(
            "libjitfuse-no-such-driver.so.1 not found") != std::string::npos);
  CHECK_THROWS_WITH(D.api(), Catch::Contains("libjitfuse-no-such-driver.so.1"));
  // check() still formats errors without a driver.
  CHECK_NOTHROW(D.check(CUDA_SUCCESS, "nothing"));
  CHECK_THROWS_WITH(
      D.check(CUDA_ERROR_INVALID_IMAGE, "cuModuleLoadData"),
      Catch::Contains("cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE"));
  CHECK_THROWS_WITH(D.check(static_cast<CUresult>(12345), "cuFoo"),
                    Catch::Contains("cuFoo failed: CUresult 12345"));
}

TEST_CASE("The toolkit's stub libcuda resolves every entry point",
          "[runtime][driver]") {
  // The stub exports the full driver API but cannot initialize; loading it
  // exercises symbol resolution and the cuInit failure path on any machine.
  const char *Stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(Stub)) {
    WARN("no CUDA stub library at " << Stub << "; skipping");
    return;
  }
  Driver D(Stub);
  INFO(D.unavailableReason());
  CHECK_FALSE(D.available());
  CHECK(D.unavailableReason().find("lacks driver entry points") ==
        std::string::npos);
  CHECK(D.unavailableReason().rfind("cuInit failed: CUDA_ERROR_STUB_LIBRARY",
                                    0) == 0);
}

TEST_CASE("Device queries reject out-of-range ordinals", "[runtime][driver]") {
  const Driver &D = Driver::get();
  if (!D.available()) {
    CHECK_THROWS_AS(queryDevice(7), Error);
    return;
  }
  int Count = deviceCount();
  CHECK_THROWS_WITH(queryDevice(Count),
                    Catch::Contains(std::to_string(Count) + " device"));
  CHECK_THROWS_WITH(queryDevice(-1), Catch::Contains("does not exist"));
  if (Count == 0)
    return;
  DeviceInfo Info = queryDevice(0);
  CHECK_FALSE(Info.Name.empty());
  CHECK(Info.SmMajor >= 5);
  CHECK(Info.SmCount > 0);
  CHECK(Info.MaxThreadsPerBlock >= 1024);
  CHECK(Info.archName().rfind("sm_", 0) == 0);
  CHECK(primaryContext(0) != nullptr);
  CHECK(primaryContext(0) == primaryContext(0));
}

TEST_CASE("Runtime objects that need no driver work without one",
          "[runtime][driver]") {
  DeviceBuffer Empty(0);
  CHECK(Empty.ptr() == 0);
  CHECK(Empty.empty());
  DeviceBuffer Moved = std::move(Empty);
  CHECK(Moved.size() == 0);
  // Zero-byte copies are no-ops and never reach the driver.
  CHECK_NOTHROW(copyToDevice(0, nullptr, 0));
  CHECK_NOTHROW(copyToHost(nullptr, 0, 0));
  CHECK_NOTHROW(memsetD8(0, 0, 0));

  CHECK(isImageError(CUDA_ERROR_INVALID_IMAGE));
  CHECK(isImageError(CUDA_ERROR_NO_BINARY_FOR_GPU));
  CHECK_FALSE(isImageError(CUDA_ERROR_OUT_OF_MEMORY));
  CHECK_FALSE(isImageError(CUDA_SUCCESS));
  CHECK_THROWS_AS(Module(llvm::ArrayRef<char>()), ImageError);
}
