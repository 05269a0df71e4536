#!/usr/bin/env bash
# One GPU call: check and bench a few kernels of a converted folder (KERNELS="a b c").
# Run from the repository root through the device tool, carrying .gpu and the folder.
set -uo pipefail
SRC=${1:-build/gpu_out}
RES=${OUT:-build/gpu_results}
mkdir -p "$RES" /tmp/site
[ -d /tmp/site/tilelang ] || tar xJf .gpu/tilelang-site.tar.xz -C /tmp/site
[ -d /tmp/site/rich ] || tar xJf .gpu/pyextra.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 CUDA2TILE_CACHE=/tmp/c2t-cache COLUMNS=200
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$RES/device.txt"
date -u +%Y-%m-%dT%H:%M:%SZ | tee -a "$RES/device.txt"
ks=""; for k in $KERNELS; do ks="$ks --kernel $k"; done
timeout 200 python -m migrate.cli check --from "$SRC" --device cuda --jobs 8 $ks --json "$RES/check_kernels.json" \
  > "$RES/check_kernels.txt" 2>&1; echo "check exit $?"; tail -1 "$RES/check_kernels.txt"
timeout 250 python -m migrate.cli bench --from "$SRC" --specs bench/specs --jobs 8 $ks --json "$RES/bench_kernels.json" \
  > "$RES/bench_kernels.txt" 2>&1; echo "bench exit $?"
grep -v "TileLang:" "$RES/bench_kernels.txt" | grep -E "^\S+ +(tile|portable)" 
