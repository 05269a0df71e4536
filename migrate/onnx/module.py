"""Step 4, the module writer: ``OUT/<model>.py`` (kernel factories and a ``Model`` class) and
``OUT/<model>.npz`` (the model's constants).

``Model(target="cuda"|"c")`` compiles each kernel on first use; ``Model(...)(*inputs)`` runs the
groups in graph order on torch tensors, allocating each group's outputs, and returns the graph's
outputs (a tuple when there are several). ``trace=`` (a dict) receives every group's outputs by
kernel name, which the check compares group by group.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import __version__
from .fallback import TORCH_DTYPES, torch_expr
from .graph import Graph
from .group import Group
from .kernels import Kernel
from .kernels.base import declared_views


class NoFallback(Exception):
    def __init__(self, group: Group):
        self.group = group


def tag_lines(source: str, group: Group) -> str:
    """Provenance tags as ``convert`` writes them: a line whose comment names a node of the group
    (``# Relu 'act1'``) ends with ``  # L<n>``, n the node's place in the graph (its span's line;
    the report page aligns the kernel with the model's graph listing by them)."""
    out = []
    for line in source.split("\n"):
        code, sep, comment = line.partition("  # ")
        if sep:
            for n in group.nodes:
                if f"'{n.name}'" in comment:
                    line = f"{line}  # L{n.span.line}"
                    break
        out.append(line)
    return "\n".join(out)


def _header(graph: Graph, stem: str) -> str:
    return f'''"""TileLang conversion of the ONNX model {graph.name!r} ({Path(graph.path).name}), written by cuda2tile {__version__}
(`migrate onnx`).

Each fused group of ONNX nodes is one TileLang kernel: `make_<kernel>(target)` returns its
`T.prim_func`; comments name the ONNX node each statement comes from. `Model` runs the graph on
torch tensors (`Model(target="c")` on the CPU); its constants are in {stem}.npz beside this file.
Nodes without a TileLang form yet run in torch, marked `fallback` here and in report.json.
"""
import json
from pathlib import Path

import numpy as np
import tilelang.language as T
import torch

from migrate.runtime.tilelang_support import compile_for

'''


def write(graph: Graph, groups: list[Group], kernels: dict[str, Kernel], out_dir: Path, stem: str,
          names: dict[str, str], special: dict | None = None) -> Path:
    """Write the module and its constants; ``names`` are the tensors' Python names the kernels use."""
    parts = [_header(graph, stem), f"STEM = {stem!r}\n"]
    for g in groups:
        k = kernels.get(g.name)
        if k is None:
            continue
        nodes = ", ".join(f"'{n.name}' ({n.op_type})" for n in g.nodes)
        parts.append(f"# -- {k.name}: tile {'-' * max(4, 72 - len(k.name))}\n# {k.summary}: ONNX nodes {nodes}")
        parts.append(tag_lines(k.source, g))
    parts.append("KERNELS = {\n" + "".join(f"    {k!r}: make_{k},\n" for k in kernels) + "}\n")
    if special:
        parts.append("# groups whose kernels need the values of declared dimensions: emitted and compiled on the\n"
                     "# first call with each value (migrate.onnx.specialise, from " + stem + ".groups.pkl)\n"
                     "SPECIALISED = {\n" + "".join(f"    {k!r}: {v!r},\n" for k, v in special.items()) + "}\n")
    parts.append(_model_class(graph, groups, kernels, names, stem, special or {}))
    parts.append(_eager_class(graph, groups, names, stem))
    path = out_dir / f"{stem}.py"
    path.write_text("\n\n".join(parts))
    np.savez(out_dir / f"{stem}.npz", **{names[t]: np.ascontiguousarray(a) for t, a in graph.constants.items()})
    return path


_SPECIALISED_METHOD = '''
    def specialised(self, name, dims, tensors):
        """Run group ``name``, whose kernel is emitted and compiled for each value of ``dims``."""
        key = (name, tuple(sorted(dims.items())))
        if key not in self.compiled:
            from migrate.onnx import specialise

            state = Path(__file__).with_name(STEM + specialise.SUFFIX)
            k = specialise.kernel(state, name, dims)
            self.compiled[key] = (compile_for(specialise.make(state, name, dims, self.target), self.target), k.params)
        fn, params = self.compiled[key]
        fn(*[tensors[p.tensor].reshape(p.view) for p in params])
'''


def _after_group(g: Group, names) -> list[str]:
    out = []
    if g.outputs:
        out.append("        if trace is not None:")
        out.append(f"            trace[{g.name!r}] = {{" + ", ".join(f"{t!r}: {names[t]}" for t in g.outputs) + "}")
    out.append("        if hook is not None:")
    out.append(f"            hook({g.name!r})")
    return out


def _prep(graph: Graph, ins: list[str]) -> list[str]:
    prep = [f"        {x} = {x}.to(dev).contiguous()" for x in ins]
    if graph.dims:
        prep.append("        # the extents the model declares by name, read from the inputs' shapes")
        prep += [f"        {d} = {ins[i]}.shape[{axis}]" for d, (i, axis) in graph.dims.items()]
        prep += [f"        {d} = {_unwrapped(str(e))}  # derived" for d, e in graph.derived.items()]
    return prep


def _unwrapped(text: str) -> str:
    """``text`` without the parentheses around all of it (``(seq - 1)`` -> ``seq - 1``)."""
    depth = 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth == 0 and i < len(text) - 1:
            return text
    return text[1:-1] if text.startswith("(") else text


def _eager_class(graph: Graph, groups, names, stem) -> str:
    """``Eager``: the same graph node by node in PyTorch eager (the baseline ``migrate bench --onnx``
    times the kernels against), cut into the same groups by ``hook``."""
    ins = [names[i.name] for i in graph.inputs]
    outs = [names[o.name] for o in graph.outputs]

    def ref(t: str) -> str:
        return f'w["{names[t]}"]' if t in graph.constants else names[t]

    body, missing = [], []
    for g in groups:
        body.append(f"        # {g.name}")
        for n in g.nodes:
            expr = torch_expr(n, [ref(t) if t else "None" for t in n.inputs], graph)
            if expr is None:
                missing.append(f"{n.op_type} '{n.name}'")
                continue
            body.append(f"        {names[n.outputs[0]]} = {expr}  # {n.op_type} '{n.name}'")
        body += _after_group(g, names)
    ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ",)"
    if missing:
        return (f"#: no PyTorch eager form of {', '.join(missing)}: migrate bench --onnx has no baseline\n"
                f"Eager = None\n")
    return f'''class Eager:
    """The same graph node by node in PyTorch eager (torch.matmul, torch.nn.functional, ...): the
    baseline of `migrate bench --onnx`. fp32 matmuls follow torch.backends (tf32 off by default)."""

    def __init__(self, device="cuda"):
        self.device = torch.device(device)
        weights = np.load(Path(__file__).with_name({stem + ".npz"!r}))
        self.weights = {{k: torch.from_numpy(weights[k]).to(self.device) for k in weights.files}}

    def __call__(self, {", ".join(ins)}, *, trace=None, hook=None):
        w, dev = self.weights, self.device
{chr(10).join(_prep(graph, ins))}
{chr(10).join(body)}
        return {ret}
'''


def _dims_doc(graph: Graph) -> str:
    if not graph.dims:
        return ""
    return ("\n    Symbolic extents " + ", ".join(graph.dims) + ": the kernels take them as T.dynamic extents, "
            "one compiled kernel serves every value.")


def _reshaped(expr: str, shape: tuple) -> str:
    return f"{expr}.reshape{shape!r}" if len(shape) > 1 else f"{expr}.reshape({shape[0]!r})"


def _model_class(graph: Graph, groups, kernels, names, stem, special) -> str:
    ins = [names[i.name] for i in graph.inputs]
    outs = [names[o.name] for o in graph.outputs]

    def ref(t: str) -> str:
        return f'w["{names[t]}"]' if t in graph.constants else names[t]

    body = []
    for g in groups:
        k = kernels.get(g.name)
        what = " → ".join(f"{n.op_type} '{n.name}'" for n in g.nodes)
        if k is not None:
            body.append(f"        # {k.name}: {what}")
            for t in g.outputs:
                info = graph.info(t)
                body.append(f"        {names[t]} = self.alloc({info.shape!r}, {TORCH_DTYPES[info.dtype]})")
            decl = declared_views(k.params)
            args = ", ".join(_reshaped(ref(p.tensor), decl.get(p.name, p.view)) for p in k.params)
            body.append(f"        self.kernel({k.name!r})({args})")
        elif g.name in special:
            body.append(f"        # {g.name}: {what} (specialised per value of {', '.join(special[g.name])})")
            for t in g.outputs:
                info = graph.info(t)
                body.append(f"        {names[t]} = self.alloc({info.shape!r}, {TORCH_DTYPES[info.dtype]})")
            dims = "{" + ", ".join(f"{d!r}: {d}" for d in special[g.name]) + "}"
            tensors = "{" + ", ".join(f"{t!r}: {ref(t)}" for t in g.inputs + g.outputs if t) + "}"
            body.append(f"        self.specialised({g.name!r}, {dims}, {tensors})")
        elif g.kind == "view":
            n = g.nodes[0]
            out = graph.info(n.outputs[0])
            body.append(f"        {names[out.name]} = {ref(n.inputs[0])}.reshape({out.shape!r})  # {n.op_type} '{n.name}': a view")
        else:
            n = g.nodes[0]
            expr = torch_expr(n, [ref(t) if t else "None" for t in n.inputs], graph)
            if expr is None:
                raise NoFallback(g)
            body.append(f"        # fallback: {n.op_type} '{n.name}' runs in torch ({g.fallback})")
            body.append(f"        {names[n.outputs[0]]} = {expr}")
        body += _after_group(g, names)
    ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ",)"
    prep = _prep(graph, ins)
    return f'''class Model:
    """The ONNX graph {graph.name!r}: inputs {", ".join(f"{i.name} {list(i.shape)} {i.dtype}" for i in graph.inputs)};
    outputs {", ".join(f"{o.name} {list(o.shape)} {o.dtype}" for o in graph.outputs)}.{_dims_doc(graph)}"""

    inputs = {tuple(i.name for i in graph.inputs)!r}
    outputs = {tuple(o.name for o in graph.outputs)!r}

    def __init__(self, target="cuda", device=None, alloc=None, tiles=None):
        """``alloc(shape, dtype)`` makes the groups' outputs (default: torch.empty on ``device``);
        ``tiles`` maps a kernel to its tile sizes (default on CUDA: {stem + ".tiles.json"} beside
        this file when `migrate bench --onnx --tune` wrote one; else each factory's own)."""
        self.target = target
        self.device = torch.device(device or ("cpu" if target == "c" else "cuda"))
        weights = np.load(Path(__file__).with_name({stem + ".npz"!r}))
        self.weights = {{k: torch.from_numpy(weights[k]).to(self.device) for k in weights.files}}
        self.compiled = {{}}
        self.alloc = alloc or (lambda shape, dtype: torch.empty(shape, dtype=dtype, device=self.device))
        tuned = Path(__file__).with_name({stem + ".tiles.json"!r})
        if tiles is None and target != "c" and tuned.is_file():
            tiles = json.loads(tuned.read_text())["kernels"]
        self.tiles = tiles or {{}}

    def kernel(self, name):
        """The compiled kernel of group ``name`` (compiled on first use, cached by TileLang)."""
        if name not in self.compiled:
            make = KERNELS[name](target=self.target, **self.tiles.get(name, {{}}))
            self.compiled[name] = compile_for(make, self.target)
        return self.compiled[name]

{_SPECIALISED_METHOD if special else ""}
    def __call__(self, {", ".join(ins)}, *, trace=None, hook=None):
        """``trace`` (a dict) receives each group's outputs; ``hook(kernel)`` is called after each group."""
        w, dev = self.weights, self.device
{chr(10).join(prep)}
{chr(10).join(body)}
        return {ret}
'''
