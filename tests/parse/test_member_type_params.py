"""A kernel template never instantiated in its unit that reads its type parameter only through a
member type (miniFE's ``waxby_kernel<VectorType>`` with ``typename VectorType::ScalarType``
parameters, launched from host templates only other units instantiate): each member type so
written is a type parameter of its own (``VectorType_ScalarType``), so the kernel converts
generically and its factory takes the member's dtype. Before, the member type had no dtype and the
kernels were unsupported (M3001)."""
from __future__ import annotations

import numpy as np
import pytest

from migrate.ir import model as m
from migrate.parse.frontend import parse_file
from tests.analysis.support import module_of, program_converted

SOURCE = """#include <cuda_runtime.h>
namespace fe {
  template <typename VectorType>
    __global__ void waxby_kernel(
        const int n,
        const typename VectorType::ScalarType alpha,
        const typename VectorType::ScalarType *xcoefs,
        const typename VectorType::ScalarType beta,
        const typename VectorType::ScalarType *ycoefs,
        typename VectorType::ScalarType *wcoefs)
    {
      int idx = blockIdx.x * blockDim.x + threadIdx.x;
      if (idx < n) wcoefs[idx] = alpha * xcoefs[idx] + beta * ycoefs[idx];
    }

  template <typename VectorType>
    __global__ void dyax_kernel(const int n, const typename VectorType::ScalarType alpha,
        const typename VectorType::ScalarType *xcoefs, typename VectorType::ScalarType *ycoefs)
    {
      typedef typename VectorType::ScalarType Scalar;
      int idx = blockIdx.x * blockDim.x + threadIdx.x;
      Scalar t = alpha * xcoefs[idx];
      if (idx < n) ycoefs[idx] += t;
    }

  template <int B, typename MatrixType>
    __global__ void scale_rows(const typename MatrixType::LocalOrdinalType rows,
        const typename MatrixType::ScalarType *d, typename MatrixType::ScalarType *y)
    {
      typename MatrixType::LocalOrdinalType row = blockIdx.x * B + threadIdx.x;
      if (row < rows) y[row] = d[row] * y[row];
    }

  template <typename VectorType>
    void daxpby(int n, typename VectorType::ScalarType alpha, typename VectorType::ScalarType *x,
                typename VectorType::ScalarType *y)
    {
      dyax_kernel<VectorType><<<(n + 255) / 256, 256>>>(n, alpha, x, y);
    }
}
"""


def test_member_types_are_parameters_of_their_own(tmp_path):
    (tmp_path / "v.cu").write_text(SOURCE)
    parsed = parse_file(tmp_path / "v.cu")
    kernels = {k.name: k for k in parsed.unit.kernels}
    assert [(p.name, p.kind) for p in kernels["waxby_kernel"].template_params] == [
        ("VectorType_ScalarType", "type")]  # VectorType itself is named nowhere else
    assert [p.name for p in kernels["scale_rows"].template_params] == [
        "B", "MatrixType_LocalOrdinalType", "MatrixType_ScalarType"]
    assert kernels["waxby_kernel"].params[1].type == m.TemplateType("VectorType_ScalarType")
    assert kernels["waxby_kernel"].params[2].type.pointee == m.TemplateType("VectorType_ScalarType")
    assert not [d for d in parsed.diagnostics if d.severity.value == "error"], parsed.diagnostics


def test_instantiated_kernels_keep_their_parameters(tmp_path):
    source = """#include <cuda_runtime.h>
    struct V { typedef float ScalarType; };
    template <typename VectorType>
    __global__ void wx(int n, const typename VectorType::ScalarType *x, typename VectorType::ScalarType *w)
    { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) w[i] = x[i]; }
    int main() { float *x, *w; wx<V><<<1, 64>>>(64, x, w); return 0; }
    """
    (tmp_path / "w.cu").write_text(source)
    (k,) = parse_file(tmp_path / "w.cu").unit.kernels
    assert "VectorType_ScalarType" not in [p.name for p in k.template_params]
    assert [i.args for i in k.instantiations] == [("V",)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_member_typed_kernels_compute_as_cuda(tmp_path, dtype):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, SOURCE, "v.cu")
    import json
    forms = {k["kernel"]: k["form"] for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert forms == {"waxby_kernel": "tile", "dyax_kernel": "tile", "scale_rows": "tile"}
    mod = module_of(out / "v.py")
    ctype = {"float64": "double", "float32": "float"}[dtype]
    rng = np.random.default_rng(7)
    n = 300
    x = rng.uniform(-2, 2, 320).astype(dtype)
    y = rng.uniform(-2, 2, 320).astype(dtype)
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == "float64" else dict(rtol=1e-6, atol=1e-6)

    w = np.full(320, np.nan, dtype)
    mod.waxby_kernel(n, 1.5, x, -0.25, y, w, grid=2, block=256, template=(ctype,), target="c")
    np.testing.assert_allclose(w[:n], (np.asarray(1.5, dtype) * x + np.asarray(-0.25, dtype) * y)[:n], **tol)
    assert np.isnan(w[n:]).all()

    y2 = y.copy()
    mod.dyax_kernel(n, 0.5, x, y2, grid=2, block=256, template=(ctype,), target="c")
    np.testing.assert_allclose(y2[:n], (y + np.asarray(0.5, dtype) * x)[:n], **tol)
    np.testing.assert_array_equal(y2[n:], y[n:])

    y3 = y.copy()
    mod.scale_rows(n, x, y3, grid=3, block=128, template=("128", "int", ctype), target="c")
    np.testing.assert_allclose(y3[:n], (x * y)[:n], **tol)
    np.testing.assert_array_equal(y3[n:], y[n:])
