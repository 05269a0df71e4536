"""CUB's block and warp data movements as the loops over a thread's items they compute.

A thread of an X×Y×Z block (``rank`` its row-major rank, as CUB computes it) owns ``IPT`` items;
CUB names where item ``k`` of a thread sits in the block's segment of ``X·Y·Z·IPT`` elements (its
*arrangement*, :data:`POSITIONS`):

- blocked: ``rank * IPT + k``;
- striped: ``k * THREADS + rank``;
- warp-striped: ``(rank / 32) * 32 * IPT + k * 32 + rank % 32`` (32-thread warps);
- a logical warp's blocked / striped (``WarpExchange<T, IPT, W>``): the same within the warp's
  ``W·IPT`` elements, ``lane = rank % W``.

``BlockLoad<T, X, IPT, algorithm[, Y, Z]>(temp_storage).Load(src, items[, valid[, default]])``
becomes, where it stands (``pos`` the arrangement's position of item ``k``)::

    for (int k = 0; k < IPT; k += 1) { if (pos < valid) items[k] = src[pos]; [else items[k] = default;] }

and ``BlockStore<...>.Store(dst, items[, valid])`` ``for (...) { if (pos < valid) dst[pos] = items[k]; }``.
Every algorithm but the striped one ends in the blocked arrangement (DIRECT reads it, VECTORIZE
reads it in vectors, TRANSPOSE and WARP_TRANSPOSE read striped and transpose through the
storage): :data:`ARRANGEMENTS`. They need no storage here; the ``TempStorage`` declaration goes.
(Items past ``valid`` keep what they held, as DIRECT leaves them; CUB leaves them undefined.)

``BlockExchange<T, X, IPT[, slicing, Y, Z]>(temp_storage).BlockedToStriped(in, out)`` and its kin
(:data:`EXCHANGES`), and ``WarpExchange<T, IPT, W>(temp_storage[w]).BlockedToStriped(in, out)`` /
``StripedToBlocked``, exchange through the storage, a ``__shared__`` array of the segment's
elements (``[warps][W·IPT]`` for an array of warp storages)::

    for (k) storage[write position] = in[k];   __syncthreads();
    for (k) out[k] = storage[read position];   __syncthreads();

the last barrier letting the storage be used again (CUB asks its users for it). A warp's exchange
meets the whole block at its barriers: it must stand where every thread of the block reaches it.

A constant of these templates (X, IPT, ...) is an integer, a value parameter of the kernel's
template, or a local constant made of those. Any other use of these classes or of their storage
raises :class:`~.cub_blocks.CubError` with the construct.
"""
from __future__ import annotations

import dataclasses
import re

from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from ...ir.visit import expand_statements
from .cub_blocks import CubError, _args, _assign, _int, _sync

I32 = m.Scalar("int32")
BOOL = m.Scalar("bool")
_NS = r"^(?:typename\s+)?(?:::)?(?:cub::(?:\w+::)*)?"

#: each class's template parameters, in order, as the lowering names them (None: not read here)
PARAMS = {
    "BlockLoad": ("T", "X", "IPT", "algorithm", "Y", "Z"),
    "BlockStore": ("T", "X", "IPT", "algorithm", "Y", "Z"),
    "BlockExchange": ("T", "X", "IPT", None, "Y", "Z"),
    "WarpExchange": ("T", "IPT", "W"),
}
DEFAULTS = {"Y": "1", "Z": "1", "W": "32", "algorithm": "DIRECT"}

#: the arrangement of a thread's items each BlockLoad / BlockStore algorithm reads or writes
ARRANGEMENTS = {
    "DIRECT": "blocked", "STRIPED": "striped", "VECTORIZE": "blocked", "TRANSPOSE": "blocked",
    "WARP_TRANSPOSE": "blocked", "WARP_TRANSPOSE_TIMESLICED": "blocked",
}

