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
group() {  # group NAME PROGRAMS JOBS TRACE_BYTES RUN_TIMEOUT MAX_MEMORY [REPLAY_ON]: a cpu-record step in the background
  [ -n "$2" ] || return 0
  TAG=$1 ONLY=$2 JOBS=$3 TRACE_BYTES=$4 RUN_TIMEOUT=$5 MAX_MEMORY=$6 REPLAY_ON=${7:-cpu} FAST_FORWARD=1 \
    STEPS=cpu-record bash bench/gpu_realworld.sh > "$RES/$1.txt" 2>&1 &
  pids+=($!)
}
group size "${SIZE:-}" "${SIZE_JOBS:-3}" "${SIZE_BYTES:-$((12 << 30))}" "${SIZE_LIMIT:-150}" "${SIZE_MEMORY:-24GiB}"
group time "${TIME:-}" "${TIME_JOBS:-9}" "${TIME_BYTES:-$((2 << 30))}" "${TIME_LIMIT:-400}" "${TIME_MEMORY:-8GiB}"
group simt "${SIMT:-}" 3 "${SIMT_BYTES:-$((1 << 30))}" "${SIMT_LIMIT:-120}" 8GiB cuda
wait "${pids[@]}"
for g in size time simt; do
  [ -f "$RES/$g.txt" ] && { echo "== $g"; grep -v "^NVIDIA\|^20" "$RES/$g.txt" | tail -12; }
done
