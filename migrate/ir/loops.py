"""The loop IR: a kernel as TileLang will run it, between analysis/ and emit/.

A :class:`KernelPlan` is a kernel in one :class:`Form`: its (prepared) function, a sequence of
*regions*, and where each local lives (:class:`VarPlan`). The portable and simt forms
(``analysis/phases.py``) use

- :class:`Phase` — statements every thread of the block runs, one ``T.Parallel`` loop over the
  block's threads (the stretch of CUDA code between two barriers);
- :class:`Barrier` — a block-wide ``__syncthreads()`` (``warp``: one that only orders the threads of
  each warp, a step of warp-synchronous code; see the class);
- :class:`UniformLoop` / :class:`UniformIf` — control flow that is the same in every thread of the
  block and encloses barriers; its body is again a sequence of regions;
- :class:`Exchange` — a warp shuffle or vote through shared memory;
- :class:`SimtBody` — the whole body kept at thread level (the ``simt`` form).

The tile form (``analysis/lift/``) replaces them by the regions of the lifted kernel:
:class:`TileMap` (a map over the element domain), :class:`GemmPlan` (a tiled GEMM, whose
:class:`GemmLayout` says how its tiles are staged and multiplied), :class:`BlockReduce` and
:class:`LanePhase` (reductions over the block's lanes, with :class:`RowPlan` and the
:class:`RowLoop` statements when rows stay in registers), :class:`BlockScan`,
:class:`LaneExchange` (a warp's xor shuffle between lanes), and :class:`FreeGrid` for a grid that
grows to fill the GPU.

Nodes are frozen and slotted; ``__post_init__`` checks what the emitter relies on, so a pass
that builds a malformed plan fails where it builds it. Statements inside regions are those of
the kernel model (:mod:`.model`), except :class:`RowLoop`, the one loop-IR node that stands where
a model statement stood. :func:`dump` prints a plan as a deterministic indented text (the
``.plan`` goldens of the tests).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Mapping, Optional, Union

from . import model as m
from .span import Span


class _Name(str, enum.Enum):
    """A closed set of names that compares, prints and serialises as its plain string."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec) -> str:
        return format(self.value, spec)


class Form(_Name):
    """How a kernel is expressed in TileLang, from the most lifted to not at all."""

    TILE = "tile"  # no thread index left: maps, T.reduce, T.cumsum, pipelined GEMMs
    PORTABLE = "portable"  # the CUDA thread structure, one T.Parallel phase per barrier interval
    SIMT = "simt"  # thread-level TileLang (T.get_thread_bindings)
    HYBRID = "hybrid"  # the original CUDA behind the same launcher
    UNSUPPORTED = "unsupported"  # not migrated


class Placement(_Name):
    """Where a local variable lives in the emitted kernel."""

    PHASE = "phase"  # declared inside the one phase that uses it
    KERNEL_VAR = "kernel_var"  # a kernel-level T.alloc_var: uniform across the block, used in several places
    THREAD_ARRAY = "thread_array"  # per-thread value crossing a barrier: a shared array indexed by the thread
    SHARED = "shared"  # a __shared__ array of the CUDA kernel


DIMS = ("x", "y", "z")
REDUCE_OPS = ("sum", "max", "min")
EXCHANGE_OPS = ("shfl", "shfl_up", "shfl_down", "shfl_xor", "ballot", "any", "all")
#: the loop variable of the lanes of CUDA vectors folded into a map's tile (analysis.lift.fold_lanes)
LANE = "il"
#: Rows in registers (analysis.lift.row_registers): the most elements a lane unrolls and keeps of
#: a row (registers per thread; beyond, the CUDA loops run as they are). On the H200 (2026-11-30
#: 00:31 UTC, bench/row_probe.py) keeping 128 floats a lane took fused_add_rmsnorm from 51 % of the
#: bandwidth (unrolled, reading its row again) to 81 % (no spills, 254 registers);
#: softmax_online_warp ran 63 % against 66 %.
MAX_ROW_STEPS = 128
#: The longest row the launcher compiles in (a kernel per distinct length up to it).
MAX_ROW_LENGTH = 8192


