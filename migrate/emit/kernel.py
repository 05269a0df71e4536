"""Print a kernel's plan as a TileLang kernel factory ``make_<kernel>(grid, block, ...)``.

:class:`KernelPrinter` prints a finished plan (``ir.loops.KernelPlan``) in the form the pipeline
chose (``migrate/pipeline.py``): the factory's header (launch unpacking, asserts on the dims the
kernel does not index, shape variables), its parameters, the ``T.Kernel`` and its allocations,
and the regions (:mod:`.portable` for phases and exchanges, :mod:`.reduce` for lane loops,
:mod:`.tile` for maps, :mod:`.gemm` for GEMMs), and the :class:`~.signature.Signature` the
launcher uses. A construct it cannot print raises :class:`~.printer.EmitError`; the pipeline
then falls back to another form.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from ..analysis.facts.bounds import nonneg_locals
from ..analysis.facts.builtins import builtin_dims, used_dims
from ..analysis.facts.calls import callees_of, with_effects, with_loads
from ..analysis.facts.reread_branches import reread_branch
from ..analysis.fragment_rows import fragment_rows
from ..diagnostics import Diagnostic
from ..dtypes import TEMPLATE_SPELLINGS
from ..ir import model as m
from ..ir.exprs import reused_names
from ..ir.loops import (DIMS, Barrier, BlockScan, Form, GemmPlan, KernelPlan, TileMap, UniformIf, UniformLoop,
                        walk_regions)
from ..ir.names import template_param_name, unit_names
from .device import expression_functions, pointer_params
from .portable import RegionPrinter
from .gemm import gemm_factory, gemm_tune, specialize_when
from .lane_exchange import lane_exchange_header, lane_exchanges
from .nesting import PYTHON_BLOCKS, block_depth, depth_bound
from .printer import (EmitError, ExprPrinter, Line, Scope, StmtPrinter, array_shape, canonical_loop, dtype_of,
                      needs_prelude, scalar_name)
from .reduce import (free_grid_header, reduce_allocations, reduce_header, row_allocations, row_header, row_signature,
                     scan_allocations, scan_header)
from .signature import KEEP_BINDS, Signature
from .tile import tile_factory, tune_space
from .views import declare_views, element_bytes

#: Scalar dtypes TileLang 0.1.15 cannot pass to a kernel (its CPU ctypes table lacks uint32/uint16;
#: its CUDA host code rejects uint64; a CPU kernel reads a ``half`` argument as 0, seen 2026-12-05;
#: its CUDA device functions take no 8- or 16-bit integer ("Cannot handle int8 as device function
#: argument": a struct of chars passed by value, on an H100 2026-12-05): they travel as a wider type
#: that holds each value exactly (a signed integer, float32) and are cast back at the top of the
#: kernel (uint64 values below 2**63: sizes and counts).
_SCALAR_CARRIERS = {"uint32": "int64", "uint16": "int32", "uint64": "int64", "float16": "float32",
                    "bfloat16": "float32", "int8": "int32", "uint8": "int32", "int16": "int32"}


@dataclass
class KernelOutput:
    """A kernel as the module prints it: its form and why, the factory's lines, the launcher's
    signature, the device functions it calls (macros) and its launch defaults."""

    name: str
    form: Form
    reason: str
    lines: list[Line] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    signature: Signature | None = None
    macros: list[str] = field(default_factory=list)  # device functions it calls
    defaults: dict = field(default_factory=dict)  # grid/block/shared_bytes every launch site gives
    plan: KernelPlan | None = None  # the plan printed
    #: a template converted per instance: its instances' outputs (:class:`.dispatch.Instances`)
    instances: object = None



def unread_object(fn: m.Function, p: m.Param) -> bool:
    """Whether ``p`` is a struct or class object passed by value that the prepared body never
    names (pool's ``AvgPoolGrad<float> pool_process``, whose ``compute`` method was inlined and
    reads no field): it has no lanes, and TileLang takes nothing for it."""
    if not isinstance(p.type, m.Record) or p.lane_of or p.field_of or p.whole or fn.body is None:
        return False
    return not any(isinstance(n, m.Ref) and n.name == p.name for n in m.walk(fn.body))

class KernelPrinter:
    """Prints the plans of one translation unit's kernels."""

    def __init__(self, unit: m.TranslationUnit, tag_of, extras=None, values=None) -> None:
        """``values``: the device functions as the values they compute are judged (the pipeline's:
        straight-line reassignments named once each), for :func:`expression_functions`."""
        self.unit = unit
        self.tag_of = tag_of
        self.extras = extras or {}
        self.device = {f.name: f for f in unit.device_functions}
        self._shims: dict[int, tuple] = {}  # id(device function) -> (it, its macro's shim calls)
        # how device functions are called (emit.device): the plain functions of those that compute
        # an expression, which of those the printed code calls, which functions have effects,
        # which read memory
        self.calls = Scope(expression_fns=expression_functions(values or self.device, unit_names(unit)),
                           effects=with_effects(self.device), loads=with_loads(self.device),
                           pointer_params={name: pointer_params(f) for name, f in self.device.items()})
        self.shapes: dict = {}  # buffer -> extents, of the plan being printed

    def print(self, out: KernelOutput, plan: KernelPlan, callees: list[m.Function], prepared: m.Function,
              tolerance: str | None = None) -> None:
        """``out`` with the lines, macros and signature of ``plan`` (a plan of ``prepared``, the
        prepared kernel); raises :class:`EmitError` when a construct cannot be printed."""
        self.shapes = dict(plan.shapes)
        region = plan.regions[0] if len(plan.regions) == 1 else None
        if isinstance(region, (TileMap, GemmPlan)):  # the CUDA kernel's thread and block dims
            tset, bset = builtin_dims([prepared] + callees)
            tdims, bdims = used_dims(tset), used_dims(bset)
        if isinstance(region, GemmPlan):
            out.lines = gemm_factory(self, plan, callees, tdims, bdims)
        elif isinstance(region, TileMap):
            out.lines = tile_factory(self, plan, callees, tdims, bdims)
        else:
            out.lines = self.factory(plan, callees)
        depth = block_depth(out.lines) if depth_bound(out.lines) > PYTHON_BLOCKS else 0
        if depth > PYTHON_BLOCKS:
            raise EmitError(f"statements nested {depth} blocks deep as TileLang parses them; Python "
                            f"compiles at most {PYTHON_BLOCKS} (an if counts 2, a loop 1 to 3)", prepared.span)
        out.macros = [c.name for c in callees]
        out.signature = self.launch_settings(self.signature(prepared, plan), plan, out.lines, tolerance)
        if any("cuda_math.atomic" in ln.text for ln in out.lines) \
                or any(name.startswith("atomic") for name in self.macro_shim_calls(callees)):
            # the atomic helpers take their element's address, which TileLang's bounds guards
            # would wrap into a conditional (no address); CUDA checks no bounds either
            out.signature = dataclasses.replace(out.signature, unchecked=True)
        if reread_branch(prepared.body) or any(reread_branch(c.body, in_loops=False) for c in callees):
            static = out.signature.static_pass_configs
            out.signature = dataclasses.replace(out.signature, unvectorized=True, static_pass_configs=static + (
                ("tirx.disable_vectorize", True),) if static else ())
        out.plan = plan

    def launch_settings(self, sig: Signature, plan: KernelPlan, lines, tolerance) -> Signature:
        """The signature with what the launcher does beyond a plain launch: the autotuning space,
        the sizes it compiles in on GPUs, the tolerance class of tensor-core numerics."""
        region = plan.regions[0] if len(plan.regions) == 1 else None
        if isinstance(region, GemmPlan):
            return dataclasses.replace(sig, tune=gemm_tune(region), specialize=region.layout.static,
                                       specialize_when=specialize_when(region),
                                       whole_tiles=any("T.copy(" in ln.text for ln in lines), tolerance=tolerance)
        if isinstance(region, TileMap):
            sig = dataclasses.replace(sig, tune=tune_space(plan))
            if region.static:
                sig = dataclasses.replace(
                    sig, specialize=region.static, specialize_when="None",
                    specialize_why=("its divisions by them fold and its index math stays int32 "
                                    "(at run-time sizes TileLang widens it to int64)"),
                    static_pass_configs=(("tl.disable_safe_memory_legalize", True), KEEP_BINDS))
            return sig
        if plan.rows is not None:
            return dataclasses.replace(sig, **row_signature(plan.rows))
        return sig

    # -- the factory -------------------------------------------------------------------------
    def scope_for(self, fn: m.Function, kplan: KernelPlan, tdims: list[str], bdims: list[str]) -> Scope:
        simt = kplan.form == "simt"
        scope = Scope(simt=simt, threads=kplan.form != "tile")
        scope.thread_vars = {d: f"t{d}" for d in (DIMS if simt else tdims)}
        for d in DIMS:
            scope.thread_vars.setdefault(d, "0")
        scope.thread_index = ", ".join(f"t{d}" for d in reversed(tdims))
        scope.block_vars = {d: f"b{d}" for d in bdims}
        for d in DIMS:
            scope.block_vars.setdefault(d, "0")
        scope.placements = {name: plan.placement for name, plan in kplan.vars.items()}
        scope.single = {name for name, plan in kplan.vars.items() if plan.single_assignment}
        scope.reused = reused_names(kplan.fn.body) if kplan.fn.body else set()
        scope.type_params = {t.name: template_param_name(t.name) for t in fn.template_params if t.kind == "type"}
        scope.value_params = {t.name for t in fn.template_params if t.kind == "value"}
        scope.buffers = {p.name for p in fn.params if isinstance(p.type, m.Pointer)}
        scope.buffers |= {g.name for g in self.unit.globals if g.storage == "constant"}
        # a buffer parameter's memory read as another type (analysis.prepare.pointer_views.TypedViews.of_param)
        scope.buffers |= {vp.decl.name for vp in kplan.vars.values() if isinstance(vp.decl.init, m.Ref)
                          and vp.decl.init.kind == "param" and vp.decl.storage == "shared"}
        scope.nonneg = nonneg_locals(fn)
        scope.device_extra = self.extras
        scope.macro_params = {name: tuple(p.name for p in f.params) for name, f in self.device.items()}
        scope.expression_fns, scope.expressions_used, scope.effects, scope.loads = \
            self.calls.expression_fns, self.calls.expressions_used, self.calls.effects, self.calls.loads
        scope.pointer_params = self.calls.pointer_params
        scope.file_tags = self.tag_of
        return scope

    def factory(self, kplan: KernelPlan, callees: list[m.Function]) -> list[Line]:
        """The factory of a plan of regions: phases (portable), a thread-level body (simt), or the
        lane loops of lifted reductions and scans (tile)."""
        fn = kplan.fn
        tset, bset = builtin_dims([fn] + callees)
        tdims, bdims = used_dims(tset), used_dims(bset)
        scope = self.scope_for(fn, kplan, tdims, bdims)
        if kplan.form == "tile":
            scope.thread_vars["x"] = "lane"
            scope.thread_index = "lane"
        lines: list[Line] = []

        def add(indent, text, origin=""):
            lines.append(Line(indent, text, origin))

        self.header(fn, kplan.form, tdims, bdims, scope, add, tune=", static_sizes=None" if kplan.rows else "",
                    flat_width=kplan.flat_width)
        if kplan.form == "tile":
            if kplan.free_grid is not None:
                free_grid_header(kplan, scope, add)
            scans = any(isinstance(r, BlockScan) for r in kplan.regions)
            exchanges = lane_exchanges(kplan.regions)
            (lane_exchange_header if exchanges else scan_header if scans else reduce_header)(kplan, scope, add)
            if kplan.rows is not None:
                row_header(kplan, scope, add)
        if per_thread_scalars(kplan) or fragment_rows(kplan):
            add(1, "# a thread's own values kept across barriers: registers on GPUs (a fragment, one element per")
            add(1, "# thread), a shared array on the CPU target, whose phases run as loops over the threads")
            add(1, 'alloc_thread, thread_scope = (T.alloc_fragment, "local.fragment") if target == "cuda" else '
                   '(T.alloc_shared, "shared")')
        block_threads = " * ".join(f"block_{d}" for d in tdims)
        if warp_barriers(kplan):
            whole = f"({block_threads})" if "*" in block_threads else block_threads or "1"
            add(1, "# the barriers of warp-synchronous code's lockstep steps order the threads of each warp:")
            add(1, "# on GPUs a warp's own barrier where each phase's thread is the CUDA's and warps are whole")
            add(1, f'sync_step = T.sync_warp if target == "cuda" and {whole} % 32 == 0 else T.sync_threads')
        params, rebinds = self.parameters(fn, scope, callees)
        add(1, "")
        add(1, "@T.prim_func")
        add(1, f"def {fn.name}({', '.join(params)}):")
        grid_args = ", ".join(f"grid_{d}" for d in bdims)
        block_vars = ", ".join(f"b{d}" for d in bdims)
        if len(bdims) > 1:
            block_vars = f"({block_vars})"
        if kplan.form in ("portable", "tile"):
            threads = block_threads
        else:
            threads = f"({', '.join(f'block_{d}' for d in DIMS)})"
        kernel_at = len(lines)
        add(2, f"with T.Kernel({grid_args}, threads={threads}) as {block_vars}:", scope.tag(fn.span))
        self.kernel_preamble(fn, scope, rebinds, add)
        if kplan.form == "simt":
            add(3, "tx, ty, tz = T.get_thread_bindings()", scope.tag(fn.span))
        self.kernel_allocations(kplan, scope, tdims, add)

        printer = StmtPrinter(scope, indent=3)
        RegionPrinter(kplan.form, set(kplan.flags), tdims).regions(kplan.regions, printer, scope)
        lines.extend(printer.lines)
        if lines[-1].indent < 3:  # a kernel that does nothing (``__global__ void k() {}``)
            add(3, "pass  # the CUDA kernel's body is empty", scope.tag(fn.span))
        add(1, f"return {fn.name}")
        shim = sorted(scope.shim_calls | self.macro_shim_calls(callees))
        if shim and needs_prelude(shim):
            names = ", ".join(repr(n) for n in shim)
            lines[kernel_at] = Line(2, f"with T.Kernel({grid_args}, threads={threads}, "
                                       f"prelude=cuda_math.externs_for([{names}], target)) as {block_vars}:",
                                    scope.tag(fn.span))
        return lines

    def header(self, fn: m.Function, form: str, tdims, bdims, scope: Scope, add, tune: str = "",
               summary: str = "", flat_width: int | str | None = None) -> None:
        """The factory's ``def`` line, docstring, launch unpacking and the asserts on the dims the
        kernel does not index; with ``flat_width`` W, a 2-D block's threads as one row of lanes in
        the order of their rank ``threadIdx.x + W * threadIdx.y`` (analysis.lift.flat_block)."""
        tparams = "".join(f", {template_param_name(t.name)}={_tp_default(t)}" for t in fn.template_params)
        add(0, f"def make_{fn.name}(grid, block, shared_bytes=0{tparams}, target=\"cuda\"{tune}):",
            scope.tag(fn.span))
        add(1, f'"""TileLang ({form}) for CUDA kernel `{fn.name}`; '
               f'grid/block as in `{fn.name}<<<grid, block, shared_bytes>>>`.{summary}"""')
        add(1, "grid_x, grid_y, grid_z = grid")
        add(1, "block_x, block_y, block_z = block")
        if isinstance(flat_width, str):
            add(1, f"{flat_width} = block_x  # {fn.name} reduces over its threads' rank threadIdx.x + "
                   "blockDim.x * threadIdx.y")
        elif isinstance(flat_width, tuple):
            w, h = flat_width
            add(1, f'assert block_x == {w} and block_y == {h}, "{fn.name} reduces over its threads\' rank '
                   f'threadIdx.x + {w} * threadIdx.y + {w * h} * threadIdx.z: launch it with blocks of {w} x {h} x '
                   f'any threads"', scope.tag(fn.span))
        elif flat_width is not None:
            add(1, f'assert block_x == {flat_width}, "{fn.name} reduces over its threads\' rank threadIdx.x + '
                   f'{flat_width} * threadIdx.y: launch it with blocks {flat_width} threads wide"', scope.tag(fn.span))
        if isinstance(flat_width, tuple):
            add(1, "block_x, block_y, block_z = block_x * block_y * block_z, 1, 1  # one lane per CUDA thread, in "
                   "the order of that rank")
        elif flat_width is not None:
            add(1, "block_x, block_y = block_x * block_y, 1  # one lane per CUDA thread, in the order of that rank")
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
            elif unread_object(fn, p):
                continue  # an object the body never reads (an empty functor, its method inlined): nothing
            else:
                dtype = scalar_name(p.type)
                if isinstance(p.type, m.TemplateType):  # T alpha: the instance's dtype, known to the factory
                    params.append(f"{p.name}: T.dtype({dtype_of(p.type, scope)})")
                    continue
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
        for g in symbol_globals(self.unit, fn, callees):
            if g.storage != "constant" and isinstance(g.type, m.Scalar):
                shape = "1"  # a scalar __device__ global: a one-element buffer (topL[0])
            elif not isinstance(g.type, m.Array) or g.type.extent is None:
                what = "__constant__" if g.storage == "constant" else f"__{g.storage}__ global"
                raise EmitError(f"{what} '{g.name}' is not a fixed-size array or a number", g.span)
            else:
                shape = ", ".join(array_shape(g.type, scope))
            params.append(f"{g.name}: T.Tensor(({shape},), {dtype_of(m.element_type(g.type), scope)})")

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
        views = m.param_views(fn.body)
        written = {views.get(r.name, r.name) for r in roots if r is not None}
        return loose if written & set(loose) else []

    def macro_shim_calls(self, callees) -> set[str]:
        """Shim calls inside the device functions this kernel inlines through macros."""
        out: set[str] = set()
        for f in callees:
            known = self._shims.get(id(f))
            if known is None or known[0] is not f:
                known = self._shims[id(f)] = (f, _shim_calls(f))
            out |= known[1]
        return out

    def kernel_allocations(self, kplan: KernelPlan, scope: Scope, tdims, add) -> None:
        if kplan.form == "tile":
            reduce_allocations(kplan.regions, scope, add)
            row_allocations(kplan, scope, add)
            scan_allocations(kplan.regions, scope, add)
        thread_shape = [f"block_{d}" for d in reversed(tdims)]
        nthreads = " * ".join(f"block_{d}" for d in tdims)
        # a lifted reduction's per-lane values that several lane loops use are lane buffers
        # (analysis.lift.reduce); lane exchanges keep theirs in lane-indexed shared buffers
        lane_buffers = kplan.form == "tile" and not lane_exchanges(kplan.regions)
        for dtype in kplan.exchange_dtypes:
            of = scope.type_params[dtype] if dtype in scope.type_params else f"T.{dtype}"
            add(3, f'xch_{dtype} = T.alloc_shared(({nthreads},), {of}, scope="shared")')
        views = [vp.decl for vp in kplan.vars.values() if vp.placement == "shared" and isinstance(vp.decl.init, m.Ref)]
        thread_values = per_thread_scalars(kplan)
        thread_rows = fragment_rows(kplan)
        for name, vp in kplan.vars.items():
            d = vp.decl
            if vp.placement == "shared" and isinstance(d.init, m.Ref):
                continue  # a view of another shared array: declared after them all (below)
            if vp.placement == "shared":
                elem = m.element_type(d.type)
                if isinstance(elem, m.Pointer):  # __shared__ int *Q_row; one thread points it for all
                    raise EmitError(f"__shared__ variable '{d.name}' holds a pointer ({elem}) that the block's "
                                    "threads share: a pointer kept in shared memory has no TileLang form", d.span)
                if d.storage == "extern_shared":
                    size = element_bytes(elem, scope)
                    shape = f"(shared_bytes // {size},)"
                elif not isinstance(d.type, m.Array):
                    shape = "(1,)"  # a __shared__ scalar
                else:
                    shape = "(" + ", ".join(array_shape(d.type, scope)) + ",)"
                add(3, f'{name} = T.alloc_shared({shape}, {dtype_of(elem, scope)}, scope="shared")',
                    scope.tag(d.span))
            elif vp.placement == "thread_array" and lane_buffers:
                # a per-thread array kept across the trees: a row of it per lane
                shape = ", ".join(["block_x"] + (array_shape(d.type, scope) if isinstance(d.type, m.Array) else []))
                shape += "," if "," not in shape else ""
                add(3, f"{name} = alloc_lanes(({shape}), {dtype_of(m.element_type(d.type), scope)})",
                    scope.tag(d.span))
            elif vp.placement == "thread_array" and name in thread_values:
                add(3, f"{name} = alloc_thread(({', '.join(thread_shape)},), {dtype_of(d.type, scope)}, "
                       "scope=thread_scope)", scope.tag(d.span))
            elif vp.placement == "thread_array" and name in thread_rows:
                # a thread's row indexed one way in each phase: registers on GPUs (analysis.fragment_rows)
                shape = ", ".join(thread_shape + array_shape(d.type, scope))
                add(3, f"{name} = alloc_thread(({shape},), {dtype_of(m.element_type(d.type), scope)}, "
                       "scope=thread_scope)", scope.tag(d.span))
            elif vp.placement == "thread_array":
                extra = array_shape(d.type, scope) if isinstance(d.type, m.Array) else []
                shape = ", ".join(thread_shape + extra)
                add(3, f'{name} = T.alloc_shared(({shape},), {dtype_of(m.element_type(d.type), scope)}, '
                       f'scope="shared")', scope.tag(d.span))
            elif vp.placement == "kernel_var":
                if name in self._canonical_vars(kplan, scope):
                    continue
                add(3, f"{name} = T.alloc_var({dtype_of(d.type, scope)})", scope.tag(d.span))
        declare_views(views, scope, add)

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

    def signature(self, fn: m.Function, kplan: KernelPlan) -> Signature:
        """What the launcher needs of the printed kernel: its parameters in the CUDA order, template
        parameters, ``__constant__`` symbols, form and buffer shapes."""
        scope_types = {t.name: template_param_name(t.name) for t in fn.template_params if t.kind == "type"}
        params = []
        for p in fn.params:
            if p.whole:  # a struct taken as a buffer of its bytes (analysis.prepare.struct_params)
                params.append((p.name, "struct", scalar_name(p.type.pointee)))
            elif p.lane_of and isinstance(p.type, m.Pointer) or p.lane_of and params \
                    and params[-1][1] == "members" and params[-1][0] == p.lane_of[0]:
                # a member of a struct holding pointers passed by value (analysis.prepare.struct_params):
                # (struct, "members", ((member, "buffer" | "scalar", dtype, byte), ...))
                pointer = isinstance(p.type, m.Pointer)
                field = (p.name, "buffer" if pointer else "scalar",
                         scalar_name(p.type.pointee if pointer else p.type), p.lane_of[1])
                if params and params[-1][0] == p.lane_of[0] and params[-1][1] in ("lanes", "members"):
                    earlier = tuple((n, "scalar", d, o) for n, d, o in params[-1][2]) \
                        if params[-1][1] == "lanes" else params[-1][2]
                    params[-1] = (p.lane_of[0], "members", earlier + (field,))
                else:
                    params.append((p.lane_of[0], "members", (field,)))
            elif p.lane_of:  # a lane of a struct passed by value: (struct, "lanes", ((lane, dtype, byte), ...))
                lane = (p.name, scalar_name(p.type), p.lane_of[1])
                if params and params[-1][1] == "lanes" and params[-1][0] == p.lane_of[0]:
                    params[-1] = (p.lane_of[0], "lanes", params[-1][2] + (lane,))
                else:
                    params.append((p.lane_of[0], "lanes", (lane,)))
            elif p.field_of:  # a pointer field of a struct of buffers: (struct, "fields", ((param, dtype, field, byte), ...))
                field = (p.name, scalar_name(p.type.pointee), p.field_of[1], p.field_of[2])
                if params and params[-1][1] == "fields" and params[-1][0] == p.field_of[0]:
                    params[-1] = (p.field_of[0], "fields", params[-1][2] + (field,))
                else:
                    params.append((p.field_of[0], "fields", (field,)))
            elif unread_object(fn, p):  # no lanes: the launcher takes the argument and passes nothing on
                params.append((p.name, "lanes", ()))
            elif isinstance(p.type, m.Pointer):
                pointee = p.type.pointee
                dtype = scope_types.get(pointee.name) if isinstance(pointee, m.TemplateType) else scalar_name(pointee)
                params.append((p.name, "buffer", dtype))
            elif isinstance(p.type, m.TemplateType):
                params.append((p.name, "scalar", scope_types.get(p.type.name)))
            else:
                params.append((p.name, "scalar", scalar_name(p.type)))
        callees = callees_of(fn, self.device)
        found = symbol_globals(self.unit, fn, callees)
        symbols = [(g.name, scalar_name(m.element_type(g.type)), m.elements(g.type)) for g in found]
        state = [(g.name, initial_values(g)) for g in found if g.storage != "constant"]
        shapes = kplan.shapes
        return Signature(fn.name, tuple(params), tuple((template_param_name(t.name), t.kind) for t in fn.template_params),
                         tuple(symbols), kplan.form,
                         tuple((p.name, tuple(shapes[p.name])) for p in fn.params if p.name in shapes),
                         state=tuple(state),
                         spellings=tuple((g.name, g.spelling) for g in found if g.spelling),
                         enums=tuple((template_param_name(t.name), t.enumerators) for t in fn.template_params
                                     if t.enumerators))



