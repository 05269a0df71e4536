"""``static_cast<__half>(bf)`` and ``static_cast<__nv_bfloat16>(h)``: CUDA declares an explicit
constructor of each 16-bit float from the other (cuda_bf16.hpp, through float, to nearest even),
so a cast between them is not ambiguous. The prelude and the CPU executor declare them too: a
template converting between any two of the types the way a conversion benchmark does parses, is
converted per instance, and the original's cast rounds as CUDA's does."""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from migrate.cli import main
from migrate.ir import model as m
from migrate.parse.frontend import ParseOptions, parse_file
from migrate.runtime.build import find_cxx

SOURCE = """
#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <typename Td, typename Ts>
__global__ void cast_all(Td *__restrict__ dst, const Ts *__restrict__ src, const int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = static_cast<Td>(src[i]);
}
template <typename Td, typename Ts>
void run(int n) {
  Td *d; Ts *s;
  cudaMalloc((void **)&d, n * sizeof(Td));
  cudaMalloc((void **)&s, n * sizeof(Ts));
  cast_all<Td, Ts><<<(n + 255) / 256, 256>>>(d, s, n);
  cudaFree(d); cudaFree(s);
}
int main() {
  run<__half, __nv_bfloat16>(1000);
  run<__nv_bfloat16, __half>(1000);
  run<float, __nv_bfloat16>(1000);
  return 0;
}
"""


def test_cast_between_half_and_bfloat16_parses(tmp_path):
    path = tmp_path / "cvt.cu"
    path.write_text(textwrap.dedent(SOURCE))
    p = parse_file(path, ParseOptions())
    assert [d for d in p.diagnostics if d.code.startswith("M1")] == []
    k = p.unit.kernel("cast_all")
    assert [list(i.args) for i in k.instantiations] == [["__half", "__nv_bfloat16"], ["__nv_bfloat16", "__half"],
                                                         ["float", "__nv_bfloat16"]]


def test_cast_template_converts_to_the_tile_form(tmp_path):
    (tmp_path / "cvt.cu").write_text(textwrap.dedent(SOURCE))
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "cvt.cu"), "-o", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    (k,) = report["kernels"]
    assert (k["kernel"], k["form"]) == ("cast_all", "tile")
    assert not [d for d in k["diagnostics"] if d["severity"] == "error"]
    assert "dst[i] = T.Cast(Td, src[i])" in (out / "cvt.py").read_text()


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_executor_rounds_bfloat16_to_half_through_float(tmp_path):
    """The original on the CPU executor: bf16 -> half rounds the (exact) float value to nearest
    even, half -> bf16 likewise; compared with numpy's own float32 -> float16 rounding and a bit-level
    bf16 rounding of the float32 values."""
    from migrate.runtime.api import run_original
    from migrate.runtime.inputs import bits_to_bf16, round_to_bf16
    from migrate.runtime.spec import load_spec

    (tmp_path / "cvt.cu").write_text(textwrap.dedent(SOURCE))
    n = 1000
    (tmp_path / "cvt.toml").write_text(
        '[[kernel]]\nname = "cast_all"\nid = "to_half"\ntemplate = ["__half", "__nv_bfloat16"]\ngrid = [4]\nblock = [256]\n'
        'tolerance = "exact"\n'
        f'[[kernel.args]]\nname = "dst"\nbuffer = "float16"\nelements = {n}\nrole = "out"\n'
        f'[[kernel.args]]\nname = "src"\nbuffer = "bfloat16"\nelements = {n}\nrole = "in"\nrange = [-1.0, 1.0]\n'
        f'[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = {n}\n'
        '[[kernel]]\nname = "cast_all"\nid = "to_bf16"\ntemplate = ["__nv_bfloat16", "__half"]\ngrid = [4]\nblock = [256]\n'
        'tolerance = "exact"\n'
        f'[[kernel.args]]\nname = "dst"\nbuffer = "bfloat16"\nelements = {n}\nrole = "out"\n'
        f'[[kernel.args]]\nname = "src"\nbuffer = "float16"\nelements = {n}\nrole = "in"\nrange = [-1.0, 1.0]\n'
        f'[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = {n}\n')
    to_half, to_bf16 = load_spec(tmp_path / "cvt.toml")
    rng = np.random.default_rng(7)
    # bf16 values with more mantissa bits than half keeps, some past half's range, and subnormal ones
    bits = rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    bits[bits & 0x7F80 == 0x7F80] = 0x4049  # no NaN/inf inputs: 3.140625
    src = bits_to_bf16(bits)
    src[:8] = [1.0078125, -2.015625, 65504.0, 70000.0, 3.0517578e-05, 1e-7, 0.0, -0.0]
    src = round_to_bf16(src)
    dst = np.full(n, np.float16(-7.0))
    r = run_original(tmp_path / "cvt.cu", to_half, {"dst": dst, "src": src, "n": np.int32(n)})
    assert r.ok, r.message
    with np.errstate(over="ignore"):  # 70000 is past half: inf, as CUDA gives
        want = src.astype(np.float32).astype(np.float16)
    np.testing.assert_array_equal(r.outputs["dst"].view(np.uint16), want.view(np.uint16))

    h = rng.uniform(-300.0, 300.0, n).astype(np.float16)
    r = run_original(tmp_path / "cvt.cu", to_bf16, {"dst": np.full(n, -7.0, np.float32), "src": h,
                                                     "n": np.int32(n)})
    assert r.ok, r.message
    np.testing.assert_array_equal(r.outputs["dst"], round_to_bf16(h.astype(np.float32)))
