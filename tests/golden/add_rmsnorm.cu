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
        if ((j == 0 || j >= 1) && (jf_lo != 0 || jf_hi != 8)) {
          cv0[j] = jf_load_part<jf_bf16, 8>(in_1 + (c0 * 4096) + col, jf_lo, jf_hi);
          cv1[j] = jf_load_part<jf_bf16, 8>(in_0 + (c0 * 4096) + col, jf_lo, jf_hi);
          cv2[j] = jf_load_part<jf_bf16, 8>(in_2 + col, jf_lo, jf_hi);
        }
        else {
          cv0[j] = jf_load_whole<jf_bf16, 8>(in_1 + (c0 * 4096) + col);
          cv1[j] = jf_load_whole<jf_bf16, 8>(in_0 + (c0 * 4096) + col);
          cv2[j] = jf_load_whole<jf_bf16, 8>(in_2 + col);
        }
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
        if ((j == 0 || j >= 1) && (jf_lo != 0 || jf_hi != 8)) {
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
        else {
          const float v40 = jf_bf16_to_float(cv0[j].V[0]);
          const float v41 = jf_bf16_to_float(cv1[j].V[0]);
          const float v42 = (v40 + v41);
          const float v43 = v42;
          const float v44 = (v43 * v43);
          acc7 = acc7 + v44;
          const float v45 = jf_bf16_to_float(cv0[j].V[1]);
          const float v46 = jf_bf16_to_float(cv1[j].V[1]);
          const float v47 = (v45 + v46);
          const float v48 = v47;
          const float v49 = (v48 * v48);
          acc7 = acc7 + v49;
          const float v50 = jf_bf16_to_float(cv0[j].V[2]);
          const float v51 = jf_bf16_to_float(cv1[j].V[2]);
          const float v52 = (v50 + v51);
          const float v53 = v52;
          const float v54 = (v53 * v53);
          acc7 = acc7 + v54;
          const float v55 = jf_bf16_to_float(cv0[j].V[3]);
          const float v56 = jf_bf16_to_float(cv1[j].V[3]);
          const float v57 = (v55 + v56);
          const float v58 = v57;
          const float v59 = (v58 * v58);
          acc7 = acc7 + v59;
          const float v60 = jf_bf16_to_float(cv0[j].V[4]);
          const float v61 = jf_bf16_to_float(cv1[j].V[4]);
          const float v62 = (v60 + v61);
          const float v63 = v62;
          const float v64 = (v63 * v63);
          acc7 = acc7 + v64;
          const float v65 = jf_bf16_to_float(cv0[j].V[5]);
          const float v66 = jf_bf16_to_float(cv1[j].V[5]);
          const float v67 = (v65 + v66);
          const float v68 = v67;
          const float v69 = (v68 * v68);
          acc7 = acc7 + v69;
          const float v70 = jf_bf16_to_float(cv0[j].V[6]);
          const float v71 = jf_bf16_to_float(cv1[j].V[6]);
          const float v72 = (v70 + v71);
          const float v73 = v72;
          const float v74 = (v73 * v73);
          acc7 = acc7 + v74;
          const float v75 = jf_bf16_to_float(cv0[j].V[7]);
          const float v76 = jf_bf16_to_float(cv1[j].V[7]);
          const float v77 = (v75 + v76);
          const float v78 = v77;
          const float v79 = (v78 * v78);
          acc7 = acc7 + v79;
        }
      }
    }
    #pragma unroll
    for (int j = 2; j < 3; ++j) {
      const long long col = ((long long)j * 256 + tx) * 8 - jf_o;
      if (col < R) {
        const int jf_lo = col < 0 ? (int)-col : 0;
        const int jf_hi = col + 8 > R ? (int)(R - col) : 8;
        if ((j == 0 || j >= 1) && (jf_lo != 0 || jf_hi != 8)) {
          const jf_vec<jf_bf16, 8> lv80 = jf_load_part<jf_bf16, 8>(in_1 + (c0 * 4096) + col, jf_lo, jf_hi);
          const float v81 = jf_bf16_to_float(lv80.V[0]);
          const jf_vec<jf_bf16, 8> lv82 = jf_load_part<jf_bf16, 8>(in_0 + (c0 * 4096) + col, jf_lo, jf_hi);
          const float v83 = jf_bf16_to_float(lv82.V[0]);
          const float v84 = (v81 + v83);
          const float v85 = v84;
          const float v86 = (v85 * v85);
          acc7 = (jf_lo == 0) ? acc7 + v86 : acc7;
          const float v87 = jf_bf16_to_float(lv80.V[1]);
          const float v88 = jf_bf16_to_float(lv82.V[1]);
          const float v89 = (v87 + v88);
          const float v90 = v89;
          const float v91 = (v90 * v90);
          acc7 = (jf_lo <= 1 && 1 < jf_hi) ? acc7 + v91 : acc7;
          const float v92 = jf_bf16_to_float(lv80.V[2]);
          const float v93 = jf_bf16_to_float(lv82.V[2]);
          const float v94 = (v92 + v93);
          const float v95 = v94;
          const float v96 = (v95 * v95);
          acc7 = (jf_lo <= 2 && 2 < jf_hi) ? acc7 + v96 : acc7;
          const float v97 = jf_bf16_to_float(lv80.V[3]);
          const float v98 = jf_bf16_to_float(lv82.V[3]);
          const float v99 = (v97 + v98);
          const float v100 = v99;
          const float v101 = (v100 * v100);
          acc7 = (jf_lo <= 3 && 3 < jf_hi) ? acc7 + v101 : acc7;
          const float v102 = jf_bf16_to_float(lv80.V[4]);
          const float v103 = jf_bf16_to_float(lv82.V[4]);
          const float v104 = (v102 + v103);
          const float v105 = v104;
          const float v106 = (v105 * v105);
          acc7 = (jf_lo <= 4 && 4 < jf_hi) ? acc7 + v106 : acc7;
          const float v107 = jf_bf16_to_float(lv80.V[5]);
          const float v108 = jf_bf16_to_float(lv82.V[5]);
          const float v109 = (v107 + v108);
          const float v110 = v109;
          const float v111 = (v110 * v110);
          acc7 = (jf_lo <= 5 && 5 < jf_hi) ? acc7 + v111 : acc7;
          const float v112 = jf_bf16_to_float(lv80.V[6]);
          const float v113 = jf_bf16_to_float(lv82.V[6]);
          const float v114 = (v112 + v113);
          const float v115 = v114;
          const float v116 = (v115 * v115);
          acc7 = (jf_lo <= 6 && 6 < jf_hi) ? acc7 + v116 : acc7;
          const float v117 = jf_bf16_to_float(lv80.V[7]);
          const float v118 = jf_bf16_to_float(lv82.V[7]);
          const float v119 = (v117 + v118);
          const float v120 = v119;
          const float v121 = (v120 * v120);
          acc7 = (jf_lo <= 7 && 7 < jf_hi) ? acc7 + v121 : acc7;
        }
        else {
          const jf_vec<jf_bf16, 8> lv122 = jf_load_whole<jf_bf16, 8>(in_1 + (c0 * 4096) + col);
          const float v123 = jf_bf16_to_float(lv122.V[0]);
          const jf_vec<jf_bf16, 8> lv124 = jf_load<jf_bf16, 8>(in_0 + (c0 * 4096) + col);
          const float v125 = jf_bf16_to_float(lv124.V[0]);
          const float v126 = (v123 + v125);
          const float v127 = v126;
          const float v128 = (v127 * v127);
          acc7 = acc7 + v128;
          const float v129 = jf_bf16_to_float(lv122.V[1]);
          const float v130 = jf_bf16_to_float(lv124.V[1]);
          const float v131 = (v129 + v130);
          const float v132 = v131;
          const float v133 = (v132 * v132);
          acc7 = acc7 + v133;
          const float v134 = jf_bf16_to_float(lv122.V[2]);
          const float v135 = jf_bf16_to_float(lv124.V[2]);
          const float v136 = (v134 + v135);
          const float v137 = v136;
          const float v138 = (v137 * v137);
          acc7 = acc7 + v138;
          const float v139 = jf_bf16_to_float(lv122.V[3]);
          const float v140 = jf_bf16_to_float(lv124.V[3]);
          const float v141 = (v139 + v140);
          const float v142 = v141;
          const float v143 = (v142 * v142);
          acc7 = acc7 + v143;
          const float v144 = jf_bf16_to_float(lv122.V[4]);
          const float v145 = jf_bf16_to_float(lv124.V[4]);
          const float v146 = (v144 + v145);
          const float v147 = v146;
          const float v148 = (v147 * v147);
          acc7 = acc7 + v148;
          const float v149 = jf_bf16_to_float(lv122.V[5]);
          const float v150 = jf_bf16_to_float(lv124.V[5]);
          const float v151 = (v149 + v150);
          const float v152 = v151;
          const float v153 = (v152 * v152);
          acc7 = acc7 + v153;
          const float v154 = jf_bf16_to_float(lv122.V[6]);
          const float v155 = jf_bf16_to_float(lv124.V[6]);
          const float v156 = (v154 + v155);
          const float v157 = v156;
          const float v158 = (v157 * v157);
          acc7 = acc7 + v158;
          const float v159 = jf_bf16_to_float(lv122.V[7]);
          const float v160 = jf_bf16_to_float(lv124.V[7]);
          const float v161 = (v159 + v160);
          const float v162 = v161;
          const float v163 = (v162 * v162);
          acc7 = acc7 + v163;
        }
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
        if ((j == 0 || j >= 1) && (jf_lo != 0 || jf_hi != 8)) {
          jf_vec<jf_bf16, 8> sv164;
          const float v165 = jf_bf16_to_float(cv0[j].V[0]);
          const float v166 = jf_bf16_to_float(cv1[j].V[0]);
          const float v167 = (v165 + v166);
          sv164.V[0] = jf_float_to_bf16(v167);
          const float v168 = jf_bf16_to_float(cv0[j].V[1]);
          const float v169 = jf_bf16_to_float(cv1[j].V[1]);
          const float v170 = (v168 + v169);
          sv164.V[1] = jf_float_to_bf16(v170);
          const float v171 = jf_bf16_to_float(cv0[j].V[2]);
          const float v172 = jf_bf16_to_float(cv1[j].V[2]);
          const float v173 = (v171 + v172);
          sv164.V[2] = jf_float_to_bf16(v173);
          const float v174 = jf_bf16_to_float(cv0[j].V[3]);
          const float v175 = jf_bf16_to_float(cv1[j].V[3]);
          const float v176 = (v174 + v175);
          sv164.V[3] = jf_float_to_bf16(v176);
          const float v177 = jf_bf16_to_float(cv0[j].V[4]);
          const float v178 = jf_bf16_to_float(cv1[j].V[4]);
          const float v179 = (v177 + v178);
          sv164.V[4] = jf_float_to_bf16(v179);
          const float v180 = jf_bf16_to_float(cv0[j].V[5]);
          const float v181 = jf_bf16_to_float(cv1[j].V[5]);
          const float v182 = (v180 + v181);
          sv164.V[5] = jf_float_to_bf16(v182);
          const float v183 = jf_bf16_to_float(cv0[j].V[6]);
          const float v184 = jf_bf16_to_float(cv1[j].V[6]);
          const float v185 = (v183 + v184);
          sv164.V[6] = jf_float_to_bf16(v185);
          const float v186 = jf_bf16_to_float(cv0[j].V[7]);
          const float v187 = jf_bf16_to_float(cv1[j].V[7]);
          const float v188 = (v186 + v187);
          sv164.V[7] = jf_float_to_bf16(v188);
          jf_store_part<jf_bf16, 8>(out_0 + rowc * R + col, sv164, jf_lo, jf_hi);
          jf_vec<jf_bf16, 8> sv189;
          const float v190 = v167;
          const float v191 = (red7 + s_0);
          const float v192 = rsqrtf(v191);
          const float v193 = (v190 * v192);
          const float v194 = jf_bf16_to_float(cv2[j].V[0]);
          const float v195 = v194;
          const float v196 = (v193 * v195);
          const float v197 = jf_bf16_to_float(jf_float_to_bf16((float)(v196)));
          sv189.V[0] = jf_float_to_bf16(v197);
          const float v198 = v170;
          const float v199 = (v198 * v192);
          const float v200 = jf_bf16_to_float(cv2[j].V[1]);
          const float v201 = v200;
          const float v202 = (v199 * v201);
          const float v203 = jf_bf16_to_float(jf_float_to_bf16((float)(v202)));
          sv189.V[1] = jf_float_to_bf16(v203);
          const float v204 = v173;
          const float v205 = (v204 * v192);
          const float v206 = jf_bf16_to_float(cv2[j].V[2]);
          const float v207 = v206;
          const float v208 = (v205 * v207);
          const float v209 = jf_bf16_to_float(jf_float_to_bf16((float)(v208)));
          sv189.V[2] = jf_float_to_bf16(v209);
          const float v210 = v176;
          const float v211 = (v210 * v192);
          const float v212 = jf_bf16_to_float(cv2[j].V[3]);
          const float v213 = v212;
          const float v214 = (v211 * v213);
          const float v215 = jf_bf16_to_float(jf_float_to_bf16((float)(v214)));
          sv189.V[3] = jf_float_to_bf16(v215);
          const float v216 = v179;
          const float v217 = (v216 * v192);
          const float v218 = jf_bf16_to_float(cv2[j].V[4]);
          const float v219 = v218;
          const float v220 = (v217 * v219);
          const float v221 = jf_bf16_to_float(jf_float_to_bf16((float)(v220)));
          sv189.V[4] = jf_float_to_bf16(v221);
          const float v222 = v182;
          const float v223 = (v222 * v192);
          const float v224 = jf_bf16_to_float(cv2[j].V[5]);
          const float v225 = v224;
          const float v226 = (v223 * v225);
          const float v227 = jf_bf16_to_float(jf_float_to_bf16((float)(v226)));
          sv189.V[5] = jf_float_to_bf16(v227);
          const float v228 = v185;
          const float v229 = (v228 * v192);
          const float v230 = jf_bf16_to_float(cv2[j].V[6]);
          const float v231 = v230;
          const float v232 = (v229 * v231);
          const float v233 = jf_bf16_to_float(jf_float_to_bf16((float)(v232)));
          sv189.V[6] = jf_float_to_bf16(v233);
          const float v234 = v188;
          const float v235 = (v234 * v192);
          const float v236 = jf_bf16_to_float(cv2[j].V[7]);
          const float v237 = v236;
          const float v238 = (v235 * v237);
          const float v239 = jf_bf16_to_float(jf_float_to_bf16((float)(v238)));
          sv189.V[7] = jf_float_to_bf16(v239);
          jf_store_part<jf_bf16, 8>(out_1 + rowc * R + col, sv189, jf_lo, jf_hi);
        }
        else {
          jf_vec<jf_bf16, 8> sv240;
          const float v241 = jf_bf16_to_float(cv0[j].V[0]);
          const float v242 = jf_bf16_to_float(cv1[j].V[0]);
          const float v243 = (v241 + v242);
          sv240.V[0] = jf_float_to_bf16(v243);
          const float v244 = jf_bf16_to_float(cv0[j].V[1]);
          const float v245 = jf_bf16_to_float(cv1[j].V[1]);
          const float v246 = (v244 + v245);
          sv240.V[1] = jf_float_to_bf16(v246);
          const float v247 = jf_bf16_to_float(cv0[j].V[2]);
          const float v248 = jf_bf16_to_float(cv1[j].V[2]);
          const float v249 = (v247 + v248);
          sv240.V[2] = jf_float_to_bf16(v249);
          const float v250 = jf_bf16_to_float(cv0[j].V[3]);
          const float v251 = jf_bf16_to_float(cv1[j].V[3]);
          const float v252 = (v250 + v251);
          sv240.V[3] = jf_float_to_bf16(v252);
          const float v253 = jf_bf16_to_float(cv0[j].V[4]);
          const float v254 = jf_bf16_to_float(cv1[j].V[4]);
          const float v255 = (v253 + v254);
          sv240.V[4] = jf_float_to_bf16(v255);
          const float v256 = jf_bf16_to_float(cv0[j].V[5]);
          const float v257 = jf_bf16_to_float(cv1[j].V[5]);
          const float v258 = (v256 + v257);
          sv240.V[5] = jf_float_to_bf16(v258);
          const float v259 = jf_bf16_to_float(cv0[j].V[6]);
          const float v260 = jf_bf16_to_float(cv1[j].V[6]);
          const float v261 = (v259 + v260);
          sv240.V[6] = jf_float_to_bf16(v261);
          const float v262 = jf_bf16_to_float(cv0[j].V[7]);
          const float v263 = jf_bf16_to_float(cv1[j].V[7]);
          const float v264 = (v262 + v263);
          sv240.V[7] = jf_float_to_bf16(v264);
          jf_store_whole<jf_bf16, 8>(out_0 + rowc * R + col, sv240);
          jf_vec<jf_bf16, 8> sv265;
          const float v266 = v243;
          const float v267 = (red7 + s_0);
          const float v268 = rsqrtf(v267);
          const float v269 = (v266 * v268);
          const float v270 = jf_bf16_to_float(cv2[j].V[0]);
          const float v271 = v270;
          const float v272 = (v269 * v271);
          const float v273 = jf_bf16_to_float(jf_float_to_bf16((float)(v272)));
          sv265.V[0] = jf_float_to_bf16(v273);
          const float v274 = v246;
          const float v275 = (v274 * v268);
          const float v276 = jf_bf16_to_float(cv2[j].V[1]);
          const float v277 = v276;
          const float v278 = (v275 * v277);
          const float v279 = jf_bf16_to_float(jf_float_to_bf16((float)(v278)));
          sv265.V[1] = jf_float_to_bf16(v279);
          const float v280 = v249;
          const float v281 = (v280 * v268);
          const float v282 = jf_bf16_to_float(cv2[j].V[2]);
          const float v283 = v282;
          const float v284 = (v281 * v283);
          const float v285 = jf_bf16_to_float(jf_float_to_bf16((float)(v284)));
          sv265.V[2] = jf_float_to_bf16(v285);
          const float v286 = v252;
          const float v287 = (v286 * v268);
          const float v288 = jf_bf16_to_float(cv2[j].V[3]);
          const float v289 = v288;
          const float v290 = (v287 * v289);
          const float v291 = jf_bf16_to_float(jf_float_to_bf16((float)(v290)));
          sv265.V[3] = jf_float_to_bf16(v291);
          const float v292 = v255;
          const float v293 = (v292 * v268);
          const float v294 = jf_bf16_to_float(cv2[j].V[4]);
          const float v295 = v294;
          const float v296 = (v293 * v295);
          const float v297 = jf_bf16_to_float(jf_float_to_bf16((float)(v296)));
          sv265.V[4] = jf_float_to_bf16(v297);
          const float v298 = v258;
          const float v299 = (v298 * v268);
          const float v300 = jf_bf16_to_float(cv2[j].V[5]);
          const float v301 = v300;
          const float v302 = (v299 * v301);
          const float v303 = jf_bf16_to_float(jf_float_to_bf16((float)(v302)));
          sv265.V[5] = jf_float_to_bf16(v303);
          const float v304 = v261;
          const float v305 = (v304 * v268);
          const float v306 = jf_bf16_to_float(cv2[j].V[6]);
          const float v307 = v306;
          const float v308 = (v305 * v307);
          const float v309 = jf_bf16_to_float(jf_float_to_bf16((float)(v308)));
          sv265.V[6] = jf_float_to_bf16(v309);
          const float v310 = v264;
          const float v311 = (v310 * v268);
          const float v312 = jf_bf16_to_float(cv2[j].V[7]);
          const float v313 = v312;
          const float v314 = (v311 * v313);
          const float v315 = jf_bf16_to_float(jf_float_to_bf16((float)(v314)));
          sv265.V[7] = jf_float_to_bf16(v315);
          jf_store_whole<jf_bf16, 8>(out_1 + rowc * R + col, sv265);
        }
      }
    }
    #pragma unroll
    for (int j = 2; j < 3; ++j) {
      const long long col = ((long long)j * 256 + tx) * 8 - jf_o;
      if (col < R) {
        const int jf_lo = col < 0 ? (int)-col : 0;
        const int jf_hi = col + 8 > R ? (int)(R - col) : 8;
        if ((j == 0 || j >= 1) && (jf_lo != 0 || jf_hi != 8)) {
          jf_vec<jf_bf16, 8> sv316;
          const jf_vec<jf_bf16, 8> lv317 = jf_load_part<jf_bf16, 8>(in_1 + (c0 * 4096) + col, jf_lo, jf_hi);
          const float v318 = jf_bf16_to_float(lv317.V[0]);
          const jf_vec<jf_bf16, 8> lv319 = jf_load_part<jf_bf16, 8>(in_0 + (c0 * 4096) + col, jf_lo, jf_hi);
          const float v320 = jf_bf16_to_float(lv319.V[0]);
          const float v321 = (v318 + v320);
          sv316.V[0] = jf_float_to_bf16(v321);
          const float v322 = jf_bf16_to_float(lv317.V[1]);
          const float v323 = jf_bf16_to_float(lv319.V[1]);
          const float v324 = (v322 + v323);
          sv316.V[1] = jf_float_to_bf16(v324);
          const float v325 = jf_bf16_to_float(lv317.V[2]);
          const float v326 = jf_bf16_to_float(lv319.V[2]);
          const float v327 = (v325 + v326);
          sv316.V[2] = jf_float_to_bf16(v327);
          const float v328 = jf_bf16_to_float(lv317.V[3]);
          const float v329 = jf_bf16_to_float(lv319.V[3]);
          const float v330 = (v328 + v329);
          sv316.V[3] = jf_float_to_bf16(v330);
          const float v331 = jf_bf16_to_float(lv317.V[4]);
          const float v332 = jf_bf16_to_float(lv319.V[4]);
          const float v333 = (v331 + v332);
          sv316.V[4] = jf_float_to_bf16(v333);
          const float v334 = jf_bf16_to_float(lv317.V[5]);
          const float v335 = jf_bf16_to_float(lv319.V[5]);
          const float v336 = (v334 + v335);
          sv316.V[5] = jf_float_to_bf16(v336);
          const float v337 = jf_bf16_to_float(lv317.V[6]);
          const float v338 = jf_bf16_to_float(lv319.V[6]);
          const float v339 = (v337 + v338);
          sv316.V[6] = jf_float_to_bf16(v339);
          const float v340 = jf_bf16_to_float(lv317.V[7]);
          const float v341 = jf_bf16_to_float(lv319.V[7]);
          const float v342 = (v340 + v341);
          sv316.V[7] = jf_float_to_bf16(v342);
          jf_store_part<jf_bf16, 8>(out_0 + rowc * R + col, sv316, jf_lo, jf_hi);
          jf_vec<jf_bf16, 8> sv343;
          const float v344 = v321;
          const float v345 = (red7 + s_0);
          const float v346 = rsqrtf(v345);
          const float v347 = (v344 * v346);
          const jf_vec<jf_bf16, 8> lv348 = jf_load_part<jf_bf16, 8>(in_2 + col, jf_lo, jf_hi);
          const float v349 = jf_bf16_to_float(lv348.V[0]);
          const float v350 = v349;
          const float v351 = (v347 * v350);
          const float v352 = jf_bf16_to_float(jf_float_to_bf16((float)(v351)));
          sv343.V[0] = jf_float_to_bf16(v352);
          const float v353 = v324;
          const float v354 = (v353 * v346);
          const float v355 = jf_bf16_to_float(lv348.V[1]);
          const float v356 = v355;
          const float v357 = (v354 * v356);
          const float v358 = jf_bf16_to_float(jf_float_to_bf16((float)(v357)));
          sv343.V[1] = jf_float_to_bf16(v358);
          const float v359 = v327;
          const float v360 = (v359 * v346);
          const float v361 = jf_bf16_to_float(lv348.V[2]);
          const float v362 = v361;
          const float v363 = (v360 * v362);
          const float v364 = jf_bf16_to_float(jf_float_to_bf16((float)(v363)));
          sv343.V[2] = jf_float_to_bf16(v364);
          const float v365 = v330;
          const float v366 = (v365 * v346);
          const float v367 = jf_bf16_to_float(lv348.V[3]);
          const float v368 = v367;
          const float v369 = (v366 * v368);
          const float v370 = jf_bf16_to_float(jf_float_to_bf16((float)(v369)));
          sv343.V[3] = jf_float_to_bf16(v370);
          const float v371 = v333;
          const float v372 = (v371 * v346);
          const float v373 = jf_bf16_to_float(lv348.V[4]);
          const float v374 = v373;
          const float v375 = (v372 * v374);
          const float v376 = jf_bf16_to_float(jf_float_to_bf16((float)(v375)));
          sv343.V[4] = jf_float_to_bf16(v376);
          const float v377 = v336;
          const float v378 = (v377 * v346);
          const float v379 = jf_bf16_to_float(lv348.V[5]);
          const float v380 = v379;
          const float v381 = (v378 * v380);
          const float v382 = jf_bf16_to_float(jf_float_to_bf16((float)(v381)));
          sv343.V[5] = jf_float_to_bf16(v382);
          const float v383 = v339;
          const float v384 = (v383 * v346);
          const float v385 = jf_bf16_to_float(lv348.V[6]);
          const float v386 = v385;
          const float v387 = (v384 * v386);
          const float v388 = jf_bf16_to_float(jf_float_to_bf16((float)(v387)));
          sv343.V[6] = jf_float_to_bf16(v388);
          const float v389 = v342;
          const float v390 = (v389 * v346);
          const float v391 = jf_bf16_to_float(lv348.V[7]);
          const float v392 = v391;
          const float v393 = (v390 * v392);
          const float v394 = jf_bf16_to_float(jf_float_to_bf16((float)(v393)));
          sv343.V[7] = jf_float_to_bf16(v394);
          jf_store_part<jf_bf16, 8>(out_1 + rowc * R + col, sv343, jf_lo, jf_hi);
        }
        else {
          jf_vec<jf_bf16, 8> sv395;
          const jf_vec<jf_bf16, 8> lv396 = jf_load_whole<jf_bf16, 8>(in_1 + (c0 * 4096) + col);
          const float v397 = jf_bf16_to_float(lv396.V[0]);
          const jf_vec<jf_bf16, 8> lv398 = jf_load<jf_bf16, 8>(in_0 + (c0 * 4096) + col);
          const float v399 = jf_bf16_to_float(lv398.V[0]);
          const float v400 = (v397 + v399);
          sv395.V[0] = jf_float_to_bf16(v400);
          const float v401 = jf_bf16_to_float(lv396.V[1]);
          const float v402 = jf_bf16_to_float(lv398.V[1]);
          const float v403 = (v401 + v402);
          sv395.V[1] = jf_float_to_bf16(v403);
          const float v404 = jf_bf16_to_float(lv396.V[2]);
          const float v405 = jf_bf16_to_float(lv398.V[2]);
          const float v406 = (v404 + v405);
          sv395.V[2] = jf_float_to_bf16(v406);
          const float v407 = jf_bf16_to_float(lv396.V[3]);
          const float v408 = jf_bf16_to_float(lv398.V[3]);
          const float v409 = (v407 + v408);
          sv395.V[3] = jf_float_to_bf16(v409);
          const float v410 = jf_bf16_to_float(lv396.V[4]);
          const float v411 = jf_bf16_to_float(lv398.V[4]);
          const float v412 = (v410 + v411);
          sv395.V[4] = jf_float_to_bf16(v412);
          const float v413 = jf_bf16_to_float(lv396.V[5]);
          const float v414 = jf_bf16_to_float(lv398.V[5]);
          const float v415 = (v413 + v414);
          sv395.V[5] = jf_float_to_bf16(v415);
          const float v416 = jf_bf16_to_float(lv396.V[6]);
          const float v417 = jf_bf16_to_float(lv398.V[6]);
          const float v418 = (v416 + v417);
          sv395.V[6] = jf_float_to_bf16(v418);
          const float v419 = jf_bf16_to_float(lv396.V[7]);
          const float v420 = jf_bf16_to_float(lv398.V[7]);
          const float v421 = (v419 + v420);
          sv395.V[7] = jf_float_to_bf16(v421);
          jf_store_whole<jf_bf16, 8>(out_0 + rowc * R + col, sv395);
          jf_vec<jf_bf16, 8> sv422;
          const float v423 = v400;
          const float v424 = (red7 + s_0);
          const float v425 = rsqrtf(v424);
          const float v426 = (v423 * v425);
          const jf_vec<jf_bf16, 8> lv427 = jf_load_whole<jf_bf16, 8>(in_2 + col);
          const float v428 = jf_bf16_to_float(lv427.V[0]);
          const float v429 = v428;
          const float v430 = (v426 * v429);
          const float v431 = jf_bf16_to_float(jf_float_to_bf16((float)(v430)));
          sv422.V[0] = jf_float_to_bf16(v431);
          const float v432 = v403;
          const float v433 = (v432 * v425);
          const float v434 = jf_bf16_to_float(lv427.V[1]);
          const float v435 = v434;
          const float v436 = (v433 * v435);
          const float v437 = jf_bf16_to_float(jf_float_to_bf16((float)(v436)));
          sv422.V[1] = jf_float_to_bf16(v437);
          const float v438 = v406;
          const float v439 = (v438 * v425);
          const float v440 = jf_bf16_to_float(lv427.V[2]);
          const float v441 = v440;
          const float v442 = (v439 * v441);
          const float v443 = jf_bf16_to_float(jf_float_to_bf16((float)(v442)));
          sv422.V[2] = jf_float_to_bf16(v443);
          const float v444 = v409;
          const float v445 = (v444 * v425);
          const float v446 = jf_bf16_to_float(lv427.V[3]);
          const float v447 = v446;
          const float v448 = (v445 * v447);
          const float v449 = jf_bf16_to_float(jf_float_to_bf16((float)(v448)));
          sv422.V[3] = jf_float_to_bf16(v449);
          const float v450 = v412;
          const float v451 = (v450 * v425);
          const float v452 = jf_bf16_to_float(lv427.V[4]);
          const float v453 = v452;
          const float v454 = (v451 * v453);
          const float v455 = jf_bf16_to_float(jf_float_to_bf16((float)(v454)));
          sv422.V[4] = jf_float_to_bf16(v455);
          const float v456 = v415;
          const float v457 = (v456 * v425);
          const float v458 = jf_bf16_to_float(lv427.V[5]);
          const float v459 = v458;
          const float v460 = (v457 * v459);
          const float v461 = jf_bf16_to_float(jf_float_to_bf16((float)(v460)));
          sv422.V[5] = jf_float_to_bf16(v461);
          const float v462 = v418;
          const float v463 = (v462 * v425);
          const float v464 = jf_bf16_to_float(lv427.V[6]);
          const float v465 = v464;
          const float v466 = (v463 * v465);
          const float v467 = jf_bf16_to_float(jf_float_to_bf16((float)(v466)));
          sv422.V[6] = jf_float_to_bf16(v467);
          const float v468 = v421;
          const float v469 = (v468 * v425);
          const float v470 = jf_bf16_to_float(lv427.V[7]);
          const float v471 = v470;
          const float v472 = (v469 * v471);
          const float v473 = jf_bf16_to_float(jf_float_to_bf16((float)(v472)));
          sv422.V[7] = jf_float_to_bf16(v473);
          jf_store_whole<jf_bf16, 8>(out_1 + rowc * R + col, sv422);
        }
      }
    }
  }
}
