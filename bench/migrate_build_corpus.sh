#!/bin/sh
# Drop-in build of every corpus program with a main() (issue 16): convert the corpus, then
# `migrate build --record cpu` (geometries from the launch sites' constants and from each
# program's run on the CPU executor), then print a table of the programs: built or failed, and
# how many of their kernels run migrated code. No GPU is needed; nvcc must be on PATH.
#
#   sh bench/migrate_build_corpus.sh [WORK]      (default WORK=/tmp/c2t_build_corpus)
#
# WORK/out is the conversion, WORK/build the programs and build.json.
set -eu
cd "$(dirname "$0")/.."
WORK=${1:-/tmp/c2t_build_corpus}
PY=${PYTHON:-python}
mkdir -p "$WORK"
[ -f "$WORK/out/report.json" ] || $PY -m migrate convert corpus -o "$WORK/out" -q --jobs 2 || true
$PY -m migrate build "$WORK/out" -o "$WORK/build" --record cpu --jobs 2 || true
$PY - "$WORK/build/build.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{'program':46s} {'status':24s} {'migrated':>9s} {'variants':>8s} {'sites':>7s}")
for p in r["programs"]:
    s = p.get("summary", {})
    print(f"{p['program']:46s} {p.get('status', '?'):24s} {s.get('migrated', 0):>4d}/{s.get('kernels', 0):<4d} "
          f"{s.get('variants', 0):>8d} {s.get('launch_sites_rewritten', 0):>3d}/{s.get('launch_sites_rewritten', 0) + s.get('launch_sites_left', 0):<3d}")
    for k in p.get("kernels", []):
        if k.get("runs") != "migrated":
            print(f"    {k['kernel']}: runs the original: {k.get('why_original', '')[:110]}")
    if p.get("status") != "built":
        err = (p.get("rebuilt") or {}).get("error") or (p.get("original") or {}).get("error") or p.get("error", "")
        print("    " + err.strip().splitlines()[0][:150] if err.strip() else "")
s = r["summary"]
print(f"\n{s['built']} of {s['programs']} programs built ({s['failed']} failed); "
      f"{s['kernels_migrated']} of {s['kernels']} kernels run migrated code")
PYEOF
