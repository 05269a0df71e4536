"""Print the regions of a plan: the phases, barriers, exchanges and uniform control flow of the
portable form, the thread-level body of the simt form, and (tile form) the lane loops of lifted
reductions and scans between uniform phases.

Each portable phase is one ``T.Parallel`` loop over the block's threads; a thread-dependent
branch around barriers predicates the phases inside it; a warp shuffle or vote is an exchange
through a shared buffer between two barriers. A barrier of warp-synchronous code's lockstep steps
(``Barrier.warp``) is ``sync_step()``: on GPUs a warp's, where the phases' threads are the CUDA's
(kernel.warp_barriers).
"""
from __future__ import annotations

from collections import Counter

from ..ir import model as m
from ..ir.exprs import changed_names, is_block_vote, is_native_votes, strip_casts
from ..ir.loops import (Barrier, BlockReduce, BlockScan, Exchange, LaneExchange, LanePhase, Phase, SimtBody, UniformIf,
                        UniformLoop)
from .lane_exchange import print_lane_exchange
from ..ir.names import fresh
from .printer import EmitError, Scope, StmtPrinter, canonical_loop, dtype_of, scalar_name
from .reduce import print_block_reduce, print_block_scan, print_lane_phase, print_uniform_phase


class RegionPrinter:
    """Prints the regions of one plan in ``form`` (``flags``: its per-thread predicate flags;
    ``tdims``: the thread dimensions it indexes)."""

    def __init__(self, form, flags: set[str], tdims) -> None:
        self.form, self.flags, self.tdims = form, flags, tdims

    def parallel(self, printer: StmtPrinter, span, guards=()) -> None:
        tdims = self.tdims
        loop_vars = ", ".join(f"t{d}" for d in reversed(tdims))
        extents = ", ".join(f"block_{d}" for d in reversed(tdims))
        printer.emit(f"for {loop_vars} in T.Parallel({extents}):", span)
        printer.indent += 1
        if guards:
            printer.emit(f"if {' and '.join(guards)}:", span)
            printer.indent += 1

    def end_parallel(self, printer: StmtPrinter, guards=()) -> None:
        printer.indent -= 2 if guards else 1

    def regions(self, regions, printer: StmtPrinter, scope: Scope, guards=()) -> None:
        for r in regions:
            if isinstance(r, BlockReduce):
                print_block_reduce(r, printer, scope)
                continue
            if isinstance(r, BlockScan):
                print_block_scan(r, printer, scope)
                continue
            if isinstance(r, LanePhase):
                print_lane_phase(r, printer)
                continue
            if isinstance(r, LaneExchange):
                print_lane_exchange(r, printer)
                continue
            if isinstance(r, Phase) and self.form == "tile":
                print_uniform_phase(r, printer)
                continue
            if isinstance(r, Phase):
                if all(isinstance(st, (m.DeclStmt, m.Empty)) and all(
                        d.init is None and scope.placements.get(d.name) in ("thread_array", "kernel_var", "shared")
                        for d in getattr(st, "decls", ())) for st in r.stmts):
                    continue  # declarations of kernel-level storage only: nothing to run
                flag_only = all(isinstance(st, m.DeclStmt) and st.decls and st.decls[0].name in self.flags
                                for st in r.stmts)
                self.parallel(printer, r.span, () if flag_only else guards)
                self.phase_body(r, printer, scope)
                self.end_parallel(printer, () if flag_only else guards)
            elif isinstance(r, Exchange):
                self.exchange(r, printer, scope, guards)
            elif isinstance(r, UniformIf) and r.predicate is not None:
                flag = f"{r.predicate}[{scope.thread_index}]"
                self.regions(r.then, printer, scope, guards + (flag,))
                if r.other:
                    self.regions(r.other, printer, scope, guards + (f"not {flag}",))
            elif isinstance(r, Barrier):
                # a lockstep step's barrier: sync_step (the factory's, kernel.warp_barriers)
                printer.emit("sync_step()" if r.warp and self.form == "portable" else "T.sync_threads()", r.span)
            elif isinstance(r, SimtBody):
                printer.block(r.stmts)
            elif isinstance(r, UniformIf) and is_native_votes(r.cond) and not self.native_vote(r, guards):
                self.regions(r.other, printer, scope, guards)  # the vote through the counter
            elif isinstance(r, UniformIf):
                printer.emit(f"if {printer.expr.cond(r.cond)}:", r.span)
                printer.indent += 1
                self.regions(r.then, printer, scope, guards) if r.then else printer.emit("pass", None)
                printer.indent -= 1
                if r.other:
                    printer.emit("else:", r.span)
                    printer.indent += 1
                    self.regions(r.other, printer, scope, guards)
                    printer.indent -= 1
            elif isinstance(r, UniformLoop):
                self.uniform_loop(r, printer, scope, guards)

    def native_vote(self, r: UniformIf, guards) -> bool:
        """Whether a block vote's native branch (analysis.prepare.block_votes) may run on GPUs:
        every thread of the block runs its one statement once. A phase's ``T.Parallel`` over
        the block's threads, or the tile form's lanes of a 1-D block, gives each thread one CUDA
        thread; a predicate (a thread that returned, a thread-dependent branch) would leave
        threads out of the barrier, which then never completes. Elsewhere the counter votes."""
        if guards or len(r.then) != 1 or not isinstance(r.then[0], (Phase, LanePhase)):
            return False
        if self.form == "tile" and (list(self.tdims) != ["x"] or self.flags):
            return False
        stmts = [st for st in r.then[0].stmts if not isinstance(st, m.Empty)]
        if len(stmts) != 1 or not isinstance(stmts[0], m.ExprStmt):
            return False
        e = stmts[0].expr
        return is_block_vote(e.value if isinstance(e, m.Assign) and isinstance(e.target, m.Ref) else e)

    def phase_body(self, r: Phase, printer: StmtPrinter, scope: Scope) -> None:
        """A phase's statements, each per-thread value kept across barriers (a shared array
        indexed by the thread, ``color_x[tx]``) that the phase uses more than once held in a
        register meanwhile: read at the phase's start, stored back at its end where the phase
        assigns it. (Shared memory is no register: nvcc keeps every ``color_x[tx] += ...`` of a
        loop a shared load and store, and dpid's per-thread sums ran 3.6x slower than the CUDA.)"""
        held = _held_values(r.stmts, scope)
        if not held:
            printer.block(r.stmts)
            return
        taken = set(scope.placements) | scope.buffers | {n.name for st in r.stmts for n in m.walk(st)
                                                           if isinstance(n, m.Ref)}
        registers = {}
        for name, ref in held.items():
            registers[name] = fresh(f"{name}_r", taken)
            printer.emit(f"{registers[name]} = T.alloc_var({dtype_of(ref.type, scope)})", r.span)
            printer.emit(f"{registers[name]} = {name}[{scope.thread_index}]", r.span)
        scope.registers = registers
        try:
            printer.block(r.stmts)
        finally:
            scope.registers = {}
        written = set().union(*(changed_names(st) for st in r.stmts))
        for name in held:
            if name in written:
                printer.emit(f"{name}[{scope.thread_index}] = {registers[name]}", r.span)

    def exchange(self, r: Exchange, printer: StmtPrinter, scope: Scope, guards) -> None:
        """A warp shuffle/vote: write every thread's value, barrier, read the lane's source."""
        tdims = self.tdims
        lin = {1: "tx", 2: "ty * block_x + tx", 3: "(tz * block_y + ty) * block_x + tx"}[len(tdims)]
        nthreads = " * ".join(f"block_{d}" for d in tdims)
        e = printer.expr
        vote = r.op in ("ballot", "any", "all")
        template = not vote and isinstance(r.value.type, m.TemplateType)  # its buffer is of the instance's T
        dtype = "int32" if vote else r.value.type.name if template else scalar_name(r.value.type)
        buf = f"xch_{dtype}"
        native = r.op in _SHUFFLES and list(tdims) == ["x"]
        if native:
            # on CUDA the shuffle itself: a phase's T.Parallel iteration over a row of threads is
            # its thread (TileLang binds it to threadIdx.x, and a shuffle's operand is no access
            # it would vectorise), so lane and warp are the CUDA's (dpid's twenty float shuffles
            # through the shared buffer were forty barriers, 3.6x slower than the CUDA on the
            # H100). Every thread shuffles, over the whole warp, into a variable (not a bound
            # value, which TileLang would move into the guard), and only the threads the guards
            # keep take the result: a CUDA thread that returned has left its warp, while here it
            # only skips the guarded code, and a shuffle that waited for it would never end.
            # Only the CPU target, which has no warps, exchanges through the shared buffer.
            printer.emit('if target == "cuda":', r.span)
            printer.indent += 1
            self.parallel(printer, r.span)
            width = f", width={e.coerce(r.width, 'int32')}" if r.width is not None else ""
            of = scope.type_params.get(dtype, f"T.{dtype}") if template else f"T.{dtype}"
            printer.emit(f"x_src = T.alloc_var({of})", r.span)
            printer.emit(f"x_src = {_SHUFFLES[r.op]}({e.coerce(r.value, None if template else dtype)}, "
                         f"{_lane_operand(r.lane, e)}{width})", r.span)
            if guards:
                printer.emit(f"if {' and '.join(guards)}:", r.span)
                printer.indent += 1
            printer.emit(f"{e(r.target)} = x_src", r.span)
            printer.indent -= 3 if guards else 2
            printer.emit("else:", r.span)
            printer.indent += 1
        self.parallel(printer, r.span)
        value = f"T.if_then_else({e.cond(r.value)}, 1, 0)" if vote else e.coerce(r.value, None if template else dtype)
        printer.emit(f"{buf}[{lin}] = {value}", r.span)
        self.end_parallel(printer)
        printer.emit("T.sync_threads()", r.span)
        self.parallel(printer, r.span, guards)
        printer.emit(f"x_lane = ({lin}) % 32", r.span)
        if r.decl is not None and scope.placements.get(r.decl.name) == "phase":
            raise EmitError(f"result of a warp operation '{r.decl.name}' has no per-thread home", r.span)
        target = e(r.target)
        width = e.coerce(r.width, "int32") if r.width is not None else "32"
        if r.op in _SHUFFLE_SOURCE:
            src, ok = _SHUFFLE_SOURCE[r.op](lin, _lane_operand(r.lane, e), width, nthreads)
            printer.emit(f"{target} = T.if_then_else({ok}, {buf}[{src}], {buf}[{lin}])", r.span)
        else:  # votes: every lane combines the warp's flags
            init, combine = {"ballot": ("T.uint32(0)", None), "any": ("0", "|"), "all": ("1", "&")}[r.op]
            printer.emit(f"x_acc = T.alloc_var({'T.uint32' if r.op == 'ballot' else 'T.int32'})", r.span)
            printer.emit(f"x_acc = {init}", r.span)
            printer.emit("for x_src in T.serial(32):", r.span)
            printer.indent += 1
            printer.emit(f"if {lin} - x_lane + x_src < {nthreads}:", r.span)
            printer.indent += 1
            bit = f"{buf}[{lin} - x_lane + x_src]"
            if r.op == "ballot":
                printer.emit(f"x_acc = x_acc | (T.Cast(T.uint32, {bit}) << T.Cast(T.uint32, x_src))", r.span)
            else:
                printer.emit(f"x_acc = x_acc {combine} {bit}", r.span)
            printer.indent -= 2
            printer.emit(f"{target} = x_acc", r.span)
        self.end_parallel(printer, guards)
        printer.emit("T.sync_threads()", r.span)
        if native:
            printer.indent -= 1

    def uniform_loop(self, r: UniformLoop, printer: StmtPrinter, scope: Scope, guards=()) -> None:
        if r.kind == "for":
            canon = canonical_loop(m.For(r.init, r.cond, r.step, m.Empty(r.span), (), r.span), scope)
            if canon:
                var, start, stop, step = canon
                args = stop if (start == "0" and step == "1") else f"{start}, {stop}" + (
                    f", {step}" if step != "1" else "")
                printer.emit(f"for {var} in T.serial({args}):", r.span)
                printer.indent += 1
                self.regions(r.body, printer, scope, guards)
                printer.indent -= 1
                return
            if r.init is not None:
                printer.stmt(r.init)
            # (a condition that calls a device function's macro is retested at every iteration; one
            # that always holds runs on a flag: StmtPrinter.open_loop)
            printer.open_loop(r.cond, r.span)
            printer.indent += 1
            self.regions(r.body, printer, scope, guards)
            if r.step is not None:
                printer.s_ExprStmt(m.ExprStmt(r.step, r.step.span))
            printer.close_loop(r.span)
            printer.indent -= 1
            return
        if r.kind == "while":
            printer.open_loop(r.cond, r.span)
            printer.indent += 1
            self.regions(r.body, printer, scope, guards)
            printer.close_loop(r.span)
            printer.indent -= 1
            return
        # do-while: TileLang refuses ``while True:``, so the loop runs on a flag its condition sets
        flag = printer.open_flag_loop(r.span)
        printer.indent += 1
        self.regions(r.body, printer, scope, guards)
        printer.emit(f"{flag} = {printer.expr.cond(r.cond)}", r.span)
        printer.indent -= 1
        printer.close_flag_loop()


