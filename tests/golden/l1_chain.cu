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
  const long long jf_full = n / 4;
  [[maybe_unused]] const long long col = chunk < jf_full ? chunk * 4 : jf_full * 4 + (chunk - jf_full);
  if (col >= n) return;
  if (chunk < jf_full) {
    const jf_vec<float, 4> lv0 = jf_load<float, 4>(in_0 + col);
    const float v1 = lv0.V[0];
    const jf_vec<float, 4> lv2 = jf_load<float, 4>(in_1 + col);
    const float v3 = lv2.V[0];
    const jf_vec<float, 4> lv4 = jf_load<float, 4>(in_2 + col);
    const float v5 = lv4.V[0];
    jf_vec<float, 4> sv6;
    const float v7 = (v1 + v3);
    const float v8 = (s_0 * v7);
    const float v9 = (v8 + v5);
    sv6.V[0] = v9;
    const float v10 = lv0.V[1];
    const float v11 = lv2.V[1];
    const float v12 = (v10 + v11);
    const float v13 = (s_0 * v12);
    const float v14 = lv4.V[1];
    const float v15 = (v13 + v14);
    sv6.V[1] = v15;
    const float v16 = lv0.V[2];
    const float v17 = lv2.V[2];
    const float v18 = (v16 + v17);
    const float v19 = (s_0 * v18);
    const float v20 = lv4.V[2];
    const float v21 = (v19 + v20);
    sv6.V[2] = v21;
    const float v22 = lv0.V[3];
    const float v23 = lv2.V[3];
    const float v24 = (v22 + v23);
    const float v25 = (s_0 * v24);
    const float v26 = lv4.V[3];
    const float v27 = (v25 + v26);
    sv6.V[3] = v27;
    jf_store<float, 4>(out_0 + col, sv6);
  }
  else {
    const float v28 = in_0[col];
    const float v29 = in_1[col];
    const float v30 = (v28 + v29);
    const float v31 = (s_0 * v30);
    const float v32 = in_2[col];
    const float v33 = (v31 + v32);
    out_0[col] = v33;
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
  const jf_vec<float, 4> lv0 = jf_load_chunk<float, 4>(in_0 + col, jf_lo, jf_hi);
  const float v1 = lv0.V[0];
  const jf_vec<float, 4> lv2 = jf_load_chunk<float, 4>(in_1 + col, jf_lo, jf_hi);
  const float v3 = lv2.V[0];
  const jf_vec<float, 4> lv4 = jf_load_chunk<float, 4>(in_2 + col, jf_lo, jf_hi);
  const float v5 = lv4.V[0];
  jf_vec<float, 4> sv6;
  const float v7 = (v1 + v3);
  const float v8 = (s_0 * v7);
  const float v9 = (v8 + v5);
  sv6.V[0] = v9;
  const float v10 = lv0.V[1];
  const float v11 = lv2.V[1];
  const float v12 = (v10 + v11);
  const float v13 = (s_0 * v12);
  const float v14 = lv4.V[1];
  const float v15 = (v13 + v14);
  sv6.V[1] = v15;
  const float v16 = lv0.V[2];
  const float v17 = lv2.V[2];
  const float v18 = (v16 + v17);
  const float v19 = (s_0 * v18);
  const float v20 = lv4.V[2];
  const float v21 = (v19 + v20);
  sv6.V[2] = v21;
  const float v22 = lv0.V[3];
  const float v23 = lv2.V[3];
  const float v24 = (v22 + v23);
  const float v25 = (s_0 * v24);
  const float v26 = lv4.V[3];
  const float v27 = (v25 + v26);
  sv6.V[3] = v27;
  jf_store_chunk<float, 4>(out_0 + col, sv6, jf_lo, jf_hi);
}
