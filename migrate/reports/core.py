"""``report.json``: the machine-readable record of a conversion run (schema in the README).

Everything else the run writes (``report.html``, ``stats.csv``, ``report.sarif``, the terminal
summary) is derived from this dictionary, so the views never disagree with each other.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .. import __version__

if TYPE_CHECKING:  # the convert driver imports this package; keep the import one-way at run time
    from ..convert import FileResult

FORMS = ("tile", "portable", "simt", "hybrid", "unsupported")
#: forms of a kernel that is not migrated: ``hybrid`` (kept as its CUDA behind a migrated launcher)
#: and ``unsupported`` never count as converted
NOT_MIGRATED = ("hybrid", "unsupported")
SEVERITIES = ("error", "warning", "note")


def report_dict(results: list["FileResult"], out_dir: Path,
                suppress: Callable[[str], bool] | None = None) -> dict:
    """The report of ``results``; diagnostics whose code ``suppress`` accepts are left out and
    only counted (``summary.suppressed``). Suppression hides; it never changes a kernel's form."""
    hidden: Counter = Counter()

    def keep(diags) -> list[dict]:
        out = []
        for d in diags:
            if suppress is not None and suppress(d.code):
                hidden[d.code] += 1
            else:
                out.append(d.to_json())
        return out

    kernels, files = [], []
    for r in results:
        files.append({
            "file": str(r.source.rel),
            "source": str(r.source.path),
            "output": r.output,
            "original": getattr(r, "original", None),  # the copy of the source inside OUT
            "spec": getattr(r, "spec", None),  # the copy of its spec inside OUT
            "kernels": len(r.kernels),
            "diagnostics": keep(r.diagnostics),
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
                # a lift that computes in a looser class than the spec's (tf32 GEMMs) says so
                **({"tolerance": k.tolerance} if getattr(k, "tolerance", None) else {}),
                # no spec and none derivable from the launch sites: what to state in NAME.toml
                **({"spec_missing": k.spec_missing} if getattr(k, "spec_missing", None) else {}),
                "template_instances": k.template_instances,
                "params": k.params,
                "launches": k.launches,
                "diagnostics": keep(k.diagnostics),
                "check": k.check,
            })
    data = {
        "tool": "cuda2tile",
        "version": __version__,
        "output": str(out_dir),
        "summary": summary_of(files, kernels),
        "files": files,
        "kernels": kernels,
    }
    if suppress is not None:
        data["summary"]["suppressed"] = dict(sorted(hidden.items()))
    return data


def summary_of(files: list[dict], kernels: list[dict]) -> dict:
    """The ``summary`` object of a report from its ``files`` and ``kernels`` lists."""
    forms = Counter(k["form"] for k in kernels)
    codes = Counter(d["code"] for f in files for d in f["diagnostics"])
    codes.update(d["code"] for k in kernels for d in k["diagnostics"])
    return {
        "files": len(files),
        "kernels": len(kernels),
        "converted": sum(n for f, n in forms.items() if f not in NOT_MIGRATED),
        "forms": {f: forms.get(f, 0) for f in FORMS},
        "diagnostics": dict(sorted(codes.items())),
    }


def summary(results: list["FileResult"]) -> dict:
    """The summary of ``results`` with every diagnostic counted (kept for existing callers)."""
    data = report_dict(results, Path("."))
    return data["summary"]


def all_diagnostics(data: dict):
    """Every diagnostic of a report, as ``(file entry, kernel entry or None, diagnostic)``."""
    by_file: dict[str, list[dict]] = {}
    for k in data["kernels"]:
        by_file.setdefault(k["file"], []).append(k)
    for f in data["files"]:
        for d in f["diagnostics"]:
            yield f, None, d
        for k in by_file.get(f["file"], []):
            for d in k["diagnostics"]:
                yield f, k, d


def write_json(data: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
