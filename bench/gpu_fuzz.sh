#!/usr/bin/env bash
# Differential fuzzing (issue 14) on the GPU machine's 16 CPU cores: STREAMS copies of
# bench/fuzz_shards.sh side by side, stream i taking seeds SEED0 + i*1000, SEED0 + i*1000 + 1, ...
# (COUNT kernels each, JOBS processes each) until END_S seconds have passed; a shard cut off
# keeps the batches it finished (fuzz.py saves its JSON after each batch). Everything ends up in
# $OUT/results.tar.gz, the totals in $OUT/merge.txt.
#   here:                       bench/gpu_fuzz.sh prep     (.gpu/libclang.tar.xz for Python 3.12)
#   there, first call:          bench/gpu_fuzz.sh unpack   (carry .gpu/tilelang-site.tar.xz .gpu/pyextra.tar.xz)
#   there, the next call:       SEED0=300000 bench/gpu_fuzz.sh   (carry .gpu/libclang.tar.xz)
# TileLang and libclang do not fit into one call's carry (64 MiB), hence two calls on one warm
# machine: /tmp/site keeps what the first unpacked.
set -uo pipefail
if [ "${1:-}" = prep ]; then
  mkdir -p .gpu && w=$(mktemp -d) && trap 'rm -rf "$w"' EXIT
  v=$(${PYTHON:-.venv/bin/python} -c 'import importlib.metadata as m; print(m.version("libclang"))')
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$w/whl" "libclang==$v"
  mkdir -p "$w/site" && (cd "$w/site" && python3 -m zipfile -e "$w"/whl/*.whl . && mv libclang-*.data/platlib/clang . \
    && tar cf - clang | xz -T0 -9 > "$OLDPWD/.gpu/libclang.tar.xz")
  ls -la .gpu/libclang.tar.xz; exit 0
fi
if [ "${1:-}" = unpack ]; then
  . bench/gpu_env.sh; python -c 'import tilelang, rich, jinja2; print("tilelang", tilelang.__version__)'; exit 0
fi
[ -d /tmp/site/clang ] || tar xJf .gpu/libclang.tar.xz -C /tmp/site
. bench/gpu_env.sh
SEED0=${SEED0:-300000} STREAMS=${STREAMS:-8} JOBS=${JOBS:-2} COUNT=${COUNT:-50} END_S=${END_S:-520}
nproc | sed 's/^/cpus: /' | tee -a "$RES/device.txt"
python -c 'import clang.cindex as c; c.Index.create(); print("libclang ok")' || exit 2
mkdir -p "$RES/fuzz"
for ((i = 0; i < STREAMS; i++)); do
  TMPDIR=/tmp/fz$i timeout -k 5 "$END_S" bash bench/fuzz_shards.sh $((SEED0 + i * 1000)) 1000 "$COUNT" "$JOBS" \
    "$RES/fuzz" "/tmp/fz$i" > "$RES/stream$i.log" 2>&1 &
done
wait
pkill -f "migrate" 2>/dev/null
# a shard cut off while writing its JSON leaves it unreadable: set aside, not merged
for f in "$RES"/fuzz/fuzz-*.json; do python -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>/dev/null || mv "$f" "$f.cut"; done
python bench/fuzz.py --merge "$RES"/fuzz/fuzz-*.json > "$RES/merge.txt" 2>&1
echo "merge exit $?"; head -c 6000 "$RES/merge.txt"
tar czf "$OUT/results.tar.gz" -C "$RES" . 2>/dev/null
