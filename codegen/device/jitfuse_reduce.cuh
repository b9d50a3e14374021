// jitfuse device helpers, part 2 (after jitfuse_device.cuh, before
// jitfuse_piece_wrap.cuh in every program): reductions over a warp's lanes,
// a block and a cluster, and the paired reductions' accumulators.

// Reductions over a group of GroupSize (power of two, <= 32) lanes of a
// warp; every lane of the group gets the result.
template <int GroupSize, typename T, typename Op>
__device__ __forceinline__ T jf_group_reduce(T V, Op F) {
#pragma unroll
  for (int O = GroupSize / 2; O > 0; O >>= 1)
    V = F(V, __shfl_xor_sync(0xffffffffu, V, O, GroupSize));
  return V;
}

// Block-wide reduction over Warps warps (one row per block, blockDim.x a
// multiple of 32); every thread gets the result, which passes through
// Scratch[Slot] (Slot >= Warps). Lanes past the warps add the identity, so
// the result is the same to the bit for any Slot.
template <typename T, typename Op>
__device__ __forceinline__ T jf_block_reduce_in(T V, Op F, T Identity, T *Scratch, int Warps,
                                                int Slot) {
  V = jf_group_reduce<32>(V, F);
  const int Warp = threadIdx.x / 32, Lane = threadIdx.x % 32;
  if (Lane == 0)
    Scratch[Warp] = V;
  __syncthreads();
  if (Warp == 0) {
    T W = Lane < Warps ? Scratch[Lane] : Identity;
    W = jf_group_reduce<32>(W, F);
    if (Lane == 0)
      Scratch[Slot] = W;
  }
  __syncthreads();
  T R = Scratch[Slot];
  __syncthreads(); // Scratch may be reused by the next reduction
  return R;
}

// blockDim.x == Threads; Scratch holds Threads/32 + 1.
template <int Threads, typename T, typename Op>
__device__ __forceinline__ T jf_block_reduce(T V, Op F, T Identity, T *Scratch) {
  return jf_block_reduce_in(V, F, Identity, Scratch, Threads / 32, Threads / 32);
}

// blockDim.x picked at launch, at most MaxThreads (KernelPlan::
// ThreadsAtLaunch); Scratch holds MaxThreads/32 + 1.
template <int MaxThreads, typename T, typename Op>
__device__ __forceinline__ T jf_block_reduce_n(T V, Op F, T Identity, T *Scratch) {
  return jf_block_reduce_in(V, F, Identity, Scratch, int(blockDim.x) / 32, MaxThreads / 32);
}

// The same in two phases, so that the reductions of a row stage share their
// barriers (KernelPlan::JointReduce): each warp's partial of each reduction
// to its Scratch, one barrier, warp 0 combines each into
// Scratch[Threads / 32], one barrier, every thread reads that slot. Each
// reduction of a one-row block has its own Scratch, used once, so no third
// barrier guards its reuse. The order of the operations is
// jf_block_reduce's: the same result to the bit.
template <typename T, typename Op>
__device__ __forceinline__ void jf_block_partial(T V, Op F, T *Scratch) {
  V = jf_group_reduce<32>(V, F);
  if (threadIdx.x % 32 == 0)
    Scratch[threadIdx.x / 32] = V;
}
template <typename T, typename Op>
__device__ __forceinline__ void jf_block_combine_in(Op F, T Identity, T *Scratch, int Warps,
                                                    int Slot) {
  if (threadIdx.x < 32) {
    T W = threadIdx.x < Warps ? Scratch[threadIdx.x] : Identity;
    W = jf_group_reduce<32>(W, F);
    if (threadIdx.x == 0)
      Scratch[Slot] = W;
  }
}
template <int Threads, typename T, typename Op>
__device__ __forceinline__ void jf_block_combine(Op F, T Identity, T *Scratch) {
  jf_block_combine_in(F, Identity, Scratch, Threads / 32, Threads / 32);
}
// (KernelPlan::ThreadsAtLaunch: the result in Scratch[MaxThreads / 32].)
template <int MaxThreads, typename T, typename Op>
__device__ __forceinline__ void jf_block_combine_n(Op F, T Identity, T *Scratch) {
  jf_block_combine_in(F, Identity, Scratch, int(blockDim.x) / 32, MaxThreads / 32);
}

