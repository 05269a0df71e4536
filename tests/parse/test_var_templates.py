"""Variable templates read in templates, the way hash tables are written (``HASHTABLE_EMPTY_KEY<KeyT,
ValueT>`` in ``retrieve<KeyT, ValueT>``, a constant that a constexpr function of the types computes
through a class template's static method): each instance the program's calls write is valued by
clang in one more parse, the device function is inlined at each call with its instance's value, and
a kernel template reading one on its own type looks the value up by the dtype it is given. The
lookup kernel runs on the CPU against a reference computed here; a static member of a template's
instance (``std::is_same<float, half>::value``) is its value, not a name."""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.ir import model as m
from migrate.parse.frontend import parse_file
from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
#include <cuda_fp16.h>
typedef unsigned long long u64;
typedef unsigned int u32;

template <typename K, typename V> struct Slots {
  __host__ __device__ static constexpr K empty_key() { return (K)~0ull; }
};
template <typename K, typename V> constexpr K empty_key_of() { return Slots<K, V>::empty_key(); }
template <typename T, typename U> struct same { static constexpr bool value = false; };
template <typename T> struct same<T, T> { static constexpr bool value = true; };

namespace table {
template <typename K, typename V> const K EMPTY_KEY = empty_key_of<K, V>();
template <typename V> constexpr V MISSING = V(7);
}

template <typename K, typename V>
__device__ V retrieve(const K* keys, const V* vals, K key, int capacity) {
  K loc = key % capacity;
  for (int probe = 0; probe < capacity; probe++) {
    if (keys[loc] == key) return vals[loc];
    if (keys[loc] == table::EMPTY_KEY<K, V>) break;
    loc = (loc + 1) % capacity;
  }
  return table::MISSING<V>;
}

__global__ void lookup(const u64* keys, const u32* vals, const u64* queries, u32* out, int n, int capacity) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool narrow = same<float, half>::value;
  if (i < n) out[i] = retrieve<u64, u32>(keys, vals, queries[i], capacity) + (narrow ? 1u : 0u);
}

template <typename T>
__global__ void fill_missing(T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = table::MISSING<T> * (T)2;
}

int main() {
  u64 *keys, *queries; u32 *vals, *out; float* yf; int* yi;
  cudaMalloc(&keys, 64 * 8); cudaMalloc(&vals, 64 * 4); cudaMalloc(&queries, 256 * 8); cudaMalloc(&out, 256 * 4);
  cudaMalloc(&yf, 256 * 4); cudaMalloc(&yi, 256 * 4);
  lookup<<<2, 128>>>(keys, vals, queries, out, 256, 64);
  fill_missing<float><<<2, 128>>>(yf, 256);
  fill_missing<int><<<2, 128>>>(yi, 256);
  cudaDeviceSynchronize();
  return 0;
}
"""


def test_each_instance_is_valued(tmp_path):
    (tmp_path / "ht.cu").write_text(PROGRAM)
    parsed = parse_file(tmp_path / "ht.cu")
    assert not [d for d in parsed.diagnostics if d.severity.value == "error"], parsed.diagnostics
    (retrieve,) = [f for f in parsed.unit.device_functions if f.name == "retrieve"]
    tables = {n.callee: dict(n.dispatch[1]) for n in m.walk(retrieve.body)
              if isinstance(n, m.Call) and n.kind == "var_template"}
    assert tables["table::EMPTY_KEY"][("uint64", "uint32")].value == 2 ** 64 - 1  # through Slots<K, V>::empty_key()
    assert tables["table::MISSING"][("uint32",)].value == 7
    (fill,) = [k for k in parsed.unit.kernels if k.name == "fill_missing"]
    (call,) = [n for n in m.walk(fill.body) if isinstance(n, m.Call) and n.kind == "var_template"]
    values = {k: v.value for k, v in call.dispatch[1]}  # its instances' (and retrieve's uint32)
    assert values[("float32",)] == 7.0 and values[("int32",)] == 7
    assert not any(d.span.line > PROGRAM.count("\n") for d in parsed.diagnostics)  # nothing of the probes


def test_the_lookup_converts_and_runs(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "ht.cu")
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert rows["lookup"]["form"] not in ("hybrid", "unsupported") and rows["fill_missing"]["form"] not in ("hybrid", "unsupported")
    text = (out / "ht.py").read_text()
    assert "T.uint64(18446744073709551615)" in text
    mod = module_of(out / "ht.py")
    rng = np.random.default_rng(11)
    cap, n = 64, 256
    keys = np.full(cap, np.iinfo(np.uint64).max, np.uint64)
    vals = np.zeros(cap, np.uint32)
    stored = rng.choice(10_000, 40, replace=False).astype(np.uint64)
    for k in stored:  # linear probing, as the kernel reads it
        loc = int(k) % cap
        while keys[loc] != np.iinfo(np.uint64).max:
            loc = (loc + 1) % cap
        keys[loc], vals[loc] = k, np.uint32(int(k) * 3 + 1)
    queries = np.where(rng.random(n) < 0.6, rng.choice(stored, n), rng.integers(10_000, 20_000, n)).astype(np.uint64)
    got = np.full(n, 0xDEADBEEF, np.uint32)
    mod.lookup(keys, vals, queries, got, n, cap, grid=2, block=128, target="c")
    present = np.isin(queries, stored)
    expected = np.where(present, queries * 3 + 1, 7).astype(np.uint32)
    np.testing.assert_array_equal(got, expected)
    assert present.any() and not present.all()
    for dtype, template in ((np.float32, ("float",)), (np.int32, ("int",))):
        y = np.full(n, -1, dtype)
        mod.fill_missing(y, n, grid=2, block=128, template=template, target="c")
        np.testing.assert_array_equal(y, np.full(n, 14, dtype))
