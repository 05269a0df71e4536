"""Print the lane forms of lifted kernels: block reductions and reductions per warp, the rows
they keep in registers, block scans, and grids that grow to fill the GPU.

A lifted reduction runs one *lane* per CUDA thread: a ``T.Parallel`` loop over the lanes (a
serial loop on the CPU target, whose ``T.reduce`` takes thread-local buffers) computes each
lane's value, ``T.reduce_*`` combines them, and what the CUDA block did with the total runs
once. The statements are printed by :class:`~.printer.StmtPrinter`; this module prints the
factory lines, allocations and loops around them.
"""
from __future__ import annotations

import textwrap

from ..analysis.lift.base import REDUCTIONS
from ..ir import model as m
from ..ir.loops import MAX_ROW_LENGTH, MAX_ROW_STEPS, BlockReduce, BlockScan, KernelPlan, Phase, UniformIf, UniformLoop
from .printer import ExprPrinter, StmtPrinter, dtype_of, scalar_name
from .signature import KEEP_BINDS


# ---------------------------------------------------------------------------------------------
# Block reductions (analysis.lift.reduce, analysis.lift.warp, analysis.lift.warp_rows)
# ---------------------------------------------------------------------------------------------


def _reductions(regions):
    for r in regions:
        if isinstance(r, BlockReduce):
            yield r
        elif isinstance(r, UniformIf):
            yield from _reductions(r.then)
            yield from _reductions(r.other)
        elif isinstance(r, UniformLoop):
            yield from _reductions(r.body)


def reduce_header(kplan: KernelPlan, scope, add) -> None:
    """Factory lines of a kernel with lifted reductions: the block-size assumptions of the CUDA
    trees, and the lane loop and buffers for the target (``T.reduce`` combines fragments on
    GPUs and thread-local buffers on the CPU target)."""
    # atomics: any block size; a bounded tree: any block up to its width
    kinds = {r.warps for r in _reductions(kplan.regions) if not r.atomics and not r.bounded}
    if False in kinds:
        add(1, 'assert block_x & (block_x - 1) == 0, "the CUDA tree reduction assumes a power-of-two block"')
    if True in kinds:
        add(1, 'assert block_x % 32 == 0, "the CUDA warp shuffles assume whole warps"')
    for r in _reductions(kplan.regions):
        if r.size is None:
            continue
        size = ExprPrinter(scope)(r.size)
        if r.bounded:
            add(1, f'assert block_x <= {size}, "the CUDA tree over \'{r.shared}\' folds at most {size} threads"',
                scope.tag(r.span))
        else:
            add(1, f'assert block_x == {size}, "the CUDA tree over \'{r.shared}\' spans {size} threads"',
                scope.tag(r.span))
    add(1, "# one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over")
    add(1, "# thread-local buffers on the CPU target (whose T.reduce takes local buffers only)")
    add(1, 'lane_loop = T.Parallel if target == "cuda" else T.serial')
    add(1, 'alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local')
    if any(r.bounded and not r.per_warp for r in _reductions(kplan.regions)):
        # TileLang 0.1.15's T.reduce on GPUs is an XOR butterfly over a power-of-two count of
        # threads (a block of 224 did not build on the H100): a bounded tree on another block has
        # its lanes added in order by one thread, through shared cells (on every target, so that
        # the CPU check runs the code the GPU runs)
        add(1, "serial_total = block_x & (block_x - 1) != 0")
        add(1, "serial_cells = block_x if serial_total else 1")
        add(1, 'alloc_total = (lambda shape, dtype: T.alloc_shared(shape, dtype, scope="shared")) if serial_total '
               'else alloc_lanes')
    if any(r.per_warp for r in _reductions(kplan.regions)):
        add(1, 'lane_grid = T.Parallel if target == "cuda" else T.grid  # (warp, lane) pairs')