#: BlockExchange / WarpExchange methods: (the arrangement written into the storage, the one read back)
EXCHANGES = {
    "BlockedToStriped": ("blocked", "striped"),
    "StripedToBlocked": ("striped", "blocked"),
    "BlockedToWarpStriped": ("blocked", "warp_striped"),
    "WarpStripedToBlocked": ("warp_striped", "blocked"),
    "ScatterToBlocked": ("ranks", "blocked"),
    "ScatterToStriped": ("ranks", "striped"),
}
#: the methods a logical warp's WarpExchange has here (its arrangements are the warp's own)
WARP_EXCHANGES = ("BlockedToStriped", "StripedToBlocked")
WARP = 32  # the warp of CUB's warp-striped arrangement


class CubClasses:
    """The CUB classes one lowering takes (``BlockScan|WarpScan``): which objects and which
    ``TempStorage`` types are theirs. Shared by the CUB lowerings (this module's, cub_scans',
    cub_adjacent's)."""

    def __init__(self, names: str) -> None:
        self._object = re.compile(_NS + rf"({names})<(.*)>$")
        self._storage = re.compile(_NS + rf"({names})<(.*)>::TempStorage$")

    def of(self, e) -> tuple[str, str] | None:
        """(class, template arguments) of the CUB object a method is called on, or None."""
        while True:
            match = self._object.match(str(getattr(e, "type", "")).replace("const ", ""))
            if match or not isinstance(e, m.Cast):
                return match.groups() if match else None
            e = e.operand

    def is_storage(self, t) -> bool:
        """Whether ``t`` is one of these classes' TempStorage (or an array of them, one per warp)."""
        return bool(self._storage.match(str(_element(t)).replace("const ", "")))

    def used_in(self, fn: m.Function) -> bool:
        return fn.body is not None and any((isinstance(n, m.MethodCall) and self.of(n.obj) is not None)
                                           or (isinstance(n, m.VarDecl) and self.is_storage(n.type))
                                           for n in m.walk(fn.body))


CLASSES = CubClasses("BlockLoad|BlockStore|BlockExchange|WarpExchange")


def _storage_of(obj) -> m.Expr | None:
    """The TempStorage a ``Class(temp_storage)`` object is made on (``temp_storage[w]`` too)."""
    while isinstance(obj, m.Cast):
        obj = obj.operand
    if isinstance(obj, m.Call) and obj.kind == "constructor":
        if not obj.args:
            return None
        obj = obj.args[0]
    obj = strip_implicit_casts(obj)
    if isinstance(obj, m.Ref) and obj.kind == "shared":
        return obj
    if isinstance(obj, m.Index) and isinstance(strip_implicit_casts(obj.base), m.Ref):
        return obj
    return None


def _text(e) -> str | None:
    """C text of a constant expression (for an array extent), or None."""
    if isinstance(e, m.IntLit):
        return str(e.value)
    if isinstance(e, m.Ref) and e.kind == "template":
        return e.name
    if isinstance(e, m.Cast):
        return _text(e.operand)
    if isinstance(e, m.Binary) and e.op in "+-*/":
        a, b = _text(e.lhs), _text(e.rhs)
        return f"({a} {e.op} {b})" if a and b else None
    return None


