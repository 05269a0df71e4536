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
