"""A kernel named in capitals (the pool's slu has ``__global__ void RL(...)``): its Signature
constant was the kernel's name in capitals, the name its launcher function then rebound, so
``KERNELS["RL"]`` was the launcher and every launch called itself. The constant is
``RL_SIGNATURE``; the kernel checks equal and its launcher runs it."""
from __future__ import annotations

import importlib.util

import numpy as np

from tests.analysis.support import converted, spec_buffer, spec_kernel

KERNEL = """
__global__ void RL(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
"""

SPEC = spec_kernel("RL", (2, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("x", "float32", 128, "in", -1.0, 1.0),
                   spec_buffer("y", "float32", 128, "out"),
                   '[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = 128\n')


def test_a_kernel_named_in_capitals_keeps_its_signature_and_launcher_apart(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k
    spec = importlib.util.spec_from_file_location("k_capitals", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.KERNELS["RL"] is mod.RL_SIGNATURE and mod.RL_SIGNATURE.name == "RL" and callable(mod.RL)
    import torch
    x = torch.linspace(-1.0, 1.0, 128, dtype=torch.float32)
    y = torch.full((128,), float("nan"), dtype=torch.float32)
    mod.RL(x, y, 128, grid=2, block=64, target="c")
    np.testing.assert_allclose(y.numpy(), 2.0 * x.numpy() + 1.0, rtol=1e-6)
