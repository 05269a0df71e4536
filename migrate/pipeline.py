"""The passes that take a CUDA kernel from the model to printed TileLang, in order, and the one
place that decides the form it takes.

    ir.model.Function ──PREPARE──▶ prepared function ──phases──▶ portable or simt plan
        ──LIFTS──▶ tile plan ──emit──▶ factory lines + Signature ──emit.module──▶ module text

A kernel takes the first form that can be built *and printed*, in this order:

1. ``tile`` — a lifting pass proves it (maps, GEMMs, block reductions, block scans; see
   :data:`LIFTS`); a note M3003 says why not when none does;
2. ``portable`` — its barriers are uniform: one ``T.Parallel`` phase per barrier interval;
3. ``simt`` — thread-level TileLang, when the portable plan is refused (:class:`NotPortable`) or
   cannot be printed (warning M3002);
4. ``hybrid`` — the original CUDA behind the same launcher (:mod:`.emit.hybrid`, note M3008), for a
   kernel none of the above can take, when the conversion says how its file builds;
5. ``unsupported`` — error M3001 (or the frontend's error) with the construct that has no
   TileLang form, and M3009 saying why it cannot be kept as CUDA either.

A refusal is an exception: :class:`NotPortable` from the phase split or a preparation pass,
:class:`~migrate.analysis.lift.base.NotLiftable` from a lift, :class:`NoTileLangForm` (the
printer's :class:`~migrate.emit.printer.EmitError` is one) when a form cannot be expressed.
A bug is none of these: it costs its kernel only (M9001), never the file.

Passes live in ``analysis/`` (``prepare/`` normalise the model, ``facts/`` answer questions about
it, ``lift/`` build tile-form plans); the emitter (``emit/``) only prints a finished plan.
"""
from __future__ import annotations

import dataclasses
import traceback
from dataclasses import dataclass
from typing import Callable

from .analysis.facts.builtins import builtin_dims, used_dims
from .analysis.facts.calls import callees_first, callees_of
from .analysis.facts.launches import launch_defaults
from .analysis.facts.lockstep import lockstep_exchange
from .analysis.lift import delinearise
from .analysis.lift.base import MayRace, MicroTilesRefused, NoReduction, NotExchanges, NotGemm, NotLiftable, NotScan
from .analysis.lift.block_scalars import block_scalars
from .analysis.lift.forward_shared import forward_shared
from .analysis.lift.free_grid import plan_free_grid
from .analysis.lift.gemm import finish_layout, layout, plan_gemm
from .analysis.lift.map import map_elements, plan_elements, plan_map, static_sizes
from .analysis.lift.micro_tiles import expand_micro_tiles
from .analysis.lift.private_shared import privatise_shared
from .analysis.lift.reduce import plan_block_reduce, reduction_kinds
from .analysis.lift.row_registers import plan_row_registers
from .analysis.lift.scan import plan_block_scan
from .analysis.lift.shared_atomics import summed_cells
from .analysis.lift.staged_tables import staged_tables
from .analysis.lift.tile_loops import NotTileLoop, plan_tile_loops
from .analysis.lift.typed_views import retype_sole_views, view_refusal
from .analysis.lift.xor_exchanges import plan_xor_exchanges
from .analysis.phases import NotPortable, contains_barrier, plan_portable, plan_simt
from .analysis.recomputed_values import recompute_thread_values
from .analysis.prepare.block_votes import lower_block_votes
from .analysis.prepare.builtin_aliases import propagate_builtin_aliases
from .analysis.prepare.cas_loops import cas_loop_atomics
from .analysis.prepare.coop_groups import GroupError, lower_cooperative_groups
from .analysis.prepare.inline import (InlineError, hoist_warp_calls, inline_calls, inline_view_calls, needs_inlining,
                                      vector_calls)
from .analysis.prepare.names import unique_names
from .analysis.prepare.chained_assign import split_chained_assignments
from .analysis.prepare.constructors import constructed_objects
from .analysis.prepare.conditional_temps import conditional_temps
from .analysis.prepare.effect_conditions import effect_conditions_as_tests
from .analysis.prepare.field_pointers import field_pointers
from .analysis.prepare.device_globals import scalar_globals_as_buffers, shared_globals_into_kernels
from .analysis.prepare.null_tests import null_tests
from .analysis.prepare.pointer_copies import pointer_copies
from .analysis.prepare.pointer_returns import pointer_returns
from .analysis.prepare.pointer_views import GENERIC, pointer_aliases, why_not_a_view
from .analysis.prepare.renaming import rename_reassigned_locals
from .analysis.prepare.moving_pointers import moving_pointers
from .analysis.prepare.value_steps import split_value_steps
from .analysis.prepare.value_assignments import split_value_assignments
from .analysis.prepare.array_params import flatten_array_params
from .analysis.prepare.record_buffers import record_buffers
from .analysis.prepare.record_pointers import record_pointers
from .analysis.prepare.struct_params import StructParamError, struct_fields_as_params
from .analysis.prepare.cub_blocks import CubError, lower_cub_blocks
from .analysis.prepare.bit_copies import bit_copies
from .analysis.prepare.cub_adjacent import lower_cub_adjacent
from .analysis.prepare.cub_moves import lower_cub_moves
from .analysis.prepare.cub_scans import lower_cub_scans
from .analysis.prepare.iteration_arrays import iteration_arrays
from .analysis.prepare.late_init import late_initialisations
from .analysis.prepare.lockstep_steps import (barriers_out_of_branches, is_lockstep_barrier, lockstep_steps,
                                              stranded_barrier)
from .analysis.prepare.sincos import split_sincos
from .analysis.prepare.memory_copies import memory_copies
from .analysis.prepare.returns import remaining_returns, returns_to_guards
from .analysis.prepare.vectors import VectorError, scalar_constants, scalarize_vectors, uses_vectors
from .analysis.prepare.written_params import written_parameters
from .diagnostics import Diagnostic, make
from .emit.device import emit_device_function, extra_params
from .emit.dispatch import template_output
from .emit.hybrid import HybridContext, NotHybrid, hybrid_output, instance_models
from .emit.kernel import KernelOutput, KernelPrinter
from .emit.module import ModuleOutput, render_module
from .ir import model as m
from .ir.loops import Exchange, Form, GemmPlan, KernelPlan, NoTileLangForm, TileMap, UniformIf, UniformLoop
from .ir.names import factory_name


@dataclass(frozen=True)
class Options:
    """What the user asked of a conversion that changes the migrated code."""

    lift: bool = True  # --no-lift: False, every kernel keeps its CUDA thread structure
    no_lift: frozenset = frozenset()  # kernels that keep the portable form (convert --check re-emits them)
    allow_tf32: bool = False  # --allow-tf32: float32 GEMMs on tensor cores
    keep_original: bool = False  # --keep-original-code: each CUDA line quoted above its TileLang

    def lifts(self, kernel: str) -> bool:
        return self.lift and kernel not in self.no_lift


@dataclass(frozen=True)
class Pass:
    name: str
    why: str
    run: Callable


# -- 1. prepare: the model normalised for every form ---------------------------------------------


