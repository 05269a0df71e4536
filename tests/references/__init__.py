"""Independent numpy references for the corpus kernels, written by hand from each kernel's intent.

Each module here defines ``REFERENCES``: a dict from ``"<path of the .cu under corpus/>:<id>"``
(``id`` is the spec's ``id``, or its ``name`` when it has none) to a function

    ref(args: dict[str, numpy.ndarray | int | float], symbols: dict[str, numpy.ndarray])
        -> dict[str, numpy.ndarray]

``args`` holds every kernel argument by name: buffers as flat numpy arrays of their scalar
elements (float16 as numpy float16, bfloat16 as float32 arrays holding exact bfloat16 values),
scalars as Python numbers; ``symbols`` the ``__constant__``/``__device__`` globals. The function
returns the expected flat contents of every ``out`` and ``inout`` buffer, computed without looking
at either the CUDA or the TileLang side.
"""
from __future__ import annotations

import importlib
import pkgutil

REFERENCES: dict = {}
for _info in pkgutil.iter_modules(__path__):
    _mod = importlib.import_module(f"{__name__}.{_info.name}")
    for _key, _fn in getattr(_mod, "REFERENCES", {}).items():
        if _key in REFERENCES:
            raise RuntimeError(f"duplicate corpus reference {_key!r} in {_info.name}")
        REFERENCES[_key] = _fn
