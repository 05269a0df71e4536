"""Vector kernels with scalar tails (:mod:`migrate.analysis.facts.store_ranges`): a float4/half2 body
over ``i < n/4`` and a scalar tail over the leftover elements store to one buffer at different
index expressions; the map lifts them when the guards' interval bounds keep the two store sets
apart, and refuses (portable, M3003 naming the ranges) when they may meet.
"""
from __future__ import annotations

import re

import pytest

from tests.analysis.lift.test_lift import convert, factory, note
from tests.lowering import lower_sm90

VEC4 = """
    __global__ void add4(const float* __restrict__ a, const float* __restrict__ b,
                         float* __restrict__ c, int n) {
        const int idx = blockIdx.x * blockDim.x + threadIdx.x;
        const int numVec = n >> 2;
        if (idx < numVec) {
            const float4 va = reinterpret_cast<const float4*>(a)[idx];
            const float4 vb = reinterpret_cast<const float4*>(b)[idx];
            float4 vc;
            vc.x = va.x + vb.x; vc.y = va.y + vb.y; vc.z = va.z + vb.z; vc.w = va.w + vb.w;
            reinterpret_cast<float4*>(c)[idx] = vc;
        }
        const int rem = n & 3;
        if (idx < rem) {
            const int t = TAIL_START + idx;
            c[t] = a[t] * b[t];
        }
    }
    int main() { add4<<<40, 256>>>(nullptr, nullptr, nullptr, 40003); }
"""

VEC4_SPEC = """
    [[kernel]]
    name = "add4"
    grid = [10, 1, 1]
    block = [256, 1, 1]
    tolerance = "fp32"
    [[kernel.args]]
    name = "a"
    buffer = "float32"
    elements = 10003
    role = "in"
    range = [-2.0, 2.0]
    [[kernel.args]]
    name = "b"
    buffer = "float32"
    elements = 10003
    role = "in"
    range = [-2.0, 2.0]
    [[kernel.args]]
    name = "c"
    buffer = "float32"
    elements = 10003
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 10003
"""

PAIRS = """
    __global__ void affine2(const float* __restrict__ x, float* __restrict__ y, float s, int n) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        const int n2 = n / 2;
        const float2* x2 = reinterpret_cast<const float2*>(x);
        float2* y2 = reinterpret_cast<float2*>(y);
        if (i < n2) {
            const float2 v = x2[i];
            y2[i] = make_float2(v.x * s + 1.0f, v.y * s + 1.0f);
        } else if (TAIL_GUARD) {
            y[n - 1] = x[n - 1] * s - 1.0f;
        }
    }
    int main() { affine2<<<8, 256>>>(nullptr, nullptr, 2.0f, 4001); }
"""

PAIRS_SPEC = """
    [[kernel]]
    name = "affine2"
    grid = [8, 1, 1]
    block = [256, 1, 1]
    tolerance = "fp32"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 4001
    role = "in"
    range = [-2.0, 2.0]
    [[kernel.args]]
    name = "y"
    buffer = "float32"
    elements = 4001
    role = "out"
    [[kernel.args]]
    name = "s"
    scalar = "float32"
    value = 1.5
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 4001
"""


def test_float4_body_and_scalar_tail_become_a_map_and_agree_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, VEC4.replace("TAIL_START", "(numVec << 2)"), "--check", "cpu", spec=VEC4_SPEC)
    k = kernels["add4"]
    assert k["form"] == "tile", note(k)
    assert k["check"]["status"] == "pass", k["check"]
    body = factory(text, "add4")
    # the float4 lanes are a lane dimension of the tile loop (128-bit accesses), the scalar tail
    # a second loop over the elements
    assert "for ix, il in T.Parallel(tile_x, 4):" in body
    assert "va = a[idx * 4 + il]" in body and "c[idx * 4 + il] = vc" in body and "vc = va * b" not in body
    assert "vc = va + vb" in body and "T.alloc_var" not in body
    tail = body.index("for ix in T.Parallel(tile_x):")
    assert body.index("c[t] = a[t] * b[t]") > tail > body.index("c[idx * 4 + il] = vc")


