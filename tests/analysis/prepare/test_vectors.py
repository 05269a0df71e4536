"""CUDA vector types as their lanes (analysis.prepare.vectors), and the vector values it refuses."""
from __future__ import annotations

import pytest

from migrate.analysis.prepare.vectors import VectorError, scalarize_vectors
from migrate.ir import model as m
from tests.analysis.support import calls, converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit


def test_vectors_become_lanes(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(const float4* x, float* y, const float* z, __half* h, int n) {
            int i = threadIdx.x;
            float4 v = x[i];
            const float4 w = reinterpret_cast<const float4*>(z)[i];
            y[i] = v.x + v.y + w.w;
            half2* h2 = reinterpret_cast<half2*>(h);
            h2[i] = __hfma2(h2[i], h2[i], __floats2half2_rn(1.0f, 2.0f));
        }
    """)
    fn = scalarize_vectors(u.kernel("k"))
    assert fn.params[0].type == m.Pointer(m.Scalar("float32"), const=True)
    names = {d.name for d in nodes(fn, m.VarDecl)}
    assert {"v_x", "v_y", "v_z", "v_w", "w_w"} <= names and "v" not in names
    assert not [n for n in m.walk(fn.body) if isinstance(getattr(n, "type", None), m.Vector)]
    # x[i].y is x[i * 4 + 1]; the half2 store is two scalar stores with __hfma per lane
    assert sum(1 for n in calls(fn) if n == "__hfma") == 2


def test_vector_value_used_as_scalar_is_refused(tmp_path):
    u = unit(tmp_path, """
        __device__ float sum4(float4 v) { return v.x + v.y + v.z + v.w; }
        __global__ void k(const float4* x, float4* y) { y[0] = x[0]; float4 q = x[1]; y[1] = q; }
    """)
    scalarize_vectors(u.kernel("k"))  # whole-vector copies are fine


def test_a_vector_or_struct_passed_by_value_is_a_parameter_per_lane(tmp_path):
    u = unit(tmp_path, """
        struct Cfg { double scale; int shift; };
        __global__ void k(float4 p, Cfg c, float* y) { y[0] = p.x + p.w; y[1] = c.scale * c.shift; }
    """)
    fn = scalarize_vectors(u.kernel("k"))
    assert [(p.name, str(p.type), p.lane_of) for p in fn.params] == [
        ("p_x", "float32", ("p", 0)), ("p_y", "float32", ("p", 4)), ("p_z", "float32", ("p", 8)),
        ("p_w", "float32", ("p", 12)), ("c_scale", "float64", ("c", 0)), ("c_shift", "int32", ("c", 8)),
        ("y", "float32*", ())]
    refs = {r.name: r.kind for r in nodes(fn, m.Ref)}
    assert refs["p_w"] == refs["c_shift"] == "param"
    wide = unit(tmp_path, """
        struct Wide { float v[65]; };
        __global__ void k(Wide w, float* y) { y[0] = w.v[3]; }
    """)
    with pytest.raises(VectorError, match="65 fields would each be a parameter"):
        scalarize_vectors(wide.kernel("k"))


def test_a_scalar_pointer_cast_of_a_vector_buffer_is_its_lanes(tmp_path):
    """`(float*) z2` of a float2 buffer (complex numbers kept as float2, read as re/im floats): the
    scalar buffer the parameter becomes, indexed in lanes; with an offset in vectors, twice it."""
    u = unit(tmp_path, """
        __global__ void k(const float2* __restrict__ z2, float2* out2, int n) {
            const float* z = (const float*) z2;
            float* out = (float*) (out2 + 1);
            int i = threadIdx.x;
            out[2 * i] = z[2 * i] * z[2 * i + 1];
        }
    """)
    fn = scalarize_vectors(u.kernel("k"))
    decls = {d.name: d for d in nodes(fn, m.VarDecl)}
    assert decls["z"].init == m.Ref("z2", "param", m.Pointer(m.Scalar("float32"), const=True), decls["z"].init.span)
    offset = decls["out"].init
    assert isinstance(offset, m.Binary) and offset.lhs.name == "out2"
    assert isinstance(offset.rhs, m.Binary) and offset.rhs.op == "*" and offset.rhs.rhs.value == 2
    other = scalarize_vectors(unit(tmp_path, """
        __global__ void k(const float2* z2, int* y) { const int* z = (const int*) z2; y[0] = z[0]; }
    """).kernel("k"))
    assert isinstance(next(d for d in nodes(other, m.VarDecl) if d.name == "z").init, m.Cast)  # bits of floats: no view


def test_a_vector_view_of_another_vector_buffer_counts_its_own_lanes(tmp_path):
    """`(float4*) z2` over a float2 buffer: element k of the view is scalars 4k..4k+3 of the
    buffer, not 2k..2k+1; a view over another scalar type is refused (bits, not values)."""
    u = unit(tmp_path, """
        __global__ void k(const float2* __restrict__ z2, float* y) {
            const float4* z4 = (const float4*) z2;
            int i = threadIdx.x;
            y[i] = z4[i].w;
        }
    """)
    fn = scalarize_vectors(u.kernel("k"))
    (store,) = [n for n in m.walk(fn.body) if isinstance(n, m.Assign)]
    index = store.value.index
    assert store.value.base.name == "z2" and index.lhs.rhs.value == 4 and index.rhs.value == 3  # z2[i*4 + 3]
    with pytest.raises(VectorError, match="not a view of a buffer"):
        scalarize_vectors(unit(tmp_path, """
            __global__ void k(const int* a, float* y) { const float4* v = (const float4*) a; y[0] = v[0].x; }
        """).kernel("k"))


STRUCTS = """
typedef struct { double re; double im; } COMPLEX;
struct Atom { float x, y, z; };
struct Mixed { float v; int k; };
struct WithMethod { float a, b; __device__ float sum() const { return a + b; } };
"""


def test_a_plain_struct_of_one_scalar_type_is_a_vector_of_its_fields(tmp_path):
    u = unit(tmp_path, STRUCTS + """
        __global__ void k(const COMPLEX* a, COMPLEX* c, const Atom* atoms, float* d, int n) {
            int i = threadIdx.x;
            COMPLEX p = a[i];
            COMPLEX r = {p.re * p.re - p.im * p.im, 2.0 * p.re * p.im};
            c[i] = r;
            const Atom* at = &atoms[i];
            d[i] = at->x + atoms[i].z;
        }
    """)
    fn = u.kernel("k")
    assert fn.params[0].type.pointee == m.Vector("COMPLEX", "float64", 2, ("re", "im"))
    assert fn.params[2].type.pointee == m.Vector("Atom", "float32", 3, ("x", "y", "z"))
    out = scalarize_vectors(fn)
    assert {"p_re", "p_im", "r_re", "r_im"} <= {d.name for d in nodes(out, m.VarDecl)}
    stores = {(n.target.base.name, n.target.index.rhs.value) for n in nodes(out, m.Assign)
              if isinstance(n.target, m.Index) and n.target.base.name == "c"}
    assert stores == {("c", 0), ("c", 1)}  # c[i*2 + 0] = r_re; c[i*2 + 1] = r_im


def test_mixed_fields_are_a_record_and_a_method_call_is_a_call_of_its_device_function(tmp_path):
    """Mixed field types: lanes of their own dtypes in words of the widest field (test_records.py);
    a struct with methods has its fields' lanes, and a call of a method is a call of the device
    function it is modelled as, the object its first argument (tests/parse/test_struct_methods.py)."""
    u = unit(tmp_path, STRUCTS + """
        __global__ void k(const Mixed* m, const WithMethod* w, float* y) { y[0] = m[0].v + w[0].sum(); }
    """)
    fn = u.kernel("k")
    mixed = fn.params[0].type.pointee
    assert isinstance(mixed, m.Vector) and len(set(mixed.lane_dtypes)) > 1 and mixed.words
    assert fn.params[1].type.pointee == m.Vector("WithMethod", "float32", 2, ("a", "b"))
    (call,) = [n for n in m.walk(fn.body) if isinstance(n, m.Call) and n.kind == "device"]
    assert call.callee == "WithMethod_sum" and isinstance(call.args[0], m.Index) and call.args[0].base.name == "w"
    assert [p.name for p in u.device_functions[0].params] == ["this_"]


def test_a_struct_that_points_to_itself_is_a_record(tmp_path):
    """A linked node (`struct Node { Node* next; ... }`): its fields are not one scalar type, and
    reading them must not follow the pointer back into the struct (it recursed without end)."""
    u = unit(tmp_path, """
        struct Node { Node* next; int key; };
        __global__ void k(Node* n, int* out) { out[0] = n[0].key; }
    """)
    assert isinstance(u.kernel("k").params[0].type.pointee, m.Record)


#: Arrays of vectors the way real kernels hold them: a shared row of uchar4 pixels with halos, a
#: local table of uchar4 coefficients with its initial values next to a 2-D local float4 array, and
#: shared float4 rows with a padded pitch filled through a float4 view of a float buffer.
VECTOR_ARRAYS = """#include <cuda_runtime.h>
#define R 2
// a row filter through a shared array of uchar4 (the way image kernels stage pixels)
__global__ void rows(const uchar4* __restrict__ src, float* __restrict__ dst, int width) {
    __shared__ uchar4 tile[64 + 2 * R];
    int lid = threadIdx.x;
    int g = blockIdx.x * blockDim.x + lid;
    tile[lid + R] = src[g];
    if (lid < R) {
        tile[lid] = src[max(g - R, 0)];
        tile[lid + blockDim.x + R] = src[min(g + (int)blockDim.x, width - 1)];
    }
    __syncthreads();
    float acc = 0.0f;
    for (int k = -R; k <= R; k++) {
        uchar4 p = tile[lid + R + k];
        acc += p.x + 2.0f * p.y + 3.0f * p.z - p.w;
    }
    dst[g] = acc;
}

// a local table of vectors with its initial values, and a 2-D local array of float4
__global__ void mix(const float* __restrict__ x, float* __restrict__ y, int n) {
    uchar4 coeff[3] = {make_uchar4(2, 0, 1, 3), make_uchar4(1, 1, 0, 2), make_uchar4(0, 3, 2, 1)};
    float4 m[2][3];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) {
            m[r][c].x = x[i] * (r + 1);
            m[r][c].y = x[i] - c;
            m[r][c].z = coeff[c].x * x[i];
            m[r][c].w = coeff[c].w + r;
        }
    float s = 0.0f;
    for (int c = 0; c < 3; c++) s += m[1][c].x * m[0][c].z + m[1][c].y - m[0][c].w;
    y[i] = s;
}

