"""``*this`` in a method of one of the project's structs (nbnxm's ``BasicVector::operator+=``:
``return *this = *this + right;``) is the object the method is called on (the model's ``this_``);
a bare ``this`` (the pointer as a value) is still refused by name."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.support import converted, module_of

SOURCE = """
struct Acc {
  float a, b;
  __device__ Acc plus(const Acc& r) const { return Acc{a + r.a, b + r.b}; }
  __device__ Acc& add(const Acc& r) { return *this = plus(r); }
  __device__ float dot() const { return (*this).a * 2.0f + b; }
};

__global__ void accumulate(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Acc s{0.0f, 1.0f};
  for (int k = 0; k < 3; k++) s.add(Acc{x[i] * (float)k, 0.5f});
  y[i] = s.dot();
}
"""


def test_deref_this_is_the_object_on_cpu(tmp_path):
    pytest.importorskip("tilelang")
    out, rows = converted(tmp_path, SOURCE)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["reason"]
    mod = module_of(out / "k.py")
    n = 70
    x = np.linspace(-2, 3, n, dtype=np.float32)
    y = np.full(n, np.nan, np.float32)
    mod.accumulate(x, y, n, grid=1, block=128, target="c")
    a = x * np.float32(0) + x * np.float32(1) + x * np.float32(2)
    np.testing.assert_allclose(y, a * np.float32(2) + np.float32(2.5), rtol=1e-6)


def test_this_as_a_pointer_value_is_refused_by_name(tmp_path):
    source = SOURCE.replace("return (*this).a * 2.0f + b;", "return (this == nullptr ? 0.0f : a) * 2.0f + b;")
    out, rows = converted(tmp_path, source, expect_ok=False)
    (row,) = rows
    assert row["form"] in ("hybrid", "unsupported")
    assert any(d["code"] == "M1206" and "('this')" in d["message"] for d in row["diagnostics"]), row["diagnostics"]
