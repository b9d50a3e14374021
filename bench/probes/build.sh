#!/usr/bin/env bash
# Builds the design probes (bench/probes/*.cu) with nvcc for sm_90 into
# gpu-carry/ (or $PROBE_OUT; no GPU needed here; the CUDA runtime is linked
# statically, so the GPU machine needs only its driver). ptxas's register
# report goes to <out>/<probe>.ptxas.txt; `cuobjdump -sass <out>/<probe> >
# p.sass && tools/sass_mix.py p.sass --loop` counts each kernel's loop.
#   bench/probes/build.sh && run(command="gpu-carry/mix_w21_probe", carry=["gpu-carry"])
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${PROBE_OUT:-gpu-carry}
mkdir -p "$out"
for src in bench/probes/*.cu; do
  name=$(basename "$src" .cu)_probe
  "${NVCC:-/usr/local/cuda/bin/nvcc}" -std=c++17 -O3 -arch=sm_90 -I. -Xptxas -v -cudart static \
    "$src" -o "$out/$name" 2> "$out/$name.ptxas.txt" ||
    { cat "$out/$name.ptxas.txt"; exit 1; }
  grep -E "Compiling entry|registers|spill" "$out/$name.ptxas.txt" | sed 's/ptxas info *: //'
done