class NoTileLangForm(Exception):
    """A construct of the kernel has no TileLang form in the form being built (error M3001 when no
    form is left); ``span`` says where."""

    def __init__(self, message: str, span: Span | None = None) -> None:
        super().__init__(message)
        self.span = span


def _check(ok: bool, node, why: str) -> None:
    if not ok:
        raise ValueError(f"malformed {type(node).__name__}: {why}")


def _frozen_map(node, name: str) -> None:
    value = getattr(node, name)
    if not isinstance(value, MappingProxyType):
        object.__setattr__(node, name, MappingProxyType(dict(value)))


def _stmts(node, name: str) -> None:
    value = getattr(node, name)
    _check(isinstance(value, tuple), node, f"{name} is a {type(value).__name__}, not a tuple")


@dataclass(frozen=True, slots=True)
class Phase:
    stmts: tuple[m.Stmt, ...]
    index: int  # phase number, in order of appearance
    span: Span

    def __post_init__(self) -> None:
        _stmts(self, "stmts")


@dataclass(frozen=True, slots=True)
class Barrier:
    """A barrier every thread of the block reaches. ``warp``: a lockstep step's barrier
    (analysis.prepare.lockstep_steps), between threads that exchange values only inside their
    warp, as CUDA ran them in lockstep: the portable form may order each warp alone there."""
    span: Span
    warp: bool = False


@dataclass(frozen=True, slots=True)
class UniformLoop:
    kind: str  # for, while, do
    init: Optional[m.Stmt]
    cond: Optional[m.Expr]
    step: Optional[m.Expr]
    body: tuple["Region", ...]
    span: Span

    def __post_init__(self) -> None:
        _check(self.kind in ("for", "while", "do"), self, f"loop kind {self.kind!r}")
        _stmts(self, "body")


@dataclass(frozen=True, slots=True)
class UniformIf:
    """A branch enclosing barriers. When its condition depends on the thread, ``predicate`` names
    a per-thread flag: the condition is stored in it first, every thread runs the barriers, and
    each phase inside runs its statements only where the flag says so."""

    cond: m.Expr
    then: tuple["Region", ...]
    other: tuple["Region", ...]
    span: Span
    predicate: Optional[str] = None


@dataclass(frozen=True, slots=True)
class Exchange:
    """A warp shuffle or vote as an exchange through shared memory: every thread writes
    ``value`` (phase ``index``), a barrier, then each reads what its lane would have received
    into ``target`` (phase ``index + 1``), and a barrier before the buffer is reused."""

    op: str  # shfl, shfl_up, shfl_down, shfl_xor, ballot, any, all
    value: m.Expr
    lane: Optional[m.Expr]  # source lane, delta or xor mask (None for votes)
    width: Optional[m.Expr]
    target: m.Expr  # the local that receives the result
    decl: Optional[m.VarDecl]  # when the statement also declares it
    index: int
    span: Span
    mask: Optional[m.Expr] = None  # the participating lanes (shuffles and votes that take one)

    def __post_init__(self) -> None:
        _check(self.op in EXCHANGE_OPS, self, f"exchange {self.op!r}")


@dataclass(frozen=True, slots=True)
class SimtBody:
    stmts: tuple[m.Stmt, ...]
    span: Span

    def __post_init__(self) -> None:
        _stmts(self, "stmts")