class _Constants:
    """The values of a kernel's template constants: integers, its template's value parameters and
    its local constants made of those (``constexpr int threads = BLOCK_SIZE;``)."""

    def __init__(self, fn: m.Function) -> None:
        self.params = {p.name: p for p in fn.template_params if p.kind == "value"}
        self.locals = {n.name: n.init for n in m.walk(fn.body) if isinstance(n, m.VarDecl) and n.const
                       and n.init is not None and n.storage == "local"}

    def value(self, text: str, what: str, span) -> m.Expr:
        text = re.sub(r"^\((?:int|unsigned(?: int)?)\)", "", text.strip()).strip()
        digits = text.rstrip("uUlL")
        if digits.isdigit():
            return _int(int(digits), span)
        if text in self.params:
            t = self.params[text].value_type
            return m.Ref(text, "template", t if isinstance(t, m.Scalar) else I32, span)
        value = self.resolve(self.locals.get(text))
        if value is None:
            raise CubError(f"{what}: its constant '{text}' is not an integer or a template value parameter", span)
        return value

    def extent(self, text: str, what: str, span) -> str:
        """An array extent's text (``[warps]``, ``[128 / WARP]``) with its local constants written as
        the template's values: an extent the factory can compute."""
        def name(w):
            if w.group(0) in self.params:
                return w.group(0)
            value = self.resolve(self.locals.get(w.group(0)))
            if value is None or _text(value) is None:
                raise CubError(f"{what}: its constant '{w.group(0)}' is not an integer or a template value parameter",
                               span)
            return _text(value)
        return re.sub(r"[A-Za-z_]\w*", name, text)

    def resolve(self, e, depth: int = 0) -> m.Expr | None:
        """``e`` with the local constants it names replaced by their values; None where it is not
        made of integers and the template's value parameters."""
        if e is None or depth > 16:
            return None
        if isinstance(e, m.IntLit) or (isinstance(e, m.Ref) and e.kind == "template"):
            return e
        if isinstance(e, m.Ref) and e.kind == "local":
            return self.resolve(self.locals.get(e.name), depth + 1)
        if isinstance(e, m.Cast):
            return self.resolve(e.operand, depth + 1)
        if isinstance(e, m.Binary) and e.op in "+-*/":
            a, b = self.resolve(e.lhs, depth + 1), self.resolve(e.rhs, depth + 1)
            return dataclasses.replace(e, lhs=a, rhs=b) if a is not None and b is not None else None
        return None


def _mul(a, b, span):
    if isinstance(a, m.IntLit) and a.value == 1:
        return b
    if isinstance(b, m.IntLit) and b.value == 1:
        return a
    if isinstance(a, m.IntLit) and isinstance(b, m.IntLit):
        return _int(a.value * b.value, span)
    return m.Binary("*", a, b, I32, span)


def _add(a, b, span):
    if isinstance(b, m.IntLit) and b.value == 0:
        return a
    if isinstance(a, m.IntLit) and a.value == 0:
        return b
    return m.Binary("+", a, b, I32, span)


def _at(offset, pos, span) -> m.Expr:
    """``offset + pos`` in C's type of the sum (a size_t offset keeps the index 64-bit)."""
    if offset is None:
        return pos
    t = getattr(offset, "type", None)
    wide = isinstance(t, m.Scalar) and t.dtype in ("int64", "uint64", "uint32")
    return m.Binary("+", offset, pos, t if wide else I32, span)


def _tid(d, span):
    return m.Cast(I32, m.Builtin("threadIdx", d, m.Scalar("uint32"), span), "implicit", I32, span)


class _Object:
    """One CUB object's constants: its class, T, X·Y·Z threads, IPT, its algorithm's arrangement."""

    def __init__(self, cls: str, targs: str, fn_consts: _Constants, span) -> None:
        self.cls, self.span = cls, span
        what = f"cub::{cls}<{targs}>"
        args = dict(zip(PARAMS[cls], _args(targs)))
        for k, v in DEFAULTS.items():
            args.setdefault(k, v)
        self.ipt = fn_consts.value(args["IPT"], what, span)
        if cls == "WarpExchange":
            self.w = fn_consts.value(args["W"], what, span)
        else:
            x, y, z = (fn_consts.value(args[d], what, span) for d in "XYZ")
            self.threads = _mul(_mul(x, y, span), z, span)
            rank = _tid("x", span)
            if not (isinstance(y, m.IntLit) and y.value == 1):
                rank = _add(rank, _mul(_tid("y", span), x, span), span)
            if not (isinstance(z, m.IntLit) and z.value == 1):
                rank = _add(rank, _mul(_tid("z", span), _mul(x, y, span), span), span)
            self.rank = rank
        if cls in ("BlockLoad", "BlockStore"):
            algo = re.sub(r"^(?:cub::)?BLOCK_(?:LOAD|STORE)_", "", args["algorithm"].strip())
            if algo not in ARRANGEMENTS:
                raise CubError(f"{what}: the algorithm '{args['algorithm']}'", span)
            self.arrangement = ARRANGEMENTS[algo]

    def position(self, arrangement: str, k: m.Expr, ranks=None) -> m.Expr:
        """Where item ``k`` of this thread sits in the segment, in ``arrangement``."""
        span = self.span
        if self.cls == "WarpExchange":
            lane = m.Binary("%", _linear_tid(span), self.w, I32, span)
            if arrangement == "blocked":
                return _add(_mul(lane, self.ipt, span), k, span)
            return _add(_mul(k, self.w, span), lane, span)
        if arrangement == "blocked":
            return _add(_mul(self.rank, self.ipt, span), k, span)
        if arrangement == "striped":
            return _add(_mul(k, self.threads, span), self.rank, span)
        if arrangement == "warp_striped":
            warp = m.Binary("/", self.rank, _int(WARP, span), I32, span)
            lane = m.Binary("%", self.rank, _int(WARP, span), I32, span)
            return _add(_add(_mul(warp, _mul(_int(WARP, span), self.ipt, span), span), _mul(k, _int(WARP, span), span),
                             span), lane, span)
        if arrangement == "ranks":
            return m.Cast(I32, m.Index(ranks, k, _element(ranks.type), span), "implicit", I32, span)
        raise AssertionError(arrangement)

    def segment(self) -> m.Expr:
        return _mul(self.w if self.cls == "WarpExchange" else self.threads, self.ipt, self.span)


