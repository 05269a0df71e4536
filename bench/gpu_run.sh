#!/usr/bin/env bash
# One GPU session's work (run through the device tool, from the repository root):
#   0. references: every corpus kernel's original CUDA (nvcc) vs its numpy reference;
#   1. equivalence: every converted corpus kernel, original (nvcc) vs migrated (TileLang cuda);
#   2. timing: original vs migrated per kernel at the specs' small sizes (bench/gpu_bench.py);
#   3. bench: `migrate bench --specs bench/specs` (realistic sizes, CUDA events, medians);
#   4. tf32: the GEMMs converted with --allow-tf32 (folder $TF32, default build/gpu_tf32), checked
#      and benched;
#   5. cublas: cuBLAS reference times for the GEMM goal (bench/cublas_ref.py);
#   6. tune: `migrate bench --tune` on a few kernels ($TUNE_KERNELS).
# STEPS="references check bench" (the default) picks the steps.
# Needs .gpu/tilelang-site.tar.xz (../shared/gpu/stage-tilelang.sh) and .gpu/pyextra.tar.xz (rich,
# jinja2, pygments wheels for Python 3.12, unpacked), and a converted folder (default build/gpu_out:
# `migrate convert corpus -o build/gpu_out`). Results go to $OUT (or ./build/gpu_results).
set -uo pipefail
SRC=${1:-build/gpu_out}
. bench/gpu_env.sh
STEPS=${STEPS:-references check bench}
start=$(date +%s)
if [[ " $STEPS " == *" references "* ]]; then
  timeout 200 python bench/gpu_references.py --json "$RES/references_gpu.json" > "$RES/references_gpu.txt" 2>&1
  echo "references exit $? after $(( $(date +%s) - start )) s"; tail -2 "$RES/references_gpu.txt"
fi
if [[ " $STEPS " == *" check "* ]]; then
timeout 330 python -m migrate.cli check --from "$SRC" --device cuda --jobs 8 --json "$RES/check_cuda.json" \
  > "$RES/check_cuda.txt" 2>&1
echo "check exit $? after $(( $(date +%s) - start )) s"
tail -3 "$RES/check_cuda.txt"
python - "$RES/check_cuda.json" <<'PY'
import json, sys, collections
rows = json.load(open(sys.argv[1]))
print(collections.Counter(r["status"] for r in rows))
for r in rows:
    if r["status"] != "pass":
        print(f'{r["file"]}:{r["id"]} {r["status"]}: {r["message"][:160]}')
PY
fi
if [[ " $STEPS " == *" timing "* ]]; then
  left=$(( 560 - ($(date +%s) - start) ))
  [ $left -gt 30 ] && timeout $left python bench/gpu_bench.py --from "$SRC" --json "$RES/timing.json" \
    --budget $(( left - 40 )) > "$RES/timing.txt" 2>&1
  tail -40 "$RES/timing.txt"
fi
if [[ " $STEPS " == *" bench "* ]]; then
  left=$(( 570 - ($(date +%s) - start) ))
  [ $left -gt 30 ] && COLUMNS=200 timeout $left python -m migrate.cli bench --from "$SRC" --specs bench/specs \
    --jobs ${JOBS:-12} --json "$RES/bench.json" --budget $(( left - 60 )) > "$RES/bench.txt" 2>&1
  echo "bench exit $? after $(( $(date +%s) - start )) s"
  grep -v "TileLang:" "$RES/bench.txt" | tail -40
fi
if [[ " $STEPS " == *" tf32 "* ]]; then
  timeout 150 python -m migrate.cli check --from "${TF32:-build/gpu_tf32}" --device cuda --jobs 8 \
    --json "$RES/check_cuda_tf32.json" > "$RES/check_cuda_tf32.txt" 2>&1
  echo "tf32 check exit $? after $(( $(date +%s) - start )) s"; tail -1 "$RES/check_cuda_tf32.txt"
  COLUMNS=200 timeout 240 python -m migrate.cli bench --from "${TF32:-build/gpu_tf32}" --specs bench/specs \
    --json "$RES/bench_tf32.json" > "$RES/bench_tf32.txt" 2>&1
  echo "tf32 bench exit $? after $(( $(date +%s) - start )) s"
  grep -v "TileLang:" "$RES/bench_tf32.txt" | tail -14
fi
if [[ " $STEPS " == *" cublas "* ]]; then
  timeout 120 python bench/cublas_ref.py --size 4096 --json "$RES/cublas.json" 2>&1 | tail -4
fi
if [[ " $STEPS " == *" tune "* ]]; then
  ks=""; for k in ${TUNE_KERNELS:-vectorAdd jacobiStep transposeNaive}; do ks="$ks --kernel $k"; done
  COLUMNS=200 timeout 300 python -m migrate.cli bench --from "$SRC" --specs bench/specs --tune $ks \
    --json "$RES/bench_tuned.json" > "$RES/bench_tuned.txt" 2>&1
  echo "tune exit $? after $(( $(date +%s) - start )) s"
  grep -v "TileLang:" "$RES/bench_tuned.txt" | tail -12
fi