def symbol_globals(unit: m.TranslationUnit, fn: m.Function, callees) -> list[m.GlobalVar]:
    """The globals the kernel (or a device function it calls) names that it takes as buffers
    after its parameters: ``__constant__`` arrays, and ``__device__``/``__managed__`` globals
    (which it may write; the launcher keeps them between launches)."""
    return [g for g in unit.globals if g.storage in ("constant", "device", "managed")
            and _uses_global(fn, callees, g.name)]


def initial_values(g: m.GlobalVar) -> tuple:
    """The values a ``__device__`` global starts with: its initialiser's numbers (``= 5``, ``=
    {1, 2, 3}``, the rest zero as in C), () for none (all zero); an initialiser of other
    expressions has no values here (:class:`EmitError`)."""
    if g.init is None:
        return ()
    items = g.init.items if isinstance(g.init, m.InitList) else (g.init,)
    out = []
    for item in items:
        sign = 1
        while isinstance(item, m.Cast):
            item = item.operand
        if isinstance(item, m.Unary) and item.op == "-":
            sign, item = -1, item.operand
        if not isinstance(item, (m.IntLit, m.FloatLit, m.BoolLit)):
            raise EmitError(f"__device__ global '{g.name}' starts from an initialiser that is not a list of numbers",
                            g.span)
        out.append(sign * (int(item.value) if isinstance(item, m.BoolLit) else item.value))
    return tuple(out)


