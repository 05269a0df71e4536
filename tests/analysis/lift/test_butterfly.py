"""Butterfly block sums (analysis.lift.reduce): ``t = S[tid] + S[tid ^ bit]; S[tid] = t`` for
halving ``bit`` leaves the total in every thread's cell; the lift reads ``T.reduce_sum``'s
total where the CUDA threads read their cells. Checked on the CPU against the CUDA compiled
with g++, and lowered for sm_90a."""
from __future__ import annotations

from tests.analysis.lift.support import convert, factory, load, note, refused_or_tiled

BUTTERFLY = """
    #define THREADS 128
    __device__ float butterflySum(float* data, const unsigned int ndata) {
        const unsigned int tid = threadIdx.x;
        float t;
        __syncthreads();
        for (unsigned int bit = ndata >> 1; bit > 0; bit >>= 1) {
            t = data[tid] + data[tid ^ bit];  __syncthreads();
            data[tid] = t;                    __syncthreads();
        }
        return data[tid];
    }

    __global__ void col_means(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ means,
                              int num_events) {
        int tid = threadIdx.x;
        int d = blockIdx.x;
        __shared__ float temp_sum[THREADS];
        float sum = 0.0f;
        for (int e = tid; e < num_events; e += blockDim.x) sum += x[d * num_events + e] * w[e];
        temp_sum[tid] = sum;
        __syncthreads();
        sum = butterflySum(temp_sum, THREADS);
        if (tid == 0) means[d] = sum / num_events;
    }
"""

SPEC = """
    [[kernel]]
    name = "col_means"
    grid = [6, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 3000
    role = "in"
    range = [-2.0, 2.0]
    [[kernel.args]]
    name = "w"
    buffer = "float32"
    elements = 500
    role = "in"
    range = [0.1, 1.0]
    [[kernel.args]]
    name = "means"
    buffer = "float32"
    elements = 6
    role = "out"
    [[kernel.args]]
    name = "num_events"
    scalar = "int32"
    value = 500
"""


def test_butterfly_sum_becomes_t_reduce_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, BUTTERFLY, "--check", "cpu", spec=SPEC)
    k = kernels["col_means"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "col_means")
    assert "T.reduce_sum(temp_sum_lanes, temp_sum_total, dim=0)" in body
    # the butterfly spans its constant width: the launch must give that many threads
    assert "assert block_x == 128, \"the CUDA tree over 'temp_sum' spans 128 threads\"" in body
    # each thread read its own cell, which held the total
    assert "butterflySum_ret_1[lane] = temp_sum_total[0]" in body
    assert "T.sync_threads" not in body and "alloc_shared" not in body and "^" not in body


def test_butterfly_lowers_for_sm90a(tmp_path):
    from tests.lowering import lower_sm90
    convert(tmp_path, BUTTERFLY)
    src = lower_sm90(load(tmp_path / "out" / "k.py").COL_MEANS, (6, 1, 1), (128, 1, 1))
    assert "tl::AllReduce<tl::SumOp, 128" in src


def test_butterfly_of_a_width_not_known_is_refused(tmp_path):
    source = BUTTERFLY.replace("sum = butterflySum(temp_sum, THREADS);", "sum = butterflySum(temp_sum, blockDim.x);")
    refused_or_tiled(tmp_path, source, "col_means", "uniformloop at line 8 is not part of a block reduction", SPEC)


def test_butterfly_with_other_arithmetic_is_refused(tmp_path):
    source = BUTTERFLY.replace("t = data[tid] + data[tid ^ bit];", "t = data[tid] - data[tid ^ bit];")
    refused_or_tiled(tmp_path, source, "col_means", "uniformloop at line 8 is not part of a block reduction", SPEC)


def test_butterfly_whose_cells_are_stored_to_afterwards_is_refused(tmp_path):
    """The cells hold the total only until the kernel stores to them again."""
    source = BUTTERFLY.replace("if (tid == 0) means[d] = sum / num_events;",
                               "temp_sum[tid] = sum * 2.0f;\n        if (tid == 0) means[d] = sum / num_events;")
    kernels, text = convert(tmp_path, source)
    assert kernels["col_means"]["form"] == "portable" and "T.reduce_sum" not in text
