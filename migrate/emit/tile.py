"""Print a lifted kernel (tile form): a map over the element domain, tiled.

Each TileLang block takes one tile of the domain and runs its elements as one ``T.Parallel``
loop; TileLang chooses which thread runs which element and vectorises. A tile that lies inside
the CUDA tail guard and the domain is a *full tile*: it is printed in a branch of its own, in
which TileLang proves the guards true and drops them (contiguous accesses become 128-bit loads);
the last tile keeps every guard.

Tile sizes and the thread count are factory parameters (``tile=``, ``threads=``) with a small
search space in the signature (``TUNE_SPACE``) for autotuning.
"""
from __future__ import annotations

import dataclasses

from ..analysis.lift.fold_lanes import LANE
from ..ir import model as m
from ..ir.loops import BlockReduce, BlockScan, KernelPlan, Phase, TileMap, UniformIf
from .printer import Line, StmtPrinter, dtype_of, scalar_name

DIMS = ("x", "y", "z")

#: Default tile per domain rank (slowest dimension first) and threads per tile: 4 elements per
#: thread along x, so a full tile's contiguous accesses vectorise to 128-bit.
DEFAULT_TILES = {1: (1024,), 2: (8, 128), 3: (1, 8, 128)}
#: Tiles of maps whose element runs a loop (a dot product, a convolution window) or moves a CUDA
#: vector type: one element per thread, as in the CUDA launch; four per thread ran 2-11x slower on
#: the H200 (2026-11-29), the elements' loops one after another in each thread instead of across
#: threads.
LOOPED_TILES = {1: (256,), 2: (2, 128), 3: (1, 2, 128)}
DEFAULT_THREADS = 256
#: 2-D maps with an access strided along x (a transpose) take square tiles.
SQUARE_TILE = (32, 32)
#: The autotuning search space of each rank (``tile`` and ``threads`` values).
TUNE_SPACE = {
    1: {"tile": [(512,), (1024,), (2048,), (4096,)], "threads": [128, 256, 512]},
    2: {"tile": [(4, 128), (8, 128), (16, 64), (32, 32), (4, 256)], "threads": [128, 256]},
    3: {"tile": [(1, 8, 128), (1, 4, 256), (2, 8, 64), (4, 8, 32)], "threads": [128, 256]},
}


def _opaque_calls(shim) -> list:
    """The helper functions that the GPU forms of the shim calls ``shim`` call: TileLang does
    not vectorise a loop that calls them (bitFeatures' __popc: 1.86x the CUDA's time with the
    full-tile branch, on the H200, 2026-11-29)."""
    from ..compat import cuda_math
    return cuda_math.gpu_call_helpers(shim)


