"""Shared arrays each thread uses as its own scratch, as arrays local to the element.

Kernels with no barrier at all sometimes keep per-thread scratch in shared memory, one column per
thread (entropy's histogram of a pixel's neighbourhood):

    __shared__ int count[16][BX * BY];
    const int me = threadIdx.y * BX + threadIdx.x;
    for (int k = 0; k < 16; k++) count[k][me] = 0;
    ... count[v][me]++; ...
    for (int k = 0; k < 16; k++) e -= tab[count[k][me]];

Every access of ``count`` names the thread's own key ``me`` at the same position, so no thread
reads or writes another thread's cells: the array is the thread's own ``int count[16]``. This
pass rewrites such an array into a local array of the other dimensions (a local scalar, zero,
when the key is its only index: a cell read before any store held no value in CUDA either), and
the kernel is then a map for :mod:`.map` (one element per CUDA thread, its scratch a
``T.alloc_local``).

Taken only when the kernel (with its device functions) has no barrier, warp or cooperative-group
operation or fence, and the array is a ``__shared__`` array (not ``extern``; its dimensions other
than the key's constants) whose every use is a full element access ``S[i]..[j]`` (never its
address, a pointer to it, or an argument) or an ``atomicAdd(&S[i]..[j], v)`` statement whose old
value is unread, which adds to the thread's own cell alone: a plain ``+=`` of the local. The key is, after single-assignment locals are expanded,
``threadIdx.x`` in a kernel that indexes threads in x only, or ``threadIdx.y * W + threadIdx.x``
in one that indexes threads in x and y, ``W`` being ``blockDim.x`` or a constant: distinct threads
then have distinct keys when the block's width is at most ``W`` (proven when every launch gives
such a width; otherwise the lift says, as note M3006, that two threads would share cells, a race
in CUDA as well). Anything else leaves the function as it is.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_casts
from ...ir.visit import Transformer
from ..facts.affine import linear_form
from ..facts.builtins import builtin_dims
from ..facts.locals import expand, single_assignment_locals

#: calls that order or exchange values between threads (no kernel with one is taken)
_THREAD_KINDS = ("warp", "cg", "sync")


def _chain(e):
    """(array name, [index, ...]) of ``S[i][j]`` whose base is a shared array, or None."""
    idx = []
    while isinstance(e, m.Index):
        idx.insert(0, e.index)
        e = strip_casts(e.base)
    return (e.name, idx) if isinstance(e, m.Ref) and e.kind == "shared" else None


def _dims(t) -> list[int] | None:
    """The extents of a (nested) array type, outermost first (None: not a constant here, a
    template parameter's)."""
    out = []
    while isinstance(t, m.Array):
        out.append(t.extent)
        t = t.element
    return out


def _element(t):
    while isinstance(t, m.Array):
        t = t.element
    return t


def _is_thread(e, dim: str) -> bool:
    e = strip_casts(e)
    return isinstance(e, m.Builtin) and e.var == "threadIdx" and e.dim == dim


def _key_width(key) -> tuple[str, int | str | None] | None:
    """The shape of an own key: ("x", None) for ``threadIdx.x``; ("xy", W) for
    ``threadIdx.y * W + threadIdx.x`` with W a constant (an int) or a template's value parameter
    (its name); ("xy", None) with W ``blockDim.x``."""
    if _is_thread(key, "x"):
        return "x", None
    form = linear_form(key)
    if form is None or form[1] != 0 or len(form[0]) != 2:
        return None
    terms = list(form[0].values())
    x = [t for t in terms if t[0] == 1 and _is_thread(t[1], "x")]
    if len(x) != 1:
        return None
    coef, atom = next(t for t in terms if t is not x[0])
    if _is_thread(atom, "y") and coef > 0:
        return "xy", coef
    a = strip_casts(atom)
    if coef == 1 and isinstance(a, m.Binary) and a.op == "*":
        sides = (strip_casts(a.lhs), strip_casts(a.rhs))
        for s, o in (sides, sides[::-1]):
            if _is_thread(s, "y") and isinstance(o, m.Builtin) and o.var == "blockDim" and o.dim == "x":
                return "xy", None
            if _is_thread(s, "y") and isinstance(o, m.Ref) and o.kind == "template":
                return "xy", o.name
    return None


def _is_tid(e) -> bool:
    return _is_thread(e, "x")


def _residue(e, strided: set[str], multiples: list[int]) -> bool:
    """Whether ``e`` is ``threadIdx.x`` (or a local of ``strided``) plus multiples of a stride:
    the coefficients and constant that must be multiples go to ``multiples``."""
    form = linear_form(e)
    if form is None:
        return False
    ones = 0
    for coef, atom in form[0].values():
        a = strip_casts(atom)
        if _is_tid(a) or isinstance(a, m.Ref) and a.kind == "local" and a.name in strided:
            ones += coef
        else:
            multiples.append(coef)
    multiples.append(form[1])
    return ones == 1


def _strided_locals(body) -> tuple[set[str], dict[str, tuple[list[int], set[str]]]]:
    """Locals that always hold ``threadIdx.x`` plus multiples of a stride (``base = threadIdx.x;
    ... base += 64; ... base -= 64``): set from such a value, stepped by constants. With, for each,
    the numbers that must be multiples of the stride and the others its values are made of."""
    stores: dict[str, list] = {}
    bad: set[str] = set()
    for n in m.walk(body):
        if isinstance(n, m.VarDecl) and n.init is not None:
            stores.setdefault(n.name, []).append(("=", n.init))
            if not (n.storage == "local" and isinstance(n.type, m.Scalar)):
                bad.add(n.name)
        elif isinstance(n, m.Assign) and isinstance(strip_casts(n.target), m.Ref):
            stores.setdefault(strip_casts(n.target).name, []).append((n.op, n.value))
        elif isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--", "&") \
                and isinstance(strip_casts(n.operand), m.Ref):
            bad.add(strip_casts(n.operand).name)
    strided = {name for name, sts in stores.items() if name not in bad and any(
        op == "=" and any(_is_tid(strip_casts(a)) for a in m.walk(v)) for op, v in sts)}
    while True:  # an inductive proof: every store keeps the residue, given the others do
        facts: dict[str, tuple[list[int], set[str]]] = {}
        for name in strided:
            multiples: list[int] = []
            ok = True
            for op, v in stores[name]:
                if op == "=":
                    ok = _residue(v, strided, multiples)
                elif op in ("+=", "-="):
                    form = linear_form(v)
                    ok = form is not None and not form[0]
                    if ok:
                        multiples.append(form[1])
                else:
                    ok = False
                if not ok:
                    break
            if ok:
                facts[name] = multiples, {r.name for _op, v in stores[name] for r in m.walk(v)
                                          if isinstance(r, m.Ref) and r.name in strided}
        if set(facts) == strided:
            return strided, facts
        strided = set(facts)


def _stride(uses, table, body) -> int | None:
    """The stride W when every index of a 1-D array (``uses``) is ``threadIdx.x`` plus multiples of
    W (W > 1): cell ``i`` belongs to thread ``i % W``, the thread's cells are its local array at
    ``i / W``; None else."""
    from math import gcd
    strided, facts = _strided_locals(body)
    multiples: list[int] = []
    seen: set[str] = set()
    todo = []
    for idx in uses:
        i = expand(idx[0], table)
        if not _residue(i, strided, multiples):
            return None
        todo += [r.name for r in m.walk(i) if isinstance(r, m.Ref) and r.name in strided]
    while todo:  # the strided locals the indices are made of, and theirs
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        multiples += facts[name][0]
        todo += list(facts[name][1])
    w = 0
    for k in multiples:
        w = gcd(w, abs(k))
    return w if w > 1 else None


class _Private(Transformer):
    """``S[..][key][..]`` → ``S[..][..]`` (the local array) or ``S`` (the local scalar)."""

    def __init__(self, arrays: dict[str, tuple[int, m.Ref, int]]) -> None:
        self.arrays = arrays  # name -> (key position, the local's Ref, the shared array's rank)

    def leave_Index(self, node: m.Index):
        chain = _chain(node)
        if chain is None or chain[0] not in self.arrays:
            return node
        pos, local, ndims = self.arrays[chain[0]]
        if len(chain[1]) != ndims:
            return node  # an inner part of the access: the whole access is rebuilt
        if pos < 0:  # a stride of cells per thread: the thread's cell i is its element i / W
            i = chain[1][0]
            w = m.IntLit(-pos, str(-pos), i.type if isinstance(i.type, m.Scalar) else m.Scalar("int32"), node.span)
            return m.Index(local, m.Binary("/", i, w, w.type, node.span), local.type.element, node.span)
        out, t = local, local.type
        for k, i in enumerate(chain[1]):
            if k != pos:
                t = t.element
                out = m.Index(out, i, t, node.span)
        return out

    def leave_DeclStmt(self, node: m.DeclStmt):
        decls = []
        for d in node.decls:
            if d.name in self.arrays and d.storage == "shared":
                local = self.arrays[d.name][1]
                init = None
                if not isinstance(local.type, m.Array):
                    init = _zero(local.type, d.span)
                d = m.VarDecl(d.name, local.type, "local", False, init, d.span)
            decls.append(d)
        return dataclasses.replace(node, decls=tuple(decls))


def _atomic_cell(st, names: set[str]):
    """``S[..] += v`` for the statement ``atomicAdd(&S[..], v);`` (or ``atomicAdd(S + i, v)`` of a
    1-D array) on one of ``names``, its old value unread; else None."""
    if not (isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Call) and st.expr.kind == "atomic"
            and st.expr.callee == "atomicAdd" and len(st.expr.args) == 2):
        return None
    p, v = strip_casts(st.expr.args[0]), st.expr.args[1]
    target = None
    if isinstance(p, m.Unary) and p.op == "&":
        chain = _chain(p.operand)
        if chain is not None and chain[0] in names:
            target = strip_casts(p.operand)
    elif isinstance(p, m.Binary) and p.op == "+":
        base = strip_casts(p.lhs)
        if isinstance(base, m.Ref) and base.kind == "shared" and base.name in names \
                and isinstance(base.type, m.Array) and not isinstance(base.type.element, m.Array):
            target = m.Index(base, p.rhs, base.type.element, p.span)
    if target is None:
        return None
    if v.type != target.type:
        v = m.Cast(target.type, v, "implicit", target.type, v.span)
    return m.ExprStmt(m.Assign("+=", target, v, target.type, st.span), st.span)