def _uses_global(fn: m.Function, callees, name: str) -> bool:
    for f in [fn] + list(callees):
        for node in m.walk(f.body) if f.body else ():
            if isinstance(node, m.Ref) and node.name == name and node.kind in ("constant", "global"):
                return True
    return False


def _tp_default(t: m.TemplateParam) -> str:
    """A template parameter's default as a Python literal: the dtype of a type, the value of a
    number or ``bool`` (``template <bool useHashtable = false>``); None where C spells it with
    names or operators the factory cannot evaluate."""
    if t.default is None:
        return "None"
    if t.kind == "type":
        return repr(TEMPLATE_SPELLINGS.get(t.default, t.default))
    text = t.default.strip()
    if text in ("true", "false"):
        return "True" if text == "true" else "False"
    digits = text.rstrip("uUlL")
    if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)", digits):
        return str(int(digits, 0) if not re.fullmatch(r"-?0\d+", digits) else int(digits, 8))
    return "None"



def _shim_calls(f: m.Function) -> set[str]:
    """The shim calls the macro of device function ``f`` prints: its math calls' and those of the
    roundings it keeps through ``__fadd_rn`` & co. (one probe printer for the whole body, whose
    memo keeps a long sum linear)."""
    from .printer import render_math
    out: set[str] = set()
    probe = Scope()
    printer = ExprPrinter(probe)
    for node in m.walk(f.body) if f.body else ():
        if isinstance(node, m.Call) and node.kind in ("math", "conversion"):
            call = Scope()
            args = [f"a{i}" for i in range(len(node.args))]
            render_math(node.callee.lstrip(":").removeprefix("std::"), args,
                        [scalar_name(a.type) for a in node.args], call)
            out |= call.shim_calls
        elif isinstance(node, m.Binary) and node.op in ("+", "-") and \
                scalar_name(node.type) in ("float32", "float64"):
            before = set(probe.shim_calls)
            try:
                printer._rounding_kept(node)
            except Exception:  # a term the probe cannot print: the macro's own printing reports it
                probe.shim_calls = before
                printer = ExprPrinter(probe)  # its memo may hold texts whose shim calls were dropped
                continue
            out |= probe.shim_calls
    return out