@dataclass(frozen=True, slots=True)
class TileMap:
    """The tile form of a kernel whose elements are independent: ``stmts`` run once per element
    of a domain with dimensions ``dims`` (x first), in which ``globalIdx.d`` is the element's
    index. A dimension's extent is the launch size (``gridDim * blockDim``) unless ``extents``
    gives an expression (a normalised grid-stride loop); ``bounds`` are the uniform bounds of the
    CUDA tail guard, which tell a full tile from the last one. ``block_sizes`` are the block
    sizes the kernel spells as constants (``blockIdx.x * TILE + threadIdx.x``), which the launch
    must use."""

    stmts: tuple[m.Stmt, ...]
    dims: tuple[str, ...]
    extents: dict
    bounds: dict
    span: Span
    block_sizes: dict = field(default_factory=dict)
    square: bool = False  # an access is strided along x: square tiles (see lift.map.strided_in_x)
    #: True where no global access moves by one element along x (lift.map.no_unit_stride_in_x):
    #: none that several elements a thread would widen, so one element a thread, as the CUDA runs
    #: them (None: a default tile of several elements a thread)
    narrow: bool | None = None
    #: True where every store moves by one element along y and by more along x (lift.map.stores_follow_y):
    #: the elements run y-fastest, so that a warp's stores are contiguous (None: x-fastest)
    y_major: bool | None = None
    #: elements per CUDA thread along a dimension (register micro-tiles, see analysis.lift.micro_tiles):
    #: the domain is ``gridDim * blockDim * per_thread`` and ``block_sizes`` count elements
    per_thread: dict = field(default_factory=dict)
    lanes: int = 0  # stmts run per (element, lane) of CUDA vectors folded back (see analysis.lift.fold_lanes)
    rest: tuple = ()  # statements of a second loop over the elements, after the lanes' loop
    #: the integer parameters a GPU launch compiles as constants (analysis.lift.map.static_sizes)
    static: tuple[str, ...] = ()
    #: what the lift could not prove of elements that are CUDA threads (stores that may meet, a
    #: read of another element's place that the element also stores to): left to CUDA's race
    #: rule (analysis.lift.map.check_stores, note M3006)
    races: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _stmts(self, "stmts")
        _check(bool(self.dims) and set(self.dims) <= set(DIMS), self, f"dimensions {self.dims!r}")
        for name in ("extents", "bounds", "block_sizes", "per_thread"):
            _frozen_map(self, name)
            _check(set(getattr(self, name)) <= set(self.dims), self, f"{name} of dimensions it does not have")


@dataclass(frozen=True, slots=True)
class BlockReduce:
    """A shared-memory tree reduction in tile form: every lane (one per CUDA thread) runs
    ``before`` and contributes ``value``; ``op`` (sum, max, min) combines the values with
    ``T.reduce_<op>``; ``after`` runs once, reading the result where CUDA read ``shared[0]``.
    ``size`` is the tree's width when the CUDA code spells it as a constant (else blockDim.x)."""

    before: tuple[m.Stmt, ...]
    value: m.Expr
    op: str
    shared: str
    dtype: m.CType
    after: tuple[m.Stmt, ...]
    size: Optional[m.Expr]
    span: Span
    step_var: str = ""  # the CUDA tree loop's variable (gone from the tile form)
    warps: bool = False  # built from warp-shuffle trees (analysis.lift.warp): whole warps, any count
    atomics: bool = False  # built from atomicAdd on a shared scalar (analysis.lift.shared_atomics): any block
    #: each step guarded by ``tid + s < blockDim.x`` from a constant width ``size``: any block of at
    #: most ``size`` threads sums all its lanes, a power of two or not
    bounded: bool = False
    #: a reduction per warp: lanes are (warp, lane) pairs; ``after`` runs per lane (reading its
    #: warp's total), after ``prefix`` (per-lane values recomputed in each lane loop), all under
    #: ``guard`` (a condition the same in every lane of a warp) when there is one
    per_warp: bool = False
    prefix: tuple[m.Stmt, ...] = ()
    guard: Optional[m.Expr] = None
    #: an online softmax per warp: ``value`` is the running maximum (``op`` max); the lanes'
    #: denominators ``pair_value`` are rescaled by ``rescale`` to the warp's maximum and summed
    pair_value: Optional[m.Expr] = None
    pair_name: str = ""
    rescale: tuple[m.Stmt, ...] = ()

    def __post_init__(self) -> None:
        _check(self.op in REDUCE_OPS, self, f"reduction {self.op!r}")
        for name in ("before", "after", "prefix", "rescale"):
            _stmts(self, name)


@dataclass(frozen=True, slots=True)
class LanePhase:
    """Per-lane statements of a kernel lifted around block reductions (one iteration per CUDA
    thread, no communication between lanes)."""

    stmts: tuple[m.Stmt, ...]
    span: Span

    def __post_init__(self) -> None:
        _stmts(self, "stmts")


