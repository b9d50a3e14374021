// jitfuse device helpers, prepended to every generated program.
// Kept free of CUDA headers (cuda_fp16.h/cuda_bf16.h cost ~25 ms of NVRTC
// time per program): half types are stored as raw 16-bit words and converted
// with PTX cvt instructions.
typedef unsigned short jf_f16;   // IEEE binary16 bits
typedef unsigned short jf_bf16;  // bfloat16 bits
typedef unsigned char jf_bool;

__device__ __forceinline__ float jf_f16_to_float(jf_f16 H) {
  float F;
  asm("cvt.f32.f16 %0, %1;" : "=f"(F) : "h"(H));
  return F;
}
// The same, kept where the source puts it (asm volatile), for element-wise
// rows that branch on a concat piece (RoPE's halves; codegen Emitter): NVVM
// hoisted both branches' common q load and its cvt above the branch, so the
// cvt waited for that load before the chunk's other loads were issued (two
// memory latencies a thread). Pinned, the SASS issues every load first, as
// bf16's does: f16 RoPE 1.12x (median of 9 points, up to 1.16x at 16384 x
// 6144); in row kernels it gained nothing (BENCHMARKS.md, session 18).
__device__ __forceinline__ float jf_f16_to_float_pinned(jf_f16 H) {
  float F;
  asm volatile("cvt.f32.f16 %0, %1;" : "=f"(F) : "h"(H));
  return F;
}
__device__ __forceinline__ jf_f16 jf_float_to_f16(float F) {
  jf_f16 H;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(H) : "f"(F));
  return H;
}
__device__ __forceinline__ float jf_bf16_to_float(jf_bf16 H) {
  return __uint_as_float(((unsigned)H) << 16);
}
// The same by a PTX move (the bits in the high half), for rows kept in
// registers (codegen): NVVM treats the shift as free to hoist, so such a
// bf16 row was widened once and held as f32 across the block reductions
// (LayerNorm bf16 x 6144: 114 registers, 2 blocks an SM, 0.75x
// torch.compile), where the f16 row, converted by cvt at each use, needed
// 64; with the move, 64. Element-wise kernels keep the shift: the move made
// bf16 RoPE 1.2x slower (BENCHMARKS.md schedule log).
__device__ __forceinline__ float jf_bf16_to_float_mov(jf_bf16 H) {
  float F;
  asm("mov.b32 %0, {0, %1};" : "=f"(F) : "h"(H));
  return F;
}
__device__ __forceinline__ jf_bf16 jf_float_to_bf16(float F) {
  jf_bf16 H;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(H) : "f"(F));
  return H;
}
// double -> f32 rounded to odd: truncate, then set the last bit when the
// truncation was inexact. A second rounding of that f32 to nearest even in a
// type with at most 22 significant bits (bf16, f16) then equals rounding the
// double directly (Boldo & Melquiond, "Emulation of FMA and correctly rounded
// sums: proved algorithms using rounding to odd", 2008); plain
// double -> float -> half rounds twice (1 + 2^-11 + 2^-40 became 1 in f16).
// Inf, NaN, signed zero and values past the f32 range (truncated to FLT_MAX,
// whose last bit is already set, so they still overflow to Inf) stay right.
__device__ __forceinline__ float jf_f64_to_f32_odd(double D) {
  float F;
  asm("cvt.rz.f32.f64 %0, %1;" : "=f"(F) : "d"(D));
  if ((double)F != D)
    F = __uint_as_float(__float_as_uint(F) | 1u);
  return F;
}
__device__ __forceinline__ float jf_f64_to_bf16_f(double D) {
  return jf_bf16_to_float(jf_float_to_bf16(jf_f64_to_f32_odd(D)));
}
__device__ __forceinline__ float jf_f64_to_f16_f(double D) {
  return jf_f16_to_float(jf_float_to_f16(jf_f64_to_f32_odd(D)));
}

