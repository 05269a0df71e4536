"""Does the original kernel compute a recorded launch the same with its threads in another order?

A replay that fails may be the original's doing: a kernel whose result depends on the order its
threads run in (threads that read and write the same words between barriers, a spin on a flag
another thread sets, atomics in float order) has no single right answer for the migrated kernel
to match. :func:`order_dependence` runs the original kernel alone, on the CPU executor, on the
bytes the recorded launch started from (:func:`.replay.as_spec`: its buffers and its
``__device__`` globals), once with its threads and blocks in forward and once in reverse order,
and compares what the two runs left, buffer by buffer, under the tolerance class of each dtype
(:data:`.replay.TOLERANCE_OF_DTYPE`; integers exactly). Unlike running the whole program again
in reverse order (:func:`.trace_check._flag_unrepeatable`), the launch's inputs are the same in
both runs even where earlier kernels of the program are order-dependent themselves.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

__all__ = ["OrderVerdict", "order_dependence"]

#: dtypes the CPU executor's launcher has no code for, passed as the bytes they are
_AS_BYTES = {"bool": "uint8"}


@dataclasses.dataclass
class OrderVerdict:
    status: str  # "differs" (the original is order-dependent), "same", or "unjudged"
    message: str = ""
    reproduced: bool | None = None  # whether the forward run left what the recording holds


def _as_bytes(spec, inputs, launch):
    """``spec`` and its symbol values with the dtypes of :data:`_AS_BYTES` as bytes."""
    from .replay import _values
    symbols = tuple(dataclasses.replace(s, dtype=_AS_BYTES.get(s.dtype, s.dtype)) for s in spec.symbols)
    values = {s.name: (np.array(_values(_raw(launch, s.name), s.dtype, 0)[:s.elements]) if s.dtype != old.dtype
                       else inputs.symbols[s.name]) for s, old in zip(symbols, spec.symbols)}
    args = tuple(dataclasses.replace(a, dtype=_AS_BYTES.get(a.dtype, a.dtype)) for a in spec.args)
    return dataclasses.replace(spec, symbols=symbols, args=args), values


def _raw(launch, name: str):
    return launch.globals_before[name] if name in launch.globals_before else launch.symbols[name]


def _written(spec, launch) -> list[tuple[str, str, int]]:
    """(output name, dtype, elements) of what the launch may change: its buffers the recording
    shows written, and its ``__device__`` globals."""
    out = [(a.name, a.dtype, a.elements) for a in spec.args if a.is_output]
    return out + [("symbol:" + s.name, s.dtype, s.elements) for s in spec.symbols if s.name in launch.globals_before]


def order_dependence(module: str | Path, launch, cu_path: str | Path, *, include_dirs=(), defines=(),
                     timeout: float = 120.0) -> OrderVerdict:
    """Run the original kernel of ``launch`` (migrated in ``module``, defined in ``cu_path``) alone
    on the launch's recorded inputs in forward and in reverse order; see the module docstring."""
    from .api import run_original
    from .compare import compare_arrays
    from .replay import TOLERANCE_OF_DTYPE, _values, as_spec
    from .tilelang_side import load_module

    try:
        sig = getattr(load_module(module), "KERNELS", {}).get(launch.name)
    except Exception as exc:  # a module that does not import: the replay said so already
        return OrderVerdict("unjudged", f"the module does not load: {type(exc).__name__}: {exc}")
    if sig is None:
        return OrderVerdict("unjudged", f"kernel '{launch.name}' was not migrated")
    spec, inputs = as_spec(sig, launch, str(cu_path))
    if spec is None:
        return OrderVerdict("unjudged", f"the launch cannot be run alone: {inputs}")
    spec, symbols = _as_bytes(spec, inputs, launch)
    read = tuple((s.name, s.dtype, s.elements) for s in spec.symbols)
    runs = {}
    for schedule in ("forward", "reverse"):
        try:
            res = run_original(Path(cu_path), spec, inputs.copy().args, dict(symbols), schedule=schedule,
                               include_dirs=include_dirs, defines=defines, timeout=timeout, read_symbols=read)
        except Exception as exc:  # a kernel the standalone build or launcher cannot take
            return OrderVerdict("unjudged", f"the original kernel alone did not run: {type(exc).__name__}: {exc}")
        if not res.ok:
            return OrderVerdict("unjudged", f"the original kernel alone did not run in {schedule} order "
                                            f"({res.status}): {res.message[:300]}")
        runs[schedule] = res.outputs
    written = _written(spec, launch)
    after = {**{a.name: launch.after.get(arg.alloc) for a, arg in zip(spec.args, launch.args) if a.is_buffer},
             **{"symbol:" + n: b for n, b in launch.globals_after.items()}}
    reproduced = all(name in runs["forward"] and after.get(name) is not None and
                     np.array_equal(np.asarray(runs["forward"][name]).reshape(-1)[:n],
                                    _values(after[name], dtype, _offset(spec, launch, name))[:n])
                     for name, dtype, n in written)
    for name, dtype, n in written:
        fwd, rev = runs["forward"].get(name), runs["reverse"].get(name)
        if fwd is None or rev is None:
            continue
        res = compare_arrays(np.asarray(fwd).reshape(-1)[:n], rev, dtype, TOLERANCE_OF_DTYPE.get(dtype, "exact"),
                             name=name.removeprefix("symbol:"), check_poison=False)
        if not res.passed:
            return OrderVerdict("differs", res.message, reproduced)
    return OrderVerdict("same", "", reproduced)


def _offset(spec, launch, name: str) -> int:
    """The byte offset of buffer argument ``name`` in its allocation (0 for a global)."""
    for a, arg in zip(spec.args, launch.args):
        if a.name == name:
            return arg.offset
    return 0
