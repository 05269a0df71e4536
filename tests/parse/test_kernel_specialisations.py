"""A kernel template with explicit specialisations (``template <> __global__ void k<float>``), as
fma's ``implicit_fma_kernel`` writes a float4 body beside its scalar template and crossEntropy's
``loss_bwd<__half, __half>`` a body of half intrinsics: the launches of a specialised instance are
sized for the specialisation's own body, so the template's body run for them is wrong (on the GPU
the migrated fma kernel once updated an eighth of its output). The template's generic model stays
refused (M1206, naming the specialisations); each instance the program launches is converted as a
kernel of its own, from the specialisation's text where it has one, from the template's where it
has none, and the factory dispatches on the template arguments. An instance that names a
specialised type by an alias (``real`` for ``float``) is not matched by its text: clang's value of
its arguments shows it, and the template stays refused rather than run the template's body."""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from migrate.cli import main
from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

SPECIALISED = """
template <typename T>
__global__ void scale(const T* a, T* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] * (T)2;
}

template <>
__global__ void scale<float>(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * i + 1 < n) {
    b[2 * i] = a[2 * i] * 3.0f + 1.0f;
    b[2 * i + 1] = a[2 * i + 1] * 3.0f - 1.0f;
  }
}

template <typename T>
__global__ void shift(const T* a, T* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] + (T)1;
}

void run(const float* a, float* b, const double* c, double* d, int n) {
  scale<float><<<(n / 2 + 255) / 256, 256>>>(a, b, n);
  scale<double><<<(n + 255) / 256, 256>>>(c, d, n);
  shift<float><<<(n + 255) / 256, 256>>>(a, b, n);
  shift<double><<<(n + 255) / 256, 256>>>(c, d, n);
}
"""


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem + "_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_instance_runs_its_specialisation_or_the_template_on_cpu(tmp_path):
    pytest.importorskip("tilelang")
    (tmp_path / "k.cu").write_text(SPECIALISED)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "k.cu"), "-o", str(out), "-q"]) == 0
    rows = {r["kernel"]: r for r in json.loads((out / "report.json").read_text())["kernels"]}
    assert set(rows) == {"scale", "shift"}, rows
    scale = rows["scale"]
    assert scale["form"] not in ("hybrid", "unsupported"), scale["reason"]
    assert "converted per instance (2)" in scale["reason"], scale["reason"]
    assert not [d for d in scale["diagnostics"] if d["severity"] == "error"], scale["diagnostics"]
    text = (out / "k.py").read_text()
    assert "def make_scale__float(" in text and "def make_scale__double(" in text and "def make_scale(" in text
    # the float instance's lines are the specialisation's (L11-L12), the double's the template's (L5)
    float_part = text[text.index("def make_scale__float("):text.index("def make_scale__double(")]
    assert "# L11" in float_part and "# L12" in float_part and "# L5" not in float_part
    mod = _load(out / "k.py")
    rng = np.random.default_rng(5)
    n = 1000
    a = rng.uniform(-4, 4, n).astype(np.float32)
    b = np.full(n, np.nan, np.float32)  # poisoned
    mod.scale(a, b, n, grid=(n // 2 + 255) // 256, block=256, template=("float",), target="c")
    want = np.where(np.arange(n) % 2 == 0, a * np.float32(3) + np.float32(1), a * np.float32(3) - np.float32(1))
    np.testing.assert_allclose(b, want.astype(np.float32), rtol=1e-6)
    c = rng.uniform(-4, 4, n)
    d = np.full(n, np.nan)
    mod.scale(c, d, n, grid=(n + 255) // 256, block=256, template=("double",), target="c")
    np.testing.assert_array_equal(d, c * 2)


# the instance comes through a host template called with an alias: its argument is written ``real``
ALIASED = SPECIALISED.replace("  scale<float><<<(n / 2 + 255) / 256, 256>>>(a, b, n);\n", "  launch<real>(a, b, n);\n").replace(
    "void run(", """typedef float real;
template <typename T> void launch(const T* a, T* b, int n) { scale<T><<<(n / 2 + 255) / 256, 256>>>(a, b, n); }
void run(""")


def test_an_instance_through_a_host_template_and_an_alias_runs_the_specialisation(tmp_path):
    pytest.importorskip("tilelang")
    assert "launch<real>" in ALIASED and "scale<float><<<" not in ALIASED
    (tmp_path / "k.cu").write_text(ALIASED)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "k.cu"), "-o", str(out), "-q"]) == 0
    (scale,) = [r for r in json.loads((out / "report.json").read_text())["kernels"] if r["kernel"] == "scale"]
    assert scale["form"] not in ("hybrid", "unsupported"), scale["reason"]
    mod = _load(out / "k.py")
    n = 64
    a = np.linspace(-3, 5, n, dtype=np.float32)
    b = np.full(n, np.nan, np.float32)
    mod.scale(a, b, n, grid=1, block=256, template=("float",), target="c")
    want = np.where(np.arange(n) % 2 == 0, a * np.float32(3) + np.float32(1), a * np.float32(3) - np.float32(1))
    np.testing.assert_allclose(b, want.astype(np.float32), rtol=1e-6)


