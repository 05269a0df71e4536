"""What every lifting pass shares: the refusal that says why a kernel keeps its CUDA thread
structure, and the table of the reductions the lifts recognise.

A reduction operation is one row of :data:`REDUCTIONS`: the CUDA calls that combine two values
with it, the atomic that combines block totals with it, its TileLang ``T.reduce_*`` and its
identity. A new operation is a new row; the tree, warp and grid lifts all read this table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...ir import model as m


class NotLiftable(Exception):
    """The kernel does not take the lift's tile form; the message says why (note M3003)."""


class NoReduction(NotLiftable):
    """Barriers that order something other than a block reduction: the reduction lift knows no
    more than that (a later lift's refusal, e.g. the tiled loops', says more)."""


class MayRace(NotLiftable):
    """A map whose stores the lift cannot prove apart (analysis.lift.map.check_stores)."""


class NotGemm(NotLiftable):
    """A map that is not a GEMM (analysis.lift.gemm): it stays a map."""


class NotScan(NotLiftable):
    """Not a block scan (analysis.lift.scan); ``candidate`` when the kernel looks like one (its
    final stores read the shared array at an index that depends on the thread), so that the
    reason is worth reporting; ``proved`` when the refusal comes from the scan's proof rather than
    from the launch it would run on (a later lift's refusal then says more)."""

    def __init__(self, reason: str, candidate: bool = True, proved: bool = True) -> None:
        super().__init__(reason)
        self.candidate = candidate
        self.proved = proved


class NotExchanges(NotLiftable):
    """Not a network of lane exchanges (analysis.lift.xor_exchanges); ``candidate`` when the
    threads talk only through shuffles and one of them is refused (a mask that is not a
    constant, say), so that the reason is worth reporting."""

    def __init__(self, reason: str, candidate: bool = False) -> None:
        super().__init__(reason)
        self.candidate = candidate


class MicroTilesRefused(NotLiftable):
    """A kernel with register micro-tiles that cannot be expanded (analysis.lift.micro_tiles)."""


@dataclass(frozen=True)
class Reduction:
    name: str  # the plans' name of the operation: BlockReduce.op, FreeGrid.op
    calls: tuple[str, ...]  # CUDA functions combining two values with it (``fmaxf(a, b)``)
    atomic: str  # the CUDA atomic that combines block totals with it
    tile_reduce: str  # the TileLang reduction over a fragment

    def is_identity(self, dtype: m.CType, value) -> bool:
        """Whether ``value`` (a Python number, or None) is the operation's identity in ``dtype``:
        0 for a sum; for max/min the lowest/highest value (infinities for floats)."""
        if value is None:
            return False
        if self.name == "sum":
            return value == 0
        name = dtype.dtype if isinstance(dtype, m.Scalar) else ""
        if name.startswith("float") or name in ("half", "bfloat16"):
            return value == (-math.inf if self.name == "max" else math.inf)
        if name.startswith("uint"):
            return value == (0 if self.name == "max" else (1 << int(name[4:])) - 1)
        if name.startswith("int"):
            bits = int(name[3:])
            return value == (-(1 << (bits - 1)) if self.name == "max" else (1 << (bits - 1)) - 1)
        return False


REDUCTIONS = {r.name: r for r in (
    Reduction("sum", (), "atomicAdd", "T.reduce_sum"),
    Reduction("max", ("fmaxf", "fmax", "max"), "atomicMax", "T.reduce_max"),
    Reduction("min", ("fminf", "fmin", "min"), "atomicMin", "T.reduce_min"),
)}

#: CUDA function (``std::`` dropped) -> the reduction it combines two values with
COMBINE_CALLS = {call: r.name for r in REDUCTIONS.values() for call in r.calls}


def combine_call(callee: str) -> str | None:
    """The reduction a two-argument call of ``callee`` combines with (``fmaxf`` → max)."""
    return COMBINE_CALLS.get(callee.removeprefix("std::"))
