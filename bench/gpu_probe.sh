#!/usr/bin/env bash
# One GPU call: what plain TileLang GEMMs reach on this device (bench/gemm_probe.py).
# Run from the repository root through the device tool, carrying .gpu.
set -uo pipefail
. bench/gpu_env.sh
timeout ${PROBE_TIMEOUT:-420} python bench/gemm_probe.py --size ${SIZE:-4096} --json "$RES/gemm_probe.json" ${PROBE_ARGS:-} 2>&1 \
  | grep -v "^\s*$" | tee "$RES/gemm_probe.txt" | grep -E "TFLOP|failed"