def _linear_tid(span) -> m.Expr:
    """The thread's linear rank in its block (whose lane CUB's logical warps take modulo W)."""
    def dim(v, d):
        return m.Cast(I32, m.Builtin(v, d, m.Scalar("uint32"), span), "implicit", I32, span)
    yz = _add(dim("threadIdx", "y"), _mul(dim("threadIdx", "z"), dim("blockDim", "y"), span), span)
    return _add(dim("threadIdx", "x"), _mul(yz, dim("blockDim", "x"), span), span)


def _element(t) -> m.CType:
    while isinstance(t, (m.Array, m.Pointer)):
        t = t.element if isinstance(t, m.Array) else t.pointee
    return t


def _items(e, what, span) -> m.Expr:
    """A thread's array of items (an argument ``T (&)[IPT]``)."""
    e = strip_implicit_casts(e)
    if not isinstance(e.type, m.Array):
        raise CubError(f"{what} of '{e.type}', not a thread's array of items", span)
    return e


def _base_offset(e, what, span) -> tuple[m.Expr, m.Expr | None]:
    """(buffer, offset) of the pointer CUB loads from or stores to: ``&a[i]``, ``a + i``, ``a``."""
    e = strip_implicit_casts(e)
    if isinstance(e, m.Unary) and e.op == "&" and isinstance(e.operand, m.Index):
        return e.operand.base, e.operand.index
    if isinstance(e, m.Binary) and e.op == "+" and isinstance(getattr(e.lhs, "type", None), m.Pointer):
        return e.lhs, e.rhs
    if isinstance(e.type, (m.Pointer, m.Array)):
        return e, None
    raise CubError(f"{what} through '{e.type}', not a pointer", span)


class CubLowering:
    """What each CUB lowering keeps while it rewrites one function: the template's constants, the
    names taken, the storages it used (name -> its ``__shared__`` slots, or ("one" | "array",
    slots)); :meth:`split` (a lowering's own) rewrites one statement, or answers None."""

    #: the name of the loops over a thread's items (:meth:`loop`)
    ITEM = "cub_item"
    #: the classes whose calls :meth:`lower` rewrites
    CLASSES: CubClasses

    def __init__(self, fn: m.Function) -> None:
        self.consts = _Constants(fn)
        self.names = {n.name for n in m.walk(fn.body) if isinstance(n, m.VarDecl)}
        self.storages: dict[str, m.CType | tuple] = {}
        self.count = 0

    def fresh(self, base: str) -> str:
        while True:
            self.count += 1
            name = f"{base}_{self.count}"
            if name not in self.names:
                self.names.add(name)
                return name

    def loop(self, ipt, body_of, span) -> m.For:
        """``for (k = 0; k < ipt; k += 1) body_of(k)``."""
        k = m.Ref(self.fresh(self.ITEM), "local", I32, span)
        init = m.DeclStmt((m.VarDecl(k.name, I32, "local", False, _int(0, span), span),), span)
        return m.For(init, m.Binary("<", k, ipt, BOOL, span), m.Assign("+=", k, _int(1, span), I32, span),
                     m.Block(tuple(body_of(k)), span), (), span)

    def split(self, s) -> list | None:
        """The statements a call statement on one of ``CLASSES``'s objects becomes
        (:meth:`lower`), or None for any other statement."""
        if not isinstance(s, m.ExprStmt) or not isinstance(s.expr, m.MethodCall):
            return None
        found = self.CLASSES.of(s.expr.obj)
        return None if found is None else self.lower(s.expr, *found)

    def lower(self, call: m.MethodCall, cls: str, targs: str) -> list:
        raise NotImplementedError