def tile_factory(emitter, kplan: KernelPlan, callees, tdims, bdims) -> list[Line]:
    """The factory of a :class:`TileMap` plan; ``tdims``/``bdims`` are the thread and block
    dimensions the CUDA kernel indexes (its launch asserts)."""
    fn = kplan.fn
    (tile_map,) = kplan.regions
    assert isinstance(tile_map, TileMap)
    scope = emitter.scope_for(fn, kplan, tdims, bdims)
    dims = list(tile_map.dims)  # x first
    scope.global_vars = {d: f"g{d}" for d in dims}
    rank = len(dims)
    slow_first = list(reversed(dims))
    lines: list[Line] = []

    def add(indent, text, origin=""):
        lines.append(Line(indent, text, origin))

    nodes = [n for st in tile_map.stmts for n in m.walk(st)]
    looped = any(isinstance(n, (m.For, m.While, m.DoWhile)) for n in nodes)
    # an element that is a CUDA vector (float4, half2) is already a wide access: one per thread
    # keeps neighbouring threads on neighbouring vectors (axpy_float4: 1.11x with four)
    wide = any(isinstance(getattr(n, "type", None), m.Vector) for n in nodes)
    tile_default = SQUARE_TILE if tile_map.square else (LOOPED_TILES if looped or wide else DEFAULT_TILES)[rank]
    scope.keep_divisions = looped
    static = static_params(fn, tile_map, scope.single)
    scope.static_switch = bool(static)
    emitter.header(fn, "tile", tdims, bdims, scope, add,
                   tune=f", tile={tile_default!r}, threads={DEFAULT_THREADS}" + (", static_sizes=None" if static else ""),
                   summary=f"\n\n    A map over the {rank}-D element domain in tiles of `tile` "
                           f"({', '.join(slow_first)}) elements, `threads` threads each." +
                           (f"\n    static_sizes: the values of {', '.join(static)} when the launcher compiles "
                            "them as constants (GPUs)." if static else ""))
    if static:
        add(1, 'static = static_sizes is not None and target == "cuda"  # constant sizes: int32 index math')
    for d, size in sorted(tile_map.block_sizes.items()):
        add(1, f'assert block_{d} == {size}, "{fn.name} spells blockDim.{d} as {size}: launch it with '
               f'that block size"', scope.tag(fn.span))
    printer = StmtPrinter(scope, indent=0)
    extent = {}
    for d in dims:
        if d in tile_map.extents:
            extent[d] = printer.expr.coerce(tile_map.extents[d], "int32")
        else:
            extent[d] = f"extent_{d}"
            add(1, f"extent_{d} = grid_{d} * block_{d}  # one element per CUDA thread", scope.tag(fn.span))
    static = [extent[d] for d in slow_first]
    add(1, f"{', '.join(f'tile_{d}' for d in slow_first)}, = fit_tile(tile, "
           f"({', '.join(e if e.startswith('extent_') else 'None' for e in static)},))")
    add(1, f"threads = min(threads, {' * '.join(f'tile_{d}' for d in slow_first)})")
    params, rebinds = emitter.parameters(fn, scope, callees)
    add(1, "")
    add(1, "@T.prim_func")
    add(1, f"def {fn.name}({', '.join(params)}):")
    grid_args = ", ".join(f"T.ceildiv({extent[d]}, tile_{d})" for d in dims)
    block_vars = ", ".join(f"b{d}" for d in dims)
    if rank > 1:
        block_vars = f"({block_vars})"
    kernel_at = len(lines)
    add(2, f"with T.Kernel({grid_args}, threads=threads) as {block_vars}:", scope.tag(fn.span))
    emitter.kernel_preamble(fn, scope, rebinds, add)

    full = []
    for d in slow_first:
        ends = [extent[d]] + [printer.expr.coerce(b, "int32") for b in tile_map.bounds.get(d, ())]
        full += [f"b{d} * tile_{d} + tile_{d} <= {e}" for e in ends]
    loop = f"for {', '.join(f'i{d}' for d in slow_first)} in T.Parallel({', '.join(f'tile_{d}' for d in slow_first)}):"
    index = [f"g{d} = b{d} * tile_{d} + i{d}" for d in slow_first]
    store = _single_store(tile_map.stmts) if tile_map.square else None
    if store is not None:
        _staged_transpose(tile_map, store, scope, add, lines, index, extent)
        add(1, f"return {fn.name}")
        emitter.uses_shim = bool(scope.shim_calls)
        return lines
    # the loops of a tile: one over its elements, or over (element, lane) of the CUDA vectors
    # folded back (fold_lanes) and then one over the elements for the scalar statements left
    loops = []
    for stmts, lanes in ((tile_map.stmts, tile_map.lanes), (tile_map.rest, 0)):
        if not stmts:
            continue
        body = StmtPrinter(scope, indent=5)
        body.block(stmts)
        header = loop if not lanes else \
            f"for ix, {LANE} in T.Parallel(tile_x, {lanes}):  # {lanes} lanes: one {lanes * 32}-bit access per element"
        loops.append((header, body.lines))
    shim = sorted(scope.shim_calls | emitter.macro_shim_calls(callees))
    guard = f"if {' and '.join(f'g{d} < {extent[d]}' for d in slow_first)}:"

    def element_loops(depth: int, guarded: bool) -> None:
        """The element loops at ``depth``, their bodies (printed at depth 5) under the domain
        guard when ``guarded``."""
        for header, body_lines in loops:
            add(depth, header, scope.tag(tile_map.span))
            for text in index:
                add(depth + 1, text, scope.tag(tile_map.span))
            if guarded:
                add(depth + 1, guard, scope.tag(tile_map.span))
            shift = depth - 4 + guarded
            lines.extend(Line(ln.indent + shift, ln.text, ln.origin) for ln in body_lines)

    if _opaque_calls(shim):
        add(3, "# no full-tile branch: the CUDA helpers called here are functions TileLang cannot")
        add(3, "# vectorise, and one element per thread in turn keeps every access coalesced")
        element_loops(3, guarded=True)
    else:
        add(3, f"if {' and '.join(full)}:", scope.tag(tile_map.span))
        add(4, "# a full tile: TileLang drops the guards below and vectorises")
        element_loops(4, guarded=False)
        add(3, "else:", scope.tag(tile_map.span))
        add(4, "# the last tile: elements past the domain do nothing")
        element_loops(4, guarded=True)
    add(1, f"return {fn.name}")
    emitter.uses_shim = bool(shim)
    if shim:
        from .kernel import _needs_prelude
        if _needs_prelude(shim):
            names = ", ".join(repr(n) for n in shim)
            lines[kernel_at] = Line(2, f"with T.Kernel({grid_args}, threads=threads, "
                                       f"prelude=cuda_math.externs_for([{names}], target)) as {block_vars}:",
                                    scope.tag(fn.span))
    return lines


