"""Step 2b: attention patterns, which become one fused kernel each (flash attention).

The pattern is the one exporters write for scaled dot-product attention::

    scores = MatMul(Q, Kt)            Q (..., Sq, D), Kt (..., D, Sk)
    [scaled = Mul/Div(scores, c)]     c a scalar constant
    [kept = Where(cond, scaled, f)]   cond boolean, broadcast to the scores; f a scalar constant
                                      (either side: masked_fill's Where(cond, f, scaled) too)
    [masked = Add(kept, mask)]        mask broadcast to the scores (an attention mask)
    probs = Softmax(masked, axis=-1)
    ctx = MatMul(probs, V)            V (..., Sk, Dv)

with the batch dimensions of Q on Kt and V (or 1 there: one K/V head shared by all, multi-query
attention), a head size D (and Dv) that is a number, and
every intermediate read by the next node alone (none a graph output). A ``Transpose`` whose only
reader is the pattern (Q, Kt, V from ``(batch, seq, heads, dim)`` activations) or whose only
input is its result (``ctx`` back to that layout) joins it: the kernel reads and writes the
tensors on the far side of the transposes through their axes, and those copies vanish.

Grouped-query attention: K and V with fewer heads, each repeated ``rep`` times as HF's
``repeat_kv`` writes it, ``Reshape(Expand(Unsqueeze(kv, a)))`` ((b, kv, s, d) → (b, kv, 1, s, d)
→ (b, kv, rep, s, d) → (b, kv·rep, s, d)), with a Transpose before and after, are read through
all of them: the kernel reads head ``h`` of the original at ``h // rep`` and the copies vanish too.
"""
from __future__ import annotations

from dataclasses import dataclass

from .claim import why_not
from .dims import Dim
from .graph import Graph, Node

#: the element types the fused kernel computes (half types on tensor cores, the rest exactly)
DTYPES = ("float16", "bfloat16", "float32", "float64")
MAX_HEAD = 256


@dataclass(frozen=True)
class Operand:
    """A tensor the kernel reads or writes, and for each logical axis of the pattern's matrix
    (batch axes, then rows, then columns) the axis of ``tensor`` that holds it."""
    tensor: str
    axes: tuple[int, ...]
    #: per logical axis, how many consecutive indices read one element of ``tensor`` (a K/V head
    #: repeated for grouped-query attention); empty: none repeated
    repeat: tuple[int, ...] = ()


@dataclass(frozen=True)
class Where:
    """``Where(cond, scores, fill)`` (``keep``: the scores where ``cond`` holds) or
    ``Where(cond, fill, scores)`` (the scores where it does not)."""
    node: Node
    cond: str
    fill: float
    keep: bool


@dataclass(frozen=True)
class Attention:
    q: Operand
    k: Operand           # logical (..., D, Sk): the second operand of the scores product
    v: Operand
    out: Operand
    scale: float
    scores: Node
    softmax: Node
    context: Node
    nodes: tuple[Node, ...]     # every node of the pattern, in graph order
    mask: str | None = None     # a tensor added to the scaled scores (broadcast), or None
    where: Where | None = None  # scores replaced by a constant where a condition says

    @property
    def last(self) -> Node:
        return self.nodes[-1]


def _only_reader(graph: Graph, tensor: str, node: Node, outputs: set[str]) -> bool:
    return tensor not in outputs and [n.index for n in graph.consumers(tensor)] == [node.index]


def _scalar(graph: Graph, tensor: str) -> float | None:
    c = graph.constants.get(tensor)
    return float(c.reshape(-1)[0]) if c is not None and c.size == 1 else None


def _transpose(graph: Graph, tensor: str, reader: Node, outputs: set[str]):
    """The Transpose making ``tensor`` that only ``reader`` reads, and its perm; or None."""
    t = graph.producer(tensor)
    if t is not None and t.op_type == "Transpose" and _only_reader(graph, tensor, reader, outputs) \
            and why_not(t, graph) is None:
        rank = len(graph.info(tensor).shape)
        return t, tuple(t.attrs.get("perm", range(rank - 1, -1, -1)))
    return None


