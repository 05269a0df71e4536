"""Device functions that write through a pointer to the caller's local, the way random-number
and statistics helpers do (``lcg(&seed)``, ``stats(row, n, &mx, &avg)``): inlined, ``*p`` and
``p[0]`` become the local itself."""
from __future__ import annotations

from migrate.ir import model as m
from migrate.pipeline import prepare
from tests.analysis.support import converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit

KERNEL = """
#include <cuda_runtime.h>
__device__ unsigned int lcg(unsigned int *seed)
{
    const unsigned int a = 16807, m = 2147483647, c = 0;
    *seed = (a * (*seed) + c) % m;
    return *seed;
}
__device__ void stats(const float* x, int n, float* out_max, double* out_avg)
{
    float mx = x[0];
    double s = 0;
    for (int i = 0; i < n; i++) { mx = fmaxf(mx, x[i]); s += x[i]; }
    *out_max = mx;
    out_avg[0] = s / (double)n;
}
__global__ void noise(const float* x, float* y, double* avg, int n, unsigned int seed0)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int seed = seed0 + i;
    float acc = 0.0f;
    for (int k = 0; k < 4; k++) acc += (lcg(&seed) % 1000) * 1e-3f;
    float mx;
    double a;
    stats(x + i * 8, 8, &mx, &a);
    y[i] = x[i] + acc + mx;
    avg[i] = a;
}
"""

SPEC = """
[[kernel]]
name = "noise"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "fp32_accum"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 1024
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 128
role = "out"
[[kernel.args]]
name = "avg"
buffer = "float64"
elements = 128
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 128
[[kernel.args]]
name = "seed0"
scalar = "uint32"
value = 12345
"""


def test_the_address_of_a_local_becomes_the_local_when_inlined(tmp_path):
    u = unit(tmp_path, KERNEL)
    fn, _ = prepare(u.kernel("noise"), {f.name: f for f in u.device_functions})
    derefs = [n for n in nodes(fn, m.Unary) if n.op in ("*", "&")]
    assert not derefs, derefs
    assigned = {a.target.name for a in nodes(fn, m.Assign) if isinstance(a.target, m.Ref)}
    assert {"seed", "mx", "a"} <= assigned


def test_out_parameters_convert_and_check_equal(tmp_path):
    out, kernels = converted(tmp_path, KERNEL, SPEC)
    (k,) = kernels
    assert k["form"] == "tile", k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]


SHARED = """
#include <cuda_runtime.h>
#define N 8
__device__ void invert(float* data, int n, float* log_determinant)   // gmm's: one thread works
{
    if (threadIdx.x == 0) {
        *log_determinant = 0.0f;
        for (int i = 0; i < n; i++) {
            *log_determinant += logf(fabsf(data[i * n + i]) + 1.0f);
            data[i * n + i] = 1.0f / (data[i * n + i] + 3.0f);
        }
    }
}
__global__ void constants(const float* R, float* out, float* dets, int n)
{
    __shared__ float determinant_arg;        // the block's one value, written through the pointer
    __shared__ float matrix[N * N];
    int tid = threadIdx.x;
    for (int i = tid; i < n * n; i += blockDim.x) matrix[i] = R[blockIdx.x * n * n + i];
    __syncthreads();
    invert(matrix, n, &determinant_arg);
    __syncthreads();
    float log_determinant = determinant_arg;
    for (int i = tid; i < n * n; i += blockDim.x) out[blockIdx.x * n * n + i] = matrix[i] * log_determinant;
    if (tid == 0) dets[blockIdx.x] = log_determinant;
}
"""

SHARED_SPEC = spec_kernel("constants", (3, 1, 1), (32, 1, 1), "fp32_accum",
                          spec_buffer("R", "float32", 3 * 64, "in", 0.5, 4.0),
                          spec_buffer("out", "float32", 3 * 64, "out"),
                          spec_buffer("dets", "float32", 3, "out"),
                          spec_scalar("n", "int32", 8))


def test_the_address_of_a_shared_scalar_is_the_shared_value_and_checks_equal(tmp_path):
    _out, kernels = converted(tmp_path, SHARED, SHARED_SPEC)
    (k,) = kernels
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
