//===- tests/hostpath/HostPath.h - the host-path tests' helpers -*- C++ -*-===//
//
// Shared by the host-path test files (one binary, run with the fake
// libcuda.so.1 beside it): the fake driver's record, W8's executable and
// its runs, the parameter checks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FakeCuda.h"

#include "driver/Compiler.h"
#include "ir/NN.h"
#include "runtime/Driver.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace jitfuse::hostpath {


inline FakeCudaRecord &fake() {
  // The fake exports its record; the real driver does not, so a run that
  // picked up a real libcuda.so.1 fails here instead of testing it.
  static FakeCudaRecord *R = [] {
    void *H = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *Sym = H ? ::dlsym(H, "jitfuse_fake_cuda_record") : nullptr;
    return Sym ? reinterpret_cast<FakeCudaRecord *(*)()>(Sym)() : nullptr;
  }();
  return *R;
}

inline bool haveFake() {
  if (!rt::Driver::get().available())
    return false;
  return ::dlsym(RTLD_DEFAULT, "jitfuse_fake_cuda_record") ||
         [] {
           void *H = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
           return H && ::dlsym(H, "jitfuse_fake_cuda_record");
         }();
}

/// Fails the case unless the fake driver serves this process: without it
/// the cases would launch on a real GPU or on none.
inline void requireFake() {
  if (!haveFake())
    FAIL("the fake libcuda.so.1 is not loaded; run through ctest (LD_LIBRARY_PATH)");
}

inline constexpr int64_t H = 4096;

/// W8's graph: r = x + residual; y = rmsNorm(r, w, eps), bf16 [B, Len];
/// one kernel with parameters x, residual, w, r, y, eps, B.
inline Graph addRmsNormGraph(int64_t Len, DType T = DType::BF16) {
  Graph G;
  Value X = G.input("x", T, {"B", Len});
  Value Res = G.input("residual", T, {"B", Len});
  Value W = G.input("weight", T, {Len});
  Value Eps = G.scalar("eps", DType::F32);
  Value R = X + Res;
  G.output("residual_out", R);
  G.output("y", nn::rmsNorm(R, W, Eps));
  return G;
}

/// addRmsNormGraph compiled under the options named.
inline Executable compileAddRmsNorm(bool Peel = true, int64_t Len = H, bool RowShared = false,
                             bool WideRows = true, bool StageInputs = true,
                             bool WideCache = true, bool PhaseLoop = false) {
  Graph G = addRmsNormGraph(Len);
  Compiler C;
  CompileOptions Opts;
  Opts.PeelAlignment = Peel;
  Opts.RowSharedMemory = RowShared;
  Opts.RowWideRows = WideRows;
  Opts.RowCacheStageInputs = StageInputs;
  Opts.RowCacheWideThreads = WideCache;
  Opts.RowPhaseLoop = PhaseLoop;
  return C.compile(G, Opts);
}

/// Runs compileAddRmsNorm's executable \p X over \p Rows rows with x at
/// byte offset \p Offset; the launch the fake driver saw.
inline const FakeCudaLaunch &runRows(Executable &X, int64_t Rows, int Offset) {
  CUdeviceptr In[] = {0x100000 + CUdeviceptr(Offset), 0x200000, 0x300000};
  CUdeviceptr Out[] = {0x400000, 0x500000};
  double Eps[] = {1e-6};
  int64_t Dims[] = {Rows};
  X.run(In, Out, Eps, Dims);
  return fake().Last;
}

/// Runs addRmsNormGraph's executable \p X over \p Rows rows with its
/// tensors at these byte offsets; the launch the fake driver saw.
inline const FakeCudaLaunch &runAtOffsets(Executable &X, unsigned XOff, unsigned Res, unsigned W,
                                          unsigned ResOut, unsigned Y, int64_t Rows = 16384) {
  CUdeviceptr In[] = {0x100000 + CUdeviceptr(XOff), 0x200000 + CUdeviceptr(Res),
                      0x300000 + CUdeviceptr(W)};
  CUdeviceptr Out[] = {0x400000 + CUdeviceptr(ResOut), 0x500000 + CUdeviceptr(Y)};
  double Eps[] = {1e-6};
  int64_t Dims[] = {Rows};
  X.run(In, Out, Eps, Dims);
  return fake().Last;
}

inline uint64_t param(const FakeCudaLaunch &L, int I) {
  uint64_t V = 0;
  std::memcpy(&V, L.Params[I], sizeof(V));
  return V;
}

/// The last launch's 7 parameter slots hold exactly these values (in any
/// order: the kernel's parameter order is codegen's business).
inline void requireParams(const FakeCudaLaunch &L, std::vector<uint64_t> Expected) {
  std::vector<uint64_t> Got;
  for (int I = 0; I < 7; ++I)
    Got.push_back(param(L, I));
  // A float scalar fills the low 4 bytes of its 8-byte slot.
  for (uint64_t &V : Got)
    if (V >> 32 == 0 && V != 0 && std::find(Expected.begin(), Expected.end(), V) == Expected.end())
      V &= 0xffffffffu;
  std::sort(Got.begin(), Got.end());
  std::sort(Expected.begin(), Expected.end());
  REQUIRE(Got == Expected);
}

inline uint64_t floatBits(float F) {
  uint32_t B;
  std::memcpy(&B, &F, 4);
  return B;
}

inline std::string suffix(const FakeCudaLaunch &L) {
  std::string N = L.Function->Name;
  return N.substr(N.rfind('_'));
}

/// W8's row kernel over [B, 4096] bf16 (parameters x, residual, w, r, y,
/// eps, B) and an independent element-wise kernel over [N, 1000] f32
/// (parameters z, z2, N): two parts of one horizontal launch.
inline Graph rowAndFlatParts() {
  Graph G;
  Value X = G.input("x", DType::BF16, {"B", H});
  Value Res = G.input("residual", DType::BF16, {"B", H});
  Value W = G.input("weight", DType::BF16, {H});
  Value Eps = G.scalar("eps", DType::F32);
  Value Z = G.input("z", DType::F32, {"N", 1000});
  Value R = X + Res;
  G.output("residual_out", R);
  G.output("y", nn::rmsNorm(R, W, Eps));
  G.output("z2", Z * 2.0);
  return G;
}


} // namespace jitfuse::hostpath