def reduce_allocations(regions, scope, add) -> None:
    seen = set()
    for r in _reductions(regions):
        if r.shared in seen:
            continue
        seen.add(r.shared)
        dtype = dtype_of(r.dtype, scope)
        lanes, totals = ("block_x // 32, 32", "block_x // 32") if r.per_warp else ("block_x", "1")
        serial = r.bounded and not r.per_warp
        for name in (r.shared, r.pair_name) if r.pair_name else (r.shared,):
            add(3, f"{name}_lanes = alloc_lanes(({lanes},), {dtype})", scope.tag(r.span))
            add(3, f"{name}_total = {'alloc_total' if serial else 'alloc_lanes'}(({totals},), {dtype})",
                scope.tag(r.span))
            if serial:
                add(3, f'{name}_cells = T.alloc_shared((serial_cells,), {dtype}, scope="shared")', scope.tag(r.span))


def print_block_reduce(r: BlockReduce, printer: StmtPrinter, scope) -> None:
    if r.per_warp:
        _print_warp_reduce(r, printer, scope)
        return
    printer.emit("for lane in lane_loop(block_x):", r.span)
    printer.indent += 1
    if r.before:  # none in the second reduction of a tree over several fields
        printer.block(r.before)
    printer.emit(f"{r.shared}_lanes[lane] = {printer.expr.coerce(r.value, scalar_name(r.dtype))}", r.span)
    printer.indent -= 1
    if r.bounded:
        _print_serial_total(r, printer)
    else:
        printer.emit(f"{REDUCTIONS[r.op].tile_reduce}({r.shared}_lanes, {r.shared}_total, dim=0)", r.span)
    # what the block did after the tree: values every thread computes alike at block level, the
    # stores once (as CUDA's thread 0 did)
    group: list = []

    def flush():
        if group:
            printer.emit("for _ in T.Parallel(1):  # once, as CUDA's thread 0", r.span)
            printer.indent += 1
            printer.block(tuple(group))
            printer.indent -= 1
            group.clear()

    for st in r.after:
        if _stores(st):
            group.append(st)
        else:
            flush()
            printer.block((st,))
    flush()


_COMBINE = {"sum": "{a} + {b}", "max": "T.max({a}, {b})", "min": "T.min({a}, {b})"}


def _print_serial_total(r: BlockReduce, printer: StmtPrinter) -> None:
    """A bounded tree's total: ``T.reduce`` on a power-of-two block, else one thread adds the
    lanes in order through shared cells (reduce_header's ``serial_total``)."""
    s = r.shared
    printer.emit("if serial_total:  # a block of other than a power of two: one thread adds the lanes", r.span)
    printer.indent += 1
    printer.emit("for lane in lane_loop(block_x):", r.span)
    printer.emit(f"    {s}_cells[lane] = {s}_lanes[lane]", r.span)
    printer.emit("T.sync_threads()", r.span)
    printer.emit("for _ in T.Parallel(1):", r.span)
    printer.emit(f"    {s}_total[0] = {s}_cells[0]", r.span)
    printer.emit("    for x_cell in T.serial(1, block_x):", r.span)
    printer.emit(f"        {s}_total[0] = " + _COMBINE[r.op].format(a=f"{s}_total[0]", b=f"{s}_cells[x_cell]"), r.span)
    printer.emit("T.sync_threads()", r.span)
    printer.indent -= 1
    printer.emit("else:", r.span)
    printer.emit(f"    {REDUCTIONS[r.op].tile_reduce}({s}_lanes, {s}_total, dim=0)", r.span)


