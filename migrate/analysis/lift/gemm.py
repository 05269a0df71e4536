"""Recognise a GEMM in a 2-D map and lift it to a tiled, pipelined TileLang GEMM.

A map (see :mod:`.map`) whose element ``(row, col)`` runs

    acc = 0;  for (k = 0; k < K; ++k) acc += X(A[ia]) * Y(B[ib]);  <stores using acc>

with ``ia`` affine in ``row`` and ``k`` and ``ib`` affine in ``k`` and ``col`` (row-major or
transposed, uniform leading dimensions and offsets) computes one element of ``C = A·B``. The
tile form stages ``block_M × block_K`` and ``block_K × block_N`` tiles of A and B in shared
memory (zero-padded past the bounds the CUDA code checks) inside a ``T.Pipelined`` loop over K,
accumulates in a register fragment, and runs the CUDA statements after the loop once per element
with ``acc`` taken from the fragment.

By default the accumulation is explicit multiply-adds in ascending k, the order of the CUDA loop,
so fp32 stays fp32. With ``allow_tf32`` (fp32 inputs) or for half-precision inputs the factory
can use ``T.gemm`` on tensor cores instead; fp32 inputs then compute in tf32, which is reported
as its own tolerance class.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import factors, strip_casts
from ...ir.loops import GemmLayout, GemmOperand, GemmPlan, KLoop, TileMap, TileView
from ..facts.affine import linear_form, same_value
from .base import NotGemm


def _product(stmt, acc: str):
    """(X, Y) when ``stmt`` is ``acc += X * Y``, ``acc = acc + X * Y`` or ``acc = fmaf(X, Y, acc)``."""
    if not isinstance(stmt, m.ExprStmt) or not isinstance(stmt.expr, m.Assign):
        return None
    a = stmt.expr
    if not (isinstance(a.target, m.Ref) and a.target.name == acc):
        return None
    v = strip_casts(a.value)
    if a.op == "+=" and isinstance(v, m.Binary) and v.op == "*":
        return v.lhs, v.rhs
    if a.op == "=" and isinstance(v, m.Binary) and v.op == "+":
        lhs, rhs = strip_casts(v.lhs), strip_casts(v.rhs)
        if isinstance(lhs, m.Ref) and lhs.name == acc and isinstance(rhs, m.Binary) and rhs.op == "*":
            return rhs.lhs, rhs.rhs
    if a.op == "=" and isinstance(v, m.Call) and v.callee in ("fmaf", "fma", "__fmaf_rn") and len(v.args) == 3:
        last = strip_casts(v.args[2])
        if isinstance(last, m.Ref) and last.name == acc:
            return v.args[0], v.args[1]
    return None


#: Value conversions between floating-point formats (the half section of the catalog files them
#: under math); a factor may be one of them applied to the staged value.
_CONVERSIONS = frozenset({"__half2float", "__bfloat162float", "__float2half", "__float2half_rn",
                          "__float2bfloat16", "__float2bfloat16_rn", "__low2float", "__high2float"})


def _is_conversion(node) -> bool:
    return isinstance(node, m.Call) and len(node.args) == 1 and (
        node.kind == "conversion" or node.callee in _CONVERSIONS)


def _split_factor(factor):
    """(staged part, plain) of a product factor: conversions and casts are peeled off."""
    node = factor
    while True:
        if isinstance(node, m.Cast):
            node = node.operand
        elif _is_conversion(node):
            node = node.args[0]
        else:
            break
    loads = [n for n in m.walk(node) if isinstance(n, m.Index)]
    plain = isinstance(node, m.Index) or (
        isinstance(node, m.Ternary) and isinstance(strip_casts(node.then), m.Index) and _is_zero(node.other))
    return node, plain and len(loads) == 1


def _is_zero(e) -> bool:
    e = strip_casts(e)
    if _is_conversion(e):
        return _is_zero(e.args[0])
    return (isinstance(e, m.FloatLit) and e.value == 0.0) or (isinstance(e, m.IntLit) and e.value == 0)


def _k_loop(loop) -> tuple[str, m.Expr, int] | None:
    """(var, bound, step) of ``for (int v = 0; v < bound; v++ / v += step)``."""
    if not isinstance(loop, m.For) or not isinstance(loop.init, m.DeclStmt) or len(loop.init.decls) != 1:
        return None
    d = loop.init.decls[0]
    if d.init is None or not _is_zero(d.init):
        return None
    cond = strip_casts(loop.cond) if loop.cond is not None else None
    if not (isinstance(cond, m.Binary) and cond.op == "<" and isinstance(strip_casts(cond.lhs), m.Ref)
            and strip_casts(cond.lhs).name == d.name):
        return None
    st = loop.step
    if isinstance(st, m.Unary) and st.op == "++":
        step = 1
    elif isinstance(st, m.Assign) and st.op == "+=" and isinstance(strip_casts(st.value), m.IntLit):
        step = strip_casts(st.value).value
    else:
        return None
    return d.name, cond.rhs, step


def _names_in(e) -> set[str]:
    return {n.name for n in m.walk(e) if isinstance(n, m.Ref) and n.kind == "local"}


def _dims_in(e) -> set[str]:
    return {n.dim for n in m.walk(e) if isinstance(n, m.Builtin) and n.var == "globalIdx"}


def plan_gemm(tile: TileMap) -> GemmPlan:
    """The GEMM in a lifted 2-D (or batched 3-D) map, or :class:`NotGemm` with the reason."""
    if tuple(tile.dims) not in (("x", "y"), ("x", "y", "z")) or tile.extents:
        raise NotGemm("not a 2-D map over the launch grid")
    stmts = [st for st in tile.stmts if not isinstance(st, m.Empty)]
    names: dict[str, str] = {}
    prologue = []
    while stmts and isinstance(stmts[0], m.DeclStmt):
        decls = stmts[0].decls
        if not all(isinstance(strip_casts(d.init), m.Builtin) and strip_casts(d.init).var == "globalIdx"
                   for d in decls if d.init is not None) or any(d.init is None for d in decls):
            break
        for d in decls:
            names[d.name] = {"x": "col", "y": "row", "z": "batch"}[strip_casts(d.init).dim]
        prologue.append(stmts.pop(0))
    guard, guard_span, loop_guarded = None, tile.span, False
    if len(stmts) == 1 and isinstance(stmts[0], m.If) and stmts[0].other is None:
        guard, guard_span, loop_guarded = stmts[0].cond, stmts[0].span, True
        stmts = [st for st in (stmts[0].then.stmts if isinstance(stmts[0].then, m.Block) else (stmts[0].then,))
                 if not isinstance(st, m.Empty)]
    if len(stmts) < 3 or not isinstance(stmts[0], m.DeclStmt) or len(stmts[0].decls) != 1:
        raise NotGemm("no accumulator declared before a loop")
    acc_decl = stmts[0].decls[0]
    if acc_decl.init is None or not _is_zero(acc_decl.init) or not isinstance(acc_decl.type, m.Scalar):
        raise NotGemm("the accumulator does not start at zero")
    setup = []
    i = 1
    while i < len(stmts) and isinstance(stmts[i], m.DeclStmt):
        for d in stmts[i].decls:
            if d.init is None or _names_in(d.init) or _dims_in(d.init) or any(
                    isinstance(n, m.Index) or (isinstance(n, m.Call) and n.kind not in ("math", "conversion"))
                    for n in m.walk(d.init)):
                raise NotGemm(f"'{d.name}' between the accumulator and the loop is not uniform")
        setup.append(stmts[i])
        i += 1
    if i >= len(stmts):
        raise NotGemm("no k loop after the accumulator")
    loop = stmts[i]
    outer = _k_loop(loop)
    if outer is None:
        raise NotGemm("the loop after the accumulator is not a counted loop from 0")
    body = [st for st in (loop.body.stmts if isinstance(loop.body, m.Block) else (loop.body,))
            if not isinstance(st, m.Empty)]
    if len(body) == 1 and _product(body[0], acc_decl.name):
        if outer[2] != 1:
            raise NotGemm("a single k loop must step by one")
        kloop, mac = KLoop(outer[0], outer[1], 1), body[0]
    else:
        inner_loops = [st for st in body if isinstance(st, m.For)]
        rest = [st for st in body if not isinstance(st, m.For)]
        if len(inner_loops) != 1 or any(not isinstance(st, m.DeclStmt) for st in rest):
            raise NotGemm("the k loop body is not acc += x * y (or one inner loop over a tile)")
        inner = _k_loop(inner_loops[0])
        if inner is None or inner[2] != 1 or not isinstance(strip_casts(inner[1]), m.IntLit):
            raise NotGemm("the inner k loop does not run over a constant tile")
        ibody = [st for st in (inner_loops[0].body.stmts if isinstance(inner_loops[0].body, m.Block)
                               else (inner_loops[0].body,)) if not isinstance(st, m.Empty)]
        if len(ibody) != 1 or not _product(ibody[0], acc_decl.name):
            raise NotGemm("the inner k loop body is not acc += x * y")
        used = _names_in(ibody[0])
        if any(d.name in used for st in rest for d in st.decls):
            raise NotGemm("the tile loop computes values the inner loop uses")
        kloop = KLoop(outer[0], outer[1], outer[2], inner[0], strip_casts(inner[1]).value)
        mac = ibody[0]
    setup_names = {d.name for st in setup for d in st.decls}
    if _names_in(kloop.bound) - setup_names or _dims_in(kloop.bound):
        raise NotGemm("the k bound is not uniform")
    x, y = _product(mac, acc_decl.name)
    k_names = {kloop.var} | ({kloop.inner} if kloop.inner else set())
    row_names = {n for n, v in names.items() if v == "row"}
    col_names = {n for n, v in names.items() if v == "col"}
    batch_names = {n for n, v in names.items() if v == "batch"}

    def side(e):
        used, dims = _names_in(e), _dims_in(e)
        other = used - k_names - row_names - col_names - batch_names - setup_names
        if other:
            raise NotGemm(f"a factor depends on '{sorted(other)[0]}'")
        return bool(used & row_names or "y" in dims), bool(used & col_names or "x" in dims)

    rx, cx = side(x)
    ry, cy = side(y)
    if cx and not rx and ry and not cy:
        x, y = y, x
    elif not (rx and not cx and cy and not ry):
        raise NotGemm("the factors are not A[row, k] and B[k, col]")
    operands = []
    kvar = kloop.inner or kloop.var
    for factor in (x, y):
        staged, plain = _split_factor(factor)
        loads = [n for n in m.walk(staged) if isinstance(n, m.Index)]
        contiguous = False
        if len(loads) == 1:
            form = linear_form(loads[0].index)
            if form is not None:
                contiguous = any(isinstance(a, m.Ref) and a.name == kvar and c == 1
                                 for c, a in form[0].values())
        operands.append(GemmOperand(staged, factor, staged.type, contiguous, plain))
    epilogue = tuple(stmts[i + 1:])
    for st in epilogue:
        if k_names & _names_in(st):
            raise NotGemm("a k loop variable is used after the loop")
    return GemmPlan(tile, acc_decl.name, acc_decl.type, kloop, operands[0], operands[1],
                    tuple(sorted(row_names)), tuple(sorted(col_names)), tuple(prologue), tuple(setup),
                    epilogue, guard, loop_guarded, loop.span, guard_span, "z" in tile.dims,
                    tuple(sorted(batch_names)))


# -- staging by whole tiles (T.copy) -----------------------------------------------------------


def _k_composite(form_terms: dict, k: KLoop) -> bool:
    """Whether terms are exactly the flat k index of the CUDA loops (coefficient 1)."""
    coefs = {}
    for c, a in form_terms.values():
        a = strip_casts(a)
        if not isinstance(a, m.Ref):
            return False
        coefs[a.name] = c
    if k.inner is None:
        return coefs == {k.var: 1}
    return set(coefs) == {k.var, k.inner} and coefs[k.inner] == 1 and coefs[k.var] * k.step == k.size


def _is_index_of(e, names: set[str], dim: str) -> bool:
    e = strip_casts(e)
    return (isinstance(e, m.Ref) and e.name in names) or (
        isinstance(e, m.Builtin) and e.var == "globalIdx" and e.dim == dim)


def tile_view(g: "GemmPlan", operand: GemmOperand, which: str) -> TileView | None:
    """The whole-tile view of an operand (``which`` is "a" or "b"), or None when its reads are
    not exactly a zero-padded 2-D array (then it is staged element by element)."""
    from ..facts.affine import linear_form, same_value
    staged = operand.staged
    conds = []
    if isinstance(staged, m.Ternary):
        load = strip_casts(staged.then)
        c = staged.cond
        while isinstance(strip_casts(c), m.Binary) and strip_casts(c).op == "&&":
            conds.append(strip_casts(c).rhs)
            c = strip_casts(c).lhs
        conds.append(c)
    else:
        load = staged
    if not isinstance(load, m.Index):
        return None
    base = strip_casts(load.base)
    if not isinstance(base, m.Ref) or base.kind != "param":
        return None
    form = linear_form(load.index)
    if form is None or form[1] != 0:
        return None
    names = set(g.row_names if which == "a" else g.col_names)
    dim = "y" if which == "a" else "x"
    k_names = {g.k.var} | ({g.k.inner} if g.k.inner else set())
    other_term = None  # (coefficient expr or 1) of the row (A) / col (B) index
    k_terms = {}
    k_scaled = None  # (k composite factor, leading dimension) when k is multiplied (B row-major)
    batch_stride = None  # the batch index's coefficient (a batched GEMM's matrix size)
    batch = set(g.batch_names)
    for key, (c, atom) in form[0].items():
        a = strip_casts(atom)
        if _is_index_of(a, names, dim):
            if other_term is not None:
                return None
            other_term = c
        elif isinstance(a, m.Ref) and a.name in k_names:
            k_terms[key] = (c, a)
        elif isinstance(a, m.Binary) and a.op == "*" and c == 1:
            parts = factors(a)
            idx = [f for f in parts if _is_index_of(f, names, dim)]
            kf = [f for f in parts if _names_in(f) & k_names]
            bidx = [f for f in parts if _is_index_of(f, batch, "z")] if g.batched else []
            rest = [f for f in parts if not (_is_index_of(f, names, dim) or _names_in(f) & k_names
                                               or any(f is b for b in bidx))]
            if any(_names_in(f) or _dims_in(f) for f in rest) or not rest:
                return None
            ld = rest[0]
            for f in rest[1:]:
                ld = m.Binary("*", ld, f, ld.type, ld.span)
            if len(bidx) == 1 and not idx and not kf and batch_stride is None:
                batch_stride = ld
            elif bidx:
                return None
            elif len(idx) == 1 and not kf and other_term is None:
                other_term = ld
            elif len(kf) == 1 and not idx and k_scaled is None:
                inner = linear_form(kf[0])
                if inner is None or inner[1] != 0 or not _k_composite(inner[0], g.k):
                    return None
                k_scaled = ld
            else:
                return None
        else:
            return None
    if other_term is None:
        return None
    if k_scaled is None and not _k_composite(k_terms, g.k):
        return None
    # bounds: the CUDA conditions (ternary) or the guard and the loop bound
    bound_other = bound_k = None
    for c in conds:
        c = strip_casts(c)
        if not (isinstance(c, m.Binary) and c.op == "<"):
            return None
        lhs = linear_form(c.lhs)
        if lhs is not None and lhs[1] == 0 and len(lhs[0]) == 1 and _is_index_of(
                next(iter(lhs[0].values()))[1], names, dim) and next(iter(lhs[0].values()))[0] == 1:
            bound_other = c.rhs
        elif lhs is not None and lhs[1] == 0 and _k_composite(lhs[0], g.k):
            bound_k = c.rhs
        else:
            return None
    if not conds:
        bounds = g.tile.bounds.get(dim, ()) if g.loop_guarded else ()
        if len(bounds) != 1 or g.k.inner is not None:
            return None
        bound_other, bound_k = bounds[0], g.k.bound
    if bound_other is None or bound_k is None:
        return None
    def batched(rows, cols):
        """Whether the batch term (if any) steps over whole (rows, cols) matrices."""
        if batch_stride is None:
            return True
        return same_value(batch_stride, m.Binary("*", rows, cols, rows.type, rows.span))

    if k_scaled is not None:  # B[k * ld + col]: a (K, N) array
        if other_term != 1 or not same_value(k_scaled, bound_other) or not batched(bound_k, bound_other):
            return None
        return TileView(base.name, bound_k, bound_other, True, batch_stride is not None)
    if isinstance(other_term, int) and other_term == 1:
        return None  # k-major A or n-major... not a row-major 2-D array of this operand
    ld = other_term if not isinstance(other_term, int) else m.IntLit(other_term, str(other_term),
                                                                      m.Scalar("int32"), load.span)
    if not same_value(ld, bound_k) or not batched(bound_other, ld):
        return None
    return TileView(base.name, bound_other, ld, False, batch_stride is not None)


# -- the layout: which operands are copied whole, which sizes are compiled in, which tensor cores --

#: half-precision operand types (T.gemm with fp32 accumulation)
HALVES = ("float16", "bfloat16")

#: Tiles of a GEMM compiled for constant sizes on tensor cores (TMA copies, warpgroup MMA), by
#: operand type: the fastest of ``bench/gemm_probe.py``'s configurations on an H200 (2026-11-29:
#: fp16 128x256x64 in 3 stages 86 % of cuBLAS; float32 with k-major B on tf32 wgmma 128x256x32
#: 92 %; float32 with (K, N) B on mma.sync 128x128x32 53 %). (block_N, block_K, num_stages)
FAST_TILES = {"half": (256, 64, 3), "tf32_wgmma": (256, 32, 3), "tf32": (256, 32, 3)}


def _dtype(t) -> str | None:
    return t.dtype if isinstance(t, m.Scalar) else None


def layout(fn: m.Function, g: GemmPlan, allow_tf32: bool) -> GemmLayout:
    """How ``g`` is staged and multiplied: whole-tile copies of 2-D views (cp.async for float32
    operands at run-time sizes, TMA at constant ones; half-precision tiles at run-time sizes are
    staged element by element, which measured faster on the H200 than 4-byte copies: 129 vs 73
    TFLOP/s at 4096^3, 2026-11-29), the sizes compiled in, the tensor-core path and its tiles.
    Its ``setup`` is ``g``'s; :func:`finish_layout` settles it once the buffers are shaped."""
    a_dtype, b_dtype = _dtype(g.a.dtype), _dtype(g.b.dtype)
    halves = a_dtype in HALVES and b_dtype in HALVES
    gemm_ok = g.a.plain and g.b.plain and a_dtype == b_dtype and a_dtype in ("float32",) + HALVES
    va, vb = operand_views(g)
    static = static_params(fn, g, allow_tf32)
    if not static:  # batched views are copied by TMA only (static sizes)
        va, vb = [None if v is not None and v.batched else v for v in (va, vb)]
    b_nt = vb is not None and not vb.k_first  # B stored n-major: B[col * ldb + k]
    both_views = va is not None and vb is not None
    # the k tile is free when both operands are copied whole and the CUDA tiles cover k up to
    # the views' bound (past it the views read zeros); else it is the CUDA code's tile
    free_k = g.k.inner is None or (both_views and covers_k(g, va.cols))
    fast_kind = None
    if gemm_ok and static:
        fast_kind = "half" if halves else ("tf32_wgmma" if b_nt else (None if vb.batched else "tf32"))
    fp32 = a_dtype == "float32" and b_dtype == "float32"
    return GemmLayout(va, vb, static, fast_kind, FAST_TILES[fast_kind] if fast_kind else None, free_k, gemm_ok,
                      gemm_ok and (halves or allow_tf32), halves, allow_tf32 and fp32 and g.a.plain and g.b.plain,
                      g.setup)


