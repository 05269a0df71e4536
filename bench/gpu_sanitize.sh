#!/usr/bin/env bash
# compute-sanitizer on both sides of the GPU check (issue 14), from the repository root.
#   here:            bench/gpu_sanitize.sh prep   (converts what the GPU run checks, into build/)
#   on the H200:     bench/gpu_sanitize.sh        (carry .gpu build/gpu_out build/sanitize)
# Steps (STEPS, default "hazards corpus mutants"):
#   hazards: tests/fixtures/runtime/sanitize/hazards.cu converted with --no-lift, checked with
#            --sanitize (a clean tree sum, a racy original), and the same folder with the barrier at
#            the end of block_sum's loop of phases deleted (must fail, M4030); raw logs kept in
#            $OUT/logs (the parser's test fixtures come from there);
#   corpus:  migrate check --from build/gpu_out --device cuda --sanitize over the corpus;
#   mutants: bench/mutate.py barrier (and guard) mutants checked on the GPU with --sanitize racecheck.
# Settings: CORPUS_TIME (start no chunk after it), SKIP_CHUNKS (chunks done before), CORPUS_TOOLS,
# JOBS, KINDS, MUTATE_ARGS (e.g. "--kernel NAME ..."), MUTANTS_END (seconds). Everything ends up
# in $OUT/results.tar.gz.
set -uo pipefail
if [ "${1:-}" = prep ]; then
  py=${PYTHON:-.venv/bin/python}
  rm -rf build/sanitize && mkdir -p build/sanitize
  "$py" -m migrate convert tests/fixtures/runtime/sanitize/hazards.cu -o build/sanitize/hazards -q --no-lift
  "$py" -m migrate convert tests/fixtures/runtime/sanitize/oob.cu -o build/sanitize/oob -q
  cp -r build/sanitize/hazards build/sanitize/mutant
  "$py" - <<'PY'
import re
from pathlib import Path
p = Path("build/sanitize/mutant/hazards.py")
text = p.read_text()
m = re.compile(r"\n\s*T\.sync_threads\(\)[^\n]*").search(text, text.index("while stride > 0:"))
p.write_text(text[:m.start()] + text[m.end():])
print("mutant: deleted", m.group().strip())
PY
  [ -d build/gpu_out ] || "$py" -m migrate convert corpus -o build/gpu_out -q
  exit 0
fi
. bench/gpu_env.sh
STEPS=${STEPS:-hazards corpus mutants}
start=$(date +%s)
export CUDA2TILE_SANITIZER_LOGS=$RES/logs
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
"$cs" --version | tail -1 | tee -a "$RES/device.txt"
if [[ " $STEPS " == *" hazards "* ]]; then
  for f in ${HAZARDS:-hazards mutant oob}; do
    timeout 240 python -m migrate.cli check --from build/sanitize/$f --device cuda --sanitize --jobs 1 \
      --json "$RES/$f.json" > "$RES/$f.txt" 2>&1
    echo "$f: exit $? after $(( $(date +%s) - start )) s"
    mkdir -p "$RES/logs/$f" && mv "$RES"/logs/*.log "$RES/logs/$f/" 2>/dev/null
    python - "$RES/$f.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(f'  {r["kernel"]:16s} {r["status"]:6s} {r["message"][:230]}')
PY
  done
fi
if [[ " $STEPS " == *" corpus "* ]]; then
  unset CUDA2TILE_SANITIZER_LOGS
  # the corpus's checked kernels in chunks of 12, each chunk a check of its own (partial results survive)
  python - build/gpu_out/report.json > "$RES/chunks.txt" <<'PY'
import json, sys
names = sorted({k["kernel"] for k in json.load(open(sys.argv[1]))["kernels"] if k["form"] in ("tile", "portable", "simt")})
for i in range(0, len(names), 12):
    print(" ".join(f"--kernel {n}" for n in names[i:i + 12]))
PY
  i=0
  while read -r chunk; do
    i=$((i + 1))
    [ $i -le ${SKIP_CHUNKS:-0} ] && continue  # done in an earlier call
    [ $(( $(date +%s) - start )) -gt ${CORPUS_TIME:-330} ] && { echo "corpus: stopped before chunk $i"; break; }
    timeout 300 python -m migrate.cli check --from build/gpu_out --device cuda --sanitize ${CORPUS_TOOLS:-all} \
      $chunk --jobs ${JOBS:-8} --json "$RES/corpus-$i.json" > "$RES/corpus-$i.txt" 2>&1
    echo "corpus chunk $i: exit $? after $(( $(date +%s) - start )) s"
  done < "$RES/chunks.txt"
  python - "$RES"/corpus-*.json <<'PY'
import json, sys, collections
rows = []
for f in sys.argv[1:]:
    try:
        rows += json.load(open(f))
    except (OSError, ValueError) as exc:
        print(f"  {f}: no results ({exc})")
print("  ", collections.Counter(r["status"] for r in rows))
sides = collections.Counter((s["side"], s["tool"]) for r in rows for s in r.get("sanitizer", []))
print("   findings by side and tool:", dict(sides))
for r in rows:
    if r["status"] not in ("pass", "skipped") or r.get("sanitizer"):
        print(f'  {r["file"]}:{r["id"]} {r["status"]}: {r["message"][:200]}')
PY
fi
if [[ " $STEPS " == *" mutants "* ]]; then
  left=$(( ${MUTANTS_END:-570} - ($(date +%s) - start) ))
  [ $left -gt 60 ] && timeout $left python bench/mutate.py --out build/gpu_out --kinds ${KINDS:-barrier} \
    --per-kernel 3 --seed 14 --device cuda --sanitize racecheck --json "$RES/mutants.json" \
    ${MUTATE_ARGS:-} > "$RES/mutants.txt" 2>&1
  echo "mutants: exit $? after $(( $(date +%s) - start )) s"
  sed -n '/^seed/,$p' "$RES/mutants.txt" | head -30
fi
# the device tool brings back a few files only: everything in one archive
tar czf "$RES.tar.gz" -C "$RES" . && rm -rf "$RES"/* && mv "$RES.tar.gz" "$RES/results.tar.gz"