// Aligned vector of N elements; a load/store of one is one wide access.
template <typename T, int N> struct alignas(sizeof(T) * N) jf_vec {
  T V[N];
};
// H: the L2 eviction priority of a row re-read per stage (KernelPlan::
// RowL2Hints): 0 none, 1 evict_last (a stage that the row's next stage
// reads again), 2 evict_first (its last read). Only wide accesses of 4, 8
// and 16 bytes carry it (sm_80+: createpolicy); a row's head and tail
// elements load plainly.
// The policy is created once (NVVM merges the identical asm); the loads are
// not volatile, so they schedule like plain loads.
template <int H> __device__ __forceinline__ unsigned long long jf_l2_policy() {
  unsigned long long Pol;
  if constexpr (H == 1)
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(Pol));
  else
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(Pol));
  return Pol;
}
template <int H> __device__ __forceinline__ uint4 jf_ld16(const void *P) {
  uint4 R;
  asm("ld.global.L1::no_allocate.L2::cache_hint.v4.b32 {%0, %1, %2, %3}, [%4], %5;"
      : "=r"(R.x), "=r"(R.y), "=r"(R.z), "=r"(R.w)
      : "l"(P), "l"(jf_l2_policy<H>()));
  return R;
}
template <int H> __device__ __forceinline__ uint2 jf_ld8(const void *P) {
  uint2 R;
  asm("ld.global.L1::no_allocate.L2::cache_hint.v2.b32 {%0, %1}, [%2], %3;"
      : "=r"(R.x), "=r"(R.y)
      : "l"(P), "l"(jf_l2_policy<H>()));
  return R;
}
template <int H> __device__ __forceinline__ unsigned jf_ld4(const void *P) {
  unsigned R;
  asm("ld.global.L1::no_allocate.L2::cache_hint.b32 %0, [%1], %2;"
      : "=r"(R)
      : "l"(P), "l"(jf_l2_policy<H>()));
  return R;
}
template <typename T, int N, int H = 0>
__device__ __forceinline__ jf_vec<T, N> jf_load(const T *P) {
  constexpr int B = sizeof(jf_vec<T, N>);
  if constexpr (H != 0 && (B == 16 || B == 8 || B == 4)) {
    jf_vec<T, N> V;
    if constexpr (B == 16)
      *reinterpret_cast<uint4 *>(&V) = jf_ld16<H>(P);
    else if constexpr (B == 8)
      *reinterpret_cast<uint2 *>(&V) = jf_ld8<H>(P);
    else
      *reinterpret_cast<unsigned *>(&V) = jf_ld4<H>(P);
    return V;
  } else {
    return *reinterpret_cast<const jf_vec<T, N> *>(P);
  }
}
template <typename T, int N>
__device__ __forceinline__ void jf_store(T *P, const jf_vec<T, N> &V) {
  *reinterpret_cast<jf_vec<T, N> *>(P) = V;
}

