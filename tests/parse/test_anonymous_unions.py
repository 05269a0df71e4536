"""Structs whose fields sit in an anonymous union of views, as d3q19-bgk's ``outer_wall``
(``union { struct { int xmin, xmax, ...; }; int el[6]; }``) and ssim's ``gdt::vec_t<T, 3>``
(``union { struct { T x, y, z; }; struct { T r, s, t; }; }``, a partial specialisation of a struct
template): the struct's lanes are the fields of the union's first alternative, and a field of
another alternative at the same offset and of the same type is another name for that lane
(``v.r`` is ``v.x``, read or written). A member no lane names (``el``, an array over several of
them) is refused by name (M1206), never guessed."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from migrate.cli import main
from tests.analysis.support import converted, module_of

SOURCE = """
typedef struct wall {
  union {
    struct { int xmin, xmax, ymin; };
    int el[3];
  };
} wall;

template <typename T, int N> struct vec_t { T v[N]; };
template <typename T> struct vec_t<T, 3> {
  typedef T scalar_t;
  __host__ __device__ T sum() const { return x + y + z; }
  union {
    struct { T x, y, z; };
    struct { T r, s, t; };
  };
};

__global__ void walls(int* out, float* fout, wall w, vec_t<float, 3> v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  vec_t<int, 3> a;
  a.r = i;          // a.x
  a.s = 2 * i + 1;  // a.y
  a.t = w.ymin;     // a.z
  int k = i % 3;
  out[i] = (k == 0 ? w.xmin : k == 1 ? w.xmax : w.ymin) + 1000 * a.x + 10 * a.y + a.z;
  fout[i] = v.r * (float)i + v.s - v.z;
}
"""


def test_fields_of_an_anonymous_union_are_the_lanes_of_its_first_alternative(tmp_path):
    pytest.importorskip("tilelang")
    out, rows = converted(tmp_path, SOURCE)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["reason"]
    assert not [d for d in row["diagnostics"] if d["severity"] == "error"], row["diagnostics"]
    text = (out / "k.py").read_text()
    assert "w_xmin: T.int32" in text and "w_ymin: T.int32" in text and "v_x: T.float32" in text
    assert "v_r" not in text and "w_el" not in text
    mod = module_of(out / "k.py")
    n = 100
    ibuf = np.full(n, -7777777, np.int32)  # poisoned
    fbuf = np.full(n, np.nan, np.float32)
    w_bytes = struct.pack("<iii", 5, -9, 42)
    v_bytes = struct.pack("<fff", 1.5, -0.25, 3.0)
    mod.walls(ibuf, fbuf, w_bytes, v_bytes, n, grid=1, block=128, target="c")
    i = np.arange(n)
    pick = np.where(i % 3 == 0, 5, np.where(i % 3 == 1, -9, 42))
    np.testing.assert_array_equal(ibuf, (pick + 1000 * i + 10 * (2 * i + 1) + 42).astype(np.int32))
    want = (np.float32(1.5) * i.astype(np.float32) + np.float32(-0.25) - np.float32(3.0)).astype(np.float32)
    np.testing.assert_allclose(fbuf, want, rtol=1e-6)


def test_a_member_no_lane_names_is_refused_by_name(tmp_path):
    source = SOURCE.replace("out[i] = (k == 0", "out[i] = w.el[1] + (k == 0")
    out, rows = converted(tmp_path, source, expect_ok=False)
    (row,) = rows
    assert row["form"] in ("hybrid", "unsupported")
    errors = [d for d in row["diagnostics"] if d["severity"] == "error"]
    assert errors and errors[0]["code"] == "M1206", errors
    assert "member 'el' of an anonymous union" in errors[0]["message"]
