"""Kernels launched in the methods of a class template (a hash table's
``template <class K, class V> void Table<K, V>::insert(...) { insert_kernel<K, V><<<...>>>(...); }``,
defined in its class or out of it): the methods' calls on instances of the class
(``Table<uint64, uint32> t; t.insert(...)``, a ``new Table<int, float>``, and calls from the
class's other methods) give the kernel its instances. Before, launches in methods were not read
at all and such kernels were never instantiated (M1208). A header's kernels that read a variable
template (``EMPTY_KEY<K, V>``) are valued per instance in their includer's context, as a ``.cu``
file's are."""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.parse.frontend import parse_file
from tests.analysis.support import module_of

TABLE = """#include <cuda_runtime.h>
typedef unsigned int uint32;
typedef unsigned long long uint64;
template <typename KeyT, typename ValueT>
__global__ void fill_kernel(KeyT* keys, ValueT* vals, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { keys[i] = (KeyT)(3 * i); vals[i] = (ValueT)(2 * i + 1); }
}
template <typename KeyT, typename ValueT>
__global__ void unused_kernel(KeyT* keys, int n) { if (threadIdx.x < n) keys[threadIdx.x] = 0; }
template <typename KeyT, typename ValueT>
class Table {
public:
  Table(int n) : n(n) { cudaMalloc(&keys, n * sizeof(KeyT)); cudaMalloc(&vals, n * sizeof(ValueT)); }
  void fill();
  void fill_inline() { fill_kernel<KeyT, ValueT><<<(n + 63) / 64, 64>>>(keys, vals, n); }
  void refill() { this->fill(); }
  void clear() { unused_kernel<KeyT, ValueT><<<1, 64>>>(keys, n); }
private:
  KeyT* keys; ValueT* vals; int n;
};
template <typename KeyT, typename ValueT>
void Table<KeyT, ValueT>::fill() {
  fill_kernel<KeyT, ValueT><<<(n + 63) / 64, 64>>>(keys, vals, n);
}
"""

MAIN = TABLE + """
int main() {
  Table<uint64, uint32> t(100);
  t.fill();
  Table<int, float> *u = new Table<int, float>(10);
  u->fill_inline();
  Table<short, double> w(4);
  w.refill();
  return 0;
}
"""


def test_methods_of_class_templates_give_their_launches_instances(tmp_path):
    (tmp_path / "h.cu").write_text(MAIN)
    parsed = parse_file(tmp_path / "h.cu")
    found = {k.name: sorted(i.args for i in k.instantiations) for k in parsed.unit.kernels}
    # t.fill(); u->fill_inline(); w.refill() calls fill() of Table<short, double>
    assert found["fill_kernel"] == [("int", "float"), ("short", "double"), ("unsigned long long", "unsigned int")]
    assert found["unused_kernel"] == []  # clear() is never called: C++ never instantiates it
    callers = sorted({s.caller for s in parsed.unit.launches})
    assert callers == ["Table::clear", "Table::fill", "Table::fill_inline"]


HEADER = """#pragma once
template <typename KeyT, typename ValueT>
constexpr KeyT empty_key() {
  if constexpr (sizeof(KeyT) == 8) return ~0ull; else return (KeyT)0xffffffffu;
}
template <typename KeyT, typename ValueT>
const KeyT EMPTY_KEY = empty_key<KeyT, ValueT>();

template <typename KeyT, typename ValueT>
__global__ void mark_kernel(int* flags, const KeyT* keys, const ValueT* vals, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) flags[i] = (keys[i] != EMPTY_KEY<KeyT, ValueT>) ? (int)vals[i] : -1;
}

template <typename KeyT, typename ValueT>
__global__ void insert_kernel(KeyT* ht_keys, ValueT* ht_values, const KeyT* keys, const ValueT* values,
                              const int len, const int capacity) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < len) {
    KeyT key = keys[idx];
    KeyT loc = key % capacity;
    while (true) {
      KeyT prev = atomicCAS(&ht_keys[loc], EMPTY_KEY<KeyT, ValueT>, key);
      if (prev == EMPTY_KEY<KeyT, ValueT>) { ht_values[loc] = values[idx]; return; }
      else if (prev == key) return;
      loc = (loc + 1) % capacity;
    }
  }
}

template <typename KeyT, typename ValueT>
class HashSet {
public:
  void mark(int* flags, const KeyT* keys, const ValueT* vals, int n);
  void insert(KeyT* hk, ValueT* hv, const KeyT* keys, const ValueT* vals, int n, int cap) {
    insert_kernel<KeyT, ValueT><<<(n + 127) / 128, 128>>>(hk, hv, keys, vals, n, cap);
  }
};
template <typename KeyT, typename ValueT>
void HashSet<KeyT, ValueT>::mark(int* flags, const KeyT* keys, const ValueT* vals, int n) {
  mark_kernel<KeyT, ValueT><<<(n + 127) / 128, 128>>>(flags, keys, vals, n);
}
"""

