"""Vector locals that only carry another element type's bytes, retyped as vectors of that type.

Half kernels move eight halves as one ``float4`` (one 16-byte load or store) and work on them
through a ``half2`` view of the local::

    float4 g8 = reinterpret_cast<const float4*>(gradient)[i];     // gradient: half*
    half2* g2 = reinterpret_cast<half2*>(&g8);
    float4 r8;
    half2* r2 = reinterpret_cast<half2*>(&r8);
    for (int j = 0; j < 4; j++) r2[j] = __hmul2(g2[j], g2[j]);
    float4* out8 = reinterpret_cast<float4*>(out) + i;           // out: half*
    *out8 = r8;

No float lane of ``g8`` or ``r8`` is ever read: each holds eight halves (a view may also start at a
lane's address: ``(half2*)&g8.y`` is ``(half2*)&g8 + 1``). Such a local (a CUDA
vector whose address is cast to a pointer of another element type ``E``) is rewritten into a
vector of ``E`` with as many lanes as its bytes hold (``float4`` over ``half``: eight
``float16``), as are the copies that fill it or store it whole and the vector views of ``E``
buffers they read or write (``reinterpret_cast<const float4*>(gradient)``, the local pointer
``out8``): :mod:`.vectors` then holds the local as an array of its lanes (``half g8[8]``), the
``half2`` views as views of that array, and each copy as a copy of ``E`` lanes.

A local read any other way (``g8.x``, arithmetic, a call), or copied from a view of a buffer of
yet another type, is left as it is: the vectors pass refuses the view of another type's bits,
naming it.
"""
from __future__ import annotations

import dataclasses

from ...dtypes import SIZES
from ...ir import model as m
from ...ir.exprs import strip_implicit_casts


def _element(t) -> str | None:
    """The scalar dtype a pointer or one-dimensional array ``t`` holds (a vector's lane dtype)."""
    inner = t.pointee if isinstance(t, m.Pointer) else t.element if isinstance(t, m.Array) else None
    if isinstance(inner, m.Scalar):
        return inner.dtype
    if isinstance(inner, m.Vector) and not inner.lane_dtypes:
        return inner.dtype
    return None


def _cuda_vector(t) -> m.Vector | None:
    """``t`` where it is a CUDA vector, or a plain struct of lanes of one type laid out as one
    (``struct __half4 { __half x, y, z, w; }``: no padding between fields of one type)."""
    if not (isinstance(t, m.Vector) and not t.lane_dtypes):
        return None
    return t if t.name in m.VECTOR_TYPES or t.fields and len(t.fields) == t.lanes else None


def _bytes(v: m.Vector) -> int:
    return SIZES[v.dtype] * v.lanes


def _addressed(body) -> dict[str, set]:
    """Vector local -> the element dtypes its address is cast to (``(half2*)&v``: float16)."""
    out: dict[str, set] = {}
    for n in m.walk(body):
        if isinstance(n, m.Cast) and isinstance(n.type, m.Pointer):
            inner = strip_implicit_casts(n.operand)
            if isinstance(inner, m.Unary) and inner.op == "&" and isinstance(inner.operand, m.Ref) \
                    and _cuda_vector(inner.operand.type):
                out.setdefault(inner.operand.name, set()).add(_element(n.type))
    return out


