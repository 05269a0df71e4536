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

import re

from ..ir import model as m
from ..ir.exprs import conjuncts
from ..ir.loops import LANE, KernelPlan, TileMap
from .printer import Line, StmtPrinter, dtype_of, needs_prelude
from .views import declare_views

#: Default tile per domain rank (slowest dimension first) and threads per tile: 4 elements per
#: thread along x, so a full tile's contiguous accesses vectorise to 128-bit.
DEFAULT_TILES = {1: (1024,), 2: (8, 128), 3: (1, 8, 128)}
#: Tiles of maps whose element runs a loop (a dot product, a convolution window), moves a CUDA
#: vector type or has no access that moves by one element along x (TileMap.narrow: nothing to
#: vectorise): one element per thread, as in the CUDA launch; four per thread ran 2-11x slower on
#: the H200 (2026-11-29), the elements' loops one after another in each thread instead of across
#: threads, and distort's guarded bilinear reads 1.34x on an H100 (40 registers, not 30, each
#: thread's four elements kept apart by their guards).
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


def scalar_element(tile_map: TileMap) -> bool:
    """Whether TileLang 0.1.15 runs the map's element as scalar code even in a full tile: inside
    the CUDA tail guard (which a full tile drops), a branch (``if``, ``switch``) or a local
    assigned after its declaration (a ``T.alloc_var``). TileLang then vectorises none of its
    accesses and gives each thread its elements one after another, ``threadIdx.x`` apart: several
    elements a thread gain nothing and cost registers, and nvcc, given the unrolled copies, kept
    less of each: zeropoint's ``zero_point`` at four a thread took 64 registers against the CUDA's
    38, and 6 double divisions and 3.75 loads an element against 3 and 2 (1.14x the CUDA's time on
    an H100); at one a thread, 38, 3 and 2. Such an element takes one a thread, as the CUDA ran it
    (``LOOPED_TILES``). A branch of values (``c ? a : b``) is left to the default tile."""
    bounds = {m.dump(b) for bs in tile_map.bounds.values() for b in bs}

    def guard(s) -> bool:  # if (i < n): each conjunct a tail bound
        return isinstance(s, m.If) and s.other is None and bool(bounds) and all(
            isinstance(c, m.Binary) and (c.op == "<" and m.dump(c.rhs) in bounds or c.op == ">" and m.dump(c.lhs) in bounds)
            for c in conjuncts(s.cond))

    stmts = list(tile_map.stmts)
    while True:
        rest = [s for s in stmts if not isinstance(s, (m.DeclStmt, m.Empty))]
        if len(rest) != 1 or not guard(rest[0]):
            break
        then = rest[0].then
        stmts = [s for s in stmts if s is not rest[0]] + list(then.stmts if isinstance(then, m.Block) else (then,))
    for n in (n for s in stmts for n in m.walk(s)):
        if isinstance(n, (m.If, m.Switch)):
            return True
        if isinstance(n, m.Assign) and isinstance(n.target, m.Ref) and n.target.kind == "local":
            return True
        if isinstance(n, m.Unary) and n.op in ("++", "--") and isinstance(n.operand, m.Ref) and n.operand.kind == "local":
            return True
        if isinstance(n, m.VarDecl) and n.init is None and isinstance(n.type, m.Scalar):
            return True
    return False