// Peeled kernels walk chunks of N elements aligned to one lead tensor, so
// any pointer offset and any row length keep wide accesses. Lanes [Lo, Hi)
// of a chunk are inside the domain (the head and tail chunks of a row are
// partial); another tensor at the same coordinates may still be misaligned
// (a weight row under an odd-length row), so each access checks its own
// address: one wide access when the chunk is whole and aligned, else one
// guarded access per lane. Lanes outside [Lo, Hi) read as 0 and are never
// stored or reduced.
template <typename T, int N>
__device__ __forceinline__ bool jf_chunk_wide(const T *P, int Lo, int Hi) {
  return Lo == 0 && Hi == N &&
         (reinterpret_cast<unsigned long long>(P) % sizeof(jf_vec<T, N>)) == 0;
}
// A range's head or tail chunk: lanes [Lo, Hi) only (no L2 hint H).
template <typename T, int N, int H = 0>
__device__ __forceinline__ jf_vec<T, N> jf_load_part(const T *P, int Lo, int Hi) {
  jf_vec<T, N> R;
#pragma unroll
  for (int K = 0; K < N; ++K)
    R.V[K] = (K >= Lo && K < Hi) ? P[K] : T(0);
  return R;
}
template <typename T, int N>
__device__ __forceinline__ void jf_store_part(T *P, const jf_vec<T, N> &V, int Lo, int Hi) {
#pragma unroll
  for (int K = 0; K < N; ++K)
    if (K >= Lo && K < Hi)
      P[K] = V.V[K];
}
// Bytes O .. O+15 (O < 16) of the 32 bytes X:Y (X first, little-endian),
// without indexing registers at run time.
__device__ __forceinline__ uint4 jf_window16(const uint4 &X, const uint4 &Y, unsigned O) {
  const bool Two = O & 8, One = O & 4;
  const unsigned V0 = Two ? X.z : X.x, V1 = Two ? X.w : X.y, V2 = Two ? Y.x : X.z,
                 V3 = Two ? Y.y : X.w, V4 = Two ? Y.z : Y.x, V5 = Two ? Y.w : Y.y;
  const unsigned U0 = One ? V1 : V0, U1 = One ? V2 : V1, U2 = One ? V3 : V2,
                 U3 = One ? V4 : V3, U4 = One ? V5 : V4;
  const unsigned R = (O & 3) * 8; // bits; 0 leaves the low word
  return make_uint4(__funnelshift_r(U0, U1, R), __funnelshift_r(U1, U2, R),
                    __funnelshift_r(U2, U3, R), __funnelshift_r(U3, U4, R));
}
// KernelPlan::RowPhaseLoop: a value the compiler must take as new at this
// point (an empty asm that may change it), so that nothing computed from it
// in a loop is hoisted out of the loop and held in registers across it.
__device__ __forceinline__ int jf_fresh(int V) {
  asm volatile("" : "+r"(V));
  return V;
}
template <typename T, int N> __device__ __forceinline__ void jf_fresh_vec(jf_vec<T, N> &V) {
  if constexpr (sizeof(V) % 4 == 0) {
    unsigned *W = reinterpret_cast<unsigned *>(&V);
#pragma unroll
    for (int K = 0; K < int(sizeof(V) / 4); ++K)
      asm volatile("" : "+r"(W[K]));
  } else if constexpr (sizeof(V) % 2 == 0) {
    unsigned short *W = reinterpret_cast<unsigned short *>(&V);
#pragma unroll
    for (int K = 0; K < int(sizeof(V) / 2); ++K)
      asm volatile("" : "+h"(W[K]));
  }
}
// A whole 16-byte chunk at an address off its 16-byte boundary (a tensor
// at another phase than the lead, or every tensor of a row whose chunks
// stay at the row start): the two aligned 16-byte blocks that hold it,
// shifted into place, instead of one access per lane (RoPE bf16 at a 2-byte
// offset: 8 two-byte loads a chunk, 0.56x torch.compile). Both blocks hold
// bytes of the chunk, so the read never leaves the 16-byte blocks (nor the
// pages) the tensor's own bytes lie in; the neighbour's bytes it reads are
// dropped. The second block is the next chunk's first: it is read through
// L1 (no L2 hint, which would skip L1). An aligned P reads one block and
// shifts by 0, so a caller need not branch (see jf_load_whole).
template <typename T, int N>
__device__ __forceinline__ jf_vec<T, N> jf_load_shifted(const T *P) {
  static_assert(sizeof(jf_vec<T, N>) == 16, "16-byte chunks only");
  const unsigned long long A = reinterpret_cast<unsigned long long>(P);
  const unsigned S = static_cast<unsigned>(A & 15); // bytes past the boundary
  // In PTX: loaded through the integer address, NVVM lost the global
  // space and emitted generic ld.v4.
  uint4 X, Y = make_uint4(0, 0, 0, 0);
  asm("ld.global.v4.b32 {%0, %1, %2, %3}, [%4];"
      : "=r"(X.x), "=r"(X.y), "=r"(X.z), "=r"(X.w)
      : "l"(A & ~15ull));
  // The second block only off the boundary (predicated, not a branch);
  // at S = 0 the words below take nothing from it.
  asm("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %4, 0;\n\t"
      "@p ld.global.v4.b32 {%0, %1, %2, %3}, [%5+16];\n\t}"
      : "+r"(Y.x), "+r"(Y.y), "+r"(Y.z), "+r"(Y.w)
      : "r"(S), "l"(A & ~15ull));
  jf_vec<T, N> Out;
  *reinterpret_cast<uint4 *>(&Out) = jf_window16(X, Y, S);
  return Out;
}
// The store of a whole 16-byte chunk of 16-bit elements off its boundary,
// in the widest accesses its address allows (stores cannot write a
// neighbour's bytes): two 8-byte, four 4-byte, or 2 + 3 x 4 + 2 bytes at an
// odd element offset, instead of 8 stores. 4-byte elements keep one store
// per lane (4 either way; with this helper an f32 LayerNorm x 128256 at
// +4 B ran 1.09x slower, measured).
template <typename T, int N>
__device__ __forceinline__ void jf_store_split(T *P, const jf_vec<T, N> &V) {
  static_assert(sizeof(jf_vec<T, N>) == 16 && sizeof(T) <= 2, "16-byte chunks of 1-2 B");
  const unsigned long long A = reinterpret_cast<unsigned long long>(P);
  const unsigned *W = reinterpret_cast<const unsigned *>(&V);
  char *C = reinterpret_cast<char *>(P);
  if (A % 8 == 0) {
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(C), "r"(W[0]), "r"(W[1]));
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(C + 8), "r"(W[2]), "r"(W[3]));
    return;
  }
  if (A % 4 == 0) {
#pragma unroll
    for (int K = 0; K < 4; ++K)
      asm volatile("st.global.b32 [%0], %1;" ::"l"(C + 4 * K), "r"(W[K]));
    return;
  }
  if constexpr (sizeof(T) == 2) {
    asm volatile("st.global.b16 [%0], %1;" ::"l"(C), "h"((unsigned short)W[0]));
#pragma unroll
    for (int K = 0; K < 3; ++K)
      asm volatile("st.global.b32 [%0], %1;" ::"l"(C + 2 + 4 * K),
                   "r"(__funnelshift_r(W[K], W[K + 1], 16)));
    asm volatile("st.global.b16 [%0], %1;" ::"l"(C + 14), "h"((unsigned short)(W[3] >> 16)));
  } else {
#pragma unroll
    for (int K = 0; K < N; ++K)
      P[K] = V.V[K];
  }
}
template <typename T, int N, int H = 0>
__device__ __forceinline__ jf_vec<T, N> jf_load_chunk(const T *P, int Lo, int Hi) {
  if (jf_chunk_wide<T, N>(P, Lo, Hi))
    return jf_load<T, N, H>(P);
  // Not jf_load_shifted here: its shifts use the loads at once, inside this
  // branch, so each tensor's load waited for the one before (RoPE at an
  // offset 1.4-1.6x slower, BENCHMARKS.md schedule log); the lanes' loads
  // are only used after the branches join.
  return jf_load_part<T, N>(P, Lo, Hi);
}
// The wide store of a chunk, spelled in PTX: written as a struct store,
// NVVM merged it with the per-lane stores of the other branch into 2-byte
// stores on both paths (a bf16 row kernel at 38% of the copy ceiling).
template <typename T, int N>
__device__ __forceinline__ void jf_store_wide(T *P, const jf_vec<T, N> &V) {
  constexpr int B = sizeof(jf_vec<T, N>);
  if constexpr (B >= 4) {
    const unsigned *W = reinterpret_cast<const unsigned *>(&V); // aligned to B
    if constexpr (B == 16)
      asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(P), "r"(W[0]), "r"(W[1]),
                   "r"(W[2]), "r"(W[3]));
    else if constexpr (B == 8)
      asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(P), "r"(W[0]), "r"(W[1]));
    else
      asm volatile("st.global.b32 [%0], %1;" ::"l"(P), "r"(W[0]));
  } else {
    jf_store<T, N>(P, V);
  }
}
template <typename T, int N>
__device__ __forceinline__ void jf_store_chunk(T *P, const jf_vec<T, N> &V, int Lo, int Hi) {
  if (jf_chunk_wide<T, N>(P, Lo, Hi)) {
    jf_store_wide<T, N>(P, V);
    return;
  }
  if constexpr (sizeof(jf_vec<T, N>) == 16 && sizeof(T) <= 2)
    if (Lo == 0 && Hi == N) {
      jf_store_split<T, N>(P, V);
      return;
    }
  jf_store_part<T, N>(P, V, Lo, Hi);
}
// Bytes [Lo, Hi) of the aligned 16-byte block at B, whose words are W, in
// the widest aligned stores that cover exactly them (Lo, Hi even).
template <int Lo, int Hi>
__device__ __forceinline__ void jf_store_range(char *B, const uint4 &W) {
  if constexpr (Lo < Hi) {
    const unsigned Wd[4] = {W.x, W.y, W.z, W.w};
    if constexpr (Lo % 8 == 0 && Lo + 8 <= Hi) {
      asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(B + Lo), "r"(Wd[Lo / 4]),
                   "r"(Wd[Lo / 4 + 1]));
      jf_store_range<Lo + 8, Hi>(B, W);
    } else if constexpr (Lo % 4 == 0 && Lo + 4 <= Hi) {
      asm volatile("st.global.b32 [%0], %1;" ::"l"(B + Lo), "r"(Wd[Lo / 4]));
      jf_store_range<Lo + 4, Hi>(B, W);
    } else {
      static_assert(Lo % 2 == 0 && Lo + 2 <= Hi, "even byte ranges");
      asm volatile("st.global.b16 [%0], %1;" ::"l"(B + Lo),
                   "h"((unsigned short)(Wd[Lo / 4] >> (Lo % 4 * 8))));
      jf_store_range<Lo + 2, Hi>(B, W);
    }
  }
}
// The edges of a group's run of bytes S bytes past a block boundary: the
// head [S, 16) of the first block (Head) or the tail [0, S) of the block
// after the last (!Head), for the S (even, 2-14) the run has.
template <bool Head>
__device__ __forceinline__ void jf_store_edge(char *B, const uint4 &W, unsigned S) {
  switch (S) {
#define JF_EDGE(K)                                                                         \
  case K:                                                                                  \
    if constexpr (Head)                                                                    \
      jf_store_range<K, 16>(B, W);                                                         \
    else                                                                                   \
      jf_store_range<0, K>(B, W);                                                          \
    break;
    JF_EDGE(2) JF_EDGE(4) JF_EDGE(6) JF_EDGE(8) JF_EDGE(10) JF_EDGE(12) JF_EDGE(14)
#undef JF_EDGE
  default: break;
  }
}
// CompileOptions::GroupStores: the store of a whole 16-byte chunk of 16-bit
// elements whose address is off its 16-byte boundary, by a group of G
// consecutive lanes that hold G consecutive chunks (lane J of the group
// chunk J: a row's piece of a concat whose chunks stay at the row start,
// RoPE at an offset). jf_store_split writes each chunk as up to five
// partial stores a lane, and the warp's stores touch 16 sectors each (ncu:
// RoPE bf16 +2 B L2-bound at 89%). Here lane J > 0 stores the aligned
// block that lane J-1's last S bytes and its own first 16 - S bytes make,
// one 16-byte store (lane J-1's words by shuffle); lane 0 stores the head
// of its block, and lane G-1 the tail past the group's last block. Every
// lane of the group must reach it (a warp takes one piece, and a row's
// group exits together); its chunks, consecutive in one row, share the
// address's offset S.
template <typename T, int N, int G>
__device__ __forceinline__ void jf_store_group(T *P, const jf_vec<T, N> &V, int J) {
  static_assert(sizeof(jf_vec<T, N>) == 16 && sizeof(T) == 2, "16-byte chunks of 2-byte elements");
  static_assert(G > 1 && 32 % G == 0, "groups tile a warp");
  const unsigned long long A = reinterpret_cast<unsigned long long>(P);
  const unsigned S = static_cast<unsigned>(A & 15);
  const uint4 W = *reinterpret_cast<const uint4 *>(&V);
  if (S == 0) {
    jf_store_wide<T, N>(P, V);
    return;
  }
  const unsigned Mask = __activemask();
  const uint4 Prev = make_uint4(__shfl_up_sync(Mask, W.x, 1), __shfl_up_sync(Mask, W.y, 1),
                                __shfl_up_sync(Mask, W.z, 1), __shfl_up_sync(Mask, W.w, 1));
  char *B = reinterpret_cast<char *>(A & ~15ull); // the block holding the chunk's head
  // The block at B: Prev's last S bytes, then this chunk's first 16 - S.
  const uint4 Blk = jf_window16(Prev, W, 16 - S);
  if (J > 0)
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(B), "r"(Blk.x), "r"(Blk.y),
                 "r"(Blk.z), "r"(Blk.w));
  else
    jf_store_edge<true>(B, Blk, S);
  if (J == G - 1)
    jf_store_edge<false>(B + 16, jf_window16(W, W, 16 - S), S);
}
// A chunk known to be whole: wide when this tensor is aligned there too.
// 16-byte chunks of 16-bit elements go through jf_load_shifted at any
// address, without a branch: with one (wide or shifted), ptxas spilled
// LayerNorm bf16 x 50257's unrolled stage loop (the weight and bias at
// another phase than the row) at 40 registers. 4-byte elements keep the
// branch and load a misaligned chunk per lane: shifted, the cluster-split
// f32 LayerNorm x 14336 spilled, and they need only N = 4 loads.
template <typename T, int N, int H = 0>
__device__ __forceinline__ jf_vec<T, N> jf_load_whole(const T *P) {
  if constexpr (sizeof(jf_vec<T, N>) == 16 && sizeof(T) <= 2) {
    return jf_load_shifted<T, N>(P);
  } else {
    if ((reinterpret_cast<unsigned long long>(P) % sizeof(jf_vec<T, N>)) == 0)
      return jf_load<T, N, H>(P);
    jf_vec<T, N> R;
#pragma unroll
    for (int K = 0; K < N; ++K)
      R.V[K] = P[K];
    return R;
  }
}
// FlatRowBroadcast: the N elements of a row vector P[0, H) from column M0
// (0 <= M0 < H, N <= H), wrapping to column 0 where a flat chunk crosses
// into the next row. Every address is inside P: lanes a partial chunk does
// not store read real elements too, so no lane checks. Off its 16-byte
// boundary the chunk is N element loads at immediate offsets (the row
// stays in L1): fewer instructions than jf_load_shifted's two loads and
// byte window (8 against about 30 for 16-bit elements).
template <typename T, int N>
__device__ __forceinline__ jf_vec<T, N> jf_load_wrap(const T *P, long long M0, long long H) {
  jf_vec<T, N> R;
  if (M0 + N <= H) {
    const T *Q = P + M0;
    if ((reinterpret_cast<unsigned long long>(Q) % sizeof(jf_vec<T, N>)) == 0)
      return jf_load<T, N>(Q);
#pragma unroll
    for (int K = 0; K < N; ++K)
      R.V[K] = Q[K];
    return R;
  }
#pragma unroll
  for (int K = 0; K < N; ++K) {
    const long long I = M0 + K;
    R.V[K] = P[I >= H ? I - H : I];
  }
  return R;
}
template <typename T, int N>
__device__ __forceinline__ void jf_store_whole(T *P, const jf_vec<T, N> &V) {
  if ((reinterpret_cast<unsigned long long>(P) % sizeof(jf_vec<T, N>)) == 0) {
    jf_store_wide<T, N>(P, V);
    return;
  }
  if constexpr (sizeof(jf_vec<T, N>) == 16 && sizeof(T) <= 2) {
    jf_store_split<T, N>(P, V);
  } else {
#pragma unroll
    for (int K = 0; K < N; ++K)
      P[K] = V.V[K];
  }
}
// A thread's chunks of a row kept in dynamic shared memory (KernelPlan::
// RowSharedInputs): chunk j of thread tx at P[j * Stride] with P already
// offset by tx, so a warp's 16-byte accesses are consecutive (no bank
// conflicts); indexed like the register arrays of the register cache.
template <typename V, int Stride> struct jf_shared_row {
  V *P;
  __device__ __forceinline__ V &operator[](int J) const { return P[J * Stride]; }
};
// The element phase of a tensor: its index 0 sits this many elements past
// an N-element boundary.
template <typename T, int N>
__device__ __forceinline__ int jf_phase(const T *P) {
  return static_cast<int>((reinterpret_cast<unsigned long long>(P) / sizeof(T)) % N);
}