def static_params(fn: m.Function, tile_map: TileMap, single: set[str]) -> tuple[str, ...]:
    """The integer scalar parameters a looped map compiles as constants on GPUs: those its
    statements read, when it keeps divisions by them in cells (``Scope.keep_divisions``: the
    coordinates of a flat index ``idx / (P * Q) % K``). At run-time
    sizes TileLang cannot bound the cells, nor products of sizes, and widens every index they
    reach to int64 (its ConfigIndexBitwidth pass); at constant sizes the divisions are values it
    bounds, and the index math stays int32 as in the CUDA."""
    nodes = [n for st in tile_map.stmts + tile_map.rest for n in m.walk(st)]
    if not any(isinstance(n, (m.For, m.While, m.DoWhile)) for n in nodes):
        return ()
    ints = {p.name for p in fn.params if isinstance(p.type, m.Scalar) and p.type.dtype in ("int32", "int64")}

    def by_size(e) -> bool:  # divides by a size: a scalar parameter (not by a constant)
        return any(isinstance(d, m.Binary) and d.op in ("/", "%") and any(
            isinstance(r, m.Ref) and r.kind == "param" and r.name in ints for r in m.walk(d.rhs)) for d in m.walk(e))
    if not any(isinstance(n, m.VarDecl) and n.init is not None and n.name in single and by_size(n.init)
               and isinstance(n.type, m.Scalar) for n in nodes):
        return ()
    read = {n.name for n in nodes if isinstance(n, m.Ref) and n.kind == "param"}
    return tuple(p.name for p in fn.params if p.name in ints & read)


def _single_store(stmts):
    """The one store of a map body (outside loops), or None."""
    found = []

    def visit(node, in_loop):
        if isinstance(node, (m.For, m.While, m.DoWhile)):
            in_loop = True
        if isinstance(node, m.ExprStmt) and isinstance(node.expr, m.Assign) and isinstance(node.expr.target, m.Index):
            found.append((node, in_loop))
        for child in m.children(node):
            visit(child, in_loop)

    for st in stmts:
        visit(st, False)
    if len(found) != 1 or found[0][1] or found[0][0].expr.op != "=":
        return None
    return found[0][0]


def _swap(node, target, repl):
    if node is target:
        return repl
    return m.map_children(node, lambda c: _swap(c, target, repl))


