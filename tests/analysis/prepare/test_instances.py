"""Templated device functions and overloads, the way sorting and reduction kernels write them:
overloads of one name told apart (``order(a, b)`` beside ``order(a, b, c)``: each call reaches
its own definition, emitted as ``order`` and ``order_2``), templates inlined as the instance the
call reaches (``block_min<K, 64>(v, s)`` with barriers, ``exch(k0, k1, v0, v1, ...)`` deduced
from the caller's ``K``) (analysis.prepare.instances)."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

TEMPLATES = """
#include <cuda_runtime.h>
#include <limits>
template <class K>
__device__ inline void order(K &a, K &b) { if (b < a) { K t = a; a = b; b = t; } }
template <class K>
__device__ inline void order(K &a, K &b, K &c) { order(a, b); order(b, c); order(a, b); }
template <class K, int N>
__device__ K block_min(K v, K* s)
{
    s[threadIdx.x] = v;
    __syncthreads();
    for (int h = N / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h && s[threadIdx.x + h] < s[threadIdx.x]) s[threadIdx.x] = s[threadIdx.x + h];
        __syncthreads();
    }
    return s[0];
}
template <class K>
__global__ void sort3_min(const K* x, K* y, K* mins, int n)
{
    __shared__ K s[64];
    int i = blockIdx.x * 64 + threadIdx.x;
    K a = i < n ? x[3 * i] : std::numeric_limits<K>::max();
    K b = i < n ? x[3 * i + 1] : std::numeric_limits<K>::max();
    K c = i < n ? x[3 * i + 2] : std::numeric_limits<K>::max();
    order(a, b, c);
    y[3 * i] = a; y[3 * i + 1] = b; y[3 * i + 2] = c;
    K m = block_min<K, 64>(a, s);
    if (threadIdx.x == 0) mins[blockIdx.x] = m;
}
int main()
{
    int *a, *b, *m; float *c, *d, *e;
    cudaMalloc(&a, 4096); cudaMalloc(&b, 4096); cudaMalloc(&m, 64); cudaMalloc(&c, 4096); cudaMalloc(&d, 4096); cudaMalloc(&e, 64);
    sort3_min<int><<<4, 64>>>(a, b, m, 250);
    sort3_min<float><<<4, 64>>>(c, d, e, 250);
}
"""

TEMPLATES_SPEC = """

[[kernel]]
id = "sort3_min_int"
name = "sort3_min"
template = ["int"]
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "int32"
elements = 768
role = "in"
range = [-1000, 1000]
[[kernel.args]]
name = "y"
buffer = "int32"
elements = 768
role = "out"
[[kernel.args]]
name = "mins"
buffer = "int32"
elements = 4
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 250

