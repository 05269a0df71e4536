"""``continue`` in a loop the printer writes as a ``while`` with its step at the end (a grid- or
block-stride loop whose stride is not a constant, as the pool's counting and filtering kernels
write them): each ``continue`` steps first, so no iteration repeats; checked equal on the CPU."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
__global__ void skip(const int* __restrict__ x, int* __restrict__ cnt, int numel) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    int c = 0;
    for (int i = tid; i < numel; i += stride) {
        if (x[i] < 0) continue;
        switch (x[i] % 4) {
            case 0: c += 10; continue;    // a continue inside a switch belongs to the loop
            default: break;
        }
        for (int k = 0; k < 2; k++) { if (k == x[i] % 2) continue; c += k; }   // the inner loop's own
        c += x[i];
    }
    cnt[tid] = c;
}
"""

SPEC = (
    spec_kernel("skip", (2, 1, 1), (32, 1, 1), "exact",
                spec_buffer("x", "int32", 500, "in", -50, 50),
                spec_buffer("cnt", "int32", 64, "out"),
                spec_scalar("numel", "int32", 500))
)


def test_continue_in_a_loop_written_as_while_steps_first_and_checks_equal(tmp_path):
    out, rows = converted(tmp_path, KERNEL, SPEC)
    (k,) = rows
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    # the two continues of the strided loop each step first; the inner counted loop's does not
    assert text.count("i = i + stride") >= 3


#: ``continue`` in a ``do {...} while (c)`` (a backtracking search's step loop): C tests ``c``
#: before the next iteration, so the loop's flag takes ``c`` first; a continue of a loop inside
#: it stays that loop's
DO_WHILE = """
__global__ void walks(const int* __restrict__ x, int* __restrict__ out, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int i = t % 7, s = 0, steps = 0;
    do {
        i += 3;
        steps++;
        if (x[i % n] % 3 == 0) continue;   // skips the rest, then tests i < n
        for (int k = 0; k < 3; k++) { if (k == 1) continue; s += k; }
        s += x[i % n];
    } while (i < n && steps < 50);
    out[t] = s * 100 + steps;
}
"""

DO_WHILE_SPEC = spec_kernel("walks", (2, 1, 1), (32, 1, 1), "exact",
                            spec_buffer("x", "int32", 90, "in", -20, 20),
                            spec_buffer("out", "int32", 64, "out"),
                            spec_scalar("n", "int32", 90))


def test_continue_in_a_do_while_tests_its_condition_first_and_checks_equal(tmp_path):
    _out, (k,) = converted(tmp_path, DO_WHILE, DO_WHILE_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
