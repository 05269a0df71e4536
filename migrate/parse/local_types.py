"""Types declared inside a function (``struct Acc {float sum, weight;};``, ``union {float f; int
i;} u;``, ``enum Mode {...}``) read as if declared at namespace scope.

The declaration statement itself is dropped (parse.build's ``visit_DECL_STMT``); each use carries
the type, which :func:`~migrate.parse.build.convert_type` converts as any struct, union or enum
of the project's. Only its name changes: a local type is named for its function (``Acc`` in
``kernel`` is ``kernel_Acc``, an unnamed one ``kernel_L12`` for its line), so two functions'
local types of one name stay apart wherever the model names a type.
"""
from __future__ import annotations

import re

import clang.cindex as ci

K = ci.CursorKind

_FUNCTIONS = frozenset({K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR,
                        K.CONVERSION_FUNCTION, K.LAMBDA_EXPR})


def local_type_name(ctype: ci.Type) -> str | None:
    """The unique name of a struct, union or enum declared in a function body; None for any other
    type."""
    decl = ctype.get_declaration()
    if decl is None or decl.kind not in (K.STRUCT_DECL, K.CLASS_DECL, K.UNION_DECL, K.ENUM_DECL):
        return None
    parent = decl.semantic_parent
    if parent is None or parent.kind not in _FUNCTIONS:
        return None
    own = decl.spelling
    if not own or decl.is_anonymous() or own.startswith("("):
        own = f"L{decl.location.line}"
    owner = parent.spelling
    if parent.kind in (K.CXX_METHOD, K.CONSTRUCTOR) and parent.semantic_parent is not None:
        owner = f"{parent.semantic_parent.spelling}_{owner}"
    return re.sub(r"\W+", "_", f"{owner}_{own}").strip("_")