def _value_templates(fn, device, portable):
    for dev in callees_of(fn, device or {}):
        values = [t.name for t in dev.template_params if t.kind == "value"]
        if values:
            raise NoTileLangForm(f"device function template '{dev.name}' takes the value parameter '{values[0]}': "
                                 "each instance has a body of its own, which the migrated macros do not tell apart "
                                 "yet", dev.span)
    return fn


def _lockstep(fn, device, portable):
    found = lockstep_exchange(fn, device or {})
    if found is not None:
        where = "the kernel" if found.function == fn.name else f"device function '{found.function}'"
        written = f"writes shared '{found.buffer}' through one pointer view" if found.views \
            else f"writes volatile shared '{found.buffer}'"
        other = "reads it through another" if found.views else "reads another of its elements"
        raise NoTileLangForm(
            f"warp-synchronous code: {where} {written} (line {found.write.line}) and {other} (line "
            f"{found.read.line}) with no barrier between, relying on the threads of a warp running in lockstep, "
            "which TileLang does not keep", found.read)
    return fn


def lockstep_note(fn: m.Function) -> list[Diagnostic]:
    """M3007 where the prepared kernel runs warp-synchronous code as lockstep steps."""
    spans = [n.span for n in m.walk(fn.body) if is_lockstep_barrier(n)] if fn.body is not None else []
    if not spans:
        return []
    return [make("M3007", spans[0], f"warp-synchronous code run as {len(spans) // 2} lockstep steps (a barrier "
                                    "after the threads' reads and one after their writes): the CPU executor "
                                    "cannot run the original in lockstep, so only GPUs check it")]


def _lockstep_branches(fn, device, portable):
    fn = barriers_out_of_branches(fn)
    stranded = stranded_barrier(fn)
    if stranded is not None:
        raise NoTileLangForm("warp-synchronous code: its steps in lockstep need a barrier between the threads' "
                             f"reads and writes (line {stranded.line}), under a branch or loop that only some "
                             "threads run", stranded)
    return fn


#: how many times calls of device functions on vectors that the inlined bodies make are inlined in
#: turn (a template's instance calling another on its vectors)
_VECTOR_INLINE_ROUNDS = 4


def _inline(fn, device, portable):
    if not device:
        return fn
    try:
        targets = needs_inlining(device, portable)
        size = _inlined_size(fn, device, targets)
        if size > INLINED_NODES:
            raise NoTileLangForm(f"the kernel is about {size} model nodes once its device functions are inlined, "
                                 f"more than the {INLINED_NODES} its analysis takes in reasonable time", fn.span)
        fn = inline_view_calls(inline_calls(fn, device, targets), device, targets)
        for _ in range(_VECTOR_INLINE_ROUNDS):  # templates' instances on vectors (add(a, b) on float2)
            more = vector_calls(fn, device) - targets
            if not more:
                break
            targets = targets | more
            fn = inline_calls(fn, device, more)
        return fn
    except InlineError as exc:
        if portable:
            raise NotPortable(str(exc)) from None
        raise NoTileLangForm(str(exc), fn.span) from None


def _inlined_size(fn, device, targets) -> int:
    """How many model nodes ``fn`` has once the calls of ``targets`` are inlined (each call the
    callee's body, itself inlined), counted without inlining."""
    memo: dict[str, int] = {}

    def size(f, stack=()) -> int:
        if f.name in memo:
            return memo[f.name]
        total = 0
        for n in m.walk(f.body) if f.body is not None else ():
            total += 1
            if isinstance(n, m.Call) and n.callee in targets and n.callee in device and n.callee not in stack:
                total += size(device[n.callee], stack + (f.name,))
        memo[f.name] = total
        return total

    return size(fn)


#: the largest kernel body (model nodes, device functions inlined) the passes after inlining take:
#: some are quadratic in it; the pool's largest converted kernels have under 20 000, a hash kernel
#: whose rounds inline into 275 569 took minutes (2026-12-05)
INLINED_NODES = 100_000


def _groups(fn, device, portable):
    try:
        return lower_cooperative_groups(fn)
    except (GroupError, InlineError) as exc:
        raise NoTileLangForm(str(exc), getattr(exc, "span", None) or fn.span) from None


def _cub(lower):
    def run(fn, device, portable):
        try:
            return lower(fn)
        except (CubError, InlineError) as exc:
            raise NoTileLangForm(str(exc), getattr(exc, "span", None) or fn.span) from None
    return run


def _vectors(fn, device, portable):
    try:
        return scalarize_vectors(fn)
    except VectorError as exc:
        raise NoTileLangForm(str(exc), exc.span or fn.span) from None


def _struct_params(fn, device, portable):
    try:
        return struct_fields_as_params(fn)
    except StructParamError as exc:
        raise NoTileLangForm(str(exc), exc.span or fn.span) from None


def _warp_calls(fn, device, portable):
    if not portable:
        return fn
    try:
        return hoist_warp_calls(fn)
    except InlineError as exc:
        raise NotPortable(str(exc)) from None


def one_statement_each(fn: m.Function) -> m.Function:
    """The first :data:`DEVICE_TOO` :data:`PREPARE` passes, which device functions get too (before
    they are inlined or printed as macros): chained assignments, conditions with effects as tests,
    steps and assignments used as values, each a statement of its own; sincos-like calls as two
    assignments; memcpy/memset of typed arrays as loops; late-initialised locals declared at their value; array parameters flat; objects made by their
    constructors as method calls; parameters whose address is taken as locals; CUB loads,
    stores and exchanges as their loops and block reductions as their trees (whose barriers decide what is inlined)."""
    for p in PREPARE[:DEVICE_TOO]:
        try:
            fn = p.run(fn, None, True)
        except NoTileLangForm:
            pass  # left as it is: a kernel that calls it meets the construct and names it
    return fn