// a / b where b is the same for a whole row (softmax's sum): one
// reciprocal per row (the compiler computes S and 1/(b S) once for the
// unrolled lanes) and two multiplies per element, two roundings (NUMERICS.md
// "Division by a row's value"). S, a power of two, keeps 1/(b S) a normal
// float for any b (b S is exact); a branch to IEEE division there instead
// was taken per element, with a reciprocal in each branch.
__device__ __forceinline__ float jf_div_row(float A, float B) {
  const float M = fabsf(B);
  const float S = M > 0x1p126f ? 0x1p-64f : (M < 0x1p-126f ? 0x1p64f : 1.0f);
  return A * (1.0f / (B * S)) * S;
}

// sin and cos as the library computes them, with its far-argument path out
// of line. libdevice's sinf/cosf reduce |x| >= 105615 (sin/cos: |x| >= 2^31)
// by Payne-Hanek: a loop over a local array, inlined at every call, ~30 ms
// of NVRTC time each (a 50-op chain with 10 sins: 1.4 s, 208 KB of CUBIN).
// Here far arguments and +-Inf call one out-of-line copy (NaN compares
// false and stays inline: the library's fast path returns it); in the near
// branch NVVM folds the library's own test (the same fabs and compare) to
// false and drops its inlined slow path (f64; f32's near branch is the
// library's fast path written out, below). Every result is the library's.
__device__ __noinline__ float jf_sinf_far(float X) { return sinf(X); }
__device__ __noinline__ float jf_cosf_far(float X) { return cosf(X); }
__device__ __noinline__ double jf_sin_far(double X) { return sin(X); }
__device__ __noinline__ double jf_cos_far(double X) { return cos(X); }
// The f32 near branch is libdevice's __nv_sinf/__nv_cosf for |x| < 105615
// (no FTZ) written out, Shift 0 for sin and 1 for cos: the same operations
// in the same order, so NVVM emits the same PTX, register for register, as
// the library call in this branch ([codegen][trig] compares them), without
// inlining the library's slow path first only to fold it away (NVRTC time:
// BENCHMARKS.md schedule log).
__device__ __forceinline__ float jf_trigf_near(float A, int Shift) {
  const float Q = A * 0x1.45f306p-1f;
  const int J0 = __float2int_rn(Q);
  const float FJ = (float)J0;
  float T = __fmaf_rn(FJ, -0x1.921fb4p+0f, A);
  T = __fmaf_rn(FJ, -0x1.4442d0p-24f, T);
  T = __fmaf_rn(FJ, -0x1.84698ap-48f, T);
  const int J = J0 + Shift;
  const float T2 = __fmul_rn(T, T);
  const bool Even = (J & 1) == 0;
  const float S = Even ? T : 1.0f;
  const float U = __fmaf_rn(T2, S, 0.0f);
  float P = Even ? -0x1.9a82a6p-13f : __fmaf_rn(0x1.9758p-16f, T2, -0x1.6c0fdap-10f);
  P = __fmaf_rn(P, T2, Even ? 0x1.110bc8p-7f : 0x1.555576p-5f);
  P = __fmaf_rn(P, T2, Even ? -0x1.55555p-3f : -0x1.fffffep-2f);
  float R = __fmaf_rn(P, U, S);
  if (J & 2)
    R = __fmaf_rn(R, -1.0f, 0.0f);
  return R;
}
__device__ __forceinline__ float jf_sinf(float X) {
  return fabsf(X) >= 105615.0f ? jf_sinf_far(X) : jf_trigf_near(X, 0);
}
__device__ __forceinline__ float jf_cosf(float X) {
  return fabsf(X) >= 105615.0f ? jf_cosf_far(X) : jf_trigf_near(X, 1);
}
__device__ __forceinline__ double jf_sin(double X) {
  return fabs(X) >= 2147483648.0 ? jf_sin_far(X) : sin(X);
}
__device__ __forceinline__ double jf_cos(double X) {
  return fabs(X) >= 2147483648.0 ? jf_cos_far(X) : cos(X);
}

