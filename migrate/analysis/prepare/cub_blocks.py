"""CUB's block-wide reductions as the shared-memory trees they compute.

``cub::BlockReduce<T, X[, algorithm, Y, Z]>(temp_storage).Sum(v)`` (or ``.Reduce(v, op)`` with
``cub::Sum``/``cub::Max``/``cub::Min`` or their ``cuda::std`` spellings, either with a count of
valid inputs, or over a thread's array of inputs) becomes, where it stands:

    temp_storage[tid] = v;  __syncthreads();
    for (int s = P / 2; s > 0; s >>= 1) {
        if (tid < s [&& tid + s < count]) temp_storage[tid] = op(temp_storage[tid], temp_storage[tid + s]);
        __syncthreads();
    }
    T result = temp_storage[0];  __syncthreads();

with ``tid`` the thread's row-major rank in the X×Y×Z block, ``P`` the least power of two not
below the block's (or the count's) size (``P / 2`` spelled ``blockDim.x / 2`` in a one-dimensional
block of a power of two: CUB requires the block to have X threads), and the ``TempStorage`` declaration a ``__shared__`` array
of X·Y·Z elements of T. CUB defines the result in thread 0 only; every thread gets it here. The
last barrier lets the storage be used again, as CUB requires its users to. Any other use of a
``BlockReduce`` or its storage raises :class:`CubError` (or the inliner's :class:`InlineError`,
for a reduction where it cannot be hoisted) with the construct.
"""
from __future__ import annotations

import dataclasses
import re

from ...ir import model as m
from ...ir.span import Span
from ...ir.visit import expand_statements
from .inline import Inliner

# (a template kernel's spelling: ``typename BlockReduce<type-parameter-0-0, 256, ...>::TempStorage``)
_REDUCE = re.compile(r"^(?:typename\s+)?(?:::)?(?:cub::(?:\w+::)*)?BlockReduce<(.*)>$")
_STORAGE = re.compile(r"^(?:typename\s+)?(?:::)?(?:cub::(?:\w+::)*)?BlockReduce<(.*)>::TempStorage$")
_OPS = {"Sum": "+", "plus": "+", "Max": "max", "maximum": "max", "Min": "min", "minimum": "min"}
I32 = m.Scalar("int32")


class CubError(Exception):
    def __init__(self, message: str, span: Span | None = None) -> None:
        super().__init__(message)
        self.span = span


