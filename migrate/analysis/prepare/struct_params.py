"""Kernel parameters of the project's structs that hold pointers, passed by value (tpacf's
``ACFKernel(cartesian g_idata1, ...)`` with ``struct cartesian {double *x, *y, *z; int *jk;}``,
lbm's ``lbm_vars d_vars`` holding structs of pointers), as one parameter per field: a pointer
field is a buffer, a number a scalar, a nested struct's fields are named by their path
(``d_vars.u.u0`` is the buffer ``d_vars_u_u0``). Each new parameter keeps the struct and the
field's byte offset (``Param.lane_of``), so the launcher takes the struct whole, as a dict or
tuple of its fields (runtime.tilelang_support, a ``"members"`` parameter).

A device function called with the struct is inlined first (analysis.prepare.inline: a macro
takes no struct); the copy its by-value parameter makes is a name for the kernel's parameter
when nothing assigns it. The struct must be read field by field: a field assigned, the struct's
address taken or the struct used whole otherwise is refused with a message that says so."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from ...ir.names import fresh
from ...ir.visit import Transformer


class StructParamError(Exception):
    def __init__(self, message: str, span=None) -> None:
        super().__init__(message)
        self.span = span


def _fields(t) -> tuple:
    t = t.target if isinstance(t, m.Reference) else t
    return t.members if isinstance(t, m.Record) else ()


def _path(e) -> tuple[str, str] | None:
    """(root name, field path) of ``s.u.u0`` (members read by ``.`` off a name); None otherwise."""
    names = []
    while isinstance(e, m.Member) and not e.arrow:
        names.insert(0, e.field)
        e = e.base
    e = strip_implicit_casts(e)
    if isinstance(e, m.Ref) and names:
        return e.name, ".".join(names)
    return None


def _large(t) -> bool:
    """Whether ``t`` is one of the project's structs of numbers with more fields than may each be
    a parameter (analysis.prepare.vectors.LOCAL_LANES)."""
    from .vectors import LOCAL_LANES
    return isinstance(t, m.Vector) and t.name not in m.VECTOR_TYPES and t.lanes > LOCAL_LANES


def _aliases(body, names) -> tuple[dict, set]:
    """The locals of ``body`` that copy one of the structs ``names`` (``Vars v = d_vars;``, the copy
    an inlined device function makes of its by-value parameter): local -> the struct it copies,
    ``names`` themselves included; and the copies' declarations."""
    alias = {name: name for name in names}
    copies = set()
    changed = True
    while changed:
        changed = False
        for n in m.walk(body):
            if isinstance(n, m.VarDecl) and n.name not in alias and n.init is not None:
                init = strip_implicit_casts(n.init)
                if isinstance(init, m.Ref) and init.name in alias:
                    alias[n.name] = alias[init.name]
                    copies.add(n.name)
                    changed = True
    return alias, copies


def _check_unwritten(body, alias, structs, what: str, through_index: bool) -> None:
    """Refuse a struct of ``structs`` (or a copy in ``alias``) whose field, or which itself, is
    assigned or has its address taken (a ``const`` parameter's address may be: C++ lets nothing
    write through it); with ``through_index``, an element of an array field counts as a field (a
    store through a pointer field does not)."""
    const = {name for name, p in structs.items() if p.const}
    for n in m.walk(body):
        address = isinstance(n, m.Unary) and n.op == "&"
        target = n.target if isinstance(n, m.Assign) else \
            n.operand if isinstance(n, m.Unary) and n.op in ("++", "--", "&") else None
        root = target  # (a store through a pointer field, g.x[i] = v, leaves the struct as it is)
        while isinstance(root, m.Member) and not root.arrow or through_index and isinstance(root, m.Index):
            root = root.base
        root = strip_implicit_casts(root) if root is not None else None
        if isinstance(root, m.Ref) and root.name in alias and root.kind in ("param", "local") \
                and not (address and alias[root.name] in const):
            did = "its address taken" if address else "assigned"
            name = alias[root.name]
            raise StructParamError(f"parameter '{name}' of '{structs[name].type}' ({what}, passed by value) has a "
                                   f"field or itself {did}", n.span)


class _DropCopies(Transformer):
    def __init__(self, copies: set) -> None:
        self.copies = copies

    def leave_Block(self, node):
        stmts = tuple(s for s in node.stmts if not (isinstance(s, m.DeclStmt) and s.decls and all(
            isinstance(d, m.VarDecl) and d.name in self.copies for d in s.decls)))
        return node if len(stmts) == len(node.stmts) else dataclasses.replace(node, stmts=stmts)


