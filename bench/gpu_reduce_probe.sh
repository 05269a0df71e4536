#!/usr/bin/env bash
# One GPU call: lane-loop variants of the lifted row reductions (bench/reduce_probe.py).
# Run from the repository root through the device tool, carrying .gpu and build/gpu_out.
set -uo pipefail
. bench/gpu_env.sh
timeout 300 python bench/reduce_probe.py ${1:-build/gpu_out} --json "$RES/reduce_probe.json" 2>&1 \
  | tee "$RES/reduce_probe.txt" | grep -E "ms|failed"