def _repeat(graph: Graph, tensor: str, reader: Node, outputs: set[str]):
    """HF's repeat_kv making ``tensor``: ``Reshape(Expand(Unsqueeze(kv, a)))`` that repeats each
    element along axis ``a - 1`` of ``kv`` ``rep`` times (each result read by the next node alone).
    Returns (kv, that axis, rep, the three nodes) or None."""
    r = graph.producer(tensor)
    if r is None or r.op_type != "Reshape" or not _only_reader(graph, tensor, reader, outputs):
        return None
    e = graph.producer(r.inputs[0])
    if e is None or e.op_type != "Expand" or not _only_reader(graph, r.inputs[0], r, outputs) or why_not(e, graph):
        return None
    u = graph.producer(e.inputs[0])
    if u is None or u.op_type != "Unsqueeze" or not _only_reader(graph, e.inputs[0], e, outputs):
        return None
    kv, made = graph.info(u.inputs[0]).shape, graph.info(u.outputs[0]).shape
    expanded, out = graph.info(e.outputs[0]).shape, graph.info(tensor).shape
    if len(made) != len(kv) + 1 or len(out) != len(kv):
        return None
    a = next((i for i in range(len(made)) if made[:i] + made[i + 1:] == kv and made[i] == 1), None)
    if a is None or a == 0 or len(expanded) != len(made):
        return None
    rep = expanded[a]
    if isinstance(rep, Dim) or expanded[:a] + expanded[a + 1:] != kv or \
            out != kv[:a - 1] + (kv[a - 1] * rep,) + kv[a:]:
        return None
    return u.inputs[0], a - 1, rep, [u, e, r]


def _broadcasts_to(shape, target) -> bool:
    """Whether ``shape`` broadcasts to ``target`` unchanged (numpy's rules: trailing axes equal or 1)."""
    return len(shape) <= len(target) and all(d == 1 or d == e for d, e in zip(shape[::-1], target[::-1]))


def _read_through(graph: Graph, tensor: str, reader: Node, outputs: set[str], taken: list[Node]) -> Operand:
    """``tensor`` as the pattern reads it: through a Transpose that only the pattern reads, then
    a repeat of K/V heads (:func:`_repeat`), then another Transpose, as far as each is there."""
    rank = len(graph.info(tensor).shape)
    axes, repeat, took = tuple(range(rank)), [1] * rank, []
    found = _transpose(graph, tensor, reader, outputs)
    if found is not None:
        t, perm = found
        axes, tensor, reader = tuple(perm[a] for a in axes), t.inputs[0], t
        took.append(t)
    rep = _repeat(graph, tensor, reader, outputs)
    if rep is not None and rep[1] in axes[:-2]:   # a batch axis (heads) of the pattern
        tensor, axis, n, nodes = rep
        repeat[axes.index(axis)] = n
        reader = nodes[0]
        took += nodes
        found = _transpose(graph, tensor, reader, outputs)
        if found is not None:
            t, perm = found
            axes, tensor = tuple(perm[a] for a in axes), t.inputs[0]
            took.append(t)
    taken += took
    return Operand(tensor, axes, tuple(repeat) if any(r != 1 for r in repeat) else ())


def _scores_chain(graph: Graph, t: str, reader: Node, outputs: set[str]):
    """``t`` as ``MatMul`` [then ``Mul``/``Div`` by a scalar] [then ``Where`` with a scalar],
    each result read by the next node alone: (the MatMul, the scale, [the scaling node], the
    Where or None), or None."""
    if not _only_reader(graph, t, reader, outputs):
        return None
    made = graph.producer(t)
    where = None
    if made is not None and made.op_type == "Where":
        cond, a, b = made.inputs
        if graph.info(cond).dtype != "bool":
            return None
        if _scalar(graph, b) is not None and _scalar(graph, a) is None:
            where, t = Where(made, cond, _scalar(graph, b), True), a
        elif _scalar(graph, a) is not None and _scalar(graph, b) is None:
            where, t = Where(made, cond, _scalar(graph, a), False), b
        else:
            return None
        if not _only_reader(graph, t, made, outputs):
            return None
        made = graph.producer(t)
    scale, scaler = 1.0, []
    if made is not None and made.op_type in ("Mul", "Div"):
        a, b = made.inputs
        if made.op_type == "Div" and _scalar(graph, b) not in (None, 0.0):
            scale, t = 1.0 / _scalar(graph, b), a
        elif made.op_type == "Mul" and _scalar(graph, b) is not None:
            scale, t = _scalar(graph, b), a
        elif made.op_type == "Mul" and _scalar(graph, a) is not None:
            scale, t = _scalar(graph, a), b
        else:
            return None
        if not _only_reader(graph, t, made, outputs):
            return None
        scaler = [made]
        made = graph.producer(t)
    if made is None or made.op_type != "MatMul":
        return None
    return made, scale, scaler, where


