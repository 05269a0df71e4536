"""Leave out of an original's build the functions that do not compile, so that its other kernels
can still be checked.

When the compiler reports errors inside function bodies of the main file (bad host code, another
kernel that does not compile), :func:`stub_failing` replaces each such body with a trap, keeping
every line where it was (the compiler's and the executor's line numbers stay right). A body that
holds a kernel the build launches is never replaced (that kernel's check fails with the
compiler's error), nor is an error outside every function body (a declaration, unbalanced
braces) worked around. The scanner knows C++ only as far as comments, literals, preprocessor
lines and braces go.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_CONTAINER = re.compile(r"^\s*(?:(?:template\s*<[^{]*>\s*)?(?:namespace\b[^(]*|extern\s*|"
                        r"(?:typedef\s+)?(?:struct|class|union|enum)\b[^(]*))$", re.S)
_NAME = re.compile(r"([A-Za-z_~][A-Za-z_0-9]*)\s*(?:<[^()]*>)?\s*$")


@dataclass(frozen=True)
class Body:
    name: str
    line: int  # of the header's first line (1-based)
    kernel: bool  # __global__
    start: int  # index of "{"
    end: int  # index of the matching "}"


def _mask(text: str) -> str:
    """``text`` with comments, string/char literals and preprocessor lines blanked (newlines kept)."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":
                j += 2 if text[j] == "\\" and j + 1 < n else 1
            for k in range(i, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        if c in " \t":
            i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def function_bodies(text: str) -> list[Body] | None:
    """The bodies of functions defined at namespace or class level; None when braces do not match."""
    masked = _mask(text)
    bodies: list[Body] = []
    stack: list[tuple[int, str]] = []  # (index of "{", "container" | "function" | "other")
    last = -1  # the index of the last ; { or } at container level
    for i, c in enumerate(masked):
        if c == ";" and (not stack or stack[-1][1] == "container"):
            last = i
        elif c == "{":
            inside = not stack or stack[-1][1] == "container"
            header = masked[last + 1:i]
            if not inside:
                kind = "other"
            elif _CONTAINER.match(header):
                kind = "container"
            elif "(" in header and "=" not in header.split("(", 1)[0]:
                kind = "function"
            else:
                kind = "other"
            stack.append((i, kind))
            if kind == "function":
                head = header.split("(", 1)[0]
                m = _NAME.search(head)
                first = last + 1 + (len(header) - len(header.lstrip()))
                bodies.append(Body(m.group(1) if m else "?", text.count("\n", 0, first) + 1,
                                   "__global__" in header, i, -1))
            if inside:
                last = i
        elif c == "}":
            if not stack:
                return None
            start, kind = stack.pop()
            if kind == "function":
                for k in range(len(bodies) - 1, -1, -1):
                    if bodies[k].start == start:
                        b = bodies[k]
                        bodies[k] = Body(b.name, b.line, b.kernel, b.start, i)
                        break
            if not stack or stack[-1][1] == "container":
                last = i
    if stack:
        return None
    return bodies


def error_lines(log: str, path: str) -> list[int]:
    """The lines of ``path`` the compiler reported errors on (g++/clang++ or nvcc messages)."""
    gcc = re.compile(rf"^{re.escape(path)}:(\d+):(?:\d+:)? (?:fatal )?error:", re.M)
    nvcc = re.compile(rf"^{re.escape(path)}\((\d+)\): (?:catastrophic )?error", re.M)
    return sorted({int(m.group(1)) for pattern in (gcc, nvcc) for m in pattern.finditer(log)})


def stub_failing(text: str, lines: list[int], launched: set[str]) -> tuple[str, list[tuple[str, int]]] | None:
    """``text`` with the bodies that hold an error line replaced by a trap, and the functions left
    out (name, line); None when an error is outside every body, or in a kernel of ``launched``."""
    if not lines:
        return None
    bodies = function_bodies(text)
    if bodies is None:
        return None
    offsets = [0]
    for ln in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(ln))
    chosen: dict[int, Body] = {}
    for line in lines:
        if line - 1 >= len(offsets) - 1:
            return None
        pos = offsets[line - 1]
        end = offsets[line]
        hit = next((b for b in bodies if b.start < end and pos <= b.end), None)
        if hit is None or (hit.kernel and hit.name in launched):
            return None
        chosen[hit.start] = hit
    out = text
    for b in sorted(chosen.values(), key=lambda b: -b.start):
        inner = out[b.start + 1:b.end]
        out = out[:b.start + 1] + " __builtin_trap(); " + "\n" * inner.count("\n") + out[b.end:]
    return out, [(b.name, b.line) for b in sorted(chosen.values(), key=lambda b: b.start)]
