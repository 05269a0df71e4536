"""Normalise thread-index idioms into global indices over the data domain.

The CUDA idiom ``blockIdx.x * blockDim.x + threadIdx.x`` (in any operand order, through integral
casts) names one element of a ``gridDim.x * blockDim.x`` domain. :func:`fold_global_indices`
replaces it with a :class:`~migrate.ir.model.Builtin` ``globalIdx.x``, which the tile form
prints as the element's index in the domain. In a dimension without threads (``blockDim.d`` is 1,
which the factory asserts) ``blockIdx.d`` is itself the global index, and in one without blocks
(``gridDim.d`` is 1) so is ``threadIdx.d``. Anything else that still reads ``threadIdx`` depends
on how elements are grouped into threads, and :func:`leftover_thread_indices` lists it.

A ``blockIdx.d`` left over names the segment of ``blockDim.d`` elements an element belongs to:
:func:`blocks_as_segments` rewrites it as ``globalIdx.d / blockDim.d``.
"""
from __future__ import annotations

from ...ir import model as m
from ...ir.exprs import strip_int_casts as _strip_int_casts
from ...ir.visit import Transformer
from ..facts.affine import linear_form, rebuild

DIMS = ("x", "y", "z")


def _is(e: m.Expr, var: str, dim: str | None = None) -> str | None:
    e = _strip_int_casts(e)
    if isinstance(e, m.Builtin) and e.var == var and (dim is None or e.dim == dim):
        return e.dim
    return None


def _block_offset(e: m.Expr) -> tuple[str, int | None] | None:
    """(d, None) when ``e`` is ``blockIdx.d * blockDim.d``, (d, C) when it is ``blockIdx.d * C``
    for an integer constant C (either order)."""
    e = _strip_int_casts(e)
    if not (isinstance(e, m.Binary) and e.op == "*"):
        return None
    for a, b in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
        d = _is(a, "blockIdx")
        if d and _is(b, "blockDim", d):
            return d, None
        b = _strip_int_casts(b)
        if d and isinstance(b, m.IntLit) and b.value > 0:
            return d, b.value
    return None


def global_index_dim(e: m.Expr) -> tuple[str, int | None] | None:
    """(d, C) when ``e`` is ``blockIdx.d * blockDim.d + threadIdx.d`` (C None) or
    ``blockIdx.d * C + threadIdx.d`` (which is the global index when blockDim.d is C), any order."""
    if not (isinstance(e, m.Binary) and e.op == "+"):
        return None
    for a, b in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
        off = _block_offset(a)
        if off and _is(b, "threadIdx", off[0]):
            return off
    return None


def _sides(e, op: str):
    """The (a, b) and (b, a) operand orders of ``e`` when it is ``a op b``, else nothing."""
    e = _strip_int_casts(e)
    if isinstance(e, m.Binary) and e.op == op:
        yield e.lhs, e.rhs
        yield e.rhs, e.lhs


def flat_grid_index(e) -> bool:
    """Whether ``e`` is ``(gridDim.x * blockIdx.y + blockIdx.x) * blockDim.x + threadIdx.x`` (the
    thread's rank in a 2-D grid of 1-D blocks, numbered row by row), in any operand order."""
    for p, t in _sides(e, "+"):
        if not _is(t, "threadIdx", "x"):
            continue
        for q, bd in _sides(p, "*"):
            if not _is(bd, "blockDim", "x"):
                continue
            for r, bx in _sides(q, "+"):
                if _is(bx, "blockIdx", "x") and any(
                        _is(g, "gridDim", "x") and _is(by, "blockIdx", "y") for g, by in _sides(r, "*")):
                    return True
    return False


def global_builtin(dim: str, like: m.Expr) -> m.Builtin:
    return m.Builtin("globalIdx", dim, like.type, like.span)


def _form_pairs(form) -> list[tuple[str, int | None, str, str]]:
    """In an affine form, the (dim, block size, block term key, thread term key) pairs of a
    ``blockIdx.d * size`` (or ``blockIdx.d * blockDim.d``) term and a ``threadIdx.d`` term, both
    with coefficient 1 (the block term: coefficient ``size``)."""
    terms, _const = form
    out = []
    for d in ("x", "y", "z"):
        thread = [k for k, (c, a) in terms.items() if c == 1 and isinstance(a, m.Builtin)
                  and a.var == "threadIdx" and a.dim == d]
        if not thread:
            continue
        for k, (c, a) in terms.items():
            if isinstance(a, m.Builtin) and a.var == "blockIdx" and a.dim == d and c > 1:
                out.append((d, c, k, thread[0]))
            elif c == 1 and _block_offset(a) is not None and _block_offset(a) == (d, None):
                out.append((d, None, k, thread[0]))
    return out


class _Fold(Transformer):
    def __init__(self, sizes: dict[str, int]) -> None:
        self.sizes = sizes  # dims whose block size the kernel spells as a constant

    def leave_Binary(self, node: m.Binary):
        found = global_index_dim(node)
        if found:
            d, size = found
            if size is not None and self.sizes.get(d) != size:
                return node  # two different constants: not a consistent block size
            return global_builtin(d, node)
        if node.op not in ("+", "-") or not _int_type(node.type):
            return node
        form = linear_form(node)
        if form is None:
            return node
        terms, const = form
        changed = False
        for d, size, kb, kt in _form_pairs(form):
            if kb not in terms or kt not in terms or (size is not None and self.sizes.get(d) != size):
                continue
            g = global_builtin(d, terms[kt][1])
            del terms[kb], terms[kt]
            terms[m.dump(g)] = (1, g)
            changed = True
        return rebuild((terms, const), node) if changed else node


