"""CUB's block-wide differences of neighbouring items as the exchange of each thread's edge item.

``cub::BlockAdjacentDifference<T, X[, Y, Z]>(temp_storage).SubtractLeft(in, out, op)`` over a
thread's ``IPT`` items in the blocked arrangement (``rank`` the thread's row-major rank in the
X×Y×Z block) becomes, where it stands::

    temp_storage[rank] = in[IPT - 1];  __syncthreads();
    for (int k = IPT - 1; k > 0; k -= 1) out[k] = op(in[k], in[k - 1]);
    out[0] = rank > 0 ? op(in[0], temp_storage[rank - 1]) : in[0];

(with a fourth argument, the tile's predecessor item, ``op(in[0], predecessor)`` for rank 0);
``SubtractRight`` the mirror: ``temp_storage[rank] = in[0]``, ``out[k] = op(in[k], in[k + 1])``
upwards and the last item ``op(in[IPT - 1], temp_storage[rank + 1])`` below the last thread (the
successor item, or the item itself, there). Going away from the neighbour read lets ``out`` be
``in``, as CUB allows. As in CUB no barrier follows (a program that uses the storage again meets
the block at a barrier of its own first). The TempStorage is a ``__shared__`` array of X·Y·Z
elements of T.

``op`` is one of :data:`DIFFERENCES` (the operators of CUB and libcu++); an operator of the
program's own is named, not guessed (its ``operator()`` is not in the model), as is any other
method or use of the storage: :class:`~.cub_blocks.CubError`.
"""
from __future__ import annotations

from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from .cub_blocks import CubError, _args, _assign, _int, _sync, operator_named
from .cub_moves import CubClasses, CubLowering, _add, _element, _mul, _text, _tid, lower_with

I32 = m.Scalar("int32")
BOOL = m.Scalar("bool")
CLASSES = CubClasses("BlockAdjacentDifference")

#: difference operators by their last name: what ``op(a, b)`` computes
DIFFERENCES = {"Difference": "-", "minus": "-", "Sum": "+", "plus": "+"}
#: method -> (the neighbour's side, whether a fourth argument is the tile's edge item)
METHODS = {"SubtractLeft": "left", "SubtractRight": "right"}


def _difference(e, what, span) -> str:
    return operator_named(strip_implicit_casts(e), DIFFERENCES, what, span,
                          " (only CUB's and libcu++'s are modelled)")


class _Lower(CubLowering):
    CLASSES = CLASSES
    def lower(self, call: m.MethodCall, cls: str, targs: str) -> list | None:
        span = call.span
        what = f"cub::BlockAdjacentDifference::{call.method}"
        if call.method not in METHODS or len(call.args) not in (3, 4):
            raise CubError(f"{what} with {len(call.args)} arguments", span)
        side = METHODS[call.method]
        op = _difference(call.args[2], what, span)
        edge = call.args[3] if len(call.args) == 4 else None
        inp, out = strip_implicit_casts(call.args[0]), strip_implicit_casts(call.args[1])
        if not isinstance(inp.type, m.Array) or not isinstance(out.type, m.Array):
            raise CubError(f"{what} other than over a thread's arrays of items", span)
        t, ot = _element(inp.type), _element(out.type)
        ipt = _int(inp.type.extent, span) if inp.type.extent is not None else \
            self.consts.value(inp.type.extent_text, what, span)
        args = _args(targs) + ["1", "1"]
        name = f"cub::BlockAdjacentDifference<{targs}>"
        x, y, z = (self.consts.value(a, name, span) for a in args[1:4])
        threads = _mul(_mul(x, y, span), z, span)
        rank = _tid("x", span)
        if not (isinstance(y, m.IntLit) and y.value == 1):
            rank = _add(rank, _mul(_tid("y", span), x, span), span)
        if not (isinstance(z, m.IntLit) and z.value == 1):
            rank = _add(rank, _mul(_tid("z", span), _mul(x, y, span), span), span)
        cells = self.cells(call.obj, t, threads, what, span)
        last = m.Binary("-", ipt, _int(1, span), I32, span)

        def item(k):
            return m.Index(inp, k, t, span)

        def put(k, value):
            return _assign(m.Index(out, k, ot, span), value if ot == t else m.Cast(ot, value, "implicit", ot, span), span)

        def diff(a, b):
            return m.Binary(op, a, b, t, span)

        k = m.Ref(self.fresh("cub_k"), "local", I32, span)
        if side == "left":
            mine, near, end = last, m.Binary("-", rank, _int(1, span), I32, span), _int(0, span)
            loop = m.For(m.DeclStmt((m.VarDecl(k.name, I32, "local", False, last, span),), span),
                         m.Binary(">", k, _int(0, span), BOOL, span), m.Assign("-=", k, _int(1, span), I32, span),
                         m.Block((put(k, diff(item(k), item(m.Binary("-", k, _int(1, span), I32, span)))),), span),
                         (), span)
            inside = m.Binary(">", rank, _int(0, span), BOOL, span)
        else:
            mine, near, end = _int(0, span), m.Binary("+", rank, _int(1, span), I32, span), last
            loop = m.For(m.DeclStmt((m.VarDecl(k.name, I32, "local", False, _int(0, span), span),), span),
                         m.Binary("<", k, last, BOOL, span), m.Assign("+=", k, _int(1, span), I32, span),
                         m.Block((put(k, diff(item(k), item(m.Binary("+", k, _int(1, span), I32, span)))),), span),
                         (), span)
            inside = m.Binary("<", rank, m.Binary("-", threads, _int(1, span), I32, span), BOOL, span)
        outside = diff(item(end), edge) if edge is not None else item(end)
        return [_assign(m.Index(cells, rank, t, span), item(mine), span), _sync(span), loop,
                put(end, m.Ternary(inside, diff(item(end), m.Index(cells, near, t, span)), outside, t, span))]

    def cells(self, obj, t, threads, what, span) -> m.Ref:
        while isinstance(obj, m.Cast):
            obj = obj.operand
        if isinstance(obj, m.Call) and obj.kind == "constructor" and obj.args:
            obj = obj.args[0]
        obj = strip_implicit_casts(obj)
        if not isinstance(obj, m.Ref) or obj.kind != "shared":
            raise CubError(f"{what} made other than on a __shared__ TempStorage", span)
        extent = _text(threads)
        if extent is None:
            raise CubError(f"{what}: its storage's size is not a constant", span)
        slots = m.Array(t, threads.value if isinstance(threads, m.IntLit) else None, extent)
        if self.storages.setdefault(obj.name, slots) != slots:
            raise CubError(f"TempStorage '{obj.name}' used by differences of other types or sizes", span)
        return m.Ref(obj.name, "shared", slots, span)


def lower_cub_adjacent(fn: m.Function) -> m.Function:
    """``fn`` with each CUB adjacent difference lowered (see the module docstring)."""
    return lower_with(fn, _Lower, "a cub::BlockAdjacentDifference")
