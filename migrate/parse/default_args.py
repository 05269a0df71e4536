"""Default arguments written out at each call: ``warpReduceSum(val)`` of ``T warpReduceSum(T val,
unsigned width = warpSize)`` becomes ``warpReduceSum(val, warpSize)``.

clang leaves a defaulted argument out of the call's source (an expression without a spelling;
in a template the call names only the arguments written), so without this a call would carry
fewer arguments than its callee has parameters: inlined, the parameter would be left unbound and
read whatever the caller names so (a kernel parameter ``width``); printed as a macro call, the
macro would miss an argument. Defaults are read off the callee's declaration, where C++ allows
them to name only constants and globals, so each stands for itself at any call site.
"""
from __future__ import annotations

import dataclasses
import re

from ..ir import model as m
from ..ir.visit import Transformer


def with_default_arguments(functions: dict[str, m.Function],
                           defaults: dict[str, tuple[m.Expr | None, ...]]) -> dict[str, m.Function]:
    """``functions`` with every call to one of them (a user device function, not a dispatch
    among overloads, or a constructor of the project's) given its trailing defaulted arguments;
    ``defaults``: function name -> the default of each parameter (None where it has none). A call
    still short of arguments is left as it is (its callee's declaration had no default there:
    clang reported it)."""
    if not any(d is not None for ds in defaults.values() for d in ds):
        return functions

    class Fill(Transformer):
        def leave_Call(self, node: m.Call):
            if node.kind not in ("device", "constructor"):
                return node
            callee = node.callee
            if node.dispatch:
                # f<N>(x) on a primary template's explicit specialisations by value: they take the
                # primary's defaults (C++ gives a specialisation none of its own)
                callee = _primary_of_values(node.dispatch)
                if callee is None:
                    return node
            ds = defaults.get(callee)
            if ds is not None and node.kind == "constructor":
                ds = ds[1:]  # the project's constructor (Params p; of Params(int n = 4)): its object aside
            if ds is None or len(node.args) >= len(ds):
                return node
            missing = ds[len(node.args):]
            if any(d is None for d in missing):
                return node
            return dataclasses.replace(node, args=node.args + tuple(missing))

    fill = Fill()
    return {name: fn if fn.body is None else fill.transform(fn) for name, fn in functions.items()}


def _primary_of_values(dispatch: tuple) -> str | None:
    """The primary template of a dispatch among explicit specialisations by value (its entries'
    keys integers or truth values, one the primary's), or None."""
    entries = dispatch[1]
    primary = [model for key, model in entries if tuple(key) == m.PRIMARY_TEMPLATE]
    values = all(re.fullmatch(r"-?\d+|true|false", k) for key, _ in entries if tuple(key) != m.PRIMARY_TEMPLATE
                 for k in key)
    return primary[0] if len(primary) == 1 and values else None
