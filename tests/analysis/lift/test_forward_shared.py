"""Forwarded shared caches (analysis.lift.forward_shared): a read of a shared tile becomes what its
writer stored (a stencil's tile and halos); refused: halos storing something else, caches of
per-thread values.
"""
from __future__ import annotations

import re

from tests.analysis.lift.support import STENCIL_SPEC, convert, factory


STENCIL = """
    #define B 64
    #define R 2
    #define LOAD(j) (((j) >= 0 && (j) < n) ? in[(j)] : 0.0f)
    __global__ void blur(const float* __restrict__ in, float* __restrict__ out, int n) {
        __shared__ float s[B + 2 * R];
        int g = blockIdx.x * B + threadIdx.x;
        int l = threadIdx.x + R;
        s[l] = LOAD(g);
        if (threadIdx.x < R) {
            s[l - R] = LOAD(g - R);
            s[l + B] = LOAD(g + B);
        }
        __syncthreads();
        if (g < n) out[g] = 0.25f * s[l - 1] + 0.5f * s[l] + 0.25f * s[l + 1] + s[l + 2] - s[l - 2];
    }
"""


def test_halo_tile_is_forwarded_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, STENCIL, "--check", "cpu", spec=STENCIL_SPEC)
    k = kernels["blur"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    body = factory(text, "blur")
    assert "alloc_shared" not in body and "sync_threads" not in body
    assert re.search(r"in_\[gx \+ 1\]", body), body  # s[l + 1] read from the input directly


def test_halo_storing_something_else_is_refused(tmp_path):
    kernels, _ = convert(tmp_path, STENCIL.replace("s[l + B] = LOAD(g + B);", "s[l + B] = 1.0f;"))
    assert kernels["blur"]["form"] == "portable"


def test_cache_of_a_per_thread_value_is_refused(tmp_path):
    kernels, _ = convert(tmp_path, """
        __global__ void shift(const float* __restrict__ in, float* __restrict__ out) {
            __shared__ float s[64];
            float acc = 0.0f;
            for (int k = 0; k < 4; ++k) acc += in[blockIdx.x * 64 + threadIdx.x + k];
            s[threadIdx.x] = acc;
            __syncthreads();
            out[blockIdx.x * 64 + threadIdx.x] = s[(threadIdx.x + 1) % 64];
        }
    """)
    assert kernels["shift"]["form"] != "tile"


#: A bin search whose loop does its work in its header (``j`` is read after it), in a kernel that
#: stages its input through shared memory: forwarding must keep the loop.
BIN_SEARCH = """
    __global__ void bins(const float* __restrict__ edges, const float* __restrict__ x, int* __restrict__ bin,
                         int nedges, int n) {
        __shared__ float s[128];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        s[threadIdx.x] = i < n ? x[i] : 0.0f;
        __syncthreads();
        if (i >= n) return;
        float v = s[threadIdx.x];
        int j;
        for (j = 0; j < nedges && edges[j] <= v; ++j) {}
        bin[i] = j;
    }
"""
BIN_SPEC = """
    [[kernel]]
    name = "bins"
    grid = [4, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "edges"
    buffer = "float32"
    elements = 9
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 500
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "bin"
    buffer = "int32"
    elements = 500
    role = "out"
    [[kernel.args]]
    name = "nedges"
    scalar = "int32"
    value = 9
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 500
"""


def test_a_search_loop_with_an_empty_body_survives_forwarding(tmp_path):
    kernels, text = convert(tmp_path, BIN_SEARCH, "--check", "cpu", spec=BIN_SPEC, name="bins")
    k = kernels["bins"]
    assert k["check"]["status"] == "pass", k["check"]
    # passed as lifted, not after a fallback to the portable form (M3004)
    assert k["form"] == "tile" and "M3004" not in {d["code"] for d in k["diagnostics"]}, k
    body = factory(text, "bins")
    assert "edges[" in body  # the search still reads the edges