PREPARE = (
    Pass("chained assignments", "x = y = v; as y = v; x = y; (each assignment a statement of its own)",
         lambda fn, device, portable: split_chained_assignments(fn)),
    Pass("pointer returns", "a device function whose body returns a view of a buffer it is given (return c ? "
                            "&a[ind(i, j)] : 0;) is the expression it returns at each call: a macro returns no "
                            "pointer (analysis.prepare.pointer_returns)",
         lambda fn, device, portable: pointer_returns(fn, device)),
    Pass("conditions with effects", "if (a && (x = f()) < 0), if (++n == N), while (f(t++)): a test local computed "
                                    "operand by operand where C evaluates them, so the next two passes can take the "
                                    "effects (analysis.prepare.effect_conditions)",
         lambda fn, device, portable: effect_conditions_as_tests(fn, device)),
    Pass("steps used as values", "pre[j++] = i; as pre[j] = i; j += 1; where the stepped local is named once "
                                 "(analysis.prepare.value_steps)",
         lambda fn, device, portable: split_value_steps(fn)),
    Pass("assignments used as values", "while (k >>= 1), return z = f(z), if ((n = next[v]) < 0): the assignment "
                                       "stored first, its value read back (analysis.prepare.value_assignments)",
         lambda fn, device, portable: split_value_assignments(fn)),
    Pass("sincos calls", "sincosf(a, &s, &c); as s = sinf(a); c = cosf(a); (analysis.prepare.sincos)",
         lambda fn, device, portable: split_sincos(fn)),
    Pass("memory copies", "memcpy(y, ytemp, N * sizeof(double)); of typed arrays as an element loop, memset(a, 0, "
                          "...) as one storing zeros (analysis.prepare.memory_copies)",
         lambda fn, device, portable: memory_copies(fn)),
    Pass("late initialisations", "int tid; ... tid = threadIdx.x + ...; as int tid = threadIdx.x + ...; where "
                                 "nothing names tid in between (analysis.prepare.late_init)",
         lambda fn, device, portable: late_initialisations(fn)),
    Pass("array parameters", "double phi[][NY][NZ] as a flat buffer: phi[x][y][z] is phi[(x * NY + y) * NZ + z] "
                             "(analysis.prepare.array_params)",
         lambda fn, device, portable: flatten_array_params(fn)),
    Pass("record buffers", "a pointer to a struct of plain data too large for lanes (a parameter table, a structure "
                           "of arrays) as a buffer of its words: p->stack[a][b] is the word at the field's offset "
                           "plus the indices times their strides (analysis.prepare.record_buffers)",
         lambda fn, device, portable: record_buffers(fn)),
    Pass("record pointers", "a kernel's pointer to a struct of device buffers (clusters->means[i]) as one buffer "
                            "parameter per pointer field it reads (clusters_means[i]); the launcher takes the "
                            "struct's buffers (analysis.prepare.record_pointers)",
         lambda fn, device, portable: record_pointers(fn)),
    Pass("constructors", "Local l(p); with the project's own constructor as Local l; Local_Local(l, p); a method "
                         "call that fills the object (analysis.prepare.constructors)",
         lambda fn, device, portable: constructed_objects(fn)),
    Pass("bit copies", "*(unsigned*)&i, *reinterpret_cast<int*>(&x): a scalar's bits read as another number type of "
                       "its size, as the conversion or the CUDA bit-copy intrinsic it means "
                       "(analysis.prepare.bit_copies)",
         lambda fn, device, portable: bit_copies(fn)),
    Pass("addressed parameters", "a scalar parameter whose address the body takes (lcg(&seed)) is a local copy, "
                                 "as a local's address is inlined through (analysis.prepare.written_params)",
         lambda fn, device, portable: written_parameters(fn, addressed=True)),
    Pass("cub loads, stores and exchanges", "cub::BlockLoad / BlockStore (every algorithm) as the loop over a "
                                            "thread's items its arrangement reads or writes; BlockExchange and "
                                            "WarpExchange through a __shared__ array (analysis.prepare.cub_moves)",
         _cub(lower_cub_moves)),
    Pass("cub scans", "cub::BlockScan / WarpScan ExclusiveSum, InclusiveSum (with the aggregate), ExclusiveScan and "
                      "InclusiveScan with Sum/Max/Min as a shared-memory Hillis-Steele scan, a thread's items by "
                      "their total (analysis.prepare.cub_scans)", _cub(lower_cub_scans)),
    Pass("cub adjacent differences", "cub::BlockAdjacentDifference SubtractLeft / SubtractRight with CUB's or "
                                     "libcu++'s operators as each thread's edge item exchanged through a __shared__ "
                                     "array (analysis.prepare.cub_adjacent)", _cub(lower_cub_adjacent)),
    Pass("cub block reductions", "cub::BlockReduce<T, N>(temp_storage).Sum(v) / .Reduce(v, op) as the shared-memory "
                                 "tree it computes, the TempStorage a __shared__ array (analysis.prepare.cub_blocks)",
         _cub(lower_cub_blocks)),
    Pass("lockstep steps", "threads exchanging values through volatile shared memory, or through two pointer views "
                           "of a shared array, with no barrier between (a warp scan, the last warp of a reduction, a "
                           "transpose in 8-thread groups) rely on lockstep: each store becomes a read, "
                           "a barrier, the write and a barrier (analysis.prepare.lockstep_steps), before inlining "
                           "forgets the volatile", lambda fn, device, portable: lockstep_steps(fn, device or {})),
    Pass("warp-synchronous code", "an exchange the steps left without a barrier between would rely on lockstep, "
                                  "which no TileLang form keeps: refused (analysis.facts.lockstep)", _lockstep),
    Pass("CAS loops", "a device function that is an atomicCAS loop keeping a maximum, a minimum or a sum "
                      "(the float atomicMax CUDA lacks) is the atomic it computes: its calls become "
                      "atomicMax/atomicMin/atomicAdd (analysis.prepare.cas_loops)",
         lambda fn, device, portable: cas_loop_atomics(fn, device or {})),
    Pass("inline", "device functions with barriers (and, in the portable form, warp operations) are "
                   "inlined: the phase split must see where their phases end; so are those called with a "
                   "view into a buffer (row = x + r*n): a macro takes whole buffers", _inline),
    Pass("cub block reductions inlined", "a device function template's cub::BlockReduce on its value parameters "
                                         "(BlockReduce<T, kBlockDimX, ...>), lowered once inlining bound them "
                                         "(analysis.prepare.cub_blocks)", _cub(lower_cub_blocks)),
    Pass("pointer copies", "*(void**)&p of a local pointer p (a pointer swap inlined) as p itself, a void* local "
                           "that only holds such copies of T* pointers a T* (analysis.prepare.pointer_copies)",
         lambda fn, device, portable: pointer_copies(fn)),
    Pass("inlined bit copies", "*(uint16_t*)val of a device function given &elem reads, once inlined, a local's bits: "
                               "the bit copies pass again (analysis.prepare.bit_copies)",
         lambda fn, device, portable: bit_copies(fn)),
    Pass("null tests", "a null pointer an inlined device function was given, tested (mask == nullptr ? 1 : "
                       "mask[i]): the test decided, the branch C never evaluates gone (analysis.prepare.null_tests)",
         lambda fn, device, portable: null_tests(fn)),
    Pass("field pointers", "const VP *vp = &params.vps[idx][0]; into an array field of a struct value: vp[i] read "
                           "as params.vps[idx][i] (analysis.prepare.field_pointers)",
         lambda fn, device, portable: field_pointers(fn)),
    Pass("block votes", "__syncthreads_count / _and / _or as barriers around a __shared__ counter that the "
                        "threads whose predicate holds add one to, beside the CUDA's own vote that GPUs run "
                        "where every thread runs it (analysis.prepare.block_votes)",
         _cub(lower_block_votes)),
    Pass("struct parameters", "a struct holding pointers passed by value (cartesian g with double *x, *y) as "
                              "one parameter per field: g.x is the buffer g_x (analysis.prepare.struct_params)",
         _struct_params),
    Pass("barriers out of branches", "if (tid < 32) { step; barrier; step; }, the lockstep steps inlined: each "
                                     "stretch between the barriers guarded by the condition "
                                     "(analysis.prepare.lockstep_steps)",
         _lockstep_branches),
    Pass("value templates", "a device function template with value parameters (template <int N>) left a macro "
                            "has a body per instance: refused, not one macro for every instance (an inlined one "
                            "is instantiated for its call: analysis.prepare.instances)", _value_templates),
    Pass("cooperative groups", "thread_block and tiled_partition objects become the builtins they wrap",
         _groups),
    Pass("vectors", "float4, half2, ... become their lanes: TileLang buffers here are scalar", _vectors),
    Pass("written parameters", "a scalar parameter the body assigns (index = index + 1 in a loop) is read and "
                               "written through a local copy: TileLang binds a parameter once "
                               "(analysis.prepare.written_params)",
         lambda fn, device, portable: written_parameters(fn)),
    Pass("warp calls", "each shuffle or vote gets a statement of its own (portable: it becomes an exchange "
                       "through shared memory)", _warp_calls),
    Pass("conditional temps", "a conditional inside another's condition (nested MAX macros) is stored in a local "
                              "first: TileLang's layout inference is exponential in such nesting "
                              "(analysis.prepare.conditional_temps)",
         lambda fn, device, portable: conditional_temps(fn)),
    Pass("unique names", "every local gets a valid Python name of its own",
         lambda fn, device, portable: unique_names(fn)),
    Pass("returns to guards", "TileLang phases cannot return: what follows a thread's return is guarded",
         lambda fn, device, portable: returns_to_guards(fn)),
    Pass("moving pointers", "a pointer the body steps (src += row * pitch; ++p) becomes an integer offset into "
                            "its buffer, each access an index (analysis.prepare.moving_pointers)",
         lambda fn, device, portable: moving_pointers(fn)),
    Pass("iteration arrays", "a thread's array that each iteration of a loop around barriers writes whole before "
                             "reading it (q[j] = f(v[j]) for every j) is declared in that iteration: a local of "
                             "the phase that uses it, not a row per thread kept across the barriers "
                             "(analysis.prepare.iteration_arrays)",
         lambda fn, device, portable: iteration_arrays(fn) if portable else fn),
)

