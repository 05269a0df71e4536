"""Whether statements copy the lanes of one whole vector between contiguous array elements.

Real kernels move data in 8- and 16-byte packs (``uint4 p = reinterpret_cast<const
uint4*>(row)[k];`` read as eight halves, ``reinterpret_cast<uint4*>(out)[k] = p;``): one load or
store instruction per pack, which the CUDA's vector type promises is aligned to its size.
Scalarised (:mod:`migrate.analysis.prepare.vectors`), such a copy is one statement per lane,
``p[j] = row[8*k + j]``, which no compiler merges back, not knowing that the first lane's address
is aligned. The scalariser marks these statements (``ExprStmt.lanes``) where
:func:`lane_copies` holds, and the printer writes a marked run that still holds it as one
vectorised loop over the lanes, each index spelled as the multiple of the lane count it is.

The same holds for an ``atomicAdd`` on a ``__half2``: one 32-bit atomic in the CUDA, two 16-bit
ones on the same word once scalarised (26x slower on an H100, f16atomic). The scalariser marks the
two lane adds where :func:`lane_adds` holds, and the printer makes them one ``T.atomic_addx2``.

A lane of a global buffer read or written on its own (``input[pixel_at].y``) has its unsigned
element index converted to int64 before it is scaled (:func:`widened`); a run of lanes accessed
whole, one address for them all, keeps the index in its own type (:func:`unwidened`).
"""
from __future__ import annotations

from ... import dtypes
from ...ir import model as m
from .affine import linear_form

#: the sizes, in bytes, of the vector accesses kept whole (the GPU's 8- and 16-byte loads and stores)
WHOLE_BYTES = (8, 16)

#: the type :func:`widened` converts an element index to
WIDE = m.Scalar("int64")


def _unsigned_narrow(t) -> bool:
    return isinstance(t, m.Scalar) and t.dtype.startswith("uint") and dtypes.SIZES.get(t.dtype, 8) < 8


def widened(vectors: m.Expr, wrapping: frozenset = frozenset()) -> m.Expr:
    """The element index of a lane of a global buffer of vectors (``input[pixel_at].y`` of a
    ``uchar3*``), converted to int64 before the scalariser scales it by the lane count where it
    is unsigned and narrower: C adds it to the pointer in 64 bits, and so may the compiler add
    the lane (one wide address, then ``[R+0]``, ``[R+1]``, ``[R+2]``). Scaled in uint32,
    ``pixel_at * 3 + 1`` may wrap, so nvcc makes each lane's address on its own (dpid 1.13-1.16x
    slower on an H100), and past 2**32 scalars it wraps where C does not. A signed index keeps
    its type: its overflow is undefined, which lets nvcc add the lanes already; a constant one
    too. So does one that subtracts (``(px - 1) + (py - 1) * w`` under ``px > 0 && py > 0``):
    TVM bounds an unsigned sum as if it never wrapped, ``px + 4294967295`` from 4294967295 up,
    so that in 64 bits the index would be proven past the buffer's end and its guarded read
    dropped (the C target's bounds checks); so does one reading a local in ``wrapping``
    (:func:`wrapping_locals`: ``xl = x - 1``). The conversion is an implicit one (C's pointer
    arithmetic), which :func:`unwidened` drops again."""
    if not _unsigned_narrow(vectors.type) or isinstance(vectors, m.IntLit) \
            or isinstance(vectors, m.Cast) and isinstance(vectors.operand, m.IntLit) \
            or _may_wrap_down(vectors, wrapping):
        return vectors
    return m.Cast(WIDE, vectors, "implicit", WIDE, vectors.span)


def is_widened(e: m.Expr) -> bool:
    """``e`` is an element index :func:`widened` converted (an implicit int64 cast of a narrower
    unsigned value)."""
    return isinstance(e, m.Cast) and e.style == "implicit" and e.target == WIDE and _unsigned_narrow(e.operand.type)


def _may_wrap_down(e: m.Expr, wrapping=frozenset()) -> bool:
    """Whether ``e`` subtracts or negates, holds a constant outside int32 (``-1u``) or reads a
    local in ``wrapping``."""
    return any(isinstance(n, m.Binary) and n.op == "-" or isinstance(n, m.Unary) and n.op in ("-", "~", "--")
               or isinstance(n, m.IntLit) and not 0 <= n.value < 2 ** 31
               or isinstance(n, m.Ref) and n.name in wrapping for n in m.walk(e))


def wrapping_locals(body) -> frozenset:
    """The locals of ``body`` some value given them may wrap below zero (:func:`_may_wrap_down`:
    ``x - 1``, ``i -= s``, ``i--``), itself or through another such local."""
    values: dict[str, list] = {}
    down = set()
    for n in m.walk(body):
        if isinstance(n, m.VarDecl) and n.init is not None:
            values.setdefault(n.name, []).append(n.init)
        elif isinstance(n, m.Assign) and isinstance(n.target, m.Ref):
            values.setdefault(n.target.name, []).append(n.value)
            if n.op == "-=":
                down.add(n.target.name)
        elif isinstance(n, m.Unary) and n.op == "--" and isinstance(n.operand, m.Ref):
            down.add(n.operand.name)
    while True:
        more = {name for name, vs in values.items() if name not in down
                and any(_may_wrap_down(v, frozenset(down)) for v in vs)}
        if not more:
            return frozenset(down)
        down |= more


