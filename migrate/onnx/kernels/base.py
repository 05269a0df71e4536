"""What every kernel emitter shares: parameters, the element-expression builder of elementwise
chains (:class:`Body`), names, dtypes and the factory text."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..dims import Dim, factors, symbols
from ..graph import Graph, Node
from ..group import Group
from ..indexing import broadcast_index, prod, subscript, unravel
from ..names import RESERVED, py_name, py_names  # noqa: F401  (the kernels' names; re-exported)
from ..ops import FLOATS, OPS, ExprCtx, literal




@dataclass(frozen=True)
class Param:
    tensor: str          # ONNX tensor name
    name: str            # the kernel's parameter name
    view: tuple[int, ...]
    dtype: str


@dataclass
class Kernel:
    group: Group
    name: str
    source: str
    params: list[Param]
    tolerance: str
    summary: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Options:
    allow_tf32: bool = False


def accum_dtype(dtype: str) -> str:
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def compute_dtype(dtype: str) -> str:
    """The type elementwise chains compute in: half types in float32 (TileLang's C target has no
    half math, and the chain rounds once, when it stores)."""
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def tolerance_class(dtype: str, reduces: bool) -> str:
    if dtype not in FLOATS:
        return "exact"
    if dtype == "float16":
        return "fp16"
    if dtype == "float64":
        return "fp64"
    return "fp32_accum" if reduces else "fp32"


class Body:
    """The operands of a kernel and the element expressions of an elementwise chain."""

    def __init__(self, graph: Graph, names: dict[str, str]):
        self.graph = graph
        self.names = names
        self.params: list[Param] = []
        self.env: dict[str, str] = {}

    def param(self, tensor: str, view) -> str:
        info = self.graph.info(tensor)
        view = tuple(view) if view else (1,)
        for p in self.params:
            if p.tensor == tensor and p.view == view:
                return p.name
        name = self.names[tensor]
        if any(p.name == name for p in self.params):
            name = f"{name}_v{len(self.params)}"
        self.params.append(Param(tensor, name, view, info.dtype))
        return name

    def read(self, tensor: str, out_shape, out_index, canonical, channel: bool = False) -> str:
        """The expression of ``tensor`` at the element; ``canonical`` is (view, index) of the
        kernel's own output layout, used for operands of the output's shape."""
        if tensor in self.env:
            return self.env[tensor]
        info = self.graph.info(tensor)
        wide = compute_dtype(info.dtype)
        const = self.graph.constants.get(tensor)
        if const is not None and const.size == 1:
            return literal(const.reshape(-1)[0], wide)
        if channel:   # a per-channel vector of an NCHW tensor (BatchNormalization's statistics)
            load = subscript(self.param(tensor, (info.numel,)), [out_index[1]])
        elif info.shape == tuple(out_shape):
            view, index = canonical
            load = subscript(self.param(tensor, view), index)
        elif info.numel == 1:
            load = subscript(self.param(tensor, (1,)), ["0"])
        else:
            load = subscript(self.param(tensor, info.shape), broadcast_index(info.shape, out_shape, out_index))
        return load if wide == info.dtype else f"T.Cast(T.{wide}, {load})"

    def chain(self, nodes: list[Node], out_shape, out_index, canonical, indent: str) -> list[str]:
        lines = []
        for n in nodes:
            chans, unread = OPS[n.op_type].channel_inputs, OPS[n.op_type].shape_inputs
            args = [self.read(t, out_shape, out_index, canonical, k in chans) if t and k not in unread else "None"
                    for k, t in enumerate(n.inputs)]
            out = n.outputs[0]
            real = self.graph.info(out).dtype
            ctx = ExprCtx(compute_dtype(real), tuple(compute_dtype(self.graph.info(t).dtype) for t in n.inputs if t),
                          n.attrs)
            expr = OPS[n.op_type].expr(args, ctx)
            if n.op_type == "Cast" and real != ctx.out:   # a cast to half rounds there
                expr = f"T.Cast(T.{ctx.out}, T.Cast(T.{real}, {expr}))"
            var = "v_" + self.names[out]
            lines.append(f"{indent}{var} = {expr}  # {n.op_type} '{n.name}'")
            self.env[out] = var
        return lines

    def stores(self, group: Group, canonical, indent: str, dtype_of) -> list[str]:
        view, index = canonical
        lines = []
        for t in group.outputs:
            value = self.env[t]
            real = self.graph.info(t).dtype
            if compute_dtype(real) != real:
                value = f"T.Cast(T.{real}, {value})"
            lines.append(f"{indent}{subscript(self.param(t, view), index)} = {value}")
        return lines


def kernel_symbols(params: list[Param]) -> list[str]:
    """The declared dimension names the kernel's views use."""
    out: set[str] = set()
    for p in params:
        out |= symbols(p.view)
    return sorted(out)


