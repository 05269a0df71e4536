"""Template arguments written as macros, the way tiled kernels pass their tile sizes
(``fill<TILE_X, BLOCK_X>(sh[d], A + d * m, tx, i)`` with ``#define BLOCK_X (8 * 4)``), inside a
templated device function whose shared array has a dependent outer extent (``__shared__ T
sh[dim][BLOCK_X * TILE_X]``): the macros' values reach the instance (parse.build's
``_macro_text``, analysis.prepare.instances), and the array keeps ``dim`` rows."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel

SOURCE = """
#include <cuda_runtime.h>
#ifndef TILE_X
#define TILE_X 4
#endif
#define BLOCK_X (4 * 8)
#define ROW (BLOCK_X * TILE_X)
template <int tile, int stride, typename T>
__device__ __forceinline__ void fill(T (&sh)[tile * stride], const T *d, int o, int g)
{
  #pragma unroll
  for (int ti = 0; ti < tile; ti++) sh[o + ti * stride] = d[g + ti * stride];
}
template <typename T, int dim>
__device__ void tiled(const T *A, T *out, int m)
{
  int tx = threadIdx.x;
  int i = tx + blockIdx.x * ROW;
  __shared__ T sh[dim][BLOCK_X * TILE_X];
  for (int d = 0; d < dim; d++) fill<TILE_X, BLOCK_X>(sh[d], A + d * m, tx, i);
  __syncthreads();
  T acc = 0;
  for (int ti = 0; ti < TILE_X; ti++)
    for (int d = 0; d < dim; d++) acc += sh[d][(tx + ti * BLOCK_X + 1) % ROW] * (d + 1);
  out[blockIdx.x * BLOCK_X + tx] = acc;
}
template <typename T>
__global__ void rows3(const T *A, T *out, int m) { tiled<T, 3>(A, out, m); }
int main()
{
  float *a, *o;
  cudaMalloc(&a, 3 * 256 * 4); cudaMalloc(&o, 64 * 4);
  rows3<float><<<2, 32>>>(a, o, 256);
}
"""

SPEC = spec_kernel("rows3", (2, 1, 1), (32, 1, 1), "fp32_accum",
                   spec_buffer("A", "float32", 3 * 256, "in", -1, 1),
                   spec_buffer("out", "float32", 64, "out"),
                   '[[kernel.args]]\nname = "m"\nscalar = "int32"\nvalue = 256\n', template="float")


def test_macro_template_arguments_reach_the_instance(tmp_path):
    out, kernels = converted(tmp_path, SOURCE, SPEC)
    assert [(k["kernel"], k["check"]["status"]) for k in kernels] == [("rows3", "pass")]
    text = (out / "k.py").read_text()
    assert "T.alloc_shared((3, 128," in text  # dim rows of BLOCK_X * TILE_X, not 128 of them
    assert "TILE_X" not in text and "BLOCK_X" not in text  # the macros' values, not their names