def _int_type(t) -> bool:
    return isinstance(t, m.Scalar) and t.dtype.startswith(("int", "uint"))


def assumed_block_sizes(fn: m.Function) -> dict[str, int]:
    """Block sizes the kernel spells as constants (``blockIdx.x * TILE + threadIdx.x``): d -> C,
    for the dims where every such idiom uses the same C and ``blockDim.d`` is not read."""
    sizes: dict[str, set] = {}
    for n in m.walk(fn.body) if fn.body else ():
        found = global_index_dim(n) if isinstance(n, m.Binary) else None
        if found and found[1] is not None:
            sizes.setdefault(found[0], set()).add(found[1])
        elif isinstance(n, m.Binary) and n.op in ("+", "-") and _int_type(n.type):
            form = linear_form(n)
            for d, size, _kb, _kt in (_form_pairs(form) if form is not None else ()):
                if size is not None:
                    sizes.setdefault(d, set()).add(size)
    used = builtin_uses(fn)
    return {d: next(iter(v)) for d, v in sizes.items() if len(v) == 1 and ("blockDim", d) not in used}


class _Substitute(Transformer):
    def __init__(self, table: dict[tuple[str, str], str]) -> None:
        self.table = table  # (var, dim) -> replacement dim of globalIdx

    def leave_Builtin(self, node: m.Builtin):
        d = self.table.get((node.var, node.dim))
        return global_builtin(d, node) if d else node


def builtin_uses(fn: m.Function) -> set[tuple[str, str]]:
    return {(n.var, n.dim) for n in m.walk(fn.body) if isinstance(n, m.Builtin) and n.dim} if fn.body else set()


def fold_global_indices(fn: m.Function) -> tuple[m.Function, dict[str, int]]:
    """``fn`` with every global-index idiom replaced by ``globalIdx.d`` (see the module doc), and
    the block sizes that assumes (d -> C where the idiom spells ``blockDim.d`` as a constant C:
    the launch must use that block size)."""
    if fn.body is None:
        return fn, {}
    used_before = builtin_uses(fn)
    sizes = assumed_block_sizes(fn)
    fn = _Fold(sizes).transform(fn)
    used = builtin_uses(fn)
    table = {}
    for d in DIMS:
        had_threads = ("threadIdx", d) in used_before or ("blockDim", d) in used_before
        had_blocks = ("blockIdx", d) in used_before or ("gridDim", d) in used_before
        if ("blockIdx", d) in used and not had_threads:
            table[("blockIdx", d)] = d  # blockDim.d == 1: the block is the element
        if ("threadIdx", d) in used and not had_blocks:
            table[("threadIdx", d)] = d  # gridDim.d == 1: the thread is the element
    return (_Substitute(table).transform(fn) if table else fn), sizes


class _InBlocks(Transformer):
    """Each leftover ``var.d`` (blockIdx or threadIdx) as ``globalIdx.d op blockDim.d``."""

    def __init__(self, var: str, op: str) -> None:
        self.var, self.op = var, op

    def leave_Builtin(self, node: m.Builtin):
        if node.var != self.var:
            return node
        dim = m.Builtin("blockDim", node.dim, node.type, node.span)
        return m.Binary(self.op, global_builtin(node.dim, node), dim, node.type, node.span)


def blocks_as_segments(fn: m.Function) -> m.Function:
    """Each leftover ``blockIdx.d`` as ``globalIdx.d / blockDim.d`` (the element's block)."""
    return _InBlocks("blockIdx", "/").transform(fn) if fn.body is not None and _reads_builtin(fn, "blockIdx") \
        else fn


def threads_as_lanes(stmts: tuple) -> tuple:
    """Each leftover ``threadIdx.d`` as ``globalIdx.d % blockDim.d`` (the element's place in its
    block), for a domain of one element per CUDA thread."""
    stmts = tuple(stmts)
    return _InBlocks("threadIdx", "%").transform(stmts) if any(_reads_builtin(s, "threadIdx") for s in stmts) \
        else stmts


def _reads_builtin(node, var: str) -> bool:
    """Whether ``var`` (``blockIdx``, ``threadIdx``) is read anywhere in ``node``: where it is not,
    :class:`_InBlocks` would give the tree back as it is (a walk costs less than that rebuild)."""
    return any(isinstance(n, m.Builtin) and n.var == var for n in m.walk(node))


def leftover_thread_indices(fn: m.Function) -> list[m.Builtin]:
    """``threadIdx`` reads that did not fold into a global index."""
    return [n for n in m.walk(fn.body) if isinstance(n, m.Builtin) and n.var == "threadIdx"] if fn.body else []


def domain_dims(body) -> list[str]:
    """The dimensions of the element domain of ``body`` (a statement), x first: those with a
    global index, and every lower one (a 2-D domain always has x)."""
    used = {n.dim for n in m.walk(body) if isinstance(n, m.Builtin) and n.var == "globalIdx"}
    if "z" in used:
        return ["x", "y", "z"]
    if "y" in used:
        return ["x", "y"]
    return ["x"]