#: how many of the first :data:`PREPARE` passes device functions get too (:func:`one_statement_each`):
#: those up to and including the CUB block reductions
DEVICE_TOO = 1 + next(i for i, p in enumerate(PREPARE) if p.name == "cub block reductions")


def prepare(fn: m.Function, device: dict[str, m.Function] | None = None,
            portable: bool = True) -> tuple[m.Function, dict]:
    """The :data:`PREPARE` passes in order, then local pointers folded into the buffers they
    view (``row[j]`` → ``x[r*n + j]``); returns the function and its pointer aliases."""
    for p in PREPARE:
        fn = p.run(fn, device, portable)
    moved = _advanced_pointer_params(fn)
    if moved:
        name, span = moved
        raise NoTileLangForm(f"pointer parameter '{name}' is advanced in the kernel body ({name} += ...): "
                             "its later uses would lose the offset", span)
    fn, aliases, unresolved = pointer_aliases(fn)
    if unresolved:  # the first pointer with a reason of its own, else the first
        d, why = next(((d, w) for d in unresolved for w in [why_not_a_view(fn, d)] if w != GENERIC),
                      (unresolved[0], GENERIC))
        raise NoTileLangForm(f"local pointer '{d.name}' is not a fixed view of a buffer parameter: {why}", d.span)
    return fn, aliases


def _advanced_pointer_params(fn: m.Function):
    """(name, span) of the first pointer parameter the body assigns or steps (``x += off``,
    ``x = x + off``, ``++x``), or None."""
    params = {p.name for p in fn.params if isinstance(p.type, m.Pointer)}
    for node in m.walk(fn.body) if fn.body else ():
        if isinstance(node, m.Assign) and isinstance(node.target, m.Ref) and node.target.name in params:
            return node.target.name, node.span
        if isinstance(node, m.Unary) and node.op in ("++", "--") and isinstance(node.operand, m.Ref) \
                and node.operand.name in params:
            return node.operand.name, node.span
    return None


def plan_threads(fn: m.Function, device_fns: list[m.Function]) -> tuple[KernelPlan, str]:
    """The portable plan of a prepared kernel (``analysis/phases.py``), or its simt plan with
    the reason the portable form is refused."""
    try:
        for dev in device_fns:
            if dev.body is not None and contains_barrier(dev.body):
                raise NotPortable(f"device function '{dev.name}' contains a barrier")
            for node in m.walk(dev.body) if dev.body else ():
                if isinstance(node, m.Call) and node.kind in ("warp", "cg"):
                    raise NotPortable(f"device function '{dev.name}' uses '{node.callee}'")
        return plan_portable(fn), ""
    except NotPortable as exc:
        return plan_simt(fn), str(exc)


# -- 2. lift: the tile form, where a pass proves it ---------------------------------------------

#: The lifts in the order :meth:`KernelPipeline.lift` tries them, each on the portable plan of a
#: prepared kernel, its typed views settled first. A map is tried first (after expanding register
#: micro-tiles and forwarding shared-memory caches when the plain kernel is not one); a map whose
#: element runs a k loop of multiply-adds is a GEMM. Else block reductions, else block scans, else
#: lane exchanges, else tiled loops (map phases between barriers); when none proves a form, all are
#: tried again on the kernel with its block-wide shared values rewritten
#: (:meth:`KernelPipeline.lift_block_values`). The first to prove its form wins; the refusals are
#: the M3003 note when none does. Then the passes of :data:`AFTER_LIFT` that apply to the lifted
#: plan run, in this order.
LIFTS = (
    Pass("typed views", "before the lifts: a shared array reached through one view of another element type alone "
                        "is declared as that view; a buffer parameter's views are carried (declared on its memory) "
                        "where one name reaches each stored parameter, any other view refuses the lifts "
                        "(analysis.lift.typed_views)", retype_sole_views),
    Pass("map", "independent elements: a map over tiles of the element domain (analysis.lift.map)", plan_map),
    Pass("private shared", "shared arrays each thread uses at its own key alone become the element's local arrays, "
                           "so the kernel is a map (analysis.lift.private_shared)", privatise_shared),
    Pass("micro-tiles", "register micro-tiles as elements, so a register-blocked GEMM is a map "
                        "(analysis.lift.micro_tiles)", expand_micro_tiles),
    Pass("forward shared", "shared-memory caches forwarded: a read of a staged tile is the value its "
                           "writer stored (analysis.lift.forward_shared)", forward_shared),
    Pass("gemm", "a map whose element is a k loop of multiply-adds: a tiled, pipelined GEMM "
                 "(analysis.lift.gemm)", plan_gemm),
    Pass("block reduction", "shared-memory and warp-shuffle trees become T.reduce over the block's lanes "
                            "(analysis.lift.reduce, warp, warp_rows)", plan_block_reduce),
    Pass("block scan", "a prefix sum through shared memory becomes T.cumsum (analysis.lift.scan)",
         plan_block_scan),
    Pass("lane exchanges", "warps' shuffles of constant xor masks or source lanes become exchanges between lanes: "
                           "each lane reads its partner's value (analysis.lift.xor_exchanges)", plan_xor_exchanges),
    Pass("tiled loops", "block-uniform loops whose barriers separate map phases (a tile of points loaded into "
                        "shared memory, then read by every thread) keep their loops; each phase is a loop over the "
                        "block's lanes, the values a thread carries across phases lane buffers "
                        "(analysis.lift.tile_loops)", plan_tile_loops),
    Pass("block scalars", "when none of the above lifts the kernel: shared scalars thread 0 sets to a block-wide "
                          "value become every thread's variables, and the lifts are tried again "
                          "(analysis.lift.block_scalars)", block_scalars),
    Pass("staged tables", "with them: shared tables staged from an input and read at block-wide places are read as "
                          "the loads they staged (analysis.lift.staged_tables)", staged_tables),
)

