"""``migrate convert --examine``: the effort estimate, with no TileLang written.

Every file is parsed, analysed and emitted in memory as a real conversion would be, so the forms
are the ones a conversion would give. Per file and in total it tells how many kernels would convert
in which form, which diagnostics block the rest (each blocking code with the kernels it blocks and
the fix), and how many lines of kernel code convert automatically versus need a person: the
lines of the blocked kernels, from their definition to their closing brace.

It prints that and writes ``OUT/examine.json``; nothing else goes into OUT (but the manifest of
what cuda2tile wrote there, :mod:`migrate.outdir`).
"""
from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from ..codes import CODES
from .align import cuda_extent
from .core import FORMS, NOT_MIGRATED, report_dict
from .terminal import print_diagnostics

SCHEMA_NOTE = "cuda2tile examine: no TileLang was written"


def _kernel_lines(source: str, kernels: list[dict]) -> dict[str, int]:
    try:
        lines = Path(source).read_bytes().decode("utf-8", errors="replace").split("\n")
    except OSError:
        return {}
    out = {}
    for k in kernels:
        a, b = cuda_extent(lines, int(k.get("line") or 1))
        out[k["kernel"]] = max(1, b - a + 1)
    return out


def examine_dict(data: dict) -> dict:
    """The examine report of a conversion report (``report_dict``'s output)."""
    by_file: dict[str, list[dict]] = {}
    for k in data["kernels"]:
        by_file.setdefault(k["file"], []).append(k)
    files, blockers, first_blockers = [], Counter(), Counter()
    total_auto = total_manual = 0
    for f in data["files"]:
        kernels = by_file.get(f["file"], [])
        sizes = _kernel_lines(f["source"], kernels)
        forms = Counter(k["form"] for k in kernels)
        blocked = []
        codes = Counter()
        auto = manual = 0
        for k in kernels:
            n = sizes.get(k["kernel"], 0)
            if k["form"] not in NOT_MIGRATED:
                auto += n
                continue
            manual += n
            errs = [d["code"] for d in k["diagnostics"] if d["severity"] == "error"]
            first = errs[0] if errs else (k.get("reason", "").split(":", 1)[0].strip() or "unknown")
            kcodes = sorted(set(errs)) or [first]
            codes.update(kcodes)
            blockers.update(kcodes)
            first_blockers[first] += 1
            blocked.append({"kernel": k["kernel"], "line": k.get("line"), "reason": k.get("reason", ""),
                            "codes": kcodes, "lines": n})
        file_errors = sorted({d["code"] for d in f["diagnostics"] if d["severity"] == "error"})
        total_auto += auto
        total_manual += manual
        files.append({
            "file": f["file"], "kernels": len(kernels),
            "convertible": len(kernels) - sum(forms.get(f, 0) for f in NOT_MIGRATED),
            "forms": {form: forms.get(form, 0) for form in FORMS},
            "blocked": blocked, "blocking_codes": dict(sorted(codes.items())),
            "file_errors": file_errors,
            "kernel_lines_auto": auto, "kernel_lines_manual": manual,
        })
    s = data["summary"]
    total_lines = total_auto + total_manual
    return {
        "tool": data.get("tool", "cuda2tile"), "version": data.get("version", ""), "note": SCHEMA_NOTE,
        "summary": {
            "files": s["files"], "kernels": s["kernels"], "convertible": s["converted"],
            "blocked": sum(s["forms"].get(f, 0) for f in NOT_MIGRATED), "forms": s["forms"],
            "kernel_lines_auto": total_auto, "kernel_lines_manual": total_manual,
            "automatic_share": round(total_auto / total_lines, 4) if total_lines else None,
            "diagnostics": s["diagnostics"], **({"suppressed": s["suppressed"]} if "suppressed" in s else {}),
            "seconds": s.get("seconds"),
        },
        "blockers": [{"code": c, "kernels": n, "first_blocker_of": first_blockers.get(c, 0),
                      "title": CODES[c].title if c in CODES else "",
                      "fix": CODES[c].fix if c in CODES else ""}
                     for c, n in sorted(blockers.items(), key=lambda kv: (-kv[1], kv[0]))],
        "files": files,
    }