@dataclass(frozen=True, slots=True)
class LaneExchange:
    """A warp's shuffle in tile form (analysis.lift.xor_exchanges): every lane stores ``value``
    into the exchange buffer of its type, then each lane where ``guard`` holds (every lane when
    None) reads into ``target`` what its partner stored: for ``shfl_xor`` the lane ``lane ^
    lane_arg``, for ``shfl`` lane ``lane_arg`` of its aligned group of ``width`` lanes. Both are
    constants, so the partner is in the lane's aligned group of :attr:`group` lanes (the factory
    asserts blocks of whole groups)."""

    op: str  # shfl_xor, shfl
    value: m.Expr
    lane_arg: int  # the xor mask, or the source lane
    width: int
    target: m.Expr
    decl: Optional[m.VarDecl]
    guard: Optional[m.Expr]
    span: Span

    def __post_init__(self) -> None:
        _check(self.op in ("shfl_xor", "shfl"), self, f"exchange {self.op!r}")
        _check(0 < self.width <= 32 and self.width & (self.width - 1) == 0, self, f"width {self.width}")
        _check(0 < self.lane_arg < self.width if self.op == "shfl_xor" else 0 <= self.lane_arg < self.width, self,
               f"{self.op} lane argument {self.lane_arg} for width {self.width}")

    @property
    def group(self) -> int:
        """The aligned lanes the partner is among: the next power of two above an xor mask, the width."""
        return 1 << self.lane_arg.bit_length() if self.op == "shfl_xor" else self.width

    @property
    def partner(self) -> str:
        """The partner lane as the emitted lane loops spell it."""
        if self.op == "shfl_xor":
            return f"lane ^ {self.lane_arg}"
        return f"lane - lane % {self.width} + {self.lane_arg}" if self.lane_arg else f"lane - lane % {self.width}"


@dataclass(frozen=True, slots=True)
class RowLoop:
    """A lane's strided loop over a row, ``for (c = tid; c < cols; c += blockDim.x)``
    (analysis.lift.row_registers): when ``cols`` is compiled in, it runs as a loop of static trip
    count that unrolls, else as the CUDA ``loop``. ``loads`` are the register arrays it fills,
    each with the read that fills it; ``reads`` the (read key, register array) pairs whose reads
    its body takes from registers instead of memory; ``stores`` those whose stores its body also
    copies into the register array. ``lanes`` indexes a lane's registers (``lane``, or
    ``lane_w, lane_l`` in a reduction per warp). ``unrolled`` is the loop's body as the
    unrolled loop runs it: reads from the registers, stores copied into them."""

    loop: m.For
    var: str
    loads: tuple = ()  # ((register array, m.Index), ...)
    reads: tuple = ()  # ((affine.value_key of the read, register array), ...)
    span: Span = None
    stores: tuple = ()  # ((affine.value_key of the store's target, register array), ...)
    lanes: str = "lane"
    unrolled: tuple = ()

    @property
    def step_var(self) -> str:
        """The unrolled loop's variable: the lane's step along the row."""
        return f"{self.var}_step"

    def register(self, array: str) -> str:
        """The lane's element of register array ``array`` at the current step."""
        return f"{array}[{self.lanes}, {self.step_var}]"


@dataclass(frozen=True, slots=True)
class RowCache:
    """A per-lane register array holding the elements of ``buffer`` that several lane phases
    read at the lane's strided positions of one row."""

    name: str
    buffer: str
    dtype: m.CType
    span: Span


@dataclass(frozen=True, slots=True)
class RowPlan:
    """The rows of a lifted reduction: the scalar parameter ``limit`` bounds every lane's strided
    loop, each stepping by ``step``; the register arrays in ``caches``, per lane of the block or
    (``per_warp``) per (warp, lane) pair."""

    limit: str
    step: m.Expr
    caches: tuple[RowCache, ...]
    span: Span
    per_warp: bool = False


