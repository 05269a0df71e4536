"""CUB's block and warp prefix scans as the shared-memory Hillis–Steele scans they compute.

``cub::BlockScan<T, X[, algorithm, Y, Z]>(temp_storage).InclusiveSum(x, y)`` (``ExclusiveSum``;
with a third argument, the block's total, its *aggregate*) becomes, where it stands (``rank`` the
thread's row-major rank in the X×Y×Z block, ``P = X·Y·Z``)::

    temp_storage[rank] = x;  __syncthreads();
    for (int off = 1; off < P; off *= 2) {
        T v = rank >= off ? temp_storage[rank - off] : 0;  __syncthreads();
        temp_storage[rank] += v;  __syncthreads();
    }
    y = temp_storage[rank];                                   // inclusive
    y = rank > 0 ? temp_storage[rank - 1] : 0;                // exclusive
    aggregate = temp_storage[P - 1];

the form the block-scan lift (analysis.lift.scan) proves. As in CUB, no barrier follows: a
program that uses the storage again meets the block at a barrier of its own first (CUB requires
it), which keeps the results in locals of one phase. ``InclusiveScan(x, y, op)`` and ``ExclusiveScan(x, y, initial, op)`` with CUB's
``Sum``/``Max``/``Min`` (or their ``cuda::std`` spellings) combine with ``op`` instead (``v``
the cell itself where ``rank < off``), the exclusive one ``op(initial, …)`` (``initial`` for rank
0; the aggregate leaves ``initial`` out, as CUB's does). Over a thread's array of items
(``T (&)[IPT]``), the thread's total is scanned and each item gets its prefix in the thread::

    T own = 0; for (k) own += x[k];   <the scan of own, exclusive, into prefix>
    for (k) { T item = x[k]; y[k] = prefix; prefix += item; }      // (inclusive: add first)

``cub::WarpScan<T, W>(temp_storage[w])`` scans each logical warp of W lanes (``lane = tid % W``)
the same way, in a ``__shared__`` array of ``[warps][W]`` (a single TempStorage: one warp's
``[W]``, a block of one warp), meeting at ``__syncwarp()``: it must stand where every lane of
the warp reaches it, as CUB requires.

The TempStorage declaration becomes the ``__shared__`` array. Any other method, operator or use
of the storage raises :class:`~.cub_blocks.CubError` with the construct.
"""
from __future__ import annotations

from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from .cub_blocks import _OPS, CubError, _args, _assign, _combine, _int, _sync, operator_named
from .cub_moves import CubClasses, CubLowering, _add, _element, _linear_tid, _mul, _text, _tid, lower_with

I32 = m.Scalar("int32")
BOOL = m.Scalar("bool")
CLASSES = CubClasses("BlockScan|WarpScan")

#: each class's template parameters, in order (None: not read here), and their defaults
PARAMS = {"BlockScan": ("T", "X", None, "Y", "Z"), "WarpScan": ("T", "W")}
DEFAULTS = {"Y": "1", "Z": "1", "W": "32"}

#: method -> (inclusive, the argument positions of: the operator, the initial value, the aggregate,
#: by argument count)
METHODS = {
    "InclusiveSum": (True, {2: (None, None, None), 3: (None, None, 2)}),
    "ExclusiveSum": (False, {2: (None, None, None), 3: (None, None, 2)}),
    "InclusiveScan": (True, {3: (2, None, None), 4: (2, None, 3)}),
    "ExclusiveScan": (False, {4: (3, 2, None), 5: (3, 2, 4)}),
}


def _scan_op(e, what, span) -> str:
    """``+``, ``max`` or ``min``: CUB's operators and their ``cuda::std`` spellings only."""
    return operator_named(strip_implicit_casts(e), _OPS, what, span)


