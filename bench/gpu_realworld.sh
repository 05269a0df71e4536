#!/usr/bin/env bash
# On the GPU machine (through the device tool, from the repository root): the pool's programs
# recorded on the GPU and replayed there (issue 13's --record-on cuda): each program with run
# arguments that holds a converted kernel is built by nvcc with its launches recording, runs its
# own main() with its Makefile's arguments, and its first launches of each kernel instance are
# replayed into the migrated kernels on the GPU. Then (STEPS has "cpu-traces") the launches
# recorded on the CPU (bench/gpu_replay_bundle.py) are replayed on the GPU and their verdicts
# compared with the CPU's; STEPS "cpu-record" runs the same pass as "record" on the CPU executor
# (g++ and TileLang's C target, on the machine's cores). Needs .gpu/ staged (../shared/gpu/stage-tilelang.sh,
# bench/stage_pyextra.sh) and build/gpu_pool (bench/gpu_pool_bundle.py). Results under $OUT.
#   JOBS (12) programs at a time, each in a process of its own; RUN_TIMEOUT (60) s a run;
#   LIMIT (2) launches recorded per kernel instance; TRACE_BYTES a program's trace budget
#   (default: 6 GiB, less where the disk's free space shared by JOBS programs is smaller);
#   FAST_FORWARD=1 (cpu-record) skips a kernel's launches after its recorded ones; REPLAY_ON=cuda
#   (cpu-record) replays the CPU executor's recordings on the GPU (thread-level kernels, which
#   TileLang's C target cannot run); TAG names the step's result files (cpu_record-TAG.json), so
#   several cpu-record steps with other settings can run at once on disjoint ONLY lists; MAX_MEMORY
#   (cpu-record; 8GiB) each program's run and replays on the CPU;
#   BUDGET (540) s for the whole step (then the programs still running are stopped and left out); ONLY=name,name limits the programs; RESUME=FILE (a
#   gpu_record.json of an earlier call, carried in the tree) skips the programs it holds and
#   keeps its rows, so a pool larger than one call is measured in two.
# STEPS "time" (issue 17; after "record", in the same call: its builds and TileLang kernels are
# cached): original against migrated at the programs' own sizes. The programs with a kernel that
# passed in $RES/gpu_record.json (or TIME_ONLY=name,name) run again one at a time, alone on the
# GPU, with C2T_TIME_ROUNDS=TIME_ROUNDS (20): the recorder times each recorded launch of the
# original (runtime/cpu/c2t_gpu_trace.h: inputs put back before each launch, twice the L2 written
# over, CUDA events), the traces kept in build/gpu_pool/out/traces; then `migrate bench --traces`
# replays each launch into its migrated kernel and times the ones that pass the same way:
# $RES/gpu_time.json (every sample), gpu_time.log (a line per launch, fast_0/1/2, geometric
# means). TIME_BUDGET (300) s for the step: the builds (JOBS at a time) stop at 25 % of it, the
# timed runs at 50 %, and no launch is timed past 90 % (the compilation of the migrated kernels,
# JOBS at a time, counts in the last part); TIME_TRACE_BYTES (1 GiB) a program's trace budget;
# TIME_FROM (default $RES/gpu_record.json) the record step's results the programs are taken from
# (an earlier call's, carried in the tree, for a call that times only), those whose run took at
# most TIME_RUN_MAX (3) s there; TIME_ONLY=name,name names them instead.
set -uo pipefail
. bench/gpu_env.sh
STEPS=${STEPS:-record}
JOBS=${JOBS:-12}
start=$(date +%s)
if [[ " $STEPS " == *" record "* ]]; then
  mkdir -p build/realworld
  [ -f build/realworld/pool.json ] || tar xJf build/gpu_pool/pool.tar.xz -C build/realworld
  [ -d build/gpu_pool/out ] || tar xJf build/gpu_pool/out.tar.xz -C build/gpu_pool
  free_kb=$(df -Pk build/gpu_pool | awk 'NR==2 {print $4}')
  fit=$(( free_kb * 1024 / JOBS ))  # every job at its whole budget at once would fill the disk: rare
  TRACE_BYTES=${TRACE_BYTES:-$(( fit < (6 << 30) ? fit : (6 << 30) ))}
  echo "disk free $(( free_kb / 1048576 )) GiB, memory $(free -g | awk '/Mem:/ {print $2}') GiB," \
       "$(nproc) cores; $JOBS jobs, trace budget $(( TRACE_BYTES >> 20 )) MiB a program" | tee -a "$RES/device.txt"
  python bench/realworld_replay.py --out build/gpu_pool/out --pool build/realworld --stop-after ${BUDGET:-540} \
    --record-on cuda --device cuda --timeout ${RUN_TIMEOUT:-60} --jobs $JOBS --limit ${LIMIT:-2} \
    --budget $TRACE_BYTES --only "${ONLY:-}" ${RESUME:+--resume "$RESUME"} \
    --json "$RES/gpu_record.json" > "$RES/gpu_record.log" 2>&1
  echo "record exit $? after $(( $(date +%s) - start )) s"
  python bench/realworld_replay.py --summary "$RES/gpu_record.json"
