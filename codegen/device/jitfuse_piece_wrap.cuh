// jitfuse_piece_wrap.cuh: device helpers of KernelPlan::PieceWrapChunks,
// embedded after jitfuse_device.cuh (codegen/CMakeLists.txt), whose
// jf_load_shifted, jf_store_edge, jf_store_chunk and jf_store_wide they use.

// PieceWrapChunks: an element-wise row that is a concat of pieces of CP
// elements (RoPE's halves) takes chunks aligned to the lead tensor inside
// each piece. A piece at phase W (0 < W < N) is CP / N - 1 whole chunks
// plus its first N - W and last W elements; one chunk a piece takes those
// two runs, lane K at K + CP for K < W, else at K. Both runs sit at the
// lead's phase, so for a tensor at that phase they are the upper lanes of
// one aligned block and the lower lanes of the block CP later: two wide
// loads and a byte permute, where chunks kept at the row start pay two
// loads and a byte window (jf_window16) on every tensor and every chunk.
// W = 0 (every other chunk, any phase-0 row) reads one block. Each block
// read holds lanes of the chunk (K >= W at P, K < W at P + CP), so no read
// leaves the 16-byte blocks of the tensor's own elements. Aligned: P is
// known to be 16-byte aligned (the lead, or every tensor where the kernel
// checked them all).
template <int H> __device__ __forceinline__ uint4 jf_ld16_any(const void *P) {
  if constexpr (H != 0) {
    return jf_ld16<H>(P);
  } else {
    uint4 R;
    asm("ld.global.v4.b32 {%0, %1, %2, %3}, [%4];"
        : "=r"(R.x), "=r"(R.y), "=r"(R.z), "=r"(R.w)
        : "l"(P));
    return R;
  }
}
// Lanes K < W of block Y, the others of block X (16-byte chunks).
template <typename T>
__device__ __forceinline__ uint4 jf_pick_below(const uint4 &X, const uint4 &Y, int W) {
  const unsigned Xw[4] = {X.x, X.y, X.z, X.w}, Yw[4] = {Y.x, Y.y, Y.z, Y.w};
  unsigned Rw[4];
#pragma unroll
  for (int J = 0; J < 4; ++J) {
    unsigned Sel = 0;
#pragma unroll
    for (int B = 0; B < 4; ++B)
      Sel |= (static_cast<int>((4 * J + B) / sizeof(T)) < W ? 4u + B : unsigned(B)) << (4 * B);
    Rw[J] = __byte_perm(Xw[J], Yw[J], Sel);
  }
  return make_uint4(Rw[0], Rw[1], Rw[2], Rw[3]);
}
// The chunk per lane: lane K at K + CP below W, else at K.
template <typename T, int N>
__device__ __forceinline__ jf_vec<T, N> jf_load_rot_lanes(const T *P, int CP, int W) {
  jf_vec<T, N> R;
#pragma unroll
  for (int K = 0; K < N; ++K)
    R.V[K] = P[K < W ? K + CP : K];
  return R;
}
template <typename T, int N, int H = 0, bool Aligned = false>
__device__ __forceinline__ jf_vec<T, N> jf_load_rot(const T *P, int CP, int W) {
  if constexpr (sizeof(jf_vec<T, N>) == 16) {
    // The branches only load, into words; the lanes are picked after they
    // join, so every tensor's loads can be in flight together (a pick
    // inside the branch made each tensor's load wait for the one before, as
    // in jf_load_chunk, and element-typed branches made NVVM split and
    // repack every word). Y is read only below W: without a load it stays
    // 0, never a copy of X (a copy waits for X's load before Y's issues).
    uint4 X, Y = make_uint4(0, 0, 0, 0);
    if (Aligned || (reinterpret_cast<unsigned long long>(P) % 16) == 0) {
      X = jf_ld16_any<H>(P);
      if (W != 0)
        Y = jf_ld16_any<H>(P + CP);
    } else {
      // Another phase than the lead: a whole 16-bit chunk shifted from two
      // blocks, any other per lane.
      jf_vec<T, N> R;
      if constexpr (sizeof(T) <= 2)
        R = W == 0 ? jf_load_shifted<T, N>(P) : jf_load_rot_lanes<T, N>(P, CP, W);
      else
        R = jf_load_rot_lanes<T, N>(P, CP, W);
      X = *reinterpret_cast<const uint4 *>(&R);
      Y = X;
    }
    // The selectors depend on W only (computed once for every load).
    const uint4 Picked = jf_pick_below<T>(X, Y, W);
    jf_vec<T, N> R;
    *reinterpret_cast<uint4 *>(&R) = Picked;
    return R;
  } else {
    // Narrower chunks: one wide load when aligned and not wrapped, else per
    // lane.
    if ((Aligned || (reinterpret_cast<unsigned long long>(P) % sizeof(jf_vec<T, N>)) == 0) &&
        W == 0)
      return jf_load<T, N, H>(P);
    return jf_load_rot_lanes<T, N>(P, CP, W);
  }
}
// The store of a chunk jf_load_rot reads: lanes K < W at P + CP + K.
// Aligned, the two runs are the upper bytes of P's block and the lower
// bytes of the block CP later (jf_store_edge); W = 0 is jf_store_chunk's
// whole chunk (wide when aligned).
template <typename T, int N, bool Aligned = false>
__device__ __forceinline__ void jf_store_rot(T *P, int CP, int W, const jf_vec<T, N> &V) {
  if (W == 0) {
    if (Aligned)
      jf_store_wide<T, N>(P, V);
    else
      jf_store_chunk<T, N>(P, V, 0, N);
    return;
  }
  if constexpr (sizeof(jf_vec<T, N>) == 16 && sizeof(T) >= 2) {
    if (Aligned || (reinterpret_cast<unsigned long long>(P) % 16) == 0) {
      const uint4 Wd = *reinterpret_cast<const uint4 *>(&V);
      const unsigned S = static_cast<unsigned>(W) * sizeof(T);
      jf_store_edge<true>(reinterpret_cast<char *>(P), Wd, S);
      jf_store_edge<false>(reinterpret_cast<char *>(P + CP), Wd, S);
      return;
    }
  }
#pragma unroll
  for (int K = 0; K < N; ++K)
    P[K < W ? K + CP : K] = V.V[K];
}
// The chunks jf_load_rot reads of a row's NP pieces, stored together: at
// W > 0 and aligned, piece p's wrapped lanes (K < W, at the next piece's
// first block) and piece p + 1's lanes K >= W fill that block, one wide
// store instead of two edges. Chain (every row's chunks this far from the
// last row's, the lanes PC apart in the warp): the row's first block also
// takes the previous row's last wrapped lanes, by shuffle from that row's
// lane when it is here, and the block after the row is left to the next
// row's lane when that one is here; else they are edges.
template <typename T, int N, bool Aligned, int NP, int PC = 0>
__device__ __forceinline__ void jf_store_rot_row(T *P, int CP, int W,
                                                 const jf_vec<T, N> (&V)[NP]) {
  if constexpr (sizeof(jf_vec<T, N>) == 16 && sizeof(T) >= 2 && NP > 1) {
    if (W != 0 && (Aligned || (reinterpret_cast<unsigned long long>(P) % 16) == 0)) {
      const unsigned S = static_cast<unsigned>(W) * sizeof(T);
      bool Prev = false, Next = false;
      if constexpr (PC > 0 && PC < 32) {
        // The lanes here now all run this store; a lane and the one PC
        // after it see the same mask, so exactly one of them writes the
        // block they share.
        const unsigned Mask = __activemask();
        unsigned Lane;
        asm("mov.u32 %0, %%laneid;" : "=r"(Lane));
        Prev = Lane >= PC && ((Mask >> (Lane - PC)) & 1);
        Next = Lane + PC < 32 && ((Mask >> (Lane + PC)) & 1);
        const uint4 L = *reinterpret_cast<const uint4 *>(&V[NP - 1]);
        const uint4 Up = make_uint4(__shfl_up_sync(Mask, L.x, PC), __shfl_up_sync(Mask, L.y, PC),
                                    __shfl_up_sync(Mask, L.z, PC), __shfl_up_sync(Mask, L.w, PC));
        if (Prev) {
          const uint4 B = jf_pick_below<T>(*reinterpret_cast<const uint4 *>(&V[0]), Up, W);
          asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(P), "r"(B.x), "r"(B.y),
                       "r"(B.z), "r"(B.w));
        }
      }
      if (!Prev)
        jf_store_edge<true>(reinterpret_cast<char *>(P), *reinterpret_cast<const uint4 *>(&V[0]),
                            S);
#pragma unroll
      for (int Q = 1; Q < NP; ++Q) {
        const uint4 B = jf_pick_below<T>(*reinterpret_cast<const uint4 *>(&V[Q]),
                                         *reinterpret_cast<const uint4 *>(&V[Q - 1]), W);
        asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(P + Q * CP), "r"(B.x),
                     "r"(B.y), "r"(B.z), "r"(B.w));
      }
      if (!Next)
        jf_store_edge<false>(reinterpret_cast<char *>(P + NP * CP),
                             *reinterpret_cast<const uint4 *>(&V[NP - 1]), S);
      return;
    }
  }
#pragma unroll
  for (int Q = 0; Q < NP; ++Q)
    jf_store_rot<T, N, Aligned>(P + Q * CP, CP, W, V[Q]);
}
