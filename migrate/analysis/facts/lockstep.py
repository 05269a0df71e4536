"""Warp-synchronous code: threads that exchange values through ``volatile`` shared memory with
no barrier between a write and a read of another element, relying on the threads of a warp
running in lockstep (``sData[idx] += sData[idx - 1]`` in a warp scan, ``vs[t] += vs[t + 16]`` in
the last warp of a reduction). TileLang has no volatile memory and no lockstep: a phase runs its
threads in any order (one after the other on the CPU target) and nvcc may keep the values in
registers.

Each function is asked on its own, before inlining (which forgets that a device function's
pointer parameter was volatile), with the parameters its callers pass shared memory to. A
barrier (``__syncthreads``, ``__syncwarp``, a group's ``sync()``, a call of a device function
that has one) ends an interval; a branch is walked as if every thread took both sides (different
threads may), a loop body twice (its next iteration is the same interval when it has no barrier).
Elements are told apart by their index expressions as written. Two local pointer views of one
shared array (``l_V = &s[row]``, ``l_H = &s[col]``: a transpose in registers and shared memory)
are asked the same of, volatile or not: a store through one and a load through the other in one
interval exchange values between threads. Views whose offsets every thread shares (``cumsum =
s; counts = s + n + 1;``), none of them assigned a per-thread value or addressed, are regions of
the array, not such walks: they are not asked. Volatile global memory (flags and counters other
blocks write) is not this question.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import model as m
from ...ir.exprs import strip_casts
from ...ir.span import Span
from .divergence import depends_on_thread, thread_dependent_names


@dataclass(frozen=True)
class LockstepExchange:
    function: str  # the kernel or the device function that exchanges
    buffer: str
    write: Span  # a store to one element
    read: Span  # a load of another element in the same interval (before or after the store)
    views: bool = False  # through two pointer views of a (not volatile) shared array


def lockstep_exchange(kernel: m.Function, device: dict[str, m.Function]) -> LockstepExchange | None:
    """The first exchange between threads through volatile shared memory that no barrier
    separates, in ``kernel`` or a device function it calls (with shared memory in the parameters
    its callers pass it to), or None."""
    for _fn, _volatile, _views, found in _functions(kernel, device):
        if found is not None:
            return found
    return None


def lockstep_functions(kernel: m.Function, device: dict[str, m.Function]) -> dict[str, set[str]]:
    """The functions (the kernel, device functions it reaches) that exchange values between
    threads through volatile shared memory, or through two pointer views of a shared array, with
    no barrier between, each with the names it reaches that memory by (arrays, pointer parameters,
    views); empty when there is none."""
    out: dict[str, set[str]] = {}
    for fn, volatile, views, found in _functions(kernel, device):
        if found is not None:
            out.setdefault(fn.name, set()).update(volatile, views)
    return out


def _functions(kernel: m.Function, device: dict[str, m.Function]):
    """Each function ``kernel`` reaches with the shared memory its callers pass (``kernel`` first):
    (it, its names for volatile shared memory, its crossing views of a shared array, the first
    exchange through either, or None)."""
    barriers = {name for name, f in device.items() if f.body is not None and any(
        _is_barrier(n) for n in m.walk(f.body))}
    work, seen = [(kernel, frozenset())], set()
    while work:
        fn, params = work.pop(0)
        if (fn.name, params) in seen or fn.body is None:
            continue
        seen.add((fn.name, params))
        shared = _shared_names(fn, params)
        volatile = {name: name for name in shared if _is_volatile(_declared_type(fn, name))}
        views = _crossing_views(fn, shared, volatile)
        found = None
        if volatile or views:
            walk = _Intervals(fn.name, {**volatile, **views}, barriers)
            walk.visit(fn.body)
            found = walk.found
        yield fn, set(volatile), views, found
        for call in m.walk(fn.body):
            if isinstance(call, m.Call) and call.kind == "device" and call.callee in device:
                callee = device[call.callee]
                passed = frozenset(p.name for p, a in zip(callee.params, call.args) if _points_into(a, shared))
                work.append((callee, passed))


def _shared_names(fn: m.Function, params: frozenset) -> set[str]:
    """The names in ``fn`` that are, or point into, shared memory: its shared arrays (also those
    declared at namespace scope), the parameters ``params``, local pointers initialised from them."""
    names = set(params)
    for node in m.walk(fn.body):
        if isinstance(node, m.Ref) and node.kind == "shared":
            names.add(node.name)
        elif isinstance(node, m.VarDecl):
            if node.storage in ("shared", "extern_shared") or (
                    isinstance(node.type, m.Pointer) and node.init is not None and _points_into(node.init, names)):
                names.add(node.name)
    return names


def _crossing_views(fn: m.Function, shared: set[str], volatile) -> dict[str, str]:
    """Local pointers into a shared array that has two or more of them (``l_V = &s[row]``,
    ``l_H = &s[col]``, a transpose through shared memory): view -> the array. A store through one
    and a load through another with no barrier between is an exchange between threads (each view
    is a thread's own walk through the array), whether or not the array is volatile."""
    arrays: dict[str, list[str]] = {}
    for node in m.walk(fn.body):
        if isinstance(node, m.VarDecl) and isinstance(node.type, m.Pointer) and node.init is not None \
                and node.name in shared and node.name not in volatile:
            base = _array_of(node.init, shared)
            if base is not None:
                arrays.setdefault(base, []).append(node.name)
    if all(len(views) < 2 for views in arrays.values()):
        return {}  # no array with two views (most kernels): nothing below can find one
    # views at offsets every thread shares, never moved per thread (cumsum = s; counts = s + n + 1;
    # a row cache and its swap): regions of the array, not threads' own walks through it; a store
    # through one and a load through another are the array's own accesses, which race in CUDA too
    # if they meet
    dependent = thread_dependent_names(fn)
    inits = {n.name: n.init for n in m.walk(fn.body) if isinstance(n, m.VarDecl) and n.init is not None}
    moved = {n.operand.name for n in m.walk(fn.body) if isinstance(n, m.Unary) and n.op in ("&", "++", "--")
             and isinstance(n.operand, m.Ref)}
    moved |= {n.target.name for n in m.walk(fn.body) if isinstance(n, m.Assign) and isinstance(n.target, m.Ref)}

    def fixed(view) -> bool:
        return view not in moved and not depends_on_thread(inits[view], dependent)

    return {view: base for base, views in arrays.items() if len(views) > 1
            and not all(fixed(v) for v in views) for view in views}


def _array_of(e, shared: set[str]) -> str | None:
    e = strip_casts(e)
    if isinstance(e, m.Ref) and e.name in shared:
        return e.name
    if isinstance(e, m.Binary) and e.op in ("+", "-"):
        return _array_of(e.lhs, shared)
    if isinstance(e, m.Unary) and e.op == "&" and isinstance(e.operand, m.Index):
        return _array_of(e.operand.base, shared)
    return None


def _points_into(e, names: set[str]) -> bool:
    e = strip_casts(e)
    if isinstance(e, m.Ref):
        return e.name in names
    if isinstance(e, m.Binary) and e.op in ("+", "-"):
        return _points_into(e.lhs, names) or _points_into(e.rhs, names)
    if isinstance(e, m.Unary) and e.op == "&" and isinstance(e.operand, m.Index):
        return _points_into(e.operand.base, names)
    return False


def _declared_type(fn: m.Function, name: str):
    for p in fn.params:
        if p.name == name:
            return p.type
    for node in m.walk(fn.body):
        if isinstance(node, m.VarDecl) and node.name == name:
            return node.type
    return None


def _is_volatile(t) -> bool:
    return isinstance(t, (m.Pointer, m.Array)) and t.volatile


def _is_barrier(node) -> bool:
    if isinstance(node, m.Call):
        return node.callee.startswith("__syncthreads") or node.callee in ("__syncwarp",
                                                                          "cooperative_groups::sync")
    return isinstance(node, m.MethodCall) and node.method == "sync"


class _Intervals:
    def __init__(self, function: str, watched: dict[str, str], barriers: set[str]) -> None:
        # watched: name accessed -> the buffer it is (itself, or the array a view walks)
        self.function, self.watched, self.barriers = function, watched, barriers
        self.writes: dict[str, dict[str, Span]] = {}  # buffer -> index expression -> a store
        self.reads: dict[str, dict[str, Span]] = {}
        self.found: LockstepExchange | None = None

    def visit(self, node) -> None:
        if self.found is not None or node is None:
            return
        if _is_barrier(node):
            self.writes, self.reads = {}, {}
            return
        if isinstance(node, m.Call) and node.kind == "device" and node.callee in self.barriers:
            for a in node.args:
                self.visit(a)
            self.writes, self.reads = {}, {}
            return
        if isinstance(node, m.Assign):
            self.visit(node.value)
            self.store(node.target, node.op != "=")
            return
        if isinstance(node, m.Unary) and node.op in ("++", "--"):
            self.store(node.operand, True)
            return
        element = self.element(node)
        if element is not None:
            self.visit(element[1])
            self.access(*element, node.span, write=False)
            return
        if isinstance(node, m.For):
            self.visit(node.init)
            for _ in range(2):
                for part in (node.cond, node.body, node.step):
                    self.visit(part)
            return
        if isinstance(node, (m.While, m.DoWhile)):
            for _ in range(2):
                for part in m.children(node):
                    self.visit(part)
            return
        for child in m.children(node):
            self.visit(child)

    def store(self, target, reads_too: bool) -> None:
        element = self.element(target)
        if element is None:
            self.visit(target)
            return
        self.visit(element[1])
        if reads_too:
            self.access(*element, target.span, write=False)
        self.access(*element, target.span, write=True)

    def element(self, node):
        """(name, index) of an access to a watched buffer or view (``p[i]``, ``*p``), else None."""
        if isinstance(node, m.Index) and isinstance(node.base, m.Ref) and node.base.name in self.watched:
            return node.base.name, node.index
        if isinstance(node, m.Unary) and node.op == "*" and isinstance(node.operand, m.Ref) \
                and node.operand.name in self.watched:
            return node.operand.name, m.IntLit(0, "0", m.Scalar("int32"), node.span)
        return None

    def access(self, name: str, index, span: Span, write: bool) -> None:
        buffer = self.watched[name]
        # a volatile buffer: another element; views of one array: another view (one view's own
        # elements are told apart by no barrier, as in a tree reduction through a view)
        key = m.dump(index) if buffer == name else (name, m.dump(index))
        mine, theirs = (self.writes, self.reads) if write else (self.reads, self.writes)
        others = [s for k, s in theirs.get(buffer, {}).items()
                  if (k != key if buffer == name else k[0] != name)]
        if others:
            write_span, read_span = (span, others[0]) if write else (others[0], span)
            self.found = LockstepExchange(self.function, buffer, write_span, read_span, buffer != name)
            return
        mine.setdefault(buffer, {}).setdefault(key, span)
