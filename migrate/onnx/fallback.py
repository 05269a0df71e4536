"""Step 3b, fallbacks: the torch expression of a node that has no TileLang form yet.

A table (op type -> function of the node, its argument expressions and the graph) of torch
spellings, so that a model with such a node still runs; the report marks the node ``fallback``
with the reason and the emitted code says so beside the call. A node whose op type is in neither
this table nor :data:`.ops.OPS` cannot be converted (``M5004``).
"""
from __future__ import annotations

from .claim import reduce_axes
from .graph import Graph, Node

TORCH_DTYPES = {"float32": "torch.float32", "float16": "torch.float16", "float64": "torch.float64",
                "bfloat16": "torch.bfloat16", "int8": "torch.int8", "int16": "torch.int16", "int32": "torch.int32",
                "int64": "torch.int64", "uint8": "torch.uint8", "uint16": "torch.uint16", "uint32": "torch.uint32",
                "uint64": "torch.uint64", "bool": "torch.bool"}


def _pads(node: Node, rank: int):
    pads = list(node.attrs.get("pads", [0] * (2 * rank)))
    if node.attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        return None
    if pads[:rank] != pads[rank:]:
        return None
    return tuple(pads[:rank])


def _conv(n, a, g):
    rank = len(g.info(n.inputs[1]).shape) - 2
    pads = _pads(n, rank)
    if pads is None:
        return None
    bias = a[2] if len(a) > 2 and n.inputs[2] else "None"
    return (f"torch.nn.functional.conv{rank}d({a[0]}, {a[1]}, {bias}, stride={tuple(n.attrs.get('strides', [1] * rank))}, "
            f"padding={pads}, dilation={tuple(n.attrs.get('dilations', [1] * rank))}, groups={n.attrs.get('group', 1)})")


def _pool(kind):
    def f(n, a, g):
        rank = len(n.attrs["kernel_shape"])
        pads = _pads(n, rank)
        if pads is None or n.attrs.get("ceil_mode", 0) or len([o for o in n.outputs if o]) > 1:
            return None
        if kind == "avg" and any(d != 1 for d in n.attrs.get("dilations", [1] * rank)):
            return None   # torch's avg_pool has no dilation
        k, s = tuple(n.attrs["kernel_shape"]), tuple(n.attrs.get("strides", [1] * rank))
        if kind == "max":
            return (f"torch.nn.functional.max_pool{rank}d({a[0]}, {k}, stride={s}, padding={pads}, "
                    f"dilation={tuple(n.attrs.get('dilations', [1] * rank))})")
        return (f"torch.nn.functional.avg_pool{rank}d({a[0]}, {k}, stride={s}, padding={pads}, "
                f"count_include_pad={bool(n.attrs.get('count_include_pad', 0))})")
    return f


def _reduce(fn):
    def f(n, a, g):
        axes = reduce_axes(n, g)
        if axes is None:      # axes computed at run time
            return None
        if not axes:
            return a[0]
        if fn == "amax" and any(g.info(n.inputs[0]).shape[d] == 0 for d in axes):
            return None   # the maximum of nothing (ONNX: -inf) is an error in torch
        keep = bool(n.attrs.get("keepdims", 1))
        if fn == "amax":
            return f"torch.amax({a[0]}, dim={tuple(axes)}, keepdim={keep})"
        return f"torch.{fn}({a[0]}, dim={tuple(axes)}, keepdim={keep})"
    return f


def _int_div(n, a, g):
    if g.info(n.outputs[0]).dtype.startswith(("int", "uint")):
        return f"torch.div({a[0]}, {a[1]}, rounding_mode='trunc')"
    return f"{a[0]} / {a[1]}"


def _layernorm(n, a, g):
    if len([o for o in n.outputs if o]) > 1:
        return None
    x = g.info(n.inputs[0])
    axis = n.attrs.get("axis", -1) % len(x.shape)
    w = a[1] if len(a) > 1 else "None"
    b = a[2] if len(a) > 2 and n.inputs[2] else "None"
    return (f"torch.nn.functional.layer_norm({a[0]}, {tuple(x.shape[axis:])}, {w}, {b}, "
            f"eps={float(n.attrs.get('epsilon', 1e-5))})")


def _softmax(n, a, g):
    if g.opset < 13:
        return None
    return f"torch.softmax({a[0]}, dim={n.attrs.get('axis', -1)})"