def large_structs_as_buffers(fn: m.Function) -> m.Function:
    """``fn`` with each by-value parameter of a struct of numbers too large to be one parameter
    per field (flame's ``ConstMemParams`` of 482 floats and ints, read as
    ``params.pre_transform_params[idx][0]``) taken as a buffer holding the struct: ``params.f``
    reads ``params->f``, and the launcher passes the struct's bytes (``Param.whole``). The struct
    must not be assigned, in whole or in part: the kernel's copy is the caller's then."""
    structs = {p.name: p for p in fn.params if _large(p.type)}
    if not structs or fn.body is None:
        return fn
    alias, copies = _aliases(fn.body, structs)
    _check_unwritten(fn.body, alias, structs, "a struct read through a buffer holding it", True)
    pointers = {name: m.Pointer(p.type, True) for name, p in structs.items()}

    class Through(Transformer):
        def leave_Member(self, node):
            base = strip_implicit_casts(node.base)
            if node.arrow or not isinstance(base, m.Ref) or base.name not in alias or \
                    base.kind not in ("param", "local"):
                return node
            name = alias[base.name]
            return dataclasses.replace(node, base=m.Ref(name, "param", pointers[name], base.span), arrow=True)

    body = _DropCopies(copies).transform(Through().transform(fn.body))
    for n in m.walk(body):
        if isinstance(n, m.Ref) and n.name in alias and n.kind in ("param", "local") \
                and not isinstance(n.type, m.Pointer):
            name = alias[n.name]
            raise StructParamError(f"parameter '{name}' of '{structs[name].type}' (a struct of "
                                   f"{structs[name].type.lanes} fields read through a buffer holding it, passed "
                                   "by value) is used whole, not field by field", n.span)
    params = tuple(m.Param(p.name, pointers[p.name], p.const, p.span, whole=True) if p.name in structs else p
                   for p in fn.params)
    return dataclasses.replace(fn, params=params, body=body)


def struct_fields_as_params(fn: m.Function) -> m.Function:
    """``fn`` with each by-value parameter of a struct of pointers (``m.Record.members``) replaced
    by its fields' parameters (:mod:`module docs <.struct_params>`), and each of a struct too
    large for a parameter per field taken as a buffer holding it (:func:`large_structs_as_buffers`)."""
    fn = large_structs_as_buffers(fn)
    structs = {p.name: p for p in fn.params if isinstance(p.type, m.Record) and p.type.members}
    if not structs or fn.body is None:
        return fn
    taken = {p.name for p in fn.params} | {n.name for n in m.walk(fn.body) if isinstance(n, (m.VarDecl, m.Ref))}
    names: dict[tuple[str, str], str] = {}
    params = []
    for p in fn.params:
        if p.name not in structs:
            params.append(p)
            continue
        for field, ftype, offset in p.type.members:
            name = fresh(f"{p.name}_{field.replace('.', '_')}", taken)
            taken.add(name)
            names[(p.name, field)] = name
            params.append(m.Param(name, ftype, False, p.span, (p.name, offset)))
    # the copies an inlined device function makes of the struct (Vars v = d_vars;): other names of it
    alias, copies = _aliases(fn.body, structs)
    _check_unwritten(fn.body, alias, structs, "a struct holding pointers", False)
    span_of = {name: p.span for name, p in structs.items()}

    class Fields(Transformer):
        def leave_Member(self, node):
            found = _path(node)
            if found is None or found[0] not in alias:
                return node
            key = (alias[found[0]], found[1])
            if key not in names:
                return node  # s.u of s.u.u0: the outer member names the field
            ptype = next(t for f, t, _o in structs[key[0]].type.members if f == key[1])
            return m.Ref(names[key], "param", ptype, node.span)

    body = Fields().transform(fn.body)

    body = _DropCopies(copies).transform(body)
    for n in m.walk(body):
        if isinstance(n, m.Ref) and n.name in alias and n.kind in ("param", "local"):
            name = alias[n.name]
            raise StructParamError(f"parameter '{name}' of '{structs[name].type}' (a struct holding pointers, "
                                   "passed by value) is used whole, not field by field: its fields are "
                                   "parameters of their own", n.span or span_of[name])
    return dataclasses.replace(fn, params=tuple(params), body=body)