def test_a_copy_whose_arguments_clang_values_as_a_specialisations_is_refused():
    """The guard behind the copies: a copy of the template's text whose arguments clang values as
    a specialisation's (an argument spelled otherwise than the specialisation's, ``(128)`` for
    ``128``) would run the template's body for a specialised instance; a specialisation's copy must
    have its specialisation's values."""
    from migrate.ir.span import Span
    from migrate.parse.frontend import Specialisation, _specialised_as_written

    specs = (Specialisation(("float", "128"), ("float32", 128), Span.point("k.cu")),)
    ok = {"k__float_128": ("float32", 128), "k__float_64": None}
    values = {"k__float_128": {0: "float32", 1: 128}, "k__float_64": {0: "float32", 1: 64}}
    assert _specialised_as_written(ok, values, specs)
    # the template's copy of an instance clang values as the specialisation's
    values_bad = dict(values, k__float_64={0: "float32", 1: 128})
    assert not _specialised_as_written(ok, values_bad, specs)
    # a specialisation's copy whose values are not its specialisation's
    values_off = dict(values, k__float_128={0: "float64", 1: 128})
    assert not _specialised_as_written(ok, values_off, specs)
    # a copy clang gave no values
    assert not _specialised_as_written(ok, {"k__float_128": values["k__float_128"]}, specs)
    # a specialisation whose arguments have no value
    assert not _specialised_as_written(ok, values, (Specialisation(("T2",), (None,), Span.point("k.cu")),))


HALF = """
#include <cuda_fp16.h>
template <typename scalar_t, typename gscalar_t>
__global__ void grad(const scalar_t* x, const gscalar_t* g, gscalar_t* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  gscalar_t t = -g[i] * (gscalar_t)2;
  out[i] = t * x[i] + (gscalar_t)1;
}

template <>
__global__ void grad<__half, __half>(const __half* x, const __half* g, __half* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half t = __hneg(__hadd(g[i], x[i]));
  float e = __half2float(hexp(x[i])) * 0.5f;
  out[i] = __float2half(__half2float(t) - e);
}

void run(const float* a, const float* b, float* c, const __half* d, const __half* e, __half* f, int n) {
  grad<<<(n + 127) / 128, 128>>>(a, b, c, n);
  grad<<<(n + 127) / 128, 128>>>(d, e, f, n);
}
"""


def test_a_half_specialisation_and_the_template_pass_their_cpu_checks_against_the_original(tmp_path):
    """As crossEntropy's ``loss_bwd<__half, __half>``: the half instance runs the specialisation's
    intrinsics, the float one the template's body; both checked against the original compiled
    with g++ (the CPU executor)."""
    pytest.importorskip("tilelang")
    spec = "".join(
        spec_kernel("grad", (2, 1, 1), (128, 1, 1), tol,
                    spec_buffer("x", dtype, 200, "in", -2.0, 2.0), spec_buffer("g", dtype, 200, "in", -2.0, 2.0),
                    spec_buffer("out", dtype, 200, "out"), spec_scalar("n", "int32", 200)).replace(
            'grid =', f'id = "grad_{dtype}"\ntemplate = ["{t}", "{t}"]\ngrid =')
        for t, dtype, tol in (("float", "float32", "fp32"), ("__half", "float16", "fp16")))
    out, rows = converted(tmp_path, HALF, spec)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["reason"]
    assert row["check"]["status"] == "pass", row["check"]
    assert [c["status"] for c in row["check"]["instances"]] == ["pass", "pass"], row["check"]
    text = (out / "k.py").read_text()
    assert "def make_grad__half_half(" in text and "def make_grad__float_float(" in text
