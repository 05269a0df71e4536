"""Lambdas defined in device code as local device functions.

``auto f = [&](float v) { acc += v * scale; };`` in a kernel becomes a device function of the
unit, named for its enclosing function and variable (``kernel_f``), whose parameters are the
lambda's own followed by one reference parameter per captured variable:

- a variable captured by reference (``[&]``, ``[&x]``) is passed itself: the call ``f(x)``
  becomes ``kernel_f(x, acc, scale)``;
- a variable captured by value (``[=]``, ``[x]``) is copied where the lambda is defined into a
  local ``f__x`` (the copy the closure holds), which each call passes: a later change of ``x`` is
  not seen, and a ``mutable`` lambda's changes last from call to call, as in C++;
- another local lambda ``g`` that ``f`` captures (and calls: ``auto ker = [=](...) { ...
  data_off(...) ... }``) is no parameter itself: ``f`` takes ``g``'s captures instead, ``g``'s
  by-value copies (``g__x``, made where ``g`` is written) by reference, so that ``f``'s body
  calls ``g``'s device function as the enclosing function would. A ``mutable`` ``g`` is refused
  there (a copy of its closure would keep its own state).

A lambda with captures thus has reference parameters and is inlined at each call
(analysis.prepare.inline). What is not modelled is refused where the lambda is written, with
M1206: init-captures (``[n = 2 * m]``), ``this``, a by-value capture of an array, a lambda that
is not a local variable's initialiser (one called in place, passed to a function).
"""
from __future__ import annotations

from dataclasses import dataclass

import clang.cindex as ci

K = ci.CursorKind


@dataclass(frozen=True)
class Capture:
    name: str  # the captured variable's name (and the parameter's)
    by_ref: bool
    var: ci.Cursor  # its declaration
    # the closure copy ``g__x`` of a lambda ``g`` this one captures (its name; var gives its type)
    copy: bool = False


def key(cursor: ci.Cursor) -> str:
    """The name a lambda (which has no USR) is registered under among the unit's model names."""
    where = cursor.extent.start
    return f"lambda@{where.file.name if where.file else ''}:{where.offset}"


def lambda_of(var: ci.Cursor) -> ci.Cursor | None:
    """The lambda expression that initialises the local ``var`` (``auto f = [&](...) {...};``),
    or None."""
    kids = [c for c in var.get_children() if c.kind.is_expression()]
    node = kids[-1] if kids else None
    while node is not None and node.kind != K.LAMBDA_EXPR:
        inner = list(node.get_children())
        if node.kind not in (K.UNEXPOSED_EXPR, K.CALL_EXPR) or len(inner) != 1:
            return None
        node = inner[0]
    return node


def call_operator(cursor: ci.Cursor) -> ci.Cursor | None:
    """The closure's ``operator()``."""
    closure = cursor.type.get_declaration()
    return next((c for c in closure.get_children() if c.kind in (K.CXX_METHOD, K.FUNCTION_TEMPLATE)
                 and c.spelling == "operator()"), None)


def _introducer(cursor: ci.Cursor) -> list[list[str]]:
    """The capture list's items as token lists (``[&, x]`` → [['&'], ['x']])."""
    items, current, depth = [], [], 0
    for token in cursor.get_tokens():
        text = token.spelling
        if depth == 0:
            if text != "[":
                break
            depth = 1
            continue
        if text in ("[", "(", "{"):
            depth += 1
        elif text in ("]", ")", "}"):
            depth -= 1
            if depth == 0:
                break
        if text == "," and depth == 1:
            items.append(current)
            current = []
        else:
            current.append(text)
    if current:
        items.append(current)
    return items


def captures(cursor: ci.Cursor) -> list[Capture] | str:
    """The variables the lambda ``cursor`` captures, in order of first use, or why they are not
    modelled."""
    default, explicit = None, {}
    for item in _introducer(cursor):
        if item == ["&"] or item == ["="]:
            default = item[0]
        elif item in (["this"], ["*", "this"]):
            return "a lambda capturing 'this' is not modelled"
        elif len(item) == 1:
            explicit[item[0]] = False
        elif len(item) == 2 and item[0] == "&":
            explicit[item[1]] = True
        else:
            return f"the lambda capture '{' '.join(item)}' is not modelled"
    extent = cursor.extent
    found: dict[str, Capture] = {}
    body = [c for c in cursor.get_children() if c.kind == K.COMPOUND_STMT]
    for node in body[0].walk_preorder() if body else ():
        if node.kind != K.DECL_REF_EXPR or node.referenced is None:
            continue
        var = node.referenced
        if var.kind not in (K.VAR_DECL, K.PARM_DECL) or _static(var):
            continue
        where = var.extent.start
        inside = where.file is not None and extent.start.file is not None \
            and where.file.name == extent.start.file.name and extent.start.offset <= where.offset < extent.end.offset
        if inside or var.spelling in found:
            continue
        inner = lambda_of(var) if var.kind == K.VAR_DECL else None
        if inner is not None:  # a lambda calling another local lambda: the other's captures
            if _mutable(inner):
                return f"a lambda calling the mutable lambda '{var.spelling}' is not modelled"
            nested = captures(inner)
            if isinstance(nested, str):
                return nested
            for capture in nested:
                name = capture.name if capture.by_ref else copy_name(var.spelling, capture.name)
                found.setdefault(name, Capture(name, True, capture.var, capture.copy or not capture.by_ref))
            continue
        by_ref = explicit.get(var.spelling, default == "&" if var.spelling not in explicit else None)
        if by_ref is None:
            return f"'{var.spelling}' is used in a lambda that does not capture it"
        if _shared(var):
            by_ref = True  # not captured in C++: one array of the block
        found[var.spelling] = Capture(var.spelling, by_ref, var)
    return list(found.values())


def _mutable(cursor: ci.Cursor) -> bool:
    """Whether the lambda ``cursor`` is declared ``mutable`` (the word before its body)."""
    for token in cursor.get_tokens():
        if token.spelling == "{":
            return False
        if token.spelling == "mutable":
            return True
    return False


def lambda_name(var: ci.Cursor, model_names: dict) -> str | None:
    """The device function's name of the local lambda ``var`` holds, once its enclosing function
    registered it (a lambda another lambda calls); None for another variable."""
    lam = lambda_of(var) if var.kind == K.VAR_DECL else None
    return model_names.get(key(lam)) if lam is not None else None


def _static(var: ci.Cursor) -> bool:
    """A namespace-scope or static variable: a lambda refers to it without capturing it."""
    parent = var.semantic_parent
    if parent is None or parent.kind in (K.TRANSLATION_UNIT, K.NAMESPACE):
        return True
    return var.kind == K.VAR_DECL and var.storage_class == ci.StorageClass.STATIC


def _shared(var: ci.Cursor) -> bool:
    return any(c.kind == K.CUDASHARED_ATTR for c in var.get_children())


def copy_name(lambda_var: str, captured: str) -> str:
    """The local holding a by-value capture's copy."""
    return f"{lambda_var}__{captured}"