// gelu_tanh, f32: 0.5 x (1 + tanh(z)) = x sigmoid(2 z) = x / (1 + 2^a) with
// a = -2 log2(e) z = x (A + B x^2), A = -2 log2(e) sqrt(2/pi), B = 0.044715 A
// (f32-rounded). exp2f (2 ulp) and __fdividef (2 ulp; 0 once 1 + 2^a passes
// 2^126, at x below about -10, where the true value is under 11 * 2^-126)
// replace tanhf's two branches and the 1 + tanh cancellation: 10 SASS
// instructions instead of 23, so 16-bit bias + GELU is no longer
// issue-bound. Its error model is reference/ErrorBound.cpp's geluTanhF32
// (docs/NUMERICS.md): within 10 u of the value for x > 0, and far
// tighter than the tanh form for x < 0, whose 1 + tanh(z) cancels.
// f64 keeps the tanh form. 2^a is PTX ex2.approx.ftz: exp2f is the same
// MUFU.EX2 plus a rescaling for results below 2^-126 (a compare and two
// predicated multiplies an element, 3 of 13 in 16-bit bias + GELU), and
// there 1 + 2^a rounds to 1 either way: the same bits for every f32 input
// (tools/check_ex2_ftz.py, run on the H200 over all 2^32).
__device__ __forceinline__ float jf_ex2_ftz(float A) {
  float R;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(R) : "f"(A));
  return R;
}
__device__ __forceinline__ float jf_gelu_tanhf(float X) {
  return __fdividef(X, 1.0f + jf_ex2_ftz(X * __fmaf_rn(-0x1.a5a7d0p-4f, X * X, -0x1.26aec2p+1f)));
}
__device__ __forceinline__ double jf_gelu_tanh(double X) {
  return 0.5 * X * (1.0 + tanh(0.7978845608028654 * (X + 0.044715 * X * X * X)));
}

