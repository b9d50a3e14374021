//===- bench/probes/mix_w21.cu - hand variants of the mixed W21 kernel ----===//
//
// A design probe, not part of the library: the mixed LayerNorm-backward
// kernel (CompileOptions::MixOrderColumns: dx per row, dw and db as column
// partials of groups of rows) ran W21 (bf16 [16384, 4096]) in 167.6 us, the
// default two kernels in 172.6 and torch.compile in 160.9 (session 33).
// ncu: 3 blocks of 512 an SM, DRAM 44% of peak, issue slots 53% busy, 41% of
// the cycles between a warp's issues at a barrier. Its loop issues 340
// instructions a thread a row (static SASS, session 34): 48 of them the
// column terms' shared-memory read-modify-writes, 3 barriers.
//
// Before the code generator learns any of it, this probe times hand-written
// forms of the same kernel, each a switch of one template, against the
// generated kernel itself (mix_w21_generated.cuh, verbatim):
//   EndBar   the barrier at the end of each row (the generated kernel has it;
//            in the aligned variant a thread's column slots are its own,
//            and the block reductions' scratch is safe without it)
//   VecSmem  column slots laid out so a thread's 4 consecutive columns are
//            one 16-byte shared access (2 LDS.128 + 2 STS.128 a reduction
//            instead of 8 + 8)
//   Prefetch the next row's x, dy, mean and rstd loaded before this row's
//            reductions (61 registers: 2 blocks an SM)
//   Rpi      rows an iteration: 2 loads two rows, reduces their four sums
//            behind the same two barriers, and adds both rows' column terms
//            in one read-modify-write (in row order: the same bits)
// Every variant must give the generated kernel's bits (dx, dw, db); each is
// also checked against an fp64 reference. Times: median of 20 runs, L2
// flushed before each, variants interleaved over 3 rounds.
//
//   build (no GPU needed):  bench/probes/build.sh   -> gpu-carry/mix_w21_probe
//   run (GPU machine):      timeout 300 gpu-carry/mix_w21_probe [rows ...]
//
//===----------------------------------------------------------------------===//
#include <cuda_runtime.h>

#include "codegen/device/jitfuse_device.cuh"
#include "codegen/device/jitfuse_reduce.cuh"

#include "mix_w21_generated.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int H = 4096;             // row length
constexpr int T = 512;              // threads a block
constexpr int V = 8;                // bf16 columns a thread (one 16-byte chunk)
constexpr int NW = T / 32;          // warps a block
constexpr int MaxGroups = 512;      // launch::MixMaxGroups' default
constexpr int CombLanes = 32;       // launch::MixCombineLanes
constexpr int CombRows = 8;         // launch::MixCombineRows
constexpr int Combiners = 2 * H / CombLanes;

