"""Comparing the standard output of the original and the rebuilt program: line by line, the
numbers within a tolerance class, the rest of each line exactly; lines that report time, speed
or the process's memory ignored, and the program's own path (``argv[0]``) read alike; the
program's own verdicts (PASS/FAIL lines) and exit statuses compared apart.

A float printed on both sides passes when ``|a - e| <= atol + rtol * |e|`` (the class's rtol,
atol its ``atol_scale`` times the largest float the original printed), or when the two differ by
at most one unit of the last digit printed (``%.2f`` rounds); integers compare exactly. A line
that prints an error or difference (``output_rules.ERROR_LIKE``) takes at least the class's rtol
as its atol: its number is a distance in the data's units, and a rounding near zero is not
relative to itself.

With a control (the original run a second time), a line on which the original's own two runs
differ varies run to run (the order of its atomics, a race it tolerates, a clock it prints): its
words must still match, each number the two runs agree on is compared as above, and each number
they print differently must lie within the original's own spread (between its two values, widened
by their difference on both sides); such a line is counted and listed as varying. A number far
outside what the original itself varies by is a mismatch (pns: 1.99 where the original printed
2.7231 and 2.7222).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .output_rules import CLASS_BY_DTYPE, CLASS_ORDER, ERROR_LIKE, TIME_LIKE, VERDICT_WORDS

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?!\w|\.\d)|(?<!\w)[-+]?(?:nan|inf|NaN|Inf|INF|NAN)(?!\w)")
_TIME = re.compile("|".join(TIME_LIKE), re.IGNORECASE)
_ERROR = re.compile("|".join(ERROR_LIKE), re.IGNORECASE)
_VERDICT = re.compile(r"\b(" + "|".join(sorted(map(re.escape, VERDICT_WORDS), key=len, reverse=True)) + r")\b")
_DROPIN = re.compile(r"^cuda2tile: (.+?) (\d+) launches migrated, (\d+) original$")

#: what a program's own path reads as in both outputs (the original and the rebuilt executable
#: have different paths, which a program that prints its ``argv[0]`` shows)
PROGRAM = "<program>"

#: (rtol, atol_scale) per class, as runtime.compare states them
_CLASSES = {"exact": (0.0, 0.0), "fp32": (1e-5, 1e-6), "fp32_accum": (1e-4, 1e-5), "fp64": (1e-12, 1e-13),
            "fp16": (2e-3, 1e-3), "bf16": (1.6e-2, 8e-3), "tf32": (5e-3, 2e-3)}


@dataclass
class OutputComparison:
    equal: bool = True
    tolerance: str = "fp32"
    exit_status: tuple = (None, None)
    verdicts: tuple = ((), ())
    lines_compared: int = 0
    lines_ignored: int = 0
    mismatches: list = field(default_factory=list)  # {"line", "expected", "actual", "why"}, the first few
    #: with a control run: the original's lines its second run printed differently ({"line",
    #: "expected", "control", "actual"}, the first few) and how many
    varying: list = field(default_factory=list)
    lines_varying: int = 0

    def as_dict(self) -> dict:
        return {"equal": self.equal, "tolerance": self.tolerance, "exit_status": list(self.exit_status),
                "verdicts": [list(v) for v in self.verdicts], "lines_compared": self.lines_compared,
                "lines_ignored": self.lines_ignored, "mismatches": self.mismatches,
                "lines_varying": self.lines_varying, "varying": self.varying}


def tolerance_class(kernels: list[dict]) -> str:
    """The loosest class among kernels (report.json rows: ``tolerance``, else their buffers' types)."""
    found = ["exact"]
    for k in kernels:
        if k.get("tolerance") in _CLASSES:
            found.append(k["tolerance"])
            continue
        types = " ".join(str(p.get("type", "")) for p in k.get("params", []))
        for dtype, cls in CLASS_BY_DTYPE:
            if dtype in types or (dtype == "float32" and re.search(r"\bfloat\b", types)) \
                    or (dtype == "float64" and re.search(r"\bdouble\b", types)):
                found.append(cls)
                break
    return max(found, key=CLASS_ORDER.index)


def is_time_like(line: str) -> bool:
    return bool(_TIME.search(line))


def verdicts(text: str) -> tuple:
    """The program's own verdicts, in order: ``pass``/``fail`` per line that states one."""
    out = []
    for line in text.splitlines():
        if is_time_like(line):
            continue
        m = _VERDICT.search(line)
        if m:
            out.append(VERDICT_WORDS[m.group(1)])
    return tuple(out)


def dropin_counts(stderr: str) -> dict:
    """kernel -> (launches migrated, launches original) from a rebuilt program's stderr (its
    ``cuda2tile: k N launches migrated, M original`` lines; ``total`` sums them)."""
    out = {}
    for line in stderr.splitlines():
        m = _DROPIN.match(line.strip())
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def without_dropin_lines(stderr: str) -> str:
    return "\n".join(line for line in stderr.splitlines() if not _DROPIN.match(line.strip()))


def _value(token: str) -> float:
    return float(token.lower().replace("+", "")) if token.lower().lstrip("+-") in ("nan", "inf") else float(token)


def _is_integer(token: str) -> bool:
    return re.fullmatch(r"[-+]?\d+", token) is not None


def _last_digit(token: str) -> float:
    """One unit of the last digit ``token`` prints (``1.25`` -> 0.01, ``3.1e-05`` -> 1e-06)."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return 10.0 ** (-decimals + (int(exponent) if exponent else 0))


def _numbers_equal(e: str, a: str, rtol: float, atol: float) -> bool:
    if _is_integer(e) and _is_integer(a):
        return int(e) == int(a)
    ev, av = _value(e), _value(a)
    if math.isnan(ev) or math.isnan(av):
        return math.isnan(ev) and math.isnan(av)
    if math.isinf(ev) or math.isinf(av):
        return ev == av
    diff = abs(ev - av)
    return diff <= atol + rtol * abs(ev) or diff <= max(_last_digit(e), _last_digit(a)) * (1 + 1e-9)


def _split(line: str) -> tuple[list[str], list[str]]:
    """(the text between numbers, whitespace runs made one space; the numbers)."""
    texts, numbers, pos = [], [], 0
    for m in _NUMBER.finditer(line):
        texts.append(" ".join(line[pos:m.start()].split()))
        numbers.append(m.group(0))
        pos = m.end()
    texts.append(" ".join(line[pos:].split()))
    return texts, numbers


def _kept(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the lines compared: not empty, not reporting time."""
    return [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if not is_time_like(ln) and ln.strip()]


def _line_differs(le: str, la: str, rtol: float, atol: float, tolerance: str, lc: str | None = None) -> str | None:
    """Why line ``la`` differs from ``le`` (None when equal). With ``lc``, the line as the
    original printed it in its control run: a number its two runs print differently must lie
    within their spread (between the two values, widened by their difference), not equal ``le``'s."""
    if _ERROR.search(le):  # a distance between results, in the data's units (output_rules.ERROR_LIKE)
        atol = max(atol, rtol)
    te, ne = _split(le)
    ta, na = _split(la)
    tc, nc = _split(lc) if lc is not None else (te, ne)
    if te != ta or len(ne) != len(na) or tc != te or len(nc) != len(ne):
        return "text"
    for e, c, a in zip(ne, nc, na):
        if lc is None or _numbers_equal(e, c, rtol, atol):
            if not _numbers_equal(e, a, rtol, atol):
                return f"number {e} != {a} ({tolerance})"
            continue
        ev, cv, av = _value(e), _value(c), _value(a)
        spread = abs(ev - cv)
        if not (min(ev, cv) - spread <= av <= max(ev, cv) + spread):
            return f"number {a} outside the original's own range ({e} and {c} in its two runs)"
    return None


def compare_outputs(expected: str, actual: str, tolerance: str = "fp32", status=(0, 0),
                    keep: int = 10, programs: tuple[str, str] | None = None,
                    control: str | None = None) -> OutputComparison:
    """Compare the original's stdout ``expected`` with the rebuilt's ``actual`` (see the module doc);
    ``status``: the two exit statuses; ``programs``: the two executables' paths, which a program
    printing its own ``argv[0]`` shows (each read as ``<program>``); ``control``: the original's
    stdout from a second run (the same executable), whose differing lines vary run to run."""
    if programs is not None:
        expected = expected.replace(programs[0], PROGRAM)
        actual = actual.replace(programs[1], PROGRAM)
        control = control.replace(programs[0], PROGRAM) if control is not None else None
    rtol, atol_scale = _CLASSES.get(tolerance, _CLASSES["fp32"])
    res = OutputComparison(tolerance=tolerance, exit_status=tuple(status),
                           verdicts=(verdicts(expected), verdicts(actual)))
    if status[0] != status[1]:
        res.equal = False
        res.mismatches.append({"line": None, "expected": status[0], "actual": status[1], "why": "exit status"})
    if res.verdicts[0] != res.verdicts[1]:
        res.equal = False
        res.mismatches.append({"line": None, "expected": list(res.verdicts[0]), "actual": list(res.verdicts[1]),
                               "why": "verdict"})
    e_kept, a_kept = _kept(expected), _kept(actual)
    res.lines_ignored = sum(1 for _ in expected.splitlines()) - len(e_kept)
    floats = [abs(_value(t)) for _i, ln in e_kept for t in _split(ln)[1] if not _is_integer(t)]
    scale = max([f for f in floats if math.isfinite(f)], default=0.0)
    atol = atol_scale * scale
    # the original's lines its own second run printed otherwise (paired in order, as the rebuilt's)
    varies = {}
    if control is not None:
        varies = {ie: lc for (ie, le), (_ic, lc) in zip(e_kept, _kept(control))
                  if _line_differs(le, lc, rtol, atol, tolerance)}
    if len(e_kept) != len(a_kept):
        res.equal = False
        res.mismatches.append({"line": None, "expected": len(e_kept), "actual": len(a_kept),
                               "why": "number of lines compared"})
    for (ie, le), (_ia, la) in zip(e_kept, a_kept):
        why = _line_differs(le, la, rtol, atol, tolerance, varies.get(ie))
        if ie in varies and why is None:
            res.lines_varying += 1
            if len(res.varying) < keep:
                res.varying.append({"line": ie, "expected": le, "control": varies[ie], "actual": la})
            continue
        res.lines_compared += 1
        if why:
            res.equal = False
            if len(res.mismatches) < keep:
                res.mismatches.append({"line": ie, "expected": le, "actual": la, "why": why})
    return res
