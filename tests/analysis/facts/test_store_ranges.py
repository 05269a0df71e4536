"""Vector kernels with scalar tails (:mod:`migrate.analysis.facts.store_ranges`): a float4/half2 body
over ``i < n/4`` and a scalar tail over the leftover elements store to one buffer at different
index expressions; the map lifts them when the guards' interval bounds keep the two store sets
apart, and refuses (portable, M3003 naming the ranges) when they may meet.
"""
from __future__ import annotations

import pytest

from tests.analysis.lift.support import convert, factory, note


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
def test_tails_that_may_meet_the_vector_part_are_not_proven_apart(tmp_path, source, old, new, reason):
    """Each element is one CUDA thread: two that store to one place race in the CUDA as well, so
    the map lifts on the race rule, its note M3006 naming the ranges that may meet, and its
    vector lanes are not folded (they would run on other threads than the element's)."""
    src = source.replace(old, new).replace("TAIL_START", "(numVec << 2)").replace("TAIL_GUARD", "i == n2 && (n & 1)")
    kernels, text = convert(tmp_path, src)
    k = next(iter(kernels.values()))
    assert k["form"] == "tile"
    races = " ".join(d["message"] for d in k["diagnostics"] if d["code"] == "M3006")
    assert reason in races, k["diagnostics"]
    assert "T.Parallel(tile_x, " not in factory(text, k["kernel"])