class _Containers:
    def __init__(self, fn: m.Function) -> None:
        self.body = fn.body
        self.decls = {d.name: d for d in m.walk(fn.body) if isinstance(d, m.VarDecl)}
        counts: dict[str, int] = {}
        for n in m.walk(fn.body):
            if isinstance(n, m.Ref):
                counts[n.name] = counts.get(n.name, 0) + 1
        self.counts = counts

    def foreign(self, e, v: m.Vector, pointers: dict) -> tuple[str, list] | None:
        """``e`` (a place or value of vector type ``v``) as a vector read or written through a view
        of a buffer of another element type: (that dtype, the nodes to retype, the pointer locals
        it goes through); None for anything else."""
        e = strip_implicit_casts(e)
        if isinstance(e, m.Index):
            base, nodes = e.base, [e]
        elif isinstance(e, m.Unary) and e.op == "*":
            base, nodes = e.operand, [e]
        else:
            return None
        return self.foreign_pointer(base, v, nodes, pointers)

    def foreign_pointer(self, base, v, nodes, pointers):
        base = strip_implicit_casts(base)
        if isinstance(base, m.Binary) and base.op in ("+", "-") and isinstance(base.rhs.type, m.Scalar):
            return self.foreign_pointer(base.lhs, v, nodes + [base], pointers)
        if isinstance(base, m.Ref) and base.kind == "local" and isinstance(base.type, m.Pointer) \
                and base.type.pointee == v and base.name in self.decls:
            d = self.decls[base.name]
            if d.init is None:
                return None
            found = self.foreign_pointer(d.init, v, [], pointers)
            if found is None:
                return None
            pointers[base.name] = found
            return found[0], nodes
        if isinstance(base, m.Cast) and isinstance(base.type, m.Pointer) and base.type.pointee == v:
            dtype = _element(strip_implicit_casts(base.operand).type)
            if dtype is None or dtype == v.dtype or isinstance(getattr(base.operand.type, "pointee", None), m.Vector):
                return None
            return dtype, nodes + [base]
        return None


_LANES = ("x", "y", "z", "w")


def _lane_addresses(body):
    """``body`` with each ``(P*)&v.y`` (a pointer cast of the address of a CUDA vector local's
    lane, gemv's ``(__half2*)&vec_val.y`` on a ``float4 vec_val``) written ``(P*)&v + k``: the same
    address, ``k`` elements of ``P`` in (the lane's byte offset a whole number of them), which
    the container's views take; an offset that is not a whole number of them stays as written."""
    def visit(node):
        new = m.map_children(node, visit)
        if not (isinstance(new, m.Cast) and isinstance(new.type, m.Pointer)):
            return new
        inner = strip_implicit_casts(new.operand)
        if not (isinstance(inner, m.Unary) and inner.op == "&" and isinstance(inner.operand, m.Member)
                and not inner.operand.arrow and isinstance(inner.operand.base, m.Ref)
                and inner.operand.base.kind == "local"):
            return new
        v, field = _cuda_vector(inner.operand.base.type), inner.operand.field
        pointee = new.type.pointee
        size = SIZES.get(pointee.dtype, 0) * (pointee.lanes if isinstance(pointee, m.Vector) else 1) \
            if isinstance(pointee, (m.Scalar, m.Vector)) and not getattr(pointee, "lane_dtypes", ()) else 0
        if v is None or field not in _LANES[:v.lanes] or not size:
            return new
        at = _LANES.index(field) * SIZES[v.dtype]
        if at % size:
            return new
        whole = m.Unary("&", inner.operand.base, False, m.Pointer(v), inner.span)
        cast = dataclasses.replace(new, operand=whole)
        if at == 0:
            return cast
        k = at // size
        return m.Binary("+", cast, m.IntLit(k, str(k), m.Scalar("int32"), new.span), new.type, new.span)

    return visit(body)