@dataclass(frozen=True, slots=True)
class BlockScan:
    """A shared-memory prefix sum in tile form (:mod:`migrate.analysis.lift.scan`): ``load`` runs per lane (one
    per CUDA thread, ``threads`` of them) and stores the segment's ``size`` elements into
    ``<shared>_prefix[1:size + 1]``; ``T.cumsum`` makes ``<shared>_prefix[k]`` the sum of the
    first k elements (``<shared>_prefix[0]`` is 0); ``after`` runs per lane and reads those sums
    where the CUDA code read its cells. ``rounds`` spans the CUDA rounds the scan replaces."""

    shared: str
    dtype: m.CType
    size: int
    threads: int
    load: tuple[m.Stmt, ...]
    after: tuple[m.Stmt, ...]
    span: Span
    rounds: Span

    def __post_init__(self) -> None:
        _check(self.size > 0 and self.threads > 0, self, "an empty segment or block")
        _stmts(self, "load")
        _stmts(self, "after")


@dataclass(frozen=True, slots=True)
class FreeGrid:
    """A grid-stride reduction whose result does not depend on the grid (analysis.free_grid): the
    factory launches at least enough blocks to fill the GPU. ``op`` is the reduction, ``atomics``
    the atomics that combine the block totals into the buffers ``targets``; ``span`` the lanes'
    grid-stride loop."""

    op: str
    atomics: tuple[str, ...]
    targets: tuple[str, ...]
    span: Span

    def __post_init__(self) -> None:
        _check(self.op in REDUCE_OPS, self, f"reduction {self.op!r}")


# -- lifted GEMMs (analysis.lift.gemm) ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GemmOperand:
    staged: m.Expr        # what is stored in the shared tile: the factor without its conversions
    factor: m.Expr        # the whole factor (conversions of ``staged``)
    dtype: m.CType        # the staged value's type
    k_contiguous: bool    # its load moves by one element per step of k (a transposed operand)
    plain: bool           # factor is (a conversion of) one load: T.gemm may compute the product


@dataclass(frozen=True, slots=True)
class KLoop:
    """How the CUDA code walks k: one loop (``inner`` None), or a loop over tiles of ``size``
    elements with an inner loop over the tile (``for (t...) for (i = 0; i < size; ++i)``)."""

    var: str
    bound: m.Expr
    step: int
    inner: Optional[str] = None
    size: int = 0


@dataclass(frozen=True, slots=True)
class TileView:
    """An operand that is a 2-D array read in whole tiles: ``buffer`` viewed as ``(rows, cols)``
    row-major, the tile of the kernel's block at (``outer``, ``inner``) indices, and reads outside
    the view are zeros in the CUDA code too (its conditions are exactly the view's bounds)."""

    buffer: str
    rows: m.Expr
    cols: m.Expr
    k_first: bool  # the view is (k, other): B row-major; else (other, k): A, or B transposed
    batched: bool = False  # one such matrix per batch index, one after another: (batch, rows, cols)


#: the tensor-core paths of a GEMM compiled at constant sizes
GEMM_KINDS = ("half", "tf32_wgmma", "tf32")


@dataclass(frozen=True, slots=True)
class GemmLayout:
    """How a lifted GEMM is staged and multiplied (decided by analysis.lift.gemm.layout).

    ``a_view``/``b_view``: the operands copied in whole tiles (None: staged element by element);
    ``static``: the size parameters a GPU launch compiles as constants (empty: run-time sizes
    only); ``fast_kind``: the tensor-core path at those sizes, with ``fast_tiles`` (block_N,
    block_K, num_stages); ``free_k``: the k tile is the factory's (else the CUDA code's);
    ``gemm_ok``: ``T.gemm`` may compute the products (float32 or half operands, one load each),
    ``tensor_cores`` whether it does by default (half operands, or ``--allow-tf32``), ``halves``
    whether the operands are half precision, ``tf32`` whether the kernel's tolerance class is
    tf32; ``setup``: the GEMM's uniform declarations as the factory runs them."""

    a_view: Optional[TileView]
    b_view: Optional[TileView]
    static: tuple[str, ...]
    fast_kind: Optional[str]
    fast_tiles: Optional[tuple[int, int, int]]
    free_k: bool
    gemm_ok: bool
    tensor_cores: bool
    halves: bool
    tf32: bool
    setup: tuple[m.Stmt, ...]

    def __post_init__(self) -> None:
        _check(self.fast_kind is None or self.fast_kind in GEMM_KINDS, self, f"tensor-core path {self.fast_kind!r}")
        _check((self.fast_kind is None) == (self.fast_tiles is None), self, "a tensor-core path without tiles")
        _check(not self.fast_kind or bool(self.static), self, "a tensor-core path at run-time sizes")
        _check(self.gemm_ok or not (self.tensor_cores or self.tf32), self, "tensor cores where T.gemm cannot run")
        _stmts(self, "setup")


