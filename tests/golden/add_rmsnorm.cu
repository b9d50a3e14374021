// kernel jf_k0_add (row-reduction): computes
//   %2 = add(%1, %0) : bf16[B,4096]
//   %5 = cast(%2) : f32[B,4096]
//   %6 = mul(%5, %5) : f32[B,4096]
//   %7 = mean(%6) : f32[B,1] last-axis
//   %8 = add(%7, %3) : f32[B,1]
//   %9 = rsqrt(%8) : f32[B,1]
//   %10 = cast(%4) : f32[4096]
//   %11 = mul(%5, %9) : f32[B,4096]
//   %12 = mul(%11, %10) : f32[B,4096]
//   %13 = cast(%12) : bf16[B,4096]
// in_0 <- %0 input "residual"
// in_1 <- %1 input "x"
// in_2 <- %4 input "weight"
// out_0 -> %2
// out_1 -> %13
// s_0 = scalar "eps"
// d_0 = dim "B"
extern "C" __global__ void __launch_bounds__(256) jf_k0_add_v8(
    const jf_bf16* __restrict__ in_0,
    const jf_bf16* __restrict__ in_1,
    const jf_bf16* __restrict__ in_2,
    jf_bf16* __restrict__ out_0,
    jf_bf16* __restrict__ out_1,
    float s_0,
    long long d_0) {
  __shared__ float jf_smem7[9];
  const int tx = threadIdx.x;
  const long long row = (long long)blockIdx.x * 1 + threadIdx.y;
  const bool rowOk = row < (long long)((d_0));
  const long long rowc = rowOk ? row : 0;
  [[maybe_unused]] const long long R = 4096;
  const long long c0 = rowc;
  jf_vec<jf_bf16, 8> cv0[2];
  jf_vec<jf_bf16, 8> cv1[2];
  jf_vec<jf_bf16, 8> cv2[2];
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      [[maybe_unused]] const long long col = ((long long)j * 256 + tx) * 8;
      cv0[j] = jf_load<jf_bf16, 8>(in_1 + (c0 * 4096) + col);
      cv1[j] = jf_load<jf_bf16, 8>(in_0 + (c0 * 4096) + col);
      cv2[j] = jf_load<jf_bf16, 8>(in_2 + col);
    }
  }
  float acc7 = (0.0f);
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      [[maybe_unused]] const long long col = ((long long)j * 256 + tx) * 8;
      const float v0 = jf_bf16_to_float_mov(cv0[j].V[0]);
      const float v1 = jf_bf16_to_float_mov(cv1[j].V[0]);
      const float v2 = (v0 + v1);
      const float v3 = v2;
      const float v4 = (v3 * v3);
      acc7 = acc7 + v4;
      const float v5 = jf_bf16_to_float_mov(cv0[j].V[1]);
      const float v6 = jf_bf16_to_float_mov(cv1[j].V[1]);
      const float v7 = (v5 + v6);
      const float v8 = v7;
      const float v9 = (v8 * v8);
      acc7 = acc7 + v9;
      const float v10 = jf_bf16_to_float_mov(cv0[j].V[2]);
      const float v11 = jf_bf16_to_float_mov(cv1[j].V[2]);
      const float v12 = (v10 + v11);
      const float v13 = v12;
      const float v14 = (v13 * v13);
      acc7 = acc7 + v14;
      const float v15 = jf_bf16_to_float_mov(cv0[j].V[3]);
      const float v16 = jf_bf16_to_float_mov(cv1[j].V[3]);
      const float v17 = (v15 + v16);
      const float v18 = v17;
      const float v19 = (v18 * v18);
      acc7 = acc7 + v19;
      const float v20 = jf_bf16_to_float_mov(cv0[j].V[4]);
      const float v21 = jf_bf16_to_float_mov(cv1[j].V[4]);
      const float v22 = (v20 + v21);
      const float v23 = v22;
      const float v24 = (v23 * v23);
      acc7 = acc7 + v24;
      const float v25 = jf_bf16_to_float_mov(cv0[j].V[5]);
      const float v26 = jf_bf16_to_float_mov(cv1[j].V[5]);
      const float v27 = (v25 + v26);
      const float v28 = v27;
      const float v29 = (v28 * v28);
      acc7 = acc7 + v29;
      const float v30 = jf_bf16_to_float_mov(cv0[j].V[6]);
      const float v31 = jf_bf16_to_float_mov(cv1[j].V[6]);
      const float v32 = (v30 + v31);
      const float v33 = v32;
      const float v34 = (v33 * v33);
      acc7 = acc7 + v34;
      const float v35 = jf_bf16_to_float_mov(cv0[j].V[7]);
      const float v36 = jf_bf16_to_float_mov(cv1[j].V[7]);
      const float v37 = (v35 + v36);
      const float v38 = v37;
      const float v39 = (v38 * v38);
      acc7 = acc7 + v39;
    }
  }
  const float red7 = jf_block_reduce<256>(acc7, jf_add_op(), (0.0f), jf_smem7) / (float)R;
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      [[maybe_unused]] const long long col = ((long long)j * 256 + tx) * 8;
      jf_vec<jf_bf16, 8> sv40;
      const float v41 = jf_bf16_to_float_mov(cv0[j].V[0]);
      const float v42 = jf_bf16_to_float_mov(cv1[j].V[0]);
      const float v43 = (v41 + v42);
      sv40.V[0] = jf_float_to_bf16(v43);
      const float v44 = jf_bf16_to_float_mov(cv0[j].V[1]);
      const float v45 = jf_bf16_to_float_mov(cv1[j].V[1]);
      const float v46 = (v44 + v45);
      sv40.V[1] = jf_float_to_bf16(v46);
      const float v47 = jf_bf16_to_float_mov(cv0[j].V[2]);
      const float v48 = jf_bf16_to_float_mov(cv1[j].V[2]);
      const float v49 = (v47 + v48);
      sv40.V[2] = jf_float_to_bf16(v49);
      const float v50 = jf_bf16_to_float_mov(cv0[j].V[3]);
      const float v51 = jf_bf16_to_float_mov(cv1[j].V[3]);
      const float v52 = (v50 + v51);
      sv40.V[3] = jf_float_to_bf16(v52);
      const float v53 = jf_bf16_to_float_mov(cv0[j].V[4]);
      const float v54 = jf_bf16_to_float_mov(cv1[j].V[4]);
      const float v55 = (v53 + v54);
      sv40.V[4] = jf_float_to_bf16(v55);
      const float v56 = jf_bf16_to_float_mov(cv0[j].V[5]);
      const float v57 = jf_bf16_to_float_mov(cv1[j].V[5]);
      const float v58 = (v56 + v57);
      sv40.V[5] = jf_float_to_bf16(v58);
      const float v59 = jf_bf16_to_float_mov(cv0[j].V[6]);
      const float v60 = jf_bf16_to_float_mov(cv1[j].V[6]);
      const float v61 = (v59 + v60);
      sv40.V[6] = jf_float_to_bf16(v61);
      const float v62 = jf_bf16_to_float_mov(cv0[j].V[7]);
      const float v63 = jf_bf16_to_float_mov(cv1[j].V[7]);
      const float v64 = (v62 + v63);
      sv40.V[7] = jf_float_to_bf16(v64);
      jf_store<jf_bf16, 8>(out_0 + rowc * R + col, sv40);
      jf_vec<jf_bf16, 8> sv65;
      const float v66 = v43;
      const float v67 = (red7 + s_0);
      const float v68 = rsqrtf(v67);
      const float v69 = (v66 * v68);
      const float v70 = jf_bf16_to_float_mov(cv2[j].V[0]);
      const float v71 = v70;
      const float v72 = (v69 * v71);
      sv65.V[0] = jf_float_to_bf16(v72);
      const float v73 = v46;
      const float v74 = (v73 * v68);
      const float v75 = jf_bf16_to_float_mov(cv2[j].V[1]);
      const float v76 = v75;
      const float v77 = (v74 * v76);
      sv65.V[1] = jf_float_to_bf16(v77);
      const float v78 = v49;
      const float v79 = (v78 * v68);
      const float v80 = jf_bf16_to_float_mov(cv2[j].V[2]);
      const float v81 = v80;
      const float v82 = (v79 * v81);
      sv65.V[2] = jf_float_to_bf16(v82);
      const float v83 = v52;
      const float v84 = (v83 * v68);
      const float v85 = jf_bf16_to_float_mov(cv2[j].V[3]);
      const float v86 = v85;
      const float v87 = (v84 * v86);
      sv65.V[3] = jf_float_to_bf16(v87);
      const float v88 = v55;
      const float v89 = (v88 * v68);
      const float v90 = jf_bf16_to_float_mov(cv2[j].V[4]);
      const float v91 = v90;
      const float v92 = (v89 * v91);
      sv65.V[4] = jf_float_to_bf16(v92);
      const float v93 = v58;
      const float v94 = (v93 * v68);
      const float v95 = jf_bf16_to_float_mov(cv2[j].V[5]);
      const float v96 = v95;
      const float v97 = (v94 * v96);
      sv65.V[5] = jf_float_to_bf16(v97);
      const float v98 = v61;
      const float v99 = (v98 * v68);
      const float v100 = jf_bf16_to_float_mov(cv2[j].V[6]);
      const float v101 = v100;
      const float v102 = (v99 * v101);
      sv65.V[6] = jf_float_to_bf16(v102);
      const float v103 = v64;
      const float v104 = (v103 * v68);
      const float v105 = jf_bf16_to_float_mov(cv2[j].V[7]);
      const float v106 = v105;
      const float v107 = (v104 * v106);
      sv65.V[7] = jf_float_to_bf16(v107);
      jf_store<jf_bf16, 8>(out_1 + rowc * R + col, sv65);
    }
  }
}
extern "C" __global__ void __launch_bounds__(256) jf_k0_add_p8(
    const jf_bf16* __restrict__ in_0,
    const jf_bf16* __restrict__ in_1,
    const jf_bf16* __restrict__ in_2,
    jf_bf16* __restrict__ out_0,
    jf_bf16* __restrict__ out_1,
    float s_0,
    long long d_0) {
  __shared__ float jf_smem7[9];
  const int tx = threadIdx.x;
  const long long row = (long long)blockIdx.x * 1 + threadIdx.y;
  const bool rowOk = row < (long long)((d_0));
  const long long rowc = rowOk ? row : 0;
  [[maybe_unused]] const long long R = 4096;
  const int jf_off = jf_phase<jf_bf16, 8>(in_0);
  const int jf_o = (int)((jf_off + rowc * R) % 8);
  const int jf_h0 = (8 - jf_o) % 8;
  const int jf_h = jf_h0 < R ? jf_h0 : (int)R;
  const long long jf_nw = (R - jf_h) / 8;
  const int jf_ns = (int)(R - jf_nw * 8);
  const long long c0 = rowc;
  jf_vec<jf_bf16, 8> cv0[2];
  jf_vec<jf_bf16, 8> cv1[2];
  jf_vec<jf_bf16, 8> cv2[2];
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long jf_c = ((long long)j * 256 + tx);
      if (j < 1 || jf_c < jf_nw) {
        [[maybe_unused]] const long long col = jf_h + jf_c * 8;
        cv0[j] = jf_load_whole<jf_bf16, 8>(in_1 + (c0 * 4096) + col);
        cv1[j] = jf_load<jf_bf16, 8>(in_0 + (c0 * 4096) + col);
        cv2[j] = jf_load_whole<jf_bf16, 8>(in_2 + col);
      }
    }
  }
  jf_bf16 cs0 = 0;
  jf_bf16 cs1 = 0;
  jf_bf16 cs2 = 0;
  if (rowOk && tx < jf_ns) {
    [[maybe_unused]] const long long col = tx < jf_h ? (long long)tx : tx + jf_nw * 8;
    cs0 = in_1[(c0 * 4096 + col)];
    cs1 = in_0[(c0 * 4096 + col)];
    cs2 = in_2[(col)];
  }
  float acc7 = (0.0f);
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long jf_c = ((long long)j * 256 + tx);
      if (j < 1 || jf_c < jf_nw) {
        [[maybe_unused]] const long long col = jf_h + jf_c * 8;
        const float v0 = jf_bf16_to_float_mov(cv0[j].V[0]);
        const float v1 = jf_bf16_to_float_mov(cv1[j].V[0]);
        const float v2 = (v0 + v1);
        const float v3 = v2;
        const float v4 = (v3 * v3);
        acc7 = acc7 + v4;
        const float v5 = jf_bf16_to_float_mov(cv0[j].V[1]);
        const float v6 = jf_bf16_to_float_mov(cv1[j].V[1]);
        const float v7 = (v5 + v6);
        const float v8 = v7;
        const float v9 = (v8 * v8);
        acc7 = acc7 + v9;
        const float v10 = jf_bf16_to_float_mov(cv0[j].V[2]);
        const float v11 = jf_bf16_to_float_mov(cv1[j].V[2]);
        const float v12 = (v10 + v11);
        const float v13 = v12;
        const float v14 = (v13 * v13);
        acc7 = acc7 + v14;
        const float v15 = jf_bf16_to_float_mov(cv0[j].V[3]);
        const float v16 = jf_bf16_to_float_mov(cv1[j].V[3]);
        const float v17 = (v15 + v16);
        const float v18 = v17;
        const float v19 = (v18 * v18);
        acc7 = acc7 + v19;
        const float v20 = jf_bf16_to_float_mov(cv0[j].V[4]);
        const float v21 = jf_bf16_to_float_mov(cv1[j].V[4]);
        const float v22 = (v20 + v21);
        const float v23 = v22;
        const float v24 = (v23 * v23);
        acc7 = acc7 + v24;
        const float v25 = jf_bf16_to_float_mov(cv0[j].V[5]);
        const float v26 = jf_bf16_to_float_mov(cv1[j].V[5]);
        const float v27 = (v25 + v26);
        const float v28 = v27;
        const float v29 = (v28 * v28);
        acc7 = acc7 + v29;
        const float v30 = jf_bf16_to_float_mov(cv0[j].V[6]);
        const float v31 = jf_bf16_to_float_mov(cv1[j].V[6]);
        const float v32 = (v30 + v31);
        const float v33 = v32;
        const float v34 = (v33 * v33);
        acc7 = acc7 + v34;
        const float v35 = jf_bf16_to_float_mov(cv0[j].V[7]);
        const float v36 = jf_bf16_to_float_mov(cv1[j].V[7]);
        const float v37 = (v35 + v36);
        const float v38 = v37;
        const float v39 = (v38 * v38);
        acc7 = acc7 + v39;
      }
    }
    if (tx < jf_ns) {
      const int jf_e = tx;
      [[maybe_unused]] const long long col = jf_e < jf_h ? (long long)jf_e : jf_e + jf_nw * 8;
      const float v40 = jf_bf16_to_float(cs0);
      const float v41 = jf_bf16_to_float(cs1);
      const float v42 = (v40 + v41);
      const float v43 = v42;
      const float v44 = (v43 * v43);
      acc7 = acc7 + v44;
    }
  }
  const float red7 = jf_block_reduce<256>(acc7, jf_add_op(), (0.0f), jf_smem7) / (float)R;
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long jf_c = ((long long)j * 256 + tx);
      if (j < 1 || jf_c < jf_nw) {
        [[maybe_unused]] const long long col = jf_h + jf_c * 8;
        jf_vec<jf_bf16, 8> sv45;
        const float v46 = jf_bf16_to_float_mov(cv0[j].V[0]);
        const float v47 = jf_bf16_to_float_mov(cv1[j].V[0]);
        const float v48 = (v46 + v47);
        sv45.V[0] = jf_float_to_bf16(v48);
        const float v49 = jf_bf16_to_float_mov(cv0[j].V[1]);
        const float v50 = jf_bf16_to_float_mov(cv1[j].V[1]);
        const float v51 = (v49 + v50);
        sv45.V[1] = jf_float_to_bf16(v51);
        const float v52 = jf_bf16_to_float_mov(cv0[j].V[2]);
        const float v53 = jf_bf16_to_float_mov(cv1[j].V[2]);
        const float v54 = (v52 + v53);
        sv45.V[2] = jf_float_to_bf16(v54);
        const float v55 = jf_bf16_to_float_mov(cv0[j].V[3]);
        const float v56 = jf_bf16_to_float_mov(cv1[j].V[3]);
        const float v57 = (v55 + v56);
        sv45.V[3] = jf_float_to_bf16(v57);
        const float v58 = jf_bf16_to_float_mov(cv0[j].V[4]);
        const float v59 = jf_bf16_to_float_mov(cv1[j].V[4]);
        const float v60 = (v58 + v59);
        sv45.V[4] = jf_float_to_bf16(v60);
        const float v61 = jf_bf16_to_float_mov(cv0[j].V[5]);
        const float v62 = jf_bf16_to_float_mov(cv1[j].V[5]);
        const float v63 = (v61 + v62);
        sv45.V[5] = jf_float_to_bf16(v63);
        const float v64 = jf_bf16_to_float_mov(cv0[j].V[6]);
        const float v65 = jf_bf16_to_float_mov(cv1[j].V[6]);
        const float v66 = (v64 + v65);
        sv45.V[6] = jf_float_to_bf16(v66);
        const float v67 = jf_bf16_to_float_mov(cv0[j].V[7]);
        const float v68 = jf_bf16_to_float_mov(cv1[j].V[7]);
        const float v69 = (v67 + v68);
        sv45.V[7] = jf_float_to_bf16(v69);
        jf_store_whole<jf_bf16, 8>(out_0 + rowc * R + col, sv45);
        jf_vec<jf_bf16, 8> sv70;
        const float v71 = v48;
        const float v72 = (red7 + s_0);
        const float v73 = rsqrtf(v72);
        const float v74 = (v71 * v73);
        const float v75 = jf_bf16_to_float_mov(cv2[j].V[0]);
        const float v76 = v75;
        const float v77 = (v74 * v76);
        sv70.V[0] = jf_float_to_bf16(v77);
        const float v78 = v51;
        const float v79 = (v78 * v73);
        const float v80 = jf_bf16_to_float_mov(cv2[j].V[1]);
        const float v81 = v80;
        const float v82 = (v79 * v81);
        sv70.V[1] = jf_float_to_bf16(v82);
        const float v83 = v54;
        const float v84 = (v83 * v73);
        const float v85 = jf_bf16_to_float_mov(cv2[j].V[2]);
        const float v86 = v85;
        const float v87 = (v84 * v86);
        sv70.V[2] = jf_float_to_bf16(v87);
        const float v88 = v57;
        const float v89 = (v88 * v73);
        const float v90 = jf_bf16_to_float_mov(cv2[j].V[3]);
        const float v91 = v90;
        const float v92 = (v89 * v91);
        sv70.V[3] = jf_float_to_bf16(v92);
        const float v93 = v60;
        const float v94 = (v93 * v73);
        const float v95 = jf_bf16_to_float_mov(cv2[j].V[4]);
        const float v96 = v95;
        const float v97 = (v94 * v96);
        sv70.V[4] = jf_float_to_bf16(v97);
        const float v98 = v63;
        const float v99 = (v98 * v73);
        const float v100 = jf_bf16_to_float_mov(cv2[j].V[5]);
        const float v101 = v100;
        const float v102 = (v99 * v101);
        sv70.V[5] = jf_float_to_bf16(v102);
        const float v103 = v66;
        const float v104 = (v103 * v73);
        const float v105 = jf_bf16_to_float_mov(cv2[j].V[6]);
        const float v106 = v105;
        const float v107 = (v104 * v106);
        sv70.V[6] = jf_float_to_bf16(v107);
        const float v108 = v69;
        const float v109 = (v108 * v73);
        const float v110 = jf_bf16_to_float_mov(cv2[j].V[7]);
        const float v111 = v110;
        const float v112 = (v109 * v111);
        sv70.V[7] = jf_float_to_bf16(v112);
        jf_store_whole<jf_bf16, 8>(out_1 + rowc * R + col, sv70);
      }
    }
    if (tx < jf_ns) {
      const int jf_e = tx;
      [[maybe_unused]] const long long col = jf_e < jf_h ? (long long)jf_e : jf_e + jf_nw * 8;
      const float v113 = jf_bf16_to_float(cs0);
      const float v114 = jf_bf16_to_float(cs1);
      const float v115 = (v113 + v114);
      out_0[rowc * R + col] = jf_float_to_bf16(v115);
      const float v116 = v115;
      const float v117 = (red7 + s_0);
      const float v118 = rsqrtf(v117);
      const float v119 = (v116 * v118);
      const float v120 = jf_bf16_to_float(cs2);
      const float v121 = v120;
      const float v122 = (v119 * v121);
      out_1[rowc * R + col] = jf_float_to_bf16(v122);
    }
  }
}
extern "C" __global__ void __launch_bounds__(256) jf_k0_add_o8(
    const jf_bf16* __restrict__ in_0,
    const jf_bf16* __restrict__ in_1,
    const jf_bf16* __restrict__ in_2,
    jf_bf16* __restrict__ out_0,
    jf_bf16* __restrict__ out_1,
    float s_0,
    long long d_0) {
  __shared__ float jf_smem7[9];
  const int tx = threadIdx.x;
  const long long row = (long long)blockIdx.x * 1 + threadIdx.y;
  const bool rowOk = row < (long long)((d_0));
  const long long rowc = rowOk ? row : 0;
  [[maybe_unused]] const long long R = 4096;
  const int jf_off = jf_phase<jf_bf16, 8>(out_0);
  const int jf_o = (int)((jf_off + rowc * R) % 8);
  const int jf_h0 = (8 - jf_o) % 8;
  const int jf_h = jf_h0 < R ? jf_h0 : (int)R;
  const long long jf_nw = (R - jf_h) / 8;
  const int jf_ns = (int)(R - jf_nw * 8);
  const long long c0 = rowc;
  jf_vec<jf_bf16, 8> cv0[2];
  jf_vec<jf_bf16, 8> cv1[2];
  jf_vec<jf_bf16, 8> cv2[2];
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long jf_c = ((long long)j * 256 + tx);
      if (j < 1 || jf_c < jf_nw) {
        [[maybe_unused]] const long long col = jf_h + jf_c * 8;
        cv0[j] = jf_load_whole<jf_bf16, 8>(in_1 + (c0 * 4096) + col);
        cv1[j] = jf_load_whole<jf_bf16, 8>(in_0 + (c0 * 4096) + col);
        cv2[j] = jf_load_whole<jf_bf16, 8>(in_2 + col);
      }
    }
  }
  jf_bf16 cs0 = 0;
  jf_bf16 cs1 = 0;
  jf_bf16 cs2 = 0;
  if (rowOk && tx < jf_ns) {
    [[maybe_unused]] const long long col = tx < jf_h ? (long long)tx : tx + jf_nw * 8;
    cs0 = in_1[(c0 * 4096 + col)];
    cs1 = in_0[(c0 * 4096 + col)];
    cs2 = in_2[(col)];
  }
  float acc7 = (0.0f);
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long jf_c = ((long long)j * 256 + tx);
      if (j < 1 || jf_c < jf_nw) {
        [[maybe_unused]] const long long col = jf_h + jf_c * 8;
        const float v0 = jf_bf16_to_float_mov(cv0[j].V[0]);
        const float v1 = jf_bf16_to_float_mov(cv1[j].V[0]);
        const float v2 = (v0 + v1);
        const float v3 = v2;
        const float v4 = (v3 * v3);
        acc7 = acc7 + v4;
        const float v5 = jf_bf16_to_float_mov(cv0[j].V[1]);
        const float v6 = jf_bf16_to_float_mov(cv1[j].V[1]);
        const float v7 = (v5 + v6);
        const float v8 = v7;
        const float v9 = (v8 * v8);
        acc7 = acc7 + v9;
        const float v10 = jf_bf16_to_float_mov(cv0[j].V[2]);
        const float v11 = jf_bf16_to_float_mov(cv1[j].V[2]);
        const float v12 = (v10 + v11);
        const float v13 = v12;
        const float v14 = (v13 * v13);
        acc7 = acc7 + v14;
        const float v15 = jf_bf16_to_float_mov(cv0[j].V[3]);
        const float v16 = jf_bf16_to_float_mov(cv1[j].V[3]);
        const float v17 = (v15 + v16);
        const float v18 = v17;
        const float v19 = (v18 * v18);
        acc7 = acc7 + v19;
        const float v20 = jf_bf16_to_float_mov(cv0[j].V[4]);
        const float v21 = jf_bf16_to_float_mov(cv1[j].V[4]);
        const float v22 = (v20 + v21);
        const float v23 = v22;
        const float v24 = (v23 * v23);
        acc7 = acc7 + v24;
        const float v25 = jf_bf16_to_float_mov(cv0[j].V[5]);
        const float v26 = jf_bf16_to_float_mov(cv1[j].V[5]);
        const float v27 = (v25 + v26);
        const float v28 = v27;
        const float v29 = (v28 * v28);
        acc7 = acc7 + v29;
        const float v30 = jf_bf16_to_float_mov(cv0[j].V[6]);
        const float v31 = jf_bf16_to_float_mov(cv1[j].V[6]);
        const float v32 = (v30 + v31);
        const float v33 = v32;
        const float v34 = (v33 * v33);
        acc7 = acc7 + v34;
        const float v35 = jf_bf16_to_float_mov(cv0[j].V[7]);
        const float v36 = jf_bf16_to_float_mov(cv1[j].V[7]);
        const float v37 = (v35 + v36);
        const float v38 = v37;
        const float v39 = (v38 * v38);
        acc7 = acc7 + v39;
      }
    }
    if (tx < jf_ns) {
      const int jf_e = tx;
      [[maybe_unused]] const long long col = jf_e < jf_h ? (long long)jf_e : jf_e + jf_nw * 8;
      const float v40 = jf_bf16_to_float(cs0);
      const float v41 = jf_bf16_to_float(cs1);
      const float v42 = (v40 + v41);
      const float v43 = v42;
      const float v44 = (v43 * v43);
      acc7 = acc7 + v44;
    }
  }
  const float red7 = jf_block_reduce<256>(acc7, jf_add_op(), (0.0f), jf_smem7) / (float)R;
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long jf_c = ((long long)j * 256 + tx);
      if (j < 1 || jf_c < jf_nw) {
        [[maybe_unused]] const long long col = jf_h + jf_c * 8;
        jf_vec<jf_bf16, 8> sv45;
        const float v46 = jf_bf16_to_float_mov(cv0[j].V[0]);
        const float v47 = jf_bf16_to_float_mov(cv1[j].V[0]);
        const float v48 = (v46 + v47);
        sv45.V[0] = jf_float_to_bf16(v48);
        const float v49 = jf_bf16_to_float_mov(cv0[j].V[1]);
        const float v50 = jf_bf16_to_float_mov(cv1[j].V[1]);
        const float v51 = (v49 + v50);
        sv45.V[1] = jf_float_to_bf16(v51);
        const float v52 = jf_bf16_to_float_mov(cv0[j].V[2]);
        const float v53 = jf_bf16_to_float_mov(cv1[j].V[2]);
        const float v54 = (v52 + v53);
        sv45.V[2] = jf_float_to_bf16(v54);
        const float v55 = jf_bf16_to_float_mov(cv0[j].V[3]);
        const float v56 = jf_bf16_to_float_mov(cv1[j].V[3]);
        const float v57 = (v55 + v56);
        sv45.V[3] = jf_float_to_bf16(v57);
        const float v58 = jf_bf16_to_float_mov(cv0[j].V[4]);
        const float v59 = jf_bf16_to_float_mov(cv1[j].V[4]);
        const float v60 = (v58 + v59);
        sv45.V[4] = jf_float_to_bf16(v60);
        const float v61 = jf_bf16_to_float_mov(cv0[j].V[5]);
        const float v62 = jf_bf16_to_float_mov(cv1[j].V[5]);
        const float v63 = (v61 + v62);
        sv45.V[5] = jf_float_to_bf16(v63);
        const float v64 = jf_bf16_to_float_mov(cv0[j].V[6]);
        const float v65 = jf_bf16_to_float_mov(cv1[j].V[6]);
        const float v66 = (v64 + v65);
        sv45.V[6] = jf_float_to_bf16(v66);
        const float v67 = jf_bf16_to_float_mov(cv0[j].V[7]);
        const float v68 = jf_bf16_to_float_mov(cv1[j].V[7]);
        const float v69 = (v67 + v68);
        sv45.V[7] = jf_float_to_bf16(v69);
        jf_store_whole<jf_bf16, 8>(out_0 + rowc * R + col, sv45);
        jf_vec<jf_bf16, 8> sv70;
        const float v71 = v48;
        const float v72 = (red7 + s_0);
        const float v73 = rsqrtf(v72);
        const float v74 = (v71 * v73);
        const float v75 = jf_bf16_to_float_mov(cv2[j].V[0]);
        const float v76 = v75;
        const float v77 = (v74 * v76);
        sv70.V[0] = jf_float_to_bf16(v77);
        const float v78 = v51;
        const float v79 = (v78 * v73);
        const float v80 = jf_bf16_to_float_mov(cv2[j].V[1]);
        const float v81 = v80;
        const float v82 = (v79 * v81);
        sv70.V[1] = jf_float_to_bf16(v82);
        const float v83 = v54;
        const float v84 = (v83 * v73);
        const float v85 = jf_bf16_to_float_mov(cv2[j].V[2]);
        const float v86 = v85;
        const float v87 = (v84 * v86);
        sv70.V[2] = jf_float_to_bf16(v87);
        const float v88 = v57;
        const float v89 = (v88 * v73);
        const float v90 = jf_bf16_to_float_mov(cv2[j].V[3]);
        const float v91 = v90;
        const float v92 = (v89 * v91);
        sv70.V[3] = jf_float_to_bf16(v92);
        const float v93 = v60;
        const float v94 = (v93 * v73);
        const float v95 = jf_bf16_to_float_mov(cv2[j].V[4]);
        const float v96 = v95;
        const float v97 = (v94 * v96);
        sv70.V[4] = jf_float_to_bf16(v97);
        const float v98 = v63;
        const float v99 = (v98 * v73);
        const float v100 = jf_bf16_to_float_mov(cv2[j].V[5]);
        const float v101 = v100;
        const float v102 = (v99 * v101);
        sv70.V[5] = jf_float_to_bf16(v102);
        const float v103 = v66;
        const float v104 = (v103 * v73);
        const float v105 = jf_bf16_to_float_mov(cv2[j].V[6]);
        const float v106 = v105;
        const float v107 = (v104 * v106);
        sv70.V[6] = jf_float_to_bf16(v107);
        const float v108 = v69;
        const float v109 = (v108 * v73);
        const float v110 = jf_bf16_to_float_mov(cv2[j].V[7]);
        const float v111 = v110;
        const float v112 = (v109 * v111);
        sv70.V[7] = jf_float_to_bf16(v112);
        jf_store_whole<jf_bf16, 8>(out_1 + rowc * R + col, sv70);
      }
    }
    if (tx < jf_ns) {
      const int jf_e = tx;
      [[maybe_unused]] const long long col = jf_e < jf_h ? (long long)jf_e : jf_e + jf_nw * 8;
      const float v113 = jf_bf16_to_float(cs0);
      const float v114 = jf_bf16_to_float(cs1);
      const float v115 = (v113 + v114);
      out_0[rowc * R + col] = jf_float_to_bf16(v115);
      const float v116 = v115;
      const float v117 = (red7 + s_0);
      const float v118 = rsqrtf(v117);
      const float v119 = (v116 * v118);
      const float v120 = jf_bf16_to_float(cs2);
      const float v121 = v120;
      const float v122 = (v119 * v121);
      out_1[rowc * R + col] = jf_float_to_bf16(v122);
    }
  }
}
