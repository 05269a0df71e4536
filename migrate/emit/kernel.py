"""One CUDA kernel → a TileLang kernel factory (the loop IR printed), in the form it can take.

:func:`emit_kernel` runs the preparation passes, tries the ``portable`` plan, falls back to
``simt`` when the kernel needs thread-level code, and reports ``unsupported`` with a diagnostic
when neither can be printed. Device functions become ``T.macro`` helpers
(:func:`emit_device_function`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..analysis.lift.base import NotLiftable
from ..analysis.lift.delinearise import apply, delinearise, kernel_inputs, sites_in_regions
from ..analysis.lift.forward_shared import forward_shared
from ..analysis.lift.free_grid import plan_free_grid
from ..analysis.lift.gemm import NotGemm, plan_gemm
from ..analysis.lift.map import plan_map
from ..analysis.lift.micro_tiles import MicroTilesRefused, expand_micro_tiles
from ..analysis.lift.reduce import plan_block_reduce, reduction_kinds
from ..analysis.lift.row_registers import plan_row_registers
from ..analysis.lift.scan import NotScan, plan_block_scan
from ..analysis.phases import NotPortable, contains_barrier, plan_portable, plan_simt
from ..analysis.prepare import rewrite
from ..analysis.prepare.coop_groups import GroupError, lower_cooperative_groups
from ..analysis.prepare.inline import InlineError, hoist_warp_calls, inline_calls, needs_inlining
from ..analysis.prepare.vectors import VectorError, scalarize_vectors, uses_vectors
from ..diagnostics import Diagnostic, make
from ..ir import model as m
from ..ir.loops import (Barrier, BlockReduce, BlockScan, Exchange, KernelPlan, LanePhase, Phase, SimtBody,
                        TileMap, UniformIf, UniformLoop)
from ..runtime.spec import DTYPES as DTYPE_SIZES
from .printer import EmitError, Line, Scope, StmtPrinter, _array_shape, canonical_loop, dtype_of, scalar_name
from .tile import (free_grid_header, print_block_reduce, print_block_scan, print_lane_phase,
                   print_uniform_phase, reduce_allocations, reduce_header, row_allocations, row_header,
                   row_signature, scan_allocations, scan_header)

DIMS = ("x", "y", "z")
#: Scalar dtypes TileLang 0.1.15 cannot pass to a kernel (its CPU ctypes table lacks uint32/uint16;
#: its CUDA host code rejects uint64): they travel as a signed integer and are cast back at the top
#: of the kernel (uint64 values below 2**63: sizes and counts).
_SCALAR_CARRIERS = {"uint32": "int64", "uint16": "int32", "uint64": "int64"}


@dataclass
class KernelOutput:
    name: str
    form: str  # tile, portable, simt, unsupported
    reason: str
    lines: list[Line] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    signature: dict = field(default_factory=dict)
    macros: list[str] = field(default_factory=list)  # device functions it calls


def builtin_dims(fns) -> tuple[set[str], set[str]]:
    """(thread dims, block dims) a kernel and its device functions use."""
    thread, block = set(), set()
    for fn in fns:
        for node in m.walk(fn.body) if fn.body else ():
            if isinstance(node, m.Builtin) and node.dim:
                (thread if node.var in ("threadIdx", "blockDim") else block).add(node.dim)
    return thread, block


def _used_dims(dims: set[str]) -> list[str]:
    if "z" in dims:
        return ["x", "y", "z"]
    if "y" in dims:
        return ["x", "y"]
    return ["x"]


def _callees(fn: m.Function, table: dict[str, m.Function]) -> list[m.Function]:
    out, stack = [], list(fn.calls)
    seen = set()
    while stack:
        name = stack.pop()
        if name in seen or name not in table:
            continue
        seen.add(name)
        out.append(table[name])
        stack.extend(table[name].calls)
    return out


def _nonneg_names(fn: m.Function) -> set[str]:
    """Locals that only ever hold non-negative values (unsigned, or built from builtins)."""
    from .printer import ExprPrinter
    assigned: dict[str, list] = {}
    for node in m.walk(fn.body) if fn.body else ():
        if isinstance(node, m.VarDecl):
            assigned.setdefault(node.name, []).append(node.init)
        elif isinstance(node, m.Assign) and isinstance(node.target, m.Ref):
            if node.op in ("=", "+=", "*=", "/=", "%=", ">>=", "&=", "|="):
                assigned.setdefault(node.target.name, []).append(node.value)
            else:
                assigned.setdefault(node.target.name, []).append(None)
        elif isinstance(node, m.Unary) and node.op == "--" and isinstance(node.operand, m.Ref):
            assigned.setdefault(node.operand.name, []).append(None)
    good: set[str] = set()
    scope = Scope(nonneg=good)
    printer = ExprPrinter(scope)
    changed = True
    while changed:
        changed = False
        for name, values in assigned.items():
            if name in good or any(v is None for v in values):
                continue
            if all(printer._nonneg(v) for v in values):
                good.add(name)
                changed = True
    return good


def prepare(fn: m.Function, device: dict[str, m.Function] | None = None,
            portable: bool = True) -> tuple[m.Function, dict]:
    """The preparation passes, in order: device functions with barriers inlined (portable form),
    warp operations hoisted, safe names, no early returns, buffer views folded."""
    if device:
        try:
            fn = inline_calls(fn, device, needs_inlining(device, portable))
        except InlineError as exc:
            if portable:
                raise NotPortable(str(exc)) from None
            raise EmitError(str(exc), fn.span) from None
    try:
        fn = lower_cooperative_groups(fn)
    except (GroupError, InlineError) as exc:
        raise EmitError(str(exc), getattr(exc, "span", None) or fn.span) from None
    try:
        fn = scalarize_vectors(fn)
    except VectorError as exc:
        raise EmitError(str(exc), exc.span or fn.span) from None
    if portable:
        try:
            fn = hoist_warp_calls(fn)
        except InlineError as exc:
            raise NotPortable(str(exc)) from None
    fn = rewrite.unique_names(fn)
    fn = rewrite.returns_to_guards(fn)
    fn, aliases, unresolved = rewrite.pointer_aliases(fn)
    if unresolved:
        d = unresolved[0]
        raise EmitError(f"local pointer '{d.name}' is not a fixed view of a buffer parameter", d.span)
    return fn, aliases


def plan(fn: m.Function, device_fns: list[m.Function]) -> tuple[KernelPlan, str]:
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


class KernelEmitter:
    def __init__(self, fn: m.Function, unit: m.TranslationUnit, tag_of, extras=None,
                 lift: bool = True, allow_tf32: bool = False) -> None:
        self.extras = extras or {}
        self.lift = lift
        self.allow_tf32 = allow_tf32
        self.original = fn
        self.unit = unit
        self.tag_of = tag_of
        self.device = {f.name: f for f in unit.device_functions}
        self.shapes: dict = {}  # buffer -> extents, of the tile-form kernel being emitted
        self.kept_flat: dict = {}  # buffer -> (span, reason): a row stride, but no proof (M3005)

    def emit(self, force_simt: bool = False) -> KernelOutput:
        """The kernel in the best form it can take; a bug in the emitter costs only this kernel
        (an M9001 diagnostic), never the rest of the file."""
        try:
            return self._emit(force_simt)
        except Exception as exc:  # an emitter bug: report it for this kernel
            import traceback
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            out = KernelOutput(self.original.name, "unsupported", f"internal error while emitting: {last}")
            out.diagnostics.append(make("M9001", self.original.span, out.reason))
            return out

    def _emit(self, force_simt: bool = False) -> KernelOutput:
        fn = self.original
        out = KernelOutput(fn.name, "unsupported", "")
        self.shapes, self.kept_flat = {}, {}
        try:
            why = ""
            if not force_simt:
                try:
                    prepared, _aliases = prepare(fn, self.device, portable=True)
                except NotPortable as exc:
                    force_simt, why = True, str(exc)
            if force_simt:
                prepared, _aliases = prepare(fn, self.device, portable=False)
            callees = _callees(prepared, self.device)
            if force_simt:
                kplan, why = plan_simt(prepared), why or "requested"
            else:
                kplan, why = plan(prepared, callees)
            out.form = kplan.form
            out.reason = "barriers are uniform: one T.Parallel phase per barrier interval" \
                if kplan.form == "portable" else f"thread-level code needed: {why}"
            if kplan.form == "portable" and self.lift:
                lifted = self.try_lift(prepared, kplan, callees, out)
                if lifted is not None:
                    lifted.diagnostics += [make("M3005", span, f"buffer '{name}' kept flat: {reason}")
                                           for name, (span, reason) in sorted(self.kept_flat.items())]
                    return lifted
            self.shapes = {}  # the CUDA thread structure keeps flat buffers
            out.lines = self.factory(kplan, callees)
            out.macros = [c.name for c in callees]
            out.signature = self.signature(prepared, kplan)
        except EmitError as exc:
            if not force_simt and out.form == "portable":
                fallback = self._emit(force_simt=True)
                if fallback.form == "simt":
                    fallback.reason = f"thread-level code needed: {exc}"
                    fallback.diagnostics.append(make(
                        "M3002", exc.span or fn.span, f"kept at thread level (simt): {exc}"))
                    return fallback
            out.form = "unsupported"
            out.reason = str(exc)
            out.lines = []
            out.diagnostics.append(make("M3001", exc.span or fn.span, str(exc)))
        return out

    def try_lift(self, prepared: m.Function, kplan: KernelPlan, callees, out: KernelOutput):
        """The tile form of the kernel when a lifting pass proves it; None (and a note on ``out``
        saying why) when none applies. Maps (GEMMs among them) first, then block reductions,
        then block scans."""
        tset, bset = builtin_dims([prepared] + callees)
        tdims, bdims = _used_dims(tset), _used_dims(bset)
        tplan, reasons = self._map_plan(prepared, kplan, callees, out)
        if tplan is None:
            return None if reasons is None else self._lift_reduction_or_scan(prepared, kplan, callees, tdims,
                                                                             reasons, out)
        try:
            gplan = plan_gemm(tplan.regions[0])
        except NotGemm:
            return self._lift_map(prepared, tplan, callees, tdims, bdims)
        return self._lift_gemm(prepared, tplan, gplan, callees, tdims, bdims)

    def _lifted(self, prepared: m.Function, reason: str, plan, lines: list[Line], callees) -> KernelOutput:
        lifted = KernelOutput(prepared.name, "tile", reason)
        lifted.lines = lines
        lifted.macros = [c.name for c in callees]
        lifted.signature = self.signature(prepared, plan)
        return lifted

    def _map_plan(self, prepared: m.Function, kplan: KernelPlan, callees, out: KernelOutput):
        """(the kernel's map plan, []) when it is a map, once its register micro-tiles are
        expanded and its shared-memory caches forwarded if need be; else (None, the reasons the
        passes gave), or (None, None) with a note on ``out`` for a micro-tiled kernel that is not
        a GEMM."""
        micro = None  # register micro-tiles as elements (analysis.micro_tiles)
        try:
            return plan_map(prepared, kplan, callees), []
        except NotLiftable as not_map:
            tplan, reasons = None, [not_map]
        try:  # micro-tiles expanded and shared-memory caches forwarded, the kernel may be a map
            expanded, micro = expand_micro_tiles(prepared)
            forwarded = forward_shared(expanded)
            if forwarded is not prepared:
                tplan = plan_map(forwarded, plan_portable(forwarded), callees)
        except (NotLiftable, NotPortable) as not_forwarded:
            reasons.append(not_forwarded)
            if micro is not None or isinstance(not_forwarded, MicroTilesRefused):
                # a micro-tiled kernel: why its expansion or forwarding failed is the reason
                out.diagnostics.append(make("M3003", prepared.span, f"not lifted to tile form: {not_forwarded}"))
                return None, None
        if tplan is None or micro is None:
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

    def _lift_reduction_or_scan(self, prepared: m.Function, kplan: KernelPlan, callees, tdims, reasons,
                                out: KernelOutput):
        from ..analysis.prepare.builtin_aliases import propagate_builtin_aliases
        try:
            renamed = propagate_builtin_aliases(prepared)
            rplan = plan_block_reduce(renamed, plan_portable(renamed) if renamed is not prepared else kplan, tdims)
        except (NotLiftable, NotPortable) as not_reduce:
            reasons.append(not_reduce)
            try:
                splan = plan_block_scan(prepared, kplan, self.block_size(prepared.name))
            except NotScan as not_scan:
                # with barriers: the scan pass speaks for kernels that look like scans, the
                # block-reduction pass for kernels that may reduce (a loop around a barrier, a
                # warp exchange), forwarding (or the map after it) else
                reduces = _loops_or_exchanges(kplan.regions)
                reason = not_scan if not_scan.candidate else reasons[0] if len(kplan.regions) == 1 \
                    else reasons[-1] if reduces else reasons[-2]
                out.diagnostics.append(make("M3003", prepared.span, f"not lifted to tile form: {reason}"))
                return None
            return self._lifted(prepared, "its prefix sum through shared memory becomes T.cumsum over the "
                                "block's segment", splan, self.factory(splan, callees), callees)
        notes = []
        rplan = self.shape_buffers(rplan.fn, rplan, sites_in_regions)
        rplan, why_not = plan_row_registers(rplan)
        if why_not:
            notes.append(make("M3003", prepared.span, f"row loops not unrolled: {why_not}"))
        rplan, grid_kept = plan_free_grid(rplan, callees)
        if grid_kept:
            notes.append(make("M3003", prepared.span, f"CUDA grid kept: {grid_kept}"))
        lifted = self._lifted(prepared, f"its {reduction_kinds(rplan)} reductions become T.reduce over the "
                              "block's lanes", rplan, self.factory(rplan, callees), callees)
        lifted.diagnostics += notes
        if rplan.rows is not None:
            lifted.reason += "; its lanes' strided loops unroll at compiled-in lengths" + (
                ", the row kept in registers" if rplan.rows.caches else "")
            lifted.signature.update(row_signature(rplan.rows))
        if rplan.free_grid is not None:
            lifted.reason += "; its grid grows to fill the GPU"
        return lifted

    def _lift_gemm(self, prepared: m.Function, tplan: KernelPlan, gplan, callees, tdims, bdims) -> KernelOutput:
        from .gemm import gemm_factory, gemm_tune, specialize_when, static_params
        lines = gemm_factory(self, tplan, gplan, callees, tdims, bdims, self.allow_tf32)
        lifted = self._lifted(prepared, "a GEMM: A and B tiles through shared memory, a pipelined K loop, the "
                              "accumulator in registers", tplan, lines, callees)
        lifted.signature["tune"] = gemm_tune(gplan)
        lifted.signature["specialize"] = static_params(prepared, gplan, self.allow_tf32)
        lifted.signature["specialize_when"] = specialize_when(prepared, gplan, self.allow_tf32)
        lifted.signature["whole_tiles"] = any("T.copy(" in ln.text for ln in lifted.lines)
        fp32 = scalar_name(gplan.a.dtype) == "float32" and scalar_name(gplan.b.dtype) == "float32"
        if self.allow_tf32 and fp32 and gplan.a.plain and gplan.b.plain:
            lifted.signature["tolerance"] = "tf32"
            lifted.reason += " (tensor cores, tf32: --allow-tf32)"
        return lifted

    def _lift_map(self, prepared: m.Function, tplan: KernelPlan, callees, tdims, bdims) -> KernelOutput:
        from .tile import static_params, tile_factory, tune_space
        tplan = self.shape_buffers(tplan.fn, tplan, sites_in_regions)
        lifted = self._lifted(prepared, "its elements are independent: a map over tiles of its element domain",
                              tplan, tile_factory(self, tplan, callees, tdims, bdims), callees)
        lifted.signature["tune"] = tune_space(tplan)
        static = static_params(tplan.fn, tplan.regions[0], self.scope_for(tplan.fn, tplan, tdims, bdims).single) \
            if isinstance(tplan.regions[0], TileMap) else ()
        if static:
            lifted.signature["specialize"] = static
            lifted.signature["specialize_when"] = "None"
            lifted.signature["specialize_why"] = ("its divisions by them fold and its index math stays int32 "
                                                  "(at run-time sizes TileLang widens it to int64)")
            lifted.signature["static_pass_configs"] = (("tl.disable_safe_memory_legalize", True),)
        return lifted

    def block_size(self, kernel: str) -> int | None:
        """The block size (x) every launch of ``kernel`` in the file gives as a constant, if any."""
        from .module import launch_defaults
        block = launch_defaults(self.unit, kernel).get("block")
        return int(block) if block is not None and block.isdigit() else None

    def shape_buffers(self, fn: m.Function, plan, collect):
        """``plan`` (a tile-form kernel plan or GEMM plan) with the buffers the analysis proves
        row-major arrays indexed by dimension (:mod:`migrate.analysis.lift.delinearise`); their shapes
        go to the factory's parameters and the signature (``self.shapes``)."""
        buffers, extents, table, stable = kernel_inputs(fn)
        extents = {n: r for n, r in extents.items() if not _factory_name(n, fn)}
        regions = plan.regions if isinstance(plan, KernelPlan) else plan
        found = delinearise(collect(regions, set(buffers)), buffers, extents, table, stable)
        self.shapes, self.kept_flat = found.shapes, found.kept_flat
        return apply(plan, found.indices) if found.indices else plan

    # -- the factory -------------------------------------------------------------------------
    def scope_for(self, fn: m.Function, kplan: KernelPlan, tdims: list[str], bdims: list[str]) -> Scope:
        simt = kplan.form == "simt"
        scope = Scope(simt=simt)
        scope.thread_vars = {d: f"t{d}" for d in (DIMS if simt else tdims)}
        for d in DIMS:
            scope.thread_vars.setdefault(d, "0")
        scope.thread_index = ", ".join(f"t{d}" for d in reversed(tdims))
        scope.block_vars = {d: f"b{d}" for d in bdims}
        for d in DIMS:
            scope.block_vars.setdefault(d, "0")
        scope.placements = {name: plan.placement for name, plan in kplan.vars.items()}
        scope.single = {name for name, plan in kplan.vars.items() if plan.single_assignment}
        scope.type_params = {t.name: _tp_name(t.name) for t in fn.template_params if t.kind == "type"}
        scope.value_params = {t.name for t in fn.template_params if t.kind == "value"}
        scope.buffers = {p.name for p in fn.params if isinstance(p.type, m.Pointer)}
        scope.buffers |= {g.name for g in self.unit.globals if g.storage == "constant"}
        scope.nonneg = _nonneg_names(fn)
        scope.device_extra = self.extras
        scope.file_tags = self.tag_of
        return scope

    def factory(self, kplan: KernelPlan, callees: list[m.Function]) -> list[Line]:
        fn = kplan.fn
        tset, bset = builtin_dims([fn] + callees)
        tdims, bdims = _used_dims(tset), _used_dims(bset)
        scope = self.scope_for(fn, kplan, tdims, bdims)
        if kplan.form == "tile":
            scope.thread_vars["x"] = "lane"
            scope.thread_index = "lane"
        self.form = kplan.form
        self.flags = set(kplan.flags)
        lines: list[Line] = []

        def add(indent, text, origin=""):
            lines.append(Line(indent, text, origin))

        self.header(fn, kplan.form, tdims, bdims, scope, add, tune=", static_sizes=None" if kplan.rows else "")
        if kplan.form == "tile":
            if kplan.free_grid is not None:
                free_grid_header(kplan, scope, add)
            scans = any(isinstance(r, BlockScan) for r in kplan.regions)
            (scan_header if scans else reduce_header)(kplan, scope, add)
            if kplan.rows is not None:
                row_header(kplan, scope, add)
        params, rebinds = self.parameters(fn, scope, callees)
        add(1, "")
        add(1, "@T.prim_func")
        add(1, f"def {fn.name}({', '.join(params)}):")
        grid_args = ", ".join(f"grid_{d}" for d in bdims)
        block_vars = ", ".join(f"b{d}" for d in bdims)
        if len(bdims) > 1:
            block_vars = f"({block_vars})"
        if kplan.form in ("portable", "tile"):
            threads = " * ".join(f"block_{d}" for d in tdims)
        else:
            threads = f"({', '.join(f'block_{d}' for d in DIMS)})"
        kernel_at = len(lines)
        add(2, f"with T.Kernel({grid_args}, threads={threads}) as {block_vars}:", scope.tag(fn.span))
        self.kernel_preamble(fn, scope, rebinds, add)
        if kplan.form == "simt":
            add(3, "tx, ty, tz = T.get_thread_bindings()", scope.tag(fn.span))
        self.kernel_allocations(kplan, scope, tdims, add)

        printer = StmtPrinter(scope, indent=3)
        self.regions(kplan.regions, printer, scope, tdims)
        lines.extend(printer.lines)
        add(1, f"return {fn.name}")
        shim = sorted(scope.shim_calls | self.macro_shim_calls(callees))
        if shim and _needs_prelude(shim):
            names = ", ".join(repr(n) for n in shim)
            lines[kernel_at] = Line(2, f"with T.Kernel({grid_args}, threads={threads}, "
                                       f"prelude=cuda_math.externs_for([{names}], target)) as {block_vars}:",
                                    scope.tag(fn.span))
        self.uses_shim = bool(shim)
        return lines

    def header(self, fn: m.Function, form: str, tdims, bdims, scope: Scope, add, tune: str = "",
               summary: str = "") -> None:
        """The factory's ``def`` line, docstring, launch unpacking and the asserts on the dims the
        kernel does not index."""
        tparams = "".join(f", {_tp_name(t.name)}={_tp_default(t)}" for t in fn.template_params)
        add(0, f"def make_{fn.name}(grid, block, shared_bytes=0{tparams}, target=\"cuda\"{tune}):",
            scope.tag(fn.span))
        add(1, f'"""TileLang ({form}) for CUDA kernel `{fn.name}`; '
               f'grid/block as in `{fn.name}<<<grid, block, shared_bytes>>>`.{summary}"""')
        add(1, "grid_x, grid_y, grid_z = grid")
        add(1, "block_x, block_y, block_z = block")
        unused_t = [d for d in DIMS if d not in tdims]
        unused_b = [d for d in DIMS if d not in bdims]
        if unused_t:
            cond = " and ".join(f"block_{d} == 1" for d in unused_t)
            add(1, f'assert {cond}, "{fn.name} indexes threads in {", ".join(tdims)} only"')
        if unused_b:
            cond = " and ".join(f"grid_{d} == 1" for d in unused_b)
            add(1, f'assert {cond}, "{fn.name} indexes blocks in {", ".join(bdims)} only"')
        shapes = self.shapes
        for p in fn.params:
            if isinstance(p.type, m.Pointer) and p.name not in shapes:
                add(1, f'{p.name}_len = T.dynamic("{p.name}_len")')
            elif isinstance(p.type, m.Pointer) and shapes[p.name][0] is None:
                add(1, f'{p.name}_rows = T.dynamic("{p.name}_rows")  # what the buffer holds of whole rows')
        used = {e for shape in shapes.values() for e in shape if e is not None}
        for dtype in ("int32", "int64"):
            names = [p.name for p in fn.params if p.name in used and scalar_name(p.type) == dtype]
            if names:
                kind = "" if dtype == "int32" else f', "{dtype}"'
                targets = ", ".join(names)  # T.dynamic("K") is one variable, T.dynamic("M, K") a tuple
                add(1, f'{targets} = T.dynamic("{", ".join(names)}"{kind})  # scalar parameters that are '
                       "also buffer extents")

    def parameters(self, fn: m.Function, scope: Scope, callees) -> tuple[list[str], list[str]]:
        """The prim_func's parameters (buffers, scalars, then ``__constant__`` arrays) and the
        statements that cast carried unsigned scalars back."""
        params = []
        rebinds = []
        for p in fn.params:
            if isinstance(p.type, m.Pointer):
                dtype = dtype_of(p.type.pointee, scope) if not isinstance(p.type.pointee, m.Vector) else None
                if dtype is None:
                    raise EmitError(f"vector-typed buffer '{p.name}' ({p.type})", p.span)
                shape = self.shapes.get(p.name)
                dims = ", ".join(e or f"{p.name}_rows" for e in shape) if shape else f"{p.name}_len,"
                params.append(f"{p.name}: T.Tensor(({dims}), {dtype})")
            else:
                dtype = scalar_name(p.type)
                if isinstance(p.type, m.TemplateType):
                    raise EmitError(f"scalar parameter '{p.name}' of template type", p.span)
                if dtype is None:
                    raise EmitError(f"parameter '{p.name}' of type '{p.type}'", p.span)
                if any(p.name in shape for shape in self.shapes.values()):
                    params.append(f"{p.name}: {p.name}")  # the variable the buffer shapes use
                elif dtype in _SCALAR_CARRIERS:
                    carrier = _SCALAR_CARRIERS[dtype]
                    params.append(f"{p.name}_arg: T.{carrier}")
                    rebinds.append(f"{p.name} = T.Cast({dtype_of(p.type, scope)}, {p.name}_arg)")
                else:
                    params.append(f"{p.name}: {dtype_of(p.type, scope)}")
        for g in self.unit.globals:
            if g.storage == "constant" and _uses_global(fn, callees, g.name):
                if not isinstance(g.type, m.Array) or g.type.extent is None:
                    raise EmitError(f"__constant__ '{g.name}' is not a fixed-size array", g.span)
                shape = ", ".join(_array_shape(g.type, scope))
                params.append(f"{g.name}: T.Tensor(({shape},), {dtype_of(m.element_type(g.type), scope)})")
            elif g.storage in ("device", "managed") and _uses_global(fn, callees, g.name):
                raise EmitError(f"__device__ global '{g.name}'", g.span)

        return params, rebinds

    def kernel_preamble(self, fn: m.Function, scope: Scope, rebinds, add) -> None:
        """The first statements inside ``T.Kernel``: buffers that may alias, carried scalars cast
        back to their CUDA types."""
        may_alias = self.aliasing_buffers(fn)
        if may_alias:
            add(3, "# these pointers are not __restrict__ in CUDA and may alias: keep TileLang from assuming not")
            add(3, f"T.annotate_restrict_buffers({', '.join(may_alias)})", scope.tag(fn.span))
        for text in rebinds:
            add(3, text, scope.tag(fn.span))

    @staticmethod
    def aliasing_buffers(fn: m.Function) -> list[str]:
        """Pointer parameters that CUDA lets alias each other (none is ``__restrict__``) when the
        kernel writes through one of them: TileLang must not mark them ``__restrict__``."""
        loose = [p.name for p in fn.params if isinstance(p.type, m.Pointer) and not p.type.restrict]
        if len(loose) < 2:
            return []
        roots = (m.access_root(t) for t in m.store_targets(fn.body)) if fn.body else ()
        written = {r.name for r in roots if r is not None}
        return loose if written & set(loose) else []

    def macro_shim_calls(self, callees) -> set[str]:
        """Shim calls inside the device functions this kernel inlines through macros."""
        from .printer import render_math
        out: set[str] = set()
        for f in callees:
            for node in m.walk(f.body) if f.body else ():
                if isinstance(node, m.Call) and node.kind in ("math", "conversion"):
                    probe = Scope()
                    args = [f"a{i}" for i in range(len(node.args))]
                    render_math(node.callee.lstrip(":").removeprefix("std::"), args,
                                [scalar_name(a.type) for a in node.args], probe)
                    out |= probe.shim_calls
        return out

    def kernel_allocations(self, kplan: KernelPlan, scope: Scope, tdims, add) -> None:
        if kplan.form == "tile":
            reduce_allocations(kplan.regions, scope, add)
            row_allocations(kplan, scope, add)
            scan_allocations(kplan.regions, scope, add)
        thread_shape = [f"block_{d}" for d in reversed(tdims)]
        nthreads = " * ".join(f"block_{d}" for d in tdims)
        for dtype in kplan.exchange_dtypes:
            add(3, f'xch_{dtype} = T.alloc_shared(({nthreads},), T.{dtype}, scope="shared")')
        for name, vp in kplan.vars.items():
            d = vp.decl
            if vp.placement == "shared":
                elem = m.element_type(d.type)
                if d.storage == "extern_shared":
                    size = _sizeof(elem)
                    shape = f"(shared_bytes // {size},)"
                elif not isinstance(d.type, m.Array):
                    shape = "(1,)"  # a __shared__ scalar
                else:
                    shape = "(" + ", ".join(_array_shape(d.type, scope)) + ",)"
                add(3, f'{name} = T.alloc_shared({shape}, {dtype_of(elem, scope)}, scope="shared")',
                    scope.tag(d.span))
            elif vp.placement == "thread_array":
                extra = _array_shape(d.type, scope) if isinstance(d.type, m.Array) else []
                shape = ", ".join(thread_shape + extra)
                add(3, f'{name} = T.alloc_shared(({shape},), {dtype_of(m.element_type(d.type), scope)}, '
                       f'scope="shared")', scope.tag(d.span))
            elif vp.placement == "kernel_var":
                if name in self._canonical_vars(kplan, scope):
                    continue
                add(3, f"{name} = T.alloc_var({dtype_of(d.type, scope)})", scope.tag(d.span))

    def _canonical_vars(self, kplan: KernelPlan, scope: Scope) -> set[str]:
        out = set()

        def visit(regions):
            for r in regions:
                if isinstance(r, UniformLoop):
                    if r.kind == "for":
                        canon = canonical_loop(m.For(r.init, r.cond, r.step, m.Empty(r.span), (), r.span), scope)
                        if canon:
                            out.add(canon[0])
                    visit(r.body)
                elif isinstance(r, UniformIf):
                    visit(r.then)
                    visit(r.other)
        visit(kplan.regions)
        return out

    def parallel(self, printer: StmtPrinter, tdims, span, guards=()) -> None:
        loop_vars = ", ".join(f"t{d}" for d in reversed(tdims))
        extents = ", ".join(f"block_{d}" for d in reversed(tdims))
        printer.emit(f"for {loop_vars} in T.Parallel({extents}):", span)
        printer.indent += 1
        if guards:
            printer.emit(f"if {' and '.join(guards)}:", span)
            printer.indent += 1

    def end_parallel(self, printer: StmtPrinter, guards=()) -> None:
        printer.indent -= 2 if guards else 1

    def regions(self, regions, printer: StmtPrinter, scope: Scope, tdims, guards=()) -> None:
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
            if isinstance(r, Phase) and self.form == "tile":
                print_uniform_phase(r, printer)
                continue
            if isinstance(r, Phase):
                if all(isinstance(st, (m.DeclStmt, m.Empty)) and all(
                        d.init is None and scope.placements.get(d.name) in ("thread_array", "kernel_var", "shared")
                        for d in getattr(st, "decls", ())) for st in r.stmts):
                    continue  # declarations of kernel-level storage only: nothing to run
                flag_only = all(isinstance(st, m.DeclStmt) and st.decls[0].name in self.flags
                                for st in r.stmts)
                self.parallel(printer, tdims, r.span, () if flag_only else guards)
                printer.block(r.stmts)
                self.end_parallel(printer, () if flag_only else guards)
            elif isinstance(r, Exchange):
                self.exchange(r, printer, scope, tdims, guards)
            elif isinstance(r, UniformIf) and r.predicate is not None:
                flag = f"{r.predicate}[{scope.thread_index}]"
                self.regions(r.then, printer, scope, tdims, guards + (flag,))
                if r.other:
                    self.regions(r.other, printer, scope, tdims, guards + (f"not {flag}",))
            elif isinstance(r, Barrier):
                printer.emit("T.sync_threads()", r.span)
            elif isinstance(r, SimtBody):
                printer.block(r.stmts)
            elif isinstance(r, UniformIf):
                printer.emit(f"if {printer.expr.cond(r.cond)}:", r.span)
                printer.indent += 1
                self.regions(r.then, printer, scope, tdims, guards) if r.then else printer.emit("pass", None)
                printer.indent -= 1
                if r.other:
                    printer.emit("else:", r.span)
                    printer.indent += 1
                    self.regions(r.other, printer, scope, tdims, guards)
                    printer.indent -= 1
            elif isinstance(r, UniformLoop):
                self.uniform_loop(r, printer, scope, tdims, guards)

    def exchange(self, r: Exchange, printer: StmtPrinter, scope: Scope, tdims, guards) -> None:
        """A warp shuffle/vote: write every thread's value, barrier, read the lane's source."""
        lin = {1: "tx", 2: "ty * block_x + tx", 3: "(tz * block_y + ty) * block_x + tx"}[len(tdims)]
        nthreads = " * ".join(f"block_{d}" for d in tdims)
        e = printer.expr
        vote = r.op in ("ballot", "any", "all")
        dtype = "int32" if vote else scalar_name(r.value.type)
        buf = f"xch_{dtype}"
        self.parallel(printer, tdims, r.span)
        value = f"T.if_then_else({e.cond(r.value)}, 1, 0)" if vote else e.coerce(r.value, dtype)
        printer.emit(f"{buf}[{lin}] = {value}", r.span)
        self.end_parallel(printer)
        printer.emit("T.sync_threads()", r.span)
        self.parallel(printer, tdims, r.span, guards)
        printer.emit(f"x_lane = ({lin}) % 32", r.span)
        if r.decl is not None and scope.placements.get(r.decl.name) == "phase":
            raise EmitError(f"result of a warp operation '{r.decl.name}' has no per-thread home", r.span)
        target = e(r.target)
        width = e.coerce(r.width, "int32") if r.width is not None else "32"
        if r.op in _SHUFFLE_SOURCE:
            src, ok = _SHUFFLE_SOURCE[r.op](lin, e.coerce(r.lane, "int32"), width, nthreads)
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

    def uniform_loop(self, r: UniformLoop, printer: StmtPrinter, scope: Scope, tdims, guards=()) -> None:
        if r.kind == "for":
            canon = canonical_loop(m.For(r.init, r.cond, r.step, m.Empty(r.span), (), r.span), scope)
            if canon:
                var, start, stop, step = canon
                args = stop if (start == "0" and step == "1") else f"{start}, {stop}" + (
                    f", {step}" if step != "1" else "")
                printer.emit(f"for {var} in T.serial({args}):", r.span)
                printer.indent += 1
                self.regions(r.body, printer, scope, tdims, guards)
                printer.indent -= 1
                return
            if r.init is not None:
                printer.stmt(r.init)
            cond = printer.expr.cond(r.cond) if r.cond is not None else "True"
            printer.emit(f"while {cond}:", r.span)
            printer.indent += 1
            self.regions(r.body, printer, scope, tdims, guards)
            if r.step is not None:
                printer.s_ExprStmt(m.ExprStmt(r.step, r.step.span))
            printer.indent -= 1
            return
        if r.kind == "while":
            printer.emit(f"while {printer.expr.cond(r.cond)}:", r.span)
            printer.indent += 1
            self.regions(r.body, printer, scope, tdims, guards)
            printer.indent -= 1
            return
        printer.emit("while True:", r.span)
        printer.indent += 1
        self.regions(r.body, printer, scope, tdims, guards)
        printer.emit(f"if not ({printer.expr.cond(r.cond)}):", r.span)
        printer.indent += 1
        printer.emit("break", r.span)
        printer.indent -= 2

    # -- what the launcher needs ---------------------------------------------------------------
    def signature(self, fn: m.Function, kplan: KernelPlan) -> dict:
        scope_types = {t.name: _tp_name(t.name) for t in fn.template_params if t.kind == "type"}
        params = []
        for p in fn.params:
            if isinstance(p.type, m.Pointer):
                pointee = p.type.pointee
                dtype = scope_types.get(pointee.name) if isinstance(pointee, m.TemplateType) else scalar_name(pointee)
                params.append((p.name, "buffer", dtype))
            else:
                params.append((p.name, "scalar", scalar_name(p.type)))
        callees = _callees(fn, self.device)
        symbols = [(g.name, scalar_name(m.element_type(g.type)), g.type.extent)
                   for g in self.unit.globals if g.storage == "constant" and _uses_global(fn, callees, g.name)]
        shapes = self.shapes
        return {"name": fn.name, "params": params,
                "template": [(_tp_name(t.name), t.kind) for t in fn.template_params],
                "symbols": symbols, "form": kplan.form,
                "shapes": [(p.name, list(shapes[p.name])) for p in fn.params if p.name in shapes]}


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


def _loops_or_exchanges(regions) -> bool:
    """Whether a plan has a loop around a barrier or a warp exchange, at any depth."""
    return any(isinstance(r, (UniformLoop, Exchange)) or
               (isinstance(r, UniformIf) and _loops_or_exchanges(r.then + r.other)) for r in regions)


def _needs_prelude(names) -> bool:
    from ..compat import cuda_math
    return bool(cuda_math.helper_names(names, "c") or cuda_math.helper_names(names, "cuda"))


def _uses_global(fn: m.Function, callees, name: str) -> bool:
    for f in [fn] + list(callees):
        for node in m.walk(f.body) if f.body else ():
            if isinstance(node, m.Ref) and node.name == name and node.kind in ("constant", "global"):
                return True
    return False


#: Names the factories bind before the prim_func: a scalar parameter so named cannot also be a
#: buffer extent (its shape variable would be bound in the factory too).
_FACTORY_NAMES = frozenset({"grid", "block", "shared_bytes", "target", "tile", "threads", "num_stages",
                            "block_M", "block_N", "block_K", "tensor_cores", "whole_tiles", "shared_scope",
                            "lane_loop", "alloc_lanes", "T", "cuda_math", "fit_tile", "launch",
                            "Signature"})


def _factory_name(name: str, fn: m.Function) -> bool:
    return name in _FACTORY_NAMES or name.startswith(("grid_", "block_", "extent_", "tile_")) \
        or name.endswith(("_len", "_rows")) or name in {_tp_name(t.name) for t in fn.template_params}


def _tp_name(name: str) -> str:
    return f"{name}_" if name in rewrite.RESERVED or name in ("T",) else name


def _tp_default(t: m.TemplateParam) -> str:
    if t.default is None:
        return "None"
    if t.kind == "type":
        from ..runtime.tilelang_support import C_TYPE_DTYPES
        return repr(C_TYPE_DTYPES.get(t.default, t.default))
    return t.default


_SIZES = {**DTYPE_SIZES, "bool": 1}  # bytes per element, for extern __shared__ arrays


def _sizeof(t: m.CType) -> int:
    name = scalar_name(t)
    if name not in _SIZES:
        raise EmitError(f"dynamic shared memory of type '{t}'")
    return _SIZES[name]


# ---------------------------------------------------------------------------------------------
# Device functions
# ---------------------------------------------------------------------------------------------


def emit_device_function(fn: m.Function, tag_of, extras=None) -> list[Line]:
    """A ``@T.macro`` inlined at each call; builtins it reads become extra parameters."""
    fn = rewrite.unique_names(fn)
    result = None
    if fn.body is not None and not isinstance(fn.returns, m.Opaque) and \
            not (isinstance(fn.returns, m.Scalar) and fn.returns.dtype == "void"):
        body = fn.body.stmts
        single_final = body and isinstance(body[-1], m.Return) and \
            sum(isinstance(n, m.Return) for n in m.walk(fn.body)) == 1
        if not single_final:
            result = m.Ref("result_", "local", fn.returns, fn.span)
            fn = rewrite.returns_to_guards(fn, result)
    if fn.body is not None:
        fn = rewrite.returns_to_guards(fn) if result is None and isinstance(fn.returns, m.Scalar) \
            and fn.returns.dtype == "void" else fn
    fn, _aliases, unresolved = rewrite.pointer_aliases(fn)
    if unresolved:
        raise EmitError(f"local pointer '{unresolved[0].name}' in device function '{fn.name}'", unresolved[0].span)
    if uses_vectors(fn):
        raise EmitError(f"device function '{fn.name}' works on vector types", fn.span)
    kplan = plan_simt(fn)
    scope = Scope(simt=True)
    scope.thread_vars = {d: f"t{d}" for d in DIMS}
    scope.block_vars = {d: f"b{d}" for d in DIMS}
    scope.placements = {n: "phase" for n in kplan.vars}
    scope.single = {n for n, vp in kplan.vars.items() if vp.single_assignment}
    scope.type_params = {t.name: _tp_name(t.name) for t in fn.template_params if t.kind == "type"}
    scope.buffers = {p.name for p in fn.params if isinstance(p.type, m.Pointer)}
    scope.nonneg = _nonneg_names(fn)
    scope.file_tags = tag_of
    scope.device_extra = extras or {}
    assigned = {n.target.name for n in m.walk(fn.body) if isinstance(n, m.Assign) and isinstance(n.target, m.Ref)} \
        | {n.operand.name for n in m.walk(fn.body) if isinstance(n, m.Unary) and n.op in ("++", "--")
           and isinstance(n.operand, m.Ref)}
    params, copies = [], []
    for p in fn.params:
        if isinstance(p.type, m.Reference):
            raise EmitError(f"reference parameter '{p.name}' of device function '{fn.name}'", p.span)
        if p.name in assigned and not isinstance(p.type, m.Pointer):
            params.append(f"{p.name}_in")
            copies.append((p.name, dtype_of(p.type, scope), f"{p.name}_in", p.span))
        else:
            params.append(p.name)
    extra = (extras or {}).get(fn.name, device_builtin_params(fn))
    lines = [Line(0, "@T.macro", ""),
             Line(0, f"def {fn.name}({', '.join(params + extra)}):", scope.tag(fn.span))]
    printer = StmtPrinter(scope, indent=1)
    for name, dtype, source, span in copies:
        printer.emit(f"{name} = T.alloc_var({dtype})", span)
        printer.emit(f"{name} = {source}", span)
    if result is not None:
        printer.emit(f"result_ = T.alloc_var({dtype_of(fn.returns, scope)})", fn.span)
    printer.block(fn.body.stmts if fn.body else ())
    if result is not None:
        printer.emit("return result_", fn.span)
    return lines + printer.lines


def device_builtin_params(fn: m.Function) -> list[str]:
    """Builtins a device function reads, passed in by its callers (a macro sees no caller names)."""
    names = []
    for node in m.walk(fn.body) if fn.body else ():
        if isinstance(node, m.Builtin) and node.dim:
            name = {"threadIdx": f"t{node.dim}", "blockIdx": f"b{node.dim}",
                    "blockDim": f"block_{node.dim}", "gridDim": f"grid_{node.dim}"}[node.var]
            if name not in names:
                names.append(name)
    return sorted(names)
