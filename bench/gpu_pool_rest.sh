#!/usr/bin/env bash
# On the GPU machine (through the device tool, from the repository root): the programs of a
# cpu-record pass (bench/gpu_realworld.sh) that its settings left out, run again with the settings
# each group needs, the groups at once on the machine's cores (one call of the device tool):
#   SIZE: programs whose launches were past the trace budget: few jobs, a large budget each;
#   TIME: programs that did not reach a kernel in time: a long run limit;
#   SIMT: programs with thread-level kernels: recorded on the CPU executor, replayed on the GPU.
# Each group writes cpu_record-<group>.json under $OUT; the totals come from
# `python bench/realworld_replay.py --summary WHOLE_PASS.json cpu_record-size.json ...`.
# Settings (environment): SIZE, TIME, SIMT (program lists, name,name), SIZE_JOBS (3),
# SIZE_BYTES (12 GiB), SIZE_LIMIT (150 s), TIME_JOBS (9), TIME_BYTES (2 GiB), TIME_LIMIT (400 s),
# SIZE_MEMORY (24GiB), TIME_MEMORY (8GiB): --max-memory of a program's run and replays;
# SIMT_BYTES (1 GiB), SIMT_LIMIT (120 s), BUDGET (540 s for every group); RESUME as for gpu_realworld.sh.
set -uo pipefail
. bench/gpu_env.sh  # unpacks TileLang once, before the groups start
mkdir -p build/realworld
[ -f build/realworld/pool.json ] || tar xJf build/gpu_pool/pool.tar.xz -C build/realworld
[ -d build/gpu_pool/out ] || tar xJf build/gpu_pool/out.tar.xz -C build/gpu_pool
echo "disk free $(df -Pk build/gpu_pool | awk 'NR==2 {print int($4 / 1048576)}') GiB," \
     "memory $(free -g | awk '/Mem:/ {print $2}') GiB, $(nproc) cores" | tee -a "$RES/device.txt"
pids=()
if [ -n "${SIZE:-}" ]; then
  TAG=size ONLY=$SIZE JOBS=${SIZE_JOBS:-3} TRACE_BYTES=${SIZE_BYTES:-$((12 << 30))} RUN_TIMEOUT=${SIZE_LIMIT:-150} \
    MAX_MEMORY=${SIZE_MEMORY:-24GiB} \
    FAST_FORWARD=1 STEPS=cpu-record bash bench/gpu_realworld.sh > "$RES/size.txt" 2>&1 & pids+=($!)
fi
if [ -n "${TIME:-}" ]; then
  TAG=time ONLY=$TIME JOBS=${TIME_JOBS:-9} TRACE_BYTES=${TIME_BYTES:-$((2 << 30))} RUN_TIMEOUT=${TIME_LIMIT:-400} \
    MAX_MEMORY=${TIME_MEMORY:-8GiB} \
    FAST_FORWARD=1 STEPS=cpu-record bash bench/gpu_realworld.sh > "$RES/time.txt" 2>&1 & pids+=($!)
fi
if [ -n "${SIMT:-}" ]; then
  TAG=simt ONLY=$SIMT JOBS=3 TRACE_BYTES=${SIMT_BYTES:-$((1 << 30))} RUN_TIMEOUT=${SIMT_LIMIT:-120} REPLAY_ON=cuda \
    FAST_FORWARD=1 STEPS=cpu-record bash bench/gpu_realworld.sh > "$RES/simt.txt" 2>&1 & pids+=($!)
fi
wait "${pids[@]}"
for g in size time simt; do
  [ -f "$RES/$g.txt" ] && { echo "== $g"; grep -v "^NVIDIA\|^20" "$RES/$g.txt" | tail -12; }
done