def _zero(t, span) -> m.Expr:
    """0 of ``t`` (``0.0f`` for a float: the scan lift knows a literal zero)."""
    if isinstance(t, m.Scalar) and t.dtype.startswith(("float", "bfloat")):
        return m.FloatLit(0.0, "0.0", t, span)
    return m.Cast(t, _int(0, span), "implicit", t, span) if t != I32 else _int(0, span)


def _syncwarp(span) -> m.ExprStmt:
    return m.ExprStmt(m.Call("__syncwarp", (), "sync", (), m.Scalar("void"), span), span)


class _Lower(CubLowering):
    CLASSES = CLASSES
    ITEM = "cub_k"

    def local(self, base, t, init, span) -> tuple[m.Ref, m.DeclStmt]:
        ref = m.Ref(self.fresh(base), "local", t, span)
        return ref, m.DeclStmt((m.VarDecl(ref.name, t, "local", False, init, span),), span)

    def lower(self, call: m.MethodCall, cls: str, targs: str) -> list | None:
        span = call.span
        what = f"cub::{cls}::{call.method}"
        if call.method not in METHODS or len(call.args) not in METHODS[call.method][1]:
            raise CubError(f"{what} with {len(call.args)} arguments", span)
        inclusive, (op_at, initial_at, aggregate_at) = METHODS[call.method][0], METHODS[call.method][1][len(call.args)]
        op = _scan_op(call.args[op_at], what, span) if op_at is not None else "+"
        args = dict(zip(PARAMS[cls], _args(targs)))
        for k, v in DEFAULTS.items():
            args.setdefault(k, v)
        name = f"cub::{cls}<{targs}>"
        value, out = strip_implicit_casts(call.args[0]), call.args[1]
        t = _element(value.type)
        if not isinstance(t, (m.Scalar, m.TemplateType)):
            raise CubError(f"{what} of '{value.type}' values", span)
        if cls == "BlockScan":
            x, y, z = (self.consts.value(args[d], name, span) for d in "XYZ")
            lanes = _mul(_mul(x, y, span), z, span)
            rank = _tid("x", span)
            if not (isinstance(y, m.IntLit) and y.value == 1):
                rank = _add(rank, _mul(_tid("y", span), x, span), span)
            if not (isinstance(z, m.IntLit) and z.value == 1):
                rank = _add(rank, _mul(_tid("z", span), _mul(x, y, span), span), span)
            sync = _sync
        else:
            lanes = self.consts.value(args["W"], name, span)
            rank = m.Binary("%", _linear_tid(span), lanes, I32, span)
            sync = _syncwarp
        cells = self.cells(call, t, lanes, what, span)
        initial = call.args[initial_at] if initial_at is not None else None
        aggregate = call.args[aggregate_at] if aggregate_at is not None else None
        if isinstance(value.type, m.Array):  # a thread's items: its total scanned, then its prefixes
            if not isinstance(strip_implicit_casts(out).type, m.Array) or op != "+" or initial is not None:
                raise CubError(f"{what} over a thread's items other than a sum into its items", span)
            return self.items(value, strip_implicit_casts(out), aggregate, inclusive, t, cells, rank, lanes, sync, span)
        return self.scan(value, out, aggregate, inclusive, op, initial, t, cells, rank, lanes, sync, span)

    def cells(self, call, t, lanes, what, span) -> m.Expr:
        """The __shared__ array (a warp's row of it) the scan runs in, its storage recorded."""
        obj = call.obj
        while isinstance(obj, m.Cast):
            obj = obj.operand
        if isinstance(obj, m.Call) and obj.kind == "constructor" and obj.args:
            obj = obj.args[0]
        obj = strip_implicit_casts(obj)
        index = None
        if isinstance(obj, m.Index):
            obj, index = strip_implicit_casts(obj.base), obj.index
        if not isinstance(obj, m.Ref) or obj.kind != "shared":
            raise CubError(f"{what} made other than on a __shared__ TempStorage", span)
        extent = _text(lanes)
        if extent is None:
            raise CubError(f"{what}: its storage's size is not a constant", span)
        slots = m.Array(t, lanes.value if isinstance(lanes, m.IntLit) else None, extent)
        shape = ("array" if index is not None else "one", slots)
        if self.storages.setdefault(obj.name, shape) != shape:
            raise CubError(f"TempStorage '{obj.name}' used by scans of other types or sizes", span)
        if index is None:
            return m.Ref(obj.name, "shared", slots, span)
        return m.Index(m.Ref(obj.name, "shared", m.Array(slots, None, ""), span), index, slots, span)

    def scan(self, value, out, aggregate, inclusive, op, initial, t, cells, rank, lanes, sync, span) -> list:
        def at():  # a node of its own at each use: the scan lift tells the accesses apart by identity
            return m.Index(cells, rank, t, span)
        stmts: list = [_assign(at(), value, span), sync(span)]
        off = m.Ref(self.fresh("cub_offset"), "local", I32, span)
        back = m.Index(cells, m.Binary("-", rank, off, I32, span), t, span)
        reaches = m.Binary(">=", rank, off, BOOL, span)
        if op == "+":
            v, decl = self.local("cub_carry", t, m.Ternary(reaches, back, _zero(t, span),
                                                              t, span), span)
            body = (decl, sync(span), _assign(at(), m.Binary("+", at(), v, t, span), span), sync(span))
        else:
            v, decl = self.local("cub_carry", t, at(), span)
            body = (decl, m.If(reaches, m.Block((_assign(v, _combine(op, back, v, t, span), span),), span), None, span),
                    sync(span), _assign(at(), v, span), sync(span))
        stmts.append(m.For(m.DeclStmt((m.VarDecl(off.name, I32, "local", False, _int(1, span), span),), span),
                           m.Binary("<", off, lanes, BOOL, span), m.Assign("*=", off, _int(2, span), I32, span),
                           m.Block(body, span), (), span))
        if inclusive:
            result = at()
        else:
            before = m.Index(cells, m.Binary("-", rank, _int(1, span), I32, span), t, span)
            if initial is not None:
                before = _combine(op, initial, before, t, span)
            first = initial if initial is not None else _zero(t, span)
            result = m.Ternary(m.Binary(">", rank, _int(0, span), BOOL, span), before, first, t, span)
        stmts.append(_assign(out, result, span))
        if aggregate is not None:
            stmts.append(_assign(aggregate, m.Index(cells, m.Binary("-", lanes, _int(1, span), I32, span), t, span), span))
        return stmts

    def items(self, value, out, aggregate, inclusive, t, cells, rank, lanes, sync, span) -> list:
        ipt = value.type.extent
        if ipt is None:
            ipt = self.consts.value(value.type.extent_text, "a thread's items", span)
        else:
            ipt = _int(ipt, span)
        own, decl = self.local("cub_own", t, _zero(t, span), span)
        prefix, pdecl = self.local("cub_prefix", t, None, span)
        stmts: list = [decl, pdecl, self.loop(ipt, lambda k: [_assign(own, m.Binary("+", own, m.Index(value, k, t, span), t,
                                                                                       span), span)], span)]
        stmts += self.scan(own, prefix, aggregate, False, "+", None, t, cells, rank, lanes, sync, span)

        def each(k):
            item, idecl = self.local("cub_item", t, m.Index(value, k, t, span), span)
            add = _assign(prefix, m.Binary("+", prefix, item, t, span), span)
            put = _assign(m.Index(out, k, _element(out.type), span), prefix, span)
            return [idecl, add, put] if inclusive else [idecl, put, add]
        stmts.append(self.loop(ipt, each, span))
        return stmts


def lower_cub_scans(fn: m.Function) -> m.Function:
    """``fn`` with each CUB block or warp scan lowered (see the module docstring)."""
    return lower_with(fn, _Lower, "a CUB scan")
