"""A cached load of a field's address (``__ldg(&R[offset].rate)``, the way rating tables of
records are read through the read-only cache) is the read of that field (analysis.prepare.vectors):
a field held with other fields in the buffer's words is read through its word, as a plain
``R[offset].rate`` is. An atomic on such an address stays refused (test_records)."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
struct Entry { int u, v; float rate; };

__global__ void rate_rows(const Entry* __restrict__ R, const float* __restrict__ w, float* __restrict__ out,
                          int nnz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nnz) return;
    int offset = (i * 7) % nnz;
    float r = __ldg(&R[offset].rate);
    int u = __ldg(&R[offset].u) % 16;
    int v = __ldg(&(R[offset].v)) % 16;
    out[i] = r * w[(u < 0 ? -u : u)] - (float)v + R[i].rate;
}
"""

# the records' words: the ints drawn between the bits of 1.0f and 2.0f, so that the float field
# read through them is a normal number (and u, v are large ints, taken modulo 16)
SPEC = spec_kernel("rate_rows", (2, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("R", "int32", 3 * 100, "in", 1065353216, 1073741823),
                   spec_buffer("w", "float32", 16, "in", -2.0, 2.0),
                   spec_buffer("out", "float32", 100, "out"),
                   spec_scalar("nnz", "int32", 100))


def test_a_cached_load_of_a_records_field_reads_the_field_and_agrees_on_cpu(tmp_path):
    out, rows = converted(tmp_path, KERNEL, SPEC)
    k = {r["kernel"]: r for r in rows}["rate_rows"]
    assert k["form"] not in ("hybrid", "unsupported"), k["diagnostics"]
    assert k["check"]["status"] == "pass", k["check"]
    text = (out / "k.py").read_text()
    assert "R: T.Tensor((R_len,), T.int32)" in text
    assert "T.reinterpret(R[offset * 3 + 2], 'float32')" in text