def _batchnorm(n, a, g):
    if n.attrs.get("training_mode", 0) or len([o for o in n.outputs if o]) > 1:
        return None
    x = g.info(n.inputs[0])
    if len(x.shape) < 2 or any(g.info(t).shape != (x.shape[1],) for t in n.inputs[1:5]):
        return None   # torch's batch_norm takes one statistic per channel
    return (f"torch.nn.functional.batch_norm({a[0]}, {a[3]}, {a[4]}, {a[1]}, {a[2]}, False, 0.0, "
            f"{float(n.attrs.get('epsilon', 1e-5))})")


def _gemm(n, a, g):
    if g.info(n.inputs[0]).dtype != g.info(n.inputs[1]).dtype:
        return None
    A = f"{a[0]}.transpose(-1, -2)" if n.attrs.get("transA", 0) else a[0]
    B = f"{a[1]}.transpose(-1, -2)" if n.attrs.get("transB", 0) else a[1]
    alpha, beta = float(n.attrs.get("alpha", 1.0)), float(n.attrs.get("beta", 1.0))
    expr = f"torch.matmul({A}, {B})" + ("" if alpha == 1.0 else f" * {alpha!r}")
    if len(a) > 2 and n.inputs[2] and beta != 0.0:
        expr += f" + {a[2]}" + ("" if beta == 1.0 else f" * {beta!r}")
    return expr


def _gelu(n, a, g):
    return f"torch.nn.functional.gelu({a[0]}, approximate={n.attrs.get('approximate', 'none')!r})"


def _fold(fn):
    def f(n, a, g):
        out = a[0]
        for b in a[1:]:
            out = f"torch.{fn}({out}, {b})"
        return out
    return f


def _slice(n, a, g):
    from .kernels.maps import slice_params

    out = g.info(n.outputs[0])
    try:
        first, step = slice_params(n, g)
    except Exception:   # bounds computed at run time, or a declared extent (the kernel is specialised)
        return None
    if any(s <= 0 for s in step):
        return None
    index = ", ".join(f"{f}:{f} + {o} * {s}:{s}" if s != 1 else f"{f}:{f} + {o}"
                      for f, s, o in zip(first, step, out.shape))
    return f"{a[0]}[{index}]"


def _gather(n, a, g):
    x = g.info(n.inputs[0])
    if g.info(n.inputs[1]).dtype not in ("int32", "int64"):
        return None
    axis = n.attrs.get("axis", 0) % len(x.shape)
    idx = f"torch.where({a[1]} < 0, {a[1]} + {x.shape[axis]}, {a[1]}).reshape(-1)"
    return f"{a[0]}.index_select({axis}, {idx})"   # reshaped to the output's shape by torch_expr


def _shape(n, a, g):
    rank = len(g.info(n.inputs[0]).shape)
    start, end = n.attrs.get("start", 0), n.attrs.get("end", rank)
    return f"torch.tensor({a[0]}.shape[{start}:{end}], dtype=torch.int64, device={a[0]}.device)"


def _value_text(g: Graph, tensor: str, arg: str) -> str:
    """A 0-d or 1-d integer input as Python text: its value where the conversion knows it (a
    constant; a shape value, whose names are the Model's locals), else read from the tensor."""
    if tensor in g.constants:
        v = g.constants[tensor].reshape(-1).tolist()
    elif tensor in g.values:
        v = list(g.values[tensor])
    else:
        return f"{arg}.tolist()"
    return repr(v[0]) if not g.info(tensor).shape else "(" + "".join(f"{x}, " for x in v) + ")"


def _constant_of_shape(n, a, g):
    value = n.attrs.get("value")
    fill = value.reshape(-1)[0].item() if value is not None else 0.0
    return f"torch.full({g.info(n.outputs[0]).shape!r}, {fill!r}, device=dev)"


def _range(n, a, g):
    start, limit, delta = (_value_text(g, t, x) for t, x in zip(n.inputs, a))
    return f"torch.arange({start}, {limit}, {delta}, device=dev)"


