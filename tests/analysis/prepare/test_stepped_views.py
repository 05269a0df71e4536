"""Local pointers stepped through a buffer the way hashes and row walks are written: a vector view
read and stepped (``uint3 v = *k++;`` of Jenkins' lookup3 over a key of words, ``v = *k; k++;``)
counts its vectors in a local, and ``s += *p++`` (``*p++ = v``) on a scalar pointer reads (stores)
then steps; they convert and the CPU check compares them with the CUDA original. A vector view given another
view is refused by name (it would read the first one's buffer)."""
from __future__ import annotations

from migrate.analysis.prepare.value_steps import split_value_steps
from migrate.ir import model as m
from tests.analysis.support import converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit

KERNELS = """
#include <cuda_runtime.h>
__global__ void mix3(const unsigned* __restrict__ key, unsigned* __restrict__ out, int words)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    const uint3* k = (const uint3*)key + t * (words / 3);
    unsigned a = 0x9e3779b9u, b = a, c = (unsigned)t;
    int length = words * 4;
    while (length > 12) {
        uint3 v = *k++;
        a += v.x; b += v.y; c += v.z;
        a -= c; a ^= (c << 4) | (c >> 28); c += b;
        length -= 12;
    }
    uint3 last = *k;
    k += 1;
    out[t] = a ^ (b * 3u) ^ c ^ last.x;
}

__global__ void pairs(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    float* p = y + 2 * r;
    *p++ = x[r];
    *p = -2.0f * x[r];
}

__global__ void weighted(const int* __restrict__ x, int* __restrict__ out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int* p = x + t * n;
    int s = 0;
    for (int i = 0; i < n; i++) s += *p++ * (i + 1);
    out[t] = s;
}
"""

SPEC = (spec_kernel("pairs", (2, 1, 1), (32, 1, 1), "exact",
                    spec_buffer("x", "float32", 64, "in", -5.0, 5.0),
                    spec_buffer("y", "float32", 128, "out"), spec_scalar("n", "int32", 64))
        + spec_kernel("mix3", (2, 1, 1), (32, 1, 1), "exact",
                    spec_buffer("key", "uint32", 64 * 13, "in", 0, 4000000000),
                    spec_buffer("out", "uint32", 64, "out"), spec_scalar("words", "int32", 12))
        + spec_kernel("weighted", (2, 1, 1), (32, 1, 1), "exact",
                      spec_buffer("x", "int32", 64 * 9, "in", -1000, 1000),
                      spec_buffer("out", "int32", 64, "out"), spec_scalar("n", "int32", 9)))


def test_a_pointer_read_and_stepped_is_read_then_stepped(tmp_path):
    fn = split_value_steps(unit(tmp_path, KERNELS).kernel("weighted"))
    assert not [u for u in nodes(fn, m.Unary) if u.op == "++" and isinstance(u.operand, m.Ref)
                and u.operand.name == "p"]
    assert [a.op for a in nodes(fn, m.Assign) if isinstance(a.target, m.Ref) and a.target.name == "p"] == ["+="]


def test_stepped_views_convert_and_check_equal(tmp_path):
    out, rows = converted(tmp_path, KERNELS, SPEC)
    for row in rows:
        assert row["form"] not in ("hybrid", "unsupported"), row["reason"]
        assert row["check"]["status"] == "pass", row["check"]["message"]
    text = (out / "k.py").read_text()
    assert "k_at = k_at + 1" in text and "k = k" not in text


def test_a_vector_view_given_another_view_is_refused(tmp_path):
    source = KERNELS.replace("    k += 1;\n", "    k = (const uint3*)out;\n")
    _out, rows = converted(tmp_path, source, expect_ok=False)
    row = next(r for r in rows if r["kernel"] == "mix3")
    assert row["form"] in ("hybrid", "unsupported")
    assert "vector pointer 'k' is assigned other than by a step" in row["reason"]
