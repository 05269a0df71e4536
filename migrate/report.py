"""What a conversion run tells: ``report.json`` and the terminal summary."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from . import __version__
from .convert import FileResult

FORMS = ("tile", "portable", "simt", "hybrid", "unsupported")


def report_dict(results: list[FileResult], out_dir: Path) -> dict:
    kernels, files = [], []
    for r in results:
        files.append({
            "file": str(r.source.rel),
            "source": str(r.source.path),
            "output": r.output,
            "original": r.original,
            "spec": r.spec,
            "kernels": len(r.kernels),
            "diagnostics": [d.to_json() for d in r.diagnostics],
            "lines_in": r.lines_in,
            "lines_out": r.lines_out,
            "seconds": round(r.seconds, 4),
        })
        for k in r.kernels:
            kernels.append({
                "file": k.file,
                "kernel": k.kernel,
                "line": k.line,
                "form": k.form,
                "reason": k.reason,
                "template_instances": k.template_instances,
                "params": k.params,
                "launches": k.launches,
                "diagnostics": [d.to_json() for d in k.diagnostics],
                "check": k.check,
            })
    return {
        "tool": "cuda2tile",
        "version": __version__,
        "output": str(out_dir),
        "summary": summary(results),
        "files": files,
        "kernels": kernels,
    }


def summary(results: list[FileResult]) -> dict:
    forms = Counter(k.form for r in results for k in r.kernels)
    codes = Counter(d.code for r in results for d in r.diagnostics)
    codes.update(d.code for r in results for k in r.kernels for d in k.diagnostics)
    return {
        "files": len(results),
        "kernels": sum(len(r.kernels) for r in results),
        "converted": sum(n for f, n in forms.items() if f != "unsupported"),
        "forms": {f: forms.get(f, 0) for f in FORMS},
        "diagnostics": dict(sorted(codes.items())),
    }


def write_json(data: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def print_summary(console, data: dict) -> None:
    from rich.table import Table

    s = data["summary"]
    table = Table(title="cuda2tile convert", show_header=True, header_style="bold")
    table.add_column("")
    table.add_column("count", justify="right")
    table.add_row("files", str(s["files"]))
    table.add_row("kernels", str(s["kernels"]))
    for form, n in s["forms"].items():
        table.add_row(f"  {form}", str(n))
    console.print(table)
    if s["diagnostics"]:
        diag = Table(title="diagnostics by code", header_style="bold")
        diag.add_column("code")
        diag.add_column("count", justify="right")
        diag.add_column("meaning")
        from .codes import CODES
        for code, n in s["diagnostics"].items():
            diag.add_row(code, str(n), CODES[code].title if code in CODES else "")
        console.print(diag)