class _Atomics(Transformer):
    """Atomic additions to cells of the arrays ``names`` as plain additions (their cells are a
    thread's own: no other thread adds to them)."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def leave_ExprStmt(self, node: m.ExprStmt):
        return _atomic_cell(node, self.names) or node


def _zero(t, span):
    if isinstance(t, m.Scalar) and t.dtype.startswith(("float", "bfloat", "half")):
        return m.FloatLit(0.0, "0.0", t, span)
    if isinstance(t, m.Scalar) and t.dtype == "bool":
        return m.Cast(t, m.IntLit(0, "0", m.Scalar("int32"), span), "implicit", t, span)
    return m.Cast(t, m.IntLit(0, "0", m.Scalar("int32"), span), "implicit", t, span)


def _without(t, pos: int):
    """The array type ``t`` without its dimension ``pos`` (outermost 0)."""
    if pos == 0:
        return t.element
    return dataclasses.replace(t, element=_without(t.element, pos - 1))


def privatise_shared(fn: m.Function, callees=(), launch_x: int | None = None) -> tuple[m.Function, tuple[str, ...]]:
    """(``fn`` with its thread-private shared arrays made local, the races the lift takes the
    CUDA to be free of) — ``fn`` itself and () when there is none (module doc). ``launch_x``: the
    block width every launch gives, when known."""
    if fn.body is None:
        return fn, ()
    decls = {d.name: d for d in m.walk(fn.body) if isinstance(d, m.VarDecl) and d.storage == "shared"}
    candidates = {n: d for n, d in decls.items() if isinstance(d.type, m.Array) and _dims(d.type)
                  and d.init is None and isinstance(_element(d.type), (m.Scalar, m.TemplateType))}
    if not candidates:
        return fn, ()
    for f in (fn, *callees):
        for n in m.walk(f.body) if f.body else ():
            if isinstance(n, m.Call) and (n.kind in _THREAD_KINDS or n.callee.startswith(("__sync", "__threadfence"))):
                return fn, ()
    threads, _ = builtin_dims([fn, *callees])
    private, races = _private(_Atomics(set(candidates)).transform(fn.body), candidates, threads, launch_x)
    if not private:
        return fn, ()
    # the atomics of the arrays that stay shared stay atomics
    body = _Private(private).transform(_Atomics(set(private)).transform(fn.body))
    return dataclasses.replace(fn, body=body), races


def _private(body, candidates, threads, launch_x):
    """The arrays of ``candidates`` that ``body`` uses only at their threads' own keys (name ->
    (key position, the local's Ref, rank)), and the races the lift takes the CUDA to be free of."""
    table = single_assignment_locals(body)
    refs: dict[str, int] = {}
    for n in m.walk(body):
        if isinstance(n, m.Ref) and n.name in candidates:
            refs[n.name] = refs.get(n.name, 0) + 1
    chains: dict[str, list] = {n: [] for n in candidates}
    addressed: set[str] = set()

    def visit(node, under_address=False):
        if isinstance(node, m.Index):
            chain = _chain(node)
            if chain is not None and chain[0] in candidates:
                chains[chain[0]].append(chain[1])
                if under_address:
                    addressed.add(chain[0])
                for i in chain[1]:
                    visit(i)
                return
        for child in m.children(node):
            visit(child, isinstance(node, m.Unary) and node.op == "&")

    visit(body)
    private: dict[str, tuple[int, m.Ref, int]] = {}
    races: list[str] = []
    for name, d in candidates.items():
        dims = _dims(d.type)
        uses = chains[name]
        if name in addressed or not uses or refs.get(name, 0) != len(uses) \
                or any(len(idx) != len(dims) for idx in uses):
            continue  # a pointer, an argument, an address or a row: not element accesses
        found = None
        stride = _stride(uses, table, body) if len(dims) == 1 and dims[0] is not None and threads == {"x"} else None
        if stride is not None:
            if launch_x is not None and launch_x > stride:
                continue  # threads of one block share cells: a race in CUDA, not scratch of their own
            if launch_x is None:
                races.append(f"threads share cells of shared array '{name}' (threadIdx.x + {stride} * k) unless "
                             f"the block is at most {stride} wide")
            local_type = dataclasses.replace(d.type, extent=-(-dims[0] // stride))
            private[name] = -stride, m.Ref(name, "local", local_type, d.span), 1
            continue
        for pos in range(len(dims)):
            keys = [strip_casts(expand(idx[pos], table)) for idx in uses]
            if all(m.key(k) == m.key(keys[0]) for k in keys):
                shape = _key_width(keys[0])
                if shape is not None:
                    found = pos, shape
                    break
        if found is None:
            continue
        pos, (kind, width) = found
        if any(n is None for k, n in enumerate(dims) if k != pos):
            continue  # the local array's own extents must be constants (the key's may be a template's)
        if kind == "x" and threads != {"x"}:
            continue  # threadIdx.x tells threads apart only in a 1-D block
        if kind == "xy" and not threads <= {"x", "y"}:
            continue
        if kind == "xy" and width is not None and not (isinstance(width, int) and launch_x is not None
                                                       and launch_x <= width):
            races.append(f"threads share cells of shared array '{name}' (threadIdx.y * {width} + threadIdx.x) "
                         f"unless the block is at most {width} wide")
        local_type = _without(d.type, pos)
        private[name] = pos, m.Ref(name, "local", local_type, d.span), len(dims)
    return private, tuple(races)
