"""``atomicSub`` on a template's type, the way atomics demos write it (``atomicSub(&g[1],
(T)10)`` in ``template <class T> __global__``): the instance for ``unsigned int`` subtracts modulo
2**32 (``cuda_math.c_neg``), where a printed ``-x`` made TVM refuse the negative unsigned
constant and the kernel did not run."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel

SOURCE = """
#include <cuda_runtime.h>
template <class T>
__global__ void counters(T *g, const T *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicSub(&g[0], (T)10);
        atomicSub(&g[1], x[i]);
        atomicAdd(&g[2], (T)3);
    }
}
int main()
{
    unsigned *g, *x;
    cudaMalloc(&g, 12); cudaMalloc(&x, 400);
    counters<unsigned int><<<2, 64>>>(g, x, 100);
}
"""

SPEC = spec_kernel("counters", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("g", "uint32", 3, "inout", 0, 50),
                   spec_buffer("x", "uint32", 100, "in", 1, 9),
                   '[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = 100\n', template="unsigned int")


def test_unsigned_template_atomic_sub_wraps(tmp_path):
    out, kernels = converted(tmp_path, SOURCE, SPEC)
    assert [(k["kernel"], k["check"]["status"]) for k in kernels] == [("counters", "pass")]
    assert "cuda_math.c_neg(" in (out / "k.py").read_text()
