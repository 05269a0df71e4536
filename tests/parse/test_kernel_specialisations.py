"""A kernel template with explicit specialisations (``template <> __global__ void k<float>``), as
fma's ``implicit_fma_kernel`` writes a float4 body beside its scalar template: the launches of a
specialised instance are sized for the specialisation's own body (a quarter of the threads), so
the template's body run for them is wrong (on the GPU the migrated fma kernel updated an eighth of
its output). Until specialisations are converted per instance, the template is refused, naming
them; a template without specialisations still converts."""
from __future__ import annotations

from tests.analysis.support import converted

SPECIALISED = """
template <typename T>
__global__ void scale(const T* a, T* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] * (T)2;
}

template <>
__global__ void scale<float>(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    float4 v = reinterpret_cast<const float4*>(a)[i];
    v.x *= 2.0f; v.y *= 2.0f; v.z *= 2.0f; v.w *= 2.0f;
    reinterpret_cast<float4*>(b)[i] = v;
  }
}

template <typename T>
__global__ void shift(const T* a, T* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i] + (T)1;
}

void run(const float* a, float* b, const double* c, double* d, int n) {
  scale<float><<<(n / 4 + 255) / 256, 256>>>(a, b, n);
  scale<double><<<(n + 255) / 256, 256>>>(c, d, n);
  shift<float><<<(n + 255) / 256, 256>>>(a, b, n);
  shift<double><<<(n + 255) / 256, 256>>>(c, d, n);
}
"""


def test_a_kernel_template_with_an_explicit_specialisation_is_refused_naming_it(tmp_path):
    out, rows = converted(tmp_path, SPECIALISED, expect_ok=False)
    by_name = {r["kernel"]: r for r in rows}
    assert set(by_name) == {"scale", "shift"}, by_name
    scale = by_name["scale"]
    assert scale["form"] == "unsupported", scale
    errors = [d for d in scale["diagnostics"] if d["severity"] == "error"]
    assert [d["code"] for d in errors] == ["M1206"], errors
    assert "<float> at line 8" in errors[0]["message"] and "scale" in errors[0]["message"]
    assert by_name["shift"]["form"] != "unsupported", by_name["shift"]
    text = (out / "k.py").read_text()
    assert "def make_shift(" in text and "def make_scale(" not in text