def _staged_transpose(tile_map, store, scope, add, lines, index, extent) -> None:
    """A 2-D map whose one store is strided along x: every element's value is computed with x
    fastest (contiguous loads) into a shared tile, then stored with y fastest (contiguous stores)."""
    value = store.expr.value
    vtype = store.expr.target.type
    slot = m.Ref("vals[iy, ix]", "param", vtype, store.span)
    first = tuple(_swap(st, store, m.ExprStmt(m.Assign("=", slot, value, vtype, store.span), store.span))
                  for st in tile_map.stmts)
    second = tuple(_swap(st, value, slot) for st in tile_map.stmts)
    guard = " and ".join(f"g{d} < {extent[d]}" for d in ("y", "x"))
    add(3, f"vals = T.alloc_shared((tile_y, tile_x + 1), {dtype_of(vtype, scope)})  # +1: no bank conflicts "
           "when read along y", scope.tag(store.span))
    for comment, loop, stmts in (
            ("# the values, x fastest: the loads are contiguous", "for iy, ix in T.Parallel(tile_y, tile_x):", first),
            ("# the stores, y fastest: the stores are contiguous", "for ix, iy in T.Parallel(tile_x, tile_y):", second)):
        add(3, comment, scope.tag(tile_map.span))
        add(3, loop, scope.tag(tile_map.span))
        for text in index:
            add(4, text, scope.tag(tile_map.span))
        add(4, f"if {guard}:", scope.tag(tile_map.span))
        printer = StmtPrinter(scope, indent=5)
        printer.block(stmts)
        lines.extend(printer.lines)


def tune_space(kplan: KernelPlan) -> dict:
    (tile_map,) = kplan.regions
    return TUNE_SPACE[len(tile_map.dims)]


# ---------------------------------------------------------------------------------------------
# Block reductions (analysis.lift_reduce)
# ---------------------------------------------------------------------------------------------


def _reductions(regions):
    for r in regions:
        if isinstance(r, BlockReduce):
            yield r
        elif isinstance(r, UniformIf):
            yield from _reductions(r.then)
            yield from _reductions(r.other)


def reduce_header(kplan: KernelPlan, scope, add) -> None:
    """Factory lines of a kernel with lifted reductions: the block-size assumptions of the CUDA
    trees, and the lane loop and buffers for the target (``T.reduce`` combines fragments on
    GPUs and thread-local buffers on the CPU target)."""
    from .printer import ExprPrinter
    kinds = {r.warps for r in _reductions(kplan.regions)}
    if False in kinds:
        add(1, 'assert block_x & (block_x - 1) == 0, "the CUDA tree reduction assumes a power-of-two block"')
    if True in kinds:
        add(1, 'assert block_x % 32 == 0, "the CUDA warp shuffles assume whole warps"')
    for r in _reductions(kplan.regions):
        if r.size is not None:
            size = ExprPrinter(scope)(r.size)
            add(1, f'assert block_x == {size}, "the CUDA tree over \'{r.shared}\' spans {size} threads"',
                scope.tag(r.span))
    add(1, "# one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over")
    add(1, "# thread-local buffers on the CPU target (whose T.reduce takes local buffers only)")
    add(1, 'lane_loop = T.Parallel if target == "cuda" else T.serial')
    add(1, 'alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local')
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
        for name in (r.shared, r.pair_name) if r.pair_name else (r.shared,):
            add(3, f"{name}_lanes = alloc_lanes(({lanes},), {dtype})", scope.tag(r.span))
            add(3, f"{name}_total = alloc_lanes(({totals},), {dtype})", scope.tag(r.span))


def print_block_reduce(r: BlockReduce, printer: StmtPrinter, scope) -> None:
    if r.per_warp:
        _print_warp_reduce(r, printer, scope)
        return
    printer.emit("for lane in lane_loop(block_x):", r.span)
    printer.indent += 1
    printer.block(r.before)
    printer.emit(f"{r.shared}_lanes[lane] = {printer.expr.coerce(r.value, scalar_name(r.dtype))}", r.span)
    printer.indent -= 1
    printer.emit(f"T.reduce_{r.op}({r.shared}_lanes, {r.shared}_total, dim=0)", r.span)
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
    printer.emit(f"T.reduce_{r.op}({r.shared}_lanes, {r.shared}_total, dim=1)", r.span)
    if r.pair_value is not None:  # an online softmax: the denominators rescaled to the warp's maximum
        printer.emit("for lane_w, lane_l in lane_grid(block_x // 32, 32):", r.span)
        printer.indent += 1
        printer.block(r.rescale)
        printer.indent -= 1
        printer.emit(f"T.reduce_sum({r.pair_name}_lanes, {r.pair_name}_total, dim=1)", r.span)
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
# Rows in registers (analysis.row_registers)
# ---------------------------------------------------------------------------------------------


