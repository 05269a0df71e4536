"""Re-judge the programs of a `migrate run` result (run.json, or a GPU script's copy) with the
current comparison rules, from the output tails it recorded: the original's control output is
its recorded output with the lines the control run listed as varying put back as the control
printed them. For rules changed after a GPU run (the output tails are the programs' last 2000
characters: a longer output is judged on its tail only).

    python bench/migrate_run_rejudge.py RUN_JSON [RUN_JSON...]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from migrate.dropin.compare_output import compare_outputs  # noqa: E402


def rejudge(p: dict) -> tuple[str, str]:
    """(the status under the current rules, why) of one recorded program row."""
    if p.get("status") not in ("equal", "mismatch"):
        return p.get("status", "?"), ""
    orig, rebuilt = p["original"]["stdout_tail"], p["rebuilt"]["stdout_tail"]
    cmp = p.get("comparison", {})
    control = None
    if "control" in p:
        lines = orig.splitlines()
        for v in cmp.get("varying", []):
            if v.get("line") and v["line"] <= len(lines):
                lines[v["line"] - 1] = v["control"]
        control = "\n".join(lines) + "\n"
    res = compare_outputs(orig, rebuilt, cmp.get("tolerance", "fp32"), tuple(cmp.get("exit_status", (0, 0))),
                          programs=None, control=control)
    why = "; ".join(str(m.get("why")) for m in res.mismatches[:2])
    return ("equal" if res.equal else "mismatch"), why


def main(argv) -> int:
    for path in argv:
        for p in json.loads(Path(path).read_text())["programs"]:
            status, why = rejudge(p)
            print(f"{p['program']:40s} recorded {p.get('status', '?'):9s} now {status:9s} {why[:120]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
