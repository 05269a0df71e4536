"""Split a kernel at its barriers into loop-IR regions and place its variables.

This is the loop-fission translation of SIMT code: each stretch between ``__syncthreads()``
becomes a :class:`~migrate.ir.loops.Phase` (a ``T.Parallel`` over the block's threads); loops and
branches that enclose barriers must be uniform (the same in every thread) and stay outside the
phases. A local value that crosses a barrier is kept per thread in a shared array (a small local
array used at constant indices only, as one local per element: prepare.array_elements).

:func:`plan_portable` raises :class:`NotPortable` with the reason when the kernel cannot take this
form (a barrier under thread-dependent control flow, a warp-synchronous operation, ...).
"""
from __future__ import annotations

from ..ir import model as m
from ..ir.exprs import is_block_vote, is_native_votes
from ..ir.loops import Barrier, Exchange, KernelPlan, Phase, Region, SimtBody, UniformIf, UniformLoop, VarPlan
from .facts.divergence import depends_on_thread, thread_dependent_names
from .facts.locals import assignment_counts
from .prepare.inline import EXCHANGES, contains_barrier, is_barrier_call, is_exchange_call
from .prepare.array_elements import array_elements, constant_element_arrays
from .prepare.lockstep_steps import is_lockstep_barrier


class NotPortable(Exception):
    pass


def _exchange_parts(stmt):
    """(target Ref, VarDecl or None, call) when ``stmt`` is ``T t = warp(...)`` / ``t = warp(...)``."""
    if isinstance(stmt, m.DeclStmt) and len(stmt.decls) == 1 and is_exchange_call(stmt.decls[0].init):
        d = stmt.decls[0]
        return m.Ref(d.name, "local", d.type, d.span), d, d.init
    if isinstance(stmt, m.ExprStmt) and isinstance(stmt.expr, m.Assign) and stmt.expr.op == "=" \
            and is_exchange_call(stmt.expr.value):
        return stmt.expr.target, None, stmt.expr.value
    return None


def _is_barrier_stmt(stmt) -> bool:
    return isinstance(stmt, m.ExprStmt) and is_barrier_call(stmt.expr)