def row_header(kplan: KernelPlan, scope, add) -> None:
    """Factory lines of a kernel whose lanes' strided loops unroll when the launcher compiles the
    row length in: ``row_steps``, each lane's iterations (0: loops at run-time sizes)."""
    from ..analysis.lift.row_registers import MAX_ROW_STEPS
    from .printer import ExprPrinter
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


def print_row_loop(r, printer: StmtPrinter) -> None:
    """A lane's strided loop: unrolled over ``row_steps`` with its register reads and stores when
    the row length is compiled in, else the CUDA loop."""
    loop = r.loop
    printer.emit("if row_steps:", loop.span)
    printer.indent += 1
    _unrolled(r, printer)
    printer.indent -= 1
    printer.emit("else:", loop.span)
    printer.indent += 1
    printer.s_For(loop)
    printer.indent -= 1


def _unrolled(r, printer: StmtPrinter) -> None:
    from ..analysis.lift.row_registers import read_key
    from ..ir.visit import Transformer
    loop = r.loop
    step_var = f"{r.var}_step"
    start = printer.expr(loop.init.decls[0].init)
    stride = printer.expr.sub(loop.step.value, 12)
    cached, followed = dict(r.reads), dict(r.stores)

    def register(name, node):
        return m.Ref(f"{name}[{r.lanes}, {step_var}]", "param", node.type, node.span)

    class Registers(Transformer):
        def transform(self, node):
            # ``B[c] = v`` of an element kept in registers: ``B_regs[...] = v; B[c] = B_regs[...]``
            if isinstance(node, m.ExprStmt) and isinstance(node.expr, m.Assign) and node.expr.op == "=" \
                    and isinstance(node.expr.target, m.Index) and read_key(node.expr.target, r.var) in followed:
                a = node.expr
                reg = register(followed[read_key(a.target, r.var)], a.target)
                return m.Block((m.ExprStmt(dataclasses.replace(a, target=reg, value=self.transform(a.value)), node.span),
                                m.ExprStmt(dataclasses.replace(a, value=reg), node.span)), node.span)
            return super().transform(node)

        def leave_Index(self, node):
            name = cached.get(read_key(node, r.var))
            return node if name is None else register(name, node)

    body = loop.body.stmts if isinstance(loop.body, m.Block) else (loop.body,)
    printer.emit(f"for {step_var} in T.unroll(row_steps):", loop.span)
    printer.indent += 1
    printer.emit(f"{r.var} = {start} + {step_var} * {stride}", loop.span)
    printer.emit(f"if {printer.expr.cond(loop.cond)}:", loop.span)
    printer.indent += 1
    for name, read in r.loads:
        printer.emit(f"{register(name, read).name} = {printer.expr(read)}", read.span)
    body = tuple(Registers().transform(st) for st in body)
    printer.block(body)
    printer.indent -= 2


def row_signature(rows) -> dict:
    """The signature entries that compile the row length in on GPUs, for rows up to
    ``MAX_ROW_LENGTH`` elements (one kernel per length; longer rows run at run-time sizes)."""
    from ..analysis.lift.row_registers import MAX_ROW_LENGTH
    return {"specialize": (rows.limit,),
            "specialize_when": f"lambda s: s[{rows.limit!r}] <= {MAX_ROW_LENGTH}",
            "specialize_note": (f"on GPUs, for rows of at most {MAX_ROW_LENGTH} elements, {rows.limit} is compiled as a "
                                "constant (one kernel\n    # per length): the lanes' strided loops unroll" +
                                (" and the row stays in registers" if rows.caches else "")),
            "static_pass_configs": (("tl.disable_safe_memory_legalize", True),)}


# ---------------------------------------------------------------------------------------------
# Block scans (analysis.lift_scan)
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
    import textwrap
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