INCLUDER = """#include <cuda_runtime.h>
typedef unsigned int uint32;
typedef unsigned long long uint64;
#include "hash_set.h"
int main() {
  HashSet<uint64, uint32> a;
  HashSet<uint32, uint32> b;
  int* f; uint64* k; uint32* k32; uint32* v;
  a.mark(f, k, v, 256);
  b.mark(f, k32, v, 256);
  uint32 *hk, *hv;
  b.insert(hk, hv, k32, v, 256, 512);
  return 0;
}
"""


def test_header_kernels_read_variable_templates_per_instance(tmp_path):
    pytest.importorskip("tilelang")
    from migrate.cli import main
    src = tmp_path / "src"
    src.mkdir()
    (src / "hash_set.h").write_text(HEADER)
    (src / "main.cu").write_text(INCLUDER)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert rows["mark_kernel"]["form"] == "tile"
    assert sorted(map(tuple, rows["mark_kernel"]["template_instances"])) == [
        ("unsigned int", "unsigned int"), ("unsigned long long", "unsigned int")]
    mod = module_of(out / "hash_set_h.py")
    rng = np.random.default_rng(3)
    n = 200
    for key_type, dtype, empty in (("unsigned long long", np.uint64, np.uint64(2**64 - 1)),
                                   ("unsigned int", np.uint32, np.uint32(2**32 - 1))):
        keys = rng.integers(0, 1000, 256).astype(dtype)
        keys[::3] = empty
        vals = rng.integers(1, 1000, 256).astype(np.uint32)
        flags = np.full(256, 12345, np.int32)
        mod.mark_kernel(flags, keys, vals, n, grid=2, block=128, template=(key_type, "unsigned int"), target="c")
        expected = np.where(keys != empty, vals.astype(np.int64), -1)[:n]
        np.testing.assert_array_equal(flags[:n], expected)
        assert (flags[n:] == 12345).all()
    assert rows["insert_kernel"]["form"] not in ("hybrid", "unsupported")
    assert rows["insert_kernel"]["template_instances"] == [["unsigned int", "unsigned int"]]
    # an open-addressing insert: every distinct key lands once, with the value of one of its
    # copies (any: the CUDA threads race), and the empty slots keep the empty key
    empty = np.uint32(2**32 - 1)
    keys = rng.integers(0, 300, 200).astype(np.uint32)
    vals = (keys * 7 + 1).astype(np.uint32)
    hk = np.full(512, empty, np.uint32)
    hv = np.full(512, 99, np.uint32)
    mod.insert_kernel(hk, hv, keys, vals, 200, 512, grid=2, block=128, template=("unsigned int", "unsigned int"),
                      target="c")
    stored = hk[hk != empty]
    assert sorted(stored.tolist()) == sorted(set(keys.tolist()))
    np.testing.assert_array_equal(hv[hk != empty], stored * 7 + 1)
    assert (hv[hk == empty] == 99).all()


def test_unsigned_empty_key_test_lowers_for_sm90(tmp_path):
    """The insert's ``if (prev == EMPTY_KEY<uint32, uint32>)`` around its store stopped TVM's
    region detector ("Literal value -4294967295 is negative for unsigned integer type uint32", on
    the GPU and the C target); the runtime's pass fix writes it ``(prev ^ C) == 0``."""
    pytest.importorskip("tilelang")
    import tilelang
    import tvm

    from migrate.cli import main
    from migrate.runtime import tilelang_support as ts
    src = tmp_path / "src"
    src.mkdir()
    (src / "hash_set.h").write_text(HEADER)
    (src / "main.cu").write_text(INCLUDER)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    mod = module_of(out / "hash_set_h.py")
    ts.patch_passes()  # as tests.lowering.lower_sm90, at the instance's template arguments
    func, configs = ts.prim_func(mod.KERNELS["insert_kernel"], (2, 1, 1), (128, 1, 1), 0,
                                 ("unsigned int", "unsigned int"), "cuda")
    func = func.with_attr("cuda2tile_pass_fixes", ts.PASS_FIXES)
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with tvm.transform.PassContext(config=configs), target:
        source = tilelang.lower(func, target=target).kernel_source
    assert "4294967295" in source and "atomicCAS" in source
