"""Print the lane exchanges of lifted shuffle networks (analysis.lift.xor_exchanges).

A :class:`~migrate.ir.loops.LaneExchange` is two lane loops: every lane stores its value into
the exchange buffer of its type (``xch_<dtype>``, one per kernel), then each lane reads the value
of its partner (``lane ^ mask``, or a constant lane of its group). TileLang places the barrier
between the loops (and before the buffer is stored again); on the CPU target the lane loops are
serial.
"""
from __future__ import annotations

from ..ir import model as m
from ..ir.loops import KernelPlan, LaneExchange, walk_regions
from .printer import StmtPrinter, scalar_name


def lane_exchanges(regions) -> list[LaneExchange]:
    return [r for r in walk_regions(regions) if isinstance(r, LaneExchange)]


def lane_exchange_header(kplan: KernelPlan, scope, add) -> None:
    """Factory lines of a kernel of lane exchanges: the block-size assumption (whole aligned
    groups of the lanes an exchange reaches, so that every partner is in the block) and the lane
    loop for the target."""
    group = max(r.group for r in lane_exchanges(kplan.regions))
    add(1, f'assert block_x % {group} == 0, "the CUDA shuffles exchange values within aligned groups of '
           f'{group} threads"')
    add(1, "# one lane per CUDA thread; the values that cross exchanges stay in lane-indexed shared buffers")
    add(1, 'lane_loop = T.Parallel if target == "cuda" else T.serial')


def print_lane_exchange(r: LaneExchange, printer: StmtPrinter) -> None:
    e = printer.expr
    template = isinstance(r.value.type, m.TemplateType)  # its buffer is of the instance's type
    dtype = r.value.type.name if template else scalar_name(r.value.type)
    buf = f"xch_{dtype}"
    printer.emit("for lane in lane_loop(block_x):  # every lane gives its value", r.span)
    printer.emit(f"    {buf}[lane] = {e.coerce(r.value, None if template else dtype)}", r.span)
    printer.emit(f"for lane in lane_loop(block_x):  # and reads its partner's, {r.partner}", r.span)
    printer.indent += 1
    depth = 1
    if r.guard is not None:
        printer.emit(f"if {e.cond(r.guard)}:", r.span)
        printer.indent += 1
        depth += 1
    printer.emit(f"{e(r.target)} = {buf}[{r.partner}]", r.span)
    printer.indent -= depth
