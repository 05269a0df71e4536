"""``auto`` in a template kernel's body (``auto v = data + off``, ``auto s = v[j] * (T)2``), the way
PyTorch-derived kernels declare their views and values: clang leaves the type dependent; the
value's type (a pointer to the template's ``T``, a ``T``) is the local's, and its uses get it."""
from __future__ import annotations

from tests.analysis.support import converted

KERNEL = """
#include <cuda_runtime.h>
template <typename T>
__global__ void gather_rows(const T* __restrict__ data, T* __restrict__ col, int width, int n)
{
    const auto i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    auto v = data + (i / width) * width;
    auto c = col + i;
    auto s = v[i % width] * (T)2;
    *c = s + v[0];
}
int main()
{
    float *a, *b; double *c, *d;
    cudaMalloc(&a, 4096); cudaMalloc(&b, 4096); cudaMalloc(&c, 8192); cudaMalloc(&d, 8192);
    gather_rows<float><<<4, 64>>>(a, b, 16, 256);
    gather_rows<double><<<4, 64>>>(c, d, 16, 256);
}
"""

SPEC = """

[[kernel]]
id = "gather_rows_float"
name = "gather_rows"
template = ["float"]
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "data"
buffer = "float32"
elements = 256
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "col"
buffer = "float32"
elements = 256
role = "out"
[[kernel.args]]
name = "width"
scalar = "int32"
value = 16
[[kernel.args]]
name = "n"
scalar = "int32"
value = 256

[[kernel]]
id = "gather_rows_double"
name = "gather_rows"
template = ["double"]
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "data"
buffer = "float64"
elements = 256
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "col"
buffer = "float64"
elements = 256
role = "out"
[[kernel.args]]
name = "width"
scalar = "int32"
value = 16
[[kernel.args]]
name = "n"
scalar = "int32"
value = 256
"""


def test_auto_locals_of_a_template_convert_and_each_instance_checks_equal(tmp_path):
    out, kernels = converted(tmp_path, KERNEL, SPEC)
    (k,) = kernels
    assert k["form"] == "tile", k["reason"]
    assert "gather_rows_float: pass; gather_rows_double: pass" in k["check"]["message"], k["check"]


#: A call of a plain device function with an argument of the template's types (``f(x / scale)``,
#: ``S scale``): clang leaves the call's type dependent; the function's declared return type is
#: the call's, so the local that holds an inlined call's value (or an ``auto``) has a dtype.
QUANT = """
#include <cuda_runtime.h>
#include <cstdint>
#include <limits>
static inline __host__ __device__ int8_t to_int8(float x) {
  static constexpr auto lo = static_cast<float>(std::numeric_limits<int8_t>::min());
  static constexpr auto hi = static_cast<float>(std::numeric_limits<int8_t>::max());
  float r = nearbyintf(x);
  return static_cast<int8_t>(r < lo ? lo : (r > hi ? hi : r));
}
static inline __host__ __device__ int32_t widen(int8_t x, int k) { if (k > 2) return x * k; return x - k; }
template <typename T, typename S>
__global__ void quant(T const* __restrict__ in, int8_t* __restrict__ out, int32_t* __restrict__ wide,
                      S const scale, int n) {
  int const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  auto q = to_int8(static_cast<float>(in[i]) / scale);
  out[i] = q;
  wide[i] = widen(to_int8(in[i] * scale), i % 5);
}
"""

QUANT_SPEC = "\n".join([
    '[[kernel]]', 'name = "quant"', 'template = ["float", "float"]', 'grid = [2, 1, 1]', 'block = [128, 1, 1]',
    'tolerance = "exact"',
    '[[kernel.args]]', 'name = "in"', 'buffer = "float32"', 'elements = 256', 'role = "in"', 'range = [-300.0, 300.0]',
    '[[kernel.args]]', 'name = "out"', 'buffer = "int8"', 'elements = 256', 'role = "out"',
    '[[kernel.args]]', 'name = "wide"', 'buffer = "int32"', 'elements = 256', 'role = "out"',
    '[[kernel.args]]', 'name = "scale"', 'scalar = "float32"', 'value = 0.75',
    '[[kernel.args]]', 'name = "n"', 'scalar = "int32"', 'value = 256', ''])


def test_a_call_with_arguments_of_template_types_has_its_declared_return_type(tmp_path):
    from migrate.ir import model as m
    from tests.analysis.support import unit
    (tmp_path / "model").mkdir()
    fn = unit(tmp_path / "model", QUANT).kernel("quant")
    types = {n.callee: n.type for n in m.walk(fn.body) if isinstance(n, m.Call) and n.kind == "device"}
    assert types == {"to_int8": m.Scalar("int8"), "widen": m.Scalar("int32")}
    out, kernels = converted(tmp_path, QUANT, QUANT_SPEC)
    (k,) = kernels
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
