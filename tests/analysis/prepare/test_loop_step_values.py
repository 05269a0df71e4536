"""A loop step that uses a step as a value (pnpoly's ``for (int j = 0; j < V; k = j++)``, walking
a polygon's edges from the previous vertex ``k`` to ``j``) split as a statement is
(analysis.prepare.value_steps): the copy and the step, in the order C++ gives them (``k = ++j``
steps first). Checked equal on the CPU against the g++-built original; a statement whose target
reads the stepped variable stays refused with its reason."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNELS = """
#define VERTICES 7
__global__ void crossings(const float *px, const float *py, const float *vx, const float *vy,
                          int *inside, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int c = 0;
        float x = px[i], y = py[i];
        int k = VERTICES - 1;
        for (int j = 0; j < VERTICES; k = j++) {    // the edge from vertex k to vertex j
            float slope = (vx[k] - vx[j]) / (vy[k] - vy[j]);
            if (((vy[j] > y) != (vy[k] > y)) && (x < slope * (y - vy[j]) + vx[j]))
                c = !c;
        }
        inside[i] = c;
    }
}

__global__ void steps(const int *in, long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = in[i] % 5;
        long long before, after;
        before = j++;          // the copy, then the step (and a widening)
        after = ++j;           // the step, then the copy
        int d = j;
        d = j--;
        int e = 0;
        for (int m = 0; m < j; e = ++m) d += e;   // a prefix step: m is stepped, then copied
        out[i] = before * 1000 + after * 100 + d * 10 + j + e * 7;
    }
}
"""

SPEC = (
    spec_kernel("crossings", (2, 1, 1), (64, 1, 1), "exact",
                spec_buffer("px", "float32", 100, "in", -1.5, 1.5),
                spec_buffer("py", "float32", 100, "in", -1.5, 1.5),
                spec_buffer("vx", "float32", 7, "in", -1.0, 1.0),
                spec_buffer("vy", "float32", 7, "in", -1.0, 1.0),
                spec_buffer("inside", "int32", 100, "out"),
                spec_scalar("n", "int32", 100))
    + spec_kernel("steps", (2, 1, 1), (64, 1, 1), "exact",
                  spec_buffer("in", "int32", 100, "in", 1, 1000),
                  spec_buffer("out", "int64", 100, "out"),
                  spec_scalar("n", "int32", 100))
)


def test_copies_of_a_stepped_variable_check_equal(tmp_path):
    out, rows = converted(tmp_path, KERNELS, SPEC, expect_ok=False)
    kernels = {k["kernel"]: k for k in rows}
    for name in ("crossings", "steps"):
        assert kernels[name]["form"] not in ("hybrid", "unsupported"), kernels[name]["diagnostics"]
        assert kernels[name]["check"]["status"] == "pass", kernels[name]["check"]
    text = (out / "k.py").read_text()
    assert "k = j  # L" in text  # the copy, then j's step


READS_ITSELF = """
__global__ void reads_itself(int *out, int n)
{
    int j = threadIdx.x;
    out[j] = j++;              // the target reads j: no reordering is taken
    out[j % n] += j;
}
"""


def test_a_stepped_copy_whose_target_reads_the_variable_is_refused(tmp_path):
    _out, rows = converted(tmp_path, READS_ITSELF, expect_ok=False)
    (row,) = rows
    assert row["form"] in ("hybrid", "unsupported")
    assert "operator '++' used as a value" in row["reason"], row


BRANCHES = """
__global__ void likelihood(const float *ax, const float *ay, int *out, float *fout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int acc = 0;
        float facc = 0.0f;
        for (int y = 0; y < 3; y++) {
            int iX = ax[i] + y;
            int iY = ay[i];
            int rnd_iX = (ax[i] + y - iX) < .5f ? iX : iX++;      // particlefilter's rounding
            int rnd_iY;
            rnd_iY = (ay[i] - iY) < .5f ? iY-- : ++iY;          // an assignment, both branches step
            float f = iX > 0 ? 0.25f : iY++;                     // the int branch converted as ?: does
            acc += rnd_iX * 1000 + iX * 100 + rnd_iY * 10 + iY;
            facc += f;
        }
        out[i] = acc;
        fout[i] = facc;
    }
}
"""

BRANCHES_SPEC = spec_kernel("likelihood", (2, 1, 1), (64, 1, 1), "exact",
                            spec_buffer("ax", "float32", 100, "in", -20.0, 20.0),
                            spec_buffer("ay", "float32", 100, "in", -20.0, 20.0),
                            spec_buffer("out", "int32", 100, "out"),
                            spec_buffer("fout", "float32", 100, "out"),
                            spec_scalar("n", "int32", 100))


def test_steps_in_the_branches_of_a_conditional_value_check_equal(tmp_path):
    _out, rows = converted(tmp_path, BRANCHES, BRANCHES_SPEC, expect_ok=False)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["diagnostics"]
    assert row["check"]["status"] == "pass", row["check"]
