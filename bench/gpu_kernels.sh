#!/usr/bin/env bash
# One GPU call: check and bench a few kernels of a converted folder (KERNELS="a b c").
# Run from the repository root through the device tool, carrying .gpu and the folder.
set -uo pipefail
SRC=${1:-build/gpu_out}
. bench/gpu_env.sh
export COLUMNS=200
ks=""; for k in $KERNELS; do ks="$ks --kernel $k"; done
timeout 200 python -m migrate.cli check --from "$SRC" --device cuda --jobs 8 $ks --json "$RES/check_kernels.json" \
  > "$RES/check_kernels.txt" 2>&1; echo "check exit $?"; tail -1 "$RES/check_kernels.txt"
timeout 250 python -m migrate.cli bench --from "$SRC" --specs bench/specs --jobs 8 $ks --json "$RES/bench_kernels.json" \
  > "$RES/bench_kernels.txt" 2>&1; echo "bench exit $?"
grep -v "TileLang:" "$RES/bench_kernels.txt" | grep -E "^\S+ +(tile|portable)" 