def test_half_pairs_with_an_odd_last_element_become_a_map_and_agree_on_cpu(tmp_path):
    kernels, _text = convert(tmp_path, PAIRS.replace("TAIL_GUARD", "i == n2 && (n & 1)"), "--check", "cpu",
                            spec=PAIRS_SPEC)
    k = kernels["affine2"]
    assert k["form"] == "tile", note(k)
    assert k["check"]["status"] == "pass", k["check"]
    body = factory(_text, "affine2")
    assert "for ix, il in T.Parallel(tile_x, 2):" in body
    # the else of the pair test becomes its own test in the scalar loop
    assert "if i >= n2:" in body and "y[n - 1] = x[n - 1] * s - 1.0" in body


@pytest.mark.parametrize("source, old, new, reason", [
    # the tail starts one float early: its first store is the body's last lane
    (VEC4, "TAIL_START", "(numVec << 2) - 1",
     "stores to 'c' at lines 12 and 17 reach the same place from different elements (their index "
     "ranges under the guards: up to 4 * (n >> 2) - 1 and from 4 * (n >> 2) - 1"),
    # without the odd-length test, an even n makes y[n - 1] the last pair's second half
    (PAIRS, "TAIL_GUARD", "i == n2",
     "stores to 'y' at lines 10 and 12 reach the same place from different elements (their index "
     "ranges under the guards: up to 2 * (n / 2) - 1 and from n - 1"),
    # a tail over the first elements again
    (VEC4, "TAIL_START", "0", "stores to 'c' at lines 12 and 17 reach the same place from different elements "
     "(their index ranges under the guards: up to 4 * (n >> 2) - 4 and from 0"),
])
def test_tails_that_may_meet_the_vector_part_stay_portable(tmp_path, source, old, new, reason):
    src = source.replace(old, new).replace("TAIL_START", "(numVec << 2)").replace("TAIL_GUARD", "i == n2 && (n & 1)")
    kernels, _text = convert(tmp_path, src)
    k = next(iter(kernels.values()))
    assert k["form"] == "portable"
    assert reason in note(k), note(k)


def test_store_in_the_else_of_a_pinning_test_is_not_pinned(tmp_path):
    # the else runs for every element but one: each of them stores flag[0]
    kernels, _text = convert(tmp_path, """
        __global__ void mark(const float* __restrict__ x, float* __restrict__ y, int* flag, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i == 0) y[0] = x[0];
            else flag[0] = 1;
        }
        int main() { mark<<<4, 256>>>(nullptr, nullptr, nullptr, 1000); }
    """)
    assert kernels["mark"]["form"] == "portable"
    assert "the store to 'flag' at line 6 does not tell elements apart along x" in note(kernels["mark"])


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
    assert "xv_x = x[i * 4 + 0]" in body


# -- convolutions: sizes compiled as constants keep the index math int32 ---------------------

CONV = """
    __global__ void conv(const float* __restrict__ in, const float* __restrict__ wt, float* __restrict__ out,
                         int N, int C, int H, int W, int K, int R, int S) {
        const int idx = blockIdx.x * blockDim.x + threadIdx.x;
        const int P = H - R + 1, Q = W - S + 1;
        if (idx >= N * K * P * Q) return;
        const int q = idx % Q;
        const int p = (idx / Q) % P;
        const int k = (idx / (P * Q)) % K;
        const int n = idx / (K * P * Q);
        float acc = 0.0f;
        for (int c = 0; c < C; ++c)
            for (int r = 0; r < R; ++r)
                for (int s = 0; s < S; ++s)
                    acc += in[((n * C + c) * H + p + r) * W + q + s] * wt[((k * C + c) * R + r) * S + s];
        out[idx] = acc;
    }
    int main() { conv<<<8, 128>>>(nullptr, nullptr, nullptr, 2, 3, 10, 10, 4, 3, 3); }
"""

