"""The loop IR: a kernel as TileLang will run it, between analysis/ and emit/.

A kernel body becomes a sequence of *regions*:

- :class:`Phase` — statements every thread of the block runs, one ``T.Parallel`` loop over the
  block's threads (the stretch of CUDA code between two barriers);
- :class:`Barrier` — a block-wide ``__syncthreads()``;
- :class:`UniformLoop` / :class:`UniformIf` — control flow that is the same in every thread of the
  block and encloses barriers; its body is again a sequence of regions;
- :class:`SimtBody` — the whole body kept at thread level (the ``simt`` form).

Each local variable has a :class:`VarPlan` that says where it lives.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from . import model as m
from .span import Span


@dataclass(frozen=True)
class Phase:
    stmts: tuple[m.Stmt, ...]
    index: int  # phase number, in order of appearance
    span: Span


@dataclass(frozen=True)
class Barrier:
    span: Span


@dataclass(frozen=True)
class UniformLoop:
    kind: str  # for, while, do
    init: Optional[m.Stmt]
    cond: Optional[m.Expr]
    step: Optional[m.Expr]
    body: tuple["Region", ...]
    span: Span


@dataclass(frozen=True)
class UniformIf:
    """A branch enclosing barriers. When its condition depends on the thread, ``predicate`` names
    a per-thread flag: the condition is stored in it first, every thread runs the barriers, and
    each phase inside runs its statements only where the flag says so."""

    cond: m.Expr
    then: tuple["Region", ...]
    other: tuple["Region", ...]
    span: Span
    predicate: Optional[str] = None


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class SimtBody:
    stmts: tuple[m.Stmt, ...]
    span: Span


@dataclass(frozen=True)
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
    square: bool = False  # an access is strided along x: square tiles (see lift_map.strided_in_x)
    #: elements per CUDA thread along a dimension (register micro-tiles, see analysis.micro_tiles):
    #: the domain is ``gridDim * blockDim * per_thread`` and ``block_sizes`` count elements
    per_thread: dict = field(default_factory=dict)
    lanes: int = 0  # stmts run per (element, lane) of CUDA vectors folded back (see fold_lanes)
    rest: tuple = ()  # statements of a second loop over the elements, after the lanes' loop


@dataclass(frozen=True)
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
    warps: bool = False  # built from warp-shuffle trees (analysis.lift_warp): whole warps, any count
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


@dataclass(frozen=True)
class LanePhase:
    """Per-lane statements of a kernel lifted around block reductions (one iteration per CUDA
    thread, no communication between lanes)."""

    stmts: tuple[m.Stmt, ...]
    span: Span


@dataclass(frozen=True)
class RowLoop:
    """A lane's strided loop over a row, ``for (c = tid; c < cols; c += blockDim.x)``
    (analysis.row_registers): when ``cols`` is compiled in, it runs as a loop of static trip
    count that unrolls, else as the CUDA ``loop``. ``loads`` are the register arrays it fills,
    each with the read that fills it; ``reads`` the (read key, register array) pairs whose reads
    its body takes from registers instead of memory; ``stores`` those whose stores its body also
    copies into the register array. ``lanes`` indexes a lane's registers (``lane``, or
    ``lane_w, lane_l`` in a reduction per warp)."""

    loop: m.For
    var: str
    loads: tuple = ()  # ((register array, m.Index), ...)
    reads: tuple = ()  # ((affine.value_key of the read, register array), ...)
    span: Span = None
    stores: tuple = ()  # ((affine.value_key of the store's target, register array), ...)
    lanes: str = "lane"


@dataclass(frozen=True)
class RowCache:
    """A per-lane register array holding the elements of ``buffer`` that several lane phases
    read at the lane's strided positions of one row."""

    name: str
    buffer: str
    dtype: m.CType
    span: Span


@dataclass(frozen=True)
class RowPlan:
    """The rows of a lifted reduction: the scalar parameter ``limit`` bounds every lane's strided
    loop, each stepping by ``step``; the register arrays in ``caches``, per lane of the block or
    (``per_warp``) per (warp, lane) pair."""

    limit: str
    step: m.Expr
    caches: tuple[RowCache, ...]
    span: Span
    per_warp: bool = False


@dataclass(frozen=True)
class BlockScan:
    """A shared-memory prefix sum in tile form (:mod:`.lift_scan`): ``load`` runs per lane (one
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


@dataclass(frozen=True)
class FreeGrid:
    """A grid-stride reduction whose result does not depend on the grid (analysis.free_grid): the
    factory launches at least enough blocks to fill the GPU. ``op`` is the reduction, ``atomics``
    the atomics that combine the block totals into the buffers ``targets``; ``span`` the lanes'
    grid-stride loop."""

    op: str
    atomics: tuple[str, ...]
    targets: tuple[str, ...]
    span: Span


Region = Union[Phase, Barrier, UniformLoop, UniformIf, Exchange, SimtBody, TileMap, BlockReduce, LanePhase,
               BlockScan]

#: Where a local variable lives in the emitted kernel.
PLACEMENTS = (
    "phase",         # declared inside the one phase that uses it
    "kernel_var",    # a kernel-level T.alloc_var: uniform across the block, used in several places
    "thread_array",  # per-thread value crossing a barrier: a shared array indexed by the thread
    "shared",        # a __shared__ array of the CUDA kernel
)


@dataclass(frozen=True)
class VarPlan:
    name: str
    type: m.CType
    placement: str
    single_assignment: bool  # declared with an initialiser and never assigned again
    decl: m.VarDecl


@dataclass
class KernelPlan:
    fn: m.Function
    form: str  # tile, portable or simt
    regions: tuple[Region, ...]
    vars: dict[str, VarPlan] = field(default_factory=dict)
    aliases: dict = field(default_factory=dict)
    flags: tuple[str, ...] = ()  # per-thread predicate flags of thread-dependent branches
    exchange_dtypes: tuple[str, ...] = ()  # one shared exchange buffer per dtype
    rows: Optional[RowPlan] = None  # lanes' strided loops that unroll at compiled-in row lengths
    free_grid: Optional[FreeGrid] = None  # a grid-stride reduction that may launch more blocks