#define CHECK_CUDA(X)                                                                              \
  do {                                                                                             \
    cudaError_t E_ = (X);                                                                          \
    if (E_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #X, cudaGetErrorString(E_));     \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// The combining blocks, as generated (MixColumns.cpp's mixCombine).
__device__ __forceinline__ void combine(long long t, long long ng, float *partials,
                                        unsigned *counter, float *dw, float *db) {
  __shared__ float mct[CombRows][CombLanes];
  const int red = (int)(t / (H / CombLanes));
  const int lane = threadIdx.x % CombLanes;
  const int c = (int)(t % (H / CombLanes)) * CombLanes + lane;
  if (threadIdx.x == 0) {
    while (*(volatile unsigned *)(counter + 1) < (unsigned)ng)
      __nanosleep(256);
    __threadfence();
  }
  __syncthreads();
  for (int y = threadIdx.x / CombLanes; y < CombRows; y += T / CombLanes) {
    float a = 0.0f;
#pragma unroll 4
    for (long long g = y; g < ng; g += CombRows)
      a = a + __ldcg(partials + ((long long)red * ng + g) * H + c);
    mct[y][lane] = a;
  }
  __syncthreads();
  if (threadIdx.x < CombLanes) {
    float tot = mct[0][lane];
    for (int y = 1; y < CombRows; ++y)
      tot = tot + mct[y][lane];
    (red == 0 ? dw : db)[c] = tot;
  }
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(counter + 2, 1u) == (unsigned)Combiners - 1) {
    counter[0] = 0u;
    counter[1] = 0u;
    counter[2] = 0u;
  }
}

// Column c's slot among a reduction's H: the generated layout (lane K of
// thread t at K * H / V + t) or VecSmem's (lanes 4h..4h+3 of thread t at
// h * H / 2 + 4t + 0..3).
template <bool VecSmem> __device__ __forceinline__ int slotOf(int c) {
  const int t = c / V, k = c % V;
  return VecSmem ? (k / 4) * (H / 2) + t * 4 + k % 4 : k * (H / V) + t;
}

struct RowIn {
  jf_vec<jf_bf16, V> dy, x;
  float m, s;
};

__device__ __forceinline__ void loadRow(RowIn &R, const jf_bf16 *x, const jf_bf16 *dy,
                                        const float *mean, const float *rstd, long long row,
                                        long long col) {
  R.dy = jf_load<jf_bf16, V>(dy + row * H + col);
  R.x = jf_load<jf_bf16, V>(x + row * H + col);
  R.m = mean[row];
  R.s = rstd[row];
}

// Loaded values taken as new, so the compiler holds the 16-bit words, not
// their conversions, across the row (jf_fresh_vec, as generated).
__device__ __forceinline__ void fresh(RowIn &R) {
  jf_fresh_vec(R.dy);
  jf_fresh_vec(R.x);
  asm volatile("" : "+f"(R.m), "+f"(R.s));
}

template <bool EndBar, bool VecSmem, bool Prefetch, int Rpi, int MinB = 0>
__global__ void __launch_bounds__(T, MinB)
    mixk(const jf_bf16 *__restrict__ x, const jf_bf16 *__restrict__ dy,
         const jf_bf16 *__restrict__ w, const float *__restrict__ mean,
         const float *__restrict__ rstd, jf_bf16 *__restrict__ dx, float *__restrict__ dw,
         float *__restrict__ db, long long nrows, float *__restrict__ partials,
         unsigned *__restrict__ counter) {
  __shared__ float red[2 * Rpi][NW + 1];
  __shared__ __align__(16) float macc[2 * H];
  __shared__ unsigned ticket;
  const int tx = threadIdx.x;
  const long long rg = nrows <= MaxGroups ? 1 : (nrows + MaxGroups - 1) / MaxGroups;
  const long long ng = nrows > 0 ? (nrows + rg - 1) / rg : 0;
  if (tx == 0)
    ticket = atomicAdd(counter, 1u);
  __syncthreads();
  const long long b = ticket;
  if (b >= ng) {
    combine(b - ng, ng, partials, counter, dw, db);
    return;
  }
  for (int i = tx; i < 2 * H; i += T)
    macc[i] = 0.0f;
  __syncthreads();
  const long long r0 = b * rg;
  const long long r1 = nrows - r0 < rg ? nrows : r0 + rg;
  const long long col = (long long)tx * V;
  RowIn Next[Rpi];
  if (Prefetch)
    for (int q = 0; q < Rpi; ++q)
      loadRow(Next[q], x, dy, mean, rstd, r0 + q < r1 ? r0 + q : r0, col);
  for (long long r = r0; r < r1; r += Rpi) {
    bool ok[Rpi];
    RowIn In[Rpi];
    const jf_vec<jf_bf16, V> cw = jf_load<jf_bf16, V>(w + col);
#pragma unroll
    for (int q = 0; q < Rpi; ++q) {
      ok[q] = r + q < r1;
      if (Prefetch) {
        // The row after next issued first; this row's registers, loaded an
        // iteration ago, waited for only where first read.
        const long long n = r + Rpi + q;
        RowIn Later;
        loadRow(Later, x, dy, mean, rstd, n < r1 ? n : r, col);
        In[q] = Next[q];
        Next[q] = Later;
        fresh(In[q]);
      } else {
        loadRow(In[q], x, dy, mean, rstd, ok[q] ? r + q : r, col);
      }
    }
    float a1[Rpi], a2[Rpi];
#pragma unroll
    for (int q = 0; q < Rpi; ++q) {
      a1[q] = 0.0f;
      a2[q] = 0.0f;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float wdy = jf_bf16_to_float_mov(cw.V[k]) * jf_bf16_to_float_mov(In[q].dy.V[k]);
        const float xh = (jf_bf16_to_float_mov(In[q].x.V[k]) - In[q].m) * In[q].s;
        a1[q] = a1[q] + wdy * xh;
        a2[q] = a2[q] + wdy;
      }
    }
#pragma unroll
    for (int q = 0; q < Rpi; ++q) {
      jf_block_partial(a1[q], jf_add_op(), red[2 * q]);
      jf_block_partial(a2[q], jf_add_op(), red[2 * q + 1]);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 2 * Rpi; ++i)
      jf_block_combine<T>(jf_add_op(), 0.0f, red[i]);
    __syncthreads();
#pragma unroll
    for (int q = 0; q < Rpi; ++q) {
      if (!ok[q])
        continue;
      const float A = red[2 * q][NW] / (float)H, B = red[2 * q + 1][NW] / (float)H;
      jf_vec<jf_bf16, V> o;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float s = In[q].s;
        const float wdy = jf_bf16_to_float_mov(cw.V[k]) * jf_bf16_to_float_mov(In[q].dy.V[k]);
        const float xh = (jf_bf16_to_float_mov(In[q].x.V[k]) - In[q].m) * s;
        o.V[k] = jf_float_to_bf16(s * ((wdy - B) - xh * A));
      }
      jf_store<jf_bf16, V>(dx + (r + q) * H + col, o);
      fresh(In[q]);
    }
    // Column terms, both rows of an iteration in row order, computed where
    // they are added (dw: dy * xhat, db: dy).
    auto term = [&](int q, int k, bool W) {
      const float d = jf_bf16_to_float_mov(In[q].dy.V[k]);
      return W ? d * ((jf_bf16_to_float_mov(In[q].x.V[k]) - In[q].m) * In[q].s) : d;
    };
    if (VecSmem) {
      // dw's two 16-byte slots, then db's: 4 words live at a time.
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int h = i % 2;
        float4 *pv = reinterpret_cast<float4 *>(macc + (i / 2) * H + h * (H / 2) + tx * 4);
        float4 v = *pv;
#pragma unroll
        for (int q = 0; q < Rpi; ++q) {
          if (!ok[q])
            continue;
          v.x = v.x + term(q, 4 * h + 0, i < 2);
          v.y = v.y + term(q, 4 * h + 1, i < 2);
          v.z = v.z + term(q, 4 * h + 2, i < 2);
          v.w = v.w + term(q, 4 * h + 3, i < 2);
        }
        *pv = v;
      }
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) {
        float vw = macc[k * (H / V) + tx], vb = macc[H + k * (H / V) + tx];
#pragma unroll
        for (int q = 0; q < Rpi; ++q)
          if (ok[q]) {
            vw = vw + term(q, k, true);
            vb = vb + term(q, k, false);
          }
        macc[k * (H / V) + tx] = vw;
        macc[H + k * (H / V) + tx] = vb;
      }
    }
    if (EndBar)
      __syncthreads();
  }
  __syncthreads();
  for (int c = tx; c < H; c += T) {
    partials[((long long)0 * ng + b) * H + c] = macc[slotOf<VecSmem>(c)];
    partials[((long long)1 * ng + b) * H + c] = macc[H + slotOf<VecSmem>(c)];
  }
  __threadfence();
  __syncthreads();
  if (tx == 0)
    atomicAdd(counter + 1, 1u);
}

