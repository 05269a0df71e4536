"""A local array of two dimensions passed to a device function that takes it as ``float G[][N]``
(which C adjusts to a pointer to rows, and which the tool indexes flat), as the pool's xlqc builds
its Rys quadrature table ``float G[MAXROOTS][MAXROOTS]`` in ``cuda_Int1d(..., G)``: the call passed
the two-dimensional buffer to flat indexing, which TileLang refused ("Buffer G is 2-dimensional,
cannot be indexed with the 1-dimensional indices provided"). The argument is the array's flat view
(``T.reshape``); the kernel checks equal on the CPU and lowers for sm_90a."""
from __future__ import annotations

import importlib.util

from tests.analysis.support import converted, spec_buffer, spec_kernel
from tests.lowering import lower_sm90

KERNEL = """
#define N 4
__device__ float table(float x, float G[][N]) {
  G[0][0] = x;
  for (int a = 1; a < N; a++) G[a][0] = G[a - 1][0] * x + 1.0f;
  for (int a = 0; a < N; a++)
    for (int b = 1; b < N; b++) G[a][b] = G[a][b - 1] - 0.5f * b;
  return G[N - 1][N - 1];
}
__global__ void quadrature(const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float G[N][N];
  float last = table(x[i], G);
  y[i] = last + G[1][2] * G[2][1];
}
"""

SPEC = spec_kernel("quadrature", (2, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("x", "float32", 128, "in", -1.0, 1.0),
                   spec_buffer("y", "float32", 128, "out"))


def test_a_local_table_passed_to_flat_indexing_checks_equal_and_lowers_for_cuda(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "T.reshape(G, (4 * 4,))" in text, text
    spec = importlib.util.spec_from_file_location("k_flat_args", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    lower_sm90(mod.KERNELS["quadrature"], (2, 1, 1), (64, 1, 1))
