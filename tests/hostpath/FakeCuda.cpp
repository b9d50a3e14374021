//===- tests/hostpath/FakeCuda.cpp - a libcuda.so.1 with no GPU -----------===//
//
// Built as libcuda.so.1 in its own directory for jitfuse_hostpath_tests only:
// every entry point runtime/DriverFunctions.def resolves, answering like one
// sm_90 device with 132 SMs. Memory is fake addresses (never dereferenced),
// modules and functions are handles, and kernel launches and graph calls are
// recorded, not run. It lets the CPU suite drive Executable::run() through
// the real hot path to cuLaunchKernel. It allocates nothing after module
// loading, so the test's allocation count sees jitfuse alone.
//
//===----------------------------------------------------------------------===//
#include "FakeCuda.h"

#include <cuda.h>

#include <cstring>

namespace {

FakeCudaRecord Record;
thread_local CUcontext Current = nullptr;
CUdeviceptr NextAddress = 0x7f0000000000ull;
int ContextTag, GraphTag, ExecTag, StreamTag, EventTag;
constexpr int MaxFunctions = 4096;
FakeCudaFunction Functions[MaxFunctions];
int NumFunctions = 0;
CUgraphNode Nodes[MaxFunctions];
int NumNodes = 0;

void recordLaunch(CUfunction F, unsigned Gx, unsigned Bx, unsigned By, unsigned Shared,
                  void **Params) {
  FakeCudaLaunch &L = Record.Last;
  L.SharedBytes = Shared;
  L.Function = reinterpret_cast<const FakeCudaFunction *>(F);
  L.GridX = Gx;
  L.BlockX = Bx;
  L.BlockY = By;
  // The driver does not know the parameter count either (it reads the
  // kernel's signature); the test reads the values through the array.
  L.Params = Params;
}

} // namespace

