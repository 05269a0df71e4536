"""The terminal summary: rich tables on a terminal, plain aligned text otherwise; and the
diagnostics, each as its ``file:line:col: severity: CODE: message`` line and a caret snippet.

Plain text is what CI logs, pipes and ``> file`` get: no box drawing, no colour, one fact a line,
so that it greps and diffs well.
"""
from __future__ import annotations

from ..codes import CODES, Severity
from ..diagnostics import Sources, snippet


def _title(code: str) -> str:
    return CODES[code].title if code in CODES else ""


def check_counts(data: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    for k in data["kernels"]:
        status = (k.get("check") or {}).get("status") or "none"
        counts[status] = counts.get(status, 0) + 1
    return dict(sorted(counts.items()))


def print_diagnostics(console, results, suppress=None) -> None:
    """Print the warnings and errors of ``results`` (convert's ``FileResult`` list: each file's
    diagnostics, then its kernels') to ``console``, but those ``suppress(code)`` hides: the line
    tools parse, as ``str(diag)`` gives it, then the source line and a caret under the column."""
    sources = Sources()
    for r in results:
        for d in list(r.diagnostics) + [d for k in r.kernels for d in k.diagnostics]:
            if d.severity is not Severity.NOTE and not (suppress and suppress(d.code)):
                console.print(str(d), markup=False, emoji=False)  # a ":100:" line stays text
                for line in snippet(d, sources):
                    console.print(line, markup=False, emoji=False, highlight=False)


def print_summary(console, data: dict, written: list | None = None) -> None:
    """Print the run's summary to ``console`` (a rich Console); ``written`` lists report files."""
    if console.is_terminal:
        _rich_summary(console, data)
    else:
        for line in plain_summary(data):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    if written:
        console.print("reports: " + ", ".join(str(p) for p in written), markup=False,
                      highlight=False, soft_wrap=True)


def plain_summary(data: dict) -> list[str]:
    s = data["summary"]
    forms = ", ".join(f"{f} {n}" for f, n in s["forms"].items() if n)
    seconds = f" in {s['seconds']:.1f} s" if isinstance(s.get("seconds"), (int, float)) else ""
    lines = [f"cuda2tile convert: {s['files']} files, {s['kernels']} kernels, "
             f"{s['converted']} converted{seconds}"]
    lines.append("forms: " + (forms or "none"))
    checks = check_counts(data)
    if checks:
        lines.append("checks: " + ", ".join(f"{k} {n}" for k, n in checks.items()))
    if s["diagnostics"]:
        lines.append("diagnostics by code:")
        width = max(len(str(n)) for n in s["diagnostics"].values())
        for code, n in s["diagnostics"].items():
            lines.append(f"  {code}  {n:>{width}}  {_title(code)}")
    else:
        lines.append("diagnostics: none")
    if s.get("suppressed"):
        lines.append("suppressed: " + ", ".join(f"{c} {n}" for c, n in s["suppressed"].items()))
    return lines


def _rich_summary(console, data: dict) -> None:
    from rich.table import Table

    s = data["summary"]
    table = Table(title="cuda2tile convert", show_header=True, header_style="bold")
    table.add_column("")
    table.add_column("count", justify="right")
    table.add_row("files", str(s["files"]))
    table.add_row("kernels", str(s["kernels"]))
    for form, n in s["forms"].items():
        table.add_row(f"  {form}", str(n))
    for status, n in check_counts(data).items():
        table.add_row(f"check {status}", str(n))
    console.print(table)
    if s["diagnostics"]:
        diag = Table(title="diagnostics by code", header_style="bold")
        diag.add_column("code")
        diag.add_column("count", justify="right")
        diag.add_column("meaning")
        for code, n in s["diagnostics"].items():
            diag.add_row(code, str(n), _title(code))
        console.print(diag)
    if s.get("suppressed"):
        console.print("suppressed: " + ", ".join(f"{c} {n}" for c, n in s["suppressed"].items()),
                      markup=False)
