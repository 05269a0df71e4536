"""A kernel parameter pointing to a struct of device buffers (``clusters_t* clusters`` with
``struct {float* N; float* pi; float* means; ...}``, copied to the device once and passed to every
kernel), as one buffer parameter per pointer field the kernel reads: ``clusters->means[c * D + d]``
is ``clusters_means[c * D + d]``. The parameters stand where the struct's pointer stood, each
marked with the field it is (``Param.field_of``): the launcher takes the struct's buffers (a dict
by field, an object with the fields as attributes, or a tuple in field order) and a recorded
launch passes the buffers the struct's pointers reach.

Refused with the reason: the struct's pointer used other than to read a pointer field (passed
on, stepped, a field of another kind read), a field assigned a pointer."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from ...ir.loops import NoTileLangForm
from ...ir.visit import Transformer


def pointer_fields(t: m.CType) -> m.Record | None:
    """The laid-out struct ``t`` points to when some of its fields are pointers, or None."""
    if isinstance(t, m.Pointer) and isinstance(t.pointee, m.Record) and t.pointee.fields \
            and any(isinstance(f, m.Pointer) for _n, _o, f in t.pointee.fields):
        return t.pointee
    return None


def record_pointers(fn: m.Function) -> m.Function:
    if not fn.is_kernel or fn.body is None:
        return fn
    records = {p.name: pointer_fields(p.type) for p in fn.params if pointer_fields(p.type) is not None}
    if not records:
        return fn
    taken = {n.name for n in m.walk(fn.body) if isinstance(n, (m.VarDecl, m.Ref))} | {p.name for p in fn.params}
    names: dict[tuple[str, str], str] = {}
    for struct, record in records.items():
        for field, _offset, t in record.fields:
            if isinstance(t, m.Pointer):
                name = f"{struct}_{field}"
                while name in taken:
                    name += "_"
                taken.add(name)
                names[(struct, field)] = name

    used: set[tuple[str, str]] = set()

    def field_read(e) -> tuple[str, str] | None:
        """(struct parameter, field) where ``e`` reads a pointer field of one, else None."""
        if not isinstance(e, m.Member):
            return None
        base = strip_implicit_casts(e.base)
        if not e.arrow:  # (*c).f, c[0].f
            if isinstance(base, m.Unary) and base.op == "*":
                base = strip_implicit_casts(base.operand)
            elif isinstance(base, m.Index) and isinstance(base.index, m.IntLit) and base.index.value == 0:
                base = strip_implicit_casts(base.base)
            else:
                return None
        if isinstance(base, m.Ref) and base.name in records and (base.name, e.field) in names:
            return base.name, e.field
        return None

    class Fields(Transformer):
        def transform(self, node):
            if isinstance(node, m.Assign) and field_read(node.target) is not None:
                raise NoTileLangForm(f"the field '{node.target.field}' of '{records[field_read(node.target)[0]]}' "
                                     "is assigned a pointer: its buffer would change within the kernel", node.span)
            if isinstance(node, m.Unary) and node.op in ("++", "--") and field_read(node.operand) is not None:
                raise NoTileLangForm(f"the field '{node.operand.field}' of '{records[field_read(node.operand)[0]]}'"
                                     " is stepped: its buffer would change within the kernel", node.span)
            found = field_read(node)
            if found is not None:
                used.add(found)
                t = dict((f, t) for f, _o, t in records[found[0]].fields)[found[1]]
                return m.Ref(names[found], "param", t, node.span)
            if isinstance(node, m.Ref) and node.name in records:
                raise NoTileLangForm(f"'{node.name}' points to '{records[node.name]}', a struct of buffers, and is "
                                     "used other than to read its pointer fields (c->field)", node.span)
            return super().transform(node)

    body = Fields().transform(fn.body)
    params = []
    for p in fn.params:
        if p.name not in records:
            params.append(p)
            continue
        for field, offset, t in records[p.name].fields:
            if (p.name, field) in used:
                params.append(m.Param(names[(p.name, field)], t, False, p.span, field_of=(p.name, field, offset)))
    return dataclasses.replace(fn, params=tuple(params), body=body)