def _args(text: str) -> list[str]:
    """The top-level template arguments of ``text`` (``float, 256, cub::X<1, 2>``)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def _block(text: str, span) -> tuple[int, int, int]:
    """(X, Y, Z) of a ``BlockReduce<T, X, algorithm, Y, Z>`` spelling."""
    args = _args(text)
    dims = [args[1] if len(args) > 1 else None, args[3] if len(args) > 3 else "1", args[4] if len(args) > 4 else "1"]
    try:
        return tuple(int(d.rstrip("uUlL")) for d in dims)
    except (TypeError, ValueError, AttributeError):
        raise CubError(f"cub::BlockReduce<{text}>: its block size is not a constant", span) from None


def _reduce_of(e) -> str | None:
    """The template arguments of the BlockReduce object a method is called on, or None."""
    while True:
        match = _REDUCE.match(str(getattr(e, "type", "")).replace("const ", ""))
        if match or not isinstance(e, m.Cast):
            return match.group(1) if match else None
        e = e.operand


def _is_reduction(node) -> bool:
    return isinstance(node, m.MethodCall) and _reduce_of(node.obj) is not None


def _storage_ref(obj) -> m.Ref | None:
    """The TempStorage a ``BlockReduce(temp_storage)`` is made on (None: ``BlockReduce()``)."""
    while isinstance(obj, m.Cast):
        obj = obj.operand
    if isinstance(obj, m.Ref) and obj.kind in ("shared", "local"):  # a template's BlockReduce(temp)
        return obj
    if isinstance(obj, m.Call) and obj.kind == "constructor":
        if not obj.args:
            return None
        arg = obj.args[0]
        while isinstance(arg, m.Cast):
            arg = arg.operand
        if isinstance(arg, m.Ref) and arg.kind in ("shared", "local"):
            return arg
    raise CubError("cub::BlockReduce made other than on a __shared__ TempStorage", getattr(obj, "span", None))


def operator_named(e, table: dict, what: str, span, note: str = "") -> str:
    """The operation ``table`` gives the operator object ``e`` by its last name (``cub::Sum()``,
    ``cuda::std::plus<float>{}``); else :class:`CubError` naming ``what`` and the operator.
    Shared by the CUB lowerings (reductions, scans, adjacent differences)."""
    name = e.callee if isinstance(e, m.Call) else str(getattr(e, "type", ""))
    base = name.rsplit("::", 1)[-1].split("<", 1)[0]
    if base not in table:
        raise CubError(f"{what} with the operator '{name}'{note}", span)
    return table[base]


def _op(e, span) -> str:
    while isinstance(e, m.Cast):
        e = e.operand
    return operator_named(e, _OPS, "cub::BlockReduce::Reduce", span)


def _combine(op: str, a, b, t, span):
    if op == "+":
        return m.Binary("+", a, b, t, span)
    return m.Call(op, (a, b), "math", (), t, span)


class _Lower(Inliner):
    """Each reduction hoisted into statements of its own before the statement that uses its value
    (the inliner's mechanism: an if's or switch's condition first, none in loop headers or after
    ``?:``, ``&&``, ``||``), then expanded into its tree."""

    what = "cub::BlockReduce"

    def __init__(self) -> None:
        super().__init__({}, set())
        self.storages: dict[str, tuple[m.CType, int]] = {}  # TempStorage name -> (T, threads)
        self.private: list[m.DeclStmt] = []  # the storage of BlockReduce() objects, at the top

    def is_target(self, node) -> bool:
        return _is_reduction(node)

    def describe(self, node) -> str:
        return self.what

    def result_base(self, call) -> str:
        try:
            ref = _storage_ref(call.obj)
        except CubError:
            ref = None
        return f"{ref.name if ref is not None else 'block'}_{call.method.lower()}"

    def result_type(self, call) -> m.CType:
        """T: in a template clang leaves the call's type dependent, and it is the inputs' type."""
        t = call.type
        if not isinstance(t, (m.Scalar, m.TemplateType)) and call.args:
            t = getattr(call.args[0], "type", None)
            t = t.element if isinstance(t, m.Array) else t
        if not isinstance(t, (m.Scalar, m.TemplateType)):
            raise CubError(f"cub::BlockReduce of '{t}' values", call.span)
        return t

    def expand(self, call: m.MethodCall, result: m.Ref | None, depth) -> list:
        """The statements that reduce ``call``'s inputs (into ``result``, where its value is used)."""
        span = call.span
        x, y, z = _block(_reduce_of(call.obj), span)
        threads = x * y * z
        t = self.result_type(call)
        ref = _storage_ref(call.obj)
        if ref is None:
            ref = m.Ref(self.fresh("block_reduce_storage"), "shared", m.Array(t, threads), span)
            self.private.append(m.DeclStmt((m.VarDecl(ref.name, ref.type, "shared", False, None, span),), span))
        known = self.storages.setdefault(ref.name, (t, threads))
        if known != (t, threads):
            raise CubError(f"TempStorage '{ref.name}' used by BlockReduces of other types or sizes", span)
        slots = m.Ref(ref.name, "shared", m.Array(t, threads), span)
        if call.method == "Sum":
            op, rest = "+", call.args[1:]
        elif call.method == "Reduce" and len(call.args) >= 2:
            op, rest = _op(call.args[1], span), call.args[2:]
        else:
            raise CubError(f"cub::BlockReduce::{call.method}", span)
        count = rest[0] if rest else None
        out: list = []
        tid = _rank(x, y, z, span)
        value = call.args[0]
        while isinstance(value, m.Cast) and value.style == "implicit" and isinstance(value.type, m.Array):
            value = value.operand
        if isinstance(value.type, m.Array):  # a thread's array of inputs: its own total first
            items = value.type.extent
            if not items:
                raise CubError("cub::BlockReduce over an array of no constant size", span)
            own = m.Ref(self.fresh(f"{ref.name}_items"), "local", t, span)
            out.append(m.DeclStmt((m.VarDecl(own.name, t, "local", False,
                                             m.Index(value, _int(0, span), t, span), span),), span))
            for k in range(1, items):
                out.append(_assign(own, _combine(op, own, m.Index(value, _int(k, span), t, span), t, span), span))
            value = own
        at = m.Index(slots, tid, t, span)
        out.append(_assign(at, value, span))
        out.append(_sync(span))
        p = 1 << (threads - 1).bit_length()  # the least power of two not below the block
        s = m.Ref(self.fresh(f"{ref.name}_stride"), "local", I32, span)
        cond = m.Binary("<", tid, s, m.Scalar("bool"), span)
        if count is not None or p != threads:
            bound = count if count is not None else _int(threads, span)
            cond = m.Binary("&&", cond, m.Binary("<", m.Binary("+", tid, s, I32, span), bound, m.Scalar("bool"), span),
                            m.Scalar("bool"), span)
        step = _assign(at, _combine(op, at, m.Index(slots, m.Binary("+", tid, s, I32, span), t, span), t, span), span)
        start = _int(p // 2, span)
        if count is None and p == threads and (y, z) == (1, 1):
            # CUB requires the block to be X threads: the tree over the whole block, as the
            # block-reduction lift knows it
            start = m.Binary("/", m.Cast(I32, m.Builtin("blockDim", "x", m.Scalar("uint32"), span), "implicit", I32,
                                         span), _int(2, span), I32, span)
        out.append(m.For(m.DeclStmt((m.VarDecl(s.name, I32, "local", False, start, span),), span),
                         m.Binary(">", s, _int(0, span), m.Scalar("bool"), span),
                         m.Assign(">>=", s, _int(1, span), I32, span),
                         m.Block((m.If(cond, m.Block((step,), span), None, span), _sync(span)), span), (), span))
        if result is not None:
            out.append(_assign(result, m.Index(slots, _int(0, span), t, span), span))
        out.append(_sync(span))
        return out


def _rank(x: int, y: int, z: int, span) -> m.Expr:
    """The thread's row-major rank in the X×Y×Z block CUB is told of, as CUB computes it (a
    dimension of size 1 adds nothing: threadIdx.x alone in one dimension)."""
    def dim(d):
        return m.Cast(I32, m.Builtin("threadIdx", d, m.Scalar("uint32"), span), "implicit", I32, span)
    rank = dim("x")
    if y > 1:
        rank = m.Binary("+", rank, m.Binary("*", dim("y"), _int(x, span), I32, span), I32, span)
    if z > 1:
        rank = m.Binary("+", rank, m.Binary("*", dim("z"), _int(x * y, span), I32, span), I32, span)
    return rank


def _int(v: int, span) -> m.IntLit:
    return m.IntLit(v, str(v), I32, span)


def _assign(target, value, span) -> m.ExprStmt:
    return m.ExprStmt(m.Assign("=", target, value, target.type, span), span)


def _sync(span) -> m.ExprStmt:
    return m.ExprStmt(m.Call("__syncthreads", (), "sync", (), m.Scalar("void"), span), span)


def uses_cub(fn: m.Function) -> bool:
    return fn.body is not None and any(_is_reduction(n) or (isinstance(n, m.VarDecl) and _STORAGE.match(str(n.type)))
                                       for n in m.walk(fn.body))


def lower_cub_blocks(fn: m.Function) -> m.Function:
    """``fn`` with each CUB block reduction lowered to its tree (see the module docstring)."""
    if not uses_cub(fn):
        return fn
    low = _Lower()
    body = dataclasses.replace(fn.body, stmts=low.stmts(fn.body.stmts))
    if low.private:
        body = dataclasses.replace(body, stmts=tuple(low.private) + body.stmts)

    def storage(s) -> list | None:
        if not isinstance(s, m.DeclStmt) or not any(_STORAGE.match(str(d.type)) for d in s.decls):
            return None
        decls = []
        for d in s.decls:
            if _STORAGE.match(str(d.type)):
                if d.name not in low.storages:
                    continue  # a TempStorage no reduction uses
                if d.storage != "shared":
                    raise CubError(f"TempStorage '{d.name}' is not __shared__", d.span)
                t, threads = low.storages[d.name]
                d = dataclasses.replace(d, type=m.Array(t, threads), init=None)
            decls.append(d)
        return [dataclasses.replace(s, decls=tuple(decls))] if decls else []

    body = expand_statements(body, storage, every=True)
    for n in m.walk(body):
        if isinstance(n, m.Ref) and _STORAGE.match(str(n.type)):
            raise CubError(f"TempStorage '{n.name}' used other than by a cub::BlockReduce", n.span)
        if isinstance(n, m.MethodCall) and _reduce_of(n.obj) is not None:
            raise CubError(f"cub::BlockReduce::{n.method}", n.span)
    return dataclasses.replace(fn, body=body)
