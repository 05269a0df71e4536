"""analysis.facts.calls: the device functions a function calls (transitively), and the order
their macros are defined in (callees first)."""
from __future__ import annotations

import textwrap

from migrate.analysis.facts.calls import callees_first, callees_of
from migrate.parse.frontend import parse_file
from tests.analysis.support import unit

DISTANCE = """
    __device__ float sq(float v) { return v * v; }
    __device__ float norm2(float a, float b) { return sq(a) + sq(b); }
    __device__ float length2(float a, float b) { return sqrtf(norm2(a, b)); }
    __device__ float half_of(float v);
    __device__ float mean(float a, float b) { return half_of(a + b); }
    __device__ float half_of(float v) { return v * 0.5f; }
    __global__ void lengths(const float* x, const float* y, float* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = length2(x[i], y[i]) + sq(x[i]) + mean(x[i], y[i]);
    }
"""

#: mutual recursion: the frontend reports it (M1204), the queries must still terminate
RECURSIVE = """
    #include <cuda_runtime.h>
    __device__ int pong(int n);
    __device__ int ping(int n) { return n > 0 ? pong(n - 1) : 0; }
    __device__ int pong(int n) { return n > 0 ? ping(n - 1) + 1 : 1; }
    __device__ int depth(int n) { return ping(n) + 1; }
    __global__ void game(int* out) { out[threadIdx.x] = depth(threadIdx.x); }
"""


def test_callees_of_is_transitive_without_repeats(tmp_path):
    u = unit(tmp_path, DISTANCE)
    table = {f.name: f for f in u.device_functions}
    found = [f.name for f in callees_of(u.kernel("lengths"), table)]
    # sqrtf is a math function, not a device function; sq is called twice, listed once
    assert sorted(found) == ["half_of", "length2", "mean", "norm2", "sq"]
    assert [f.name for f in callees_of(table["sq"], table)] == []
    assert callees_of(u.kernel("lengths"), {}) == []


def test_callees_first_orders_callees_before_callers(tmp_path):
    u = unit(tmp_path, DISTANCE)
    device = {f.name: f for f in u.device_functions}
    assert callees_first(["length2"], device) == ["sq", "norm2", "length2"]
    assert callees_first(["sq", "length2"], device) == ["sq", "norm2", "length2"]
    assert callees_first(["sq"], device) == ["sq"]
    # mean is defined before the half_of it calls: still half_of first
    assert device["mean"].span.line < device["half_of"].span.line
    assert callees_first(["mean"], device) == ["half_of", "mean"]
    both = callees_first(["mean", "length2"], device)
    assert sorted(both) == ["half_of", "length2", "mean", "norm2", "sq"]
    assert both.index("half_of") < both.index("mean") and both.index("sq") < both.index("norm2") < both.index("length2")
    assert callees_first(["sqrtf", "lengths"], device) == []  # not device functions


def _parsed(tmp_path, source):
    path = tmp_path / "r.cu"
    path.write_text(textwrap.dedent(source))
    return parse_file(path)


def test_recursion_does_not_loop(tmp_path):
    parsed = _parsed(tmp_path, RECURSIVE)
    assert any("M1204" in str(d) for d in parsed.diagnostics)
    u = parsed.unit
    device = {f.name: f for f in u.device_functions}
    assert set(device["ping"].calls) == {"pong"} and set(device["pong"].calls) == {"ping"}
    assert sorted(f.name for f in callees_of(u.kernel("game"), device)) == ["depth", "ping", "pong"]
    assert sorted(f.name for f in callees_of(device["ping"], device)) == ["ping", "pong"]
    order = callees_first(["depth"], device)
    assert sorted(order) == ["depth", "ping", "pong"] and order[-1] == "depth"