using KernelFn = void (*)(const jf_bf16 *, const jf_bf16 *, const jf_bf16 *, const float *,
                          const float *, jf_bf16 *, float *, float *, long long, float *,
                          unsigned *);

struct Variant {
  const char *Name;
  KernelFn Fn;
};

// The generated kernel's parameters are in input order (x, dy, w, mean,
// rstd; dx, dw, db; B; partials, counter): the same as mixk's.
const Variant Variants[] = {
    {"generated (157a69d)", jf_k0_cast_v8},
    {"template (statistics once)", mixk<true, false, false, 1>},
    {"no end-of-row barrier", mixk<false, false, false, 1>},
    {"+ 16-byte column slots", mixk<false, true, false, 1>},
    {"  the same, 3 blocks an SM", mixk<false, true, false, 1, 3>},
    {"+ next row prefetched", mixk<false, true, true, 1>},
    {"  the same, 3 blocks an SM", mixk<false, true, true, 1, 3>},
    {"2 rows an iteration", mixk<false, true, false, 2>},
    {"  the same, 2 blocks an SM", mixk<false, true, false, 2, 2>},
    {"2 rows, scalar slots", mixk<false, false, false, 2, 2>},
    {"2 rows + prefetch", mixk<false, true, true, 2, 2>},
};

