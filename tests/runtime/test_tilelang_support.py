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


def test_building_a_kernel_for_the_cpu_leaves_the_shims_default_target_alone(tmp_path):
    """prim_func parses the factory with the shim's forms for its target, then restores the
    module's default: a later hand-written kernel for the GPU gets the GPU forms."""
    from migrate.cli import main
    from migrate.compat import cuda_math
    from migrate.runtime.tilelang_support import prim_func
    import importlib.util
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n__global__ void k(const float* x, float* y, int n) {\n"
                   "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n")
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "-q"]) == 0
    spec = importlib.util.spec_from_file_location("k_mod", tmp_path / "out" / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    before = cuda_math.get_target()
    prim_func(mod.KERNELS["k"], (4, 1, 1), (256, 1, 1), target="c")
    assert cuda_math.get_target() == before == "cuda"
