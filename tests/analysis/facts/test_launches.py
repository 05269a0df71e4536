"""analysis.facts.launches: the grid, block and dynamic shared memory every launch of a
kernel in the file gives as the same constant (the launcher's defaults)."""
from __future__ import annotations


from migrate.analysis.facts.launches import launch_defaults
from tests.analysis.support import unit

HOST = """
    __global__ void scale(float* x, float a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= a;
    }
    __global__ void stage(float* x, int n) {
        extern __shared__ float s[];
        s[threadIdx.x] = x[threadIdx.x];
        __syncthreads();
        x[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
    }
    __global__ void tile2d(float* x, int w) { x[(blockIdx.y * 16 + threadIdx.y) * w + blockIdx.x * 16 + threadIdx.x] = 0.0f; }
    __global__ void flat(float* x) { x[threadIdx.x] = 1.0f; }
    __global__ void flat1(float* x) { x[threadIdx.x] = 2.0f; }
    __global__ void mixed(float* x, int n) { x[threadIdx.x] = n; }
    __global__ void never(float* x) { x[0] = 0.0f; }

    void run(float* x, float* y, int n, int shared) {
        scale<<<64, 256>>>(x, 2.0f, n);
        scale<<<64, 256>>>(y, 3.0f, n);
        stage<<<(n + 255) / 256, 256, 256 * sizeof(float)>>>(x, n);
        stage<<<(n + 127) / 128, 128, 1024>>>(x, n);
        dim3 block(16, 16);
        dim3 grid(4, 4);
        tile2d<<<grid, block>>>(x, 64);
        tile2d<<<dim3(4, 4), dim3(16, 16, 1)>>>(y, 64);
        dim3 warp(32);
        flat<<<dim3(8, 1, 1), 32>>>(x);
        flat<<<8, warp>>>(y);
        flat1<<<dim3(8), dim3(32)>>>(x);
        mixed<<<1, 32>>>(x, n);
        mixed<<<1, 32, shared>>>(y, n);
    }
"""


def test_defaults_where_every_launch_agrees(tmp_path):
    u = unit(tmp_path, HOST)
    # no shared-memory argument means 0 bytes
    assert launch_defaults(u, "scale") == {"grid": "64", "block": "256", "shared_bytes": "0"}
    # a dim3 constant is its (x, y, z); the variable and the temporary agree
    assert launch_defaults(u, "tile2d") == {"grid": "(4, 4, 1)", "block": "(16, 16, 1)", "shared_bytes": "0"}
    # a dim3 of one dimension is its x: dim3(8, 1, 1) agrees with 8, dim3 warp(32) with 32
    assert launch_defaults(u, "flat") == {"grid": "8", "block": "32", "shared_bytes": "0"}


def test_one_argument_dim3_temporaries(tmp_path):
    u = unit(tmp_path, HOST)
    assert launch_defaults(u, "flat1") == {"grid": "8", "block": "32", "shared_bytes": "0"}


def test_no_default_where_launches_differ_or_are_not_constant(tmp_path):
    u = unit(tmp_path, HOST)
    # grids computed from n, blocks 256 and 128: only the shared bytes agree (256 * sizeof(float))
    assert launch_defaults(u, "stage") == {"shared_bytes": "1024"}
    # 0 bytes once, a run-time size once
    assert launch_defaults(u, "mixed") == {"grid": "1", "block": "32"}
    assert launch_defaults(u, "never") == {}
