"""Vector and struct values the pool's kernels use beside buffers of them (analysis.prepare.vectors,
vector_bits, inline.vector_calls): a ``__constant__`` struct read as its words (seam-carving's
``BORDER_PIXEL``), explicit specialisations of a function template on CUDA vectors (cmembench's
``init_vector<int2>``), a template's ``a + b + c`` inlined for ``__half2`` values
(addBiasResidualLayerNorm's ``add``), and a ``float4`` of eight halves read through ``(__half2*)&v.y``
(gemv). Each checked on the CPU against the original built with g++."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

CONSTANT_STRUCT = """
#include <cuda_runtime.h>
typedef struct { int r; int g; int b; } pixel;
__constant__ pixel BORDER = {0, 0, 0};

__device__ pixel from_uchar4(uchar4 u) {
    pixel p;
    p.r = (int)u.x;
    p.g = (int)u.y;
    p.b = (int)u.z;
    return p;
}

// a shared tile of pixels with a halo of the constant border pixel, as seam-carving's costs
__global__ void costs(const uchar4* __restrict__ px, short* __restrict__ cost, int w) {
    __shared__ pixel tile[34];
    int x = blockIdx.x * 32 + threadIdx.x;
    int c = threadIdx.x + 1;
    tile[c] = x < w ? from_uchar4(px[x]) : BORDER;
    if (threadIdx.x == 0) tile[0] = x > 0 ? from_uchar4(px[x - 1]) : BORDER;
    if (threadIdx.x == 31) tile[33] = x + 1 < w ? from_uchar4(px[x + 1]) : BORDER;
    __syncthreads();
    if (x < w) {
        pixel a = tile[c - 1], b = tile[c + 1];
        cost[x] = abs(a.r - b.r) + abs(a.g - b.g) + abs(a.b - b.b) + BORDER.g;
    }
}
"""

CONSTANT_SPEC = spec_kernel("costs", (3, 1, 1), (32, 1, 1), "exact",
                            spec_buffer("px", "uint8", 4 * 96, "in", 0, 255),
                            spec_buffer("cost", "int16", 96, "out"),
                            spec_scalar("w", "int32", 90)) + """[[kernel.symbols]]
name = "BORDER"
dtype = "int32"
elements = 3
range = [-40, 40]
"""


def test_a_constant_struct_is_a_symbol_of_its_words_and_checks_equal(tmp_path):
    out, rows = converted(tmp_path, CONSTANT_STRUCT, CONSTANT_SPEC)
    (k,) = rows
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "BORDER: T.Tensor((3,), T.int32)" in text and "BORDER[1]" in text, text


SPECIALISED = """
#include <cuda_runtime.h>
template <class T> __device__ T init_vector(int v) { return 0; }
template <> __device__ int init_vector(int v) { return v; }
template <> __device__ int2 init_vector(int v) { return make_int2(v, v + 1); }
template <> __device__ int4 init_vector(int v) { return make_int4(v, v, v, v); }

template <class T> __device__ int reduce_vector(T v) { return 0; }
template <> __device__ int reduce_vector(int2 v) { return v.x * 3 + v.y; }

__device__ void add_vector(int2& target, const int2& v) {
    target.x += v.x;
    target.y -= v.y;
}

// explicit specialisations on int2 called by name: each call reaches its own definition
__global__ void sums(const int2* __restrict__ in, int* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int2 s = init_vector<int2>(i);
    for (int j = 0; j < 4; j++) add_vector(s, in[(i + j) % n]);
    out[i] = reduce_vector(s) + init_vector<int>(7);
}
"""

SPECIALISED_SPEC = spec_kernel("sums", (2, 1, 1), (64, 1, 1), "exact",
                               spec_buffer("in", "int32", 2 * 100, "in", -1000, 1000),
                               spec_buffer("out", "int32", 100, "out"),
                               spec_scalar("n", "int32", 100))


def test_explicit_specialisations_on_vectors_are_inlined_and_check_equal(tmp_path):
    out, rows = converted(tmp_path, SPECIALISED, SPECIALISED_SPEC)
    (k,) = rows
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", k


HALF_TEMPLATE = """
#include <cuda_runtime.h>
#include <cuda_fp16.h>
template <typename T> __device__ T add3(T a, T b, T c) { return a + b + c; }
template <typename T> __device__ T scale(T a, T b) { return a * b - b; }

