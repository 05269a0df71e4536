"""Expression statements the way real kernels write them: comma-separated stores (`a = x, b =
y;`), a `for` stepping two counters (`a += s, b += s`), `(void)unused;` and `assert(...)` (compiled
out). Each comma part is a statement of its own, in order; an expression without effect is
dropped as C drops it; a volatile read is still refused."""
from __future__ import annotations

import json

from migrate.cli import main

KERNEL = """
#include <cuda_runtime.h>
#include <assert.h>
__device__ int node_id(int lit) { return lit >> 1; }
__device__ float bump(float* c) { c[0] += 1.0f; return c[0]; }
__global__ void pairs(const float* x, float* a, float* b, int n, int steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i < n * 2);
    assert(node_id(2 * i) < n * 2);  // a device function that computes a value (logic-rewrite's asserts)
    (void)steps;
    if (i < n) {
        float s = 0.0f, t = 0.0f;
        for (int j = i, k = n - 1 - i; j < n; j += 64, k -= 64)
            s += x[j], t += x[k < 0 ? 0 : k];
        a[i] = s, b[i] = t * 0.5f;
    }
}
"""

SPEC = """
[[kernel]]
name = "pairs"
grid = [2, 1, 1]
block = [128, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 200
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "a"
buffer = "float32"
elements = 200
role = "out"
[[kernel.args]]
name = "b"
buffer = "float32"
elements = 200
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 200
[[kernel.args]]
name = "steps"
scalar = "int32"
value = 3
"""


def test_comma_statements_void_and_assert_convert_and_check_equal(tmp_path):
    (tmp_path / "pairs.cu").write_text(KERNEL)
    (tmp_path / "pairs.toml").write_text(SPEC)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "pairs.cu"), "-o", str(out), "-q", "--check", "cpu"]) == 0
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
    text = (out / "pairs.py").read_text()
    assert text.count("pass  # an expression without effect") % 2 == 0 and "__assert_fail" not in text


def test_an_assert_calling_a_function_that_stores_is_still_refused(tmp_path):
    (tmp_path / "count.cu").write_text(KERNEL.replace("assert(node_id(2 * i) < n * 2);", "assert(bump(a) > 0);"))
    out = tmp_path / "out"
    main(["convert", str(tmp_path / "count.cu"), "-o", str(out), "-q"])
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] in ("hybrid", "unsupported") and "expression statement without effect" in k["reason"], k["reason"]


def test_a_volatile_read_as_a_statement_is_still_refused(tmp_path):
    (tmp_path / "spin.cu").write_text("""
#include <cuda_runtime.h>
__global__ void touch(volatile int* flag, int* y)
{
    flag[0];
    y[threadIdx.x] = 1;
}
""")
    out = tmp_path / "out"
    main(["convert", str(tmp_path / "spin.cu"), "-o", str(out), "-q"])
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] in ("hybrid", "unsupported") and "without effect" in k["reason"], k["reason"]
