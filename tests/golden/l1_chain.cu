// kernel jf_k0_add (elementwise): computes
//   %3 = add(%0, %1) : f32[N]
//   %5 = mul(%4, %3) : f32[N]
//   %6 = add(%5, %2) : f32[N]
// in_0 <- %0 input "a"
// in_1 <- %1 input "b"
// in_2 <- %2 input "c"
// out_0 -> %6
// s_0 = scalar "alpha"
// d_0 = dim "N"
extern "C" __global__ void __launch_bounds__(256) jf_k0_add_v4(
    const float* __restrict__ in_0,
    const float* __restrict__ in_1,
    const float* __restrict__ in_2,
    float* __restrict__ out_0,
    float s_0,
    long long d_0) {
  const long long chunk = (long long)blockIdx.x * 256 + threadIdx.x;
  const long long n = (d_0);
  [[maybe_unused]] const long long col = chunk * 4;
  if (col >= n) return;
  if (col + 4 <= n) {
    jf_vec<float, 4> sv0;
    const jf_vec<float, 4> lv1 = jf_load<float, 4>(in_0 + col);
    const float v2 = lv1.V[0];
    const jf_vec<float, 4> lv3 = jf_load<float, 4>(in_1 + col);
    const float v4 = lv3.V[0];
    const float v5 = (v2 + v4);
    const float v6 = (s_0 * v5);
    const jf_vec<float, 4> lv7 = jf_load<float, 4>(in_2 + col);
    const float v8 = lv7.V[0];
    const float v9 = (v6 + v8);
    sv0.V[0] = v9;
    const float v10 = lv1.V[1];
    const float v11 = lv3.V[1];
    const float v12 = (v10 + v11);
    const float v13 = (s_0 * v12);
    const float v14 = lv7.V[1];
    const float v15 = (v13 + v14);
    sv0.V[1] = v15;
    const float v16 = lv1.V[2];
    const float v17 = lv3.V[2];
    const float v18 = (v16 + v17);
    const float v19 = (s_0 * v18);
    const float v20 = lv7.V[2];
    const float v21 = (v19 + v20);
    sv0.V[2] = v21;
    const float v22 = lv1.V[3];
    const float v23 = lv3.V[3];
    const float v24 = (v22 + v23);
    const float v25 = (s_0 * v24);
    const float v26 = lv7.V[3];
    const float v27 = (v25 + v26);
    sv0.V[3] = v27;
    jf_store<float, 4>(out_0 + col, sv0);
  }
  else {
    for (int jf_k = 0; col + jf_k < n; ++jf_k) {
      const long long jf_tcol = col + jf_k;
       {
        [[maybe_unused]] const long long col = jf_tcol; // this element
        const float v28 = in_0[col];
        const float v29 = in_1[col];
        const float v30 = (v28 + v29);
        const float v31 = (s_0 * v30);
        const float v32 = in_2[col];
        const float v33 = (v31 + v32);
        out_0[col] = v33;
      }
    }
  }
}
extern "C" __global__ void __launch_bounds__(256) jf_k0_add_p4(
    const float* __restrict__ in_0,
    const float* __restrict__ in_1,
    const float* __restrict__ in_2,
    float* __restrict__ out_0,
    float s_0,
    long long d_0) {
  const int jf_off = jf_phase<float, 4>(in_0);
  const long long chunk = (long long)blockIdx.x * 256 + threadIdx.x;
  const long long n = (d_0);
  [[maybe_unused]] const long long col = chunk * 4 - jf_off;
  if (col >= n) return;
  const int jf_lo = col < 0 ? (int)-col : 0;
  const int jf_hi = col + 4 > n ? (int)(n - col) : 4;
  jf_vec<float, 4> sv0;
  const jf_vec<float, 4> lv1 = jf_load_chunk<float, 4>(in_0 + col, jf_lo, jf_hi);
  const float v2 = lv1.V[0];
  const jf_vec<float, 4> lv3 = jf_load_chunk<float, 4>(in_1 + col, jf_lo, jf_hi);
  const float v4 = lv3.V[0];
  const float v5 = (v2 + v4);
  const float v6 = (s_0 * v5);
  const jf_vec<float, 4> lv7 = jf_load_chunk<float, 4>(in_2 + col, jf_lo, jf_hi);
  const float v8 = lv7.V[0];
  const float v9 = (v6 + v8);
  sv0.V[0] = v9;
  const float v10 = lv1.V[1];
  const float v11 = lv3.V[1];
  const float v12 = (v10 + v11);
  const float v13 = (s_0 * v12);
  const float v14 = lv7.V[1];
  const float v15 = (v13 + v14);
  sv0.V[1] = v15;
  const float v16 = lv1.V[2];
  const float v17 = lv3.V[2];
  const float v18 = (v16 + v17);
  const float v19 = (s_0 * v18);
  const float v20 = lv7.V[2];
  const float v21 = (v19 + v20);
  sv0.V[2] = v21;
  const float v22 = lv1.V[3];
  const float v23 = lv3.V[3];
  const float v24 = (v22 + v23);
  const float v25 = (s_0 * v24);
  const float v26 = lv7.V[3];
  const float v27 = (v25 + v26);
  sv0.V[3] = v27;
  jf_store_chunk<float, 4>(out_0 + col, sv0, jf_lo, jf_hi);
}