def finish_layout(g: GemmPlan) -> GemmPlan:
    """``g`` (shaped) with its layout's setup: without the local that only counted the CUDA's k
    tiles when the k tile is free (the pipelined loop counts its own)."""
    lay = g.layout
    setup = _without_k_count(g) if g.k.inner is not None and lay.free_k else g.setup
    return dataclasses.replace(g, layout=dataclasses.replace(lay, setup=setup))


def operand_views(g: GemmPlan):
    """The whole-tile views of A and B (None where an operand is staged element by element)."""
    va = tile_view(g, g.a, "a")
    return (va if va is not None and not va.k_first else None), tile_view(g, g.b, "b")


def static_params(fn: m.Function, g: GemmPlan, allow_tf32: bool) -> tuple[str, ...]:
    """The scalars a GPU launch compiles as constants: the sizes of a GEMM on tensor cores whose
    operands are both views (the exact float32 path gains nothing from constant sizes)."""
    a_dtype, b_dtype = _dtype(g.a.dtype), _dtype(g.b.dtype)
    halves = a_dtype in HALVES and b_dtype in HALVES
    gemm_ok = g.a.plain and g.b.plain and a_dtype == b_dtype and a_dtype in ("float32",) + HALVES
    va, vb = operand_views(g)
    if not (gemm_ok and (halves or allow_tf32)) or va is None or vb is None:
        return ()
    return size_params(fn, g, (va, vb))