def tile_factory(printer, kplan: KernelPlan, callees, tdims, bdims) -> list[Line]:
    """The factory of a :class:`TileMap` plan; ``tdims``/``bdims`` are the thread and block
    dimensions the CUDA kernel indexes (its launch asserts)."""
    fn = kplan.fn
    (tile_map,) = kplan.regions
    assert isinstance(tile_map, TileMap)
    scope = printer.scope_for(fn, kplan, tdims, bdims)
    dims = list(tile_map.dims)  # x first
    scope.global_vars = {d: f"g{d}" for d in dims}
    rank = len(dims)
    slow_first = list(reversed(dims))
    lines: list[Line] = []

    def add(indent, text, origin=""):
        lines.append(Line(indent, text, origin))

    nodes = [n for st in tile_map.stmts for n in m.walk(st)]
    # a loop in a device function the element calls counts too (cooling's 20-step convergence
    # loop inside its rate function: four elements a thread took 106 registers)
    looped = any(isinstance(n, (m.For, m.While, m.DoWhile))
                 for n in nodes + [n for c in callees if c.body is not None for n in m.walk(c.body)])
    # an element that is a CUDA vector (float4, half2) is already a wide access: one per thread
    # keeps neighbouring threads on neighbouring vectors (axpy_float4: 1.11x with four)
    wide = any(isinstance(getattr(n, "type", None), m.Vector) for n in nodes)
    # (a map that runs y-fastest keeps its tile: nms's bitmap, a branching element, ran 0.56x its
    # CUDA on an H100 with (128, 8))
    scalar = not tile_map.lanes and not tile_map.y_major and scalar_element(tile_map)
    tile_default = SQUARE_TILE if tile_map.square else \
        (LOOPED_TILES if looped or wide or scalar or tile_map.narrow else DEFAULT_TILES)[rank]
    if tile_map.y_major:  # elements y-fastest: the long side of the tile is y
        tile_default = tuple(reversed(tile_default))
    scope.keep_divisions = looped
    static = tile_map.static
    scope.static_switch = bool(static)
    printer.header(fn, "tile", tdims, bdims, scope, add,
                   tune=f", tile={tile_default!r}, threads={DEFAULT_THREADS}" + ("" if tile_map.square else ", fill=True") +
                        (", static_sizes=None" if static else ""),
                   summary=f"\n\n    A map over the {rank}-D element domain in tiles of `tile` "
                           f"({', '.join(slow_first)}) elements, `threads` threads each." +
                           (f"\n    static_sizes: the values of {', '.join(static)} when the launcher compiles "
                            "them as constants (GPUs)." if static else ""))
    if static:
        add(1, 'static = static_sizes is not None and target == "cuda"  # constant sizes: int32 index math')
    for d, size in sorted(tile_map.block_sizes.items()):
        add(1, f'assert block_{d} == {size}, "{fn.name} spells blockDim.{d} as {size}: launch it with '
               f'that block size"', scope.tag(fn.span))
    e0 = StmtPrinter(scope, indent=0).expr
    extent = {}
    for d in dims:
        if d in tile_map.extents:
            extent[d] = e0.coerce(tile_map.extents[d], "int32")
        else:
            extent[d] = f"extent_{d}"
            add(1, f"extent_{d} = grid_{d} * block_{d}  # one element per CUDA thread", scope.tag(fn.span))
    static = [extent[d] for d in slow_first]
    # fill: the default tile shrinks, down to one element per thread, where its grid would not
    # fill the GPU (runtime.tilelang_support.fit_tile; not where the extent is a run-time value, a
    # grid-stride loop's n); a tile asked for (coverage runs, fill=False) is only fitted. The
    # square tile of a staged transpose stays square.
    add(1, f"{', '.join(f'tile_{d}' for d in slow_first)}, = fit_tile(tile, "
           f"({', '.join(e if e.startswith('extent_') else 'None' for e in static)},)"
           + ("" if tile_map.square else ", threads if fill else 0")
           + (", fast=0" if tile_map.y_major and not tile_map.square else "") + ")")
    add(1, f"threads = min(threads, {' * '.join(f'tile_{d}' for d in slow_first)})")
    params, rebinds = printer.parameters(fn, scope, callees)
    add(1, "")
    add(1, "@T.prim_func")
    add(1, f"def {fn.name}({', '.join(params)}):")
    grid_args = ", ".join(f"T.ceildiv({extent[d]}, tile_{d})" for d in dims)
    block_vars = ", ".join(f"b{d}" for d in dims)
    if rank > 1:
        block_vars = f"({block_vars})"
    # a carried scalar the grid's extent reads (``idx < n / 4`` with a size_t n) is cast back
    # before the kernel, where the extent is computed, not only inside it
    early = [r for r in rebinds if re.search(rf"(?<![\w.]){re.escape(r.split(' = ', 1)[0])}\b", grid_args)]
    for text in early:
        add(2, text, scope.tag(fn.span))
    kernel_at = len(lines)
    add(2, f"with T.Kernel({grid_args}, threads=threads) as {block_vars}:", scope.tag(fn.span))
    printer.kernel_preamble(fn, scope, [r for r in rebinds if r not in early], add)
    # a buffer parameter's memory read as another type (analysis.prepare.pointer_views): its view
    declare_views([vp.decl for vp in kplan.vars.values() if vp.placement == "shared" and isinstance(vp.decl.init, m.Ref)
                   and vp.decl.init.kind == "param"], scope, add)

    full = []
    for d in slow_first:
        ends = [extent[d]] + [e0.coerce(b, "int32") for b in tile_map.bounds.get(d, ())]
        full += [f"b{d} * tile_{d} + tile_{d} <= {e}" for e in ends]
    # TileLang gives a T.Parallel's last index to neighbouring threads: x, or y where the stores
    # follow y (TileMap.y_major)
    order = ["x", "y"] if tile_map.y_major else slow_first
    loop = f"for {', '.join(f'i{d}' for d in order)} in T.Parallel({', '.join(f'tile_{d}' for d in order)}):"
    index = [f"g{d} = b{d} * tile_{d} + i{d}" for d in slow_first]
    store = _single_store(tile_map.stmts) if tile_map.square else None
    if store is not None:
        _staged_transpose(tile_map, store, scope, add, lines, index, extent)
        add(1, f"return {fn.name}")
        shim = sorted(scope.shim_calls | printer.macro_shim_calls(callees))
        _prelude(lines, kernel_at, shim, grid_args, block_vars, scope, fn)
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
    shim = sorted(scope.shim_calls | printer.macro_shim_calls(callees))
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
    _prelude(lines, kernel_at, shim, grid_args, block_vars, scope, fn)
    return lines


def _prelude(lines, kernel_at, shim, grid_args, block_vars, scope, fn) -> None:
    """The kernel line with the C helpers of the CUDA functions ``shim`` it calls, where any
    needs one (``__fdividef`` on the CPU's C target)."""
    if shim and needs_prelude(shim):
        names = ", ".join(repr(n) for n in shim)
        lines[kernel_at] = Line(2, f"with T.Kernel({grid_args}, threads=threads, "
                                   f"prelude=cuda_math.externs_for([{names}], target)) as {block_vars}:",
                                scope.tag(fn.span))


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