def lower_with(fn: m.Function, lowering: type, users: str) -> m.Function:
    """``fn`` with each call of the classes of ``lowering`` (a :class:`CubLowering`) rewritten,
    then their storages retyped (:func:`storages_retyped`); ``fn`` itself where it uses none."""
    classes = lowering.CLASSES
    if not classes.used_in(fn):
        return fn
    low = lowering(fn)
    body = expand_statements(fn.body, low.split)
    body = storages_retyped(body, low, classes.is_storage, lambda o: (classes.of(o) or (None,))[0], users)
    return dataclasses.replace(fn, body=body)


class _Lower(CubLowering):
    CLASSES = CLASSES
    def lower(self, call: m.MethodCall, cls: str, targs: str) -> list | None:
        span = call.span
        obj = _Object(cls, targs, self.consts, span)
        if cls == "BlockLoad" and call.method == "Load" and 2 <= len(call.args) <= 4:
            return [self.load(obj, call)]
        if cls == "BlockStore" and call.method == "Store" and 2 <= len(call.args) <= 3:
            return [self.store(obj, call)]
        methods = WARP_EXCHANGES if cls == "WarpExchange" else EXCHANGES
        if cls in ("BlockExchange", "WarpExchange") and call.method in methods:
            return self.exchange(obj, call)
        raise CubError(f"cub::{cls}::{call.method} with {len(call.args)} arguments", span)

    def load(self, obj: _Object, call) -> m.For:
        span, what = call.span, "cub::BlockLoad::Load"
        base, offset = _base_offset(call.args[0], what, span)
        items = _items(call.args[1], what, span)
        t = _element(items.type)
        valid = call.args[2] if len(call.args) > 2 else None
        default = call.args[3] if len(call.args) > 3 else None

        def body(k):
            pos = obj.position(obj.arrangement, k)
            src = m.Index(base, _at(offset, pos, span), _element(base.type), span)
            if src.type != t:
                src = m.Cast(t, src, "implicit", t, span)
            load = _assign(m.Index(items, k, t, span), src, span)
            if valid is None:
                return [load]
            other = None
            if default is not None:
                value = default if default.type == t else m.Cast(t, default, "implicit", t, span)
                other = m.Block((_assign(m.Index(items, k, t, span), value, span),), span)
            return [m.If(m.Binary("<", pos, valid, BOOL, span), m.Block((load,), span), other, span)]
        return self.loop(obj.ipt, body, span)

    def store(self, obj: _Object, call) -> m.For:
        span, what = call.span, "cub::BlockStore::Store"
        base, offset = _base_offset(call.args[0], what, span)
        items = _items(call.args[1], what, span)
        t = _element(base.type)
        valid = call.args[2] if len(call.args) > 2 else None

        def body(k):
            pos = obj.position(obj.arrangement, k)
            value = m.Index(items, k, _element(items.type), span)
            if value.type != t:
                value = m.Cast(t, value, "implicit", t, span)
            store = _assign(m.Index(base, _at(offset, pos, span), t, span), value, span)
            if valid is None:
                return [store]
            return [m.If(m.Binary("<", pos, valid, BOOL, span), m.Block((store,), span), None, span)]
        return self.loop(obj.ipt, body, span)

    def exchange(self, obj: _Object, call) -> list:
        span, what = call.span, f"cub::{obj.cls}::{call.method}"
        written, read = EXCHANGES[call.method]
        ranks = _items(call.args[2], what, span) if written == "ranks" else None
        if (written == "ranks") != (len(call.args) == 3) or len(call.args) not in (2, 3):
            raise CubError(f"{what} with {len(call.args)} arguments", span)
        inp, out = _items(call.args[0], what, span), _items(call.args[1], what, span)
        t = _element(inp.type)
        storage = _storage_of(call.obj)
        if storage is None:
            raise CubError(f"{what} made other than on a __shared__ TempStorage", span)
        name = (storage.name if isinstance(storage, m.Ref) else strip_implicit_casts(storage.base).name)
        segment = obj.segment()
        extent_text = _text(segment)
        if extent_text is None:
            raise CubError(f"{what}: its storage's size is not a constant", span)
        slots = m.Array(t, segment.value if isinstance(segment, m.IntLit) else None, extent_text)
        if isinstance(storage, m.Index):  # an array of a warp's storages: [warps][W * IPT]
            decl_t = ("array", slots)
            cells = m.Index(m.Ref(name, "shared", m.Array(slots, None, ""), span), storage.index, slots, span)
        else:
            decl_t = ("one", slots)
            cells = m.Ref(name, "shared", slots, span)
        known = self.storages.setdefault(name, decl_t)
        if known != decl_t:
            raise CubError(f"TempStorage '{name}' used by exchanges of other types or sizes", span)

        def put(k):
            return [_assign(m.Index(cells, obj.position(written, k, ranks), t, span), m.Index(inp, k, t, span), span)]

        def get(k):
            value = m.Index(cells, obj.position(read, k), t, span)
            ot = _element(out.type)
            return [_assign(m.Index(out, k, ot, span), value if ot == t else m.Cast(ot, value, "implicit", ot, span),
                            span)]
        return [self.loop(obj.ipt, put, span), _sync(span), self.loop(obj.ipt, get, span), _sync(span)]


