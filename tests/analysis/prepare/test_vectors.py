"""CUDA vector types as their lanes (analysis.prepare.vectors), and the vector values it refuses."""
from __future__ import annotations

import pytest

from migrate.analysis.prepare.vectors import VectorError, scalarize_vectors
from migrate.ir import model as m
from tests.analysis.support import calls, nodes, unit


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
    bad = unit(tmp_path, """
        __global__ void k(float4 p, float* y) { y[0] = p.x; }
    """)
    with pytest.raises(VectorError):
        scalarize_vectors(bad.kernel("k"))


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


def test_other_records_stay_records(tmp_path):
    """Mixed field types, methods: not lanes of one buffer (still refused later, as before)."""
    u = unit(tmp_path, STRUCTS + """
        __global__ void k(const Mixed* m, const WithMethod* w, float* y) { y[0] = m[0].v + w[0].sum(); }
    """)
    fn = u.kernel("k")
    assert isinstance(fn.params[0].type.pointee, m.Record) and isinstance(fn.params[1].type.pointee, m.Record)


def test_a_struct_that_points_to_itself_is_a_record(tmp_path):
    """A linked node (`struct Node { Node* next; ... }`): its fields are not one scalar type, and
    reading them must not follow the pointer back into the struct (it recursed without end)."""
    u = unit(tmp_path, """
        struct Node { Node* next; int key; };
        __global__ void k(Node* n, int* out) { out[0] = n[0].key; }
    """)
    assert isinstance(u.kernel("k").params[0].type.pointee, m.Record)
