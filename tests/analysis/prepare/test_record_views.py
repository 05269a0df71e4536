"""A buffer read and written through a struct template of one element type (a copy benchmark's
``template <typename T, int N> struct alignas(sizeof(T) * N) data_t { T data[N]; };`` and
``*out_vec = *in_vec`` through ``reinterpret_cast<vec_t*>(in + index)``): each instance's struct
is laid out as lanes (parse.build: an implicit instance keeping only its ``alignas`` attribute, of
a template with a value parameter and no methods), and a record whose words are its lanes in
order, all of the buffer's type, views the buffer as a CUDA vector does (analysis.prepare.vectors).
Each instance runs on TileLang's C target against numpy."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.support import converted, module_of

COPY = """
template <typename T, int VEC_SIZE>
struct alignas(sizeof(T) * VEC_SIZE) data_t {
  T data[VEC_SIZE];
};

template <typename T, int vec_size>
__global__ void vec_copy(const T *in, T *out, const size_t n) {
  const int block_work_size = blockDim.x * vec_size;
  auto index = static_cast<size_t>(blockIdx.x) * block_work_size + threadIdx.x * vec_size;
  if (index >= n) return;
  auto remaining = n - index;
  if (remaining < vec_size) {
    for (auto i = index; i < n; i++) out[i] = in[i] + (T)1;
  } else {
    using vec_t = data_t<T, vec_size>;
    auto in_vec = reinterpret_cast<const vec_t *>(in + index);
    auto out_vec = reinterpret_cast<vec_t *>(out + index);
    *out_vec = *in_vec;
  }
}

int main() {
  int *a, *b; short *c, *d; float *e, *f;
  vec_copy<int, 4><<<4, 64>>>(a, b, 1000);
  vec_copy<short, 8><<<4, 64>>>(c, d, 1000);
  vec_copy<float, 2><<<4, 64>>>(e, f, 1000);
}
"""


def test_a_struct_template_of_one_element_type_views_the_buffer(tmp_path):
    out, (k,) = converted(tmp_path, COPY)
    assert k["form"] not in ("hybrid", "unsupported"), k["diagnostics"]
    pytest.importorskip("tilelang")
    import torch
    module = module_of(out / "k.py")
    rng = np.random.default_rng(29)
    n = 1000  # the last thread's chunk runs past n: its elements are copied one by one, plus one
    for dtype, torch_dtype, vec in (("int32", torch.int32, 4), ("int16", torch.int16, 8),
                                    ("float32", torch.float32, 2)):
        a = rng.integers(-1000, 1000, n).astype(dtype)
        got = torch.full((n,), 77, dtype=torch_dtype)  # poisoned
        grid = (n + 64 * vec - 1) // (64 * vec)
        ctype = {"int32": "int", "int16": "short", "float32": "float"}[dtype]
        module.vec_copy(torch.from_numpy(a), got, n, grid=grid, block=64, template=(ctype, vec), target="c")
        want = a.copy()
        tail = (n // vec) * vec
        want[tail:] = a[tail:] + 1
        assert np.array_equal(got.numpy(), want), dtype