fi
if [[ " $STEPS " == *" time "* ]]; then
  mkdir -p build/realworld
  [ -f build/realworld/pool.json ] || tar xJf build/gpu_pool/pool.tar.xz -C build/realworld
  [ -d build/gpu_pool/out ] || tar xJf build/gpu_pool/out.tar.xz -C build/gpu_pool
  TIME_BUDGET=${TIME_BUDGET:-300}
  tstart=$(date +%s)
  until_share() { echo $(( TIME_BUDGET * $1 / 100 - ($(date +%s) - tstart) )); }  # s left to $1 % of the budget
  TIME_ONLY=${TIME_ONLY:-$(python bench/realworld_replay.py --passing "${TIME_FROM:-$RES/gpu_record.json}" \
    --run-max ${TIME_RUN_MAX:-3} 2>/dev/null)}
  echo "time: $(echo "$TIME_ONLY" | tr ',' '\n' | grep -c .) programs, ${TIME_ROUNDS:-20} rounds, budget $TIME_BUDGET s" \
    | tee -a "$RES/device.txt"
  [ -n "$TIME_ONLY" ] || { echo "time: no programs (no passing kernel in ${TIME_FROM:-$RES/gpu_record.json})"; exit 1; }
  # built first, JOBS at a time (cached: nothing to do after a record step in the same call)
  python bench/realworld_replay.py --out build/gpu_pool/out --pool build/realworld --record-on cuda --device cuda \
    --build-only --jobs $JOBS --only "$TIME_ONLY" --stop-after $(until_share 25) \
    --json "$RES/gpu_time_build.json" > "$RES/gpu_time_build.log" 2>&1
  echo "time: build exit $? after $(( $(date +%s) - tstart )) s"
  # the record step's traces (manifests only) set aside: the timing sees only this step's recordings
  [ -d build/gpu_pool/out/traces ] && rm -rf build/gpu_pool/out/traces.record && \
    mv build/gpu_pool/out/traces build/gpu_pool/out/traces.record
  # the programs' own runs, one at a time (alone on the GPU), recorded with the original's times
  C2T_TIME_ROUNDS=${TIME_ROUNDS:-20} python bench/realworld_replay.py --out build/gpu_pool/out --pool build/realworld \
    --record-on cuda --device cuda --record-only --keep-traces --jobs 1 --timeout ${RUN_TIMEOUT:-60} \
    --limit ${LIMIT:-2} --budget ${TIME_TRACE_BYTES:-$((1 << 30))} --only "$TIME_ONLY" \
    --stop-after $(until_share 50) --json "$RES/gpu_time_record.json" > "$RES/gpu_time_record.log" 2>&1
  echo "time: record exit $? after $(( $(date +%s) - tstart )) s"
  # the migrated kernels compiled JOBS at a time, then replayed and timed one at a time
  python -m migrate bench --from build/gpu_pool/out --traces build/gpu_pool/out/traces --jobs $JOBS \
    --budget $(until_share 90) --json "$RES/gpu_time.json" > "$RES/gpu_time.log" 2>&1
  echo "time: bench exit $? after $(( $(date +%s) - tstart )) s"
  grep -A40 "^on " "$RES/gpu_time.log"
fi
if [[ " $STEPS " == *" cpu-record "* ]]; then
  # The same pass on the CPU executor (issue 13's own figure): g++ builds each program with
  # runtime/cpu/cuda_cpu.h, its main() runs on the CPU, its launches are replayed into the
  # migrated kernels on TileLang's C target. The GPU machine only lends its cores.
  mkdir -p build/realworld
  [ -f build/realworld/pool.json ] || tar xJf build/gpu_pool/pool.tar.xz -C build/realworld
  [ -d build/gpu_pool/out ] || tar xJf build/gpu_pool/out.tar.xz -C build/gpu_pool
  name=cpu_record${TAG:+-$TAG}
  echo "$name: $(nproc) cores, $JOBS jobs, run timeout ${RUN_TIMEOUT:-60} s, replayed on ${REPLAY_ON:-cpu}," \
       "trace budget $(( ${TRACE_BYTES:-$((2 << 30))} >> 20 )) MiB a program" | tee -a "$RES/device.txt"
  python bench/realworld_replay.py --out build/gpu_pool/out --pool build/realworld --stop-after ${BUDGET:-540} \
    --record-on cpu --device ${REPLAY_ON:-cpu} --timeout ${RUN_TIMEOUT:-60} --jobs $JOBS --limit ${LIMIT:-2} \
    --budget ${TRACE_BYTES:-$((2 << 30))} --only "${ONLY:-}" ${RESUME:+--resume "$RESUME"} \
    ${FAST_FORWARD:+--fast-forward} ${MAX_MEMORY:+--max-memory $MAX_MEMORY} --json "$RES/$name.json" > "$RES/$name.log" 2>&1
  echo "$name exit $? after $(( $(date +%s) - start )) s"
  python bench/realworld_replay.py --summary "$RES/$name.json"
fi
if [[ " $STEPS " == *" cpu-traces "* ]]; then
  REPLAY_TIMEOUT=$(( 580 - ($(date +%s) - start) )) bash bench/gpu_replay.sh build/gpu_replay
fi