def covers_k(g: GemmPlan, kdim) -> bool:
    """Whether the CUDA loop over k tiles covers ``[0, kdim)`` and no further than the tile that
    holds ``kdim - 1`` (``ceil(kdim / size)`` tiles): then any k tile may stand in for the CUDA
    one, the views reading zeros past ``kdim``."""
    bound = strip_casts(g.k.bound)
    if isinstance(bound, m.Ref):  # a local set once before the loop: its value
        inits = [d.init for st in tuple(g.prologue) + tuple(g.setup) if isinstance(st, m.DeclStmt)
                 for d in st.decls if d.name == bound.name and d.init is not None]
        bound = strip_casts(inits[0]) if len(inits) == 1 else bound
    if g.k.step == g.k.size:  # for (k0 = 0; k0 < K; k0 += size): the tiles cover [0, K)
        return same_value(bound, kdim)
    if g.k.step != 1 or not (isinstance(bound, m.Binary) and bound.op == "/"):
        return False
    t = bound.rhs.type
    ceil = m.Binary("+", kdim, m.IntLit(g.k.size - 1, str(g.k.size - 1), t, g.span), t, g.span)
    return same_value(bound.rhs, m.IntLit(g.k.size, str(g.k.size), t, g.span)) and same_value(bound.lhs, ceil)


