"""Which views of another element type (analysis.prepare.pointer_views.TypedViews) a lifted
kernel may carry.

A view of a kernel's buffer parameter (``unsigned long* buf = (unsigned long*)ptr`` on a
``char* ptr``: ``ptr_uint64``, a ``T.decl_buffer`` on ``ptr.data``) is another name of global
memory: the lifts take it as a buffer of its own, and the tile form declares it as the portable
form does. That is sound as long as the lifts' store proofs, which compare the places one name
is indexed at, see every access to that memory under one name: so a parameter that the kernel
stores to may be reached through one name only (itself or one view). A kernel that only reads
a parameter may read it through any number of views.

A ``__shared__`` array that the kernel reaches through one view alone (``T* tile =
reinterpret_cast<T*>(smem)`` on an ``extern __shared__ unsigned char smem[]`` that nothing else
indexes) is that view's array: :func:`retype_sole_views` declares it with the view's element
type, under the view's name, and the lifts see one shared array as before. Any other view of a
``__shared__`` array (the array read as two types, or two views) stays refused: the lifts that
reason about shared memory (block reductions, scans, forwarded caches) take each shared array
alone.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m


def retype_sole_views(fn: m.Function) -> m.Function:
    """``fn`` with each ``__shared__`` array that only one view reaches declared as that view
    (its name, element type and extent in those elements, the array's place and storage), the
    view's own declaration gone; ``fn`` itself when there is none."""
    if fn.body is None:
        return fn
    decls = {d.name: d for d in m.walk(fn.body) if isinstance(d, m.VarDecl)}
    views = [d for d in decls.values() if d.storage in ("shared", "extern_shared") and isinstance(d.init, m.Ref)
             and d.init.kind != "param"]
    inits = {id(d.init) for d in views}
    reached: dict[str, int] = {}  # an array -> how often the body names it outside its views' declarations
    for n in m.walk(fn.body):
        if isinstance(n, m.Ref) and id(n) not in inits:
            reached[n.name] = reached.get(n.name, 0) + 1
    replace: dict[str, m.VarDecl] = {}
    drop: set[str] = set()
    for v in views:
        array = decls.get(v.init.name)
        if array is None or array.init is not None or reached.get(array.name) \
                or sum(w.init.name == array.name for w in views) != 1 or not isinstance(v.type, m.Array) \
                or v.type.extent is None and array.storage != "extern_shared":
            continue
        replace[array.name] = m.VarDecl(v.name, v.type, array.storage, False, None, array.span)
        drop.add(v.name)
    if not replace:
        return fn

    def rewrite(node):
        if isinstance(node, m.DeclStmt):
            kept = tuple(replace.get(d.name, d) for d in node.decls if d.name not in drop)
            return m.DeclStmt(kept, node.span) if kept else m.Empty(node.span)
        return m.map_children(node, rewrite)
    return dataclasses.replace(fn, body=rewrite(fn.body))


def view_refusal(fn: m.Function) -> tuple[str, m.Span] | None:
    """Why the lifts cannot carry the typed views ``fn`` declares, and where; None where they
    can (it has none, or only views of buffer parameters that pass the rule above)."""
    if fn.body is None:
        return None
    decls = [d for d in m.walk(fn.body) if isinstance(d, m.VarDecl)
             and d.storage in ("shared", "extern_shared") and isinstance(d.init, m.Ref)]
    for d in decls:
        if d.init.kind != "param":
            return f"shared array '{d.init.name}' is also read as {m.element_type(d.type)}", d.span
    if not decls:
        return None
    views = {d.name: d.init.name for d in decls}
    params = set(views.values())
    inits = {id(d.init) for d in decls}  # a view's declaration names its parameter: no access
    names: dict[str, set[str]] = {}  # parameter -> the names the kernel reaches its memory by
    stored: set[str] = set()  # parameters the kernel stores to (assignments, ++/--, atomics)
    for n in m.walk(fn.body):
        if isinstance(n, m.Ref) and id(n) not in inits and (n.name in views or n.name in params):
            names.setdefault(views.get(n.name, n.name), set()).add(n.name)
        target = m.store_target(n)
        if target is None and isinstance(n, m.Call) and n.kind == "atomic" and n.args:
            target = n.args[0]
        root = m.access_root(target) if target is not None and not isinstance(target, m.Ref) else None
        if root is not None:
            stored.add(views.get(root.name, root.name))
    for param in sorted(stored):
        used = sorted(names.get(param, ()))
        if len(used) > 1:
            span = next(d.span for d in decls if d.init.name == param)
            return (f"buffer '{param}' is stored to and reached as {' and '.join(repr(u) for u in used)} "
                    "(views of other element types): the lift proves stores apart one name at a time"), span
    return None