#: What runs on a lifted plan, in order, each where it applies: a GEMM is laid out, then
#: delinearised; a map delinearised, then its static sizes found; a reduction delinearised, then
#: its rows kept in registers and its grid freed.
AFTER_LIFT = (
    Pass("gemm layout", "which operands are copied whole, which sizes are compiled in, which tensor cores "
                        "(analysis.lift.gemm; decided on the flat buffers)", layout),
    Pass("delinearise", "flat buffer offsets as row-major indices where the guards prove them "
                        "(maps, GEMMs, reductions; analysis.lift.delinearise)", delinearise.shape_plan),
    Pass("static sizes", "maps that divide by sizes compile them in on GPUs (analysis.lift.map)", static_sizes),
    Pass("row registers", "lanes' strided loops over a row unroll at compiled-in lengths, the row in "
                          "registers (reductions; analysis.lift.row_registers)", plan_row_registers),
    Pass("free grid", "grid-stride reductions whose result does not depend on the grid launch enough "
                      "blocks to fill the GPU (analysis.lift.free_grid)", plan_free_grid),
)


@dataclass
class Lifted:
    """A tile-form plan with what the report says of it."""

    plan: KernelPlan
    reason: str
    notes: list[Diagnostic] = dataclasses.field(default_factory=list)
    kept_flat: dict = dataclasses.field(default_factory=dict)  # buffer -> (span, reason): notes M3005
    tolerance: str | None = None


