"""Kernels kept in C++ headers (``kernel_histogram.h`` included by ``main.cu``, as 130 programs
of the real-code pool keep 331 of their kernels): such a header is a CUDA file, converted in its
includer's context (the macros and types above the ``#include``) into ``<name>_h.py``, and the
launches ``main.cu`` makes replay into it. A header that only mentions ``__global__`` in a
comment, and a host header, stay out."""
from __future__ import annotations

import json

import pytest

from migrate.cli import main
from migrate.runtime.build import find_cxx
from migrate.runtime.cuda_cpu import compile_cpu
from migrate.runtime.replay import replay
from migrate.runtime.traces import record

MAIN = """\
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "util.h"
#define WEIGHT 3
struct Pair { float lo; float hi; };
#include "kernels.h"

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    std::vector<Pair> hp(n);
    for (int i = 0; i < n; ++i) { hp[i].lo = 0.25f * (i % 17) - 1.0f; hp[i].hi = 1.5f + (i % 5); }
    Pair* dp; float* dy;
    cudaMalloc(&dp, n * sizeof(Pair));
    cudaMalloc(&dy, n * sizeof(float));
    cudaMemcpy(dp, hp.data(), n * sizeof(Pair), cudaMemcpyHostToDevice);
    blend<<<blocks_for(n, 128), 128>>>(dy, dp, n);
    twice<float><<<blocks_for(n, 64), 64>>>(dy, n);
    std::vector<float> hy(n);
    cudaMemcpy(hy.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    bool ok = hy[n - 1] == 2 * (WEIGHT * hp[n - 1].lo + hp[n - 1].hi);
    printf("%s\\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
"""

KERNELS_H = """\
#pragma once
__global__ void blend(float* __restrict__ y, const Pair* __restrict__ p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = WEIGHT * p[i].lo + p[i].hi;
}
template <typename T>
__global__ void twice(T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] + y[i];
}
"""

UTIL_H = "#pragma once\nstatic inline int blocks_for(int n, int b) { return (n + b - 1) / b; }\n"
OLD_H = "#pragma once\n// __global__ void blend_v0(float* y);  (the first version, kept for reference)\n"


@pytest.fixture()
def program(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name, text in {"main.cu": MAIN, "kernels.h": KERNELS_H, "util.h": UTIL_H, "old.h": OLD_H}.items():
        (src / name).write_text(text)
    return src


def test_a_header_that_defines_a_kernel_is_converted_in_its_includers_context(program, tmp_path):
    out = tmp_path / "out"
    assert main(["convert", str(program), "-o", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert {f["file"] for f in report["files"]} == {"main.cu", "kernels.h"}  # not util.h, not old.h
    k, t = report["kernels"]
    assert (k["file"], k["kernel"], k["line"], k["form"]) == ("kernels.h", "blend", 2, "tile")
    # a template instantiated only by the includer's launch below the #include
    assert (t["kernel"], t["form"], t["template_instances"]) == ("twice", "tile", [["float"]])
    assert [(s["line"], s["block"]) for s in t["launches"]] == [(19, "64")]  # main.cu's line
    assert {f["file"]: f["output"] for f in report["files"]}["kernels.h"] == "kernels_h.py"
    module = (out / "kernels_h.py").read_text()
    assert "def make_blend(" in module and "3.0 * p[" in module  # WEIGHT, from main.cu above the #include


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_the_includers_launches_replay_into_the_headers_module(program, tmp_path):
    out = tmp_path / "out"
    assert main(["convert", str(program), "-o", str(out), "-q"]) == 0
    rec = record(compile_cpu(program / "main.cu", []), ["300"], tmp_path / "traces", limit=2)
    assert rec.status == 0 and "PASS" in rec.stdout, rec.stderr
    launch, doubling = rec.launches
    r = replay(out / "kernels_h.py", launch)
    assert (r.kernel, r.status) == ("blend", "pass"), r.message
    r = replay(out / "kernels_h.py", doubling)
    assert (r.kernel, r.status) == ("twice", "pass"), r.message
    broken = tmp_path / "broken_h.py"
    text = (out / "kernels_h.py").read_text()
    assert text.count("3.0 * p[") == 2  # the full tiles and the last one
    broken.write_text(text.replace("3.0 * p[", "2.0 * p["))
    assert replay(broken, launch).status == "fail"
