"""Run a migrated TileLang module (written by ``migrate convert``) on spec inputs.

    >>> outputs = run_migrated("out/elementwise/saxpy.py", kernel_spec, inputs, target="c")

``inputs`` are :class:`~migrate.runtime.inputs.Inputs` (flat numpy arrays by argument name);
the result maps every ``out``/``inout`` buffer name to a flat numpy array in the spec's holder
dtype (bfloat16 as float32), ready for :mod:`migrate.runtime.compare`. Inputs are copied, so the
caller's arrays are never modified. This module imports neither libclang nor the frontend.
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

import numpy as np

from . import redzone
from .inputs import Inputs
from .redzone import RED_ZONE
from .spec import KernelSpec


class MigratedKernelMissing(LookupError):
    pass


def load_module(path: str | Path):
    """Import an emitted module from its file (it must stay on disk: TileLang re-reads the source)."""
    path = Path(path).resolve()
    name = "cuda2tile_migrated_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _torch_dtype(dtype: str):
    import torch
    return {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
            "float64": torch.float64, "int8": torch.int8, "uint8": torch.uint8,
            "int16": torch.int16, "uint16": torch.uint16, "int32": torch.int32,
            "uint32": torch.uint32, "int64": torch.int64, "uint64": torch.uint64, "bool": torch.bool}[dtype]


def to_tensor(array: np.ndarray, dtype: str, device: str | None):
    import torch
    if dtype == "bfloat16":
        tensor = torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).to(torch.bfloat16)
    else:
        tensor = torch.from_numpy(np.array(array, copy=True))
        tensor = tensor.to(_torch_dtype(dtype))
    return tensor.to(device) if device else tensor


def to_numpy(tensor, dtype: str) -> np.ndarray:
    import torch
    tensor = tensor.detach().cpu()
    if dtype == "bfloat16":
        return tensor.to(torch.float32).numpy()
    return tensor.numpy().copy()


class RedZoneWrite(Exception):
    """The migrated kernel wrote into a red zone: ``buffer``, ``side`` (before/after), ``element``."""

    def __init__(self, buffer: str, write):
        self.buffer, (self.side, self.element, self.count) = buffer, write
        super().__init__(redzone.message(buffer, write))


def run_migrated(module_path: str | Path, kernel: KernelSpec, inputs: Inputs, target: str = "c",
                 options: dict | None = None) -> dict:
    """The migrated kernel run on ``inputs``: its output buffers by name. Every buffer lies between
    poisoned red zones; a write into one raises :class:`RedZoneWrite`. ``options`` are factory
    keywords (``tile``, ``threads``) in place of the module's defaults."""
    module = load_module(module_path)
    table = getattr(module, "KERNELS", {})
    if kernel.name not in table:
        raise MigratedKernelMissing(f"{Path(module_path).name} has no migrated kernel '{kernel.name}'")
    sig = table[kernel.name]
    from .tilelang_support import launch

    device = "cuda" if target != "c" else None
    args, wholes = [], {}
    for a in kernel.args:
        value = inputs.args[a.name]
        if a.is_buffer:  # the buffer between red zones (redzone.py): a write outside it is seen
            wholes[a.name] = to_tensor(redzone.padded(value, a.dtype), a.dtype, device)
            args.append(wholes[a.name][RED_ZONE:RED_ZONE + len(value)])
        else:
            args.append(value)
    symbols = {s.name: to_tensor(inputs.symbols[s.name], s.dtype, device) for s in kernel.symbols}
    launch(sig, args, grid=kernel.grid, block=kernel.block, shared_bytes=kernel.shared_bytes,
           template=kernel.template or None, symbols=symbols, target=target, options=options)
    state = dict(getattr(sig, "state", ()))
    outputs = {f"symbol:{s.name}": to_numpy(symbols[s.name], s.dtype).copy() for s in kernel.symbols
               if s.name in state}  # the __device__ globals it leaves
    for a in kernel.args:
        if not a.is_buffer:
            continue
        whole, n = to_numpy(wholes[a.name], a.dtype), len(inputs.args[a.name])
        write = redzone.red_zone_write(whole, n, a.dtype)
        if write:
            raise RedZoneWrite(a.name, write)
        if a.is_output:
            outputs[a.name] = whole[RED_ZONE:RED_ZONE + n].copy()
    return outputs


def preload() -> None:
    """Import TileLang, torch and the launcher support (:mod:`.tilelang_support`) that running a
    migrated kernel needs: a worker does it before its first run, so that the run's time limit is
    the kernel's own, and a fork server (:mod:`.forkserver`) once for all the workers it forks."""
    try:
        import tilelang  # noqa: F401
        import torch  # noqa: F401

        from . import tilelang_support  # noqa: F401
    except ImportError:
        pass  # the run reports it
