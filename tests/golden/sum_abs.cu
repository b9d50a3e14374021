// kernel jf_k0_sum (full-reduction): computes
//   %1 = abs(%0) : f32[N]
//   %2 = sum(%1) : f32[] all
// in_0 <- %0 input "x"
// out_0 -> %2
// d_0 = dim "N"
extern "C" __global__ void __launch_bounds__(256) jf_k0_sum_v4(
    const float* __restrict__ in_0,
    float* __restrict__ out_0,
    long long d_0,
    float* __restrict__ jf_partials,
    unsigned* __restrict__ jf_counter) {
  __shared__ float jf_smem[9];
  __shared__ bool jf_last;
  float acc = (0.0f);
  const long long n = (d_0);
  const long long nchunks = (n + 3) / 4;
  for (long long chunk = (long long)blockIdx.x * 256 + threadIdx.x; chunk < nchunks; chunk += (long long)gridDim.x * 256) {
    [[maybe_unused]] const long long col = chunk * 4;
    if (col + 4 <= n) {
      const jf_vec<float, 4> lv0 = jf_load<float, 4>(in_0 + col);
      const float v1 = lv0.V[0];
      const float v2 = fabsf(v1);
      acc = acc + v2;
      const float v3 = lv0.V[1];
      const float v4 = fabsf(v3);
      acc = acc + v4;
      const float v5 = lv0.V[2];
      const float v6 = fabsf(v5);
      acc = acc + v6;
      const float v7 = lv0.V[3];
      const float v8 = fabsf(v7);
      acc = acc + v8;
    }
    else {
      if (col + 0 < n) {
        const float v9 = in_0[col];
        const float v10 = fabsf(v9);
        acc = acc + v10;
      }
      if (col + 1 < n) {
        const float v11 = in_0[(col + 1)];
        const float v12 = fabsf(v11);
        acc = acc + v12;
      }
      if (col + 2 < n) {
        const float v13 = in_0[(col + 2)];
        const float v14 = fabsf(v13);
        acc = acc + v14;
      }
      if (col + 3 < n) {
        const float v15 = in_0[(col + 3)];
        const float v16 = fabsf(v15);
        acc = acc + v16;
      }
    }
  }
  acc = jf_block_reduce<256>(acc, jf_add_op(), (0.0f), jf_smem);
  if (threadIdx.x == 0) {
    jf_partials[blockIdx.x] = acc;
    __threadfence();
    jf_last = atomicAdd(jf_counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!jf_last) return;
  __threadfence();
  float tot = (0.0f);
  for (unsigned i = threadIdx.x; i < gridDim.x; i += 256) {
    tot = jf_add_op()(tot, ((volatile float*)jf_partials)[i]);
  }
  tot = jf_block_reduce<256>(tot, jf_add_op(), (0.0f), jf_smem);
  if (threadIdx.x == 0) {
    out_0[0] = tot;
    *jf_counter = 0u; // ready for the next launch
  }
}
extern "C" __global__ void __launch_bounds__(256) jf_k0_sum_p4(
    const float* __restrict__ in_0,
    float* __restrict__ out_0,
    long long d_0,
    float* __restrict__ jf_partials,
    unsigned* __restrict__ jf_counter) {
  __shared__ float jf_smem[9];
  __shared__ bool jf_last;
  float acc = (0.0f);
  const long long n = (d_0);
  const int jf_off = jf_phase<float, 4>(in_0);
  const long long nchunks = (n + jf_off + 3) / 4;
  for (long long chunk = (long long)blockIdx.x * 256 + threadIdx.x; chunk < nchunks; chunk += (long long)gridDim.x * 256) {
    [[maybe_unused]] const long long col = chunk * 4 - jf_off;
    const int jf_lo = col < 0 ? (int)-col : 0;
    const int jf_hi = col + 4 > n ? (int)(n - col) : 4;
    if (true && (jf_lo != 0 || jf_hi != 4)) {
      const jf_vec<float, 4> lv0 = jf_load_part<float, 4>(in_0 + col, jf_lo, jf_hi);
      const float v1 = lv0.V[0];
      const float v2 = fabsf(v1);
      acc = (jf_lo == 0) ? acc + v2 : acc;
      const float v3 = lv0.V[1];
      const float v4 = fabsf(v3);
      acc = (jf_lo <= 1 && 1 < jf_hi) ? acc + v4 : acc;
      const float v5 = lv0.V[2];
      const float v6 = fabsf(v5);
      acc = (jf_lo <= 2 && 2 < jf_hi) ? acc + v6 : acc;
      const float v7 = lv0.V[3];
      const float v8 = fabsf(v7);
      acc = (jf_lo <= 3 && 3 < jf_hi) ? acc + v8 : acc;
    }
    else {
      const jf_vec<float, 4> lv9 = jf_load<float, 4>(in_0 + col);
      const float v10 = lv9.V[0];
      const float v11 = fabsf(v10);
      acc = acc + v11;
      const float v12 = lv9.V[1];
      const float v13 = fabsf(v12);
      acc = acc + v13;
      const float v14 = lv9.V[2];
      const float v15 = fabsf(v14);
      acc = acc + v15;
      const float v16 = lv9.V[3];
      const float v17 = fabsf(v16);
      acc = acc + v17;
    }
  }
  acc = jf_block_reduce<256>(acc, jf_add_op(), (0.0f), jf_smem);
  if (threadIdx.x == 0) {
    jf_partials[blockIdx.x] = acc;
    __threadfence();
    jf_last = atomicAdd(jf_counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!jf_last) return;
  __threadfence();
  float tot = (0.0f);
  for (unsigned i = threadIdx.x; i < gridDim.x; i += 256) {
    tot = jf_add_op()(tot, ((volatile float*)jf_partials)[i]);
  }
  tot = jf_block_reduce<256>(tot, jf_add_op(), (0.0f), jf_smem);
  if (threadIdx.x == 0) {
    out_0[0] = tot;
    *jf_counter = 0u; // ready for the next launch
  }
}
