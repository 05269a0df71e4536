"""The launcher's sizes compiled in (runtime.tilelang_support): which scalars a kernel compiled for
constant sizes takes, on which targets, and the call without them.
"""
from __future__ import annotations

from migrate.runtime.tilelang_support import Signature, static_sizes, without_static


def _sig(**kw):
    params = (("A", "buffer", "float32"), ("M", "scalar", "int32"), ("N", "scalar", "int32"),
              ("alpha", "scalar", "float32"))
    return Signature(name="g", factory=lambda *a, **k: None, params=params, **kw)


def test_static_sizes_pick_the_named_scalars_on_gpus_only():
    import torch

    sig = _sig(specialize=("M", "N"))
    args = [torch.ones(4), 300, torch.tensor(200), 1.5]
    assert static_sizes(sig, args, "cuda") == {"M": 300, "N": 200}
    assert static_sizes(sig, args, "c") == {}  # the CPU target compiles one kernel for all sizes
    assert static_sizes(_sig(), args, "cuda") == {}
    # rows TMA cannot copy: the kernel compiled for run-time sizes runs instead
    picky = _sig(specialize=("M", "N"), specialize_when=lambda s: s["M"] % 8 == 0)
    assert static_sizes(picky, args, "cuda") == {}
    assert static_sizes(picky, [torch.ones(4), 304, 200, 1.5], "cuda") == {"M": 304, "N": 200}
    call = ["A-tensor", 300, 200, 1.5, "symbol"]  # a __constant__ array follows the parameters
    assert without_static(sig, call, {"M": 300, "N": 200}) == ["A-tensor", 1.5, "symbol"]
    assert without_static(sig, call, {}) == call
