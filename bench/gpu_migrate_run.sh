#!/usr/bin/env bash
# On the GPU machine (through the device tool, from the repository root): run every corpus
# program's original and drop-in rebuilt executable (`migrate build`, issue 16) with the same
# arguments and compare exit status, stdout (numbers under the kernels' tolerance class) and
# verdicts: `migrate run BUILD`. Prints a table; run.json and the table go to $RES.
#
#   bash bench/gpu_migrate_run.sh [BUILD]     (default BUILD=build/corpus_dropin)
#
# BUILD is a folder `migrate build` wrote (sh bench/migrate_build_corpus.sh WORK makes
# WORK/build; carry it, or BUILD.tar.xz, to this machine). Where BUILD has no build.json and no
# BUILD.tar.xz, the corpus is converted and built here first (needs nvcc and TileLang: .gpu/
# staged as for bench/gpu_run.sh). The programs run with their own arguments (report.json's,
# from cuda2tile.toml); corpus programs take none.
set -uo pipefail
BUILD=${1:-build/corpus_dropin}
. bench/gpu_env.sh
if [ ! -f "$BUILD/build.json" ] && [ -f "$BUILD.tar.xz" ]; then
  mkdir -p "$BUILD" && tar xJf "$BUILD.tar.xz" -C "$BUILD"
fi
if [ ! -f "$BUILD/build.json" ]; then
  start=$(date +%s)
  python -m migrate convert corpus -o "$BUILD.out" -q --jobs 8 > "$RES/dropin_convert.txt" 2>&1
  python -m migrate build "$BUILD.out" -o "$BUILD" --record cpu --jobs 16 > "$RES/dropin_build.txt" 2>&1
  echo "converted and built here in $(( $(date +%s) - start )) s: $(tail -1 "$RES/dropin_build.txt")"
fi
start=$(date +%s)
python -m migrate run "$BUILD" --timeout ${RUN_TIMEOUT:-120} $([ "${RUN_CONTROL:-1}" = 1 ] && echo --control) --json "$RES/migrate_run.json" > "$RES/migrate_run.txt" 2>&1
echo "migrate run exit $? after $(( $(date +%s) - start )) s"
python bench/migrate_run_table.py "$RES/migrate_run.json" | tee "$RES/migrate_run_table.txt"