// rows of float4 staged in shared memory with a padded pitch (the way matchers stage descriptors)
__global__ void dots(const float* __restrict__ a, float* __restrict__ out) {
    __shared__ float4 buf[8 * 5];
    int t = threadIdx.x;           // 32 threads: 8 rows of 4 float4
    int row = t / 4, d = t % 4;
    buf[row * 5 + d] = ((const float4*)a)[blockIdx.x * 32 + t];
    __syncthreads();
    if (t < 8) {
        float s = 0.0f;
        for (int k = 0; k < 4; k++) {
            float4 v = buf[t * 5 + k];
            s += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        }
        out[blockIdx.x * 8 + t] = s;
    }
}
"""

VECTOR_ARRAYS_SPEC = """[[kernel]]
name = "rows"
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "src"
buffer = "uint8"
elements = 1024
role = "in"
range = [0, 255]
[[kernel.args]]
name = "dst"
buffer = "float32"
elements = 256
role = "out"
[[kernel.args]]
name = "width"
scalar = "int32"
value = 256

[[kernel]]
name = "mix"
grid = [2, 1, 1]
block = [128, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 200
role = "in"
range = [-2.0, 2.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 200
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 200

[[kernel]]
name = "dots"
grid = [3, 1, 1]
block = [32, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "a"
buffer = "float32"
elements = 384
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "out"
buffer = "float32"
elements = 24
role = "out"
"""


def test_arrays_of_vectors_become_arrays_of_their_lanes(tmp_path):
    u = unit(tmp_path, VECTOR_ARRAYS)
    fn = scalarize_vectors(u.kernel("mix"))
    decls = {d.name: d for d in nodes(fn, m.VarDecl)}
    assert str(decls["coeff"].type) == "uint8[12]" and str(decls["m"].type) == "float32[12][2]"
    assert [(x.operand if isinstance(x, m.Cast) else x).value for x in decls["coeff"].init.items] \
        == [2, 0, 1, 3, 1, 1, 0, 2, 0, 3, 2, 1]
    assert not [n for n in m.walk(fn.body) if isinstance(getattr(n, "type", None), m.Vector)]


def test_arrays_of_vectors_convert_and_check_equal(tmp_path):
    out, kernels = converted(tmp_path, VECTOR_ARRAYS, VECTOR_ARRAYS_SPEC)
    assert {k["kernel"]: k["check"]["status"] for k in kernels} == {"rows": "pass", "mix": "pass", "dots": "pass"}


#: Vector views of a scalar buffer from any element on: char4 records at data + i + 8*gx, float2
#: pairs stored through a row pointer, a shared array of 64-bit sums read back as one ulong4.
SCALAR_STARTS = """#include <cuda_runtime.h>
#define ATTRS 8
// distances between records of char attributes read four at a time from any element on
__global__ void dist(const char* __restrict__ data, int* __restrict__ out, int n) {
    int gx = blockIdx.x * blockDim.x + threadIdx.x;
    if (gx >= n) return;
    int acc = 0;
    for (int i = 0; i < ATTRS; i += 4) {
        char4 a = *(char4*)(data + i + ATTRS * gx);
        char4 b = *(const char4*)(data + i);
        acc += abs(a.x - b.x) + abs(a.y - b.y) + abs(a.z - b.z) + abs(a.w - b.w);
    }
    out[gx] = acc;
}

// a 2x upsample writing float2 pairs through a row pointer (the way image resizers vectorise)
__global__ void up2(const float* __restrict__ in, float* __restrict__ out, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x >= W) return;
    float val = in[y * W + x];
    float* out_base = out + (2 * y) * (2 * W) + 2 * x;
    reinterpret_cast<float2*>(out_base)[0] = make_float2(val, val);
    reinterpret_cast<float2*>(out_base + 2 * W)[0] = make_float2(val, 2.0f * val);
}

// a shared array of 64-bit partial sums read back as one ulong4
__global__ void sum4(const unsigned long long* __restrict__ x, unsigned long long* __restrict__ y) {
    __shared__ unsigned long long partial[4];
    if (threadIdx.x < 4) partial[threadIdx.x] = x[blockIdx.x * 4 + threadIdx.x] * 3ull;
    __syncthreads();
    if (threadIdx.x == 0) {
        ulong4 r = *(ulong4*)&partial[0];
        y[blockIdx.x] = r.x + r.y + r.z + r.w;
    }
}
"""

SCALAR_STARTS_SPEC = """[[kernel]]
name = "dist"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "data"
buffer = "int8"
elements = 1000
role = "in"
range = [-100, 100]
[[kernel.args]]
name = "out"
buffer = "int32"
elements = 120
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 120

[[kernel]]
name = "up2"
grid = [1, 6, 1]
block = [32, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "in"
buffer = "float32"
elements = 120
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "out"
buffer = "float32"
elements = 480
role = "out"
[[kernel.args]]
name = "W"
scalar = "int32"
value = 20

[[kernel]]
name = "sum4"
grid = [5, 1, 1]
block = [32, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "uint64"
elements = 20
role = "in"
range = [1, 1000000]
[[kernel.args]]
name = "y"
buffer = "uint64"
elements = 5
role = "out"
"""


def test_a_vector_view_from_any_element_of_a_scalar_buffer_reads_its_lanes_there(tmp_path):
    fn = scalarize_vectors(unit(tmp_path, SCALAR_STARTS).kernel("dist"))
    reads = [n for n in nodes(fn, m.Index) if isinstance(n.base, m.Ref) and n.base.name == "data"]
    assert len(reads) == 8 and not [n for n in m.walk(fn.body) if isinstance(n, m.Cast)
                                    and isinstance(n.type, m.Pointer)]


def test_vector_views_from_any_element_convert_and_check_equal(tmp_path):
    out, kernels = converted(tmp_path, SCALAR_STARTS, SCALAR_STARTS_SPEC)
    assert {k["kernel"]: k["check"]["status"] for k in kernels} == {"dist": "pass", "up2": "pass", "sum4": "pass"}


#: A project's lane-by-lane xor on uchar4 (compound too) over pixels staged in dynamic shared
#: memory, and a shared uint2 array read back through a flat uint view.
SHARED_LANES = """#include <cuda_runtime.h>
// a project's own xor on uchar4, lane by lane (the way block ciphers write their rounds)
inline __device__ uchar4 operator^(uchar4 a, uchar4 b) { return make_uchar4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w); }
inline __device__ void operator^=(uchar4 &a, const uchar4 b) { a.x ^= b.x; a.y ^= b.y; a.z ^= b.z; a.w ^= b.w; }

// pixels staged in dynamic shared memory as uchar4, whitened with a round key
__global__ void whiten(const uchar4* __restrict__ in, const uchar4* __restrict__ key, unsigned int* __restrict__ out) {
    extern __shared__ uchar4 block0[];
    unsigned int lid = threadIdx.x;
    unsigned int g = blockIdx.x * blockDim.x + lid;
    block0[lid] = in[g];
    block0[lid] ^= key[lid % 4];
    __syncthreads();
    uchar4 v = block0[(lid + 1) % blockDim.x] ^ block0[lid];
    out[g] = v.x | (v.y << 8) | (v.z << 16) | ((unsigned int)v.w << 24);
}

// keys staged as uint2 pairs, then read back one uint at a time through a flat view
__global__ void pairs(const unsigned int* __restrict__ keys, unsigned int* __restrict__ out) {
    __shared__ uint2 sKeys2[64];
    unsigned int *sKeys1 = (unsigned int*)sKeys2;
    unsigned int localId = threadIdx.x;
    unsigned int globalId = blockIdx.x * blockDim.x + localId;
    sKeys2[localId] = reinterpret_cast<const uint2*>(keys)[globalId];
    __syncthreads();
    out[2 * globalId] = sKeys1[localId] + sKeys1[127 - localId];
    out[2 * globalId + 1] = sKeys1[64 + localId] ^ sKeys1[2 * localId + 1];
}
"""

SHARED_LANES_SPEC = """[[kernel]]
name = "whiten"
grid = [3, 1, 1]
block = [64, 1, 1]
shared_bytes = 256
tolerance = "exact"
[[kernel.args]]
name = "in"
buffer = "uint8"
elements = 768
role = "in"
range = [0, 255]
[[kernel.args]]
name = "key"
buffer = "uint8"
elements = 16
role = "in"
range = [0, 255]
[[kernel.args]]
name = "out"
buffer = "uint32"
elements = 192
role = "out"

[[kernel]]
name = "pairs"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "keys"
buffer = "uint32"
elements = 256
role = "in"
range = [0, 1000000]
[[kernel.args]]
name = "out"
buffer = "uint32"
elements = 256
role = "out"
"""


def test_dynamic_shared_vectors_user_lane_operators_and_flat_views_check_equal(tmp_path):
    fn = scalarize_vectors(unit(tmp_path, SHARED_LANES).kernel("whiten"))
    (block0,) = [d for d in nodes(fn, m.VarDecl) if d.name == "block0"]
    assert block0.type == m.Array(m.Scalar("uint8"), None) and block0.storage == "extern_shared"
    assert len([n for n in m.walk(fn.body) if isinstance(n, m.Assign) and n.op == "^="]) == 4
    out, kernels = converted(tmp_path, SHARED_LANES, SHARED_LANES_SPEC)
    assert {k["kernel"]: k["check"]["status"] for k in kernels} == {"whiten": "pass", "pairs": "pass"}


#: Constant memory holding a table of plain structs and of float3 (the way MRI kernels keep their
#: sample points).
CONSTANT_VECTORS = """#include <cuda_runtime.h>
#define KCHUNK 16
// sample points kept in constant memory as a table of plain structs (the way MRI kernels do)
struct kValues { float Kx; float Ky; float Kz; float PhiMag; };
__constant__ kValues ck[KCHUNK];
__constant__ float3 offs[2];

__global__ void computeQ(int numK, const float* __restrict__ x, const float* __restrict__ y,
                         float* __restrict__ Qr, float* __restrict__ Qi) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float sX = x[t] + offs[0].x, sY = y[t] + offs[1].y;
    float qr = Qr[t], qi = Qi[t];
    for (int k = 0; k < numK; k++) {
        float arg = 6.2831853f * (ck[k].Kx * sX + ck[k].Ky * sY + ck[k].Kz * offs[1].z);
        qr += ck[k].PhiMag * cosf(arg);
        qi += ck[k].PhiMag * sinf(arg);
    }
    Qr[t] = qr;
    Qi[t] = qi;
}
"""

CONSTANT_VECTORS_SPEC = """[[kernel]]
name = "computeQ"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "numK"
scalar = "int32"
value = 16
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 128
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 128
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "Qr"
buffer = "float32"
elements = 128
role = "inout"
range = [-1.0, 1.0]
[[kernel.args]]
name = "Qi"
buffer = "float32"
elements = 128
role = "inout"
range = [-1.0, 1.0]
[[kernel.symbols]]
name = "ck"
dtype = "float32"
elements = 64
range = [-1.0, 1.0]
[[kernel.symbols]]
name = "offs"
dtype = "float32"
elements = 6
range = [-0.5, 0.5]
"""


def test_constant_arrays_of_vectors_are_symbols_of_their_scalars(tmp_path):
    from migrate.analysis.prepare.vectors import scalar_constants
    u = scalar_constants(unit(tmp_path, CONSTANT_VECTORS))
    assert {g.name: str(g.type) for g in u.globals} == {"ck": "float32[64]", "offs": "float32[6]"}
    out, kernels = converted(tmp_path, CONSTANT_VECTORS, CONSTANT_VECTORS_SPEC)
    assert [(k["kernel"], k["check"]["status"]) for k in kernels] == [("computeQ", "pass")]
    assert "ck: T.Tensor((64,), T.float32)" in (out / "k.py").read_text()


#: Particles as an array of structs holding scalars and double3 vectors (the way SPH codes keep them).
NESTED_LANES = """#include <cuda_runtime.h>
// particles as an array of structs whose fields are scalars and double3 vectors (the way SPH codes
// keep them): a whole vector field copied out, lanes read and written through the struct
struct particle {
    double density;
    double pressure;
    double3 pos;
    double3 v;
    double3 a;
};

__global__ void step(particle* __restrict__ ps, const double dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double3 v = ps[i].v;
    particle* p = &ps[i];
    v.x += dt * p->a.x;
    v.y += dt * ps[i].a.y;
    v.z += dt * ps[i].a.z - ps[i].pressure;
    ps[i].v = v;
    ps[i].pos.x += dt * v.x;
    ps[i].pos.y += dt * v.y;
    ps[i].pos.z += dt * v.z;
    ps[i].density = v.x * v.x + v.y * v.y + v.z * v.z;
}
"""

NESTED_LANES_SPEC = """[[kernel]]
name = "step"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "fp64"
[[kernel.args]]
name = "ps"
buffer = "float64"
elements = 1100
role = "inout"
range = [-1.0, 1.0]
[[kernel.args]]
name = "dt"
scalar = "float64"
value = 0.25
[[kernel.args]]
name = "n"
scalar = "int32"
value = 100
"""


def test_a_struct_of_scalars_and_vectors_of_one_type_is_a_vector_of_their_lanes(tmp_path):
    u = unit(tmp_path, NESTED_LANES)
    ps = u.kernel("step").params[0].type.pointee
    assert isinstance(ps, m.Vector) and ps.lanes == 11 and ps.fields[:4] == ("density", "pressure", "pos.x", "pos.y")
    fn = scalarize_vectors(u.kernel("step"))
    assert {"v_x", "v_y", "v_z"} <= {d.name for d in nodes(fn, m.VarDecl)}
    out, kernels = converted(tmp_path, NESTED_LANES, NESTED_LANES_SPEC)
    assert [(k["kernel"], k["check"]["status"]) for k in kernels] == [("step", "pass")]


#: Device functions writing a local vector through its address (velocity->x = ..., (*c).z), the way
#: CFD and ray-tracing kernels pass their float3 structs.
LOCAL_VECTOR_POINTERS = """#include <cuda_runtime.h>
typedef struct { float x; float y; float z; } Float3;

__device__ inline void velocity_of(const float density, const Float3 momentum, Float3* velocity) {
    velocity->x = momentum.x / density;
    velocity->y = momentum.y / density;
    velocity->z = momentum.z / density;
}
__device__ static void normalize(Float3* c) {
    float length = sqrtf(c->x * c->x + c->y * c->y + (*c).z * (*c).z);
    if (fabsf(length) > 1.0e-17f) { c->x /= length; c->y /= length; c->z /= length; }
}

__global__ void speeds(const float* __restrict__ rho, const Float3* __restrict__ mom, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Float3 v;
    velocity_of(rho[i], mom[i], &v);
    Float3 d = v;
    normalize(&d);
    out[i] = v.x * v.x + v.y * v.y + v.z * v.z + d.x - d.y * d.z;
}
"""

LOCAL_VECTOR_POINTERS_SPEC = """[[kernel]]
name = "speeds"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "rho"
buffer = "float32"
elements = 100
role = "in"
range = [0.5, 2.0]
[[kernel.args]]
name = "mom"
buffer = "float32"
elements = 300
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "out"
buffer = "float32"
elements = 100
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 100
"""


def test_a_device_function_writing_a_local_vector_through_its_address_checks_equal(tmp_path):
    out, kernels = converted(tmp_path, LOCAL_VECTOR_POINTERS, LOCAL_VECTOR_POINTERS_SPEC)
    assert [(k["kernel"], k["check"]["status"]) for k in kernels] == [("speeds", "pass")]


#: the pool's qkv (llm.c's matmul_forward_kernel4): ``st_vec(&lhs_s[y][xo], ld_vec(inp + ...))``
#: stores a float4 into a row of a two-dimensional shared array; its lanes are that row's elements
ROW_VECTORS = """
__device__ float4 ld_vec(const float* address) { return *reinterpret_cast<const float4*>(address); }
__device__ void st_vec(float* address, float4 val) { *reinterpret_cast<float4*>(address) = val; }
__global__ void rows4(float* __restrict__ out, const float* __restrict__ inp) {
  __shared__ float s[64][8];
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  st_vec(&s[threadIdx.x][0], ld_vec(inp + i));
  st_vec(&s[threadIdx.x][4], ld_vec(inp + i + 4));
  __syncthreads();
  float4 v = ld_vec(&s[(threadIdx.x + 32) % 64][4]);
  v.x += 1.0f;
  st_vec(out + i, v);
  st_vec(out + i + 4, ld_vec(&s[(threadIdx.x + 32) % 64][0]));
}
"""

ROW_VECTORS_SPEC = spec_kernel("rows4", (2, 1, 1), (64, 1, 1), "exact",
                               spec_buffer("out", "float32", 1024, "out"),
                               spec_buffer("inp", "float32", 1024, "in", -1.0, 1.0))


def test_a_vector_stored_into_a_row_of_a_two_dimensional_shared_array(tmp_path):
    out, (k,) = converted(tmp_path, ROW_VECTORS, ROW_VECTORS_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k
    assert k["check"]["status"] == "pass", k["check"]


#: the pool's dpid: ``const uchar3& pixel = input[x + y * p.iWidth];`` - the index of a vector
#: buffer reads a struct's field, which was left unscalarised (no TileLang form for the member)
STRUCT_FIELD_INDEX = """
struct Params { unsigned w; unsigned h; };
__global__ void pixels(const uchar3* __restrict__ input, float* __restrict__ out, const Params* __restrict__ q) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= q->w * q->h) return;
  const uchar3& pixel = input[(i % q->w) + (q->h - 1 - i / q->w) * q->w];
  out[i] = pixel.z + 2.0f * pixel.x;
}
"""

STRUCT_FIELD_INDEX_SPEC = spec_kernel("pixels", (2, 1, 1), (128, 1, 1), "fp32",
                                      spec_buffer("input", "uint8", 768, "in", 0, 255),
                                      spec_buffer("out", "float32", 256, "out"),
                                      spec_buffer("q", "uint32", 2, "in", 16, 16))


def test_a_vector_buffers_index_may_read_a_structs_field(tmp_path):
    out, (k,) = converted(tmp_path, STRUCT_FIELD_INDEX, STRUCT_FIELD_INDEX_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k
    assert k["check"]["status"] == "pass", k["check"]


#: the pool's dpid: ``uchar3& ref = output[PX + PY * p.oWidth]; ref = make_uchar3(...);`` - a local
#: reference to a vector buffer's element is that element: stores through it reach the buffer
#: (held as a copy, the kernel wrote nothing: 921 600 of 921 600 outputs differed on the CPU)
ELEMENT_REFERENCES = """
__global__ void element_refs(const uchar3* __restrict__ input, uchar3* __restrict__ output, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uchar3& pixel = input[i];
  uchar3& ref = output[n - 1 - i];
  if (pixel.x > 100) ref = make_uchar3(pixel.z, pixel.y, pixel.x);
  else { ref.x = 1; ref.y = pixel.y; ref.z = 3; }
  i = 0;
  ref.y += 1;
}
"""

ELEMENT_REFERENCES_SPEC = spec_kernel("element_refs", (2, 1, 1), (64, 1, 1), "exact",
                                      spec_buffer("input", "uint8", 384, "in", 0, 200),
                                      spec_buffer("output", "uint8", 384, "out"),
                                      spec_scalar("n", "int32", 128))


def test_stores_through_a_local_reference_to_a_vector_element_reach_the_buffer(tmp_path):
    out, (k,) = converted(tmp_path, ELEMENT_REFERENCES, ELEMENT_REFERENCES_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k
    assert k["check"]["status"] == "pass", k["check"]


#: float4 helpers the way solver kernels write them: load/store of four consecutive floats, a
#: divide returning a float4, called inside another helper's argument (store(w, i, div(-a, b))):
#: each helper is inlined, the inner call computed before the outer one's body
NESTED_HELPERS = """
__device__ inline float4 load4(const float* a, int i) { return make_float4(a[i], a[i+1], a[i+2], a[i+3]); }
__device__ inline void store4(float* a, int i, float4 v) { a[i] = v.x; a[i+1] = v.y; a[i+2] = v.z; a[i+3] = v.w; }
__device__ inline float4 div4(float4 a, float4 b) {
  return make_float4(__fdiv_rn(a.x, b.x), __fdiv_rn(a.y, b.y), __fdiv_rn(a.z, b.z), __fdiv_rn(a.w, b.w));
}
inline __device__ float4 operator-(float4 &a) { return make_float4(-a.x, -a.y, -a.z, -a.w); }
__global__ void ratios(const float* __restrict__ p, const float* __restrict__ q, float* __restrict__ w, int n4) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n4) return;
  float4 a = load4(p, 4 * j);
  float4 b = load4(q, 4 * j);
  store4(w, 4 * j, div4(-a, b));
  store4(w, 4 * (n4 + j), div4(load4(q, 4 * j), a));
}
"""


def test_a_helper_called_in_another_helpers_argument_is_inlined_before_it(tmp_path):
    import numpy as np
    import torch

    from tests.analysis.support import module_of
    out, (k,) = converted(tmp_path, NESTED_HELPERS)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    rng = np.random.default_rng(3)
    n4 = 100
    p = rng.uniform(0.5, 2.0, 4 * n4).astype(np.float32) * rng.choice([-1, 1], 4 * n4).astype(np.float32)
    q = rng.uniform(0.5, 2.0, 4 * n4).astype(np.float32)
    got = torch.full((8 * n4,), float("nan"), dtype=torch.float32)
    module_of(out / "k.py").ratios(torch.from_numpy(p), torch.from_numpy(q), got, n4,
                                   grid=(1, 1, 1), block=(128, 1, 1), target="c")
    # __fdiv_rn is IEEE division, rounded once: numpy's float32 division gives the same bits
    assert np.array_equal(got.numpy(), np.concatenate([-p / q, q / p]))
