"""Source positions: every model node and every diagnostic carries a :class:`Span`."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open source range, 1-based lines and columns, as clang reports them."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    @classmethod
    def point(cls, file: str, line: int = 1, col: int = 1) -> "Span":
        return cls(file, line, col, line, col)

    def contains(self, file: str, line: int, col: int = 1) -> bool:
        if file != self.file:
            return False
        if (line, col) < (self.line, self.col):
            return False
        return (line, col) <= (self.end_line, self.end_col)


def caret_snippet(source: str, span: Span, context: int = 0) -> str:
    """The source line(s) of ``span`` with a caret under its start, as compilers print them."""
    lines = source.splitlines()
    if not 1 <= span.line <= len(lines):
        return ""
    first = max(1, span.line - context)
    out = [f"{n:>5} | {lines[n - 1]}" for n in range(first, span.line + 1)]
    out.append("      | " + " " * (span.col - 1) + "^")
    return "\n".join(out)
