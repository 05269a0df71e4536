"""A templated device function as the instance one call reaches, for inlining: its template
parameters bound from the call's template arguments (``swap<K>(a, b)``, ``f<float, 4>(x)``) and,
for the type parameters left, deduced from the arguments' types (``exch(K& a, K& b)`` called on
locals of type ``K`` or ``int``); every type and every use of a value parameter in the body is
then that binding. The caller's own template types may be the binding (a templated kernel
calling ``exch(k0, k1)`` on its ``K``): they are the caller's, printed as its ``K``."""
from __future__ import annotations

import ast
import dataclasses
import math
import re

from ... import dtypes
from ...ir import model as m


def bindings(callee: m.Function, call: m.Call) -> dict | None:
    """Template parameter name -> model type (type parameters) or literal (value parameters) for
    ``call``; None when one is neither written nor deducible."""
    out: dict = {}
    for param, text in zip(callee.template_params, call.template_args):
        value = _written(param, text)
        if value is None:
            if param.kind == "type":
                continue  # a spelling not read here (`const Window *`): deduced from the arguments below
            return None
        out[param.name] = value
    for param, arg in zip(callee.params, call.args):
        _deduce(param.type, _value_type(arg), out)
    for param in callee.template_params:
        if param.name not in out and param.default is not None:
            value = _written(param, param.default)
            if value is not None:
                out[param.name] = value
    return out if all(p.name in out for p in callee.template_params) else None


def instantiate(fn: m.Function, binding: dict) -> m.Function:
    """``fn``'s parameters and body with every template parameter replaced by its binding."""
    types = {k: v for k, v in binding.items() if not isinstance(v, _VALUES)}
    values = {k: v for k, v in binding.items() if isinstance(v, _VALUES)}

    def ctype(t):
        if isinstance(t, m.TemplateType):
            return types.get(t.name, t)
        if isinstance(t, m.Opaque) or isinstance(t, m.Record) and not t.size:
            # a type spelled with the value parameters (CUB's ``typename BlockReduce<T, kBlockDimX,
            # ...>::TempStorage`` in a device function template): the instance's values written in
            return _with_values(t, values)
        if isinstance(t, m.Pointer):
            return dataclasses.replace(t, pointee=ctype(t.pointee))
        if isinstance(t, m.Reference):
            return dataclasses.replace(t, target=ctype(t.target))
        if isinstance(t, m.Array):
            extent = _bound_extent(t, values)
            if extent is not None:  # int travIds[STACK_SIZE] in template <int STACK_SIZE>
                return dataclasses.replace(t, element=ctype(t.element), extent=extent, extent_text=str(extent))
            return dataclasses.replace(t, element=ctype(t.element))
        return t

    def node(n):
        if isinstance(n, tuple):
            return tuple(node(x) for x in n)
        if isinstance(n, m._TYPES):
            return ctype(n)
        if not m._is_node(n):
            return n
        if isinstance(n, m.Ref) and n.kind == "template" and n.name in values:
            return dataclasses.replace(values[n.name], span=n.span)
        if isinstance(n, m.Call) and any(a in binding for a in n.template_args):  # g<T>(v) inside f<T>
            n = dataclasses.replace(n, template_args=tuple(_spelling(binding[a]) if a in binding else a
                                                           for a in n.template_args))
        if isinstance(n, m.Call) and n.kind == "var_template":  # its value for the instance, if clang gave one
            args = tuple(_spelling(binding[a]) if a in binding else a for a in n.template_args)
            value = next((lit for dts, lit in (n.dispatch[1] if n.dispatch else ()) if tuple(dts) == args), None)
            if value is not None:
                return dataclasses.replace(value, span=n.span)
            return dataclasses.replace(n, template_args=args)
        bound = tuple(_bound_value(p, binding) for p in n.dispatch[0]) if isinstance(n, m.Call) and n.dispatch else ()
        if bound and all(isinstance(b, (m.IntLit, m.BoolLit, m.Scalar)) for b in bound):
            # f<N>(x) on explicit specialisations by value (f<N - 1>(x) in f's primary template),
            # hash(key) on overloads by the type of a KeyT key: the instance's values or dtypes pick one
            key = tuple(b.dtype if isinstance(b, m.Scalar) else str(int(b.value)) for b in bound)
            chosen = [model for k, model in n.dispatch[1] if tuple(k) == key]
            by_value = all(isinstance(b, (m.IntLit, m.BoolLit)) for b in bound)
            if not chosen:
                # no overload of the instance's number types, no specialisation of its values: the
                # primary template, where the table has it (an instance of its own values)
                chosen = [model for k, model in n.dispatch[1] if tuple(k) in (m.PRIMARY_TEMPLATE, m.PRIMARY_FOR_NUMBERS)
                          and (by_value or all(isinstance(b, m.Scalar) for b in bound))]
                args = tuple(_spelling(b) for b in bound) if by_value and chosen else ()
            else:
                args = ()
            if chosen:
                n = dataclasses.replace(n, callee=chosen[0], dispatch=(), template_args=args)
        changes = {f.name: node(getattr(n, f.name)) for f in dataclasses.fields(n) if f.name != "span"}
        return dataclasses.replace(n, **changes)

    return dataclasses.replace(fn, params=node(fn.params), returns=ctype(fn.returns), body=node(fn.body),
                               template_params=())


