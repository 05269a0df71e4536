#!/usr/bin/env bash
# On the GPU machine (through the device tool, from the repository root): run the real-code pool
# programs' original and drop-in rebuilt executables (`migrate build`, issue 16) with their
# Makefile arguments and compare exit status, stdout (numbers under the kernels' tolerance class)
# and verdicts (migrate run, in chunks: bench/migrate_run_chunks.py). Prints a table;
# pool_migrate_run.json and the table go to $RES ($OUT).
#
#   bash bench/gpu_migrate_run_pool.sh [BUNDLE]   (default BUNDLE=build/dropin_gpu/pool_dropin.tar.xz)
#
# BUNDLE is what `python bench/migrate_build_pool.py` packs here (no GPU needed to build):
# build.json with relative paths, per program its two executables and data files. It is
# unpacked into $DEST (default /tmp/pool_dropin). RUN_TIMEOUT (default 45) bounds each
# executable's run, RUN_JOBS (default 4) the programs run at once, RUN_BUDGET (default 480) the
# seconds after which no chunk of programs starts: a second call on the same warm machine runs
# the programs the first left out and keeps its results. RUN_CONTROL=1 (the default) runs each
# original a second time (migrate run --control): lines that vary run to run in the original
# itself are listed, not held against the rebuilt program; RUN_CONTROL=0 skips it.
set -uo pipefail
BUNDLE=${1:-build/dropin_gpu/pool_dropin.tar.xz}
DEST=${DEST:-/tmp/pool_dropin}
. bench/gpu_env.sh   # $RES, the Python path, the device in $RES/device.txt
nvidia-smi -L > /dev/null 2>&1 || { echo "no GPU visible: the comparison needs one"; exit 2; }
mkdir -p "$DEST"
[ -f "$DEST/build.json" ] || tar xJf "$BUNDLE" -C "$DEST" || { echo "cannot unpack $BUNDLE"; exit 2; }
python bench/migrate_run_chunks.py "$DEST" "$RES" --timeout "${RUN_TIMEOUT:-45}" --jobs "${RUN_JOBS:-4}" \
  --budget "${RUN_BUDGET:-480}" $([ "${RUN_CONTROL:-1}" = 1 ] && echo --control)
