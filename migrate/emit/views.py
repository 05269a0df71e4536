"""Views of another element type (analysis.prepare.pointer_views.TypedViews) as TileLang buffers
on the same memory: ``T.view`` of a shared array, ``T.decl_buffer(..., data=p.data)`` of a kernel's
buffer parameter. Portable and tile forms declare them alike."""
from __future__ import annotations

from ..dtypes import SIZES
from ..ir import model as m
from .printer import EmitError, Scope, StmtPrinter, dtype_of, scalar_name


def declare_views(views, scope: Scope, add, indent: int = 3) -> None:
    """The declarations of views of another element type (analysis.prepare.pointer_views.TypedViews),
    after the arrays they view: ``T.view`` of a shared array, ``T.decl_buffer(..., data=p.data)``
    of a buffer parameter's memory."""
    for d in views:  # int* idx = (int*)&scores[64]: scores' memory read as int32
        elem, base = m.element_type(d.type), m.element_type(d.init.type)
        if d.init.kind == "param":  # unsigned long* buf = (unsigned long*)ptr: ptr's memory in whole words
            of, held = StmtPrinter(scope, indent=0).expr(d.init), element_bytes(d.init.type.pointee)
            size = element_bytes(elem)
            shape = f"{of}.shape[0]{'' if held == 1 else f' * {held}'}{'' if size == 1 else f' // {size}'}"
            add(indent, f"{d.name} = T.decl_buffer(({shape},), {dtype_of(elem, scope)}, data={of}.data)",
                scope.tag(d.span))
            continue
        if d.storage == "extern_shared":  # the bytes the launch gives, as the array holds them
            shape = f"shared_bytes // {element_bytes(base)} * {element_bytes(base)} // {element_bytes(elem, scope)}"
        else:
            shape = str(d.type.extent)
        add(indent, f"{d.name} = T.view({d.init.name}, ({shape},), {dtype_of(elem, scope)})", scope.tag(d.span))


def element_bytes(t: m.CType, scope: Scope | None = None) -> int | str:
    """Bytes per element, for extern ``__shared__`` arrays: a number, or for a template's type
    parameter the expression counting them when the factory runs."""
    if isinstance(t, m.TemplateType) and scope is not None and t.name in scope.type_params:
        return f"(T.dtype({scope.type_params[t.name]}).bits // 8)"
    name = scalar_name(t)
    if name not in SIZES:
        raise EmitError(f"dynamic shared memory of type '{t}'")
    return SIZES[name]
