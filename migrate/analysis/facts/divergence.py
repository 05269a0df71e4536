"""Which values and conditions of a kernel can differ between the threads of a block.

The phase split (:mod:`migrate.analysis.phases`) asks this of every loop and branch that encloses a barrier:
a uniform one stays outside the phases, a thread-dependent branch is predicated, a
thread-dependent loop keeps the kernel at thread level.
"""
from __future__ import annotations

from ...ir import model as m
from ...ir.exprs import is_block_vote


#: id(body) -> (body, its thread-dependent names), for the bodies asked most recently: the phase
#: split, the lockstep passes and most lifts ask this of the same (immutable) kernel body
_DEPENDENT: dict[int, tuple] = {}


def thread_dependent_names(fn: m.Function) -> set[str]:
    """Local variables whose value can differ between the threads of a block (a fixpoint).

    A variable is thread-dependent when a value assigned to it depends on the thread, or when
    it is assigned under control flow that does.
    """
    hit = _DEPENDENT.get(id(fn.body))
    if hit is not None and hit[0] is fn.body:
        return set(hit[1])
    if len(_DEPENDENT) >= 64:
        _DEPENDENT.clear()
    dependent = _thread_dependent_names(fn.body)
    _DEPENDENT[id(fn.body)] = (fn.body, frozenset(dependent))
    return dependent


def _thread_dependent_names(body: m.Block | None) -> set[str]:
    # (name, value, guards) of each assignment; a guard is (condition, names declared under its
    # statement): a variable declared inside a branch is only ever seen by the threads that take
    # it, so the branch does not make it differ. A statement's set of names is filled as the visit
    # goes through it (one walk, not one per nested statement), so guards are applied once the
    # visit is done.
    assigned: list[tuple[str, m.Expr, tuple[tuple[m.Expr, set], ...]]] = []

    def target_name(e):
        while isinstance(e, (m.Index, m.Member)):
            e = e.base
        return e.name if isinstance(e, m.Ref) and e.kind == "local" else None

    def record(name, value, guards):
        assigned.append((name, value, guards))

    def visit(node, guards: tuple, declared: set):
        """``declared``: the names declared under the innermost statement that ``node`` is in and
        that guards (a branch, a loop, a switch; the whole body at the top)."""
        if isinstance(node, m.VarDecl):  # (declarations are statements: no expression holds one)
            declared.add(node.name)
            if node.init is not None:
                record(node.name, node.init, guards)
            return
        if isinstance(node, m.Assign):
            name = target_name(node.target)
            if name:
                # a block vote's result is the block's (analysis.prepare.block_votes)
                record(name, _UNIFORM if is_block_vote(node.value) else node.value, guards)
                if isinstance(node.target, m.Index):
                    record(name, node.target.index, guards)
        if isinstance(node, m.Unary) and node.op in ("++", "--"):
            name = target_name(node.operand)
            if name:
                record(name, node.operand, guards)
        if isinstance(node, m.If):
            inside: set = set()
            visit(node.cond, guards, inside)
            inner = guards + ((node.cond, inside),)
            visit(node.then, inner, inside)
            if node.other is not None:
                visit(node.other, inner, inside)
            declared |= inside
            return
        if isinstance(node, (m.For, m.While, m.DoWhile)):
            inside = set()
            if isinstance(node, m.For) and node.init is not None:
                visit(node.init, guards, inside)
            inner = guards + (((node.cond, inside),) if node.cond is not None else ())
            if isinstance(node, m.For) and node.step is not None:
                visit(node.step, inner, inside)
            visit(node.body, inner, inside)
            declared |= inside
            return
        if isinstance(node, m.Switch):
            inside = set()
            visit(node.body, guards + ((node.cond, inside),), inside)
            declared |= inside
            return
        for child in m.children(node):
            visit(child, guards, declared)

    if body is not None:
        visit(body, (), set())
    assigned = [(name, value, tuple(c for c, inside in guards if name not in inside))
                for name, value, guards in assigned]
    # each value and guard read once (_reads_thread): depends_on_thread(e, dependent) is its own
    # reading of the thread, or a name it reads among the dependent ones
    summaries: dict[int, tuple[bool, frozenset]] = {}

    def summary(e) -> tuple[bool, frozenset]:
        found = summaries.get(id(e))
        if found is None:
            found = summaries[id(e)] = _reads_thread(e)
        return found

    entries = []
    for name, value, guards in assigned:
        parts = [summary(value)] + [summary(g) for g in guards]
        entries.append((name, any(p[0] for p in parts), frozenset().union(*(p[1] for p in parts))))
    dependent: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, own, reads in entries:
            if name in dependent:
                continue
            if own or not reads.isdisjoint(dependent):
                dependent.add(name)
                changed = True
    return dependent