def _print_warp_reduce(r: BlockReduce, printer: StmtPrinter, scope) -> None:
    """A reduction per warp: a lane loop over (warp, lane) pairs computes the values, T.reduce
    combines each warp's along dim 1, a second lane loop runs what followed the tree."""
    dtype = scalar_name(r.dtype)

    def lanes(stmts, value=None):
        printer.emit("for lane_w, lane_l in lane_grid(block_x // 32, 32):", r.span)
        printer.indent += 1
        printer.emit("lane = lane_w * 32 + lane_l", r.span)
        printer.block(r.prefix)
        depth = 1
        if r.guard is not None:
            if value is not None:  # warps the guard skips contribute a value no one reads
                for name in (r.shared, r.pair_name) if r.pair_name else (r.shared,):
                    printer.emit(f"{name}_lanes[lane_w, lane_l] = {dtype_of(r.dtype, scope)}(0)", r.span)
            printer.emit(f"if {printer.expr.cond(r.guard)}:", r.guard.span)
            printer.indent += 1
            depth += 1
        printer.block(stmts)
        if value is not None:
            printer.emit(f"{r.shared}_lanes[lane_w, lane_l] = {printer.expr.coerce(value, dtype)}", r.span)
            if r.pair_value is not None:
                printer.emit(f"{r.pair_name}_lanes[lane_w, lane_l] = {printer.expr.coerce(r.pair_value, dtype)}",
                             r.span)
        printer.indent -= depth

    lanes(r.before, r.value)
    printer.emit(f"{REDUCTIONS[r.op].tile_reduce}({r.shared}_lanes, {r.shared}_total, dim=1)", r.span)
    if r.pair_value is not None:  # an online softmax: the denominators rescaled to the warp's maximum
        printer.emit("for lane_w, lane_l in lane_grid(block_x // 32, 32):", r.span)
        printer.indent += 1
        printer.block(r.rescale)
        printer.indent -= 1
        printer.emit(f"{REDUCTIONS['sum'].tile_reduce}({r.pair_name}_lanes, {r.pair_name}_total, dim=1)", r.span)
    lanes(r.after)


def _stores(st) -> bool:
    return any((isinstance(n, m.Assign) and not isinstance(n.target, m.Ref)) or
               (isinstance(n, m.Call) and n.kind == "atomic") for n in m.walk(st))


def print_lane_phase(r, printer: StmtPrinter) -> None:
    printer.emit("for lane in lane_loop(block_x):", r.span)
    printer.indent += 1
    printer.block(r.stmts)
    printer.indent -= 1


def print_uniform_phase(r: Phase, printer: StmtPrinter) -> None:
    """A phase of uniform code between reductions (the same in every thread): statements that
    store run once; declarations and scalar updates run at block level."""
    if not r.stmts:
        return
    stores = any(isinstance(n, m.Assign) and not isinstance(n.target, m.Ref) or
                 isinstance(n, m.Call) and n.kind == "atomic" for s in r.stmts for n in m.walk(s))
    if stores:
        printer.emit("for _ in T.Parallel(1):", r.span)
        printer.indent += 1
        printer.block(r.stmts)
        printer.indent -= 1
    else:
        printer.block(r.stmts)


# ---------------------------------------------------------------------------------------------
# Rows in registers (analysis.lift.row_registers)
# ---------------------------------------------------------------------------------------------


def row_header(kplan: KernelPlan, scope, add) -> None:
    """Factory lines of a kernel whose lanes' strided loops unroll when the launcher compiles the
    row length in: ``row_steps``, each lane's iterations (0: loops at run-time sizes)."""
    rows = kplan.rows
    step = ExprPrinter(scope)(rows.step)
    add(1, f"# with `{rows.limit}` compiled in (Signature.specialize), each lane's strided loops over a row "
           "unroll and")
    add(1, f"# the elements several phases read stay in registers, if a lane has at most {MAX_ROW_STEPS} of them")
    add(1, f'row_steps = (static_sizes["{rows.limit}"] + {step} - 1) // {step} if static_sizes else 0',
        scope.tag(rows.span))
    add(1, f"row_steps = row_steps if row_steps <= {MAX_ROW_STEPS} else 0")


def row_allocations(kplan: KernelPlan, scope, add) -> None:
    rows = kplan.rows
    lanes = "block_x // 32, 32" if rows is not None and rows.per_warp else "block_x"
    for c in rows.caches if rows else ():
        add(3, f"{c.name} = alloc_lanes(({lanes}, max(row_steps, 1)), {dtype_of(c.dtype, scope)})  "
               f"# the lane's elements of '{c.buffer}'", scope.tag(c.span))