class KernelPipeline:
    """Runs the passes on the kernels of one translation unit and prints each plan."""

    def __init__(self, unit: m.TranslationUnit, printer: KernelPrinter, options: Options,
                 device: dict[str, m.Function]) -> None:
        self.unit, self.printer, self.options = unit, printer, options
        self.device = device
        #: an instance of a template converted per instance -> the template (its launch sites, options)
        self.template_of = {i.name: fn.name for fn in unit.kernels for i in fn.instances}

    def kernel(self, fn: m.Function) -> KernelOutput:
        """The kernel in the best form it can take; a bug costs only this kernel (M9001)."""
        try:
            return self._kernel(fn)
        except Exception as exc:  # a bug in a pass or the printer: report it for this kernel
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            out = KernelOutput(fn.name, Form.UNSUPPORTED, f"internal error while emitting: {last}")
            out.diagnostics.append(make("M9001", fn.span, out.reason))
            return out

    def _kernel(self, fn: m.Function, force_simt: bool = False) -> KernelOutput:
        out = KernelOutput(fn.name, Form.UNSUPPORTED, "")
        try:
            why = ""
            if not force_simt:
                try:
                    prepared, _aliases = prepare(fn, self.device, portable=True)
                except NotPortable as exc:
                    force_simt, why = True, str(exc)
            if force_simt:
                prepared, _aliases = prepare(fn, self.device, portable=False)
            callees = callees_of(prepared, self.device)
            steps = lockstep_note(prepared)
            if force_simt:
                kplan, why = plan_simt(prepared), why or "requested"
            else:
                kplan, why = plan_threads(prepared, callees)
            if steps and kplan.form == Form.SIMT:
                raise NoTileLangForm("warp-synchronous code: its lockstep steps would put barriers in thread-level "
                                     f"code ({why}), where not every thread may reach them", steps[0].span)
            out.form = kplan.form
            out.reason = "barriers are uniform: one T.Parallel phase per barrier interval" \
                if kplan.form == Form.PORTABLE else f"thread-level code needed: {why}"
            if kplan.form == Form.PORTABLE and self.options.lifts(self.template_of.get(fn.name, fn.name)):
                lifted = self.lift(prepared, kplan, callees, out)
                if lifted is None:
                    lifted, prepared = self.lift_block_values(prepared, callees, out)
                if lifted is not None:
                    done = self.print_lifted(prepared, lifted, callees)
                    done.diagnostics += steps
                    return done
            if kplan.form == Form.PORTABLE:  # its per-thread indices in registers, not shared arrays
                kplan = recompute_thread_values(kplan)
            self.printer.print(out, kplan, callees, prepared)
            out.diagnostics += steps
            if out.form == Form.SIMT:  # every thread-level kernel says why (a fallback, below, says its own)
                out.diagnostics.append(make("M3002", fn.span, f"kept at thread level (simt): {why}"))
        except NoTileLangForm as exc:
            if not force_simt and out.form == Form.PORTABLE:
                fallback = self._kernel(fn, force_simt=True)
                if fallback.form == Form.SIMT:
                    fallback.reason = f"thread-level code needed: {exc}"
                    fallback.diagnostics = [d for d in fallback.diagnostics if d.code != "M3002"]
                    fallback.diagnostics.append(make(
                        "M3002", exc.span or fn.span, f"kept at thread level (simt): {exc}"))
                    return fallback
            out.form = Form.UNSUPPORTED
            out.reason = str(exc)
            out.lines = []
            out.diagnostics.append(make("M3001", exc.span or fn.span, str(exc)))
        return out

    def print_lifted(self, prepared: m.Function, lifted: Lifted, callees) -> KernelOutput:
        out = KernelOutput(prepared.name, Form.TILE, lifted.reason)
        self.printer.print(out, lifted.plan, callees, prepared, tolerance=lifted.tolerance)
        out.diagnostics += lifted.notes
        out.diagnostics += [make("M3005", span, f"buffer '{name}' kept flat: {reason}")
                            for name, (span, reason) in sorted(lifted.kept_flat.items())]
        return out

    # -- the lifts ------------------------------------------------------------------------------
    def lift(self, prepared: m.Function, kplan: KernelPlan, callees, out: KernelOutput) -> Lifted | None:
        """The tile form of the kernel when a lifting pass proves it (:data:`LIFTS`); None, with a
        note on ``out`` saying why, when none applies."""
        retyped = retype_sole_views(prepared)  # views of another element type (analysis.lift.typed_views)
        if retyped is not prepared:
            try:
                prepared, kplan = retyped, plan_portable(retyped)
            except NotPortable:
                pass
        refused = view_refusal(prepared)
        if refused is not None:
            out.diagnostics.append(make("M3003", refused[1], f"not lifted to tile form: {refused[0]}"))
            return None
        lifted = self._lift(prepared, kplan, callees, out)
        if lifted is None:
            return None
        views = m.param_views(prepared.body)
        dropped = sorted(v for v in views if not any(
            name == v and vp.placement == "shared" for name, vp in lifted.plan.vars.items()))
        if dropped:  # a lift that would print a view's reads without declaring it
            out.diagnostics.append(make("M3003", prepared.span, "not lifted to tile form: its lift does not "
                                        f"carry the view '{dropped[0]}' of buffer '{views[dropped[0]]}'"))
            return None
        return lifted

    def _lift(self, prepared: m.Function, kplan: KernelPlan, callees, out: KernelOutput) -> Lifted | None:
        tplan, reasons = self.map_plan(prepared, kplan, callees, out)
        if tplan is None:
            return None if reasons is None else self.reduction_or_scan(prepared, kplan, callees, reasons, out)
        if tplan.regions[0].races:  # a GEMM's tiles reorder the elements' work: proven stores only
            return self.lift_map(tplan)
        try:
            gplan = plan_gemm(tplan.regions[0])
        except NotGemm:
            return self.lift_map(tplan)
        return self.lift_gemm(prepared, tplan, gplan)

    def lift_block_values(self, prepared: m.Function, callees, out: KernelOutput) -> tuple[Lifted | None, m.Function]:
        """(the tile form, the function it lifts) of a kernel that did not lift as it is, once its
        shared scalars that carry one block-wide value are every thread's variables
        (:mod:`.analysis.lift.block_scalars`) and its shared tables staged from inputs are read as
        the loads they stage (:mod:`.analysis.lift.staged_tables`); (None, ``prepared``) when it has
        none or still does not lift, the notes on ``out`` then saying why the rewritten kernel does not."""
        scalars = staged_tables(block_scalars(prepared))
        if scalars is prepared:
            return None, prepared
        kplan, _why = plan_threads(scalars, callees)
        if kplan.form != Form.PORTABLE:
            return None, prepared
        notes = [d for d in out.diagnostics if d.code == "M3003"]
        out.diagnostics = [d for d in out.diagnostics if d.code != "M3003"]
        lifted = self.lift(scalars, kplan, callees, out)
        if lifted is None and not any(d.code == "M3003" for d in out.diagnostics):
            out.diagnostics += notes
        return (lifted, scalars) if lifted is not None else (None, prepared)

    def map_plan(self, prepared: m.Function, kplan: KernelPlan, callees, out: KernelOutput):
        """(the kernel's map plan, []) when it is a map, once its register micro-tiles are
        expanded and its shared-memory caches forwarded if need be; else (None, the reasons the
        passes gave), or (None, None) with a note on ``out`` for a micro-tiled kernel that is not
        a GEMM."""
        micro = None  # register micro-tiles as elements (analysis.lift.micro_tiles)
        elements = None  # the kernel's elements, whose stores the race rule checks again (below)
        try:
            elements = map_elements(prepared, kplan, callees)
            return plan_elements(elements, threads=False), []
        except NotLiftable as not_map:
            tplan, reasons = None, [not_map]
        try:  # shared arrays each thread keeps as its own scratch, as the element's local arrays
            private, races = privatise_shared(prepared, callees, self.block_width(prepared.name))
            if private is not prepared:
                tplan = plan_map(private, plan_portable(private), callees, threads=True)
                tile = tplan.regions[0]
                return dataclasses.replace(tplan, regions=(dataclasses.replace(tile, races=tile.races + races),)), []
        except (NotLiftable, NotPortable):
            tplan = None
        try:  # micro-tiles expanded and shared-memory caches forwarded, the kernel may be a map
            expanded, micro = expand_micro_tiles(prepared)
            forwarded = forward_shared(expanded)
            if forwarded is not prepared:
                # elements that read what a barrier ordered in the CUDA, or micro-tiles: stores are proven apart
                tplan = plan_map(forwarded, plan_portable(forwarded), callees, threads=False)
        except (NotLiftable, NotPortable) as not_forwarded:
            reasons.append(not_forwarded)
            if micro is not None or isinstance(not_forwarded, MicroTilesRefused):
                # a micro-tiled kernel: why its expansion or forwarding failed is the reason
                out.diagnostics.append(make("M3003", prepared.span, f"not lifted to tile form: {not_forwarded}"))
                return None, None
        if tplan is None and isinstance(reasons[0], MayRace):
            try:  # the stores not proven apart, each element one CUDA thread: CUDA's race rule (M3006)
                return plan_elements(elements, threads=True), []  # (a MayRace comes from their check)
            except MayRace:
                pass  # elements that are not CUDA threads (a grid-stride loop): the proof stays the rule
            except NotLiftable as not_on_race_rule:
                reasons[0] = not_on_race_rule  # what stops it on the race rule as well
        if tplan is None:
            return None, reasons
        if micro is None:
            return tplan, reasons
        tile = tplan.regions[0]
        try:
            if any(tile.block_sizes.get(d) != micro.block[d] * n for d, n in micro.per_thread.items()):
                raise NotGemm("the tile of its blocks is not what their micro-tiles cover")
            plan_gemm(tile)
        except NotGemm as not_gemm:
            out.diagnostics.append(make("M3003", prepared.span, "not lifted to tile form: register micro-tiles "
                                        f"are lifted in GEMMs only, and this is not one: {not_gemm}"))
            return None, None
        return dataclasses.replace(tplan, regions=(dataclasses.replace(tile, per_thread=micro.per_thread),)), []

    def reduction_or_scan(self, prepared: m.Function, kplan: KernelPlan, callees, reasons, out: KernelOutput):
        tdims = used_dims(builtin_dims([prepared] + callees)[0])
        cached = False
        try:
            renamed = propagate_builtin_aliases(prepared)
            rplan = plan_block_reduce(renamed, plan_portable(renamed) if renamed is not prepared else kplan, tdims,
                                      launch_x=self.block_width(prepared.name), callees=callees)
        except (NotLiftable, NotPortable) as not_reduce:
            rplan, cached = self.reduce_beside_caches(prepared, tdims, callees), True
            if rplan is None:
                reasons.append(not_reduce)
                return self.scan_or_exchanges(prepared, kplan, callees, tdims, reasons, out)
        rplan, kept_flat = delinearise.shape_plan(rplan, factory_name)
        notes = []
        rplan, why_not = plan_row_registers(rplan)
        if why_not:
            notes.append(make("M3003", prepared.span, f"row loops not unrolled: {why_not}"))
        rplan, grid_kept = plan_free_grid(rplan, callees)
        if grid_kept:
            notes.append(make("M3003", prepared.span, f"CUDA grid kept: {grid_kept}"))
        reason = f"its {reduction_kinds(rplan)} reductions become T.reduce over the block's lanes"
        if cached:
            reason += "; its shared-memory caches are forwarded"
        if rplan.rows is not None:
            reason += "; its lanes' strided loops unroll at compiled-in lengths" + (
                ", the row kept in registers" if rplan.rows.caches else "")
        if rplan.free_grid is not None:
            reason += "; its grid grows to fill the GPU"
        return Lifted(rplan, reason, notes, kept_flat)

    def reduce_beside_caches(self, prepared: m.Function, tdims, callees) -> KernelPlan | None:
        """The block reductions of a kernel that sums cells of shared memory through atomics
        beside shared-memory caches (aop's SVD terms staged for the block): the caches forwarded
        (analysis.lift.forward_shared, the summed cells and the barriers kept), then the sums
        lifted (analysis.lift.shared_atomics); None where either refuses."""
        cells = summed_cells(prepared)
        if not cells:
            return None
        try:
            forwarded = forward_shared(prepared, keep=cells)
            if forwarded is prepared:
                return None
            renamed = propagate_builtin_aliases(forwarded)
            return plan_block_reduce(renamed, plan_portable(renamed), tdims,
                                     launch_x=self.block_width(prepared.name), callees=callees)
        except (NotLiftable, NotPortable):
            return None

    def scan_or_exchanges(self, prepared: m.Function, kplan: KernelPlan, callees, tdims, reasons, out: KernelOutput):
        """A block scan, else lanes exchanging values, else tiled loops, else None with the M3003
        note on ``out`` (``reasons``: the refusals of the lifts tried before)."""
        try:
            splan = plan_block_scan(prepared, kplan, self.block_size(prepared.name),
                                    self.shared_bytes(prepared.name))
        except NotScan as not_scan:
            try:  # threads that talk only through shuffles of constant partners: lanes exchanging values
                return Lifted(plan_xor_exchanges(prepared, kplan),
                              "its warps' shuffles become exchanges between lanes: each lane reads its "
                              "partner's value (lane ^ mask, or a constant lane) from the values the lanes gave")
            except NotExchanges as not_exchanges:
                if not_exchanges.candidate:  # a network of shuffles, one of which is refused
                    out.diagnostics.append(make("M3003", prepared.span, f"not lifted to tile form: {not_exchanges}"))
                    return None
            try:  # map phases around and inside block-uniform loops: lane loops, the shared tiles kept
                return Lifted(plan_tile_loops(prepared, kplan, tdims, callees),
                              "its barriers separate map phases: each a loop over the block's lanes, the "
                              "block-uniform loops around them serial, the shared tiles kept")
            except NotTileLoop as not_tiles:
                tiles = not_tiles if not_tiles.candidate else None
            # with barriers: the scan pass speaks for kernels that look like scans, the
            # block-reduction pass for kernels that may reduce (a loop around a barrier, a
            # warp exchange) unless it knows only that they do not, then the tiled loops' pass
            # for the tiled loops it refused; forwarding (or the map after it) else
            reduces = _loops_or_exchanges(kplan.regions)
            reason = not_scan if not_scan.candidate else reasons[0] if len(kplan.regions) == 1 \
                else reasons[-1] if reduces else reasons[-2]
            if tiles is not None and (tiles.decisive or not_scan.candidate and not not_scan.proved
                                      or not not_scan.candidate and isinstance(reason, NoReduction)):
                reason = tiles
            out.diagnostics.append(make("M3003", prepared.span, f"not lifted to tile form: {reason}"))
            return None
        return Lifted(splan, "its prefix sum through shared memory becomes T.cumsum over the block's segment")

    def lift_gemm(self, prepared: m.Function, tplan: KernelPlan, gplan: GemmPlan) -> Lifted:
        gplan = dataclasses.replace(gplan, layout=layout(prepared, gplan, self.options.allow_tf32))
        gplan, shapes, kept_flat = delinearise.shape_gemm(tplan.fn, gplan, factory_name)
        plan = dataclasses.replace(tplan, regions=(finish_layout(gplan),), shapes=shapes)
        reason = "a GEMM: A and B tiles through shared memory, a pipelined K loop, the accumulator in registers"
        tolerance = None
        if gplan.layout.tf32:
            tolerance = "tf32"
            reason += " (tensor cores, tf32: --allow-tf32)"
        return Lifted(plan, reason, kept_flat=kept_flat, tolerance=tolerance)

    def lift_map(self, tplan: KernelPlan) -> Lifted:
        tplan, kept_flat = delinearise.shape_plan(tplan, factory_name)
        tile = tplan.regions[0]
        if isinstance(tile, TileMap):
            single = {name for name, vp in tplan.vars.items() if vp.single_assignment}
            tplan = dataclasses.replace(tplan, regions=(dataclasses.replace(
                tile, static=static_sizes(tplan.fn, tile, single)),))
        tile = tplan.regions[0]
        notes = [make("M3006", tile.span, f"not proven: {why}; each element is one CUDA thread, which would race "
                                          "there as well, so the lift takes the CUDA to be race-free")
                 for why in tile.races]
        return Lifted(tplan, "its elements are independent: a map over tiles of its element domain",
                      notes, kept_flat=kept_flat)

    def block_width(self, kernel: str) -> int | None:
        """The block's x size every launch of ``kernel`` in the file gives as a constant, if any
        (of a 1-D, 2-D or 3-D block)."""
        block = launch_defaults(self.unit, self.template_of.get(kernel, kernel)).get("block")
        if block is None:
            return None
        dims = block.strip("()").split(",")
        return int(dims[0]) if dims[0].strip().isdigit() else None

    def block_size(self, kernel: str) -> int | None:
        """The block size (x) every launch of ``kernel`` in the file gives as a constant, if any."""
        return self._launch_constant(kernel, "block")

    def shared_bytes(self, kernel: str) -> int | None:
        """The dynamic shared memory every launch of ``kernel`` in the file gives as a constant, if any."""
        return self._launch_constant(kernel, "shared_bytes")

    def _launch_constant(self, kernel: str, key: str) -> int | None:
        value = launch_defaults(self.unit, self.template_of.get(kernel, kernel)).get(key)
        return int(value) if value is not None and value.isdigit() else None

    # -- device functions -----------------------------------------------------------------------
    def device_function(self, fn: m.Function):
        """A device function prepared for printing as a ``T.macro``: (function, result local or
        None); a construct it cannot take raises :class:`NoTileLangForm`."""
        fn = unique_names(fn)
        result = None
        if fn.body is not None and not isinstance(fn.returns, m.Opaque) and \
                not (isinstance(fn.returns, m.Scalar) and fn.returns.dtype == "void"):
            body = fn.body.stmts
            single_final = body and isinstance(body[-1], m.Return) and \
                sum(isinstance(n, m.Return) for n in m.walk(fn.body)) == 1
            if not single_final:
                result = m.Ref("result_", "local", fn.returns, fn.span)
                fn = returns_to_guards(fn, result)
        if fn.body is not None:
            fn = returns_to_guards(fn) if result is None and isinstance(fn.returns, m.Scalar) \
                and fn.returns.dtype == "void" else fn
            last = fn.body.stmts[-1] if fn.body.stmts else None
            nested = [r for r in remaining_returns(fn) if r is not last]
            if nested:  # (inside a switch inside a loop): a macro cannot return from control flow
                raise NoTileLangForm(f"'return' inside a loop's switch in device function '{fn.name}'",
                                     nested[0].span)
        try:
            fn = inline_view_calls(fn, self.device)
        except InlineError as exc:
            raise NoTileLangForm(str(exc), fn.span) from None
        fn, _aliases, unresolved = pointer_aliases(fn)
        if unresolved:
            raise NoTileLangForm(f"local pointer '{unresolved[0].name}' in device function '{fn.name}': "
                                 f"{why_not_a_view(fn, unresolved[0])}",
                                 unresolved[0].span)
        if uses_vectors(fn):
            raise NoTileLangForm(f"device function '{fn.name}' works on vector types", fn.span)
        return fn, plan_simt(fn), result


