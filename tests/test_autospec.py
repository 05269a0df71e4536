"""Automatic sizes: ``migrate check`` without a spec file, from the launch sites of the CUDA file."""
from __future__ import annotations

import json
import textwrap

from migrate.cli import main

PROGRAM = """
    #include <cuda_runtime.h>
    #include <vector>
    __global__ void axpby(const float* __restrict__ x, float* __restrict__ y, float a, float b, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + b * y[i];
    }
    __global__ void scale_rows(float* __restrict__ m, const float* __restrict__ s, int rows, int cols) {
        int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
        if (r < rows && c < cols) m[r * cols + c] *= s[r];
    }
    __global__ void later(float* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = 1.0f;
    }
    int main(int argc, char** argv) {
        const int n = 5000, rows = 30, cols = 70;
        std::vector<float> h(rows * cols);
        float *x, *y, *m, *s, *out;
        size_t bytes = n * sizeof(float);
        cudaMalloc(&x, bytes);
        cudaMalloc((void**)&y, bytes);
        cudaMalloc(&m, h.size() * sizeof(float));
        cudaMalloc(&s, rows * sizeof(float));
        axpby<<<(n + 127) / 128, 128>>>(x, y, 0.5f, 2.0f, n);
        dim3 block(32, 8);
        dim3 grid((cols + 31) / 32, (rows + 7) / 8);
        scale_rows<<<grid, block>>>(m, s, rows, cols);
        int dynamic_n = argc * 1000;
        cudaMalloc(&out, dynamic_n * sizeof(float));
        later<<<(dynamic_n + 255) / 256, 256>>>(out, dynamic_n);
        return 0;
    }
"""


def test_check_without_a_spec_uses_the_launch_sites(tmp_path):
    (tmp_path / "prog.cu").write_text(textwrap.dedent(PROGRAM))
    out = tmp_path / "out"
    main(["convert", str(tmp_path / "prog.cu"), "-o", str(out), "-q"])
    derived = (out / "prog.auto.toml").read_text()
    assert 'name = "axpby"' in derived and "grid = [40, 1, 1]" in derived and "value = 0.5" in derived
    assert "grid = [3, 4, 1]" in derived and "block = [32, 8, 1]" in derived  # dim3 variables
    assert 'role = "inout"' in derived  # y is read and written; m too (*=)
    status = main(["check", "--from", str(out), "--device", "cpu", "--json", str(tmp_path / "c.json")])
    checks = {c["kernel"]: c for c in json.loads((tmp_path / "c.json").read_text())}
    assert checks["axpby"]["status"] == "pass" and checks["scale_rows"]["status"] == "pass"
    # sizes only known at run time: the message says exactly what to state
    later = checks["later"]
    assert later["status"] == "skipped"
    assert "state in prog.toml" in later["message"]
    assert "grid" in later["message"] and "scalar 'n'" in later["message"]
    assert "buffer 'out' elements" in later["message"]
    assert status == 0  # nothing failed; the kernel without sizes is skipped with the reason


def test_a_spec_file_wins_over_derived_sizes(tmp_path):
    (tmp_path / "prog.cu").write_text(textwrap.dedent(PROGRAM))
    (tmp_path / "prog.toml").write_text(textwrap.dedent("""
        [[kernel]]
        name = "later"
        grid = [4, 1, 1]
        block = [256, 1, 1]
        tolerance = "exact"
        [[kernel.args]]
        name = "out"
        buffer = "float32"
        elements = 1000
        role = "out"
        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = 1000
    """))
    out = tmp_path / "out"
    main(["convert", str(tmp_path / "prog.cu"), "-o", str(out), "-q"])
    assert not (out / "prog.auto.toml").exists()
    main(["check", "--from", str(out), "--device", "cpu", "--json", str(tmp_path / "c.json")])
    checks = {c["kernel"]: c["status"] for c in json.loads((tmp_path / "c.json").read_text())}
    assert checks == {"later": "pass"}


def test_check_of_a_source_file_derives_its_sizes_too(tmp_path, capsys):
    (tmp_path / "prog.cu").write_text(textwrap.dedent(PROGRAM))
    status = main(["check", str(tmp_path / "prog.cu"), "--kernel", "axpby", "--device", "cpu",
                   "--json", str(tmp_path / "c.json")])
    (check,) = json.loads((tmp_path / "c.json").read_text())
    assert status == 0 and check["kernel"] == "axpby" and check["status"] == "pass"