@dataclass(frozen=True, slots=True)
class GemmPlan:
    """A map whose element runs a k loop of multiply-adds, as a tiled GEMM: the region of a
    lifted GEMM kernel (``tile`` is the map it was recognised in)."""

    tile: TileMap
    acc: str                 # the accumulator local
    acc_type: m.CType
    k: KLoop
    a: GemmOperand
    b: GemmOperand
    row_names: tuple[str, ...]  # locals equal to the row (y) index
    col_names: tuple[str, ...]
    prologue: tuple[m.Stmt, ...]  # statements before the guard (declarations)
    setup: tuple[m.Stmt, ...]     # uniform declarations between the accumulator and the loop
    epilogue: tuple[m.Stmt, ...]  # statements after the k loop
    guard: Optional[m.Expr]
    loop_guarded: bool           # the k loop runs inside the guard (its loads are guarded too)
    span: object  # the k loop's
    guard_span: object = None
    batched: bool = False        # a 3-D map: z is the batch
    batch_names: tuple[str, ...] = ()  # locals equal to the batch (z) index
    layout: Optional[GemmLayout] = None  # None until analysis.lift.gemm.layout decides it

    def __post_init__(self) -> None:
        for name in ("prologue", "setup", "epilogue"):
            _stmts(self, name)


Region = Union[Phase, Barrier, UniformLoop, UniformIf, Exchange, SimtBody, TileMap, BlockReduce, LanePhase,
               BlockScan, GemmPlan, LaneExchange]
_REGIONS = (Phase, Barrier, UniformLoop, UniformIf, Exchange, SimtBody, TileMap, BlockReduce, LanePhase, BlockScan,
            GemmPlan, LaneExchange)
#: the regions each form may hold
_FORM_REGIONS = {
    Form.PORTABLE: (Phase, Barrier, UniformLoop, UniformIf, Exchange),
    Form.SIMT: (SimtBody,),
    Form.TILE: (TileMap, GemmPlan, BlockReduce, LanePhase, BlockScan, LaneExchange, Phase, Barrier, UniformLoop,
                UniformIf),
}


@dataclass(frozen=True, slots=True)
class VarPlan:
    name: str
    type: m.CType
    placement: Placement
    single_assignment: bool  # declared with an initialiser and never assigned again
    decl: m.VarDecl

    def __post_init__(self) -> None:
        object.__setattr__(self, "placement", Placement(self.placement))


@dataclass(frozen=True, slots=True)
class KernelPlan:
    """A kernel in one form: what the emitter prints. ``fn`` is the prepared function the
    regions come from; ``shapes`` the buffers a tile-form kernel indexes as row-major arrays
    (buffer -> extents, analysis.lift.delinearise; None: as many whole rows as it holds)."""

    fn: m.Function
    form: Form
    regions: tuple[Region, ...]
    vars: Mapping[str, VarPlan] = field(default_factory=dict)
    aliases: Mapping = field(default_factory=dict)
    flags: tuple[str, ...] = ()  # per-thread predicate flags of thread-dependent branches
    # one shared exchange buffer per dtype (or template type parameter, named as in the CUDA)
    exchange_dtypes: tuple[str, ...] = ()
    rows: Optional[RowPlan] = None  # lanes' strided loops that unroll at compiled-in row lengths
    free_grid: Optional[FreeGrid] = None  # a grid-stride reduction that may launch more blocks
    shapes: Mapping[str, tuple] = field(default_factory=dict)
    # a 2-D block's lanes in the order of the threads' rank threadIdx.x + W * threadIdx.y: the
    # block's width W, a constant or the factory's name of the launch's width
    # (analysis.lift.flat_block); None: the lanes are threadIdx.x
    flat_width: Optional[Union[int, str, tuple]] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "form", Form(self.form))
        _check(self.form in _FORM_REGIONS, self, f"a plan cannot be in form {self.form}")
        _stmts(self, "regions")
        for r in walk_regions(self.regions):
            _check(isinstance(r, _FORM_REGIONS[self.form]), self,
                   f"{type(r).__name__} in a {self.form} plan (line {getattr(r, 'span', None) and r.span.line})")
        for name in ("vars", "aliases", "shapes"):
            _frozen_map(self, name)
        _check(self.rows is None and self.free_grid is None or self.form is Form.TILE, self,
               "rows in registers or a free grid outside the tile form")