float bf16ToFloat(uint16_t B) {
  uint32_t U = uint32_t(B) << 16;
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}
uint16_t floatToBf16(float F) { // round to nearest even (finite inputs)
  uint32_t U;
  std::memcpy(&U, &F, 4);
  U += 0x7FFF + ((U >> 16) & 1);
  return uint16_t(U >> 16);
}

struct Problem {
  long long R;
  std::vector<uint16_t> X, Dy, W;
  std::vector<float> Mean, Rstd;
  std::vector<double> RefDw, RefDb;
};

Problem makeProblem(long long R, uint64_t Seed) {
  Problem P;
  P.R = R;
  std::mt19937_64 Rng(Seed);
  std::normal_distribution<float> N(0.0f, 1.0f);
  P.X.resize(size_t(R) * H);
  P.Dy.resize(size_t(R) * H);
  P.W.resize(H);
  for (auto &E : P.X)
    E = floatToBf16(0.5f + 2.0f * N(Rng));
  for (auto &E : P.Dy)
    E = floatToBf16(N(Rng));
  for (auto &E : P.W)
    E = floatToBf16(1.0f + 0.1f * N(Rng));
  P.Mean.resize(R);
  P.Rstd.resize(R);
  P.RefDw.assign(H, 0.0);
  P.RefDb.assign(H, 0.0);
  for (long long r = 0; r < R; ++r) {
    double S = 0, S2 = 0;
    for (int c = 0; c < H; ++c) {
      double v = bf16ToFloat(P.X[r * H + c]);
      S += v;
      S2 += v * v;
    }
    double M = S / H, Var = S2 / H - M * M;
    P.Mean[r] = float(M);
    P.Rstd[r] = float(1.0 / std::sqrt(Var + 1e-5));
    for (int c = 0; c < H; ++c) {
      double d = bf16ToFloat(P.Dy[r * H + c]);
      double xh = (double(bf16ToFloat(P.X[r * H + c])) - P.Mean[r]) * P.Rstd[r];
      P.RefDw[c] += d * xh;
      P.RefDb[c] += d;
    }
  }
  return P;
}

double refDx(const Problem &P, long long r, int c) {
  double A = 0, B = 0;
  for (int k = 0; k < H; ++k) {
    double wdy = double(bf16ToFloat(P.W[k])) * bf16ToFloat(P.Dy[r * H + k]);
    double xh = (double(bf16ToFloat(P.X[r * H + k])) - P.Mean[r]) * P.Rstd[r];
    A += wdy * xh;
    B += wdy;
  }
  A /= H;
  B /= H;
  double wdy = double(bf16ToFloat(P.W[c])) * bf16ToFloat(P.Dy[r * H + c]);
  double xh = (double(bf16ToFloat(P.X[r * H + c])) - P.Mean[r]) * P.Rstd[r];
  return P.Rstd[r] * ((wdy - B) - xh * A);
}

struct Dev {
  uint16_t *X, *Dy, *W, *Dx;
  float *Mean, *Rstd, *Dw, *Db, *Partials;
  unsigned *Counter;
  long long R, Ng;
};

long long groupsOf(long long R) {
  long long Rg = R <= MaxGroups ? 1 : (R + MaxGroups - 1) / MaxGroups;
  return R > 0 ? (R + Rg - 1) / Rg : 0;
}

void launch(const Variant &Vt, const Dev &D, cudaStream_t S) {
  unsigned Blocks = unsigned(D.Ng + Combiners);
  Vt.Fn<<<Blocks, T, 0, S>>>((const jf_bf16 *)D.X, (const jf_bf16 *)D.Dy, (const jf_bf16 *)D.W,
                             D.Mean, D.Rstd, (jf_bf16 *)D.Dx, D.Dw, D.Db, D.R, D.Partials,
                             D.Counter);
  CHECK_CUDA(cudaGetLastError());
}

} // namespace

