#!/usr/bin/env bash
# GEMM-focused GPU session: equivalence of the lifted GEMMs (exact and --allow-tf32), their
# timing at 4096^3 against the original CUDA, and cuBLAS for reference. Run from the repository
# root through the device tool, carrying .gpu, build/gpu_out and build/gpu_tf32.
set -uo pipefail
. bench/gpu_env.sh
export COLUMNS=200
ks="--kernel matmul_naive --kernel matmul_tiled --kernel hgemm_f32acc --kernel bmm_nt"
for folder in build/gpu_out build/gpu_tf32; do
  name=$(basename $folder)
  timeout 150 python -m migrate.cli check --from $folder --device cuda $ks --json "$RES/check_$name.json" \
    > "$RES/check_$name.txt" 2>&1
  echo "check $name exit $?"; tail -1 "$RES/check_$name.txt"
  timeout 200 python -m migrate.cli bench --from $folder --specs bench/specs $ks --json "$RES/bench_$name.json" \
    > "$RES/bench_$name.txt" 2>&1
  echo "bench $name exit $?"; grep -E "^(matmul|hgemm|bmm)" "$RES/bench_$name.txt"
done
timeout 100 python bench/cublas_ref.py --size 4096 --json "$RES/cublas.json" 2>&1 | tail -3
