// The generated kernel, verbatim: `jitfuse show layernorm_backward --mix-order-columns --cuda`
// at 157a69d, its aligned variant (jf_k0_cast_v8). Do not edit: it is the baseline.
extern "C" __global__ void __launch_bounds__(512) jf_k0_cast_v8(
    const jf_bf16* __restrict__ in_0,
    const jf_bf16* __restrict__ in_1,
    const jf_bf16* __restrict__ in_2,
    const float* __restrict__ in_3,
    const float* __restrict__ in_4,
    jf_bf16* __restrict__ out_0,
    float* __restrict__ out_1,
    float* __restrict__ out_2,
    long long d_0,
    float* __restrict__ jf_partials,
    unsigned* __restrict__ jf_counter) {
  __shared__ float jf_smem12[17];
  __shared__ float jf_smem14[17];
  const int tx = threadIdx.x;
  __shared__ float jf_macc[8192];
  __shared__ unsigned jf_ticket;
  const long long nrows = (d_0);
  const long long jf_rg = nrows <= 512 ? (long long)1 : (nrows + 511) / 512;
  const long long jf_ng = nrows > 0 ? (nrows + jf_rg - 1) / jf_rg : (long long)0;
  if (threadIdx.x == 0) jf_ticket = atomicAdd(jf_counter, 1u);
  __syncthreads();
  const long long jf_b = (long long)jf_ticket;
  if (jf_b >= jf_ng) {
    __shared__ float jf_mct[8][32];
    const int jf_t = (int)(jf_b - jf_ng);
    const int jf_red = jf_t / 128;
    const int jf_lane = threadIdx.x % 32;
    const int jf_c = (jf_t % 128) * 32 + jf_lane;
    if (threadIdx.x == 0) {
      while (*(volatile unsigned *)(jf_counter + 1) < (unsigned)jf_ng) __nanosleep(256);
      __threadfence();
    }
    __syncthreads();
    for (int y = threadIdx.x / 32; y < 8; y += 16) {
      if (jf_red == 0) {
        float a = (0.0f);
        if (jf_c < 4096) {
          #pragma unroll 4
          for (long long g = y; g < jf_ng; g += 8) {
            a = jf_add_op()(a, __ldcg(jf_partials + ((long long)0 * jf_ng + g) * 4096 + jf_c));
          }
        }
        jf_mct[y][jf_lane] = a;
      }
      if (jf_red == 1) {
        float a = (0.0f);
        if (jf_c < 4096) {
          #pragma unroll 4
          for (long long g = y; g < jf_ng; g += 8) {
            a = jf_add_op()(a, __ldcg(jf_partials + ((long long)1 * jf_ng + g) * 4096 + jf_c));
          }
        }
        jf_mct[y][jf_lane] = a;
      }
    }
    __syncthreads();
    if (threadIdx.x < 32 && jf_c < 4096) {
      if (jf_red == 0) {
        float tot = jf_mct[0][jf_lane];
        for (int y = 1; y < 8; ++y) tot = jf_add_op()(tot, jf_mct[y][jf_lane]);
        out_1[jf_c] = tot;
      }
      if (jf_red == 1) {
        float tot = jf_mct[0][jf_lane];
        for (int y = 1; y < 8; ++y) tot = jf_add_op()(tot, jf_mct[y][jf_lane]);
        out_2[jf_c] = tot;
      }
    }
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(jf_counter + 2, 1u) == 255u) {
      jf_counter[0] = 0u;
      jf_counter[1] = 0u;
      jf_counter[2] = 0u;
    }
    return;
  }
  for (int i = threadIdx.x; i < 4096; i += 512) jf_macc[0 + i] = (0.0f);
  for (int i = threadIdx.x; i < 4096; i += 512) jf_macc[4096 + i] = (0.0f);
  __syncthreads();
  const long long jf_r1 = nrows - jf_b * jf_rg < jf_rg ? nrows : (jf_b + 1) * jf_rg;
  for (long long jf_mr = jf_b * jf_rg; jf_mr < jf_r1; ++jf_mr) {
    const long long row = jf_mr;
    const bool rowOk = row < (long long)((d_0));
    const long long rowc = rowOk ? row : 0;
    [[maybe_unused]] const long long R = 4096;
    const long long c0 = rowc;
    jf_vec<jf_bf16, 8> cv0[1];
    jf_vec<jf_bf16, 8> cv1[1];
    jf_vec<jf_bf16, 8> cv2[1];
    if (rowOk) {
      #pragma unroll
      for (int j = 0; j < 1; ++j) {
        [[maybe_unused]] const long long col = ((long long)j * 512 + tx) * 8;
        cv0[j] = jf_load<jf_bf16, 8>(in_2 + col);
        cv1[j] = jf_load<jf_bf16, 8>(in_1 + (c0 * 4096) + col);
        cv2[j] = jf_load<jf_bf16, 8>(in_0 + (c0 * 4096) + col);
      }
    }
    float acc12 = (0.0f);
    float acc14 = (0.0f);
    if (rowOk) {
      #pragma unroll
      for (int j = 0; j < 1; ++j) {
        [[maybe_unused]] const long long col = ((long long)j * 512 + tx) * 8;
        const float v0 = jf_bf16_to_float_mov(cv0[j].V[0]);
        const float v1 = v0;
        const float v2 = jf_bf16_to_float_mov(cv1[j].V[0]);
        const float v3 = v2;
        const float v4 = (v1 * v3);
        const float v5 = jf_bf16_to_float_mov(cv2[j].V[0]);
        const float v6 = v5;
        const float v7 = in_3[(c0 * 1)];
        const float v8 = (v6 - v7);
        const float v9 = in_4[(c0 * 1)];
        const float v10 = (v8 * v9);
        const float v11 = (v4 * v10);
        acc12 = acc12 + v11;
        acc14 = acc14 + v4;
        const float v12 = jf_bf16_to_float_mov(cv0[j].V[1]);
        const float v13 = v12;
        const float v14 = jf_bf16_to_float_mov(cv1[j].V[1]);
        const float v15 = v14;
        const float v16 = (v13 * v15);
        const float v17 = jf_bf16_to_float_mov(cv2[j].V[1]);
        const float v18 = v17;
        const float v19 = (v18 - v7);
        const float v20 = (v19 * v9);
        const float v21 = (v16 * v20);
        acc12 = acc12 + v21;
        acc14 = acc14 + v16;
        const float v22 = jf_bf16_to_float_mov(cv0[j].V[2]);
        const float v23 = v22;
        const float v24 = jf_bf16_to_float_mov(cv1[j].V[2]);
        const float v25 = v24;
        const float v26 = (v23 * v25);
        const float v27 = jf_bf16_to_float_mov(cv2[j].V[2]);
        const float v28 = v27;
        const float v29 = (v28 - v7);
        const float v30 = (v29 * v9);
        const float v31 = (v26 * v30);
        acc12 = acc12 + v31;
        acc14 = acc14 + v26;
        const float v32 = jf_bf16_to_float_mov(cv0[j].V[3]);
        const float v33 = v32;
        const float v34 = jf_bf16_to_float_mov(cv1[j].V[3]);
        const float v35 = v34;
        const float v36 = (v33 * v35);
        const float v37 = jf_bf16_to_float_mov(cv2[j].V[3]);
        const float v38 = v37;
        const float v39 = (v38 - v7);
        const float v40 = (v39 * v9);
        const float v41 = (v36 * v40);
        acc12 = acc12 + v41;
        acc14 = acc14 + v36;
        const float v42 = jf_bf16_to_float_mov(cv0[j].V[4]);
        const float v43 = v42;
        const float v44 = jf_bf16_to_float_mov(cv1[j].V[4]);
        const float v45 = v44;
        const float v46 = (v43 * v45);
        const float v47 = jf_bf16_to_float_mov(cv2[j].V[4]);
        const float v48 = v47;
        const float v49 = (v48 - v7);
        const float v50 = (v49 * v9);
        const float v51 = (v46 * v50);
        acc12 = acc12 + v51;
        acc14 = acc14 + v46;
        const float v52 = jf_bf16_to_float_mov(cv0[j].V[5]);
        const float v53 = v52;
        const float v54 = jf_bf16_to_float_mov(cv1[j].V[5]);
        const float v55 = v54;
        const float v56 = (v53 * v55);
        const float v57 = jf_bf16_to_float_mov(cv2[j].V[5]);
        const float v58 = v57;
        const float v59 = (v58 - v7);
        const float v60 = (v59 * v9);
        const float v61 = (v56 * v60);
        acc12 = acc12 + v61;
        acc14 = acc14 + v56;
        const float v62 = jf_bf16_to_float_mov(cv0[j].V[6]);
        const float v63 = v62;
        const float v64 = jf_bf16_to_float_mov(cv1[j].V[6]);
        const float v65 = v64;
        const float v66 = (v63 * v65);
        const float v67 = jf_bf16_to_float_mov(cv2[j].V[6]);
        const float v68 = v67;
        const float v69 = (v68 - v7);
        const float v70 = (v69 * v9);
        const float v71 = (v66 * v70);
        acc12 = acc12 + v71;
        acc14 = acc14 + v66;
        const float v72 = jf_bf16_to_float_mov(cv0[j].V[7]);
        const float v73 = v72;
        const float v74 = jf_bf16_to_float_mov(cv1[j].V[7]);
        const float v75 = v74;
        const float v76 = (v73 * v75);
        const float v77 = jf_bf16_to_float_mov(cv2[j].V[7]);
        const float v78 = v77;
        const float v79 = (v78 - v7);
        const float v80 = (v79 * v9);
        const float v81 = (v76 * v80);
        acc12 = acc12 + v81;
        acc14 = acc14 + v76;
      }
    }
    jf_block_partial(acc12, jf_add_op(), jf_smem12);
    jf_block_partial(acc14, jf_add_op(), jf_smem14);
    __syncthreads();
    jf_block_combine<512>(jf_add_op(), (0.0f), jf_smem12);
    jf_block_combine<512>(jf_add_op(), (0.0f), jf_smem14);
    __syncthreads();
    const float red12 = jf_smem12[16] / (float)R;
    const float red14 = jf_smem14[16] / (float)R;
    if (rowOk) {
      #pragma unroll
      for (int j = 0; j < 1; ++j) {
        [[maybe_unused]] const long long col = ((long long)j * 512 + tx) * 8;
        jf_vec<jf_bf16, 8> sv82;
        const float v83 = in_4[(c0 * 1)];
        const float v84 = jf_bf16_to_float_mov(cv0[j].V[0]);
        const float v85 = v84;
        const float v86 = jf_bf16_to_float_mov(cv1[j].V[0]);
        const float v87 = v86;
        const float v88 = (v85 * v87);
        const float v89 = (v88 - red14);
        const float v90 = jf_bf16_to_float_mov(cv2[j].V[0]);
        const float v91 = v90;
        const float v92 = in_3[(c0 * 1)];
        const float v93 = (v91 - v92);
        const float v94 = (v93 * v83);
        const float v95 = (v94 * red12);
        const float v96 = (v89 - v95);
        const float v97 = (v83 * v96);
        sv82.V[0] = jf_float_to_bf16(v97);
        const float v98 = jf_bf16_to_float_mov(cv0[j].V[1]);
        const float v99 = v98;
        const float v100 = jf_bf16_to_float_mov(cv1[j].V[1]);
        const float v101 = v100;
        const float v102 = (v99 * v101);
        const float v103 = (v102 - red14);
        const float v104 = jf_bf16_to_float_mov(cv2[j].V[1]);
        const float v105 = v104;
        const float v106 = (v105 - v92);
        const float v107 = (v106 * v83);
        const float v108 = (v107 * red12);
        const float v109 = (v103 - v108);
        const float v110 = (v83 * v109);
        sv82.V[1] = jf_float_to_bf16(v110);
        const float v111 = jf_bf16_to_float_mov(cv0[j].V[2]);
        const float v112 = v111;
        const float v113 = jf_bf16_to_float_mov(cv1[j].V[2]);
        const float v114 = v113;
        const float v115 = (v112 * v114);
        const float v116 = (v115 - red14);
        const float v117 = jf_bf16_to_float_mov(cv2[j].V[2]);
        const float v118 = v117;
        const float v119 = (v118 - v92);
        const float v120 = (v119 * v83);
        const float v121 = (v120 * red12);
        const float v122 = (v116 - v121);
        const float v123 = (v83 * v122);
        sv82.V[2] = jf_float_to_bf16(v123);
        const float v124 = jf_bf16_to_float_mov(cv0[j].V[3]);
        const float v125 = v124;
        const float v126 = jf_bf16_to_float_mov(cv1[j].V[3]);
        const float v127 = v126;
        const float v128 = (v125 * v127);
        const float v129 = (v128 - red14);
        const float v130 = jf_bf16_to_float_mov(cv2[j].V[3]);
        const float v131 = v130;
        const float v132 = (v131 - v92);
        const float v133 = (v132 * v83);
        const float v134 = (v133 * red12);
        const float v135 = (v129 - v134);
        const float v136 = (v83 * v135);
        sv82.V[3] = jf_float_to_bf16(v136);
        const float v137 = jf_bf16_to_float_mov(cv0[j].V[4]);
        const float v138 = v137;
        const float v139 = jf_bf16_to_float_mov(cv1[j].V[4]);
        const float v140 = v139;
        const float v141 = (v138 * v140);
        const float v142 = (v141 - red14);
        const float v143 = jf_bf16_to_float_mov(cv2[j].V[4]);
        const float v144 = v143;
        const float v145 = (v144 - v92);
        const float v146 = (v145 * v83);
        const float v147 = (v146 * red12);
        const float v148 = (v142 - v147);
        const float v149 = (v83 * v148);
        sv82.V[4] = jf_float_to_bf16(v149);
        const float v150 = jf_bf16_to_float_mov(cv0[j].V[5]);
        const float v151 = v150;
        const float v152 = jf_bf16_to_float_mov(cv1[j].V[5]);
        const float v153 = v152;
        const float v154 = (v151 * v153);
        const float v155 = (v154 - red14);
        const float v156 = jf_bf16_to_float_mov(cv2[j].V[5]);
        const float v157 = v156;
        const float v158 = (v157 - v92);
        const float v159 = (v158 * v83);
        const float v160 = (v159 * red12);
        const float v161 = (v155 - v160);
        const float v162 = (v83 * v161);
        sv82.V[5] = jf_float_to_bf16(v162);
        const float v163 = jf_bf16_to_float_mov(cv0[j].V[6]);
        const float v164 = v163;
        const float v165 = jf_bf16_to_float_mov(cv1[j].V[6]);
        const float v166 = v165;
        const float v167 = (v164 * v166);
        const float v168 = (v167 - red14);
        const float v169 = jf_bf16_to_float_mov(cv2[j].V[6]);
        const float v170 = v169;
        const float v171 = (v170 - v92);
        const float v172 = (v171 * v83);
        const float v173 = (v172 * red12);
        const float v174 = (v168 - v173);
        const float v175 = (v83 * v174);
        sv82.V[6] = jf_float_to_bf16(v175);
        const float v176 = jf_bf16_to_float_mov(cv0[j].V[7]);
        const float v177 = v176;
        const float v178 = jf_bf16_to_float_mov(cv1[j].V[7]);
        const float v179 = v178;
        const float v180 = (v177 * v179);
        const float v181 = (v180 - red14);
        const float v182 = jf_bf16_to_float_mov(cv2[j].V[7]);
        const float v183 = v182;
        const float v184 = (v183 - v92);
        const float v185 = (v184 * v83);
        const float v186 = (v185 * red12);
        const float v187 = (v181 - v186);
        const float v188 = (v83 * v187);
        sv82.V[7] = jf_float_to_bf16(v188);
        jf_store<jf_bf16, 8>(out_0 + rowc * R + col, sv82);
      }
      #pragma unroll
      for (int j = 0; j < 1; ++j) { jf_fresh_vec(cv2[j]); jf_fresh_vec(cv1[j]); jf_fresh_vec(cv0[j]); }
      #pragma unroll
      for (int j = 0; j < 1; ++j) {
        [[maybe_unused]] const long long col = ((long long)j * 512 + tx) * 8;
        const int jf_s = (int)(col / 8);
        const float v189 = jf_bf16_to_float_mov(cv1[j].V[0]);
        const float v190 = v189;
        const float v191 = jf_bf16_to_float_mov(cv2[j].V[0]);
        const float v192 = v191;
        const float v193 = in_3[(c0 * 1)];
        const float v194 = (v192 - v193);
        const float v195 = in_4[(c0 * 1)];
        const float v196 = (v194 * v195);
        const float v197 = (v190 * v196);
        jf_macc[0 + jf_s] = jf_add_op()(jf_macc[0 + jf_s], v197);
        jf_macc[4096 + jf_s] = jf_add_op()(jf_macc[4096 + jf_s], v190);
        const float v198 = jf_bf16_to_float_mov(cv1[j].V[1]);
        const float v199 = v198;
        const float v200 = jf_bf16_to_float_mov(cv2[j].V[1]);
        const float v201 = v200;
        const float v202 = (v201 - v193);
        const float v203 = (v202 * v195);
        const float v204 = (v199 * v203);
        jf_macc[512 + jf_s] = jf_add_op()(jf_macc[512 + jf_s], v204);
        jf_macc[4608 + jf_s] = jf_add_op()(jf_macc[4608 + jf_s], v199);
        const float v205 = jf_bf16_to_float_mov(cv1[j].V[2]);
        const float v206 = v205;
        const float v207 = jf_bf16_to_float_mov(cv2[j].V[2]);
        const float v208 = v207;
        const float v209 = (v208 - v193);
        const float v210 = (v209 * v195);
        const float v211 = (v206 * v210);
        jf_macc[1024 + jf_s] = jf_add_op()(jf_macc[1024 + jf_s], v211);
        jf_macc[5120 + jf_s] = jf_add_op()(jf_macc[5120 + jf_s], v206);
        const float v212 = jf_bf16_to_float_mov(cv1[j].V[3]);
        const float v213 = v212;
        const float v214 = jf_bf16_to_float_mov(cv2[j].V[3]);
        const float v215 = v214;
        const float v216 = (v215 - v193);
        const float v217 = (v216 * v195);
        const float v218 = (v213 * v217);
        jf_macc[1536 + jf_s] = jf_add_op()(jf_macc[1536 + jf_s], v218);
        jf_macc[5632 + jf_s] = jf_add_op()(jf_macc[5632 + jf_s], v213);
        const float v219 = jf_bf16_to_float_mov(cv1[j].V[4]);
        const float v220 = v219;
        const float v221 = jf_bf16_to_float_mov(cv2[j].V[4]);
        const float v222 = v221;
        const float v223 = (v222 - v193);
        const float v224 = (v223 * v195);
        const float v225 = (v220 * v224);
        jf_macc[2048 + jf_s] = jf_add_op()(jf_macc[2048 + jf_s], v225);
        jf_macc[6144 + jf_s] = jf_add_op()(jf_macc[6144 + jf_s], v220);
        const float v226 = jf_bf16_to_float_mov(cv1[j].V[5]);
        const float v227 = v226;
        const float v228 = jf_bf16_to_float_mov(cv2[j].V[5]);
        const float v229 = v228;
        const float v230 = (v229 - v193);
        const float v231 = (v230 * v195);
        const float v232 = (v227 * v231);
        jf_macc[2560 + jf_s] = jf_add_op()(jf_macc[2560 + jf_s], v232);
        jf_macc[6656 + jf_s] = jf_add_op()(jf_macc[6656 + jf_s], v227);
        const float v233 = jf_bf16_to_float_mov(cv1[j].V[6]);
        const float v234 = v233;
        const float v235 = jf_bf16_to_float_mov(cv2[j].V[6]);
        const float v236 = v235;
        const float v237 = (v236 - v193);
        const float v238 = (v237 * v195);
        const float v239 = (v234 * v238);
        jf_macc[3072 + jf_s] = jf_add_op()(jf_macc[3072 + jf_s], v239);
        jf_macc[7168 + jf_s] = jf_add_op()(jf_macc[7168 + jf_s], v234);
        const float v240 = jf_bf16_to_float_mov(cv1[j].V[7]);
        const float v241 = v240;
        const float v242 = jf_bf16_to_float_mov(cv2[j].V[7]);
        const float v243 = v242;
        const float v244 = (v243 - v193);
        const float v245 = (v244 * v195);
        const float v246 = (v241 * v245);
        jf_macc[3584 + jf_s] = jf_add_op()(jf_macc[3584 + jf_s], v246);
        jf_macc[7680 + jf_s] = jf_add_op()(jf_macc[7680 + jf_s], v241);
      }
    }
    __syncthreads();
  }
  __syncthreads();
  for (int c = threadIdx.x; c < 4096; c += 512) jf_partials[((long long)0 * jf_ng + jf_b) * 4096 + c] = jf_macc[0 + (int)(((unsigned)(c) % 8u) * 512u + (unsigned)(c) / 8u)];
  for (int c = threadIdx.x; c < 4096; c += 512) jf_partials[((long long)1 * jf_ng + jf_b) * 4096 + c] = jf_macc[4096 + (int)(((unsigned)(c) % 8u) * 512u + (unsigned)(c) / 8u)];
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(jf_counter + 1, 1u);
}