[[kernel]]
id = "sort3_min_float"
name = "sort3_min"
template = ["float"]
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 768
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 768
role = "out"
[[kernel.args]]
name = "mins"
buffer = "float32"
elements = 4
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 250
"""

#: a warp bitonic exchange: overloads on one and two pairs, shuffles of the template's type
WARP_EXCHANGE = """
#include <cuda_runtime.h>
#include <limits>
#define CMP_SWP(t1, _a, _b, t2, _c, _d) if (_a > _b) { t1 _t = _a; _a = _b; _b = _t; t2 _s = _c; _c = _d; _d = _s; }
// one step of a warp bitonic exchange: two overloads, on one and on two key/value pairs
template <class K>
__device__ inline void exch(K &k0, int &v0, int mask, const int bit)
{
    K ex_k0 = k0, ex_k1 = __shfl_xor_sync(0xffffffff, k0, mask);
    int ex_v0 = v0, ex_v1 = __shfl_xor_sync(0xffffffff, v0, mask);
    CMP_SWP(K, ex_k0, ex_k1, int, ex_v0, ex_v1);
    k0 = bit ? ex_k1 : ex_k0;
    v0 = bit ? ex_v1 : ex_v0;
}
template <class K>
__device__ inline void exch(K &k0, K &k1, int &v0, int &v1, int mask, const int bit)
{
    exch(k0, v0, mask, bit);
    exch(k1, v1, mask, bit);
}
template <class K>
__global__ void sort_pairs(const K* key, K* out_key, int* out_val, int n)
{
    int lane = threadIdx.x & 31;
    int base = blockIdx.x * 64;
    K k0 = (base + lane < n) ? key[base + lane] : std::numeric_limits<K>::max();
    K k1 = (base + 32 + lane < n) ? key[base + 32 + lane] : std::numeric_limits<K>::max();
    int v0 = base + lane, v1 = base + 32 + lane;
    for (int mask = 16; mask > 0; mask >>= 1)
        exch(k0, k1, v0, v1, mask, (lane & mask) != 0);
    out_key[base + lane] = k0;
    out_key[base + 32 + lane] = k1;
    out_val[base + lane] = v0;
    out_val[base + 32 + lane] = v1;
}
int main()
{
    int *a, *b, *v; float *c, *d;
    cudaMalloc(&a, 4096); cudaMalloc(&b, 4096); cudaMalloc(&v, 4096); cudaMalloc(&c, 4096); cudaMalloc(&d, 4096);
    sort_pairs<int><<<4, 32>>>(a, b, v, 250);
    sort_pairs<float><<<4, 32>>>(c, d, v, 250);
}
"""

#: overloads by arity, by reference and by value; the second of each used to reach the first's body
OVERLOADS = """
#include <cuda_runtime.h>
__device__ inline void swap2(int &a, int &b) { int t = a; a = b; b = t; }
__device__ inline void swap2(int &a, int &b, int &c) { int t = a; a = c; c = b; b = t; }
__device__ inline float scale(float a) { return a * 2.0f; }
__device__ inline float scale(float a, float b) { return a * b; }
__global__ void k(int* y, float* z)
{
    int i = threadIdx.x;
    int a = i, b = i + 1, c = i + 2;
    swap2(a, b);
    swap2(a, b, c);
    y[3 * i] = a; y[3 * i + 1] = b; y[3 * i + 2] = c;
    z[i] = scale((float)i) + scale((float)i, 3.0f);
}
"""

OVERLOADS_SPEC = """
[[kernel]]
name = "k"
grid = [1, 1, 1]
block = [32, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "y"
buffer = "int32"
elements = 96
role = "out"
[[kernel.args]]
name = "z"
buffer = "float32"
elements = 32
role = "out"
"""


def test_overloads_each_reach_their_own_definition_and_check_equal(tmp_path):
    out, (k,) = converted(tmp_path, OVERLOADS, OVERLOADS_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    text = (out / "k.py").read_text()
    assert "def scale(a)" in text and "def scale_2(a, b)" in text and "scale_2(" in text.split("def k(")[1]
    assert k["check"]["status"] == "pass", k["check"]["message"]


def test_templated_device_functions_inline_as_their_instance_and_check_equal(tmp_path):
    _, (k,) = converted(tmp_path, TEMPLATES, TEMPLATES_SPEC)
    assert k["form"] == "portable", k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
    assert "sort3_min_int: pass; sort3_min_float: pass" in k["check"]["message"]


def _sort_pairs_spec(ctype: str, dtype: str) -> str:
    return "\n".join([
        '[[kernel]]', f'id = "sort_pairs_{ctype}"', 'name = "sort_pairs"', f'template = ["{ctype}"]',
        'grid = [4, 1, 1]', 'block = [32, 1, 1]', 'tolerance = "exact"',
        '[[kernel.args]]', 'name = "key"', f'buffer = "{dtype}"', 'elements = 256', 'role = "in"', 'range = [-99, 99]',
        '[[kernel.args]]', 'name = "out_key"', f'buffer = "{dtype}"', 'elements = 256', 'role = "out"',
        '[[kernel.args]]', 'name = "out_val"', 'buffer = "int32"', 'elements = 256', 'role = "out"',
        '[[kernel.args]]', 'name = "n"', 'scalar = "int32"', 'value = 250', ''])


def test_a_templated_warp_exchange_through_overloads_converts(tmp_path):
    """Shuffles of a template's K exchange through a shared buffer of the instance's type
    (xch_K of the factory's K_): portable, each instance checked on the CPU."""
    spec = _sort_pairs_spec("int", "int32") + "\n" + _sort_pairs_spec("float", "float32")
    out, (k,) = converted(tmp_path, WARP_EXCHANGE, spec)
    assert k["form"] == "portable", k["reason"]
    assert "sort_pairs_int: pass; sort_pairs_float: pass" in k["check"]["message"], k["check"]["message"]
    assert "xch_K = T.alloc_shared(" in (out / "k.py").read_text()


#: A kernel template forwarding its own value parameters to a device function template with a
#: barrier (``block_sum<BLOCK, K>(...)``, as hash-table and sort kernels pass their block size on):
#: the instance's values are the kernel's, read where the inlined body stands.
FORWARDED = """
#include <cuda_runtime.h>
template <int BLOCK, int K>
__device__ float block_sum(float v, float* s) {
  s[threadIdx.x] = v * K;
  __syncthreads();
  for (int h = BLOCK / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  return s[0];
}
template <int BLOCK, int K>
__global__ void sums(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float s[BLOCK];
  float t = block_sum<BLOCK, K>(x[blockIdx.x * BLOCK + threadIdx.x], s);
  if (threadIdx.x == 0) y[blockIdx.x] = t;
}
"""

FORWARDED_SPEC = "\n".join([
    '[[kernel]]', 'name = "sums"', 'template = ["64", "3"]', 'grid = [4, 1, 1]', 'block = [64, 1, 1]',
    'tolerance = "fp32_accum"',
    '[[kernel.args]]', 'name = "x"', 'buffer = "float32"', 'elements = 256', 'role = "in"', 'range = [-1.0, 1.0]',
    '[[kernel.args]]', 'name = "y"', 'buffer = "float32"', 'elements = 4', 'role = "out"', ''])


def test_a_kernels_value_parameters_forwarded_to_a_device_template(tmp_path):
    out, (k,) = converted(tmp_path, FORWARDED, FORWARDED_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])


#: rsbench's shape: a device function template with barriers whose type parameters are the
#: kernel's pointer types (INT_T = const int*), deduced from the call (clang spells them
#: `const int *`, which the instance reads from the arguments instead).
POINTER_TYPES = """
#include <cuda_runtime.h>
template <class IN_T, class W_T>
__device__ float staged(IN_T in, W_T w, float* s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] * w[threadIdx.x % 4] : 0.0f;
  __syncthreads();
  float v = s[(threadIdx.x + 1) % blockDim.x];
  __syncthreads();
  return v;
}
__global__ void rotate(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int n) {
  __shared__ float s[128];
  float v = staged(x, w, s, n);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = v;
}
"""

POINTER_TYPES_SPEC = spec_kernel("rotate", (2, 1, 1), (128, 1, 1), "fp32",
                                 spec_buffer("x", "float32", 256, "in", -1.0, 1.0),
                                 spec_buffer("w", "float32", 4, "in", 0.5, 2.0),
                                 spec_buffer("y", "float32", 256, "out"),
                                 spec_scalar("n", "int32", 256))


def test_type_parameters_bound_to_pointer_types_are_deduced_from_the_arguments(tmp_path):
    _, (k,) = converted(tmp_path, POINTER_TYPES, POINTER_TYPES_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]


#: the pool's segsort: ``find_kth3(keys + k + loc_a, cnt_a, keys + k + loc_b, cnt_b, gran)`` in a
#: templated kernel on its ``const K* keys`` (and ``find_kth3(smem + l_st, ...)`` on its ``__shared__
#: K smem[...]``); clang leaves each sum's type open, so K was not deduced (and the inlined body
#: indexed a sum, no buffer)
POINTER_SUMS = """
template <class K>
__device__ int find_kth(K* a, int a_count, K* b, int b_count, int diag)
{
    int begin = max(0, diag - b_count);
    int end = min(diag, a_count);
    while (begin < end) {
        int mid = begin + (end - begin) / 2;
        if (a[mid] <= b[diag - 1 - mid]) begin = mid + 1; else end = mid;
    }
    return begin;
}
template <class K>
__global__ void split_points(const K* __restrict__ keys, int* __restrict__ out, int half)
{
    __shared__ K tile[128];
    int k = blockIdx.x * 2 * half;
    tile[threadIdx.x] = keys[k + threadIdx.x];
    __syncthreads();
    int s = find_kth(keys + k + 0, half, keys + k + half, half, (int)threadIdx.x);
    int t = find_kth(tile + 0, 64, tile + 64, 64, (int)threadIdx.x);
    out[blockIdx.x * blockDim.x + threadIdx.x] = s * 1000 + t;
}
template __global__ void split_points<int>(const int*, int*, int);
"""

POINTER_SUMS_SPEC = spec_kernel("split_points", (3, 1, 1), (128, 1, 1), "exact",
                                spec_buffer("keys", "int32", 384, "in", 0, 50),
                                spec_buffer("out", "int32", 384, "out"),
                                spec_scalar("half", "int32", 64)).replace("grid =", 'template = ["int"]\ngrid =', 1)


def test_pointer_sums_on_a_template_type_deduce_the_callee_and_view_the_buffer(tmp_path):
    _, (k,) = converted(tmp_path, POINTER_SUMS, POINTER_SUMS_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]


#: A device function template sized by its value parameters (a traversal's ``int travIds[STACK_SIZE]``
#: in ``template <int COLS, int STACK_SIZE>``), called from a kernel template with a host constant
#: (``const int STACK_SIZE = 12;``) and the kernel's own ``bool``: the constant is its value at the
#: call and the array's extent is the bound value (the module named ``STACK_SIZE``, undefined).
STACKS = """#include <cuda_runtime.h>
const int STACK_SIZE = 12;
template <int COLS, int STACK_SIZE, bool twice>
__device__ int walk(const int* next, int start) {
    int travIds[STACK_SIZE];
    int travRefs[STACK_SIZE + COLS];
    int top = 0, v = start;
    for (int k = 0; k < STACK_SIZE; k++) { travIds[top] = v; travRefs[top] = k * COLS; top++; v = next[v]; }
    int s = 0;
    for (int k = 0; k < top; k++) s += travIds[k] * (twice ? 2 : 1) + travRefs[k];
    return s;
}
template <bool twice = false>
__global__ void walks(const int* next, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = walk<3, STACK_SIZE, twice>(next, i);
}
void run(const int* next, int* out, int n) { walks<<<(n + 63) / 64, 64>>>(next, out, n); }
"""

STACKS_SPEC = spec_kernel("walks", (2, 1, 1), (64, 1, 1), "exact",
                          spec_buffer("next", "int32", 128, "in", 0, 127), spec_buffer("out", "int32", 128, "out"),
                          spec_scalar("n", "int32", 128), template="false")


def test_host_constants_as_template_arguments_size_the_callees_arrays(tmp_path):
    out, (k,) = converted(tmp_path, STACKS, STACKS_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
    text = (out / "k.py").read_text()
    assert "STACK_SIZE" not in text.split("def make_walks")[1] and "(12,)" in text and "(15,)" in text