def _without_k_count(g: GemmPlan) -> tuple:
    """``g.setup`` without the local that only counted the CUDA's k tiles (``num_tiles = (K +
    15) / 16``): with a free k tile the pipelined loop counts its own."""
    bound = strip_casts(g.k.bound)
    if not isinstance(bound, m.Ref):
        return g.setup
    others = tuple(g.prologue) + tuple(g.epilogue) + (g.a.factor, g.b.factor) + tuple(
        d.init for st in g.setup if isinstance(st, m.DeclStmt) for d in st.decls
        if d.name != bound.name and d.init is not None)
    if any(isinstance(n, m.Ref) and n.name == bound.name for e in others for n in m.walk(e)):
        return g.setup
    out = []
    for st in g.setup:
        if isinstance(st, m.DeclStmt):
            decls = tuple(d for d in st.decls if d.name != bound.name)
            if decls:
                out.append(m.DeclStmt(decls, st.span))
        else:
            out.append(st)
    return tuple(out)


def size_params(fn: m.Function, g: GemmPlan, views) -> tuple[str, ...]:
    """The integer scalar parameters that size the GEMM (the k bound, the row and column bounds,
    the operands' view shapes): the launcher compiles them as constants on GPUs."""
    ints = {p.name for p in fn.params if isinstance(p.type, m.Scalar) and _dtype(p.type) in ("int32", "int64", "uint32")}
    exprs = [g.k.bound] + [b for bs in g.tile.bounds.values() for b in bs]
    exprs += [e for v in views if v is not None for e in (v.rows, v.cols)]
    found = {n.name for e in exprs for n in m.walk(e) if isinstance(n, m.Ref) and n.name in ints}
    return tuple(p.name for p in fn.params if p.name in found)
