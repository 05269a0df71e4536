"""``__constant__`` variable templates read by kernel templates, as 1-D convolution codes keep
their filter taps (``template <typename T> __constant__ T taps[8];`` read as ``taps<T>[j]`` and
filled with ``cudaMemcpyToSymbol(taps<T>, ...)`` in a host template). Each instance of the kernel
is written out (parse.instance_copies), where clang names the instance's own specialisation
(``taps<float>``, an unexposed declaration): the unit gets one ``__constant__`` global per
specialisation (``taps_float``, ``taps_double``) and each instance takes its own as a symbol,
with the C++ naming it (``Signature.spellings``). The recorder of the original's launches leaves
variable templates alone in the source (their ``template <...>`` on the line above too: the
original still builds); the launcher registers each specialisation a module names by that C++, so
the recorded launches hold their bytes and replay. The migrated kernels also run here on the CPU
target against numpy."""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.cli import main
from migrate.ir import model as m
from migrate.parse.frontend import parse_file
from migrate.runtime.build import find_cxx, launcher_text
from migrate.runtime.source import register_constants
from tests.analysis.support import module_of, program_converted

PROGRAM = r"""#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define MAX_TAPS 8
#define TILE 64

template<typename T>
__constant__ T taps [MAX_TAPS];

template<typename T>
__global__
void smooth(const T * __restrict__ in,
                  T * __restrict__ out,
            const int n,
            const int ntaps)
{
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= n) return;
  T s = 0;
  for (int j = 0; j < ntaps; j++) {
    int k = i + j - ntaps / 2;
    if (k >= 0 && k < n) s += in[k] * taps<T>[j];
  }
  out[i] = s;
}

// the same filter through a shared tile of the input (the halo read from global memory)
template<typename T>
__global__
void smooth_tiled(const T * __restrict__ in,
                        T * __restrict__ out,
                  const int n,
                  const int ntaps)
{
  __shared__ T tile[TILE];
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  tile[threadIdx.x] = i < n ? in[i] : (T)0;
  __syncthreads();
  int lo = blockIdx.x * blockDim.x, hi = lo + blockDim.x;
  T s = 0;
  for (int j = 0; j < ntaps; j++) {
    int k = i + j - ntaps / 2;
    if (k >= lo && k < hi) s += tile[k - lo] * taps<T>[j];
    else if (k >= 0 && k < n) s += in[k] * taps<T>[j];
  }
  if (i < n) out[i] = s;
}

template <typename T>
void run(const int n, const int ntaps)
{
  T h_taps[MAX_TAPS];
  for (int j = 0; j < ntaps; j++) h_taps[j] = (T)(j + 1) / (T)4;
  cudaMemcpyToSymbol(taps<T>, h_taps, ntaps * sizeof(T));
  T *h_in = (T*) malloc(n * sizeof(T));
  for (int i = 0; i < n; i++) h_in[i] = (T)(i % 7) - (T)2;
  T *d_in, *d_out;
  cudaMalloc((void**)&d_in, n * sizeof(T));
  cudaMalloc((void**)&d_out, n * sizeof(T));
  cudaMemcpy(d_in, h_in, n * sizeof(T), cudaMemcpyHostToDevice);
  smooth <<< (n + TILE - 1) / TILE, TILE >>> (d_in, d_out, n, ntaps);
  smooth_tiled <<< (n + TILE - 1) / TILE, TILE >>> (d_in, d_out, n, ntaps);
  cudaMemcpy(h_in, d_out, n * sizeof(T), cudaMemcpyDeviceToHost);
  printf("%f\n", (double)h_in[n / 2]);
  cudaFree(d_in); cudaFree(d_out); free(h_in);
}

int main() {
  run<float>(1000, 5);
  run<double>(1000, 5);
  return 0;
}
"""


