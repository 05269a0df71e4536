"""``--suppress CODES``: which diagnostic codes to hide.

A spec is a comma-separated list of codes and inclusive ranges, case-insensitive:
``M1003``, ``M1005-M1006``, ``M1003,M3000-M3999``. The flag may be repeated. A single code must
exist in the registry (a typo would silently hide nothing); a range may span unused numbers.
"""
from __future__ import annotations

import re

from ..codes import CODES

_CODE = re.compile(r"^M(\d{4})$")


class SuppressError(ValueError):
    pass


def _number(token: str, spec: str) -> int:
    m = _CODE.match(token.strip().upper())
    if not m:
        raise SuppressError(f"{token.strip()!r} in {spec!r} is not a diagnostic code (like M1003)")
    return int(m.group(1))


def parse_ranges(specs: list[str] | str) -> list[tuple[int, int]]:
    """The inclusive code-number ranges of ``specs``; raises :class:`SuppressError`."""
    if isinstance(specs, str):
        specs = [specs]
    ranges = []
    for spec in specs:
        for part in spec.split(","):
            if not part.strip():
                continue
            if "-" in part:
                lo_s, _, hi_s = part.partition("-")
                lo, hi = _number(lo_s, spec), _number(hi_s, spec)
                if lo > hi:
                    raise SuppressError(f"range {part.strip()!r} runs backwards")
            else:
                lo = hi = _number(part, spec)
                if part.strip().upper() not in CODES:
                    raise SuppressError(f"unknown diagnostic code {part.strip()!r} "
                                        "(see `migrate explain` or docs/diagnostics.md)")
            ranges.append((lo, hi))
    if not ranges:
        raise SuppressError("no codes given")
    return ranges


def matcher(specs: list[str] | str):
    """A predicate ``code -> bool`` that is true for the codes ``specs`` names."""
    ranges = parse_ranges(specs)

    def suppressed(code: str) -> bool:
        m = _CODE.match(code.upper())
        if not m:
            return False
        n = int(m.group(1))
        return any(lo <= n <= hi for lo, hi in ranges)

    suppressed.ranges = ranges  # type: ignore[attr-defined]
    return suppressed


def argparse_type(spec: str) -> str:
    """``type=`` for argparse: validates one ``--suppress`` value (usage error, exit 2)."""
    import argparse
    try:
        parse_ranges(spec)
    except SuppressError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return spec