def retype_bit_containers(fn: m.Function) -> m.Function:
    """``fn`` with each vector local that carries another element type's bytes (see the module
    docstring) retyped as a vector of that type, with its copies and the views they go through."""
    if fn.body is None:
        return fn
    lanes = _lane_addresses(fn.body)
    if lanes != fn.body:
        fn = dataclasses.replace(fn, body=lanes)
    addressed = _addressed(fn.body)
    if not addressed:
        return fn
    c = _Containers(fn)
    chosen: dict[str, m.Vector] = {}  # container -> its new type
    retype: dict[int, m.Vector] = {}  # node id -> the vector its type becomes (a pointer's pointee)
    pointer_locals: dict[str, m.Vector] = {}
    for name, dtypes in addressed.items():
        d = c.decls.get(name)
        v = _cuda_vector(d.type) if d is not None else None
        if v is None or len(dtypes) != 1 or None in dtypes:
            continue
        (dtype,) = dtypes
        if dtype == v.dtype or dtype not in SIZES or _bytes(v) % SIZES[dtype]:
            continue
        w = m.Vector(v.name, dtype, _bytes(v) // SIZES[dtype])
        uses, nodes, pointers = 0, [], {}
        ok = True
        # its copies: T x = view[i];  x = view[i];  *p = x;  view[i] = x
        sides = []
        if d.init is not None and not (isinstance(d.init, m.Call) and d.init.kind == "constructor" and not d.init.args):
            sides.append(d.init)
        for n in m.walk(fn.body):
            if isinstance(n, m.Assign) and n.op == "=" and _cuda_vector(n.type) == v:
                target, value = strip_implicit_casts(n.target), strip_implicit_casts(n.value)
                if isinstance(target, m.Ref) and target.name == name:
                    sides.append(value)
                    nodes.append(n)
                    uses += 1
                elif isinstance(value, m.Ref) and value.name == name:
                    sides.append(target)
                    nodes.append(n)
                    uses += 1
            elif isinstance(n, m.Cast) and isinstance(n.type, m.Pointer):
                inner = strip_implicit_casts(n.operand)
                if isinstance(inner, m.Unary) and inner.op == "&" and isinstance(inner.operand, m.Ref) \
                        and inner.operand.name == name:
                    uses += 1
                    nodes.append(inner)
        for side in sides:
            found = c.foreign(side, v, pointers)
            if found is None or found[0] != dtype:
                ok = False
                break
            nodes += found[1]
        # every reference to it is one of those; every use of a pointer local a copy's
        if not ok or uses != c.counts.get(name, 0):
            continue
        if any(c.counts.get(p, 0) != sum(1 for n in nodes if isinstance(n, m.Index) and _root_is(n.base, p)
                                         or isinstance(n, m.Unary) and n.op == "*" and _root_is(n.operand, p))
               for p in pointers):
            continue
        chosen[name] = w
        for n in nodes:
            retype[id(n)] = w
        for p, (_, pnodes, *_rest) in pointers.items():
            pointer_locals[p] = w
            for n in pnodes:
                retype[id(n)] = w
    if not chosen:
        return fn
    return dataclasses.replace(fn, body=_Retyper(chosen, pointer_locals, retype).visit(fn.body))


def _root_is(e, name) -> bool:
    e = strip_implicit_casts(e)
    while isinstance(e, m.Binary) and e.op in ("+", "-"):
        e = strip_implicit_casts(e.lhs)
    return isinstance(e, m.Ref) and e.name == name


def _pointer(t: m.Pointer, w: m.Vector) -> m.Pointer:
    return dataclasses.replace(t, pointee=w)


class _Retyper:
    def __init__(self, containers, pointers, nodes) -> None:
        self.containers, self.pointers, self.nodes = containers, pointers, nodes

    def visit(self, node):
        key = id(node)
        new = m.map_children(node, self.visit)
        if isinstance(new, m.VarDecl) and new.name in self.containers:
            init = new.init
            if isinstance(init, m.Call) and init.kind == "constructor" and not init.args:
                init = None
            return dataclasses.replace(new, type=self.containers[new.name], init=init)
        if isinstance(new, m.VarDecl) and new.name in self.pointers:
            return dataclasses.replace(new, type=_pointer(new.type, self.pointers[new.name]))
        if isinstance(new, m.Ref) and new.name in self.containers:
            return dataclasses.replace(new, type=self.containers[new.name])
        if isinstance(new, m.Ref) and new.name in self.pointers and isinstance(new.type, m.Pointer):
            return dataclasses.replace(new, type=_pointer(new.type, self.pointers[new.name]))
        w = self.nodes.get(key)
        if w is None:
            return new
        if isinstance(new, m.Cast):
            return dataclasses.replace(new, target=_pointer(new.target, w), type=_pointer(new.type, w))
        if isinstance(new.type, m.Pointer):
            return dataclasses.replace(new, type=_pointer(new.type, w))
        return dataclasses.replace(new, type=w)