def _with_values(t, values: dict):
    """``t`` (an opaque or fieldless record type) with each bound integer value parameter its
    spelling names replaced by its value; ``t`` itself where it names none."""
    ints = {k: v for k, v in values.items() if isinstance(v, m.IntLit)}
    spelled = t.spelling if isinstance(t, m.Opaque) else t.name
    if not ints or not any(w in ints for w in re.findall(r"[A-Za-z_]\w*", spelled)):
        return t
    text = re.sub(r"(?<![\w:.-])[A-Za-z_]\w*\b(?!\s*(?:::|<|-))",
                  lambda w: str(ints[w.group(0)].value) if w.group(0) in ints else w.group(0), spelled)
    return dataclasses.replace(t, spelling=text) if isinstance(t, m.Opaque) else dataclasses.replace(t, name=text)


def _bound_value(text: str, binding: dict):
    """A dispatch's template argument for the binding: a bound parameter's binding, or the value
    of an expression on bound value parameters (``N - 1`` in ``f<N - 1>`` with ``N`` bound to 4:
    3); None where it is neither."""
    if text in binding:
        return binding[text]
    names = set(re.findall(r"[A-Za-z_]\w*", text))
    if not names or not all(isinstance(binding.get(x), m.IntLit) for x in names):
        return None
    expr = re.sub(r"[A-Za-z_]\w*", lambda w: str(binding[w.group(0)].value), text)
    if not re.fullmatch(r"[\d\s+\-*()]+", expr):
        return None  # (division and remainder: C truncates where Python floors; not taken)
    try:
        value = eval(expr, {"__builtins__": {}}, {})  # digits and + - * ( ) only
    except (SyntaxError, ZeroDivisionError):
        return None
    return m.IntLit(value, str(value), binding[next(iter(names))].type, binding[next(iter(names))].span) \
        if isinstance(value, int) else None


def _bound_extent(t: m.Array, values: dict) -> int | None:
    """The extent of an array sized by value parameters (``[STACK_SIZE]``, ``[2 * N + 1]``) once
    they are bound to literals; None where it is known already or cannot be computed."""
    if t.extent is not None or not t.extent_text:
        return None
    names = set(re.findall(r"[A-Za-z_]\w*", t.extent_text))
    if not names or not all(isinstance(values.get(x), m.IntLit) for x in names):
        return None
    text = re.sub(r"[A-Za-z_]\w*", lambda w: str(values[w.group(0)].value), t.extent_text)
    if not re.fullmatch(r"[\d\s+\-*/()%]+", text):
        return None
    try:
        value = eval(text.replace("/", "//"), {"__builtins__": {}}, {})  # digits and operators only
    except (SyntaxError, ZeroDivisionError):
        return None
    return value if isinstance(value, int) and value > 0 else None


#: bindings of value parameters: a literal, or the caller's own value parameter forwarded (f<N>(x))
_VALUES = (m.IntLit, m.BoolLit, m.Ref, m.Binary, m.Unary)


def _spelling(bound) -> str:
    """A binding as a template argument's text (read back by :func:`_written`)."""
    if isinstance(bound, m.Scalar):
        return bound.dtype
    if isinstance(bound, m.TemplateType):
        return bound.name
    if isinstance(bound, (m.IntLit, m.BoolLit)):
        return str(bound.value).lower() if isinstance(bound, m.BoolLit) else str(bound.value)
    if isinstance(bound, m.Ref):
        return bound.name
    if isinstance(bound, m.Binary):  # (STEPS * MARGIN_X): read back by _written
        return f"({_spelling(bound.lhs)} {bound.op} {_spelling(bound.rhs)})"
    if isinstance(bound, m.Unary):
        return f"(-{_spelling(bound.operand)})"
    return str(bound)