def _lane_operand(lane: m.Expr, e) -> str:
    """A shuffle's lane, delta or mask as an int32 index term. A constant prints as a plain
    number: ``__shfl_up_sync(m, v, 1)`` converts its 1 to the ``unsigned`` delta, and
    ``tx - T.uint32(1)`` would be an unsigned subtraction TileLang refuses where it folds
    ``tx`` to 0 (the source index is guarded by ``x_lane >= delta`` anyway)."""
    lit = strip_casts(lane)
    if isinstance(lit, m.IntLit) and 0 <= lit.value < 2 ** 31:
        return str(lit.value)
    return e.coerce(lane, "int32")


#: the shuffles an exchange makes with the CUDA's own warp on the CUDA target
_SHUFFLES = {"shfl": "T.shfl_sync", "shfl_down": "T.shfl_down", "shfl_up": "T.shfl_up", "shfl_xor": "T.shfl_xor"}

#: Where a shuffle reads from (an index into the exchange buffer) and when that source is valid
#: (else the lane keeps its own value, as CUDA does), for thread ``lin`` with lane ``x_lane``.
_SHUFFLE_SOURCE = {
    "shfl_down": lambda lin, d, w, n: (f"{lin} + {d}", f"x_lane % {w} + {d} < {w} and {lin} + {d} < {n}"),
    "shfl_up": lambda lin, d, w, n: (f"{lin} - {d}", f"x_lane % {w} >= {d}"),
    "shfl_xor": lambda lin, m, w, n: (f"{lin} - x_lane + (x_lane ^ {m})",
                                      f"(x_lane ^ {m}) // {w} == x_lane // {w} and "
                                      f"{lin} - x_lane + (x_lane ^ {m}) < {n}"),
    "shfl": lambda lin, s, w, n: (f"{lin} - x_lane + x_lane // {w} * {w} + {s} % {w}",
                                  f"{lin} - x_lane + x_lane // {w} * {w} + {s} % {w} < {n}"),
}


def _held_values(stmts, scope: Scope) -> dict[str, m.Ref]:
    """The per-thread scalars kept across barriers (placement ``thread_array``) that ``stmts``
    use inside a loop or more than twice (a register then saves shared accesses), none of them
    with its address taken: name -> a reference (its type)."""
    uses, first, looped, addressed = Counter(), {}, set(), set()

    def kept(n) -> bool:
        return isinstance(n, m.Ref) and n.kind == "local" and scope.placements.get(n.name) == "thread_array" \
            and not isinstance(n.type, (m.Array, m.Pointer))

    for n in (n for st in stmts for n in m.walk(st)):
        if kept(n):
            uses[n.name] += 1
            first.setdefault(n.name, n)
        elif isinstance(n, m.Unary) and n.op == "&" and isinstance(n.operand, m.Ref):
            addressed.add(n.operand.name)
        elif isinstance(n, (m.For, m.While, m.DoWhile)):
            looped |= {x.name for x in m.walk(n) if kept(x)}
    return {name: first[name] for name, k in uses.items() if (k > 2 or name in looped) and name not in addressed}
