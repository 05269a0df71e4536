"""A kernel template kept in a header whose body calls a function only its instance resolves: the
precision helpers of a chemistry code (``template<class T> T EXP(T);`` with explicit
specialisations ``EXP<float>``/``EXP<double>`` in one header, ``MAX``/``MIN`` overloaded for
``float`` and ``double`` beside them), called on expressions of the kernel's ``real``, the
kernels in a second header, launched for ``float`` and for ``double`` from ``main.cu``.

clang leaves such a call unresolved in the template; the header's kernels are written out per
instance after the header's own last line, in its includer's context, so clang picks the
specialisation (or overload) each instance reaches, as nvcc does. The specialisations here differ
on purpose (``SCALE<float>`` triples, ``SCALE<double>`` halves), so picking the wrong one fails the
replay of the original's launches (compiled with g++) on the CPU."""
from __future__ import annotations

import json

import pytest

from migrate.cli import main
from migrate.runtime.build import find_cxx
from migrate.runtime.cuda_cpu import compile_cpu
from migrate.runtime.replay import replay
from migrate.runtime.traces import record

PRECISION_H = """\
#pragma once
#include <math.h>
template<class T> __device__ __forceinline__ T EXP(T in);
template<> __device__ __forceinline__ double EXP<double>(double in) { return exp(in); }
template<> __device__ __forceinline__ float EXP<float>(float in) { return expf(in); }

template<class T> __device__ __forceinline__ T SCALE(T in);
template<> __device__ __forceinline__ double SCALE<double>(double in) { return in * 0.5; }
template<> __device__ __forceinline__ float SCALE<float>(float in) { return in * 3.0f; }

__device__ __forceinline__ float MAX(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double MAX(double a, double b) { return fmax(a, b) + 1.0; }
"""

RATES_H = """\
#ifndef RATES_H
#define RATES_H
#include "precision.h"

template <class real>
__global__ void rates(const real* __restrict__ T, real* __restrict__ RF, real TCONV, int n)
{
    const int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n) return;
    const real TEMP = T[i] * TCONV;
    const real TI = (real)1.0e0 / TEMP;
    RF[i] = EXP((real)1.5e0 - (real)2.5e0 * TI);
    RF[n + i] = SCALE(TEMP - (real)0.25);
    RF[2 * n + i] = MAX(TEMP * (real)0.5, (real)1.0e0 - TI);
}
#endif
"""

MAIN = """\
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "rates.h"

template <class real>
static int run(int n) {
    std::vector<real> h(n);
    for (int i = 0; i < n; ++i) h[i] = (real)(0.5 + 0.013 * (i % 97));
    real *dT, *dRF;
    cudaMalloc(&dT, n * sizeof(real));
    cudaMalloc(&dRF, 3 * n * sizeof(real));
    cudaMemcpy(dT, h.data(), n * sizeof(real), cudaMemcpyHostToDevice);
    rates<real><<<(n + 63) / 64, 64>>>(dT, dRF, (real)1.25, n);
    std::vector<real> out(3 * n);
    cudaMemcpy(out.data(), dRF, 3 * n * sizeof(real), cudaMemcpyDeviceToHost);
    cudaFree(dT); cudaFree(dRF);
    return out[n] != 0;
}

int main(int argc, char** argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int ok = run<float>(n) & run<double>(n);
    printf("%s\\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
"""


@pytest.fixture()
def program(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name, text in {"main.cu": MAIN, "rates.h": RATES_H, "precision.h": PRECISION_H}.items():
        (src / name).write_text(text)
    return src


def test_a_headers_kernel_template_is_converted_per_instance(program, tmp_path):
    out = tmp_path / "out"
    assert main(["convert", str(program), "-o", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    (k,) = [k for k in report["kernels"] if k["kernel"] == "rates"]
    assert k["file"] == "rates.h" and k["form"] in ("tile", "portable"), k["reason"]
    assert sorted(k["template_instances"]) == [["double"], ["float"]]
    assert not [d for d in k["diagnostics"] if d["code"] == "M1209"]
    module = (out / "rates_h.py").read_text()
    assert "def make_rates__float(" in module and "def make_rates__double(" in module


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_each_instance_calls_its_own_specialisation_on_the_cpu(program, tmp_path):
    pytest.importorskip("tilelang")
    out = tmp_path / "out"
    assert main(["convert", str(program), "-o", str(out), "-q"]) == 0
    rec = record(compile_cpu(program / "main.cu", []), ["300"], tmp_path / "traces", limit=4)
    assert rec.status == 0 and "PASS" in rec.stdout, rec.stderr
    assert len(rec.launches) == 2  # rates<float>, rates<double>
    for launch in rec.launches:
        r = replay(out / "rates_h.py", launch)
        assert (r.kernel, r.status) == ("rates", "pass"), r.message
    # each instance calls its own specialisation (the float one is modelled second, as SCALE_2)
    text = (out / "rates_h.py").read_text()
    float_part, double_part = text.split("def make_rates__double(")
    swapped = tmp_path / "swapped_h.py"
    swapped.write_text(float_part.replace("SCALE_2(TEMP", "SCALE(TEMP") + "def make_rates__double(" + double_part)
    assert swapped.read_text() != text  # and the replay tells them apart
    assert replay(swapped, rec.launches[0]).status == "fail"
