#!/usr/bin/env bash
# On the GPU machine (through the device tool, from the repository root): run the real-code pool
# programs' original and drop-in rebuilt executables (`migrate build`, issue 16) with their
# Makefile arguments and compare exit status, stdout (numbers under the kernels' tolerance class)
# and verdicts: `migrate run`. Prints a table; run.json and the table go to $RES ($OUT).
#
#   bash bench/gpu_migrate_run_pool.sh [BUNDLE]   (default BUNDLE=build/dropin_gpu/pool_dropin.tar.xz)
#
# BUNDLE is what `python bench/migrate_build_pool.py` packs here (no GPU needed to build):
# build.json with relative paths, per program its two executables and data files. It is
# unpacked into /tmp/pool_dropin. RUN_TIMEOUT (default 60) bounds each executable's run,
# RUN_JOBS (default 4) the programs run at once.
set -uo pipefail
BUNDLE=${1:-build/dropin_gpu/pool_dropin.tar.xz}
DEST=${DEST:-/tmp/pool_dropin}
. bench/gpu_env.sh   # $RES, the Python path (numpy, rich), the device in $RES/device.txt
mkdir -p "$DEST"
[ -f "$DEST/build.json" ] || tar xJf "$BUNDLE" -C "$DEST" || { echo "cannot unpack $BUNDLE"; exit 2; }
start=$(date +%s)
python -m migrate run "$DEST" --timeout "${RUN_TIMEOUT:-60}" --jobs "${RUN_JOBS:-4}" \
  --json "$RES/pool_migrate_run.json" > "$RES/pool_migrate_run.txt" 2>&1
echo "migrate run exit $? after $(( $(date +%s) - start )) s"
tail -3 "$RES/pool_migrate_run.txt"
python bench/migrate_run_table.py "$RES/pool_migrate_run.json" | tee "$RES/pool_migrate_run_table.txt"
