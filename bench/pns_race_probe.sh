#!/usr/bin/env bash
# Issue 16, pns (the one pool program whose rebuilt output differs from its original's, 2026-12-07):
# is its output a function of its input, or of how its kernel's races resolve? PetrinetKernel
# increments bytes of the place grid from many threads without atomics (two threads that draw
# the same transition both add to its output places). This runs the original program built three
# ways here (nvcc -O3 as its Makefile; -O3 with ptxas -O0; -G) and the drop-in pair of the pool
# bundle, all at the Makefile's N and S with fewer trajectories; if the three builds of the same
# source disagree as much as the rebuilt program does, the printed statistics depend on the
# machine code's schedule, not only on the source.
#
#   here:  (cd build/realworld/pns && for v in "O3:-O3" "ptxO0:-O3 -Xptxas -O0" "G:-G"; do
#            nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a ${v#*:} main.cu -o ../../pns_probe/pns_${v%%:*}; done)
#   there: bash bench/pns_race_probe.sh    (carry build/pns_probe, and the pool bundle for the pair)
set -uo pipefail
RES=${OUT:-build/gpu_results}
mkdir -p "$RES"
ARGS=${PNS_ARGS:-"22 100000 200000"}
# the pair goes to a folder of its own: a partial unpack into the pool run's folder (its
# build.json) made the pool-run step after it skip the unpacking (2026-12-07, 41 programs lost)
DEST=${PNS_DEST:-/tmp/pns_pair}
if [ ! -x "$DEST/pns/main/rebuilt" ] && [ -f build/dropin_gpu/pool_dropin.tar.xz ]; then
  mkdir -p "$DEST" && tar xJf build/dropin_gpu/pool_dropin.tar.xz -C "$DEST" pns 2>/dev/null
fi
for exe in build/pns_probe/pns_O3 build/pns_probe/pns_ptxO0 build/pns_probe/pns_G \
           "$DEST/pns/main/original" "$DEST/pns/main/rebuilt"; do
  [ -x "$exe" ] || { echo "$exe: missing"; continue; }
  for run in 1 2; do
    t0=$(date +%s%N)
    out=$(timeout ${PNS_TIMEOUT:-120} "$exe" $ARGS 2>/dev/null | grep -E "mean_vars|mean_maxs" | tr '\n' ' ')
    printf '%-34s run %d  %6d ms  %s\n' "$exe" "$run" "$(( ($(date +%s%N) - t0) / 1000000 ))" "$out"
  done
done | tee "$RES/pns_race_probe.txt"
