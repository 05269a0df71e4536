"""Warp-shuffle trees (analysis.lift.warp) lifted to block reductions.

Two levels through shared memory, one atomic per warp combined into one per block, the block's
total broadcast through a shared scalar, online-softmax merges, the table of combines; and the
trees it must refuse.
"""
from __future__ import annotations

import re

import pytest

from migrate.parse.frontend import parse_file
from tests.analysis.lift.support import ROW_DOT_SPEC, ROW_NORMALIZE, WARP_MAX, convert, factory, note


WARP_SUM = """
    #define FULL 0xffffffffu
    __device__ float warp_sum(float v) {
        for (int off = warpSize / 2; off > 0; off >>= 1) v += __shfl_down_sync(FULL, v, off);
        return v;
    }
    __global__ void wsum(const float* __restrict__ x, float* __restrict__ out, int n) {
        __shared__ float parts[32];
        float v = 0.0f;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
        const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
        v = warp_sum(v);
        if (lane == 0) parts[warp] = v;
        __syncthreads();
        if (warp == 0) {
            v = lane < (blockDim.x + warpSize - 1) / warpSize ? parts[lane] : 0.0f;
            v = warp_sum(v);
            if (lane == 0) atomicAdd(out, v);
        }
    }
"""

WARP_SUM_SPEC = """
    [[kernel]]
    name = "wsum"
    grid = [7, 1, 1]
    block = [96, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 5000
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 1
    role = "inout"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 5000
"""


