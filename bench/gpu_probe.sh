#!/usr/bin/env bash
# One GPU call: what plain TileLang GEMMs reach on this device (bench/gemm_probe.py).
# Run from the repository root through the device tool, carrying .gpu.
set -uo pipefail
RES=${OUT:-build/gpu_results}
mkdir -p "$RES" /tmp/site
[ -d /tmp/site/tilelang ] || tar xJf .gpu/tilelang-site.tar.xz -C /tmp/site
[ -d /tmp/site/rich ] || tar xJf .gpu/pyextra.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$RES/device.txt"
date -u +%Y-%m-%dT%H:%M:%SZ | tee -a "$RES/device.txt"
timeout ${PROBE_TIMEOUT:-420} python bench/gemm_probe.py --size ${SIZE:-4096} --json "$RES/gemm_probe.json" ${PROBE_ARGS:-} 2>&1 \
  | grep -v "^\s*$" | tee "$RES/gemm_probe.txt" | grep -E "TFLOP|failed"
