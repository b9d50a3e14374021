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
  const long long R = 4096;
  const long long c0 = rowc;
  jf_vec<jf_bf16, 8> cv0[2];
  jf_vec<jf_bf16, 8> cv1[2];
  jf_vec<jf_bf16, 8> cv2[2];
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long col = ((long long)j * 256 + tx) * 8;
      cv0[j] = jf_load<jf_bf16, 8>(in_1 + (c0 * 4096) + col);
      cv1[j] = jf_load<jf_bf16, 8>(in_0 + (c0 * 4096) + col);
      cv2[j] = jf_load<jf_bf16, 8>(in_2 + col);
    }
  }
  float acc7 = (0.0f);
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long col = ((long long)j * 256 + tx) * 8;
      const float v0 = jf_bf16_to_float(cv0[j].V[0]);
      const float v1 = jf_bf16_to_float(cv1[j].V[0]);
      const float v2 = (v0 + v1);
      const float v3 = v2;
      const float v4 = (v3 * v3);
      acc7 = acc7 + v4;
      const float v5 = jf_bf16_to_float(cv0[j].V[1]);
      const float v6 = jf_bf16_to_float(cv1[j].V[1]);
      const float v7 = (v5 + v6);
      const float v8 = v7;
      const float v9 = (v8 * v8);
      acc7 = acc7 + v9;
      const float v10 = jf_bf16_to_float(cv0[j].V[2]);
      const float v11 = jf_bf16_to_float(cv1[j].V[2]);
      const float v12 = (v10 + v11);
      const float v13 = v12;
      const float v14 = (v13 * v13);
      acc7 = acc7 + v14;
      const float v15 = jf_bf16_to_float(cv0[j].V[3]);
      const float v16 = jf_bf16_to_float(cv1[j].V[3]);
      const float v17 = (v15 + v16);
      const float v18 = v17;
      const float v19 = (v18 * v18);
      acc7 = acc7 + v19;
      const float v20 = jf_bf16_to_float(cv0[j].V[4]);
      const float v21 = jf_bf16_to_float(cv1[j].V[4]);
      const float v22 = (v20 + v21);
      const float v23 = v22;
      const float v24 = (v23 * v23);
      acc7 = acc7 + v24;
      const float v25 = jf_bf16_to_float(cv0[j].V[5]);
      const float v26 = jf_bf16_to_float(cv1[j].V[5]);
      const float v27 = (v25 + v26);
      const float v28 = v27;
      const float v29 = (v28 * v28);
      acc7 = acc7 + v29;
      const float v30 = jf_bf16_to_float(cv0[j].V[6]);
      const float v31 = jf_bf16_to_float(cv1[j].V[6]);
      const float v32 = (v30 + v31);
      const float v33 = v32;
      const float v34 = (v33 * v33);
      acc7 = acc7 + v34;
      const float v35 = jf_bf16_to_float(cv0[j].V[7]);
      const float v36 = jf_bf16_to_float(cv1[j].V[7]);
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
      const long long col = ((long long)j * 256 + tx) * 8;
      jf_vec<jf_bf16, 8> sv40;
      const float v41 = jf_bf16_to_float(cv0[j].V[0]);
      const float v42 = jf_bf16_to_float(cv1[j].V[0]);
      const float v43 = (v41 + v42);
      sv40.V[0] = jf_float_to_bf16(v43);
      const float v44 = jf_bf16_to_float(cv0[j].V[1]);
      const float v45 = jf_bf16_to_float(cv1[j].V[1]);
      const float v46 = (v44 + v45);
      sv40.V[1] = jf_float_to_bf16(v46);
      const float v47 = jf_bf16_to_float(cv0[j].V[2]);
      const float v48 = jf_bf16_to_float(cv1[j].V[2]);
      const float v49 = (v47 + v48);
      sv40.V[2] = jf_float_to_bf16(v49);
      const float v50 = jf_bf16_to_float(cv0[j].V[3]);
      const float v51 = jf_bf16_to_float(cv1[j].V[3]);
      const float v52 = (v50 + v51);
      sv40.V[3] = jf_float_to_bf16(v52);
      const float v53 = jf_bf16_to_float(cv0[j].V[4]);
      const float v54 = jf_bf16_to_float(cv1[j].V[4]);
      const float v55 = (v53 + v54);
      sv40.V[4] = jf_float_to_bf16(v55);
      const float v56 = jf_bf16_to_float(cv0[j].V[5]);
      const float v57 = jf_bf16_to_float(cv1[j].V[5]);
      const float v58 = (v56 + v57);
      sv40.V[5] = jf_float_to_bf16(v58);
      const float v59 = jf_bf16_to_float(cv0[j].V[6]);
      const float v60 = jf_bf16_to_float(cv1[j].V[6]);
      const float v61 = (v59 + v60);
      sv40.V[6] = jf_float_to_bf16(v61);
      const float v62 = jf_bf16_to_float(cv0[j].V[7]);
      const float v63 = jf_bf16_to_float(cv1[j].V[7]);
      const float v64 = (v62 + v63);
      sv40.V[7] = jf_float_to_bf16(v64);
      jf_store<jf_bf16, 8>(out_0 + rowc * R + col, sv40);
      jf_vec<jf_bf16, 8> sv65;
      const float v66 = v43;
      const float v67 = (red7 + s_0);
      const float v68 = rsqrtf(v67);
      const float v69 = (v66 * v68);
      const float v70 = jf_bf16_to_float(cv2[j].V[0]);
      const float v71 = v70;
      const float v72 = (v69 * v71);
      const float v73 = jf_bf16_to_float(jf_float_to_bf16((float)(v72)));
      sv65.V[0] = jf_float_to_bf16(v73);
      const float v74 = v46;
      const float v75 = (v74 * v68);
      const float v76 = jf_bf16_to_float(cv2[j].V[1]);
      const float v77 = v76;
      const float v78 = (v75 * v77);
      const float v79 = jf_bf16_to_float(jf_float_to_bf16((float)(v78)));
      sv65.V[1] = jf_float_to_bf16(v79);
      const float v80 = v49;
      const float v81 = (v80 * v68);
      const float v82 = jf_bf16_to_float(cv2[j].V[2]);
      const float v83 = v82;
      const float v84 = (v81 * v83);
      const float v85 = jf_bf16_to_float(jf_float_to_bf16((float)(v84)));
      sv65.V[2] = jf_float_to_bf16(v85);
      const float v86 = v52;
      const float v87 = (v86 * v68);
      const float v88 = jf_bf16_to_float(cv2[j].V[3]);
      const float v89 = v88;
      const float v90 = (v87 * v89);
      const float v91 = jf_bf16_to_float(jf_float_to_bf16((float)(v90)));
      sv65.V[3] = jf_float_to_bf16(v91);
      const float v92 = v55;
      const float v93 = (v92 * v68);
      const float v94 = jf_bf16_to_float(cv2[j].V[4]);
      const float v95 = v94;
      const float v96 = (v93 * v95);
      const float v97 = jf_bf16_to_float(jf_float_to_bf16((float)(v96)));
      sv65.V[4] = jf_float_to_bf16(v97);
      const float v98 = v58;
      const float v99 = (v98 * v68);
      const float v100 = jf_bf16_to_float(cv2[j].V[5]);
      const float v101 = v100;
      const float v102 = (v99 * v101);
      const float v103 = jf_bf16_to_float(jf_float_to_bf16((float)(v102)));
      sv65.V[5] = jf_float_to_bf16(v103);
      const float v104 = v61;
      const float v105 = (v104 * v68);
      const float v106 = jf_bf16_to_float(cv2[j].V[6]);
      const float v107 = v106;
      const float v108 = (v105 * v107);
      const float v109 = jf_bf16_to_float(jf_float_to_bf16((float)(v108)));
      sv65.V[6] = jf_float_to_bf16(v109);
      const float v110 = v64;
      const float v111 = (v110 * v68);
      const float v112 = jf_bf16_to_float(cv2[j].V[7]);
      const float v113 = v112;
      const float v114 = (v111 * v113);
      const float v115 = jf_bf16_to_float(jf_float_to_bf16((float)(v114)));
      sv65.V[7] = jf_float_to_bf16(v115);
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
  const long long R = 4096;
  const int jf_off = jf_phase<jf_bf16, 8>(in_0);
  const int jf_o = (int)((jf_off + rowc * R) % 8);
  const long long c0 = rowc;
  jf_vec<jf_bf16, 8> cv0[2];
  jf_vec<jf_bf16, 8> cv1[2];
  jf_vec<jf_bf16, 8> cv2[2];
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long col = ((long long)j * 256 + tx) * 8 - jf_o;
      if (col < R) {
        const int jf_lo = col < 0 ? (int)-col : 0;
        const int jf_hi = col + 8 > R ? (int)(R - col) : 8;
        cv0[j] = jf_load_chunk<jf_bf16, 8>(in_1 + (c0 * 4096) + col, jf_lo, jf_hi);
        cv1[j] = jf_load_chunk<jf_bf16, 8>(in_0 + (c0 * 4096) + col, jf_lo, jf_hi);
        cv2[j] = jf_load_chunk<jf_bf16, 8>(in_2 + col, jf_lo, jf_hi);
      }
    }
  }
  float acc7 = (0.0f);
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long col = ((long long)j * 256 + tx) * 8 - jf_o;
      if (col < R) {
        const int jf_lo = col < 0 ? (int)-col : 0;
        const int jf_hi = col + 8 > R ? (int)(R - col) : 8;
        const float v0 = jf_bf16_to_float(cv0[j].V[0]);
        const float v1 = jf_bf16_to_float(cv1[j].V[0]);
        const float v2 = (v0 + v1);
        const float v3 = v2;
        const float v4 = (v3 * v3);
        acc7 = (jf_lo == 0) ? acc7 + v4 : acc7;
        const float v5 = jf_bf16_to_float(cv0[j].V[1]);
        const float v6 = jf_bf16_to_float(cv1[j].V[1]);
        const float v7 = (v5 + v6);
        const float v8 = v7;
        const float v9 = (v8 * v8);
        acc7 = (jf_lo <= 1 && 1 < jf_hi) ? acc7 + v9 : acc7;
        const float v10 = jf_bf16_to_float(cv0[j].V[2]);
        const float v11 = jf_bf16_to_float(cv1[j].V[2]);
        const float v12 = (v10 + v11);
        const float v13 = v12;
        const float v14 = (v13 * v13);
        acc7 = (jf_lo <= 2 && 2 < jf_hi) ? acc7 + v14 : acc7;
        const float v15 = jf_bf16_to_float(cv0[j].V[3]);
        const float v16 = jf_bf16_to_float(cv1[j].V[3]);
        const float v17 = (v15 + v16);
        const float v18 = v17;
        const float v19 = (v18 * v18);
        acc7 = (jf_lo <= 3 && 3 < jf_hi) ? acc7 + v19 : acc7;
        const float v20 = jf_bf16_to_float(cv0[j].V[4]);
        const float v21 = jf_bf16_to_float(cv1[j].V[4]);
        const float v22 = (v20 + v21);
        const float v23 = v22;
        const float v24 = (v23 * v23);
        acc7 = (jf_lo <= 4 && 4 < jf_hi) ? acc7 + v24 : acc7;
        const float v25 = jf_bf16_to_float(cv0[j].V[5]);
        const float v26 = jf_bf16_to_float(cv1[j].V[5]);
        const float v27 = (v25 + v26);
        const float v28 = v27;
        const float v29 = (v28 * v28);
        acc7 = (jf_lo <= 5 && 5 < jf_hi) ? acc7 + v29 : acc7;
        const float v30 = jf_bf16_to_float(cv0[j].V[6]);
        const float v31 = jf_bf16_to_float(cv1[j].V[6]);
        const float v32 = (v30 + v31);
        const float v33 = v32;
        const float v34 = (v33 * v33);
        acc7 = (jf_lo <= 6 && 6 < jf_hi) ? acc7 + v34 : acc7;
        const float v35 = jf_bf16_to_float(cv0[j].V[7]);
        const float v36 = jf_bf16_to_float(cv1[j].V[7]);
        const float v37 = (v35 + v36);
        const float v38 = v37;
        const float v39 = (v38 * v38);
        acc7 = (jf_lo <= 7 && 7 < jf_hi) ? acc7 + v39 : acc7;
      }
    }
    #pragma unroll
    for (int j = 2; j < 3; ++j) {
      const long long col = ((long long)j * 256 + tx) * 8 - jf_o;
      if (col < R) {
        const int jf_lo = col < 0 ? (int)-col : 0;
        const int jf_hi = col + 8 > R ? (int)(R - col) : 8;
        const jf_vec<jf_bf16, 8> lv40 = jf_load_chunk<jf_bf16, 8>(in_1 + (c0 * 4096) + col, jf_lo, jf_hi);
        const float v41 = jf_bf16_to_float(lv40.V[0]);
        const jf_vec<jf_bf16, 8> lv42 = jf_load_chunk<jf_bf16, 8>(in_0 + (c0 * 4096) + col, jf_lo, jf_hi);
        const float v43 = jf_bf16_to_float(lv42.V[0]);
        const float v44 = (v41 + v43);
        const float v45 = v44;
        const float v46 = (v45 * v45);
        acc7 = (jf_lo == 0) ? acc7 + v46 : acc7;
        const float v47 = jf_bf16_to_float(lv40.V[1]);
        const float v48 = jf_bf16_to_float(lv42.V[1]);
        const float v49 = (v47 + v48);
        const float v50 = v49;
        const float v51 = (v50 * v50);
        acc7 = (jf_lo <= 1 && 1 < jf_hi) ? acc7 + v51 : acc7;
        const float v52 = jf_bf16_to_float(lv40.V[2]);
        const float v53 = jf_bf16_to_float(lv42.V[2]);
        const float v54 = (v52 + v53);
        const float v55 = v54;
        const float v56 = (v55 * v55);
        acc7 = (jf_lo <= 2 && 2 < jf_hi) ? acc7 + v56 : acc7;
        const float v57 = jf_bf16_to_float(lv40.V[3]);
        const float v58 = jf_bf16_to_float(lv42.V[3]);
        const float v59 = (v57 + v58);
        const float v60 = v59;
        const float v61 = (v60 * v60);
        acc7 = (jf_lo <= 3 && 3 < jf_hi) ? acc7 + v61 : acc7;
        const float v62 = jf_bf16_to_float(lv40.V[4]);
        const float v63 = jf_bf16_to_float(lv42.V[4]);
        const float v64 = (v62 + v63);
        const float v65 = v64;
        const float v66 = (v65 * v65);
        acc7 = (jf_lo <= 4 && 4 < jf_hi) ? acc7 + v66 : acc7;
        const float v67 = jf_bf16_to_float(lv40.V[5]);
        const float v68 = jf_bf16_to_float(lv42.V[5]);
        const float v69 = (v67 + v68);
        const float v70 = v69;
        const float v71 = (v70 * v70);
        acc7 = (jf_lo <= 5 && 5 < jf_hi) ? acc7 + v71 : acc7;
        const float v72 = jf_bf16_to_float(lv40.V[6]);
        const float v73 = jf_bf16_to_float(lv42.V[6]);
        const float v74 = (v72 + v73);
        const float v75 = v74;
        const float v76 = (v75 * v75);
        acc7 = (jf_lo <= 6 && 6 < jf_hi) ? acc7 + v76 : acc7;
        const float v77 = jf_bf16_to_float(lv40.V[7]);
        const float v78 = jf_bf16_to_float(lv42.V[7]);
        const float v79 = (v77 + v78);
        const float v80 = v79;
        const float v81 = (v80 * v80);
        acc7 = (jf_lo <= 7 && 7 < jf_hi) ? acc7 + v81 : acc7;
      }
    }
  }
  const float red7 = jf_block_reduce<256>(acc7, jf_add_op(), (0.0f), jf_smem7) / (float)R;
  if (rowOk) {
    #pragma unroll
    for (int j = 0; j < 2; ++j) {
      const long long col = ((long long)j * 256 + tx) * 8 - jf_o;
      if (col < R) {
        const int jf_lo = col < 0 ? (int)-col : 0;
        const int jf_hi = col + 8 > R ? (int)(R - col) : 8;
        jf_vec<jf_bf16, 8> sv82;
        const float v83 = jf_bf16_to_float(cv0[j].V[0]);
        const float v84 = jf_bf16_to_float(cv1[j].V[0]);
        const float v85 = (v83 + v84);
        sv82.V[0] = jf_float_to_bf16(v85);
        const float v86 = jf_bf16_to_float(cv0[j].V[1]);
        const float v87 = jf_bf16_to_float(cv1[j].V[1]);
        const float v88 = (v86 + v87);
        sv82.V[1] = jf_float_to_bf16(v88);
        const float v89 = jf_bf16_to_float(cv0[j].V[2]);
        const float v90 = jf_bf16_to_float(cv1[j].V[2]);
        const float v91 = (v89 + v90);
        sv82.V[2] = jf_float_to_bf16(v91);
        const float v92 = jf_bf16_to_float(cv0[j].V[3]);
        const float v93 = jf_bf16_to_float(cv1[j].V[3]);
        const float v94 = (v92 + v93);
        sv82.V[3] = jf_float_to_bf16(v94);
        const float v95 = jf_bf16_to_float(cv0[j].V[4]);
        const float v96 = jf_bf16_to_float(cv1[j].V[4]);
        const float v97 = (v95 + v96);
        sv82.V[4] = jf_float_to_bf16(v97);
        const float v98 = jf_bf16_to_float(cv0[j].V[5]);
        const float v99 = jf_bf16_to_float(cv1[j].V[5]);
        const float v100 = (v98 + v99);
        sv82.V[5] = jf_float_to_bf16(v100);
        const float v101 = jf_bf16_to_float(cv0[j].V[6]);
        const float v102 = jf_bf16_to_float(cv1[j].V[6]);
        const float v103 = (v101 + v102);
        sv82.V[6] = jf_float_to_bf16(v103);
        const float v104 = jf_bf16_to_float(cv0[j].V[7]);
        const float v105 = jf_bf16_to_float(cv1[j].V[7]);
        const float v106 = (v104 + v105);
        sv82.V[7] = jf_float_to_bf16(v106);
        jf_store_chunk<jf_bf16, 8>(out_0 + rowc * R + col, sv82, jf_lo, jf_hi);
        jf_vec<jf_bf16, 8> sv107;
        const float v108 = v85;
        const float v109 = (red7 + s_0);
        const float v110 = rsqrtf(v109);
        const float v111 = (v108 * v110);
        const float v112 = jf_bf16_to_float(cv2[j].V[0]);
        const float v113 = v112;
        const float v114 = (v111 * v113);
        const float v115 = jf_bf16_to_float(jf_float_to_bf16((float)(v114)));
        sv107.V[0] = jf_float_to_bf16(v115);
        const float v116 = v88;
        const float v117 = (v116 * v110);
        const float v118 = jf_bf16_to_float(cv2[j].V[1]);
        const float v119 = v118;
        const float v120 = (v117 * v119);
        const float v121 = jf_bf16_to_float(jf_float_to_bf16((float)(v120)));
        sv107.V[1] = jf_float_to_bf16(v121);
        const float v122 = v91;
        const float v123 = (v122 * v110);
        const float v124 = jf_bf16_to_float(cv2[j].V[2]);
        const float v125 = v124;
        const float v126 = (v123 * v125);
        const float v127 = jf_bf16_to_float(jf_float_to_bf16((float)(v126)));
        sv107.V[2] = jf_float_to_bf16(v127);
        const float v128 = v94;
        const float v129 = (v128 * v110);
        const float v130 = jf_bf16_to_float(cv2[j].V[3]);
        const float v131 = v130;
        const float v132 = (v129 * v131);
        const float v133 = jf_bf16_to_float(jf_float_to_bf16((float)(v132)));
        sv107.V[3] = jf_float_to_bf16(v133);
        const float v134 = v97;
        const float v135 = (v134 * v110);
        const float v136 = jf_bf16_to_float(cv2[j].V[4]);
        const float v137 = v136;
        const float v138 = (v135 * v137);
        const float v139 = jf_bf16_to_float(jf_float_to_bf16((float)(v138)));
        sv107.V[4] = jf_float_to_bf16(v139);
        const float v140 = v100;
        const float v141 = (v140 * v110);
        const float v142 = jf_bf16_to_float(cv2[j].V[5]);
        const float v143 = v142;
        const float v144 = (v141 * v143);
        const float v145 = jf_bf16_to_float(jf_float_to_bf16((float)(v144)));
        sv107.V[5] = jf_float_to_bf16(v145);
        const float v146 = v103;
        const float v147 = (v146 * v110);
        const float v148 = jf_bf16_to_float(cv2[j].V[6]);
        const float v149 = v148;
        const float v150 = (v147 * v149);
        const float v151 = jf_bf16_to_float(jf_float_to_bf16((float)(v150)));
        sv107.V[6] = jf_float_to_bf16(v151);
        const float v152 = v106;
        const float v153 = (v152 * v110);
        const float v154 = jf_bf16_to_float(cv2[j].V[7]);
        const float v155 = v154;
        const float v156 = (v153 * v155);
        const float v157 = jf_bf16_to_float(jf_float_to_bf16((float)(v156)));
        sv107.V[7] = jf_float_to_bf16(v157);
        jf_store_chunk<jf_bf16, 8>(out_1 + rowc * R + col, sv107, jf_lo, jf_hi);
      }
    }
    #pragma unroll
    for (int j = 2; j < 3; ++j) {
      const long long col = ((long long)j * 256 + tx) * 8 - jf_o;
      if (col < R) {
        const int jf_lo = col < 0 ? (int)-col : 0;
        const int jf_hi = col + 8 > R ? (int)(R - col) : 8;
        jf_vec<jf_bf16, 8> sv158;
        const jf_vec<jf_bf16, 8> lv159 = jf_load_chunk<jf_bf16, 8>(in_1 + (c0 * 4096) + col, jf_lo, jf_hi);
        const float v160 = jf_bf16_to_float(lv159.V[0]);
        const jf_vec<jf_bf16, 8> lv161 = jf_load_chunk<jf_bf16, 8>(in_0 + (c0 * 4096) + col, jf_lo, jf_hi);
        const float v162 = jf_bf16_to_float(lv161.V[0]);
        const float v163 = (v160 + v162);
        sv158.V[0] = jf_float_to_bf16(v163);
        const float v164 = jf_bf16_to_float(lv159.V[1]);
        const float v165 = jf_bf16_to_float(lv161.V[1]);
        const float v166 = (v164 + v165);
        sv158.V[1] = jf_float_to_bf16(v166);
        const float v167 = jf_bf16_to_float(lv159.V[2]);
        const float v168 = jf_bf16_to_float(lv161.V[2]);
        const float v169 = (v167 + v168);
        sv158.V[2] = jf_float_to_bf16(v169);
        const float v170 = jf_bf16_to_float(lv159.V[3]);
        const float v171 = jf_bf16_to_float(lv161.V[3]);
        const float v172 = (v170 + v171);
        sv158.V[3] = jf_float_to_bf16(v172);
        const float v173 = jf_bf16_to_float(lv159.V[4]);
        const float v174 = jf_bf16_to_float(lv161.V[4]);
        const float v175 = (v173 + v174);
        sv158.V[4] = jf_float_to_bf16(v175);
        const float v176 = jf_bf16_to_float(lv159.V[5]);
        const float v177 = jf_bf16_to_float(lv161.V[5]);
        const float v178 = (v176 + v177);
        sv158.V[5] = jf_float_to_bf16(v178);
        const float v179 = jf_bf16_to_float(lv159.V[6]);
        const float v180 = jf_bf16_to_float(lv161.V[6]);
        const float v181 = (v179 + v180);
        sv158.V[6] = jf_float_to_bf16(v181);
        const float v182 = jf_bf16_to_float(lv159.V[7]);
        const float v183 = jf_bf16_to_float(lv161.V[7]);
        const float v184 = (v182 + v183);
        sv158.V[7] = jf_float_to_bf16(v184);
        jf_store_chunk<jf_bf16, 8>(out_0 + rowc * R + col, sv158, jf_lo, jf_hi);
        jf_vec<jf_bf16, 8> sv185;
        const float v186 = v163;
        const float v187 = (red7 + s_0);
        const float v188 = rsqrtf(v187);
        const float v189 = (v186 * v188);
        const jf_vec<jf_bf16, 8> lv190 = jf_load_chunk<jf_bf16, 8>(in_2 + col, jf_lo, jf_hi);
        const float v191 = jf_bf16_to_float(lv190.V[0]);
        const float v192 = v191;
        const float v193 = (v189 * v192);
        const float v194 = jf_bf16_to_float(jf_float_to_bf16((float)(v193)));
        sv185.V[0] = jf_float_to_bf16(v194);
        const float v195 = v166;
        const float v196 = (v195 * v188);
        const float v197 = jf_bf16_to_float(lv190.V[1]);
        const float v198 = v197;
        const float v199 = (v196 * v198);
        const float v200 = jf_bf16_to_float(jf_float_to_bf16((float)(v199)));
        sv185.V[1] = jf_float_to_bf16(v200);
        const float v201 = v169;
        const float v202 = (v201 * v188);
        const float v203 = jf_bf16_to_float(lv190.V[2]);
        const float v204 = v203;
        const float v205 = (v202 * v204);
        const float v206 = jf_bf16_to_float(jf_float_to_bf16((float)(v205)));
        sv185.V[2] = jf_float_to_bf16(v206);
        const float v207 = v172;
        const float v208 = (v207 * v188);
        const float v209 = jf_bf16_to_float(lv190.V[3]);
        const float v210 = v209;
        const float v211 = (v208 * v210);
        const float v212 = jf_bf16_to_float(jf_float_to_bf16((float)(v211)));
        sv185.V[3] = jf_float_to_bf16(v212);
        const float v213 = v175;
        const float v214 = (v213 * v188);
        const float v215 = jf_bf16_to_float(lv190.V[4]);
        const float v216 = v215;
        const float v217 = (v214 * v216);
        const float v218 = jf_bf16_to_float(jf_float_to_bf16((float)(v217)));
        sv185.V[4] = jf_float_to_bf16(v218);
        const float v219 = v178;
        const float v220 = (v219 * v188);
        const float v221 = jf_bf16_to_float(lv190.V[5]);
        const float v222 = v221;
        const float v223 = (v220 * v222);
        const float v224 = jf_bf16_to_float(jf_float_to_bf16((float)(v223)));
        sv185.V[5] = jf_float_to_bf16(v224);
        const float v225 = v181;
        const float v226 = (v225 * v188);
        const float v227 = jf_bf16_to_float(lv190.V[6]);
        const float v228 = v227;
        const float v229 = (v226 * v228);
        const float v230 = jf_bf16_to_float(jf_float_to_bf16((float)(v229)));
        sv185.V[6] = jf_float_to_bf16(v230);
        const float v231 = v184;
        const float v232 = (v231 * v188);
        const float v233 = jf_bf16_to_float(lv190.V[7]);
        const float v234 = v233;
        const float v235 = (v232 * v234);
        const float v236 = jf_bf16_to_float(jf_float_to_bf16((float)(v235)));
        sv185.V[7] = jf_float_to_bf16(v236);
        jf_store_chunk<jf_bf16, 8>(out_1 + rowc * R + col, sv185, jf_lo, jf_hi);
      }
    }
  }
}
