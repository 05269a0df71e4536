"""What a kernel over a 2-D or 3-D block computes, for the note that says why it is not lifted.

Block reductions over several thread dimensions lift when the kernel ranks its threads as one
row of lanes (:mod:`.flat_block`). A kernel that does not is often no block reduction at all,
and the note should say what it is rather than which rank it lacks:

- a warp scan (``__shfl_up_sync``), or a scan through shared memory whose offsets double;
- a reduction per row: warp shuffles, or a shared tree whose offsets halve, along threadIdx.x in
  rows that threadIdx.y picks (each row's total its own);
- threads that exchange values through a ``__shared__`` array across barriers (a stencil's halo,
  the tiles of a tiled loop, a block-wide exchange such as AES's MixColumns).

The tests are on the kernel's model (device functions inlined); they name what the kernel does,
they prove nothing.
"""
from __future__ import annotations

from ...ir import model as m
from ...ir.exprs import const_value, strip_casts


def what_it_computes(fn: m.Function) -> str | None:
    """The phrase for what ``fn`` does instead of a ranked block reduction, or None when none of
    the shapes of the module docstring fits."""
    if fn.body is None:
        return None
    nodes = list(m.walk(fn.body))
    dims = "3-D" if any(isinstance(n, m.Builtin) and n.var in ("threadIdx", "blockDim") and n.dim == "z"
                        for n in nodes) else "2-D"
    shuffles = {n.callee for n in nodes if isinstance(n, m.Call) and n.kind == "warp" and "shfl" in n.callee}
    if any("shfl_up" in c for c in shuffles):
        return f"it is a warp scan (__shfl_up_sync) over a {dims} block, not a block reduction"
    if shuffles:
        return (f"it reduces with warp shuffles along threadIdx.x in a {dims} block whose threads it does not rank "
                "as one row of lanes: a reduction per row that threadIdx.y picks, which is not lifted")
    loops = [n for n in nodes if isinstance(n, m.For) and _stores_shared(n.body)]
    if any(_step(n) == "halves" for n in loops):
        return (f"it is a reduction per row: a shared-memory tree along one thread index in rows that another "
                f"picks, each row's total its own, and such reductions over a {dims} block are not lifted")
    if any(_step(n) == "doubles" for n in loops):
        return f"it is a scan through shared memory (offsets doubling) over a {dims} block, not a block reduction"
    exchanged = sorted({_shared_root(n.target.base) for n in nodes
                        if isinstance(n, m.Assign) and isinstance(n.target, m.Index)} - {None})
    if exchanged and any(isinstance(n, m.Call) and n.kind == "sync" for n in nodes):
        return (f"it is not a block reduction: its threads exchange values through the __shared__ "
                f"'{exchanged[0]}' across barriers (a stencil's halo, the tiles of a tiled loop or a block-wide "
                f"exchange), which the tile lifts of a {dims} block do not take")
    return None


def what_it_is_instead(fn: m.Function) -> str | None:
    """The phrase of :func:`what_it_computes` when it says ``fn`` is no reduction at all (a warp
    scan, or threads exchanging values through shared memory), else None: for a kernel whose
    threads the reduction lift ranked as lanes and then refused at some step."""
    what = what_it_computes(fn)
    return what if what is not None and what.startswith(("it is not a block reduction", "it is a warp scan")) \
        else None


def _shared_root(e) -> str | None:
    """The ``__shared__`` array (or the local pointer, into dynamic shared memory) a store's base is."""
    r = m.access_root(e, through=(m.Index, m.Cast))
    if isinstance(r, m.Ref) and (r.kind == "shared" or r.kind == "local" and isinstance(r.type, m.Pointer)):
        return r.name
    return None


def _stores_shared(body) -> bool:
    return any(isinstance(n, m.Assign) and isinstance(n.target, m.Index) and _shared_root(n.target.base)
               for n in m.walk(body))


def _step(loop: m.For) -> str | None:
    """``halves`` for a step ``s >>= 1``, ``s /= 2`` (or ``s = s / 2``...), ``doubles`` for
    ``s <<= 1``, ``s *= 2``; else None."""
    st = strip_casts(loop.step) if isinstance(loop.step, m.Expr) else None
    if not isinstance(st, m.Assign):
        return None
    op, value = st.op, strip_casts(st.value)
    target, lhs = strip_casts(st.target), strip_casts(getattr(value, "lhs", None))
    if op == "=" and isinstance(value, m.Binary) and isinstance(target, m.Ref) and isinstance(lhs, m.Ref) \
            and lhs.name == target.name:
        op, value = value.op + "=", strip_casts(value.rhs)
    k = const_value(value)
    if (op, k) in ((">>=", 1), ("/=", 2)):
        return "halves"
    if (op, k) in (("<<=", 1), ("*=", 2)):
        return "doubles"
    return None
