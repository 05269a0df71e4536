"""What a conversion run tells people and machines.

``migrate convert … -o OUT`` writes, from one report dictionary (:func:`report_dict`):

- ``OUT/report.json`` — the full record (schema in the README);
- ``OUT/report.html`` — a self-contained side-by-side review page (:mod:`.html`);
- ``OUT/stats.csv`` — per-file counts (:mod:`.stats`);
- ``OUT/report.sarif`` — the diagnostics as SARIF 2.1.0 (:mod:`.sarif`);

and prints a summary (:mod:`.terminal`). ``--examine`` writes ``OUT/examine.json`` instead
(:mod:`.examine`).
"""
from __future__ import annotations

from pathlib import Path

from .core import FORMS, SEVERITIES, all_diagnostics, report_dict, summary, summary_of, write_json
from .terminal import plain_summary, print_summary

__all__ = ["FORMS", "SEVERITIES", "all_diagnostics", "report_dict", "summary", "summary_of", "write_json",
           "plain_summary", "print_summary", "write_reports", "REPORT_FILES"]

REPORT_FILES = ("report.json", "report.html", "stats.csv", "report.sarif")


def write_reports(data: dict, out_dir: Path, sarif_root: Path | None = None) -> list[Path]:
    """Write every report of ``data`` into ``out_dir``; returns their paths."""
    from .html import write_html
    from .sarif import write_sarif
    from .stats import write_csv

    out_dir = Path(out_dir)
    paths = [out_dir / name for name in REPORT_FILES]
    write_json(data, paths[0])
    write_html(data, out_dir, paths[1])
    write_csv(data, paths[2])
    write_sarif(data, paths[3], sarif_root)
    return paths
