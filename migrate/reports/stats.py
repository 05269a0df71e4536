"""``stats.csv``: one row per source file, for spreadsheets and dashboards.

Columns: file, output, kernels, converted, one column per form, errors, warnings, notes,
diagnostics (their sum), lines_in, lines_out, seconds. A file's diagnostics are its file-level
ones plus those of its kernels, after ``--suppress``; the columns add up to ``report.json``'s
summary.
"""
from __future__ import annotations

import csv
from pathlib import Path

from .core import FORMS, NOT_MIGRATED, SEVERITIES

COLUMNS = ("file", "output", "kernels", "converted", *FORMS, "errors", "warnings", "notes",
           "diagnostics", "lines_in", "lines_out", "seconds")


def rows(data: dict) -> list[dict]:
    by_file: dict[str, list[dict]] = {}
    for k in data["kernels"]:
        by_file.setdefault(k["file"], []).append(k)
    out = []
    for f in data["files"]:
        kernels = by_file.get(f["file"], [])
        diags = list(f["diagnostics"]) + [d for k in kernels for d in k["diagnostics"]]
        row = {"file": f["file"], "output": f["output"] or "", "kernels": len(kernels),
               "converted": sum(1 for k in kernels if k["form"] not in NOT_MIGRATED)}
        for form in FORMS:
            row[form] = sum(1 for k in kernels if k["form"] == form)
        for sev in SEVERITIES:
            row[sev + "s"] = sum(1 for d in diags if d["severity"] == sev)
        row["diagnostics"] = len(diags)
        row["lines_in"] = f["lines_in"]
        row["lines_out"] = f["lines_out"]
        row["seconds"] = f["seconds"]
        out.append(row)
    return out


def write_csv(data: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows(data))
