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


#: A warp sum in a device function template, the way reduction helpers are written: the shuffle's
#: value is the template's ``T`` (clang leaves the call's type dependent), as is an atomic's old
#: value read back.
WARP_SUM = """
#include <cuda_runtime.h>
template <typename T>
__inline__ __device__ T warp_sum(T val) {
  for (int offset = 16; offset > 0; offset /= 2)
    val += __shfl_down_sync(0xffffffff, val, offset);
  return val;
}
template <typename T>
__global__ void row_sums(const T* __restrict__ in, T* __restrict__ out, T* __restrict__ firsts, int n) {
  T v = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) v += in[blockIdx.x * n + i];
  v = warp_sum(v);
  if (threadIdx.x == 0) {
    auto before = atomicAdd(&out[blockIdx.x], v);
    firsts[blockIdx.x] = before + 1;
  }
}
"""

WARP_SUM_SPEC = "\n".join([
    '[[kernel]]', 'name = "row_sums"', 'template = ["int"]', 'grid = [8, 1, 1]', 'block = [32, 1, 1]',
    'tolerance = "exact"',
    '[[kernel.args]]', 'name = "in"', 'buffer = "int32"', 'elements = 800', 'role = "in"', 'range = [-100, 100]',
    '[[kernel.args]]', 'name = "out"', 'buffer = "int32"', 'elements = 8', 'role = "inout"', 'range = [-5, 5]',
    '[[kernel.args]]', 'name = "firsts"', 'buffer = "int32"', 'elements = 8', 'role = "out"',
    '[[kernel.args]]', 'name = "n"', 'scalar = "int32"', 'value = 100', ''])


def test_a_shuffle_and_an_atomic_on_a_templates_type_have_that_type(tmp_path):
    from migrate.ir import model as m
    from tests.analysis.support import unit
    (tmp_path / "model").mkdir()
    u = unit(tmp_path / "model", WARP_SUM)
    (shfl,) = [n for n in m.walk(u.device_functions[0].body) if isinstance(n, m.Call)]
    assert shfl.type == m.TemplateType("T")
    (atomic,) = [n for n in m.walk(u.kernel("row_sums").body) if isinstance(n, m.Call) and n.callee == "atomicAdd"]
    assert atomic.type == m.TemplateType("T")
    out, kernels = converted(tmp_path, WARP_SUM, WARP_SUM_SPEC)
    (k,) = kernels
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])


#: Functional casts to builtin types of a template's values (``int(vals[j])``): clang leaves them
#: calls with no callee, once named a call through a function pointer.
CASTS = """
#include <cuda_runtime.h>
template <typename T>
__global__ void conv(const T* __restrict__ vals, int* __restrict__ q, short* __restrict__ s,
                     float* __restrict__ f, int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  q[j] = int(vals[j]);
  s[j] = short(vals[j] * 2);
  f[j] = float(vals[j]) + 1.0f;
}
"""

CASTS_SPEC = "\n".join([
    '[[kernel]]', 'name = "conv"', 'template = ["double"]', 'grid = [2, 1, 1]', 'block = [128, 1, 1]',
    'tolerance = "exact"',
    '[[kernel.args]]', 'name = "vals"', 'buffer = "float64"', 'elements = 256', 'role = "in"', 'range = [-900.0, 900.0]',
    '[[kernel.args]]', 'name = "q"', 'buffer = "int32"', 'elements = 256', 'role = "out"',
    '[[kernel.args]]', 'name = "s"', 'buffer = "int16"', 'elements = 256', 'role = "out"',
    '[[kernel.args]]', 'name = "f"', 'buffer = "float32"', 'elements = 256', 'role = "out"',
    '[[kernel.args]]', 'name = "n"', 'scalar = "int32"', 'value = 256', ''])


def test_functional_casts_of_a_templates_values_are_casts(tmp_path):
    from migrate.ir import model as m
    from tests.analysis.support import unit
    (tmp_path / "model").mkdir()
    fn = unit(tmp_path / "model", CASTS).kernel("conv")
    casts = [n.target for n in m.walk(fn.body) if isinstance(n, m.Cast) and n.style == "functional"]
    assert casts == [m.Scalar("int32"), m.Scalar("int16"), m.Scalar("float32")]
    out, kernels = converted(tmp_path, CASTS, CASTS_SPEC)
    (k,) = kernels
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])


#: A cached load and an atomic at an address summed onto a template's pointer (``__ldg(X + (n *
#: C + g * K + k) * HW + off)``, as channel shuffles and scatters write them): clang leaves the
#: sums' types dependent; each sum onto ``T* X`` is a ``T*``, so the load reads ``X`` there.
ADDRESSES = """
#include <cuda_runtime.h>
template <typename T>
__global__ void shuffle(const int size, const int C, const int G, const T* X, T* Y, T* total) {
  const int K = C / G;
  for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < size; index += blockDim.x * gridDim.x) {
    const int c = index % C;
    const int g = c % G, k = c / G;
    Y[index] = __ldg(X + (index / C) * C + g * K + k);
    atomicAdd(total + index % 4, __ldg(X + index) * T(2));
  }
}
"""

ADDRESSES_SPEC = "\n".join([
    '[[kernel]]', 'name = "shuffle"', 'template = ["float"]', 'grid = [2, 1, 1]', 'block = [64, 1, 1]',
    'tolerance = "fp32_accum"',
    '[[kernel.args]]', 'name = "size"', 'scalar = "int32"', 'value = 240',
    '[[kernel.args]]', 'name = "C"', 'scalar = "int32"', 'value = 12',
    '[[kernel.args]]', 'name = "G"', 'scalar = "int32"', 'value = 3',
    '[[kernel.args]]', 'name = "X"', 'buffer = "float32"', 'elements = 240', 'role = "in"', 'range = [-1.0, 1.0]',
    '[[kernel.args]]', 'name = "Y"', 'buffer = "float32"', 'elements = 240', 'role = "out"',
    '[[kernel.args]]', 'name = "total"', 'buffer = "float32"', 'elements = 4', 'role = "inout"', 'range = [0.0, 1.0]',
    ''])


def test_addresses_summed_onto_a_templates_pointer_are_views_of_it(tmp_path):
    out, (k,) = converted(tmp_path, ADDRESSES, ADDRESSES_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    assert "X[T.truncdiv(index, C) * C + g * K + k]" in (out / "k.py").read_text()
