"""Lanes of CUDA vector accesses folded into a lane dimension of a map's tile loop (analysis.lift.fold_lanes):
float4 lanes that are independent fold, lanes that mix, sum or move stay scalar, and lanes of buffers
that may alias stay in one thread.
"""
from __future__ import annotations

import re

import pytest

from tests.analysis.lift.support import convert, factory, note


def _axpy(body: str) -> str:
    return """
        __global__ void k4(int n4, float a, const float4* __restrict__ x, float4* __restrict__ y,
                           float* __restrict__ out) {
            const int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i >= n4) return;
            const float4 xv = x[i];
            const float4 yv = y[i];
            BODY
        }
        int main() { k4<<<16, 256>>>(1000, 2.0f, nullptr, nullptr, nullptr); }
    """.replace("BODY", body)


def test_float4_lanes_fold_into_a_lane_dimension(tmp_path):
    kernels, text = convert(tmp_path, _axpy(
        "y[i] = make_float4(a * xv.x + yv.x, a * xv.y + yv.y, a * xv.z + yv.z, a * xv.w + yv.w);"))
    assert kernels["k4"]["form"] == "tile", note(kernels["k4"])
    body = factory(text, "k4")
    assert "for ix, il in T.Parallel(tile_x, 4):" in body
    assert "y[i * 4 + il] = a * xv + yv" in body


@pytest.mark.parametrize("statement", [
    # lanes that mix: a complex product reads the other lane
    "y[i] = make_float4(xv.x * yv.y, xv.y * yv.x, xv.z * yv.w, xv.w * yv.z);",
    # lanes summed into one value: not a lane each
    "out[i] = xv.x + xv.y + xv.z + xv.w;",
    # a lane written in another place
    "y[i] = make_float4(xv.y, xv.y, xv.z, xv.w);",
])
def test_lanes_that_are_not_independent_stay_scalar(tmp_path, statement):
    kernels, text = convert(tmp_path, _axpy(statement))
    assert kernels["k4"]["form"] == "tile", note(kernels["k4"])
    body = factory(text, "k4")
    assert "T.Parallel(tile_x, 4)" not in body and not re.search(r"\bil\b", body)
    # each thread's lanes as the CUDA loads them: the float4 whole into a pack, then lane by lane
    assert re.search(r"x_pack\[x_lane\] = x\[", body) and "xv_x = x_pack[0]" in body, body


def test_lanes_of_buffers_that_may_alias_stay_in_one_thread(tmp_path):
    # without __restrict__, x may be y shifted by a lane: each element keeps its lanes in order
    kernels, text = convert(tmp_path, _axpy(
        "y[i] = make_float4(a * xv.x + yv.x, a * xv.y + yv.y, a * xv.z + yv.z, a * xv.w + yv.w);")
        .replace("const float4* __restrict__ x", "const float4* x"))
    assert kernels["k4"]["form"] == "tile", note(kernels["k4"])
    assert "T.Parallel(tile_x, 4)" not in factory(text, "k4")
