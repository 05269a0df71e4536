"""Diagnostics are values: a code from :mod:`migrate.codes`, a span and a message.

Passes collect them in a :class:`DiagnosticBag`; nothing in the tool prints from a pass.

``str(diag)`` is the one-line form tools parse, ``file:line:col: severity: CODE: message``.
:func:`render` adds, for the terminal, the source line and a caret under the column, as clang and
rustc print them (``~`` under the rest of the span when it ends on the same line)::

    kernel.cu:12:9: error: M1207: call to 'foo', which is neither a visible __device__ ...
       12 |     y = foo(x);
          |         ^~~~~~

There is no snippet when the file cannot be read, the line is not in it, the span has no line
(line 0), or the diagnostic is about the file as a whole (:data:`FILE_CODES`). Reports
(report.json, report.html, SARIF) never contain snippets.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .codes import CODES, Severity
from .ir.span import Span


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    span: Span
    message: str
    severity: Severity

    def __str__(self) -> str:
        return f"{self.span}: {self.severity.value}: {self.code}: {self.message}"

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "file": self.span.file,
            "line": self.span.line,
            "col": self.span.col,
            "message": self.message,
        }


#: the name the frontend gives a one-instance template's copy (parse.instance_copies.SUFFIX),
#: which the copy's local types carry too (``packed__c2t_instance_Pack``); never shown to users
_COPY_SUFFIX = "__c2t_instance"


def make(code: str, span: Span, message: str | None = None, severity: Severity | None = None) -> Diagnostic:
    entry = CODES[code]
    message = (message or entry.title).replace(_COPY_SUFFIX, "")
    return Diagnostic(code, span, message, severity or entry.severity)


@dataclass
class DiagnosticBag:
    items: list[Diagnostic] = field(default_factory=list)

    def add(self, code: str, span: Span, message: str | None = None,
            severity: Severity | None = None) -> Diagnostic:
        diag = make(code, span, message, severity)
        if diag not in self.items:
            self.items.append(diag)
        return diag

    def extend(self, diags) -> None:
        for d in diags:
            if d not in self.items:
                self.items.append(d)

    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity is Severity.ERROR]

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


# ---------------------------------------------------------------------------------------------
# Rendering for the terminal
# ---------------------------------------------------------------------------------------------

#: Codes whose diagnostics are about a file as a whole (their span is the point 1:1 of the file):
#: not text, no kernels, too large, unreadable, internal error. They get no snippet.
FILE_CODES = frozenset({"M1002", "M1003", "M1004", "M1007", "M9001", "M9007"})
#: Columns between tab stops when a source line with tabs is shown (clang's default).
TAB_WIDTH = 8
_GUTTER = 5  # width of the line number, as clang prints it

#: How :func:`render` gets a file's bytes: ``None`` when it cannot be read.
SourceReader = Callable[[str], "bytes | None"]


class Sources:
    """Reads source files for snippets, each at most once (a diagnostics list often names one file
    many times); ``None`` for a file that cannot be read."""

    def __init__(self) -> None:
        self._data: dict[str, bytes | None] = {}

    def __call__(self, file: str) -> bytes | None:
        if file not in self._data:
            try:
                self._data[file] = Path(file).read_bytes()
            except (OSError, ValueError):
                self._data[file] = None
        return self._data[file]


def render(diag: Diagnostic, sources: SourceReader | None = None, *,
           tab_width: int = TAB_WIDTH) -> str:
    """``str(diag)``, then the lines of :func:`snippet` (none where there is nothing to show)."""
    return "\n".join([str(diag), *snippet(diag, sources, tab_width=tab_width)])


def snippet(diag: Diagnostic, sources: SourceReader | None = None, *,
            tab_width: int = TAB_WIDTH) -> list[str]:
    """The source line of ``diag``'s span and a caret line under its column, or ``[]``.

    ``sources`` maps a file name to its bytes (default: read from disk). Columns are clang's:
    1-based, counted in bytes; they are shown in display columns, tabs expanded to
    ``tab_width``, so that the caret lines up under the character it points at."""
    span = diag.span
    if diag.code in FILE_CODES or span.line < 1:
        return []
    data = (sources or Sources())(span.file)
    if data is None or b"\0" in data:
        return []
    lines = data.split(b"\n")
    if span.line > len(lines) or (span.line == len(lines) and not lines[-1]):
        return []
    raw = lines[span.line - 1].removesuffix(b"\r")
    text, starts = _display(raw, tab_width)
    start = starts[_char_index(raw, span.col)]
    width = 1
    if span.end_line == span.line and span.end_col > span.col:
        width = max(1, starts[_char_index(raw, span.end_col)] - start)
    return [f"{span.line:>{_GUTTER}} | {text}".rstrip(),
            " " * _GUTTER + " | " + " " * start + "^" + "~" * (width - 1)]


def _chars(raw: bytes) -> str:
    # surrogateescape: one character per undecodable byte, so byte columns still count right
    return raw.decode("utf-8", "surrogateescape")


def _char_index(raw: bytes, col: int) -> int:
    """The index of the character at 1-based byte column ``col`` (past the end: the end)."""
    offset, index = 0, 0
    for ch in _chars(raw):
        if offset >= col - 1:
            return index
        offset += 1 if "\udc80" <= ch <= "\udcff" else len(ch.encode("utf-8"))
        index += 1
    return index


def _display(raw: bytes, tab_width: int) -> tuple[str, list[int]]:
    """The line as shown (tabs expanded, undecodable bytes and control characters replaced) and
    the display column where each character starts, plus one entry for the end of the line."""
    out: list[str] = []
    starts: list[int] = []
    col = 0
    for ch in _chars(raw):
        starts.append(col)
        if ch == "\t":
            n = tab_width - col % tab_width
            out.append(" " * n)
            col += n
            continue
        if "\udc80" <= ch <= "\udcff":
            ch = "\ufffd"
        elif unicodedata.category(ch) == "Cc":
            ch = " "
        w = _width(ch)
        out.append(ch)
        col += w
    starts.append(col)
    return "".join(out), starts


def _width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
