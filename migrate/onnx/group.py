"""Step 2, grouping: the graph's nodes, in order, become groups, one kernel each.

A ``map`` node (elementwise) joins the most recent group when that group is a map or a GEMM (its
epilogue), computes an output of the same shape, and takes one of its inputs from that group:
chains like ``MatMul → Add → Relu`` or the ``Div → Erf → Add → Mul → Mul`` GELU pattern become
one kernel. An attention pattern (:mod:`.attention`: scores, scale, Softmax, context and the
transposes around them) is one ``attention`` group, placed where its last node is. Every other
node starts a group of its own kind. A node without a TileLang form (:mod:`.claim`) becomes a
``torch`` group, carrying its reason. A group's outputs are the tensors
it computes that a later group or the graph's outputs read; the rest stay in registers.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import attention
from .claim import why_not
from .graph import Graph, Node
from .ops import OPS

HOSTS = ("map", "matmul", "conv", "transpose", "concat", "slice", "gather")  # kinds whose element loop an elementwise node can join


@dataclass
class Group:
    index: int
    kind: str                   # map, matmul, reduce, softmax, layernorm, transpose, attention, view, torch
    nodes: list[Node]
    fallback: str | None = None
    pattern: attention.Attention | None = None     # an attention group's pattern
    outputs: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        if self.kind == "attention":
            return f"k{self.index}_attention"
        head = self.nodes[0].op_type.lower()
        tail = "_".join(n.op_type.lower() for n in self.nodes[1:3])
        return f"k{self.index}_{head}" + (f"_{tail}" if tail else "") + ("_etc" if len(self.nodes) > 3 else "")

    @property
    def shape_tensor(self) -> str:
        return self.nodes[0].outputs[0]


def group(graph: Graph) -> list[Group]:
    groups: list[Group] = []
    made_by: dict[str, Group] = {}
    patterns = attention.find(graph)
    member = {n.index for a in patterns for n in a.nodes}
    ends = {a.last.index: a for a in patterns}
    for node in graph.nodes:
        if node.index in member:
            a = ends.get(node.index)
            if a is not None:
                groups.append(Group(len(groups), "attention", list(a.nodes), pattern=a))
                for n in a.nodes:
                    made_by.update({t: groups[-1] for t in n.outputs if t})
            continue
        reason = why_not(node, graph)
        kind = "torch" if reason else OPS[node.op_type].kind
        last = groups[-1] if groups else None
        if (kind == "map" and last is not None and last.kind in HOSTS
                and graph.info(node.outputs[0]).shape == graph.info(last.shape_tensor).shape
                and any(made_by.get(t) is last for t in node.inputs)):
            last.nodes.append(node)
        else:
            last = Group(len(groups), kind, [node], fallback=reason)
            groups.append(last)
        for t in node.outputs:
            if t:
                made_by[t] = last
    graph_outputs = {o.name for o in graph.outputs}
    for g in groups:
        made = [t for n in g.nodes for t in n.outputs if t]
        inside = set(made)
        read_later = {t for h in groups if h is not g for n in h.nodes for t in n.inputs}
        g.outputs = [t for t in made if t in read_later or t in graph_outputs]
        seen: list[str] = []
        for n in g.nodes:
            for t in n.inputs:   # a shape value whose nodes were dropped is no tensor at run time
                if t and t not in inside and t not in seen and not (t in graph.values and graph.producer(t) is None):
                    seen.append(t)
        g.inputs = seen
    return groups