// Online softmax (KernelPlan::RowPairs): a running max M and the sum S
// of exp(v - M) over the values seen, S rescaled by exp(Mold - Mnew) when
// M grows. A -inf value adds 0 and a -inf running max scales by 0, so rows
// whose first values are -inf stay finite; a row whose max is -inf gets a
// NaN sum at the end (jf_online_sum), as exp(-inf - -inf) gives the
// two-loop order. NaN and +inf propagate as they do there.
template <typename T> struct jf_ms {
  T M, S;
};
// -inf and a quiet NaN without math headers (NVRTC -minimal).
__device__ __forceinline__ float jf_ninf(float) { return __int_as_float(0xff800000); }
__device__ __forceinline__ double jf_ninf(double) {
  return __longlong_as_double((long long)0xfff0000000000000ULL);
}
__device__ __forceinline__ float jf_qnan(float) { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double jf_qnan(double) {
  return __longlong_as_double(0x7ff8000000000000LL);
}
__device__ __forceinline__ float jf_oexp(float X) { return expf(X); }
__device__ __forceinline__ double jf_oexp(double X) { return exp(X); }
__device__ __forceinline__ float jf_omul(float A, float B) { return __fmul_rn(A, B); }
__device__ __forceinline__ double jf_omul(double A, double B) { return __dmul_rn(A, B); }
__device__ __forceinline__ float jf_oadd(float A, float B) { return __fadd_rn(A, B); }
__device__ __forceinline__ double jf_oadd(double A, double B) { return __dadd_rn(A, B); }
// An unchanged max scales by exactly 1 without an exp (the common case
// after a row's first values; also +inf kept, whose sum is already NaN).
template <typename T> __device__ __forceinline__ T jf_online_scale(T Old, T New) {
  return Old == New ? (T)1 : Old == jf_ninf(Old) ? (T)0 : jf_oexp(Old - New);
}
template <typename T> __device__ __forceinline__ void jf_online_add(jf_ms<T> &A, T V) {
  const T N = jf_max(A.M, V);
  const T Term = V == jf_ninf(V) ? (T)0 : jf_oexp(V - N);
  A.S = jf_oadd(jf_omul(A.S, jf_online_scale(A.M, N)), Term);
  A.M = N;
}
// Symmetric in its operands (no contraction into an fma), so the lanes of
// a butterfly all get the same result.
template <typename T> struct jf_online_op {
  __device__ jf_ms<T> operator()(jf_ms<T> A, jf_ms<T> B) const {
    const T N = jf_max(A.M, B.M);
    return {N, jf_oadd(jf_omul(A.S, jf_online_scale(A.M, N)),
                       jf_omul(B.S, jf_online_scale(B.M, N)))};
  }
};
template <int GroupSize, typename T>
__device__ __forceinline__ jf_ms<T> jf_group_reduce(jf_ms<T> V, jf_online_op<T> F) {
#pragma unroll
  for (int O = GroupSize / 2; O > 0; O >>= 1)
    V = F(V, {__shfl_xor_sync(0xffffffffu, V.M, O, GroupSize),
              __shfl_xor_sync(0xffffffffu, V.S, O, GroupSize)});
  return V;
}
template <typename T> __device__ __forceinline__ T jf_online_sum(jf_ms<T> A, long long R) {
  return A.M == jf_ninf(A.M) && R > 0 ? jf_qnan(A.M) : A.S;
}

// Welford (KernelPlan::RowPairs): a thread's count, mean and sum of squared
// deviations of the values it saw, so LayerNorm's mean and variance take
// one loop. Pairs of partial results combine symmetrically (Chan et al.,
// the mean as a weighted sum), so the lanes of a butterfly agree.
template <typename T> struct jf_wf {
  T N, Mean, M2;
};
__device__ __forceinline__ float jf_odiv(float A, float B) { return __fdiv_rn(A, B); }
__device__ __forceinline__ double jf_odiv(double A, double B) { return __ddiv_rn(A, B); }
template <typename T> __device__ __forceinline__ void jf_welford_add(jf_wf<T> &A, T V) {
  A.N = A.N + (T)1;
  const T D = V - A.Mean;
  A.Mean = A.Mean + jf_odiv(D, A.N);
  A.M2 = A.M2 + D * (V - A.Mean);
}
template <typename T> struct jf_welford_op {
  __device__ jf_wf<T> operator()(jf_wf<T> A, jf_wf<T> B) const {
    const T N = jf_oadd(A.N, B.N);
    if (N == (T)0)
      return {(T)0, (T)0, (T)0};
    const T Mean = jf_odiv(jf_oadd(jf_omul(A.N, A.Mean), jf_omul(B.N, B.Mean)), N);
    const T D = B.Mean - A.Mean; // squared below: the sign does not matter
    const T Cross = jf_odiv(jf_omul(jf_omul(D, D), jf_omul(A.N, B.N)), N);
    return {N, Mean, jf_oadd(jf_oadd(A.M2, B.M2), Cross)};
  }
};
template <int GroupSize, typename T>
__device__ __forceinline__ jf_wf<T> jf_group_reduce(jf_wf<T> V, jf_welford_op<T> F) {
#pragma unroll
  for (int O = GroupSize / 2; O > 0; O >>= 1)
    V = F(V, {__shfl_xor_sync(0xffffffffu, V.N, O, GroupSize),
              __shfl_xor_sync(0xffffffffu, V.Mean, O, GroupSize),
              __shfl_xor_sync(0xffffffffu, V.M2, O, GroupSize)});
  return V;
}

// Thread-block clusters (sm_90): a long row split over the blocks of a
// cluster combines their block results through distributed shared memory.
// Marked unused: most programs have no such row, and NVRTC would warn
// (#177) in every compile log.
static __device__ __forceinline__ __attribute__((unused)) unsigned jf_cluster_rank() {
  unsigned R;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(R));
  return R;
}
// Every thread of every block of the cluster: shared-memory writes before
// it are visible to the cluster after it.
static __device__ __forceinline__ __attribute__((unused)) void jf_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// *P in the shared memory of block Rank of the cluster.
template <typename T>
__device__ __forceinline__ T jf_dsm_load(const T *P, unsigned Rank) {
  unsigned long long G = reinterpret_cast<unsigned long long>(P), S;
  asm volatile("cvta.to.shared.u64 %0, %1;" : "=l"(S) : "l"(G));
  unsigned A = static_cast<unsigned>(S), Remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(Remote) : "r"(A), "r"(Rank));
  static_assert(sizeof(T) % 4 == 0, "a cluster slot is whole 32-bit words");
  union { T V; unsigned U[sizeof(T) / 4]; } R;
  if constexpr (sizeof(T) == 8) {
    unsigned long long B;
    asm volatile("ld.shared::cluster.b64 %0, [%1];" : "=l"(B) : "r"(Remote) : "memory");
    R.U[0] = static_cast<unsigned>(B);
    R.U[1] = static_cast<unsigned>(B >> 32);
  } else {
    // One word at a time: a Welford pair of f32 (jf_wf<float>) is 12 bytes.
#pragma unroll
    for (unsigned I = 0; I < sizeof(T) / 4; ++I)
      asm volatile("ld.shared::cluster.b32 %0, [%1];"
                   : "=r"(R.U[I])
                   : "r"(Remote + 4 * I)
                   : "memory");
  }
  return R.V;
}

struct jf_add_op { template <typename T> __device__ T operator()(T A, T B) const { return A + B; } };
struct jf_max_op { template <typename T> __device__ T operator()(T A, T B) const { return jf_max(A, B); } };
struct jf_min_op { template <typename T> __device__ T operator()(T A, T B) const { return jf_min(A, B); } };
