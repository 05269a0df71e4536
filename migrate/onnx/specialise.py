"""Step 3c, specialised groups: a group whose kernel needs the value of a declared dimension
(:class:`~.dims.NeedsValue` from its emitter) is emitted when the ``Model`` first sees each value.

At conversion :func:`save` writes ``OUT/<model>.groups.pkl``: the graph (shapes with the declared
names, no large constants: the kernels take those as parameters), the specialised groups, the
tensors' Python names and the options. At run time :func:`kernel` puts the values into the shapes,
runs the same emitter (:data:`~.kernels.EMITTERS`) on numbers and returns the :class:`Kernel`, whose
``make`` gives its ``T.prim_func``. Needs ``migrate`` (not ``onnx``) where the model runs.
"""
from __future__ import annotations

import linecache
import pickle
from dataclasses import replace
from pathlib import Path

from .dims import substitute
from .graph import Graph, TensorInfo
from .group import Group
from .kernels import EMITTERS, Kernel, Options

SUFFIX = ".groups.pkl"
#: constants up to this many elements are kept (scalars inlined in kernels, Slice bounds, shapes)
SMALL = 64


def save(path: Path, graph: Graph, groups: list[Group], names: dict, opts: Options) -> None:
    small = {t: a for t, a in graph.constants.items() if a.size <= SMALL}
    state = {"graph": replace(graph, constants=small), "groups": {g.name: g for g in groups},
             "names": names, "opts": opts}
    path.write_bytes(pickle.dumps(state))


_STATES: dict = {}
_KERNELS: dict = {}


def kernel(path: str | Path, name: str, values: dict) -> Kernel:
    """The group ``name``'s kernel with the declared dimensions at ``values`` (cached)."""
    key = (str(path), name, tuple(sorted(values.items())))
    if key not in _KERNELS:
        if str(path) not in _STATES:
            _STATES[str(path)] = pickle.loads(Path(path).read_bytes())   # written by save(), beside the module
        st = _STATES[str(path)]
        graph: Graph = st["graph"]
        values = dict(values)
        for d, e in graph.derived.items():
            values.setdefault(d, substitute(e, values))
        infos = {t: TensorInfo(i.name, substitute(tuple(i.shape), values), i.dtype) for t, i in graph.infos.items()}
        fixed = replace(graph, infos=infos,
                        inputs=[infos[i.name] for i in graph.inputs], outputs=[infos[o.name] for o in graph.outputs])
        group = st["groups"][name]
        _KERNELS[key] = EMITTERS[group.kind](group, fixed, st["names"], st["opts"])
    return _KERNELS[key]


def make(path: str | Path, name: str, values: dict, target: str = "cuda"):
    """The ``T.prim_func`` of group ``name`` at ``values``."""
    import tilelang.language as T

    k = kernel(path, name, values)
    # TileLang reads a prim_func's source back (inspect): the text gets a name linecache knows
    filename = f"<migrate.onnx.specialise {Path(path).name} {name} {sorted(values.items())}>"
    linecache.cache[filename] = (len(k.source), None, k.source.splitlines(True), filename)
    scope = {"T": T}
    exec(compile(k.source, filename, "exec"), scope)   # the emitter's own text
    return scope[f"make_{name}"](target=target)