def unwidened(index: m.Expr) -> m.Expr:
    """``index``, a lane's place ``E * L + k``, without the int64 conversion :func:`widened` gave
    ``E`` (the index in ``E``'s own type, as before it): for the lanes of one vector accessed
    whole (a vectorised lane loop, a folded lane dimension), whose one address the conversion
    does not make cheaper; any other ``index`` as it is."""
    if not (isinstance(index, m.Binary) and index.op == "+" and isinstance(index.lhs, m.Binary)
            and index.lhs.op == "*"):
        return index
    scaled = index.lhs
    e = scaled.lhs
    if not is_widened(e):
        return index
    narrow = m.Binary("*", e.operand, scaled.rhs, e.operand.type, scaled.span)
    return m.Binary("+", narrow, index.rhs, index.rhs.type, index.span)


def _element(e) -> m.Index | None:
    """``e`` where it is a plain element of an array (a buffer, a view of one, a local array)."""
    if isinstance(e, m.Index) and isinstance(e.base, m.Ref) and isinstance(e.type, m.Scalar):
        return e
    return None


def _offset(a: m.Expr, b: m.Expr) -> int | None:
    """``b - a`` where it is a constant, else None."""
    fa, fb = linear_form(a), linear_form(b)
    if fa is None or fb is None or set(fa[0]) != set(fb[0]) or any(fa[0][k][0] != fb[0][k][0] for k in fa[0]):
        return None
    return fb[1] - fa[1]


def _contiguous(elements, sizes=WHOLE_BYTES) -> bool:
    """Whether ``elements`` are ``a[x + j]`` for ``j`` = 0, 1, ... in order: at least two plain
    elements of one array, of one scalar type, one of ``sizes`` bytes in all."""
    if len(elements) < 2 or any(e is None for e in elements):
        return False
    first = elements[0]
    if dtypes.SIZES.get(first.type.dtype, 0) * len(elements) not in sizes:
        return False
    return all(e.type == first.type and e.base.name == first.base.name and _offset(first.index, e.index) == j
               for j, e in enumerate(elements))


def _assignments(stmts) -> list | None:
    """The plain assignments ``stmts`` are, one each, or None where one is something else."""
    out = []
    for s in stmts:
        a = s.expr if isinstance(s, m.ExprStmt) else None
        if not isinstance(a, m.Assign) or a.op != "=":
            return None
        out.append(a)
    return out


def lane_copies(stmts) -> bool:
    """Whether ``stmts`` are ``a[x + j] = b[y + j]`` for ``j`` = 0, 1, ... in order: one array
    element of one scalar type copied each, to and from the same two arrays, their ``len(stmts)``
    lanes :data:`WHOLE_BYTES` in all."""
    assigns = _assignments(stmts)
    if assigns is None:
        return False
    targets, values = [_element(a.target) for a in assigns], [_element(a.value) for a in assigns]
    return _contiguous(targets) and _contiguous(values) and targets[0].type == values[0].type


def lane_stores(stmts) -> bool:
    """Whether ``stmts`` are ``a[x + j] = v_j`` for ``j`` = 0, 1, ... in order: one array
    element of one scalar type stored each, to the same array, their ``len(stmts)`` lanes
    :data:`WHOLE_BYTES` in all, whatever the values (a vector built of scalars, ``d[i] = {ox, oy,
    oz, 0.f}``, stored whole where the CUDA's vector element promises the alignment)."""
    assigns = _assignments(stmts)
    return assigns is not None and _contiguous([_element(a.target) for a in assigns])


def lane_loads(stmts) -> bool:
    """Whether ``stmts`` declare one scalar local each, valued ``a[x + j]`` for ``j`` = 0, 1, ...
    in order: contiguous elements of one array of one scalar type, :data:`WHOLE_BYTES` in all
    (the lanes of ``const float4 p = d[i]``)."""
    if not all(isinstance(s, m.DeclStmt) and len(s.decls) == 1 for s in stmts):
        return False
    sources = [_element(s.decls[0].init) for s in stmts]
    return _contiguous(sources) and all(s.decls[0].type == sources[0].type for s in stmts)


#: the callees whose lane adds of a ``__half2`` are made one paired atomic again (a system-scope
#: one goes through the compat table's helper, lane by lane)
PAIRED_ADDS = ("atomicAdd", "atomicAdd_block")


def _added(s) -> m.Index | None:
    """The element ``a[x]`` that ``s``, ``atomicAdd(&a[x], v);`` with its old value unused, adds
    to, where it is a float16 element of an array."""
    call = s.expr if isinstance(s, m.ExprStmt) else None
    if not isinstance(call, m.Call) or call.callee not in PAIRED_ADDS or len(call.args) != 2:
        return None
    address = call.args[0]
    if not (isinstance(address, m.Unary) and address.op == "&"):
        return None
    element = _element(address.operand)
    if element is None or element.type.dtype != "float16" or call.args[1].type != element.type:
        return None
    return element


def lane_adds(stmts) -> bool:
    """Whether ``stmts`` are ``atomicAdd(&a[x + j], v_j)`` for ``j`` = 0, 1: the two float16 lanes
    of one ``__half2`` added atomically to consecutive elements of one array, ``x`` even where the
    CUDA's ``__half2`` address was aligned (the printer's ``T.atomic_addx2`` reads its first
    element's address as a ``half2*``: only the scalariser, which saw that address, marks them)."""
    return len(stmts) == 2 and _contiguous([_added(s) for s in stmts], sizes=(4,))