def test_each_instance_reads_its_own_specialisation_as_a_constant_global(tmp_path):
    (tmp_path / "smooth.cu").write_text(PROGRAM)
    parsed = parse_file(tmp_path / "smooth.cu")
    assert not [d for d in parsed.diagnostics if d.severity.value == "error"], parsed.diagnostics
    globals_ = {g.name: g for g in parsed.unit.globals}
    assert set(globals_) == {"taps_float", "taps_double"}
    assert (globals_["taps_float"].spelling, globals_["taps_double"].spelling) == ("taps<float>", "taps<double>")
    assert globals_["taps_float"].storage == "constant"
    assert globals_["taps_float"].type == m.Array(m.Scalar("float32"), 8)
    assert globals_["taps_double"].type == m.Array(m.Scalar("float64"), 8)
    kernels = {k.name: k for k in parsed.unit.kernels}
    for name in ("smooth", "smooth_tiled"):
        instances = {i.name: i for i in kernels[name].instances}
        assert set(instances) == {f"{name}__float", f"{name}__double"}
        for inst, own in ((f"{name}__float", "taps_float"), (f"{name}__double", "taps_double")):
            refs = {n.name for n in m.walk(instances[inst].body) if isinstance(n, m.Ref) and n.kind == "constant"}
            assert refs == {own}, (inst, refs)


def test_the_instances_convert_and_compute_the_filter(tmp_path):
    pytest.importorskip("tilelang")
    import torch

    out = program_converted(tmp_path, PROGRAM, "smooth.cu")
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert {name: k["form"] for name, k in rows.items()} == {"smooth": "tile", "smooth_tiled": "tile"}
    text = (out / "smooth.py").read_text()
    assert "taps_float: T.Tensor((8,), T.float32)" in text and "taps_double: T.Tensor((8,), T.float64)" in text
    assert "spellings=(('taps_float', 'taps<float>'),)" in text
    mod = module_of(out / "smooth.py")
    n, ntaps = 300, 5
    for dtype, np_type, tol in ((torch.float32, np.float32, 1e-5), (torch.float64, np.float64, 1e-12)):
        x = np.array([(i % 7) - 2.0 + 0.125 * (i % 3) for i in range(n)], dtype=np_type)
        w = np.array([(j + 1) / 4.0 for j in range(8)], dtype=np_type)
        expected = np.zeros(n, dtype=np.float64)
        for i in range(n):
            for j in range(ntaps):
                k = i + j - ntaps // 2
                if 0 <= k < n:
                    expected[i] += float(x[k]) * float(w[j])
        name = "taps_float" if np_type is np.float32 else "taps_double"
        for kernel in (mod.smooth, mod.smooth_tiled):
            y = torch.full((n,), float("nan"), dtype=dtype)
            kernel(torch.from_numpy(x.copy()), y, n, ntaps, grid=(n + 63) // 64, block=64,
                   template=(str(np_type.__name__),), target="c", symbols={name: torch.from_numpy(w.copy())})
            np.testing.assert_allclose(y.numpy(), expected, rtol=tol, atol=tol)


def test_the_recorder_leaves_a_variable_template_alone_when_its_head_is_on_the_line_above():
    text = "template<typename T>\n__constant__ T taps [8];\n__constant__ float plain[4];\n"
    rewritten = register_constants(text)
    assert 'add_symbol("plain"' in rewritten and 'add_symbol("taps"' not in rewritten


def test_the_launcher_names_a_spelled_symbol_by_its_cpp_and_registers_it():
    text, _k, smap, _m = launcher_text([], ["taps_float"], None, {"taps_float": "taps<float>"})
    assert "::c2t::set_symbol(taps<float>, \"taps_float\"" in text
    assert 'add_symbol("taps_float", sizeof(taps<float>)' in text and set(smap) == {"taps_float"}


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_the_recorded_launches_hold_each_specialisation_and_replay_equal(tmp_path):
    pytest.importorskip("tilelang")
    src = tmp_path / "src" / "smooth.cu"
    src.parent.mkdir()
    src.write_text(PROGRAM)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", ""]) == 0
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    for name, k in rows.items():
        assert (k["check"]["status"], k["check"]["inputs"]) == ("pass", "trace"), (name, k["check"])
        assert "2 recorded launches" in k["check"]["message"]  # the float and the double instance
    # a module reading the next tap fails the replay
    module = out / "smooth.py"
    text = module.read_text()
    wrong = text.replace("in_[k] * taps_double[j]", "in_[k] * taps_double[(j + 1) % 8]")
    assert wrong != text
    module.write_text(wrong)
    assert main(["check", "--from", str(out), "--run", ""]) == 1
