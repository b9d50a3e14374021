//===- runtime/Memory.h - Device buffers, streams, events -------*- C++ -*-===//
//
// Move-only RAII owners for driver objects. They act on the calling thread's
// current context (see primaryContext()); destructors never throw, so a
// failed free/destroy during unwinding is dropped rather than terminating.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda.h>

#include <cstddef>

namespace jitfuse::rt {

/// Device memory of a fixed size. Size 0 allocates nothing and has a null
/// pointer, so empty tensors need no special case.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t Bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&Other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&Other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  CUdeviceptr ptr() const { return Ptr; }
  size_t size() const { return Bytes; }
  bool empty() const { return Bytes == 0; }

private:
  void reset() noexcept;

  CUdeviceptr Ptr = 0;
  size_t Bytes = 0;
};

/// Copies and fills that are complete in device memory when they return,
/// so work on any stream, non-blocking ones included, sees them; 0 bytes
/// is a no-op. (cuMemcpyHtoD from pageable memory and cuMemsetD8 return
/// before the device is written, ordered only on the legacy stream, which
/// a CU_STREAM_NON_BLOCKING stream does not wait for.) copyToHost does not
/// wait for non-blocking streams either: synchronize the producer first.
void copyToDevice(CUdeviceptr Dst, const void *Src, size_t Bytes);
void copyToHost(void *Dst, CUdeviceptr Src, size_t Bytes);
void memsetD8(CUdeviceptr Dst, unsigned char Value, size_t Bytes);

/// Stream-ordered versions. Host memory must stay alive (and, for real
/// overlap, be pinned) until the stream reaches the copy.
void copyToDeviceAsync(CUdeviceptr Dst, const void *Src, size_t Bytes,
                       CUstream S);
void copyToHostAsync(void *Dst, CUdeviceptr Src, size_t Bytes, CUstream S);
void copyDeviceAsync(CUdeviceptr Dst, CUdeviceptr Src, size_t Bytes, CUstream S);
void memsetD8Async(CUdeviceptr Dst, unsigned char Value, size_t Bytes,
                   CUstream S);

class Stream {
public:
  /// Non-blocking by default: jitfuse work must not serialize against the
  /// legacy default stream of other libraries.
  explicit Stream(unsigned Flags = CU_STREAM_NON_BLOCKING);
  ~Stream();
  Stream(Stream &&Other) noexcept;
  Stream &operator=(Stream &&Other) noexcept;
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  CUstream get() const { return Handle; }
  void synchronize() const;

private:
  void reset() noexcept;

  CUstream Handle = nullptr;
};

class Event {
public:
  explicit Event(unsigned Flags = CU_EVENT_DEFAULT);
  ~Event();
  Event(Event &&Other) noexcept;
  Event &operator=(Event &&Other) noexcept;
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;

  CUevent get() const { return Handle; }
  void record(CUstream S) const;
  void synchronize() const;
  /// Milliseconds from \p Start to \p End; both must have been recorded and
  /// completed (synchronize End first).
  static float elapsedMs(const Event &Start, const Event &End);

private:
  void reset() noexcept;

  CUevent Handle = nullptr;
};

} // namespace jitfuse::rt