def migrate_unit(unit: m.TranslationUnit, display: str, frontend_diags: dict[str, list[Diagnostic]],
                 options: Options = Options(), hybrid: HybridContext | None = None) -> ModuleOutput:
    """Every kernel of ``unit`` whose frontend diagnostics have no error, in its best form, and
    the device functions they call as macros; a kernel whose macro cannot be printed is not
    migrated (M3001). With ``hybrid`` (how the file builds), a kernel not migrated is kept as its
    CUDA where it can be (:func:`kept_as_cuda`). Returns the module text and each kernel's outcome."""
    original = unit
    tags = {unit.file: ""}
    unit = shared_globals_into_kernels(scalar_globals_as_buffers(scalar_constants(unit)))
    device = {f.name: one_statement_each(f) for f in unit.device_functions}
    # the globals a kernel takes as buffers (emit.kernel.symbol_globals) reach its macros as arguments
    buffers = frozenset(g.name for g in unit.globals if g.storage in ("constant", "device", "managed"))
    extras = {name: extra_params(name, device, buffers=buffers) for name in device}
    # a device function assigning its values in straight-line code computes an expression of its
    # arguments once each reassignment is a value of its own (a hash stepping its parameter)
    values = {f.name: rename_reassigned_locals(f) for f in unit.device_functions}
    pipeline = KernelPipeline(unit, KernelPrinter(unit, tags, extras, values), options, device)
    outputs: list[KernelOutput] = []
    for fn in unit.kernels:
        errors = [d for d in frontend_diags.get(fn.name, []) if d.severity.value == "error"]
        if errors and not fn.instances:
            outputs.append(KernelOutput(fn.name, Form.UNSUPPORTED, f"{errors[0].code}: {errors[0].message}"))
            continue
        out = None if errors else pipeline.kernel(fn)
        if fn.instances and (out is None or out.form == Form.UNSUPPORTED):  # each instance as its own kernel
            out = template_output(fn, [_instance_output(pipeline, i, frontend_diags) for i in fn.instances])
        outputs.append(out)

    macros_needed = []
    for out in outputs:
        if out.form != Form.UNSUPPORTED:
            for name in out.macros:
                if name not in macros_needed:
                    macros_needed.append(name)
    macros = []
    failed: dict[str, NoTileLangForm] = {}
    calls = pipeline.printer.calls
    for name in callees_first(macros_needed, device):
        try:
            prepared, plan, result = pipeline.device_function(device[name])
            macros.append(emit_device_function(prepared, plan, result, tags, extras, calls))
        except NoTileLangForm as exc:
            failed[name] = exc
    printed: set[str] = set()  # the plain functions (where C may not evaluate the call, loop conditions)
    while calls.expressions_used - printed - set(failed):
        name = min(calls.expressions_used - printed - set(failed))
        printed.add(name)
        try:
            prepared, plan, result = pipeline.device_function(device[name])
            macros.append(emit_device_function(rename_reassigned_locals(prepared), plan, result, tags, extras,
                                               calls, plain=True))
        except NoTileLangForm as exc:
            failed[name] = exc
    for out in outputs:
        bad = [n for n in out.macros if n in failed]
        if bad and out.form != Form.UNSUPPORTED:
            exc = failed[bad[0]]
            out.form, out.reason, out.lines, out.plan = Form.UNSUPPORTED, f"device function '{bad[0]}': {exc}", [], None
            out.diagnostics.append(make("M3001", exc.span or device[bad[0]].span, out.reason))
    if hybrid is not None:
        kernels = {fn.name: fn for fn in original.kernels}
        outputs = [kept_as_cuda(out, kernels[out.name], original, hybrid, frontend_diags, failed)
                   if out.form == Form.UNSUPPORTED and out.name in kernels else out for out in outputs]
    for out in outputs:
        out.defaults = launch_defaults(unit, out.name)
    return render_module(unit, display, outputs, macros, options.keep_original)