// a template on T called with __half2 values: inlined, its operators the header's lane by lane
__global__ void halves(const __half2* __restrict__ x, const __half2* __restrict__ y, __half2* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 s = add3(x[i], y[i], __float2half2_rn(0.25f));
    out[i] = scale(s, y[i]);
}
"""

HALF_SPEC = spec_kernel("halves", (2, 1, 1), (64, 1, 1), "fp16",
                        spec_buffer("x", "float16", 200, "in", -2.0, 2.0),
                        spec_buffer("y", "float16", 200, "in", -2.0, 2.0),
                        spec_buffer("out", "float16", 200, "out"),
                        spec_scalar("n", "int32", 100))


def test_a_template_on_half2_values_is_inlined_lane_by_lane_and_checks_equal(tmp_path):
    out, rows = converted(tmp_path, HALF_TEMPLATE, HALF_SPEC)
    (k,) = rows
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", k


LANE_VIEWS = """
#include <cuda_runtime.h>
#include <cuda_fp16.h>
// eight halves loaded as one float4, read through __half2 views of its lanes, as gemv does
__global__ void dot8(__half* mat, __half* vec, float* __restrict__ res, unsigned int n) {
    unsigned int row = blockIdx.x * blockDim.x + threadIdx.x;
    float4* mat4 = reinterpret_cast<float4*>(mat);
    float4* vec4 = reinterpret_cast<float4*>(vec);
    float sum = 0;
    for (unsigned int j = 0; j < n >> 3; j++) {
        float4 v = vec4[j];
        float4 m = mat4[row * (n >> 3) + j];
        const __half2* v1 = (__half2*)&v.x;
        const __half2* v2 = (__half2*)&v.y;
        const __half2* v4 = (__half2*)&v.w;
        const __half2* m1 = (__half2*)&m.x;
        const __half2* m2 = (__half2*)&m.y;
        const __half2* m4 = (__half2*)&m.w;
        sum += __half2float(v1->x) * __half2float(m1->y);
        sum += __half2float(v2->x) * __half2float(m2->x) - __half2float(v2->y);
        sum += __half2float(v4->y) * __half2float(m4->x);
    }
    res[row] = sum;
}
"""

LANE_SPEC = spec_kernel("dot8", (1, 1, 1), (32, 1, 1), "fp32",
                        spec_buffer("mat", "float16", 32 * 16, "in", -2.0, 2.0),
                        spec_buffer("vec", "float16", 16, "in", -2.0, 2.0),
                        spec_buffer("res", "float32", 32, "out"),
                        spec_scalar("n", "uint32", 16))


def test_half2_views_of_a_float4_lanes_read_the_halves_they_hold(tmp_path):
    out, rows = converted(tmp_path, LANE_VIEWS, LANE_SPEC)
    (k,) = rows
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "T.alloc_local((8,), T.float16)" in text, text


def test_a_lane_view_at_an_offset_of_no_whole_element_is_refused(tmp_path):
    # (double2*)&v.y of a float4 starts 4 bytes in: no whole double2, refused with a reason
    src = """
#include <cuda_runtime.h>
__global__ void odd(float* a, double* __restrict__ out) {
    float4* a4 = reinterpret_cast<float4*>(a);
    float4 v = a4[threadIdx.x];
    const double* d = (double*)&v.y;
    out[threadIdx.x] = d[0];
}
"""
    _out, rows = converted(tmp_path, src, expect_ok=False)
    (k,) = rows
    assert k["form"] in ("hybrid", "unsupported") and k["diagnostics"][0]["code"] == "M3001", k


COMPLEX = """
#include <cuda_runtime.h>
#include <cuComplex.h>
// cuComplex.h's functions on values made of the inputs, as the pool's complex program checks them
__global__ void cplx(const float* __restrict__ a, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cuFloatComplex z1 = make_cuFloatComplex(a[4 * i], a[4 * i + 1]);
    cuFloatComplex z2 = make_cuFloatComplex(a[4 * i + 2], a[4 * i + 3]);
    cuFloatComplex p = cuCmulf(cuCaddf(z1, z2), cuConjf(z2));
    cuFloatComplex q = cuCdivf(cuCsubf(z1, z2), z2);
    out[3 * i] = cuCrealf(p) + 2.0f * cuCimagf(q);
    out[3 * i + 1] = cuCabsf(cuCdivf(cuConjf(z1), z2));
    out[3 * i + 2] = cuCimagf(p) - cuCabsf(z1) * cuCrealf(q);
}

__global__ void cplx_double(const double* __restrict__ a, double* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cuDoubleComplex z1 = make_cuDoubleComplex(a[2 * i], a[2 * i + 1]);
    cuDoubleComplex z2 = make_cuDoubleComplex(a[2 * i + 1], -a[2 * i]);
    out[i] = cuCabs(cuCmul(z1, z2)) - cuCreal(cuCdiv(z1, cuCadd(z1, z2)));
}
"""

COMPLEX_SPEC = (spec_kernel("cplx", (2, 1, 1), (64, 1, 1), "fp32",
                            spec_buffer("a", "float32", 4 * 100, "in", -3.0, 3.0),
                            spec_buffer("out", "float32", 3 * 100, "out"),
                            spec_scalar("n", "int32", 100))
                + spec_kernel("cplx_double", (2, 1, 1), (64, 1, 1), "fp64",
                              spec_buffer("a", "float64", 2 * 100, "in", 0.5, 3.0),
                              spec_buffer("out", "float64", 100, "out"),
                              spec_scalar("n", "int32", 100)))


def test_cucomplex_functions_compute_as_the_header_and_check_equal(tmp_path):
    out, rows = converted(tmp_path, COMPLEX, COMPLEX_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    for name in ("cplx", "cplx_double"):
        assert kernels[name]["form"] not in ("hybrid", "unsupported") and kernels[name]["check"]["status"] == "pass", kernels[name]


def test_a_cucomplex_function_of_a_value_in_memory_is_refused_by_name(tmp_path):
    # its parts would be read before the statement, out of the reach of a guard around the call
    src = """
