"""The table of a `migrate run` (issue 16): per program its status, the launches that ran
migrated and original code, why it mismatched and the last stderr line of a side that failed;
then the totals. Used by the GPU scripts (bench/gpu_migrate_run*.sh).

    python bench/migrate_run_table.py RUN_JSON
"""
from __future__ import annotations

import json
import sys


def table(r: dict) -> str:
    out = [f"{'program':46s} {'status':10s} {'migrated':>8s} {'original':>8s}  why"]
    for p in r["programs"]:
        l = p.get("launches", {})
        why = "; ".join(f"{m.get('why')} (line {m.get('line')}: {str(m.get('expected'))[:40]!r} vs "
                        f"{str(m.get('actual'))[:40]!r})" for m in p.get("comparison", {}).get("mismatches", [])[:2])
        if not why and p.get("status") in ("not built", "error", "not run"):
            why = str(p.get("message", ""))
        code = (p.get("original") or {}).get("status")
        varying = p.get("comparison", {}).get("varying", [])
        if varying:
            vary = "varies in the original: " + "; ".join(
                f"line {v.get('line')}: {str(v.get('expected'))[:30]!r} then {str(v.get('control'))[:30]!r}"
                for v in varying[:2])
            why = f"{why}; {vary}" if why else vary
        if p.get("status") == "equal" and code not in (0, None):
            why = f"both exit {code}: the original fails here too ({why})" if why else \
                f"both exit {code}: the original fails here too"
        out.append(f"{p['program']:46s} {p['status']:10s} {l.get('migrated', 0):>8d} {l.get('original', 0):>8d}  "
                   f"{why[:160]}")
        if p["status"] != "equal" or code not in (0, None):
            for side in ("original", "rebuilt"):
                err = str((p.get(side) or {}).get("stderr", "")).strip().splitlines()
                err = [e for e in err if not e.startswith("cuda2tile: ")] or err
                if err:
                    out.append(f"    {side} stderr: {err[-1][:150]}")
    s = r["summary"]
    through = sum(1 for p in r["programs"] if p.get("status") == "equal" and p.get("launches", {}).get("migrated", 0))
    failing = sum(1 for p in r["programs"] if p.get("status") == "equal"
                  and (p.get("original") or {}).get("status") not in (0, None))
    out.append(f"\n{s['equal']} of {s['programs']} programs equal ({through} of them with migrated launches, "
               f"{failing} whose original exits non-zero; "
               f"{s['mismatch']} mismatch, {s['timeout']} timed out, {s['not_built']} not built, "
               f"{s.get('error', 0)} not run or not started); launches: {s['launches_migrated']} migrated, "
               f"{s['launches_original']} original"
               + (f"; {s['varying']} with lines that vary run to run in the original (control run)"
                  if s.get("varying") else ""))
    return "\n".join(out)


if __name__ == "__main__":
    print(table(json.load(open(sys.argv[1]))))