class _Splitter:
    def __init__(self, dependent: set[str]) -> None:
        self.dependent = dependent
        self.count = 0
        self.flags: list[str] = []
        self.flag_decls: list[m.VarDecl] = []
        self.exchange_dtypes: list[str] = []

    def exchange(self, stmt) -> Exchange:
        target, decl, call = _exchange_parts(stmt)
        op = EXCHANGES[call.callee]
        args = call.args
        if op in ("ballot", "any", "all"):
            value, lane, width = args[1], None, None
            dtype = "int32"
        else:
            value, lane = args[1], args[2]
            width = args[3] if len(args) > 3 else None
            if isinstance(value.type, m.TemplateType):  # a template's T: its buffer is of the instance's type
                dtype = value.type.name
            elif not isinstance(value.type, m.Scalar):
                raise NotPortable(f"shuffle of a '{value.type}' value (line {stmt.span.line})")
            else:
                dtype = value.type.dtype
        if dtype not in self.exchange_dtypes:
            self.exchange_dtypes.append(dtype)
        for e in (lane, width):
            if e is not None and depends_on_thread(e, self.dependent) and op != "shfl":
                raise NotPortable(f"shuffle offset that depends on the thread (line {stmt.span.line})")
        region = Exchange(op, value, lane, width, target, decl, self.count, stmt.span,
                          args[0] if call.callee.endswith("_sync") else None)
        self.count += 2
        return region

    def flag(self, cond: m.Expr, span) -> str:
        name = f"cond_L{span.line}"
        n = 2
        while name in self.flags:
            name = f"cond_L{span.line}_{n}"
            n += 1
        self.flags.append(name)
        self.flag_decls.append(m.VarDecl(name, m.Scalar("bool"), "local", False, cond, span))
        return name

    def phase(self, stmts: list[m.Stmt]) -> Phase:
        first, last = stmts[0].span, stmts[-1].span
        span = type(first)(first.file, first.line, first.col, last.end_line, last.end_col)
        p = Phase(tuple(stmts), self.count, span)
        self.count += 1
        return p

    def uniform(self, expr, what: str, span) -> None:
        if expr is not None and depends_on_thread(expr, self.dependent):
            raise NotPortable(f"barrier or warp exchange inside {what} that depends on the thread "
                              f"(line {span.line})")

    def split(self, stmts) -> tuple[Region, ...]:
        regions: list[Region] = []
        current: list[m.Stmt] = []

        def flush():
            if current:
                if regions and isinstance(regions[-1], Phase) and not _is_flag_phase(regions[-1]):
                    # two stretches with no barrier between them are one phase
                    prev = regions.pop()
                    regions.append(Phase(prev.stmts + tuple(current), prev.index, prev.span))
                else:
                    regions.append(self.phase(list(current)))
                current.clear()

        for s in stmts:
            if isinstance(s, m.Empty):
                continue
            if not contains_barrier(s):
                current.append(s)
                continue
            flush()
            if _exchange_parts(s) is not None:
                regions.append(self.exchange(s))
            elif _is_barrier_stmt(s):
                if isinstance(s.expr, m.Call) and s.expr.callee == "__syncwarp" and s.expr.args:
                    pass  # a masked warp barrier in uniform code: a block barrier is stronger
                # a lockstep step's barrier orders a warp's own threads (warps exchange nothing there)
                regions.append(Barrier(s.span, warp=is_lockstep_barrier(s.expr)))
            elif isinstance(s, m.Block):
                for inner in self.split(s.stmts):
                    if isinstance(inner, Phase) and regions and isinstance(regions[-1], Phase) \
                            and not _is_flag_phase(regions[-1]) and not _is_flag_phase(inner):
                        prev = regions.pop()
                        regions.append(Phase(prev.stmts + inner.stmts, prev.index, prev.span))
                    else:
                        regions.append(inner)
            elif isinstance(s, (m.For, m.While, m.DoWhile)) and _loop_exit(s.body) is not None:
                # its phases would be T.Parallel loops: a break or continue there ends the phase
                exit_ = _loop_exit(s.body)
                word = "break" if isinstance(exit_, m.Break) else "continue"
                raise NotPortable(f"'{word}' in a loop around barriers (line {exit_.span.line})")
            elif isinstance(s, m.For):
                init_exprs = [d.init for d in s.init.decls] if isinstance(s.init, m.DeclStmt) else (
                    [s.init.expr] if isinstance(s.init, m.ExprStmt) else [])
                for e in init_exprs:
                    self.uniform(e, "a loop", s.span)
                self.uniform(s.cond, "a loop", s.span)
                self.uniform(s.step, "a loop", s.span)
                regions.append(UniformLoop("for", s.init, s.cond, s.step, self.split(_stmts(s.body)), s.span))
            elif isinstance(s, m.While):
                self.uniform(s.cond, "a loop", s.span)
                regions.append(UniformLoop("while", None, s.cond, None, self.split(_stmts(s.body)), s.span))
            elif isinstance(s, m.DoWhile):
                self.uniform(s.cond, "a loop", s.span)
                regions.append(UniformLoop("do", None, s.cond, None, self.split(_stmts(s.body)), s.span))
            elif isinstance(s, m.If):
                predicate = None
                if depends_on_thread(s.cond, self.dependent):
                    # every thread runs the barriers; the statements between them are predicated
                    predicate = self.flag(s.cond, s.span)
                    flag_stmt = m.DeclStmt((self.flag_decls[-1],), s.span)
                    regions.append(self.phase([flag_stmt]))
                regions.append(UniformIf(s.cond, self.split(_stmts(s.then)),
                                         self.split(_stmts(s.other)) if s.other else (), s.span, predicate))
            else:
                raise NotPortable(f"barrier inside a statement that cannot be split (line {s.span.line})")
        flush()
        return tuple(regions)


def _loop_exit(body):
    """The first ``break`` or ``continue`` in ``body`` that leaves or restarts the loop of that
    body (not one of a nested loop's, nor a ``break`` out of a switch), or None."""
    def visit(node, in_switch):
        if isinstance(node, m.Break) and not in_switch or isinstance(node, m.Continue):
            return node
        if isinstance(node, (m.For, m.While, m.DoWhile)):
            return None
        for child in m.children(node):
            found = visit(child, in_switch or isinstance(node, m.Switch))
            if found is not None:
                return found
        return None
    return visit(body, False)


