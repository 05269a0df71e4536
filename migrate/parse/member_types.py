"""Member types of a kernel template's type parameters, as type parameters of their own.

    template <typename VectorType>
    __global__ void waxby_kernel(int n, typename VectorType::ScalarType alpha,
                                 const typename VectorType::ScalarType *x, ...)

A kernel template that the unit never launches nor instantiates (M1208: miniFE's kernels are
launched from host templates that only other units instantiate) is converted generically, its
factory taking each template parameter (``make_k(..., T="float32")``). Where it reads a type
parameter only through a member type (``typename VectorType::ScalarType``), that member has no
dtype until an instance names ``VectorType``; it is the type the kernel computes in, and the kernel
computes the same thing for every ``VectorType`` whose member is the same type. So each member type
so written becomes one more type parameter of the generic kernel, named ``VectorType_ScalarType``
(its factory takes it as a dtype), and clang's spellings of it — the written
``typename VectorType::ScalarType`` and the canonical ``typename type-parameter-0-0::ScalarType``
of the expressions' types — are read as that parameter (:func:`.build.convert_type`).
"""
from __future__ import annotations

import clang.cindex as ci

K = ci.CursorKind


class TemplateNames(frozenset):
    """The template parameter names a function's types may name, and ``members``: the spelling
    of each member type taken as a parameter of its own (``VectorType::ScalarType`` and
    ``type-parameter-0-0::ScalarType``) -> that parameter's name (``VectorType_ScalarType``)."""

    members: dict[str, str]

    def __new__(cls, names=(), members=None):
        obj = super().__new__(cls, names)
        obj.members = dict(members or {})
        return obj


def member_type_params(cursor: ci.Cursor, params: list[tuple[str, str]]
                       ) -> tuple[list[tuple[str, dict[str, str]]], set[str]]:
    """(the member types, the parameters they replace) of the function template ``cursor``
    (``params``: (name, "type" or "value") of its template parameters, in order). Each member type
    ``typename P::M`` it writes of a type parameter ``P`` is (parameter name ``P_M``, {spelling:
    name}), first written first; ``P`` is replaced where the function names it nowhere else (no
    ``sizeof(P)``, no ``P::value``): its factory takes the member types instead."""
    names = [n for n, _k in params]
    type_params = [n for n, k in params if k == "type"]
    found: dict[str, dict[str, str]] = {}
    tokens = [t.spelling for t in cursor.get_tokens()]
    as_member: dict[str, int] = {}
    for i in range(len(tokens) - 3):
        if tokens[i] != "typename" or tokens[i + 2] != "::" or tokens[i + 1] not in type_params:
            continue
        if i + 4 < len(tokens) and tokens[i + 4] in ("::", "<"):
            continue  # a member of a member, or a member template: not one type of its own
        param, member = tokens[i + 1], tokens[i + 3]
        if not member.isidentifier():
            continue
        as_member[param] = as_member.get(param, 0) + 1
        name = f"{param}_{member}"
        if name in names or name in found:
            continue
        index = names.index(param)
        found[name] = {f"{param}::{member}": name, f"type-parameter-0-{index}::{member}": name}
    # each parameter is named once in the template's own parameter list (template <typename P>)
    replaced = {p for p, count in as_member.items() if tokens.count(p) == count + 1}
    return list(found.items()), replaced


def member_spelling(spelling: str) -> str | None:
    """``P::M`` for a dependent member type's bare spelling ``typename P::M``, else None."""
    if not spelling.startswith("typename "):
        return None
    rest = spelling[len("typename "):].strip()
    parts = rest.split("::")
    return rest if len(parts) == 2 and all(p.replace("-", "_").isidentifier() for p in parts) else None