_UNIFORM = m.IntLit(0, "0", m.Scalar("int32"), None)


def _reads_thread(expr) -> tuple[bool, frozenset]:
    """(whether ``expr`` reads the thread itself: ``threadIdx``, a warp or atomic call, a group's
    thread rank; the names of all the variables it reads): :func:`depends_on_thread` of it is
    the first or a name of the second among the dependent ones (an index's own dependence is
    that of the nodes under it, which the walk reaches too)."""
    own, names = False, set()
    for node in m.walk(expr):
        if isinstance(node, m.Builtin) and node.var == "threadIdx":
            own = True
        elif isinstance(node, m.Ref):
            names.add(node.name)
        elif isinstance(node, m.Call) and node.kind in ("warp", "atomic"):
            own = True
        elif isinstance(node, m.MethodCall) and node.method in ("thread_rank", "meta_group_rank"):
            own = True
    return own, frozenset(names)


def depends_on_thread(expr: m.Expr, dependent: set[str]) -> bool:
    for node in m.walk(expr):
        if isinstance(node, m.Builtin) and node.var == "threadIdx":
            return True
        if isinstance(node, m.Ref) and node.name in dependent:
            return True
        if isinstance(node, m.Call) and node.kind in ("warp", "atomic"):
            return True
        if isinstance(node, m.MethodCall) and node.method in ("thread_rank", "meta_group_rank"):
            return True
        if isinstance(node, m.Index):
            # a value loaded from memory may differ per thread unless the index is uniform
            if depends_on_thread(node.index, dependent):
                return True
    return False


#: what an invariant value may not contain: memory reads, calls and stores, effects
_VARIANT_NODES = (m.Index, m.Call, m.MethodCall, m.Assign)
_VARIANT_UNARY = ("++", "--", "*", "&")


def _invariant(e, builtins, ref_kinds) -> bool:
    for n in m.walk(e):
        if isinstance(n, m.Builtin) and not builtins(n.var):
            return False
        if isinstance(n, m.Ref) and n.kind not in ref_kinds:
            return False
        if isinstance(n, _VARIANT_NODES) or (isinstance(n, m.Unary) and n.op in _VARIANT_UNARY):
            return False
    return True


def same_for_every_element(e) -> bool:
    """``e`` has one value for every element of a map and is cheap to evaluate: literals, scalar
    parameters, launch sizes (no thread, block or element index, no load, call or store)."""
    return _invariant(e, lambda var: var not in ("globalIdx", "threadIdx", "blockIdx"), ("param", "template"))


#: references whose value is the same in every block and lane: parameters, constants, functions
BLOCK_INVARIANT_REFS = ("param", "template", "enum", "constant", "function")


def same_in_every_block(e) -> bool:
    """``e`` has one value in every block and lane whatever the grid: parameters, constants and
    the block size (not the grid size, which a freed grid changes)."""
    return _invariant(e, lambda var: var in ("warpSize", "blockDim"), BLOCK_INVARIANT_REFS)
