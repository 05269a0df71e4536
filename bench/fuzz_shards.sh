#!/usr/bin/env bash
# Differential fuzzing in shards: `bench/fuzz.py` once per seed, SEED0 .. SEED0+SHARDS-1, COUNT
# kernels each, every family; a shard's JSON and log land in RESULTS, its scratch folder is
# removed when it ends (so a long run keeps little on disk and can be stopped between shards).
# Totals: python bench/fuzz.py --merge RESULTS/fuzz-*.json
#   usage: bench/fuzz_shards.sh SEED0 SHARDS COUNT JOBS RESULTS [SCRATCH]
set -u
seed0=$1 shards=$2 count=$3 jobs=$4 results=$5 scratch=${6:-${TMPDIR:-/tmp}/c2t-fuzz}
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python}
mkdir -p "$results" "$scratch"
# one convert run holds JOBS files of 25 kernels, so that JOBS processes have a file each
batch=$(( jobs * 25 > 100 ? jobs * 25 : 100 ))
for ((s = seed0; s < seed0 + shards; s++)); do
    [ -f "$results/fuzz-$s.json" ] && grep -q '"minimised"' "$results/fuzz-$s.json" && continue  # done before
    "$py" "$here/fuzz.py" --seed "$s" --count "$count" --jobs "$jobs" --batch "$batch" \
        --out "$scratch/s$s" --json "$results/fuzz-$s.json" > "$results/fuzz-$s.log" 2>&1
    echo "seed $s: exit $? ($(tail -n 1 "$results/fuzz-$s.log" | head -c 200))"
    rm -rf "$scratch/s$s"
done