def _is_flag_phase(region) -> bool:
    return isinstance(region, Phase) and len(region.stmts) == 1 and isinstance(region.stmts[0], m.DeclStmt) \
        and region.stmts[0].decls[0].name.startswith("cond_L")


def _stmts(s) -> tuple:
    if s is None:
        return ()
    return s.stmts if isinstance(s, m.Block) else (s,)


def _header_exprs(region) -> list:
    if isinstance(region, UniformLoop):
        out = [region.cond, region.step]
        if isinstance(region.init, m.DeclStmt):
            out += [d.init for d in region.init.decls]
        elif isinstance(region.init, m.ExprStmt):
            out.append(region.init.expr)
        return [e for e in out if e is not None]
    if isinstance(region, UniformIf):
        return [region.cond]
    return []


def _collect(regions, uses: dict[str, set], decls: dict[str, tuple]) -> None:
    """uses[name] = set of phase numbers and 'K' (kernel level); decls[name] = (decl, site)."""
    for region in regions:
        if isinstance(region, Phase):
            for node in m.walk(m.Block(region.stmts, region.span)):
                if isinstance(node, m.Ref):
                    uses.setdefault(node.name, set()).add(region.index)
                elif isinstance(node, m.VarDecl):
                    decls[node.name] = (node, region.index)
                    uses.setdefault(node.name, set()).add(region.index)
        elif isinstance(region, Exchange):
            for e in (region.value, region.lane, region.width):
                for node in m.walk(e) if e is not None else ():
                    if isinstance(node, m.Ref):
                        uses.setdefault(node.name, set()).add(region.index)
            for node in m.walk(region.target):
                if isinstance(node, m.Ref):
                    uses.setdefault(node.name, set()).add(region.index + 1)
            if region.decl is not None:
                decls[region.decl.name] = (region.decl, region.index + 1)
        elif isinstance(region, UniformIf) and region.predicate is not None:
            _collect(region.then + region.other, uses, decls)
        elif isinstance(region, (UniformLoop, UniformIf)):
            for e in _header_exprs(region):
                for node in m.walk(e):
                    if isinstance(node, m.Ref):
                        uses.setdefault(node.name, set()).add("K")
            if isinstance(region, UniformLoop) and isinstance(region.init, m.DeclStmt):
                for d in region.init.decls:
                    decls[d.name] = (d, "K")
                    uses.setdefault(d.name, set()).add("K")
            body = region.body if isinstance(region, UniformLoop) else region.then + region.other
            _collect(body, uses, decls)


def _updated_in_phases(regions) -> set[str]:
    """Variables a phase updates from a value it changes: their own (``x += 1``, ``p = 1 - p``),
    or another that the phase assigns, directly or through its temporaries (a swap: ``t = a; a =
    b; b = t;``).

    Every thread runs the update on its own copy; a kernel-level variable shared by the
    iterations of a serial ``T.Parallel`` (the CPU target) would apply it once per thread.
    """
    names: set[str] = set()
    for region in regions:
        if isinstance(region, Phase):
            body = m.Block(region.stmts, region.span)
            assigned: dict[str, list] = {}  # name -> the values assigned to it in the phase
            lets: dict[str, m.Expr] = {}
            for node in m.walk(body):
                if isinstance(node, m.Assign) and isinstance(node.target, m.Ref):
                    assigned.setdefault(node.target.name, []).append(node.value)
                    if node.op != "=":
                        names.add(node.target.name)
                elif isinstance(node, m.Unary) and node.op in ("++", "--") and isinstance(node.operand, m.Ref):
                    names.add(node.operand.name)
                elif isinstance(node, m.VarDecl) and node.init is not None:
                    lets[node.name] = node.init
            for name, values in assigned.items():
                if _reads_any(values, set(assigned), lets):
                    names.add(name)
        elif isinstance(region, UniformLoop):
            names |= _updated_in_phases(region.body)
        elif isinstance(region, UniformIf):
            names |= _updated_in_phases(region.then + region.other)
        elif isinstance(region, Exchange):
            names.add(region.target.name if isinstance(region.target, m.Ref) else "")
    return names


def _reads_any(values, names: set[str], lets: dict) -> bool:
    """Whether the expressions read one of ``names``, directly or through the temporaries they
    read (``lets``: name -> its initial value)."""
    seen: set[str] = set()
    todo = list(values)
    while todo:
        for r in m.walk(todo.pop()):
            if isinstance(r, m.Ref):
                if r.name in names:
                    return True
                if r.name in lets and r.name not in seen:
                    seen.add(r.name)
                    todo.append(lets[r.name])
    return False