def row_signature(rows) -> dict:
    """The signature entries that compile the row length in on GPUs, for rows up to
    ``MAX_ROW_LENGTH`` elements (one kernel per length; longer rows run at run-time sizes)."""
    return {"specialize": (rows.limit,),
            "specialize_when": f"lambda s: s[{rows.limit!r}] <= {MAX_ROW_LENGTH}",
            "specialize_note": (f"on GPUs, for rows of at most {MAX_ROW_LENGTH} elements, {rows.limit} is compiled as a "
                                "constant (one kernel\n    # per length): the lanes' strided loops unroll" +
                                (" and the row stays in registers" if rows.caches else "")),
            "static_pass_configs": (("tl.disable_safe_memory_legalize", True), KEEP_BINDS)}


# ---------------------------------------------------------------------------------------------
# Block scans (analysis.lift.scan)
# ---------------------------------------------------------------------------------------------


def _scans(regions):
    return [r for r in regions if isinstance(r, BlockScan)]


def scan_header(kplan: KernelPlan, scope, add) -> None:
    """The block size the scan was proved for, which the launch must use."""
    for r in _scans(kplan.regions):
        add(1, f'assert block_x == {r.threads}, "the CUDA scan over \'{r.shared}\' is proved for {r.threads} '
               'threads: launch it with that block size"', scope.tag(r.span))


def scan_allocations(regions, scope, add) -> None:
    for r in _scans(regions):
        add(3, f"{r.shared}_prefix = T.alloc_shared(({r.size + 1},), {dtype_of(r.dtype, scope)})  "
               f"# [k]: the sum of the segment's first k elements", scope.tag(r.span))


def print_block_scan(r: BlockScan, printer: StmtPrinter, scope) -> None:
    """The segment stored per lane, ``T.cumsum`` over it (a running sum on the CPU target, which
    has no ``T.cumsum``), the stores of the results per lane."""
    prefix, dtype = f"{r.shared}_prefix", dtype_of(r.dtype, scope)
    printer.emit("for _ in T.Parallel(1):", r.span)
    printer.emit(f"    {prefix}[0] = {dtype}(0)  # the empty prefix", r.span)
    printer.emit("for lane in T.Parallel(block_x):  # the segment's elements, one lane per CUDA thread", r.span)
    printer.indent += 1
    printer.block(r.load)
    printer.indent -= 1
    rounds = f"L{r.rounds.line}-{r.rounds.end_line}" if r.rounds.end_line != r.rounds.line else f"L{r.rounds.line}"
    printer.emit('if target == "cuda":', r.rounds)
    printer.emit(f"    T.cumsum({prefix}[1:{r.size + 1}], dim=0)  # the CUDA rounds over '{r.shared}' "
                 f"({rounds}) as one scan", r.rounds)
    printer.emit("else:  # TileLang's CPU target has no T.cumsum: a running sum", r.rounds)
    var = "k" if "k" not in scope.placements else "k_scan"
    printer.emit(f"    for {var} in T.serial(1, {r.size + 1}):", r.rounds)
    printer.emit(f"        {prefix}[{var}] = {prefix}[{var}] + {prefix}[{var} - 1]", r.rounds)
    printer.emit("for lane in T.Parallel(block_x):  # what the CUDA threads stored of the sums", r.span)
    printer.indent += 1
    printer.block(r.after)
    printer.indent -= 1


#: How each reduction's lanes treat their grid-stride slice, in the factory's comment.
_SLICE_WORDS = {"sum": "adds up", "max": "takes the maximum of", "min": "takes the minimum of"}


def free_grid_header(kplan: KernelPlan, scope, add) -> None:
    """Factory lines of a grid-stride reduction whose result does not depend on the grid
    (analysis.free_grid): at least ``fill_blocks`` blocks run, the stride following the grid."""
    g = kplan.free_grid
    atomics = " and ".join(g.atomics)
    targets = ", ".join(f"'{t}'" for t in g.targets)
    text = (f"the result does not depend on the grid (analysis.free_grid): each lane {_SLICE_WORDS[g.op]} "
            f"its grid-stride slice of the elements and {atomics} combines the blocks' totals into "
            f"{targets}, in an order CUDA leaves open. So it launches at least the blocks that fill the GPU "
            "at once (fill_blocks), and its lanes stride by the grid it launches")
    for line in textwrap.wrap(text, 96):
        add(1, f"# {line}")
    add(1, "grid_x = max(grid_x, fill_blocks(block_x))", scope.tag(g.span))
