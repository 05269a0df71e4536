"""System-scope atomics (``atomicAdd_system``, ``atomicMax_system``, ...), the way system-wide
atomics demos write them: the host updates the same managed words while the kernel runs, so the
migrated kernel must keep the system scope. TileLang's ``T.atomic_add``/``max``/``min`` are device
scope (the pool's atomicSystemWide lost host updates on the H100, 2026-12-07): each goes through
the compat table's helper, which calls the CUDA one on GPUs and does the same update on the CPU."""
from __future__ import annotations

import re

from tests.analysis.support import converted, spec_buffer, spec_kernel

SOURCE = """
#include <cuda_runtime.h>
__global__ void counters(int *a, const int *x, int n, int loops)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        for (int i = 0; i < loops; i++) {
            atomicAdd_system(&a[0], x[tid]);
            atomicMax_system(&a[1], x[tid] + i);
            atomicMin_system(&a[2], x[tid] - i);
            atomicAdd(&a[3], 1);
        }
    }
}
int main()
{
    int *a, *x;
    cudaMallocManaged(&a, 16); cudaMalloc(&x, 400);
    counters<<<2, 64>>>(a, x, 100, 3);
}
"""

SPEC = spec_kernel("counters", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("a", "int32", 4, "inout", 0, 50),
                   spec_buffer("x", "int32", 100, "in", 1, 9),
                   '[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = 100\n'
                   '[[kernel.args]]\nname = "loops"\nscalar = "int32"\nvalue = 3\n')


def test_system_scope_atomics_keep_their_scope_and_values(tmp_path):
    out, kernels = converted(tmp_path, SOURCE, SPEC)
    assert [(k["kernel"], k["check"]["status"]) for k in kernels] == [("counters", "pass")]
    text = (out / "k.py").read_text()
    for op in ("atomicAdd_system", "atomicMax_system", "atomicMin_system"):
        assert f"cuda_math.{op}(" in text, op
    # the device-scope ones only for the device-scope atomicAdd
    assert len(re.findall(r"T\.atomic_(add|max|min)\(", text)) == 1 and "T.atomic_add(a[3]" in text