def test_two_level_warp_tree_becomes_t_reduce_and_one_atomic_and_agrees_on_cpu(tmp_path):
    """shfl_down trees per warp, the warp totals through shared memory, warp 0's tree, lane 0's
    atomicAdd: one T.reduce_sum over the block's lanes and one guarded T.atomic_add per block
    (96 threads: three warps, the second level padded with zeros)."""
    kernels, text = convert(tmp_path, WARP_SUM, "--check", "cpu", spec=WARP_SUM_SPEC)
    k = kernels["wsum"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    assert "warp-shuffle" in k["reason"]
    body = factory(text, "wsum")
    assert "T.reduce_sum(parts_lanes, parts_total, dim=0)" in body
    assert 'assert block_x % 32 == 0' in body and "power-of-two" not in body
    once = body[body.index("T.reduce_sum"):]
    assert "for _ in T.Parallel(1):" in once and "T.atomic_add(out[0], parts_total[0])" in once
    assert body.count("T.atomic_add") == 1
    assert not re.search(r"shfl|sync_threads|alloc_shared|\btx\b", body)


def test_block_total_broadcast_through_a_shared_scalar_agrees_on_cpu(tmp_path):
    """The second level's lane 0 writes the total to a __shared__ scalar that every thread reads
    after a barrier: the scalar becomes the reduction's result, read at block level."""
    spec = """
        [[kernel]]
        name = "normalize"
        grid = [6, 1, 1]
        block = [96, 1, 1]
        tolerance = "fp32_accum"
        [[kernel.args]]
        name = "x"
        buffer = "float32"
        elements = 1200
        role = "in"
        range = [-1.0, 1.0]
        [[kernel.args]]
        name = "y"
        buffer = "float32"
        elements = 1200
        role = "out"
        [[kernel.args]]
        name = "cols"
        scalar = "int32"
        value = 200
    """
    kernels, text = convert(tmp_path, ROW_NORMALIZE, "--check", "cpu", spec=spec)
    k = kernels["normalize"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "normalize")
    assert "T.reduce_sum(" in body and "block_sum_1_total" not in body.split("T.reduce_sum(")[1].split("\n")[0]
    assert not re.search(r"alloc_shared|sync_threads|shfl", body)


WARP_MAX_SPEC = """
    [[kernel]]
    name = "wmax"
    grid = [5, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "x"
    buffer = "int32"
    elements = 3001
    role = "in"
    range = [-100000, 100000]
    [[kernel.args]]
    name = "out"
    buffer = "int32"
    elements = 1
    role = "inout"
    range = [0, 10]
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 3001
"""


def test_atomic_per_warp_becomes_one_atomic_per_block_and_agrees_on_cpu(tmp_path):
    """Each warp's lane 0 atomicMax'es its warp's maximum: the block's warps together are one
    T.reduce_max and one T.atomic_max of the block's maximum."""
    kernels, text = convert(tmp_path, WARP_MAX, "--check", "cpu", spec=WARP_MAX_SPEC)
    k = kernels["wmax"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "wmax")
    assert "T.reduce_max(v_lanes, v_total, dim=0)" in body
    assert body.count("T.atomic_max(out[0], v_total[0])") == 1
    assert not re.search(r"shfl|\btx\b", body)


def test_atomic_of_another_operation_stays_one_per_warp_and_agrees_on_cpu(tmp_path):
    """atomicAdd of each warp's maximum does not combine with the max tree: each warp's lane 0
    keeps its own atomic (a reduction per warp), not one per block."""
    kernels, text = convert(tmp_path, WARP_MAX.replace("atomicMax(out, v)", "atomicAdd(out, v)"), "--check", "cpu",
                            spec=WARP_MAX_SPEC)
    k = kernels["wmax"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "wmax")
    assert "T.reduce_max(v_lanes, v_total, dim=1)" in body and "T.atomic_add(out[0], v_total[lane_w])" in body


@pytest.mark.parametrize("old, new, reason", [
    ("0xffffffff, v, off", "0x0000ffff, v, off", "does not take the full mask"),           # half a warp
    ("v = (other > v) ? other : v;", "v = v - other;", "is not a sum, max or min"),       # not associative
    ("v = (other > v) ? other : v;", "v = 0.5f * (v + other);", "is not a sum, max or min"),
    ("if ((threadIdx.x & 31) == 0) atomicMax", "atomicMax", "runs in every lane"),      # every thread's atomic
    ("int off = 16", "int off = 8", "do not halve from warpSize / 2"),                  # half the tree
    ("__shfl_xor_sync(0xffffffff, v, off)", "__shfl_up_sync(0xffffffff, v, off)", "not a shfl_down or shfl_xor"),
])
def test_warp_trees_it_must_refuse(tmp_path, old, new, reason):
    assert old in WARP_MAX
    kernels, text = convert(tmp_path, WARP_MAX.replace(old, new))
    k = kernels["wmax"]
    assert k["form"] == "portable" and reason in note(k), note(k)


@pytest.mark.parametrize("old, new, reason", [
    (": 0.0f;", ": 1.0f;", "not the identity of sum"),                                   # padding counts
    ("v = lane < (blockDim.x + warpSize - 1) / warpSize", "v = lane < 4", "one total per warp"),
    ("if (lane == 0) atomicAdd(out, v);", "if (lane == 1) atomicAdd(out, v);", "not read by thread 0"),
    ("if (lane == 0) parts[warp] = v;", "if (lane == 0) parts[warp] = 2.0f * v;", "other than the warp's total"),
])
def test_two_level_warp_reductions_it_must_refuse(tmp_path, old, new, reason):
    assert old in WARP_SUM
    kernels, _ = convert(tmp_path, WARP_SUM.replace(old, new))
    k = kernels["wsum"]
    assert k["form"] == "portable" and reason in note(k), note(k)


ONLINE_SOFTMAX = """
    __global__ void osm(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
        const int lane = threadIdx.x % 32;
        const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
        if (row >= rows) return;
        float m = -1e30f, d = 0.0f;
        for (int c = lane; c < cols; c += 32) {
            const float v = x[row * cols + c];
            const float mn = fmaxf(m, v);
            d = d * expf(m - mn) + expf(v - mn);
            m = mn;
        }
        for (int off = 16; off > 0; off >>= 1) {
            const float mo = __shfl_xor_sync(0xffffffff, m, off);
            const float dd = __shfl_xor_sync(0xffffffff, d, off);
            const float mn = fmaxf(m, mo);
            d = d * expf(m - mn) + dd * expf(mo - mn);
            m = mn;
        }
        for (int c = lane; c < cols; c += 32) y[row * cols + c] = expf(x[row * cols + c] - m) / d;
    }
"""


def test_online_softmax_merge_becomes_max_then_rescaled_sum_and_agrees_on_cpu(tmp_path):
    """A butterfly merging (max, denominator) pairs: T.reduce_max of the lanes' maxima, each
    lane's denominator rescaled to the warp's maximum, T.reduce_sum."""
    spec = ROW_DOT_SPEC.replace('"row_dot"', '"osm"').replace('name = "a"', 'name = "q"').replace(
        'name = "x"\n    buffer = "float32"\n    elements = 75\n    role = "in"\n    range = [-1.0, 1.0]\n    '
        '[[kernel.args]]\n    ', "").replace('name = "q"', 'name = "x"').replace(
        'name = "y"\n    buffer = "float32"\n    elements = 14', 'name = "y"\n    buffer = "float32"\n    elements = 1050')
    kernels, text = convert(tmp_path, ONLINE_SOFTMAX, "--check", "cpu", spec=spec)
    k = kernels["osm"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "osm")
    reduce_max, reduce_sum = body.index("T.reduce_max(m_lanes, m_total, dim=1)"), body.index("T.reduce_sum(d_lanes")
    assert reduce_max < body.index("d_lanes[lane_w, lane_l] * T.exp(m_lanes[lane_w, lane_l] - m_total[lane_w])") \
        < reduce_sum


@pytest.mark.parametrize("old, new", [
    ("d = d * expf(m - mn) + dd * expf(mo - mn);", "d = d + dd;"),                  # not rescaled
    ("d = d * expf(m - mn) + dd * expf(mo - mn);", "d = d * expf(mo - mn) + dd * expf(m - mn);"),  # swapped
    ("const float mn = fmaxf(m, mo);\n            d", "const float mn = fminf(m, mo);\n            d"),
])
def test_two_value_merges_it_must_refuse(tmp_path, old, new):
    assert old in ONLINE_SOFTMAX
    kernels, _ = convert(tmp_path, ONLINE_SOFTMAX.replace(old, new))
    assert "is not an online-softmax merge" in note(kernels["osm"]), note(kernels["osm"])


def test_combine_forms_are_recognised_as_their_reduction(tmp_path):
    """The table of combines: each spelling of sum/max/min of a value and its partner, and what
    is not one."""
    from migrate.analysis.lift.warp_trees import combine_op
    cases = {"v += t;": "sum", "v = t + v;": "sum", "v = fmaxf(t, v);": "max", "v = min(v, t);": "min",
             "v = v < t ? v : t;": "min", "v = v < t ? t : v;": "max", "v = t >= v ? t : v;": "max",
             "v = v * t;": None, "v = v + 2.0f * t;": None, "v -= t;": None, "v = t;": None}
    src = "".join(f"__global__ void k{i}(float v, float t, float* o) {{ {c} o[0] = v; }}\n"
                  for i, c in enumerate(cases))
    (tmp_path / "c.cu").write_text(src)
    unit = parse_file(str(tmp_path / "c.cu")).unit
    got = {c: combine_op(k.body.stmts[0], "v", "t") for c, k in zip(cases, unit.kernels)}
    assert got == cases
