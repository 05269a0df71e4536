"""Diagnostics are values: a code from :mod:`migrate.codes`, a span and a message.

Passes collect them in a :class:`DiagnosticBag`; nothing in the tool prints from a pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field

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


def make(code: str, span: Span, message: str | None = None, severity: Severity | None = None) -> Diagnostic:
    entry = CODES[code]
    return Diagnostic(code, span, message or entry.title, severity or entry.severity)


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
