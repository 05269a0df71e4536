#!/usr/bin/env bash
# One GPU call: rows in registers with float4 lanes vs the emitted strided lanes (bench/vec_probe.py).
# Run from the repository root through the device tool, carrying .gpu and build/gpu_out.
set -uo pipefail
. bench/gpu_env.sh
timeout 100 python bench/vec_probe.py ${1:-build/gpu_out} --json "$RES/vec_probe.json" 2>&1 \
  | tee "$RES/vec_probe.txt" | grep -E "ms|failed|Error"