def _match(graph: Graph, softmax: Node, outputs: set[str]) -> Attention | None:
    probs = softmax.outputs[0]
    shape = graph.info(probs).shape
    rank = len(shape)
    if rank < 3 or softmax.attrs.get("axis", -1 if graph.opset >= 13 else 1) % rank != rank - 1:
        return None
    readers = graph.consumers(probs)
    if probs in outputs or len(readers) != 1 or readers[0].op_type != "MatMul" or readers[0].inputs[0] != probs:
        return None
    context = readers[0]
    # back from the Softmax: [Add(·, mask)] after [Mul/Div by a scalar] after the scores MatMul
    mask, masker = None, []
    made = graph.producer(softmax.inputs[0])
    if made is not None and made.op_type == "Add":
        if not _only_reader(graph, softmax.inputs[0], softmax, outputs):
            return None
        for side in (0, 1):   # the side the scores come from; the other is the mask
            chain = _scores_chain(graph, made.inputs[side], made, outputs)
            if chain is not None:
                mask, masker = made.inputs[1 - side], [made]
                break
    else:
        chain = _scores_chain(graph, softmax.inputs[0], softmax, outputs)
    if chain is None:
        return None
    scores, scale, scaler, where = chain
    if where is not None:   # the condition broadcast to the scores
        if not _broadcasts_to(graph.info(where.cond).shape, graph.info(scores.outputs[0]).shape):
            return None
        scaler = scaler + [where.node]
    q_t, k_t, v_t = scores.inputs[0], scores.inputs[1], context.inputs[1]
    out_t = context.outputs[0]
    q, k, v, o = (graph.info(t) for t in (q_t, k_t, v_t, out_t))
    if not all(len(i.shape) == rank for i in (q, k, v, o)) or len({q.dtype, k.dtype, v.dtype, o.dtype}) != 1:
        return None
    if q.dtype not in DTYPES or any(why_not(n, graph) for n in [scores, *scaler, *masker, softmax, context]):
        return None
    if mask is not None:   # added to every score: broadcast to them, of their type
        m = graph.info(mask)
        if m.dtype != q.dtype or not _broadcasts_to(m.shape, graph.info(scores.outputs[0]).shape):
            return None
    batch = q.shape[:-2]   # K and V may have one head for all (multi-query attention): broadcast
    if any(d != e and d != 1 for t in (k, v) for d, e in zip(t.shape[:-2], batch)) or o.shape[:-2] != batch:
        return None
    D, Dv = q.shape[-1], v.shape[-1]
    if any(isinstance(d, Dim) or d > MAX_HEAD for d in (D, Dv)) or k.shape[-2] != D or v.shape[-2] != k.shape[-1]:
        return None
    taken: list[Node] = []
    qo = _read_through(graph, q_t, scores, outputs, taken)
    ko = _read_through(graph, k_t, scores, outputs, taken) if k_t != q_t else Operand(k_t, tuple(range(rank)))
    vo = _read_through(graph, v_t, context, outputs, taken) if v_t not in (q_t, k_t) else Operand(v_t, tuple(range(rank)))
    oo = Operand(out_t, tuple(range(rank)))
    after = graph.consumers(out_t)
    if out_t not in outputs and len(after) == 1 and after[0].op_type == "Transpose" and why_not(after[0], graph) is None:
        perm = tuple(after[0].attrs.get("perm", range(rank - 1, -1, -1)))
        oo = Operand(after[0].outputs[0], tuple(perm.index(i) for i in range(rank)))
        taken.append(after[0])
    nodes = tuple(sorted([*taken, scores, *scaler, *masker, softmax, context], key=lambda n: n.index))
    return Attention(qo, ko, vo, oo, scale, scores, softmax, context, nodes, mask, where)


def find(graph: Graph) -> list[Attention]:
    """Every attention pattern of ``graph`` (disjoint: one softmax each)."""
    outputs = {o.name for o in graph.outputs}
    found = []
    for node in graph.nodes:
        if node.op_type == "Softmax":
            a = _match(graph, node, outputs)
            if a is not None:
                found.append(a)
    return found
