"""Where a kernel's definition and its launches stand in a source's text, found the way HIPIFY
finds them: by the text, with balanced brackets, read in its copy whose comments, strings and
character literals are blanked (:func:`runtime.source.mask_source`, which the recorder's launch
rewrite reads too). The report gives the lines (``kernels[].line``, ``launches[].line``); a launch spelled
through a macro is not found at its line and is left as it is (the kernel then runs as the
original there, and the build says so)."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from ..runtime.source import RewriteError, mask_source, match_forward

_OPEN, _CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class LaunchText:
    start: int  # offset of the kernel's name
    end: int  # offset just past the argument list's ')'
    config: tuple  # the texts between <<< and >>>: grid, block[, shared bytes[, stream]]
    args: str  # the text between the argument list's parentheses
    template: str  # the template arguments written at the launch ('' for none)


@dataclass(frozen=True)
class Definition:
    params: str  # the parameter list's text, between its parentheses
    body_end: int  # offset just past the body's closing '}'


def _code(code: str, i: int):
    """(offset, character, bracket depth before it) of each character of ``code`` (a source's
    text with its comments and literals blanked, :func:`runtime.source.mask_source`) from ``i``."""
    depth = 0
    for k in range(i, len(code)):
        c = code[k]
        yield k, c, depth
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1


def matching(code: str, i: int) -> int:
    """The offset of the bracket closing the one at ``i`` of ``code`` (-1 when unbalanced)."""
    try:
        return match_forward(code, i) - 1
    except RewriteError:
        return -1


def split_top(text: str, code: str, sep: str = ",") -> list[str]:
    """``text`` split at the separators outside brackets, comments and strings (found in ``code``,
    its masked copy)."""
    cuts = [k for k, c, depth in _code(code, 0) if c == sep and depth == 0]
    return [text[a + 1:b].strip() for a, b in zip([-1] + cuts, cuts + [len(text)])]


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _line_of(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset)


def _closing_chevrons(code: str, i: int) -> int:
    """The offset of the ``>>>`` closing the launch configuration starting at ``i`` (-1)."""
    return next((k for k, c, depth in _code(code, i) if depth == 0 and code.startswith(">>>", k)), -1)


def launches(text: str, kernel: str) -> list[tuple[int, LaunchText]]:
    """(line, launch) of every ``kernel<<<...>>>(...)`` written out in ``text``."""
    code = mask_source(text)
    starts = _line_starts(text)
    out = []
    pattern = re.compile(r"(?<![\w.:>])" + re.escape(kernel) + r"\s*(<(?:[^<>;{}]|<[^<>;{}]*>)*>)?\s*<<<")
    for m in pattern.finditer(code):
        cfg_start = m.end()
        cfg_end = _closing_chevrons(code, cfg_start)
        if cfg_end < 0:
            continue
        k = cfg_end + 3
        while k < len(text) and text[k].isspace():
            k += 1
        if k >= len(text) or text[k] != "(":
            continue
        close = matching(code, k)
        if close < 0:
            continue
        config = tuple(split_top(text[cfg_start:cfg_end], code[cfg_start:cfg_end]))
        template = text[m.start(1) + 1:m.end(1) - 1].strip() if m.group(1) else ""
        out.append((_line_of(starts, m.start()),
                    LaunchText(m.start(), close + 1, config, text[k + 1:close], template)))
    return out


def launch_at(text: str, kernel: str, line: int, slack: int = 3) -> LaunchText | None:
    """The launch of ``kernel`` the report places on ``line``: the one written on that line, else
    the nearest within ``slack`` lines (a launch spread over lines); None when none is (a macro)."""
    found = launches(text, kernel)
    exact = [lt for ln, lt in found if ln == line]
    if exact:
        return exact[0]
    near = sorted((abs(ln - line), lt.start, lt) for ln, lt in found if abs(ln - line) <= slack)
    return near[0][2] if near else None


def definition(text: str, kernel: str, line: int, slack: int = 3) -> Definition | None:
    """The definition of ``__global__`` kernel ``kernel`` the report places on ``line`` (the line
    of its name, or near it): its parameter list and where its body ends."""
    code = mask_source(text)
    starts = _line_starts(text)
    best = None
    for m in re.finditer(r"(?<![\w.:])" + re.escape(kernel) + r"\s*\(", code):
        ln = _line_of(starts, m.start())
        if abs(ln - line) > slack:
            continue
        head = text[max(0, starts[max(0, ln - 1 - slack)]):m.start()]
        if "__global__" not in head:
            continue
        open_paren = m.end() - 1
        close = matching(code, open_paren)
        if close < 0:
            continue
        k = close + 1
        while k < len(text) and code[k].isspace():
            k += 1
        if k >= len(text) or text[k] != "{":
            continue  # a declaration
        body_end = matching(code, k)
        if body_end < 0:
            continue
        cand = (abs(ln - line), Definition(text[open_paren + 1:close], body_end + 1))
        if best is None or cand[0] < best[0]:
            best = cand
    return best[1] if best else None


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, replacement) applied; the edits must not overlap."""
    out, pos = [], 0
    for start, end, new in sorted(edits):
        if start < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)