def kept_as_cuda(out: KernelOutput, fn: m.Function, unit: m.TranslationUnit, ctx: HybridContext,
                 frontend_diags: dict[str, list[Diagnostic]], failed: dict | None = None) -> KernelOutput:
    """The kernel ``fn``, not migrated (``out``), kept as its CUDA (form ``hybrid``, note M3008);
    ``out`` with error M3009 saying why where it cannot be. A template converted per instance
    keeps each instance that is not migrated so (its form the lowest of its instances'); an
    instance that calls a device function whose macro failed (``failed``: name -> why) is one."""
    device = {f.name: f for f in unit.device_functions}
    failed = failed or {}

    def one(out: KernelOutput, fn: m.Function, template: m.Function | None = None) -> KernelOutput:
        seen = list(frontend_diags.get(fn.name, [])) + list(out.diagnostics)
        try:
            kept = hybrid_output(fn, out.reason, out.diagnostics, seen, ctx, unit, callees_of(fn, device), template)
        except NotHybrid as exc:
            out.diagnostics.append(make("M3009", fn.span, f"not kept as CUDA either: {exc}"))
            return out
        flags = " ".join([f"-I {d}" for d in kept.signature.hybrid_folders] + [f"-D{d}" for d in ctx.defines])
        kept.diagnostics.append(make("M3008", fn.span, f"kept as CUDA (hybrid form): nvcc builds it from "
                                                       f"{kept.signature.hybrid_include}"
                                                       + (f" with {flags}" if flags else "")))
        return kept

    if out.instances is None and fn.template_params:  # the template's instances, each kept so
        try:
            models = instance_models(fn)
        except NotHybrid:  # no launch site names an instance: kept whole, the launch names it
            return one(out, fn)
        seen = list(frontend_diags.get(fn.name, [])) + list(out.diagnostics)
        fn = dataclasses.replace(fn, instances=models)
        outs = [one(KernelOutput(inst.name, Form.UNSUPPORTED, out.reason, diagnostics=list(seen)), inst, fn)
                for inst in models]
        if all(o.form == Form.UNSUPPORTED for o in outs):  # none kept: the template as it was, and why
            out.diagnostics.append(next(d for d in outs[0].diagnostics if d.code == "M3009"))
            return out
        return template_output(fn, outs)
    if out.instances is None:
        return one(out, fn)
    instances = []
    for o, inst in zip(out.instances.outputs, fn.instances):
        bad = [n for n in o.macros if n in failed]
        if o.form != Form.UNSUPPORTED and bad:  # its macro was not printed: not migrated either
            reason = f"device function '{bad[0]}': {failed[bad[0]]}"
            o = KernelOutput(o.name, Form.UNSUPPORTED, reason, diagnostics=list(o.diagnostics) + [
                make("M3001", failed[bad[0]].span or device[bad[0]].span, reason)])
        instances.append(o if o.form != Form.UNSUPPORTED else one(o, inst, fn))
    return template_output(fn, instances)


def _instance_output(pipeline: KernelPipeline, inst: m.Function, frontend_diags) -> KernelOutput:
    """One instance of a template converted per instance (:mod:`.emit.dispatch`): as any kernel,
    its launch defaults its template's, with its frontend diagnostics."""
    own = frontend_diags.get(inst.name, [])
    errors = [d for d in own if d.severity.value == "error"]
    if errors:
        return KernelOutput(inst.name, Form.UNSUPPORTED, f"{errors[0].code}: {errors[0].message}", diagnostics=list(own))
    out = pipeline.kernel(inst)
    out.diagnostics = list(own) + out.diagnostics
    return out


def _loops_or_exchanges(regions) -> bool:
    """Whether a plan has a loop around a barrier or a warp exchange, at any depth."""
    return any(isinstance(r, (UniformLoop, Exchange)) or
               (isinstance(r, UniformIf) and _loops_or_exchanges(r.then + r.other)) for r in regions)