// NaN-propagating max/min (IEEE maximum/minimum, like torch.maximum).
// f32 on sm_80+: max.NaN / min.NaN, one FMNMX.NAN, where the compare-select
// spelling is three instructions (two FSETP and an FSEL); in bf16 sum/amax
// rows (abs, add, max an element) that was the ALU pipe's throttle (ncu,
// BENCHMARKS.md session 20). A NaN result is the canonical NaN.
__device__ __forceinline__ float jf_max(float A, float B) {
#if __CUDA_ARCH__ >= 800
  float R;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(R) : "f"(A), "f"(B));
  return R;
#else
  return (A != A || A > B) ? A : B;
#endif
}
__device__ __forceinline__ float jf_min(float A, float B) {
#if __CUDA_ARCH__ >= 800
  float R;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(R) : "f"(A), "f"(B));
  return R;
#else
  return (A != A || A < B) ? A : B;
#endif
}
__device__ __forceinline__ double jf_max(double A, double B) {
  return (A != A || A > B) ? A : B;
}
__device__ __forceinline__ double jf_min(double A, double B) {
  return (A != A || A < B) ? A : B;
}
__device__ __forceinline__ long long jf_max(long long A, long long B) { return A > B ? A : B; }
__device__ __forceinline__ long long jf_min(long long A, long long B) { return A < B ? A : B; }
__device__ __forceinline__ int jf_max(int A, int B) { return A > B ? A : B; }
__device__ __forceinline__ int jf_min(int A, int B) { return A < B ? A : B; }