def walk_regions(regions):
    """``regions`` and the regions inside their uniform loops and branches, in order."""
    for r in regions:
        yield r
        if isinstance(r, UniformLoop):
            yield from walk_regions(r.body)
        elif isinstance(r, UniformIf):
            yield from walk_regions(r.then + r.other)


# -- dump ----------------------------------------------------------------------------------------


def dump(plan: KernelPlan) -> str:
    """A deterministic, indented rendering of a plan (no spans): its form, where each local
    lives, and its regions with their statements as the model prints them."""
    lines = [f"KernelPlan {plan.fn.name}: {plan.form}"]
    for name, vp in sorted(plan.vars.items()):
        lines.append(f"  var {name}: {vp.type} in {vp.placement}" + (", single assignment" if vp.single_assignment else ""))
    for name in ("flags", "exchange_dtypes"):
        if getattr(plan, name):
            lines.append(f"  {name}: {', '.join(getattr(plan, name))}")
    for name, extents in sorted(plan.shapes.items()):
        lines.append(f"  shape {name}: ({', '.join(str(e) for e in extents)})")
    for name in ("rows", "free_grid"):
        if getattr(plan, name) is not None:
            lines.append(_dump_node(getattr(plan, name), 1, name))
    for r in plan.regions:
        lines.append(_dump_node(r, 1))
    return "\n".join(lines) + "\n"


def _dump_node(node, indent: int, label: str = "") -> str:
    pad = "  " * indent
    attrs, kids = [], []
    for f in fields(node):
        if f.name in ("span", "fn", "rounds", "guard_span"):
            continue
        value = getattr(node, f.name)
        if _dumps_as_node(value):
            kids.append((f.name, [value]))
        elif isinstance(value, tuple) and value and all(_dumps_as_node(v) for v in value):
            kids.append((f.name, list(value)))
        elif isinstance(value, Mapping) and value and any(_dumps_as_node(v) or isinstance(v, (tuple, list))
                                                          for v in value.values()):
            for key in sorted(value):
                v = value[key]
                items = list(v) if isinstance(v, (tuple, list)) else [v]
                if all(_dumps_as_node(x) for x in items):
                    kids.append((f"{f.name}[{key}]", items))
                else:
                    attrs.append(f"{f.name}[{key}]={_dump_value(v)}")
        elif value is None or value == () or (isinstance(value, Mapping) and not value):
            continue
        else:
            attrs.append(f"{f.name}={_dump_value(value)}")
    head = f"{pad}{label + ': ' if label else ''}{type(node).__name__}({', '.join(attrs)})"
    out = [head]
    for name, nodes in kids:
        out.append(f"{pad}  .{name}:")
        for n in nodes:
            out.append(_dump_node(n, indent + 2) if _loop_node(n) else m.dump(n, indent + 2))
    return "\n".join(out)


def _loop_node(value) -> bool:
    return isinstance(value, _REGIONS + (RowLoop, RowPlan, RowCache, FreeGrid, GemmOperand, KLoop, TileView,
                                          GemmLayout, VarPlan))


def _dumps_as_node(value) -> bool:
    return _loop_node(value) or m._is_node(value)


def _dump_value(value) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_dump_value(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, _Name):
        return value.value
    if isinstance(value, (m.Scalar, m.Vector, m.Pointer, m.Array, m.Record, m.TemplateType, m.Opaque, m.Reference)):
        return f"'{value}'"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_dump_value(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if _dumps_as_node(value):  # a node among plain values: on one line, without spans
        return " ".join(line.strip() for line in (_dump_node(value, 0) if _loop_node(value) else m.dump(value))
                        .splitlines())
    return repr(value)
