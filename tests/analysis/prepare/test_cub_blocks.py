"""CUB block reductions (analysis.prepare.cub_blocks): ``cub::BlockReduce`` as the pool's programs
use it (a typedef or using-alias in the kernel or in a device-function wrapper, a template
kernel, Sum and Reduce with CUB's operators, a count of valid inputs, a 2-D block, a thread's
array of inputs) becomes a shared-memory tree, checked equal on the CPU; what it cannot lower is
named."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNELS = """
#include <cub/cub.cuh>
#include <cuda/functional>
#define THREADS 128

__global__ void block_sums(const float* __restrict__ x, float* __restrict__ out, int n) {
    typedef cub::BlockReduce<float, THREADS> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp_storage;
    int i = blockIdx.x * THREADS + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    float total = BlockReduce(temp_storage).Sum(v);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

__global__ void block_max(const int* __restrict__ x, int* __restrict__ out, int n) {
    using BR = cub::BlockReduce<int, THREADS>;
    __shared__ typename BR::TempStorage ts;
    int i = blockIdx.x * THREADS + threadIdx.x;
    int v = i < n ? x[i] : -1000000;
    int best = BR(ts).Reduce(v, cuda::maximum<>());   // CCCL 3's operators (cub::Max before)
    int least = BR(ts).Reduce(v, cuda::minimum<int>());
    if (threadIdx.x == 0) { out[2 * blockIdx.x] = best; out[2 * blockIdx.x + 1] = least; }
}

__global__ void partial_sums(const float* __restrict__ x, float* __restrict__ out, int n) {
    typedef cub::BlockReduce<float, 96> BlockReduce;   // not a power of two, and a count of inputs
    __shared__ typename BlockReduce::TempStorage temp_storage;
    int i = blockIdx.x * 96 + threadIdx.x;
    float v = i < n ? x[i] : 1000.0f;
    int valid = n - (int)blockIdx.x * 96;
    float total = BlockReduce(temp_storage).Sum(v, valid < 96 ? valid : 96);
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

template <typename T>
__device__ void BlockSum(T& value) {
    typedef cub::BlockReduce<T, THREADS> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp_storage;
    value = BlockReduce(temp_storage).Sum(value);
}

template <typename T>
__global__ void count_above(const T* __restrict__ x, const T* __restrict__ limits, int* __restrict__ out, int cols) {
    int row = blockIdx.x;
    int above = 0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        if (x[row * cols + c] > limits[row]) ++above;
    BlockSum(above);
    if (threadIdx.x == 0) out[row] = above;
}

__global__ void tile_sums(const float* __restrict__ x, float* __restrict__ out, int width) {
    typedef cub::BlockReduce<float, 8, cub::BLOCK_REDUCE_WARP_REDUCTIONS, 8> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp_storage;
    int c = blockIdx.x * 8 + threadIdx.x, r = blockIdx.y * 8 + threadIdx.y;
    float items[2] = {x[r * width + c], 2.0f * x[r * width + c]};
    float total = BlockReduce(temp_storage).Sum(items);
    if (threadIdx.x == 0 && threadIdx.y == 0) out[blockIdx.y * gridDim.x + blockIdx.x] = total;
}

struct Larger {
    __device__ float operator()(float a, float b) const { return a > b ? a : b; }
};
__global__ void own_operator(const float* __restrict__ x, float* __restrict__ out) {
    typedef cub::BlockReduce<float, THREADS> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp_storage;
    float best = BlockReduce(temp_storage).Reduce(x[blockIdx.x * THREADS + threadIdx.x], Larger());
    if (threadIdx.x == 0) out[blockIdx.x] = best;
}

int main() {
    float *x, *out, *lim; int *xi, *oi;
    block_sums<<<8, THREADS>>>(x, out, 1000);
    block_max<<<8, THREADS>>>(xi, oi, 1000);
    partial_sums<<<11, 96>>>(x, out, 1000);
    count_above<float><<<6, THREADS>>>(x, lim, oi, 300);
    tile_sums<<<dim3(4, 3), dim3(8, 8)>>>(x, out, 32);
    own_operator<<<4, THREADS>>>(x, out);
}
"""


SPEC = (
    spec_kernel("block_sums", (8, 1, 1), (128, 1, 1), "fp32_accum",
                spec_buffer("x", "float32", 1000, "in", -2.0, 2.0), spec_buffer("out", "float32", 8, "out"),
                spec_scalar("n", "int32", 1000))
    + spec_kernel("block_max", (8, 1, 1), (128, 1, 1), "exact",
              spec_buffer("x", "int32", 1000, "in", -5000, 5000), spec_buffer("out", "int32", 16, "out"),
              spec_scalar("n", "int32", 1000))
    + spec_kernel("partial_sums", (11, 1, 1), (96, 1, 1), "fp32_accum",
              spec_buffer("x", "float32", 1000, "in", -2.0, 2.0), spec_buffer("out", "float32", 11, "out"),
              spec_scalar("n", "int32", 1000))
    + spec_kernel("count_above", (6, 1, 1), (128, 1, 1), "exact",
              spec_buffer("x", "float32", 1800, "in", -1.0, 1.0), spec_buffer("limits", "float32", 6, "in", -0.5, 0.5),
              spec_buffer("out", "int32", 6, "out"), spec_scalar("cols", "int32", 300), template="float")
    + spec_kernel("tile_sums", (4, 3, 1), (8, 8, 1), "fp32_accum",
              spec_buffer("x", "float32", 768, "in", -2.0, 2.0), spec_buffer("out", "float32", 12, "out"),
              spec_scalar("width", "int32", 32))
)


def test_cub_block_reductions_become_trees_that_check_equal(tmp_path):
    _out, rows = converted(tmp_path, KERNELS, SPEC, expect_ok=False)
    kernels = {k["kernel"]: k for k in rows}
    for name in ("block_sums", "block_max", "partial_sums", "count_above", "tile_sums"):
        assert kernels[name]["form"] not in ("hybrid", "unsupported"), kernels[name]
        assert kernels[name]["check"]["status"] == "pass", kernels[name]["check"]
    # a one-dimensional block of a power of two is the tree the block-reduction lift knows
    assert kernels["block_sums"]["form"] == "tile"
    # an operator of the user's own is named, not guessed
    own = kernels["own_operator"]
    assert own["form"] in ("hybrid", "unsupported")
    assert any(d["code"] == "M3001" and "cub::BlockReduce::Reduce with the operator 'Larger'" in d["message"]
               for d in own["diagnostics"]), own["diagnostics"]
