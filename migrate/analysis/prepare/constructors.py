"""Structs made by the project's own constructors in device code, as the method calls that fill
them: ``Local l(p);`` (or ``Position pos = Position(x, y);``, ``pos = Position(x, y);`` on a local)
becomes ``Local l; Local_Local(l, p);``, a call of the constructor modelled as a method of the
object (its member initialisers, ``: x(_x), y(_y)``, as the first assignments of its body:
parse.frontend), which the inliner expands like any method. The declared local's type no longer
asks for a value (the constructor gives it). A constructor call anywhere else (a temporary passed
to a function, a value returned) is made first in a local of its own, where its arguments have no
effects; elsewhere (a condition) it stays, and the vectors pass names it. Runs on kernels and on
device functions."""
from __future__ import annotations

import dataclasses
import re

from ...ir import model as m
from ...ir.exprs import pure
from ...ir.names import fresh
from ...ir.visit import Transformer, expand_statements


def _constructor(e) -> m.Call | None:
    """``e`` when it is a call of one of the project's constructors on a struct modelled as lanes:
    its callee is the constructor's model name, ``<Struct>_<Struct>`` (parse.build's
    ``method_model_name``), where other constructions name the type (``float4``, ``make_float4``)."""
    if not (isinstance(e, m.Call) and e.kind == "constructor" and isinstance(e.type, m.Vector)):
        return None
    record = re.sub(r"\W+", "_", e.type.name.split("<")[0].split("::")[-1]).strip("_")
    return e if re.fullmatch(rf"{re.escape(record)}_{re.escape(record)}(_\d+)?", e.callee) else None


def _fill(obj: m.Expr, call: m.Call, span) -> m.ExprStmt:
    return m.ExprStmt(m.Call(call.callee, (obj,) + call.args, "device", (), m.Scalar("void"), span), span)


def constructed_objects(fn: m.Function) -> m.Function:
    if fn.body is None or not any(_constructor(n) is not None for n in m.walk(fn.body)):
        return fn  # (no construction: the rewrite below would rebuild the body as it is)
    taken = {n.name for n in m.walk(fn.body) if isinstance(n, (m.VarDecl, m.Ref))} | {p.name for p in fn.params}

    def temporaries(s) -> list | None:
        """``posToIdx(w, Position(x, y))``, ``return Position(x, y);``: each constructed temporary
        (its arguments free of effects, so it may be made first) a local made just before."""
        made: list = []

        class Hoist(Transformer):
            def leave_Call(self, node):
                if _constructor(node) is None or not all(pure(a) for a in node.args):
                    return node
                name = fresh(f"{node.callee.split('_')[0].lower()}_tmp", taken)
                t = dataclasses.replace(node.type, initialised=False)
                made.append(m.DeclStmt((m.VarDecl(name, t, "local", False, None, node.span),), node.span))
                made.append(_fill(m.Ref(name, "local", t, node.span), node, node.span))
                return m.Ref(name, "local", t, node.span)

        out = Hoist().transform(s)
        return made + [out] if made else None

    def split(s):
        if isinstance(s, m.DeclStmt) and any(_constructor(d.init) for d in s.decls):
            out = []
            for d in s.decls:
                call = _constructor(d.init)
                if call is None:
                    out.append(m.DeclStmt((d,), s.span))
                    continue
                t = dataclasses.replace(d.type, initialised=False) if isinstance(d.type, m.Vector) else d.type
                out.append(m.DeclStmt((dataclasses.replace(d, type=t, init=None),), s.span))
                out.append(_fill(m.Ref(d.name, "local", t, d.span), call, s.span))
            return out
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
                and isinstance(s.expr.target, m.Ref) and s.expr.target.kind == "local" \
                and _constructor(s.expr.value) is not None:
            return [_fill(s.expr.target, s.expr.value, s.span)]
        if isinstance(s, (m.ExprStmt, m.DeclStmt, m.Return)):
            return temporaries(s)
        return None

    return dataclasses.replace(fn, body=expand_statements(fn.body, split, every=True))
