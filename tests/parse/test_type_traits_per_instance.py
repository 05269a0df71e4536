"""A kernel template whose body names a type only an instance resolves (a compression code's
``using UINPUT = typename std::make_unsigned<INPUT>::type; __shared__ UINPUT buf[...]``), launched
with its arguments deduced from pointers declared ``T const* const`` in a host template that a
dispatch on a type code calls with explicit arguments, two host templates up.

The launch's arguments are deduced through the pointers' own ``const`` (as C++ drops a parameter's
top-level qualifiers), so the kernel has the dispatch's instances; and the dependent type makes it
converted per instance, where clang resolves the trait (``unsigned short`` for ``short``). Each
instance runs on the CPU against a numpy reference in which the unsigned type matters: a negative
difference zero-extends."""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.cli import main
from migrate.ir import model as m
from migrate.parse.frontend import parse_file

PROGRAM = """
#include <cstdint>
#include <type_traits>
#include <cuda_runtime.h>

template <typename INPUT, typename OUTPUT>
__global__ void pack_low(INPUT const* const in, INPUT const* const offsetPtr, OUTPUT* const out,
                         const int shift, const int n) {
  using UINPUT = typename std::make_unsigned<INPUT>::type;
  __shared__ UINPUT buf[64];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const INPUT offset = *offsetPtr;
  buf[threadIdx.x] = i < n ? static_cast<UINPUT>(in[i] - offset) : 0;
  __syncthreads();
  OUTPUT v = static_cast<OUTPUT>(buf[threadIdx.x]);
  v ^= static_cast<OUTPUT>(buf[(threadIdx.x + 1) % 64]) << shift;
  if (i < n) out[i] = v;
}

template <typename INPUT, typename OUTPUT>
void launch(const INPUT* const in, const INPUT* const offset, OUTPUT* const out, int shift, int n) {
  pack_low<<<(n + 63) / 64, 64>>>(in, offset, out, shift, n);
}

template <typename I, typename O, typename L>
void pack(const void* in, const void* offset, void* out, int shift, int n) {
  launch(static_cast<const I*>(in), reinterpret_cast<const I*>(offset), static_cast<O*>(out), shift, n);
}

void dispatch(int code, const void* in, const void* offset, void* out, int shift, int n) {
  switch (code) {
    case 0: pack<short, uint32_t, short>(in, offset, out, shift, n); break;
    case 1: pack<signed char, uint64_t, signed char>(in, offset, out, shift, n); break;
  }
}

int main() {
  void *in, *off, *out;
  cudaMalloc(&in, 1024); cudaMalloc(&off, 8); cudaMalloc(&out, 4096);
  dispatch(0, in, off, out, 16, 128);
  dispatch(1, in, off, out, 40, 128);
  return 0;
}
"""


def test_launch_through_const_pointers_takes_the_dispatch_instances(tmp_path):
    (tmp_path / "pack.cu").write_text(PROGRAM)
    parsed = parse_file(tmp_path / "pack.cu")
    k = parsed.unit.kernel("pack_low")
    assert sorted(i.args for i in k.instantiations) == [("short", "unsigned int"),
                                                         ("signed char", "unsigned long")]
    assert not [d for d in parsed.diagnostics if d.code == "M1208"]


def _reference(x: np.ndarray, offset, unsigned, out, shift: int) -> np.ndarray:
    n = len(x)
    u = (x.astype(np.int64) - int(offset)).astype(unsigned)  # wraps, as the cast to UINPUT does
    padded = np.zeros(((n + 63) // 64) * 64, unsigned)
    padded[:n] = u
    nxt = padded.reshape(-1, 64)[:, np.r_[1:64, 0]].reshape(-1)[:n]
    return u.astype(out) ^ (nxt.astype(out) << out(shift))


def test_type_trait_resolved_per_instance_runs_on_cpu(tmp_path):
    pytest.importorskip("tilelang")
    import importlib.util

    (tmp_path / "pack.cu").write_text(PROGRAM)
    out_dir = tmp_path / "out"
    assert main(["convert", str(tmp_path / "pack.cu"), "-o", str(out_dir), "-q"]) == 0
    (k,) = [k for k in json.loads((out_dir / "report.json").read_text())["kernels"] if k["kernel"] == "pack_low"]
    assert k["form"] in ("portable", "tile"), k["reason"]
    assert not [d for d in k["diagnostics"] if d["severity"] == "error"]
    text = (out_dir / "pack.py").read_text()
    # each instance's values pass through the trait's type (the shared buffer is forwarded)
    assert "T.Cast(T.uint16, T.Cast(T.int32, in_[" in text and "T.Cast(T.uint8, T.Cast(T.int32, in_[" in text
    spec = importlib.util.spec_from_file_location("pack_mod", out_dir / "pack.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rng = np.random.default_rng(11)
    n = 100
    for args, dtype, unsigned, outt, shift in ((("short", "unsigned int"), np.int16, np.uint16, np.uint32, 16),
                                               (("signed char", "unsigned long"), np.int8, np.uint8, np.uint64, 40)):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, n).astype(dtype)
        offset = np.array([info.max // 3], dtype)  # in - offset is negative for most elements
        y = np.full(n, 0xA5A5A5A5, outt)
        mod.pack_low(x, offset, y, shift, n, grid=2, block=64, template=args, target="c")
        np.testing.assert_array_equal(y, _reference(x, offset[0], unsigned, outt, shift))