#include <cuda_runtime.h>
#include <cuComplex.h>
__global__ void guarded(const cuFloatComplex* z, float* out, int n) {
    int i = threadIdx.x;
    out[i] = (i < n && cuCabsf(z[i]) > 1.0f) ? 1.0f : 0.0f;
}
"""
    _out, rows = converted(tmp_path, src, expect_ok=False)
    (k,) = rows
    assert k["form"] in ("hybrid", "unsupported") and "cuComplex.h function of a complex value read from memory" in \
        k["diagnostics"][0]["message"], k


SWAP_AND_HEADER = """
#include <cuda_runtime.h>
inline __host__ __device__ void operator+=(float4& a, const float4& b) { a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w; }
struct Edge { int beg; int end; };
template <typename T> __device__ void swap(T& a, T& b) { T c = a; a = b; b = c; }

// a template swapping two structs of a buffer (graphB+'s swap(einfo[pos], einfo[other]))
__global__ void flip(Edge* __restrict__ e, int* __restrict__ w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (2 * i + 1 >= n) return;
    if (e[2 * i].beg > e[2 * i + 1].end) {
        swap(e[2 * i], e[2 * i + 1]);
        swap(w[2 * i], w[2 * i + 1]);
    }
}

// a block reduction of float4 values whose loop header declares two scalars (lr's linear_regression)
__global__ void sum4(const float2* __restrict__ d, float4* __restrict__ r) {
    __shared__ float4 s[64];
    size_t t = threadIdx.x, n = blockDim.x;
    s[t].x = d[blockIdx.x * n + t].x;
    s[t].y = d[blockIdx.x * n + t].y;
    s[t].z = d[blockIdx.x * n + t].x * d[blockIdx.x * n + t].y;
    s[t].w = 1.0f;
    __syncthreads();
    for (size_t i = n / 2, old_i = n; i > 0; old_i = i, i /= 2) {
        if (t < i) {
            s[t] += s[t + i];
            if (t == i - 1 && old_i % 2 != 0) s[t] += s[old_i - 1];
        }
        __syncthreads();
    }
    if (t == 0) r[blockIdx.x] = s[0];
}
"""

SWAP_SPEC = (spec_kernel("flip", (2, 1, 1), (64, 1, 1), "exact",
                         spec_buffer("e", "int32", 2 * 200, "inout", -50, 50),
                         spec_buffer("w", "int32", 200, "inout", -50, 50),
                         spec_scalar("n", "int32", 200))
             + spec_kernel("sum4", (3, 1, 1), (48, 1, 1), "fp32",
                           spec_buffer("d", "float32", 2 * 144, "in", -2.0, 2.0),
                           spec_buffer("r", "float32", 4 * 3, "out")))


def test_a_template_swap_of_structs_and_a_two_scalar_loop_header_check_equal(tmp_path):
    _out, rows = converted(tmp_path, SWAP_AND_HEADER, SWAP_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    for name in ("flip", "sum4"):
        assert kernels[name]["form"] not in ("hybrid", "unsupported") and kernels[name]["check"]["status"] == "pass", kernels[name]


DEVICE_LANES = """
#include <cuda_runtime.h>
// a device function writing the lanes of a kernel's uint2 buffer (dxtc2's saveBlockDXT1): inlined,
// not a macro (a macro works on scalars only)
__device__ void save(unsigned short start, unsigned short end, unsigned int perm, uint2* result, int offset) {
    const int bid = blockIdx.x + offset;
    if (start == end) perm = 0;
    result[bid].x = ((unsigned int)end << 16) | start;
    result[bid].y = perm ^ 0x5a5a5a5au;
}

__global__ void pack(const unsigned short* __restrict__ a, uint2* __restrict__ result, int offset) {
    if (threadIdx.x == 0) {
        int i = blockIdx.x;
        save(a[2 * i], a[2 * i + 1], (unsigned int)a[2 * i] * 2654435761u, result, offset);
    }
}
"""

DEVICE_LANES_SPEC = spec_kernel("pack", (16, 1, 1), (32, 1, 1), "exact",
                                spec_buffer("a", "uint16", 32, "in", 0, 7),
                                spec_buffer("result", "uint32", 2 * 20, "inout", 0, 1000),
                                spec_scalar("offset", "int32", 3))


def test_a_device_function_writing_vector_lanes_is_inlined_and_checks_equal(tmp_path):
    _out, rows = converted(tmp_path, DEVICE_LANES, DEVICE_LANES_SPEC)
    (k,) = rows
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", k