def per_thread_scalars(kplan: KernelPlan) -> set[str]:
    """The portable form's per-thread scalars kept across its barriers (placement ``thread_array``,
    not an array of their own): every access indexes them by the thread, inside a phase's loop over
    the threads, so on GPUs a fragment holds each in its thread's registers (dpid's float4 shuffle
    temporaries took 28 KB of shared memory per block of 128 threads as shared arrays)."""
    if kplan.form != "portable":
        return set()
    return {name for name, vp in kplan.vars.items()
            if vp.placement == "thread_array" and not isinstance(vp.decl.type, m.Array)}


def warp_barriers(kplan: KernelPlan) -> bool:
    """Whether the portable plan has barriers of lockstep steps (``Barrier.warp``), which it prints
    as ``sync_step()``: ``T.sync_warp`` on GPUs, where a warp's own order is what CUDA's lockstep
    gave (the steps exchange values only inside a warp, analysis.prepare.lockstep_steps), and
    where it is that: every thread reaches each barrier of the portable form (uniform control
    flow, thread-dependent branches as predicated phases); each ``T.Parallel`` iteration over the
    block's threads is its thread, in the CUDA's order of ``threadIdx`` (one iteration per thread,
    which TileLang binds to the thread in order; the threads are the launch's block, the dims the
    kernel does not index asserted to be 1), so a CUDA warp's threads are one warp here; and the
    block's warps are whole (a block of a multiple of 32 threads, tested in the factory; otherwise
    the block's barrier). The CPU target's phases are loops over the threads: the block's
    barrier. The tile form's lanes are not the CUDA's threads: its barriers stay the block's."""
    return kplan.form == "portable" and any(isinstance(r, Barrier) and r.warp for r in walk_regions(kplan.regions))
