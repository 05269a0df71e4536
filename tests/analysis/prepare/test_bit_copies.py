"""A scalar's bits read through its address as another number type of its size (quant3MatMul's
``as_unsigned``: ``return *reinterpret_cast<unsigned int*>(&i);``, ``int bits = *(int*)&x;`` on a
float): the conversion or the CUDA bit-copy intrinsic it means (analysis.prepare.bit_copies).
Checked equal on the CPU against the g++-built original, inputs negative and positive; a store
through such a pointer stays refused by name."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNELS = """
__device__ inline unsigned int as_unsigned(int i) { return *reinterpret_cast<unsigned int*>(&i); }

__global__ void bit_reads(const int *in, const float *f, const double *d, unsigned *u_out, int *f_bits,
                          float *f_back, long long *d_bits, unsigned long long *d_ubits, double *d_back, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        u_out[i] = as_unsigned(in[i]) >> 3;             // negative ints: their two's complement bits
        float x = f[i];
        int b = *(int*)&x;
        f_bits[i] = b ^ 0x55;
        unsigned ub = *reinterpret_cast<unsigned*>(&x) + 1u;
        f_back[i] = *(float*)&ub;                       // the next float up
        double y = d[i];
        d_bits[i] = *(long long*)&y;
        unsigned long long yb = *(unsigned long long*)&y;
        d_ubits[i] = yb >> 11;
        long long s = d_bits[i] - 1;
        d_back[i] = *(double*)&s;
    }
}
"""

SPEC = spec_kernel("bit_reads", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("in", "int32", 100, "in", -100000, 100000),
                   spec_buffer("f", "float32", 100, "in", -3.0, 3.0),
                   spec_buffer("d", "float64", 100, "in", -3.0, 3.0),
                   spec_buffer("u_out", "uint32", 100, "out"),
                   spec_buffer("f_bits", "int32", 100, "out"),
                   spec_buffer("f_back", "float32", 100, "out"),
                   spec_buffer("d_bits", "int64", 100, "out"),
                   spec_buffer("d_ubits", "uint64", 100, "out"),
                   spec_buffer("d_back", "float64", 100, "out"),
                   spec_scalar("n", "int32", 100))


def test_bit_reads_through_an_address_check_equal(tmp_path):
    out, rows = converted(tmp_path, KERNELS, SPEC, expect_ok=False)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["diagnostics"]
    assert row["check"]["status"] == "pass", row["check"]
    text = (out / "k.py").read_text()
    assert "T.reinterpret" in text


STORE = """
__global__ void bit_store(const int *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = 0.0f;
        *(int*)&x = in[i];      // a store through the other type: not a read
        out[i] = x;
    }
}
"""


def test_a_store_through_another_type_is_refused(tmp_path):
    _out, rows = converted(tmp_path, STORE, expect_ok=False)
    (row,) = rows
    assert row["form"] in ("hybrid", "unsupported"), row
    assert "operator '*'" in row["reason"], row
