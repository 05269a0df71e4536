#!/usr/bin/env bash
# One GPU call: lane-loop variants of the lifted row reductions (bench/reduce_probe.py).
# Run from the repository root through the device tool, carrying .gpu and build/gpu_out.
set -uo pipefail
RES=${OUT:-build/gpu_results}
mkdir -p "$RES" /tmp/site
[ -d /tmp/site/tilelang ] || tar xJf .gpu/tilelang-site.tar.xz -C /tmp/site
[ -d /tmp/site/rich ] || tar xJf .gpu/pyextra.tar.xz -C /tmp/site
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$RES/device.txt"
date -u +%Y-%m-%dT%H:%M:%SZ | tee -a "$RES/device.txt"
timeout 300 python bench/reduce_probe.py ${1:-build/gpu_out} --json "$RES/reduce_probe.json" 2>&1 \
  | tee "$RES/reduce_probe.txt" | grep -E "ms|failed"
