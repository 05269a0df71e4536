#!/usr/bin/env bash
# One GPU call: lifted row reductions at compiled-in row lengths vs run-time sizes (bench/row_probe.py).
# Run from the repository root through the device tool, carrying .gpu and build/gpu_out.
set -uo pipefail
. bench/gpu_env.sh
timeout 120 python bench/row_probe.py ${1:-build/gpu_out} --json "$RES/row_probe.json" 2>&1 \
  | tee "$RES/row_probe.txt" | grep -E "ms|failed"