def _written(param: m.TemplateParam, text: str):
    text = text.strip()
    if param.kind == "type":
        dtype = dtypes.TEMPLATE_SPELLINGS.get(text) or m.SCALAR_DTYPES.get(text) or (
            text if text in dtypes.BY_NAME else None)
        if dtype is not None:
            return m.Scalar(dtype)
        if text in m.VECTOR_TYPES:
            return m.Vector(text, *m.VECTOR_TYPES[text])
        if re.fullmatch(r"[A-Za-z_]\w*", text):
            return m.TemplateType(text)  # the caller's own template parameter
        return None
    if text in ("true", "false"):
        return m.BoolLit(text == "true", m.Scalar("bool"), param.span)
    vtype = param.value_type if isinstance(param.value_type, m.Scalar) else m.Scalar("int32")
    if re.fullmatch(r"-?\d+", text):
        return m.IntLit(int(text), text, vtype, param.span)
    if re.fullmatch(r"[A-Za-z_]\w*", text):
        return m.Ref(text, "template", vtype, param.span)  # the caller's own value parameter
    value = _integer_expression(text)  # a macro's text: f<(8 * 4)> for f<BS> with #define BS (8 * 4)
    if value is not None:
        return m.IntLit(value, str(value), vtype, param.span)
    return _arithmetic(text, vtype, param.span)


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}


def _arithmetic(text: str, vtype: m.Scalar, span):
    """A value argument written as ``+``, ``-`` and ``*`` of integers and the caller's own value
    parameters (``STEPS * MARGIN_X`` in tsa's ``trotter_vert_pair<T, ..., STEPS * MARGIN_X, ...>``)
    as the model's expression of them; None for anything else (a division, whose C rounding the
    text would have to keep, a call, a cast)."""
    if not re.fullmatch(r"[\w\s+\-*()]+", text):
        return None
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None

    def build(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return m.IntLit(n.value, str(n.value), vtype, span)
        if isinstance(n, ast.Name):
            return m.Ref(n.id, "template", vtype, span)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            inner = build(n.operand)
            return m.Unary("-", inner, False, vtype, span) if inner is not None else None
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            lhs, rhs = build(n.left), build(n.right)
            return m.Binary(_OPS[type(n.op)], lhs, rhs, vtype, span) if lhs is not None and rhs is not None else None
        return None

    return build(tree)


_INT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
            ast.Div: lambda a, b: int(a / b) if b else None, ast.Mod: lambda a, b: math.fmod(a, b) if b else None,
            ast.LShift: lambda a, b: a << b if 0 <= b < 64 else None, ast.RShift: lambda a, b: a >> b if b >= 0 else None}


def _integer_expression(text: str) -> int | None:
    """The value of a C integer constant expression of literals and + - * / % << >> (C's
    truncating division), or None for anything else."""
    if not re.fullmatch(r"[\d\s+\-*/%()<>]+", text) or "//" in text:
        return None
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None

    def value(n):
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = value(n.operand)
            return None if v is None else (-v if isinstance(n.op, ast.USub) else v)
        if isinstance(n, ast.BinOp) and type(n.op) in _INT_OPS:
            a, b = value(n.left), value(n.right)
            r = None if a is None or b is None else _INT_OPS[type(n.op)](a, b)
            return None if r is None else int(r)
        return None

    return value(tree)


def _value_type(arg: m.Expr) -> m.CType:
    while isinstance(arg, m.Cast) and arg.style == "implicit" and isinstance(arg.type, m.Pointer):
        arg = arg.operand  # an array passed as a pointer: its element type
    return arg.type


def _deduce(p: m.CType, a: m.CType, out: dict) -> None:
    if isinstance(p, m.Reference):
        p = p.target
    if isinstance(a, m.Reference):
        a = a.target
    if isinstance(p, m.TemplateType):
        if isinstance(a, (m.Scalar, m.TemplateType, m.Vector, m.Pointer)):  # T bound to `const int*` too
            out.setdefault(p.name, a)
    elif isinstance(p, m.Pointer) and isinstance(a, m.Pointer):
        _deduce(p.pointee, a.pointee, out)
    elif isinstance(p, m.Pointer) and isinstance(a, m.Array):
        _deduce(p.pointee, a.element, out)