def lower_cub_moves(fn: m.Function) -> m.Function:
    """``fn`` with each CUB load, store and exchange lowered to its loops (see the module docstring)."""
    return lower_with(fn, _Lower, "a CUB load, store or exchange")


def storages_retyped(body: m.Block, low, is_storage, class_of, users: str) -> m.Block:
    """``body`` with each ``TempStorage`` declaration a lowering used retyped to the ``__shared__``
    slots it gave it (``low.storages``: name -> ("one" | "array", the slots' type), or the slots'
    type alone for one storage; an array of storages an array of slots, its extent the template's
    value), the others dropped; a storage used any other way, or a CUB call left whose value is
    used (``class_of``: the class an object's call belongs to, or None), refused naming ``users``,
    what may use one. Shared by the CUB lowerings (loads and stores, scans, adjacent differences)."""
    def storage(s) -> list | None:
        if not isinstance(s, m.DeclStmt) or not any(is_storage(d.type) for d in s.decls):
            return None
        decls = []
        for d in s.decls:
            if is_storage(d.type):
                if d.name not in low.storages:
                    continue  # a storage none of these lowerings uses
                if d.storage != "shared":
                    raise CubError(f"TempStorage '{d.name}' is not __shared__", d.span)
                used = low.storages[d.name]
                shape, slots = used if isinstance(used, tuple) else ("one", used)
                if (shape == "array") != isinstance(d.type, m.Array):
                    raise CubError(f"TempStorage '{d.name}' used as {'an array' if shape == 'array' else 'one'}",
                                   d.span)
                if shape == "array":
                    extent_text = d.type.extent_text
                    if d.type.extent is None:  # [warps], a local constant: as the template's values
                        extent_text = low.consts.extent(extent_text, f"TempStorage '{d.name}'", d.span)
                    slots = m.Array(slots, d.type.extent, extent_text)
                d = dataclasses.replace(d, type=slots, init=None)
            decls.append(d)
        return [dataclasses.replace(s, decls=tuple(decls))] if decls else []

    body = expand_statements(body, storage, every=True)
    for n in m.walk(body):
        if isinstance(n, m.Ref) and is_storage(n.type):
            raise CubError(f"TempStorage '{n.name}' used other than by {users}", n.span)
        if isinstance(n, m.MethodCall) and (found := class_of(n.obj)) is not None:
            raise CubError(f"cub::{found}::{n.method} whose value is used", n.span)
    return body
