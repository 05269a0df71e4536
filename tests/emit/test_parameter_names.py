"""Kernel parameters keep their names in the TileLang function. TileLang 0.1.15's front end names a
bare variable after whatever it is bound to: a macro's parameter (``blend(i, mu, NI)`` with
``blend(int k, float mu, int n)``) or a local assigned once (``int m = NI;``). Two kernel parameters
passed to one device function both became ``n``: the C target's wrapper then declared ``n`` twice
and did not compile, and on GPUs the launcher could not find ``NI`` to compile it as a constant
(a real Bezier-surface kernel, whose two sizes go to one blending function). The emitter passes such
a parameter as a cast to its own type, a new value the binding may name."""
from __future__ import annotations

import pytest

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
__device__ float blend(int k, float mu, int n) {
    float b = 1.0f;
    for (int j = 0; j < n; j++) b *= mu;
    return b + k;
}
__global__ void surface(float* out, const int NI, const int NJ, int len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int m = NI;
    if (i < len) out[i] = blend(i % 5, 0.5f, NI) + blend(i % 3, 0.25f, NJ) + m;
}
"""

SPEC = spec_kernel("surface", (2, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("out", "float32", 100, "out"),
                   spec_scalar("NI", "int32", 3), spec_scalar("NJ", "int32", 4), spec_scalar("len", "int32", 100))


def test_parameters_passed_to_a_device_function_keep_their_names(tmp_path):
    pytest.importorskip("tilelang")
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k["check"]
    import importlib.util
    spec = importlib.util.spec_from_file_location("k_names", out / "k.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from migrate.runtime.tilelang_support import prim_func
    for target in ("c", "cuda"):  # the C wrapper and the GPU's constant sizes both look them up by name
        func, _ = prim_func(module.KERNELS["surface"], (2, 1, 1), (64, 1, 1), 0, target=target)
        assert [p.name for p in func.params][1:] == ["NI", "NJ", "len_"], target