def place_variables(fn: m.Function, regions, dependent: set[str], portable: bool) -> dict[str, VarPlan]:
    uses: dict[str, set] = {}
    decls: dict[str, tuple] = {}
    if portable:
        _collect(regions, uses, decls)
    else:
        for node in m.walk(fn.body):
            if isinstance(node, m.VarDecl):
                decls[node.name] = (node, 0)
    counts = assignment_counts(fn.body)
    updated = _updated_in_phases(regions) if portable else set()
    plans = {}
    for name, (decl, site) in decls.items():
        single = decl.init is not None and counts.get(name, 0) == 0 and not isinstance(decl.type, m.Array)
        if decl.storage in ("shared", "extern_shared"):
            placement = "shared"
        elif not portable:
            placement = "phase"
        else:
            sites = uses.get(name, set())
            phases = {s for s in sites if s != "K"}
            if "K" in sites:
                if name in dependent:
                    raise NotPortable(f"'{name}' depends on the thread but steers a loop or branch "
                                      "that encloses a barrier")
                if isinstance(decl.type, m.Array):
                    raise NotPortable(f"local array '{name}' is used by a loop enclosing a barrier")
                if name in updated:
                    raise NotPortable(f"'{name}' steers a loop enclosing a barrier but is updated "
                                      "inside a barrier interval")
                placement = "kernel_var"
            elif len(phases) > 1:
                uniform_scalar = name not in dependent and not isinstance(decl.type, m.Array) \
                    and name not in updated
                placement = "kernel_var" if uniform_scalar else "thread_array"
            else:
                placement = "phase"
        plans[name] = VarPlan(name, decl.type, placement, single, decl)
    return plans


def plan_portable(fn: m.Function) -> KernelPlan:
    """The portable plan of a (rewritten) kernel, or :class:`NotPortable`."""
    if fn.body is None:
        raise NotPortable("kernel has no body")
    # a vote in the native branch of one lowered to the counter (analysis.prepare.block_votes)
    native = {id(n) for s in m.walk(fn.body) if isinstance(s, m.If) and is_native_votes(s.cond)
              for n in m.walk(s.then) if is_block_vote(n)}
    for node in m.walk(fn.body):
        if isinstance(node, m.Call) and node.kind == "warp" and node.callee not in EXCHANGES:
            raise NotPortable(f"warp-level operation '{node.callee}' (line {node.span.line})")
        if isinstance(node, m.Call) and node.kind == "cg":
            raise NotPortable(f"cooperative groups '{node.callee}' (line {node.span.line})")
        if isinstance(node, m.MethodCall):
            raise NotPortable(f"method call '.{node.method}()' (line {node.span.line})")
        if isinstance(node, m.Call) and node.callee.startswith("__syncthreads_") and id(node) not in native:
            raise NotPortable(f"'{node.callee}' returns a block-wide value (line {node.span.line})")
    dependent = thread_dependent_names(fn)
    splitter = _Splitter(dependent)
    regions = splitter.split(fn.body.stmts)
    plans = place_variables(fn, regions, dependent, portable=True)
    # a thread's array kept across barriers, used at constant indices only: one local per element,
    # each then a per-thread scalar (registers on GPUs), not a shared row per thread
    arrays = constant_element_arrays(fn, {name for name, vp in plans.items() if vp.placement == "thread_array"
                                          and isinstance(vp.type, m.Array)})
    if arrays:
        return plan_portable(array_elements(fn, arrays))
    for name in splitter.flags:
        plans[name] = VarPlan(name, m.Scalar("bool"), "thread_array", True,
                              next(d for d in splitter.flag_decls if d.name == name))
    return KernelPlan(fn, "portable", regions, plans, flags=tuple(splitter.flags),
                      exchange_dtypes=tuple(splitter.exchange_dtypes))


def plan_simt(fn: m.Function) -> KernelPlan:
    body = fn.body.stmts if fn.body else ()
    span = fn.body.span if fn.body else fn.span
    regions = (SimtBody(tuple(body), span),)
    return KernelPlan(fn, "simt", regions, place_variables(fn, regions, set(), portable=False))