int main(int Argc, char **Argv) {
  std::vector<long long> Rows;
  for (int I = 1; I < Argc; ++I)
    Rows.push_back(std::atoll(Argv[I]));
  if (Rows.empty())
    Rows = {16384, 65536, 1001}; // 1001: groups of 2 rows, the last of 1
  cudaDeviceProp Prop;
  CHECK_CUDA(cudaGetDeviceProperties(&Prop, 0));
  std::printf("device: %s, %d SMs\n", Prop.name, Prop.multiProcessorCount);
  std::printf("%-26s %5s %13s\n", "variant", "regs", "blocks an SM");
  for (const Variant &Vt : Variants) {
    cudaFuncAttributes A;
    CHECK_CUDA(cudaFuncGetAttributes(&A, Vt.Fn));
    int Occ = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&Occ, Vt.Fn, T, 0));
    std::printf("%-26s %5d %13d\n", Vt.Name, A.numRegs, Occ);
  }
  const size_t FlushBytes = size_t(256) << 20;
  void *Flush;
  CHECK_CUDA(cudaMalloc(&Flush, FlushBytes));
  cudaStream_t S;
  CHECK_CUDA(cudaStreamCreate(&S));
  int Failures = 0;
  for (long long R : Rows) {
    Problem P = makeProblem(R, 20261205 + R);
    Dev D{};
    D.R = R;
    D.Ng = groupsOf(R);
    size_t NE = size_t(R) * H;
    CHECK_CUDA(cudaMalloc(&D.X, NE * 2));
    CHECK_CUDA(cudaMalloc(&D.Dy, NE * 2));
    CHECK_CUDA(cudaMalloc(&D.Dx, NE * 2));
    CHECK_CUDA(cudaMalloc(&D.W, H * 2));
    CHECK_CUDA(cudaMalloc(&D.Mean, R * 4));
    CHECK_CUDA(cudaMalloc(&D.Rstd, R * 4));
    CHECK_CUDA(cudaMalloc(&D.Dw, H * 4));
    CHECK_CUDA(cudaMalloc(&D.Db, H * 4));
    CHECK_CUDA(cudaMalloc(&D.Partials, size_t(2) * D.Ng * H * 4));
    CHECK_CUDA(cudaMalloc(&D.Counter, 16));
    CHECK_CUDA(cudaMemset(D.Counter, 0, 16));
    CHECK_CUDA(cudaMemcpy(D.X, P.X.data(), NE * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(D.Dy, P.Dy.data(), NE * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(D.W, P.W.data(), H * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(D.Mean, P.Mean.data(), R * 4, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(D.Rstd, P.Rstd.data(), R * 4, cudaMemcpyHostToDevice));

    // Correctness: every variant against fp64 (dw, db: every column; dx:
    // 16 rows), and its bits against the generated kernel's (a difference
    // within the fp64 bound is a contraction or order the compiler chose,
    // not a wrong sum; it is reported, and fails the probe).
    std::vector<uint16_t> BaseDx, Dx(NE);
    std::vector<float> BaseDw, BaseDb, Dw(H), Db(H);
    auto Fp64 = [&](const char *Name) {
      double ErrW = 0, ErrB = 0, ErrX = 0;
      for (int c = 0; c < H; ++c) {
        ErrW = std::max(ErrW, std::fabs(Dw[c] - P.RefDw[c]) / (1.0 + std::fabs(P.RefDw[c])));
        ErrB = std::max(ErrB, std::fabs(Db[c] - P.RefDb[c]) / (1.0 + std::fabs(P.RefDb[c])));
      }
      for (int K = 0; K < 16; ++K) {
        long long r = (R - 1) * K / 15;
        for (int c = 0; c < H; c += 97) {
          double Ref = refDx(P, r, c);
          ErrX = std::max(ErrX, std::fabs(bf16ToFloat(Dx[r * H + c]) - Ref) /
                                    (1e-2 + std::fabs(Ref)));
        }
      }
      // f32 sums of R terms (dw, db) and a bf16 output (dx, 2^-8 relative).
      bool Ok = ErrW < 1e-4 && ErrB < 1e-4 && ErrX < 1e-2;
      Failures += !Ok;
      std::printf("R %lld: %-26s vs fp64: dw %.2e, db %.2e, dx %.2e %s\n", R, Name, ErrW, ErrB,
                  ErrX, Ok ? "ok" : "FAILED");
    };
    for (size_t VI = 0; VI < std::size(Variants); ++VI) {
      CHECK_CUDA(cudaMemset(D.Dx, 0xFF, NE * 2));
      CHECK_CUDA(cudaMemset(D.Dw, 0xFF, H * 4));
      CHECK_CUDA(cudaMemset(D.Db, 0xFF, H * 4));
      CHECK_CUDA(cudaMemset(D.Counter, 0, 16));
      launch(Variants[VI], D, S);
      CHECK_CUDA(cudaStreamSynchronize(S));
      CHECK_CUDA(cudaMemcpy(Dx.data(), D.Dx, NE * 2, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(Dw.data(), D.Dw, H * 4, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(Db.data(), D.Db, H * 4, cudaMemcpyDeviceToHost));
      Fp64(Variants[VI].Name);
      if (VI == 0) {
        BaseDx = Dx;
        BaseDw = Dw;
        BaseDb = Db;
        continue;
      }
      size_t BadX = 0, BadW = 0, BadB = 0;
      for (size_t I = 0; I < NE; ++I)
        BadX += Dx[I] != BaseDx[I];
      for (int c = 0; c < H; ++c) {
        BadW += std::memcmp(&Dw[c], &BaseDw[c], 4) != 0;
        BadB += std::memcmp(&Db[c], &BaseDb[c], 4) != 0;
      }
      Failures += BadX + BadW + BadB != 0;
      if (BadX + BadW + BadB)
        std::printf("R %lld: %s: FAILED: %zu dx, %zu dw, %zu db elements differ from the "
                    "generated kernel's\n",
                    R, Variants[VI].Name, BadX, BadW, BadB);
    }

    // Timing.
    const int Rounds = 3, Iters = 20;
    std::vector<std::vector<float>> Us(std::size(Variants));
    cudaEvent_t E0[Iters], E1[Iters];
    for (int I = 0; I < Iters; ++I) {
      CHECK_CUDA(cudaEventCreate(&E0[I]));
      CHECK_CUDA(cudaEventCreate(&E1[I]));
    }
    for (int Round = 0; Round < Rounds; ++Round)
      for (size_t VI = 0; VI < std::size(Variants); ++VI) {
        for (int I = -2; I < Iters; ++I) {
          CHECK_CUDA(cudaMemsetAsync(Flush, I & 0xFF, FlushBytes, S));
          // Counters as a launch leaves them (a wrong variant's must not
          // stall the next: its combining blocks would wait on them).
          CHECK_CUDA(cudaMemsetAsync(D.Counter, 0, 16, S));
          if (I >= 0)
            CHECK_CUDA(cudaEventRecord(E0[I], S));
          launch(Variants[VI], D, S);
          if (I >= 0)
            CHECK_CUDA(cudaEventRecord(E1[I], S));
        }
        CHECK_CUDA(cudaStreamSynchronize(S));
        for (int I = 0; I < Iters; ++I) {
          float Ms;
          CHECK_CUDA(cudaEventElapsedTime(&Ms, E0[I], E1[I]));
          Us[VI].push_back(1000.0f * Ms);
        }
      }
    // Minimal bytes: x, dy read, dx written, w, mean, rstd, dw, db.
    double Bytes = double(NE) * 6 + H * 2 + R * 8 + H * 8;
    double Base = 0;
    std::printf("R %lld (%.0f MB):\n", R, Bytes / 1e6);
    for (size_t VI = 0; VI < std::size(Variants); ++VI) {
      std::vector<float> &U = Us[VI];
      std::sort(U.begin(), U.end());
      double Med = U[U.size() / 2];
      if (VI == 0)
        Base = Med;
      std::printf("  %-26s %8.1f us (min %8.1f) %6.2f TB/s  %.3fx\n", Variants[VI].Name, Med,
                  U.front(), Bytes / Med / 1e6, Base / Med);
    }
    for (int I = 0; I < Iters; ++I) {
      cudaEventDestroy(E0[I]);
      cudaEventDestroy(E1[I]);
    }
    for (void *Ptr : {(void *)D.X, (void *)D.Dy, (void *)D.Dx, (void *)D.W, (void *)D.Mean,
                      (void *)D.Rstd, (void *)D.Dw, (void *)D.Db, (void *)D.Partials,
                      (void *)D.Counter})
      CHECK_CUDA(cudaFree(Ptr));
  }
  std::printf("%s\n", Failures ? "mix_w21_probe: FAILED" : "mix_w21_probe: all variants agree");
  return Failures ? 1 : 0;
}
