"""Reductions per warp (analysis.lift.warp_rows): one warp per row, ``T.reduce_*`` along the lanes.

The row's guard the same in a warp's lanes, the total read by lane 0 or by every lane after an
xor tree, a lane reading back its own stores; refused: partial sums read by other lanes, atomics
in every lane, guards that differ between lanes, lanes exchanging values through memory.
"""
from __future__ import annotations

import re

import pytest

from tests.analysis.lift.support import ROW_DOT_SPEC, convert, factory, note


ROW_DOT = """
    __global__ void row_dot(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y,
                            int rows, int cols) {
        const int lane = threadIdx.x % 32;
        const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
        if (row >= rows) return;
        float v = 0.0f;
        for (int c = lane; c < cols; c += 32) v += a[row * cols + c] * x[c];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
        if (lane == 0) y[row] = v;
    }
"""


def test_warp_per_row_becomes_t_reduce_along_the_lanes_and_agrees_on_cpu(tmp_path):
    """One warp per row (14 rows, 4 per block, the last block half idle): lanes as (warp, lane)
    pairs, T.reduce_sum along dim 1, the row's guard recomputed in both lane loops."""
    kernels, text = convert(tmp_path, ROW_DOT, "--check", "cpu", spec=ROW_DOT_SPEC)
    k = kernels["row_dot"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "row_dot")
    assert "T.reduce_sum(v_lanes, v_total, dim=1)" in body
    assert body.count("for lane_w, lane_l in lane_grid(block_x // 32, 32):") == 2
    assert body.count("if row < rows:") == 2 and "y[row] = v_total[lane_w]" in body
    assert not re.search(r"shfl|sync_threads|\btx\b", body)


def test_row_total_every_lane_reads_after_an_xor_tree_agrees_on_cpu(tmp_path):
    """An xor butterfly leaves the row's total in every lane: each lane scales its own elements."""
    source = ROW_DOT.replace("__shfl_down_sync", "__shfl_xor_sync").replace(
        "if (lane == 0) y[row] = v;", "for (int c = lane; c < cols; c += 32) y[row * cols + c] = a[row * cols + c] / v;")
    spec = ROW_DOT_SPEC.replace("elements = 14", "elements = 1050")
    kernels, text = convert(tmp_path, source, "--check", "cpu", spec=spec)
    k = kernels["row_dot"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    assert re.search(r"a\[row, c\w*\] / v_total\[lane_w\]", factory(text, "row_dot"))  # a shaped (rows, cols)


@pytest.mark.parametrize("old, new, reason", [
    ("if (lane == 0) y[row] = v;", "y[row * 32 + lane] = v;", "lanes other than 0 read the partial sums"),
    ("if (lane == 0) y[row] = v;", "atomicAdd(y, v);", "runs in every lane"),
    ("if (row >= rows) return;", "if (row + lane >= rows) return;", "differs between the lanes of a warp"),
    ("float v = 0.0f;", "float v = 0.0f; y[row * 32 + lane] = 1.0f;", "exchange 'y'"),   # read back after
])
def test_warp_per_row_reductions_it_must_refuse(tmp_path, old, new, reason):
    assert old in ROW_DOT
    source = ROW_DOT.replace(old, new)
    if reason == "exchange 'y'":
        source = source.replace("if (lane == 0) y[row] = v;", "if (lane == 0) y[row] += v;")
    kernels, _ = convert(tmp_path, source)
    k = kernels["row_dot"]
    assert k["form"] == "portable" and reason in note(k), note(k)


ROW_SCALE = """
    __global__ void row_scale(const float* __restrict__ a, float* __restrict__ t, float* __restrict__ y,
                              int rows, int cols) {
        const int lane = threadIdx.x & 31;
        const int row = blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
        if (row >= rows) return;
        float v = 0.0f;
        for (int c = lane; c < cols; c += 32) { float h = a[row * cols + c] + 1.0f; t[row * cols + c] = h; v += h * h; }
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
        for (int j = lane; j < cols; j += 32) y[row * cols + j] = t[row * cols + j] / v;
    }
"""


def test_lane_reading_back_its_own_stores_after_the_tree_agrees_on_cpu(tmp_path):
    """Each lane reads after the tree exactly the elements it stored before it (the same index
    in the same counted loop): no lane sees another's store, the reduction per warp lifts."""
    spec = ROW_DOT_SPEC.replace('"row_dot"', '"row_scale"').replace(
        'name = "x"\n    buffer = "float32"\n    elements = 75\n    role = "in"\n    range = [-1.0, 1.0]',
        'name = "t"\n    buffer = "float32"\n    elements = 1050\n    role = "out"').replace(
        'name = "y"\n    buffer = "float32"\n    elements = 14', 'name = "y"\n    buffer = "float32"\n    elements = 1050')
    kernels, text = convert(tmp_path, ROW_SCALE, "--check", "cpu", spec=spec)
    k = kernels["row_scale"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))


@pytest.mark.parametrize("old, new", [
    ("t[row * cols + j] / v", "t[row * cols + j + 1] / v"),                           # the neighbour's
    ("for (int j = lane; j < cols; j += 32)", "for (int j = 0; j < cols; j += 1)"),   # the whole row
    ("t[row * cols + c] = h;", "if (h > 0.0f) t[row * cols + c] = h;"),               # not every element
])
def test_lane_reading_what_others_stored_is_refused(tmp_path, old, new):
    assert old in ROW_SCALE
    kernels, _ = convert(tmp_path, ROW_SCALE.replace(old, new))
    assert "exchange 't' through memory around the warp tree" in note(kernels["row_scale"])