def plain_examine(ex: dict) -> list[str]:
    s = ex["summary"]
    share = f" ({100 * s['automatic_share']:.0f}% of kernel lines automatic)" if s["automatic_share"] is not None else ""
    lines = [f"cuda2tile examine: {s['files']} files, {s['kernels']} kernels: {s['convertible']} would convert, "
             f"{s['blocked']} blocked{share}",
             "forms: " + (", ".join(f"{f} {n}" for f, n in s["forms"].items() if n) or "none"),
             f"kernel lines: {s['kernel_lines_auto']} automatic, {s['kernel_lines_manual']} by hand"]
    if ex["blockers"]:
        lines.append("blocking diagnostics (code, kernels blocked, meaning; fix):")
        for b in ex["blockers"]:
            lines.append(f"  {b['code']}  {b['kernels']:>4}  {b['title']}; fix: {b['fix']}")
    width = max([len(f["file"]) for f in ex["files"]] + [4])
    lines.append(f"  {'file':<{width}}  kernels  convert  blocked  blocking codes")
    for f in ex["files"]:
        codes = ",".join(f["blocking_codes"]) or "-"
        lines.append(f"  {f['file']:<{width}}  {f['kernels']:>7}  {f['convertible']:>7}  {len(f['blocked']):>7}  {codes}")
    return lines


def print_examine(console, ex: dict) -> None:
    if not console.is_terminal:
        for line in plain_examine(ex):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        return
    from rich.table import Table

    def forms(counts: dict) -> str:
        return ", ".join(f"{form} {n}" for form, n in counts.items() if n and form != "unsupported")

    table = Table(title="cuda2tile examine (no TileLang written)", header_style="bold",
                  caption="lines: kernel lines that convert automatically / that need a person")
    table.add_column("file", overflow="fold", min_width=20)
    table.add_column("kernels", justify="right")
    table.add_column("convert", justify="right")
    table.add_column("forms")
    table.add_column("blocked by")
    table.add_column("lines", justify="right", no_wrap=True)
    for f in ex["files"]:
        table.add_row(f["file"], str(f["kernels"]), str(f["convertible"]), forms(f["forms"]),
                      ", ".join(f"{c}\u00d7{n}" for c, n in f["blocking_codes"].items()),
                      f"{f['kernel_lines_auto']}/{f['kernel_lines_manual']}")
    s = ex["summary"]
    table.add_section()
    table.add_row("total", str(s["kernels"]), str(s["convertible"]), forms(s["forms"]),
                  f"{s['blocked']} kernels", f"{s['kernel_lines_auto']}/{s['kernel_lines_manual']}", style="bold")
    console.print(table)
    if ex["blockers"]:
        bt = Table(title="what blocks the rest", header_style="bold")
        for col in ("code", "kernels", "meaning", "fix"):
            bt.add_column(col, justify="right" if col == "kernels" else "left")
        for b in ex["blockers"]:
            bt.add_row(b["code"], str(b["kernels"]), b["title"], b["fix"])
        console.print(bt)
    share = s["automatic_share"]
    console.print(f"{s['convertible']} of {s['kernels']} kernels would convert"
                  + (f"; {100 * share:.0f}% of kernel lines automatically" if share is not None else ""),
                  markup=False, highlight=False)


def run_examine(cv, files, parsed, out_dir: Path, args, out, err, start: float, suppress=None) -> int:
    """The ``--examine`` path of ``migrate convert``: analyse and emit in memory, report, write
    ``OUT/examine.json``. Exit 0 when every kernel would convert, else 1."""
    results = []
    for src in files:
        pf = parsed[src.path]
        kernels, file_diags, text = cv.convert_file(pf, str(src.rel))
        results.append(cv.FileResult(src, None, kernels, file_diags, pf.seconds, cv.count_lines(src.path), 0))
    data = report_dict(results, out_dir, suppress=suppress)
    data["summary"]["seconds"] = round(time.perf_counter() - start, 3)
    ex = examine_dict(data)
    if not getattr(args, "quiet", False):
        print_diagnostics(err, results, suppress)
    print_examine(out, ex)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "examine.json"
    path.write_text(json.dumps(ex, indent=2) + "\n")
    out.print(f"examine: {path}", markup=False, highlight=False, soft_wrap=True)
    # as for convert: suppression hides diagnostics, it does not change the exit status
    blocked = any(k.form in NOT_MIGRATED for r in results for k in r.kernels) or cv.error_count(results) > 0
    return 1 if blocked else 0
