//===- runtime/Memory.cpp - Device buffers, streams, events ---------------===//

#include "runtime/Memory.h"

#include "runtime/Driver.h"

#include <fmt/format.h>

#include <utility>

namespace jitfuse::rt {

DeviceBuffer::DeviceBuffer(size_t Size) {
  if (Size == 0)
    return;
  const Driver &D = Driver::get();
  D.check(D.api().cuMemAlloc(&Ptr, Size),
          fmt::format("cuMemAlloc({} bytes)", Size));
  Bytes = Size;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer &&Other) noexcept
    : Ptr(std::exchange(Other.Ptr, 0)), Bytes(std::exchange(Other.Bytes, 0)) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&Other) noexcept {
  if (this == &Other)
    return *this;
  reset();
  Ptr = std::exchange(Other.Ptr, 0);
  Bytes = std::exchange(Other.Bytes, 0);
  return *this;
}

void DeviceBuffer::reset() noexcept {
  if (Ptr)
    (void)Driver::get().api().cuMemFree(Ptr);
  Ptr = 0;
  Bytes = 0;
}

void copyToDevice(CUdeviceptr Dst, const void *Src, size_t Bytes) {
  if (Bytes == 0)
    return;
  const Driver &D = Driver::get();
  D.check(D.api().cuMemcpyHtoD(Dst, Src, Bytes),
          fmt::format("cuMemcpyHtoD({} bytes)", Bytes));
  D.check(D.api().cuStreamSynchronize(nullptr), "cuStreamSynchronize(legacy stream)");
}

void copyToHost(void *Dst, CUdeviceptr Src, size_t Bytes) {
  if (Bytes == 0)
    return;
  const Driver &D = Driver::get();
  D.check(D.api().cuMemcpyDtoH(Dst, Src, Bytes),
          fmt::format("cuMemcpyDtoH({} bytes)", Bytes));
}

void memsetD8(CUdeviceptr Dst, unsigned char Value, size_t Bytes) {
  if (Bytes == 0)
    return;
  const Driver &D = Driver::get();
  D.check(D.api().cuMemsetD8(Dst, Value, Bytes),
          fmt::format("cuMemsetD8({} bytes)", Bytes));
  D.check(D.api().cuStreamSynchronize(nullptr), "cuStreamSynchronize(legacy stream)");
}

void copyToDeviceAsync(CUdeviceptr Dst, const void *Src, size_t Bytes,
                       CUstream S) {
  if (Bytes == 0)
    return;
  const Driver &D = Driver::get();
  D.check(D.api().cuMemcpyHtoDAsync(Dst, Src, Bytes, S),
          fmt::format("cuMemcpyHtoDAsync({} bytes)", Bytes));
}

void copyToHostAsync(void *Dst, CUdeviceptr Src, size_t Bytes, CUstream S) {
  if (Bytes == 0)
    return;
  const Driver &D = Driver::get();
  D.check(D.api().cuMemcpyDtoHAsync(Dst, Src, Bytes, S),
          fmt::format("cuMemcpyDtoHAsync({} bytes)", Bytes));
}

void copyDeviceAsync(CUdeviceptr Dst, CUdeviceptr Src, size_t Bytes, CUstream S) {
  if (Bytes == 0)
    return;
  const Driver &D = Driver::get();
  D.check(D.api().cuMemcpyDtoDAsync(Dst, Src, Bytes, S),
          fmt::format("cuMemcpyDtoDAsync({} bytes)", Bytes));
}

void memsetD8Async(CUdeviceptr Dst, unsigned char Value, size_t Bytes,
                   CUstream S) {
  if (Bytes == 0)
    return;
  const Driver &D = Driver::get();
  D.check(D.api().cuMemsetD8Async(Dst, Value, Bytes, S),
          fmt::format("cuMemsetD8Async({} bytes)", Bytes));
}

Stream::Stream(unsigned Flags) {
  const Driver &D = Driver::get();
  D.check(D.api().cuStreamCreate(&Handle, Flags), "cuStreamCreate");
}

Stream::~Stream() { reset(); }

Stream::Stream(Stream &&Other) noexcept
    : Handle(std::exchange(Other.Handle, nullptr)) {}

Stream &Stream::operator=(Stream &&Other) noexcept {
  if (this == &Other)
    return *this;
  reset();
  Handle = std::exchange(Other.Handle, nullptr);
  return *this;
}

void Stream::reset() noexcept {
  if (Handle)
    (void)Driver::get().api().cuStreamDestroy(Handle);
  Handle = nullptr;
}

void Stream::synchronize() const {
  const Driver &D = Driver::get();
  D.check(D.api().cuStreamSynchronize(Handle), "cuStreamSynchronize");
}

Event::Event(unsigned Flags) {
  const Driver &D = Driver::get();
  D.check(D.api().cuEventCreate(&Handle, Flags), "cuEventCreate");
}

Event::~Event() { reset(); }

Event::Event(Event &&Other) noexcept
    : Handle(std::exchange(Other.Handle, nullptr)) {}

Event &Event::operator=(Event &&Other) noexcept {
  if (this == &Other)
    return *this;
  reset();
  Handle = std::exchange(Other.Handle, nullptr);
  return *this;
}

void Event::reset() noexcept {
  if (Handle)
    (void)Driver::get().api().cuEventDestroy(Handle);
  Handle = nullptr;
}

void Event::record(CUstream S) const {
  const Driver &D = Driver::get();
  D.check(D.api().cuEventRecord(Handle, S), "cuEventRecord");
}

void Event::synchronize() const {
  const Driver &D = Driver::get();
  D.check(D.api().cuEventSynchronize(Handle), "cuEventSynchronize");
}

float Event::elapsedMs(const Event &Start, const Event &End) {
  const Driver &D = Driver::get();
  float Ms = 0.0f;
  D.check(D.api().cuEventElapsedTime(&Ms, Start.Handle, End.Handle),
          "cuEventElapsedTime");
  return Ms;
}

} // namespace jitfuse::rt
