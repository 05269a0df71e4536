"""Shape values: the small integer tensors a graph computes from its tensors' shapes.

Exported graphs with dynamic axes work out the shapes they reshape and expand to at run time:
``Shape(x)`` → ``Gather``/``Slice`` → ``Unsqueeze`` → ``Concat`` with constants (and ``Mul``,
``Add``, ``Sub``, ``Div``, ``Cast`` on the way) → the shape input of ``Reshape`` or ``Expand``.
Walking the graph in order (:func:`evaluate`, called by the import's walk over the nodes, which
knows each tensor's shape so far), each such tensor gets its value as a tuple of its elements:
ints and :class:`~.dims.Dim` (the declared extents). A value of ints only is a constant of the
graph from then on; one holding a name is kept as a *shape value*, which the shape rules of
:mod:`.graph` read where the constant would be (Reshape's target, Expand's shape).

:func:`unused` then says which of the nodes that made them nothing needs at run time: those whose
every output is a constant now, or is read only as a shape (the positions of :data:`SHAPE_INPUTS`)
or by another such node. They get no kernel (the report lists them as ``shape``).
"""
from __future__ import annotations

import numpy as np

from .dims import Dim, NeedsValue

#: element types a shape value may have
INT_TYPES = ("int32", "int64")
#: the most elements a constant may have to take part (shapes are short)
MAX_ELEMENTS = 64
#: per op type, the input positions read only for their value at conversion time (the kernel or
#: view that runs the node takes its output's shape instead)
SHAPE_INPUTS = {"Reshape": (1,), "Expand": (1,), "ConstantOfShape": (0,), "Tile": (1,), "Range": (0, 1, 2)}


def _int_div(a, b):
    """ONNX integer Div (truncating); along a declared extent only exact."""
    if isinstance(a, Dim) or isinstance(b, Dim):
        return a // b
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


#: elementwise arithmetic on shape values
ARITHMETIC = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b, "Div": _int_div}


def _shape(node, args, ctx):
    shape = ctx.shape_of(node.inputs[0])
    if shape is None:
        return None
    rank = len(shape)
    start, end = node.attrs.get("start", 0), node.attrs.get("end", rank)
    return tuple(shape[slice(max(-rank, min(start, rank)), max(-rank, min(end, rank)))])


def _size(node, args, ctx):
    shape = ctx.shape_of(node.inputs[0])
    if shape is None:
        return None
    n = 1
    for d in shape:
        n = d * n
    return (n,)


def _gather(node, args, ctx):
    data, idx = args[0], args[1]
    if data is None or idx is None or node.attrs.get("axis", 0) not in (0, -1):
        return None
    return tuple(data[int(i)] for i in idx)


def _slice(node, args, ctx):
    data = args[0]
    if data is None or any(a is None for a, t in zip(args[1:], node.inputs[1:]) if t):
        return None
    starts, ends = args[1], args[2]
    axes = args[3] if len(args) > 3 and node.inputs[3] else (0,)
    steps = args[4] if len(args) > 4 and node.inputs[4] else (1,)
    if len(starts) != 1 or tuple(axes) not in ((0,), (-1,)):
        return None
    return tuple(data[slice(int(starts[0]), int(ends[0]), int(steps[0]))])


def _concat(node, args, ctx):
    if any(a is None for a in args):
        return None
    return tuple(x for a in args for x in a)


def _same(node, args, ctx):
    return args[0]


def _cast(node, args, ctx):
    return args[0] if ctx.dtype(node.outputs[0]) in INT_TYPES else None


def _arith(node, args, ctx):
    a, b = args[0], args[1]
    if a is None or b is None or (len(a) != len(b) and 1 not in (len(a), len(b))):
        return None
    n = max(len(a), len(b))
    a, b = (a * n if len(a) == 1 else a), (b * n if len(b) == 1 else b)
    try:
        return tuple(ARITHMETIC[node.op_type](x, y) for x, y in zip(a, b))
    except (NeedsValue, ZeroDivisionError):   # a division that is not exact along a declared extent
        return None


#: op type -> its value from its inputs' values (each a tuple, or None where not known)
RULES = {"Shape": _shape, "Size": _size, "Gather": _gather, "Slice": _slice, "Concat": _concat,
         "Unsqueeze": _same, "Squeeze": _same, "Reshape": _same, "Flatten": _same, "Identity": _same,
         "Cast": _cast, **{op: _arith for op in ARITHMETIC}}
#: the ops that compute a shape value without reading one (the others need a shape value among their inputs)
ROOTS = ("Shape", "Size")


class Context:
    """What :func:`evaluate` reads: shapes so far, element types, constants and shape values."""

    def __init__(self, shape_of, dtype, constants: dict, values: dict):
        self.shape_of, self.dtype, self.constants, self.values = shape_of, dtype, constants, values

    def value(self, tensor: str):
        if tensor in self.values:
            return self.values[tensor]
        c = self.constants.get(tensor)
        if c is not None and c.dtype.kind in "iu" and c.size <= MAX_ELEMENTS:
            return tuple(int(v) for v in c.reshape(-1))
        return None


def evaluate(node, ctx: Context) -> bool:
    """Work out ``node``'s output when it is a shape value: a constant when all its elements are
    ints (added to ``ctx.constants``), else a shape value (``ctx.values``). Whether it was."""
    rule = RULES.get(node.op_type)
    if rule is None or len(node.outputs) != 1 or ctx.dtype(node.outputs[0]) not in INT_TYPES:
        return False
    data = [t for t in node.inputs if t]
    if node.op_type not in ROOTS and not any(t in ctx.values for t in data):
        return False   # constants only: not a function of shapes (left as the graph has it)
    try:
        out = rule(node, [ctx.value(t) if t else None for t in node.inputs], ctx)
    except (IndexError, ValueError, TypeError):   # an index past the end, a step of 0: left to run
        return False
    if out is None:
        return False
    t = node.outputs[0]
    shape = ctx.shape_of(t)
    if shape is None or any(isinstance(d, Dim) for d in shape) or int(np.prod(shape)) != len(out):
        return False   # not the shape shape inference gives it: left to run
    if all(isinstance(v, int) for v in out):
        ctx.constants[t] = np.array(out, dtype=ctx.dtype(t)).reshape(shape)
    ctx.values[t] = out   # the chain's later nodes read it (those of ints as constants too)
    return True


def unused(nodes: list, made: set[str], graph_outputs: set[str], symbolic: set[str]) -> set[int]:
    """The indices of the nodes (those whose outputs ``made`` holds) that nothing needs at run time:
    an output that is a constant now needs no node; a symbolic one (in ``symbolic``) only while
    every reader takes it as a shape or is such a node itself. Graph outputs are always computed."""
    readers: dict[str, list] = {}
    for n in nodes:
        for k, t in enumerate(n.inputs):
            if t:
                readers.setdefault(t, []).append((n, k))
    out: set[int] = set()
    for n in reversed(nodes):
        outs = [t for t in n.outputs if t]
        if not outs or any(t not in made or t in graph_outputs for t in outs):
            continue
        if all(t not in symbolic or all(r.index in out or k in SHAPE_INPUTS.get(r.op_type, ())
                                        for r, k in readers.get(t, [])) for t in outs):
            out.add(n.index)
    return out
