#!/usr/bin/env bash
# On the GPU machine (through the device tool, from the repository root): the pool's programs
# recorded on the GPU and replayed there (issue 13's --record-on cuda): each program with run
# arguments that holds a converted kernel is built by nvcc with its launches recording, runs its
# own main() with its Makefile's arguments, and its first launches of each kernel instance are
# replayed into the migrated kernels on the GPU. Then (STEPS has "cpu-traces") the launches
# recorded on the CPU (bench/gpu_replay_bundle.py) are replayed on the GPU and their verdicts
# compared with the CPU's. Needs .gpu/ staged (bench/gpu_env.sh) and build/gpu_pool
# (bench/gpu_pool_bundle.py). ONLY=name,name limits the programs. Results under $OUT.
set -uo pipefail
. bench/gpu_env.sh
STEPS=${STEPS:-record cpu-traces}
start=$(date +%s)
if [[ " $STEPS " == *" record "* ]]; then
  mkdir -p build/realworld
  [ -f build/realworld/pool.json ] || tar xJf build/gpu_pool/pool.tar.xz -C build/realworld
  [ -d build/gpu_pool/out ] || tar xJf build/gpu_pool/out.tar.xz -C build/gpu_pool
  timeout ${BUDGET:-540} python bench/realworld_replay.py --out build/gpu_pool/out --pool build/realworld \
    --record-on cuda --device cuda --timeout ${RUN_TIMEOUT:-60} --jobs ${JOBS:-10} --limit ${LIMIT:-1} \
    --budget ${TRACE_BYTES:-$((4 << 30))} --only "${ONLY:-}" --json "$RES/gpu_record.json" > "$RES/gpu_record.log" 2>&1
  echo "record exit $? after $(( $(date +%s) - start )) s"
  python bench/realworld_replay.py --out build/gpu_pool/out --summary "$RES/gpu_record.json"
fi
if [[ " $STEPS " == *" cpu-traces "* ]]; then
  REPLAY_TIMEOUT=$(( 580 - ($(date +%s) - start) )) bash bench/gpu_replay.sh build/gpu_replay
fi