extern "C" {

FakeCudaRecord *jitfuse_fake_cuda_record() { return &Record; }

CUresult cuGetErrorName(CUresult, const char **S) { *S = "CUDA_ERROR_FAKE"; return CUDA_SUCCESS; }
CUresult cuGetErrorString(CUresult, const char **S) { *S = "fake driver"; return CUDA_SUCCESS; }
CUresult cuInit(unsigned) { return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int *V) { *V = 13000; return CUDA_SUCCESS; }
// NVRTC itself opens libcuda.so.1 for some programs and asks for the
// driver's private export tables: without this symbol it called through a
// null pointer (a ladder add+RMSNorm crashed nvrtcCompileProgram).
CUresult cuGetExportTable(const void **Table, const CUuuid *) {
  *Table = nullptr;
  return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuDeviceGet(CUdevice *D, int Ordinal) { *D = Ordinal; return Ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
CUresult cuDeviceGetCount(int *N) { *N = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGetAttribute(int *V, CUdevice_attribute A, CUdevice) {
  switch (A) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *V = 9; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *V = 0; break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *V = 132; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *V = 1024; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *V = 48 << 10; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *V = 227 << 10; break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *V = 60 << 20; break;
  default: *V = 1; break;
  }
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *Name, int Len, CUdevice) {
  std::strncpy(Name, "jitfuse fake device", Len);
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem(size_t *B, CUdevice) { *B = size_t(80) << 30; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *C, CUdevice) {
  *C = reinterpret_cast<CUcontext>(&ContextTag);
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext C) { Current = C; return CUDA_SUCCESS; }
CUresult cuCtxGetCurrent(CUcontext *C) { *C = Current; return CUDA_SUCCESS; }
CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }

CUresult cuMemGetInfo(size_t *Free, size_t *Total) { *Free = *Total = size_t(80) << 30; return CUDA_SUCCESS; }
CUresult cuMemAlloc(CUdeviceptr *P, size_t Bytes) {
  *P = NextAddress;
  NextAddress += (Bytes + 4095) / 4096 * 4096 + 4096;
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr) { return CUDA_SUCCESS; }
CUresult cuMemcpyHtoD(CUdeviceptr, const void *, size_t) { return CUDA_SUCCESS; }
CUresult cuMemcpyDtoH(void *Dst, CUdeviceptr, size_t N) { std::memset(Dst, 0, N); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoD(CUdeviceptr, CUdeviceptr, size_t) { return CUDA_SUCCESS; }
CUresult cuMemcpyHtoDAsync(CUdeviceptr, const void *, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult cuMemcpyDtoHAsync(void *Dst, CUdeviceptr, size_t N, CUstream) { std::memset(Dst, 0, N); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoDAsync(CUdeviceptr, CUdeviceptr, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult cuMemsetD8(CUdeviceptr, unsigned char, size_t) { return CUDA_SUCCESS; }
CUresult cuMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream) { return CUDA_SUCCESS; }

CUresult cuModuleLoadData(CUmodule *M, const void *) {
  static int ModuleTag;
  *M = reinterpret_cast<CUmodule>(&ModuleTag);
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *F, CUmodule, const char *Name) {
  if (NumFunctions == MaxFunctions)
    return CUDA_ERROR_OUT_OF_MEMORY;
  FakeCudaFunction &Fn = Functions[NumFunctions++];
  std::strncpy(Fn.Name, Name, sizeof(Fn.Name) - 1);
  *F = reinterpret_cast<CUfunction>(&Fn);
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }
CUresult cuLaunchKernel(CUfunction F, unsigned Gx, unsigned, unsigned, unsigned Bx,
                        unsigned By, unsigned, unsigned Shared, CUstream, void **Params,
                        void **) {
  ++Record.Launches;
  recordLaunch(F, Gx, Bx, By, Shared, Params);
  return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int *V, CUfunction_attribute, CUfunction) { *V = 0; return CUDA_SUCCESS; }
CUresult cuFuncSetAttribute(CUfunction F, CUfunction_attribute A, int V) {
  // The H200's opt-in limit per block.
  if (A == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (V > 227 * 1024)
      return CUDA_ERROR_INVALID_VALUE;
    reinterpret_cast<FakeCudaFunction *>(F)->MaxDynamicShared = V;
  }
  return CUDA_SUCCESS;
}
// Blocks an SM for every kernel: a fixed answer the host-path tests
// compute their expected grids from (FakeResidentBlocksPerSm).
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *N, CUfunction, int, size_t) {
  *N = FakeResidentBlocksPerSm;
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunctionCount(unsigned *N, CUmodule) { *N = 0; return CUDA_SUCCESS; }
CUresult cuModuleEnumerateFunctions(CUfunction *, unsigned, CUmodule) { return CUDA_SUCCESS; }
CUresult cuFuncGetName(const char **Name, CUfunction F) {
  *Name = reinterpret_cast<const FakeCudaFunction *>(F)->Name;
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *S, unsigned) { *S = reinterpret_cast<CUstream>(&StreamTag); return CUDA_SUCCESS; }
CUresult cuStreamDestroy(CUstream) { return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult cuEventCreate(CUevent *E, unsigned) { *E = reinterpret_cast<CUevent>(&EventTag); return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventElapsedTime(float *Ms, CUevent, CUevent) { *Ms = 0; return CUDA_SUCCESS; }
CUresult cuEventDestroy(CUevent) { return CUDA_SUCCESS; }

CUresult cuStreamBeginCapture(CUstream, CUstreamCaptureMode) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuStreamEndCapture(CUstream, CUgraph *) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuGraphInstantiateWithFlags(CUgraphExec *E, CUgraph, unsigned long long) {
  *E = reinterpret_cast<CUgraphExec>(&ExecTag);
  return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec, CUstream) { ++Record.GraphLaunches; return CUDA_SUCCESS; }
CUresult cuGraphExecDestroy(CUgraphExec) { return CUDA_SUCCESS; }
CUresult cuGraphDestroy(CUgraph) { NumNodes = 0; return CUDA_SUCCESS; }
CUresult cuGraphCreate(CUgraph *G, unsigned) { *G = reinterpret_cast<CUgraph>(&GraphTag); return CUDA_SUCCESS; }
CUresult cuGraphAddKernelNode(CUgraphNode *N, CUgraph, const CUgraphNode *, size_t,
                              const CUDA_KERNEL_NODE_PARAMS *P) {
  if (NumNodes == MaxFunctions)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *N = reinterpret_cast<CUgraphNode>(&Nodes[NumNodes++]);
  recordLaunch(P->func, P->gridDimX, P->blockDimX, P->blockDimY, P->sharedMemBytes,
               P->kernelParams);
  return CUDA_SUCCESS;
}
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec, CUgraphNode,
                                        const CUDA_KERNEL_NODE_PARAMS *P) {
  ++Record.NodeUpdates;
  recordLaunch(P->func, P->gridDimX, P->blockDimX, P->blockDimY, P->sharedMemBytes,
               P->kernelParams);
  return CUDA_SUCCESS;
}
CUresult cuGraphNodeSetEnabled(CUgraphExec, CUgraphNode, unsigned) { return CUDA_SUCCESS; }

} // extern "C"
