#!/usr/bin/env bash
# One device call that runs several of the staged GPU measurements in turn, each under its own
# time limit, and packs every result into one archive ($OUT/results.tgz: the device tool brings
# back few files). Run from the repository root on the GPU machine; carry what the steps read:
#   hybrid      issue 16: the corpus's hybrid kernels launched through their modules
#               (bench/gpu_hybrid_run.py; carry build/gpu_hybrid)
#   pool-run    issue 16: pool programs rebuilt on migrated kernels, original against rebuilt
#               (bench/gpu_migrate_run_pool.sh; carry build/dropin_gpu/pool_dropin.tar.xz)
#   corpus-run  issue 16: the same for the corpus programs (bench/gpu_migrate_run.sh; carry
#               build/dropin_gpu/corpus_dropin.tar.xz)
#   pool-rerun  issue 16: only the pool programs named in RERUN (comma-separated main files, as
#               build.json names them) with `migrate run --control`, RUN_TIMEOUT (90) s a run,
#               RUN_JOBS (14) at once: those a change touched or an earlier run did not judge
#               equal (carry build/dropin_gpu/pool_dropin.tar.xz)
#   pns-probe   issue 16: pns's original built three ways and its drop-in pair, side by side
#               (bench/pns_race_probe.sh; carry build/pns_probe and the pool bundle)
#   onnx        issue 18: the transformer block (and ResNet block) against PyTorch eager
#               (bench/gpu_onnx.sh; carry build/onnx_stage)
#   time        issue 17: original against migrated at the programs' own sizes
#               (bench/gpu_realworld.sh STEPS=time; carry build/gpu_pool)
#
#   STEPS="hybrid pool-run onnx" bash bench/gpu_session.sh
#
# Each step's limit in seconds: LIMIT_<STEP> (hyphens as underscores; defaults below); a step
# that runs past it is stopped and the next one starts. A table of steps, exit status and seconds
# ends the output.
set -uo pipefail
STEPS=${STEPS:-"hybrid pool-run onnx"}
RES=${OUT:-build/gpu_results}
mkdir -p "$RES"
. bench/gpu_env.sh > /dev/null
declare -A DEFAULT=([hybrid]=100 [pool_run]=260 [corpus_run]=200 [onnx]=300 [time]=420 [pool_rerun]=300 [pns_probe]=150)
rows=()
for step in $STEPS; do
  key=${step//-/_}
  var="LIMIT_$key"
  limit=${!var:-${DEFAULT[$key]:-300}}
  t0=$(date +%s)
  echo "== $step (limit ${limit}s)"
  case $step in
    hybrid) timeout "$limit" python bench/gpu_hybrid_run.py build/gpu_hybrid --json "$RES/hybrid.json" ;;
    pool-run) RUN_BUDGET=$((limit * 3 / 4)) RUN_TIMEOUT=${RUN_TIMEOUT:-45} RUN_JOBS=${RUN_JOBS:-8} \
                timeout "$limit" bash bench/gpu_migrate_run_pool.sh build/dropin_gpu/pool_dropin.tar.xz ;;
    corpus-run) OUT="$RES/corpus_dropin" timeout "$limit" bash bench/gpu_migrate_run.sh build/dropin_gpu/corpus_dropin ;;
    pool-rerun) dest=${DEST:-/tmp/pool_dropin}; mkdir -p "$dest"
                [ -f "$dest/build.json" ] || tar xJf build/dropin_gpu/pool_dropin.tar.xz -C "$dest"
                picks=(); for p in ${RERUN//,/ }; do picks+=(--program "$p"); done
                timeout "$limit" python -m migrate run "$dest" --control --timeout "${RUN_TIMEOUT:-90}" \
                  --jobs "${RUN_JOBS:-14}" "${picks[@]}" --json "$RES/pool_rerun.json"
                python bench/migrate_run_table.py "$RES/pool_rerun.json" | tee "$RES/pool_rerun_table.txt" ;;
    pns-probe) timeout "$limit" bash bench/pns_race_probe.sh ;;
    onnx) MODELS=${MODELS:-"transformer:float16 transformer:float32"} timeout "$limit" bash bench/gpu_onnx.sh ;;
    time) STEPS=time TIME_FROM=${TIME_FROM:-bench/results/2026-12-06h-gpu-pool/gpu_record.json} TIME_RUN_MAX=3 \
            TIME_BUDGET=$((limit - 20)) TIME_ROUNDS=20 JOBS=12 timeout "$limit" bash bench/gpu_realworld.sh ;;
    *) echo "unknown step $step"; false ;;
  esac > "$RES/step_$key.txt" 2>&1
  rc=$?
  tail -40 "$RES/step_$key.txt"
  rows+=("$(printf '%-11s exit %3d  %4d s' "$step" "$rc" "$(( $(date +%s) - t0 ))")")
done
echo "== steps"
printf '%s\n' "${rows[@]}" | tee "$RES/steps.txt"
# one archive of everything under $RES (the tool brings back at most a few files)
(cd "$RES" && tar czf ../results.tgz . && find . -mindepth 1 -delete && mv ../results.tgz .)
