"""Thread orders on both sides of the CPU check (runtime/c_schedule.py, issue 14): a migrated
portable kernel whose barrier is missing fails under --schedule reverse, and an original whose
result depends on the order of its threads is its own finding, not a migration failure."""
from __future__ import annotations

import json
import re
import textwrap

import pytest

from migrate.cli import main
from migrate.runtime.build import find_cxx

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")

#: Each thread reads its right neighbour's element of a shared tile: the barriers between the
#: writes and the reads are what makes it correct.
SHIFT = """
#include <cuda_runtime.h>
__global__ void shift(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    float v = t + 1 < 256 ? s[t + 1] : 0.0f;
    __syncthreads();
    s[t] = v * 2.0f + s[t];
    __syncthreads();
    if (i < n) out[i] = s[t] + s[(t + 255) % 256];
}
"""

#: The same read with no barrier: the original races (which value a thread reads depends on the order).
RACY = """
#include <cuda_runtime.h>
__global__ void racy(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    if (i < n) out[i] = s[t] + s[(t + 1) % 256];
}
"""

SPEC = """
[[kernel]]
name = "{name}"
grid = [2, 1, 1]
block = [256, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "in"
buffer = "float32"
elements = 500
role = "in"
range = [-4.0, 4.0]
[[kernel.args]]
name = "out"
buffer = "float32"
elements = 500
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 500
"""


def _convert(tmp_path, name, source):
    src = tmp_path / "src" / f"{name}.cu"
    src.parent.mkdir()
    src.write_text(source)
    (src.parent / f"{name}.toml").write_text(SPEC.format(name=name))
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q"])
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] == "portable", k
    return out


def _check(out, tmp_path, *flags) -> dict:
    report = tmp_path / f"check{len(list(tmp_path.glob('check*.json')))}.json"
    main(["check", "--from", str(out), "--json", str(report), *flags])
    (result,) = json.loads(report.read_text())
    return result


def test_a_missing_barrier_in_the_migrated_kernel_fails_when_its_threads_run_in_reverse(tmp_path):
    out = _convert(tmp_path, "shift", SHIFT)
    assert _check(out, tmp_path)["status"] == "pass"
    assert _check(out, tmp_path, "--schedule", "reverse")["status"] == "pass"
    module = out / "shift.py"
    text = module.read_text()
    barrier = re.search(r"\n *T\.sync_threads\(\)  # L10\n", text)  # the one between the read and the write
    assert barrier, text
    module.write_text(text[:barrier.start()] + "\n" + text[barrier.end():])
    assert _check(out, tmp_path)["status"] == "pass"  # in thread order the race never shows
    mutant = _check(out, tmp_path, "--schedule", "reverse")
    assert mutant["status"] == "fail", mutant


def test_an_original_that_races_is_its_own_finding_not_a_migration_failure(tmp_path):
    out = _convert(tmp_path, "racy", RACY)
    result = _check(out, tmp_path)
    assert result["status"] == "error", result
    assert "race" in result["message"] and "forward" in result["message"] and "reverse" in result["message"]
    assert any(f.startswith("race:") for f in result["findings"]), result
