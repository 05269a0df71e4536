#!/usr/bin/env bash
# On the GPU machine (through the device tool, from the repository root): replay the launches
# recorded on the CPU (a bundle made by bench/gpu_replay_bundle.py, default build/gpu_replay)
# into the migrated kernels on the GPU, `migrate check --from BUNDLE --device cuda`, and compare
# each kernel's verdict with the CPU's (cpu_verdicts.json). Needs .gpu/ staged as for
# bench/gpu_run.sh. Prints a short table; full results under $OUT.
set -uo pipefail
SRC=${1:-build/gpu_replay}
. bench/gpu_env.sh
start=$(date +%s)
timeout ${REPLAY_TIMEOUT:-400} python -m migrate.cli check --from "$SRC" --device cuda --jobs 8 \
  --json "$RES/replay_cuda.json" > "$RES/replay_cuda.txt" 2>&1
echo "replay exit $? after $(( $(date +%s) - start )) s"
python - "$RES/replay_cuda.json" "$SRC/cpu_verdicts.json" <<'PY' | tee "$RES/replay_table.txt"
import json, sys, collections
gpu = {f'{r["file"]}:{r["kernel"]}': r for r in json.load(open(sys.argv[1]))}
cpu = json.load(open(sys.argv[2]))
same = collections.Counter()
for key in sorted(set(cpu) | set(gpu)):
    c, g = cpu.get(key, "-"), gpu.get(key, {}).get("status", "-")
    same[(c, g)] += 1
    if c != g:
        print(f"{key:60s} cpu {c:8s} gpu {g:8s} {gpu.get(key, {}).get('message', '')[:110]}")
print("cpu verdict -> gpu verdict:", dict(same))
judged = [k for k in cpu if cpu[k] in ("pass", "fail")]
print(f"kernels with a CPU verdict: {len(judged)}; same on the GPU: "
      f"{sum(gpu.get(k, {}).get('status') == cpu[k] for k in judged)}")
PY