#: op type -> torch spelling; None from a function: this node's attributes are not handled
TORCH: dict = {
    "Add": lambda n, a, g: f"{a[0]} + {a[1]}",
    "Sub": lambda n, a, g: f"{a[0]} - {a[1]}",
    "Mul": lambda n, a, g: f"{a[0]} * {a[1]}",
    "Div": _int_div,
    "Pow": lambda n, a, g: f"torch.pow({a[0]}, {a[1]})",
    "Sqrt": lambda n, a, g: f"torch.sqrt({a[0]})",
    "Exp": lambda n, a, g: f"torch.exp({a[0]})",
    "Log": lambda n, a, g: f"torch.log({a[0]})",
    "Sin": lambda n, a, g: f"torch.sin({a[0]})",
    "Cos": lambda n, a, g: f"torch.cos({a[0]})",
    "Relu": lambda n, a, g: f"torch.relu({a[0]})",
    "Sigmoid": lambda n, a, g: f"torch.sigmoid({a[0]})",
    "Tanh": lambda n, a, g: f"torch.tanh({a[0]})",
    "Erf": lambda n, a, g: f"torch.erf({a[0]})",
    "Neg": lambda n, a, g: f"-{a[0]}",
    "Abs": lambda n, a, g: f"torch.abs({a[0]})",
    "Identity": lambda n, a, g: a[0],
    "Cast": lambda n, a, g: a[0],           # the result is converted to the output's dtype below
    "Where": lambda n, a, g: f"torch.where({a[0]}, {a[1]}, {a[2]})",
    "MatMul": lambda n, a, g: f"torch.matmul({a[0]}, {a[1]})",
    "Transpose": lambda n, a, g: f"{a[0]}.permute({tuple(n.attrs['perm'])})" if "perm" in n.attrs else
    f"{a[0]}.permute({tuple(reversed(range(len(g.info(n.inputs[0]).shape))))})",
    "ReduceSum": _reduce("sum"),
    "ReduceMean": _reduce("mean"),
    "ReduceMax": _reduce("amax"),
    "Softmax": _softmax,
    "LayerNormalization": _layernorm,
    "Conv": _conv,
    "MaxPool": _pool("max"),
    "AveragePool": _pool("avg"),
    "GlobalAveragePool": lambda n, a, g: f"{a[0]}.mean(dim={tuple(range(2, len(g.info(n.inputs[0]).shape)))}, keepdim=True)",
    "Concat": lambda n, a, g: f"torch.cat([{', '.join(a)}], dim={n.attrs['axis']})",
    "BatchNormalization": _batchnorm,
    "Gemm": _gemm,
    "Gelu": _gelu,
    "Max": _fold("maximum"),
    "Min": _fold("minimum"),
    "Reciprocal": lambda n, a, g: f"torch.reciprocal({a[0]})",
    "Slice": _slice,
    "Gather": _gather,
    "Shape": _shape,
    "Size": lambda n, a, g: f"torch.tensor({a[0]}.numel(), dtype=torch.int64, device={a[0]}.device)",
    # the ops whose output's shape is an input's value: that shape is the output's, which the
    # conversion knows (a constant, or an expression of the declared extents)
    "Expand": lambda n, a, g: f"{a[0]}.broadcast_to({g.info(n.outputs[0]).shape!r})",
    "Tile": lambda n, a, g: f"{a[0]}.repeat({_value_text(g, n.inputs[1], a[1])})",
    "ConstantOfShape": _constant_of_shape,
    "Range": _range,
    # views: the input, given the output's shape by torch_expr
    "Reshape": lambda n, a, g: a[0],
    "Flatten": lambda n, a, g: a[0],
    "Squeeze": lambda n, a, g: a[0],
    "Unsqueeze": lambda n, a, g: a[0],
}


def torch_expr(node: Node, args: list[str], graph: Graph) -> str | None:
    """The torch expression of ``node``'s (single) output, shaped and typed as ONNX says; None if none."""
    fn = TORCH.get(node.op_type)
    if fn is None or len([o for o in node.outputs if o]) != 1:
        return None
    if any(graph.info(t).dtype not in TORCH_DTYPES for t in list(node.inputs) + list(node.outputs) if t):
        return None   # float8, 4- and 2-bit types: torch has no tensors of them here
    expr = fn(node, args, graph)
    if expr is None:
        return None
    out = graph.info(node.outputs[0])
    return f"({expr}).to({TORCH_DTYPES.get(out.dtype, 'torch.float32')}).reshape({out.shape!r})"
