"""Device functions that return a pointer into a buffer they are given, their body one ``return``
(``return can_pair(i, j, n, s) ? &a[ind(i, j, n)] : 0;``): each call is the expression returned,
written in the caller's terms (``v1 = can_pair(k, j, n, s) ? &v[ind(k, j, n)] : 0;``), so the
pointer passes see a view of the caller's buffer (or a view that may be null). A macro cannot
return a pointer, so without this the kernel is refused.

The expression is evaluated where the call was, once per call, as C evaluates the callee's body;
the arguments must have no effects (each may then be read any number of times). Calls of device
functions inside the returned expression stay calls (C makes them there too)."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.visit import Transformer
from .inline import _returned_expression


def pointer_returns(fn: m.Function, device: dict[str, m.Function] | None) -> m.Function:
    if fn.body is None or not device:
        return fn
    returning = {name for name, f in device.items() if isinstance(f.returns, m.Pointer)}
    if not any(isinstance(n, m.Call) and n.kind == "device" and n.callee in returning for n in m.walk(fn.body)):
        return fn

    class Sub(Transformer):
        def leave_Call(self, node):
            if node.kind != "device" or node.callee not in returning:
                return node
            value = _returned_expression(device[node.callee], node, calls=True)
            return node if value is None else value

    body = Sub().transform(fn.body)
    if body is fn.body:
        return fn
    named = {n.callee for n in m.walk(body) if isinstance(n, m.Call) and n.kind == "device"}
    calls = tuple(c for c in fn.calls if c in named or c not in returning)
    calls += tuple(sorted(c for c in named if c not in calls))
    return dataclasses.replace(fn, body=body, calls=calls)
