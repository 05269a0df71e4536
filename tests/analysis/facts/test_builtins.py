"""analysis.facts.builtins: the thread and block dimensions a kernel and its device functions
index, and the dims its factory asserts on."""
from __future__ import annotations

import dataclasses

from migrate.analysis.facts.builtins import builtin_dims, used_dims
from tests.analysis.support import unit

SOURCE = """
    __device__ int plane() { return blockIdx.z * blockDim.z; }
    __global__ void transpose(const float* in, float* out, int w, int h) {
        int x = blockIdx.x * 32 + threadIdx.x;
        int y = blockIdx.y * 32 + threadIdx.y;
        int lane = threadIdx.x % warpSize;
        if (x < w && y < h && lane >= 0) out[x * h + y] = in[y * w + x];
    }
    __global__ void volume(float* out) { out[plane() + threadIdx.x] = 0.0f; }
    __global__ void rows(float* out, int n) {
        for (int i = threadIdx.x; i < n; i += blockDim.x) out[gridDim.y * i] = 0.0f;
    }
"""


def test_builtin_dims_of_a_kernel_and_its_device_functions(tmp_path):
    u = unit(tmp_path, SOURCE)
    plane = u.device_functions[0]
    transpose = u.kernel("transpose")
    # threadIdx/blockDim count as thread dims, blockIdx/gridDim as block dims; warpSize as none
    assert builtin_dims([transpose]) == ({"x", "y"}, {"x", "y"})
    assert builtin_dims([transpose, plane]) == ({"x", "y", "z"}, {"x", "y", "z"})
    assert builtin_dims([u.kernel("rows")]) == ({"x"}, {"y"})
    assert builtin_dims([dataclasses.replace(plane, body=None)]) == (set(), set())


def test_used_dims_are_a_prefix_of_xyz():
    assert used_dims(set()) == ["x"] and used_dims({"x"}) == ["x"]
    assert used_dims({"y"}) == ["x", "y"]  # a y dimension always has an x before it
    assert used_dims({"z"}) == ["x", "y", "z"] and used_dims({"x", "z"}) == ["x", "y", "z"]
