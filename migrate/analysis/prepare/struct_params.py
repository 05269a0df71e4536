"""Kernel parameters of the project's structs that hold pointers, passed by value (tpacf's
``ACFKernel(cartesian g_idata1, ...)`` with ``struct cartesian {double *x, *y, *z; int *jk;}``,
lbm's ``lbm_vars d_vars`` holding structs of pointers), as one parameter per field: a pointer
field is a buffer, a number a scalar, a nested struct's fields are named by their path
(``d_vars.u.u0`` is the buffer ``d_vars_u_u0``). Each new parameter keeps the struct and the
field's byte offset (``Param.lane_of``), so the launcher takes the struct whole, as a dict or
tuple of its fields (runtime.tilelang_support, a ``"fields"`` parameter).

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
    return t.fields if isinstance(t, m.Record) else ()


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


def struct_fields_as_params(fn: m.Function) -> m.Function:
    """``fn`` with each by-value parameter of a struct of pointers (``m.Record.fields``) replaced
    by its fields' parameters (:mod:`module docs <.struct_params>`)."""
    structs = {p.name: p for p in fn.params if isinstance(p.type, m.Record) and p.type.fields}
    if not structs or fn.body is None:
        return fn
    taken = {p.name for p in fn.params} | {n.name for n in m.walk(fn.body) if isinstance(n, (m.VarDecl, m.Ref))}
    names: dict[tuple[str, str], str] = {}
    params = []
    for p in fn.params:
        if p.name not in structs:
            params.append(p)
            continue
        for field, ftype, offset in p.type.fields:
            name = fresh(f"{p.name}_{field.replace('.', '_')}", taken)
            taken.add(name)
            names[(p.name, field)] = name
            params.append(m.Param(name, ftype, False, p.span, (p.name, offset)))
    # the copies an inlined device function makes of the struct (Vars v = d_vars;): other names of it
    alias = {name: name for name in structs}
    decls = {}
    changed = True
    while changed:
        changed = False
        for n in m.walk(fn.body):
            if isinstance(n, m.VarDecl) and n.name not in alias and n.init is not None and _fields(n.type):
                init = strip_implicit_casts(n.init)
                if isinstance(init, m.Ref) and init.name in alias:
                    alias[n.name] = alias[init.name]
                    decls[id(n)] = n
                    changed = True
    for n in m.walk(fn.body):
        target = n.target if isinstance(n, m.Assign) else \
            n.operand if isinstance(n, m.Unary) and n.op in ("++", "--", "&") else None
        root = target  # (a store through a pointer field, g.x[i] = v, leaves the struct as it is)
        while isinstance(root, m.Member) and not root.arrow:
            root = root.base
        root = strip_implicit_casts(root) if root is not None else None
        if isinstance(root, m.Ref) and root.name in alias and root.kind in ("param", "local"):
            what = "its address taken" if isinstance(n, m.Unary) and n.op == "&" else "assigned"
            raise StructParamError(f"parameter '{alias[root.name]}' of '{structs[alias[root.name]].type}' "
                                   f"(a struct holding pointers, passed by value) has a field or itself {what}: "
                                   "its fields are parameters of their own", n.span)
    span_of = {name: p.span for name, p in structs.items()}

    class Fields(Transformer):
        def leave_Member(self, node):
            found = _path(node)
            if found is None or found[0] not in alias:
                return node
            key = (alias[found[0]], found[1])
            if key not in names:
                return node  # s.u of s.u.u0: the outer member names the field
            ptype = next(t for f, t, _o in structs[key[0]].type.fields if f == key[1])
            return m.Ref(names[key], "param", ptype, node.span)

    body = Fields().transform(fn.body)

    class Drop(Transformer):
        def leave_Block(self, node):
            stmts = tuple(s for s in node.stmts if not (isinstance(s, m.DeclStmt) and s.decls
                                                        and all(isinstance(d, m.VarDecl) and d.name in alias
                                                                and d.name not in structs for d in s.decls)))
            return node if len(stmts) == len(node.stmts) else dataclasses.replace(node, stmts=stmts)

    body = Drop().transform(body)
    for n in m.walk(body):
        if isinstance(n, m.Ref) and n.name in alias and n.kind in ("param", "local"):
            name = alias[n.name]
            raise StructParamError(f"parameter '{name}' of '{structs[name].type}' (a struct holding pointers, "
                                   "passed by value) is used whole, not field by field: its fields are "
                                   "parameters of their own", n.span or span_of[name])
    return dataclasses.replace(fn, params=tuple(params), body=body)