CONV_SPEC = """
    [[kernel]]
    name = "conv"
    grid = [6, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "in"
    buffer = "float32"
    elements = 600
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "wt"
    buffer = "float32"
    elements = 108
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 512
    role = "out"
    [[kernel.args]]
    name = "N"
    scalar = "int32"
    value = 2
    [[kernel.args]]
    name = "C"
    scalar = "int32"
    value = 3
    [[kernel.args]]
    name = "H"
    scalar = "int32"
    value = 10
    [[kernel.args]]
    name = "W"
    scalar = "int32"
    value = 10
    [[kernel.args]]
    name = "K"
    scalar = "int32"
    value = 4
    [[kernel.args]]
    name = "R"
    scalar = "int32"
    value = 3
    [[kernel.args]]
    name = "S"
    scalar = "int32"
    value = 3
"""


def _cuda_source(module_path, kernel: str, grid, block, sizes: dict | None) -> str:
    """The CUDA TileLang generates for sm_90a (no GPU needed), at run-time or constant sizes."""
    from migrate.runtime.tilelang_side import load_module
    return lower_sm90(load_module(module_path).KERNELS[kernel], grid, block, sizes)


def test_convolution_sizes_are_compiled_as_constants_and_its_index_math_stays_int32(tmp_path):
    kernels, text = convert(tmp_path, CONV, "--check", "cpu", spec=CONV_SPEC)
    k = kernels["conv"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    body = factory(text, "conv")
    assert "static_sizes=None" in body and 'static = static_sizes is not None and target == "cuda"' in body
    # the coordinates: values at constant sizes, cells (divisions computed once) at run-time sizes
    assert re.search(r"if static:.*\n\s+q = T.truncmod\(idx, Q\)", body)
    assert re.search(r"else:.*\n\s+q = T.alloc_var\(T.int32\)", body)
    assert "specialize=('N', 'C', 'H', 'W', 'K', 'R', 'S')," in text
    assert "static_pass_configs=(('tl.disable_safe_memory_legalize', True),)," in text
    module = tmp_path / "out" / "k.py"
    sizes = {"N": 2, "C": 3, "H": 10, "W": 10, "K": 4, "R": 3, "S": 3}
    dynamic = _cuda_source(module, "conv", (6, 1, 1), (128, 1, 1), None)
    static = _cuda_source(module, "conv", (6, 1, 1), (128, 1, 1), sizes)
    assert "int64_t" in dynamic  # TileLang cannot bound products of run-time sizes
    assert "int64_t" not in static and "int C" not in static


def test_divisions_by_constants_do_not_specialise(tmp_path):
    kernels, text = convert(tmp_path, """
        __global__ void fir(const float* __restrict__ x, float* __restrict__ y, int n) {
            const int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i >= n) return;
            float acc = 0.0f;
            for (int t = 0; t < 9; ++t) {
                const int j = i + t - 9 / 2;
                if (j >= 0 && j < n) acc += x[j];
            }
            y[i] = acc;
        }
        int main() { fir<<<4, 256>>>(nullptr, nullptr, 1000); }
    """)
    assert kernels["fir"]["form"] == "tile"
    assert "static_sizes" not in factory(text, "fir") and "specialize=" not in text


def test_lanes_of_buffers_that_may_alias_stay_in_one_thread(tmp_path):
    # without __restrict__, x may be y shifted by a lane: each element keeps its lanes in order
    kernels, text = convert(tmp_path, _axpy(
        "y[i] = make_float4(a * xv.x + yv.x, a * xv.y + yv.y, a * xv.z + yv.z, a * xv.w + yv.w);")
        .replace("const float4* __restrict__ x", "const float4* x"))
    assert kernels["k4"]["form"] == "tile", note(kernels["k4"])
    assert "T.Parallel(tile_x, 4)" not in factory(text, "k4")