// Float -> integer casts saturate and send NaN to 0 (what cvt.rzi.sat does).
__device__ __forceinline__ int jf_to_i32(double V) {
  return V != V ? 0 : V >= 2147483647.0 ? 2147483647 : V <= -2147483648.0 ? (-2147483647 - 1) : (int)V;
}
__device__ __forceinline__ long long jf_to_i64(double V) {
  return V != V ? 0
         : V >= 9223372036854775807.0 ? 9223372036854775807LL
         : V <= -9223372036854775808.0 ? (-9223372036854775807LL - 1)
                                       : (long long)V;
}

// Integer mod with C semantics; b == 0 gives 0 instead of a trap.
__device__ __forceinline__ long long jf_imod(long long A, long long B) { return B == 0 ? 0 : A % B; }
__device__ __forceinline__ int jf_imod(int A, int B) { return B == 0 ? 0 : A % B; }

// Philox-4x32-10 (Salmon et al.), first output word; see docs/NUMERICS.md.
__device__ __forceinline__ float jf_philox_uniform(long long Index, long long Stream,
                                                  long long Seed) {
  unsigned C0 = (unsigned)Index, C1 = (unsigned)((unsigned long long)Index >> 32);
  unsigned C2 = (unsigned)Stream, C3 = (unsigned)((unsigned long long)Stream >> 32);
  unsigned K0 = (unsigned)Seed, K1 = (unsigned)((unsigned long long)Seed >> 32);
#pragma unroll
  for (int R = 0; R < 10; ++R) {
    unsigned Hi0 = __umulhi(0xD2511F53u, C0), Lo0 = 0xD2511F53u * C0;
    unsigned Hi1 = __umulhi(0xCD9E8D57u, C2), Lo1 = 0xCD9E8D57u * C2;
    unsigned N0 = Hi1 ^ C1 ^ K0, N1 = Lo1, N2 = Hi0 ^ C3 ^ K1, N3 = Lo0;
    C0 = N0; C1 = N1; C2 = N2; C3 = N3;
    K0 += 0x9E3779B9u;
    K1 += 0xBB67AE85u;
  }
  return (float)(C0 >> 8) * (1.0f / 16777216.0f);
}