def declared_views(params: list[Param]) -> dict[str, tuple]:
    """Per parameter name, the shape the kernel declares it with when that differs from its view.

    A ``T.dynamic`` extent is bound from the shape of an argument where it is a whole dimension;
    TVM binds the arguments in order and cannot solve a product for its factors. A parameter whose
    view folds a name not bound by an earlier one into a product (``(batch * 512, 768)``) is
    declared with the product's factors (``(batch, 512, 768)``), which the kernel reshapes to its
    view: the first such parameter for each name, unless an earlier one holds it whole."""
    out: dict[str, tuple] = {}
    bound: set[str] = set()
    for p in params:
        folded = [d for d in p.view if isinstance(d, Dim) and str(d) not in d.names and factors(d) is not None]
        if any(set(d.names) - bound for d in folded):
            # every product of the view as its factors (``(batch * 4, H * W)`` as ``(batch, 4, H, W)``)
            split = tuple(x for d in p.view for x in (factors(d) or (d,)))
            out[p.name] = split
            bound |= {str(x) for x in split if isinstance(x, Dim) and str(x) in x.names}
        else:
            bound |= {str(d) for d in p.view if isinstance(d, Dim) and str(d) in d.names}
    return out


def _signature(params: list[Param], declared: dict) -> str:
    return ", ".join(f"{p.name}_dims: T.Tensor({declared[p.name]!r}, T.{p.dtype})" if p.name in declared else
                     f"{p.name}: T.Tensor({p.view!r}, T.{p.dtype})" for p in params)


def pow2(n, cap: int) -> int:
    if isinstance(n, Dim):     # a declared extent: any size, the cap
        return cap
    p = 1
    while p < n and p < cap:
        p *= 2
    return p


def as_float(n, dtype: str) -> str:
    """An extent as a ``dtype`` value (a mean's divisor)."""
    return literal(n, dtype) if not isinstance(n, Dim) else f"T.Cast(T.{dtype}, {n})"


#: the factory prelude of kernels that accumulate in registers (GEMM, convolution, pool)
ACCUMULATOR_PRELUDE = ("# CPU (target \"c\"): accumulators are local buffers walked serially; CUDA: fragments",
                       "alloc = T.alloc_local if target == \"c\" else T.alloc_fragment",
                       "loop = T.grid if target == \"c\" else T.Parallel")
#: with shared tiles: the C target takes one dynamic shared buffer at most; on CUDA the tiles' TMA
#: loads need the dynamic buffer's alignment (static arrays are 16-byte aligned: the transformer's
#: GEMMs faulted on the H100 with a misaligned address)
TILED_PRELUDE = ACCUMULATOR_PRELUDE + ("shared_scope = \"shared\" if target == \"c\" else \"shared.dyn\"",)


def factory(name: str, doc: str, params: list[Param], body: list[str], defaults: str, prelude=()) -> str:
    syms = kernel_symbols(params)
    declared = declared_views(params)
    head = [f"def make_{name}(target=\"cuda\"{''.join(f', {s}=None' for s in syms)}{defaults}):",
            f'    """{doc}"""']
    if syms:
        head.append(f"    # {', '.join(syms)}: symbolic extents (one kernel serves every value) unless given as ints")
        head += [f"    {s} = T.dynamic({s!r}) if {s} is None else {s}" for s in syms]
    head += [f"    {line}" for line in prelude]
    head += ["", "    @T.prim_func", f"    def {name}({_signature(params, declared)}):"]
    head += [f"        {p.name} = T.reshape({p.name}_dims, {p.view!r})  # binds {', '.join(sorted(symbols(declared[p.name])))}"
             for p in params if p.name in declared]
    return "\n".join(head + body + [f"    return {name}", ""])


def matrix_view(shape) -> tuple[int, int]:
    """The (rows, columns) view of an output of ``shape``."""
    if not shape:
        return 1, 1
    return prod(shape[:-1]), shape[-1]


def row_index(shape) -> list[str]:
    if not shape:
        return []
    return unravel("r", shape[:-1]) + ["c"]



def ordered(params: list[Param], group: Group) -> list[Param]:
    """Inputs first (as read), then the group's outputs."""
    outs = set(group.outputs)
    return [p for p in params if p.tensor not in outs] + [p for p in params if p.tensor in outs]


def cast_to(expr: str, frm: str, to: str) -> str:
    return expr if frm == to else f"T.Cast(T.{to}, {expr})"
