"""The kernel model: one test per construct the frontend must represent."""
from __future__ import annotations

import textwrap

import pytest

from migrate.codes import Severity
from migrate.ir import model as m
from migrate.parse.frontend import ParseOptions, parse_file


def parse(tmp_path, source: str, name: str = "k.cu", **options):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return parse_file(path, ParseOptions(**options))


def errors(parsed):
    return [d for d in parsed.diagnostics if d.severity is Severity.ERROR]


def nodes(fn: m.Function, cls):
    return [n for n in m.walk(fn.body) if isinstance(n, cls)]


HEADER = "#include <cuda_runtime.h>"


def test_parameters_types_and_qualifiers(tmp_path):
    p = parse(tmp_path, HEADER + "\n#include <cuda_fp16.h>" + """
        __global__ void k(const float* __restrict__ x, float* __restrict__ y, double* z,
                          const int n, unsigned int flags, float4* v, __half* h, size_t count) {}
        int main() { k<<<1, 1>>>(0, 0, 0, 0, 0, 0, 0, 0); }
    """)
    assert not errors(p)
    k = p.unit.kernel("k")
    assert k.kind == "global"
    params = {q.name: q for q in k.params}
    assert params["x"].type == m.Pointer(m.Scalar("float32"), const=True, restrict=True)
    assert params["y"].type == m.Pointer(m.Scalar("float32"), const=False, restrict=True)
    assert params["z"].type == m.Pointer(m.Scalar("float64"))
    assert params["n"].type == m.Scalar("int32") and params["n"].const
    assert params["flags"].type == m.Scalar("uint32")
    assert params["v"].type == m.Pointer(m.Vector("float4", "float32", 4))
    assert params["h"].type == m.Pointer(m.Scalar("float16"))
    assert params["count"].type == m.Scalar("uint64")
    assert [q.name for q in k.params] == ["x", "y", "z", "n", "flags", "v", "h", "count"]
    assert params["x"].span.line == 3


def test_builtin_variables_all_dimensions(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void k(int* out) {
            out[0] = threadIdx.x + threadIdx.y + threadIdx.z;
            out[1] = blockIdx.x + blockIdx.y + blockIdx.z;
            out[2] = blockDim.x + blockDim.y + blockDim.z;
            out[3] = gridDim.x + gridDim.y + gridDim.z + warpSize;
        }
    """)
    assert not errors(p)
    builtins = {(b.var, b.dim) for b in nodes(p.unit.kernel("k"), m.Builtin)}
    for var in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
        for dim in "xyz":
            assert (var, dim) in builtins
    assert ("warpSize", None) in builtins


def test_shared_constant_and_local_arrays(tmp_path):
    p = parse(tmp_path, HEADER + """
        #define TILE 32
        __constant__ float c_taps[9];
        __global__ void k(float* out) {
            __shared__ float tile[TILE][TILE + 1];
            extern __shared__ float dyn[];
            float acc[4] = {0.f, 0.f, 0.f, 0.f};
            tile[threadIdx.y][threadIdx.x] = c_taps[threadIdx.x % 9];
            dyn[threadIdx.x] = acc[threadIdx.x % 4];
            out[threadIdx.x] = tile[0][threadIdx.x] + dyn[0];
        }
    """)
    assert not errors(p)
    k = p.unit.kernel("k")
    decls = {d.name: d for d in nodes(k, m.VarDecl)}
    assert decls["tile"].storage == "shared"
    assert decls["tile"].type == m.Array(m.Array(m.Scalar("float32"), 33), 32)
    assert decls["dyn"].storage == "extern_shared"
    assert decls["dyn"].type.extent is None
    assert decls["acc"].storage == "local" and decls["acc"].type == m.Array(m.Scalar("float32"), 4)
    assert isinstance(decls["acc"].init, m.InitList) and len(decls["acc"].init.items) == 4
    (glob,) = p.unit.globals
    assert glob.name == "c_taps" and glob.storage == "constant"
    assert glob.type == m.Array(m.Scalar("float32"), 9)
    refs = {r.name: r.kind for r in nodes(k, m.Ref)}
    assert refs["c_taps"] == "constant" and refs["tile"] == "shared" and refs["acc"] == "local"


def test_expressions_operators_casts_ternary(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void k(float* y, const int* idx, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            unsigned mask = (unsigned)i << 3 | 1u;
            float f = static_cast<float>(i) * 0.5f;
            i += 2; i <<= 1; ++i; i--;
            y[i] = i < n && !(mask & 4) ? -f : (float)idx[i] / 3.0f;
            y[0] = (i % 7 == 0) ? y[1] : y[2];
        }
    """)
    assert not errors(p)
    k = p.unit.kernel("k")
    ops = {b.op for b in nodes(k, m.Binary)}
    assert {"*", "+", "<<", "|", "<", "&&", "&", "/", "%", "=="} <= ops
    assigns = {a.op for a in nodes(k, m.Assign)}
    assert {"=", "+=", "<<="} <= assigns
    unary = {(u.op, u.postfix) for u in nodes(k, m.Unary)}
    assert ("++", False) in unary and ("--", True) in unary and ("-", False) in unary and ("!", False) in unary
    casts = {(c.style, str(c.target)) for c in nodes(k, m.Cast)}
    assert ("c", "uint32") in casts and ("static", "float32") in casts and ("c", "float32") in casts
    assert ("implicit", "int32") in casts  # unsigned index math stored into an int
    assert len(nodes(k, m.Ternary)) == 2
    floats = [f for f in nodes(k, m.FloatLit)]
    assert {f.value for f in floats} == {0.5, 3.0}
    # every expression has a type and a source range
    for node in m.walk(k.body):
        assert node.span.line >= 2
        if hasattr(node, "type"):
            assert node.type is not None


def test_loops_and_branches(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void k(float* y, int n) {
            for (int i = threadIdx.x; i < n; i += blockDim.x) { y[i] = 0; }
            for (;;) { break; }
            int j = 0;
            while (j < n) { if (j == 3) { j += 2; continue; } else j++; }
            do { j--; } while (j > 0);
            switch (n) { case 1: y[0] = 1; break; default: y[0] = 2; }
            #pragma unroll 4
            for (int s = 0; s < 8; ++s) y[s] += 1;
            if (n < 0) return;
        }
    """)
    assert not errors(p)
    k = p.unit.kernel("k")
    fors = nodes(k, m.For)
    assert len(fors) == 3
    stride, forever, unrolled = fors
    assert isinstance(stride.init, m.DeclStmt) and isinstance(stride.cond, m.Binary)
    assert isinstance(stride.step, m.Assign) and stride.step.op == "+="
    assert forever.init is None and forever.cond is None and forever.step is None
    assert unrolled.pragmas == ("unroll 4",)
    assert len(nodes(k, m.While)) == 1 and len(nodes(k, m.DoWhile)) == 1
    assert len(nodes(k, m.Switch)) == 1
    cases = nodes(k, m.Case)
    assert [c.value is None for c in cases] == [False, True]
    assert nodes(k, m.Break) and nodes(k, m.Continue) and nodes(k, m.Return)
    ifs = nodes(k, m.If)
    assert any(i.other is not None for i in ifs)


def test_calls_are_classified(tmp_path):
    p = parse(tmp_path, HEADER + """
        __device__ __forceinline__ float square(float v) { return v * v; }
        __device__ float warp_sum(float v) {
            for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
            return v;
        }
        __global__ void k(float* y, const float* x, int* count, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            float v = i < n ? expf(x[i]) + rsqrtf(square(x[i]) + 1.0f) : 0.0f;
            __syncthreads();
            v = warp_sum(v);
            if (threadIdx.x % 32 == 0) { atomicAdd(y, v); atomicAdd(count, 1); }
            int r = __float2int_rn(v) + __popc(i);
            y[1 + (i & 1)] = __ldg(&x[0]) + r;
        }
    """)
    assert not errors(p), errors(p)
    k = p.unit.kernel("k")
    kinds = {}
    for c in nodes(k, m.Call):
        kinds.setdefault(c.callee, c.kind)
    assert kinds["expf"] == "math" and kinds["rsqrtf"] == "math" and kinds["__popc"] == "math"
    assert kinds["square"] == "device" and kinds["warp_sum"] == "device"
    assert kinds["__syncthreads"] == "sync"
    assert kinds["atomicAdd"] == "atomic"
    assert kinds["__float2int_rn"] == "conversion"
    assert kinds["__ldg"] == "memory"
    assert set(k.calls) == {"square", "warp_sum"}
    device = {f.name: f for f in p.unit.device_functions}
    assert set(device) == {"square", "warp_sum"}
    shfl = [c for c in nodes(device["warp_sum"], m.Call) if c.callee == "__shfl_down_sync"]
    assert shfl and shfl[0].kind == "warp"
    assert device["square"].returns == m.Scalar("float32")


def test_a_namespace_qualified_device_call_names_the_function_it_calls(tmp_path):
    # ``lit::node(x)`` calls the device function ``node``: the call is modelled under the name
    # the function is (the emitted macro), not the qualified spelling (emitted as ``lit::node``,
    # which is not Python)
    p = parse(tmp_path, HEADER + """
        namespace lit {
        __host__ __device__ __forceinline__ int node(int l) { return l >> 1; }
        }
        __global__ void k(const int* x, int* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = lit::node(x[i]) + ::lit::node(x[i] + 2);
        }
    """)
    assert not errors(p), errors(p)
    k = p.unit.kernel("k")
    calls = [(c.callee, c.kind) for c in nodes(k, m.Call)]
    assert calls == [("node", "device"), ("node", "device")]
    assert k.calls == ("node",) and [f.name for f in p.unit.device_functions] == ["node"]


def test_templates_and_instantiations_from_launch_sites(tmp_path):
    p = parse(tmp_path, HEADER + """
        template <typename T, int BLOCK>
        __global__ void scale(T* __restrict__ y, const T* x, T a, int n) {
            __shared__ T buf[BLOCK];
            int i = blockIdx.x * BLOCK + threadIdx.x;
            buf[threadIdx.x] = i < n ? x[i] : T(0);
            __syncthreads();
            if (i < n) y[i] = a * buf[threadIdx.x];
        }
        int main() {
            float *yf, *xf; double *yd, *xd; int n = 1000;
            scale<float, 256><<<(n + 255) / 256, 256>>>(yf, xf, 2.0f, n);
            scale<double, 128><<<dim3((n + 127) / 128), dim3(128), 0, 0>>>(yd, xd, 3.0, n);
            return 0;
        }
    """)
    assert not errors(p), errors(p)
    k = p.unit.kernel("scale")
    assert [(t.name, t.kind) for t in k.template_params] == [("T", "type"), ("BLOCK", "value")]
    assert k.template_params[1].value_type == m.Scalar("int32")
    assert [i.args for i in k.instantiations] == [("float", "256"), ("double", "128")]
    assert k.params[0].type == m.Pointer(m.TemplateType("T"), restrict=True)
    buf = [d for d in nodes(k, m.VarDecl) if d.name == "buf"][0]
    assert buf.type.extent is None and buf.type.extent_text == "BLOCK"
    launches = p.unit.launches
    assert len(launches) == 2
    first, second = launches
    assert first.kernel == "scale" and first.template_args == ("float", "256")
    assert first.grid.text == "(n + 255) / 256" and first.block.text == "256"
    assert first.block.value == 256 and first.shared_bytes is None
    assert [a.text for a in first.args] == ["yf", "xf", "2.0f", "n"]
    assert second.block.text == "dim3(128)" and second.shared_bytes.text == "0"
    assert second.stream.text == "0" and second.caller == "main"


def test_launch_sites_with_streams_and_dynamic_shared(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void reduce(const float* x, float* out, int n) {
            extern __shared__ float s[];
            s[threadIdx.x] = x[threadIdx.x];
        }
        void launch(const float* x, float* out, int n, cudaStream_t stream) {
            const int threads = 256;
            reduce<<<(n + threads - 1) / threads, threads, threads * sizeof(float), stream>>>(x, out, n);
        }
    """)
    assert not errors(p)
    (site,) = p.unit.launches
    assert site.caller == "launch"
    assert site.shared_bytes.text == "threads * sizeof(float)"
    assert site.shared_bytes.value == 1024
    assert site.stream.text == "stream" and site.block.value == 256


def test_launch_sites_spelled_in_a_macro_and_in_a_namespace(tmp_path):
    """Host functions whose text has no ``<<<`` are not walked for launches, unless a macro of
    the user's spells one: a launch through a macro is found, and one in a function of a
    namespace or an extern "C" block too (their declarations are the user's)."""
    p = parse(tmp_path, HEADER + """
        #define LAUNCH(k, n, ...) k<<<((n) + 127) / 128, 128>>>(__VA_ARGS__)
        __global__ void fill(float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = 1.0f;
        }
        void by_macro(float* y, int n) { LAUNCH(fill, n, y, n); }
        namespace host { void plain(float* y) { fill<<<2, 64>>>(y, 100); } }
        extern "C" void c_entry(float* y) { fill<<<1, 32>>>(y, 32); }
    """)
    assert not errors(p), errors(p)
    assert sorted((s.caller, s.block.value) for s in p.unit.launches) == [
        ("by_macro", 128), ("c_entry", 32), ("plain", 64)]


def test_a_dim3_assigned_after_its_declaration_has_no_constant_size(tmp_path):
    """``dim3 blocks, threads; threads = dim3(M1W);`` (a real matching program): the declaration
    does not say the launch's size (it was read as dim3's default, 1 thread), so the launch has
    none; a dim3 declared with its value and never assigned keeps it."""
    p = parse(tmp_path, HEADER + """
        #define M1W 128
        __global__ void k(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 1.0f; }
        int main() {
            dim3 blocks, threads;
            blocks = dim3(1024 / M1W);
            threads = dim3(M1W);
            k<<<blocks, threads>>>(nullptr, 1024);
            dim3 grid2(8), block2 = dim3(64);
            block2.y = 1;
            dim3 grid3(4), block3 = dim3(32);
            k<<<grid2, block2>>>(nullptr, 512);
            k<<<grid3, block3>>>(nullptr, 128);
        }
    """)
    assert not errors(p), errors(p)
    first, second, third = sorted(p.unit.launches, key=lambda s: s.span.line)
    assert first.block.dims is None and first.grid.dims is None
    assert second.block.dims is None and second.grid.dims == (8, 1, 1)  # block2.y = 1 assigns it
    assert third.block.dims == (32, 1, 1) and third.grid.dims == (4, 1, 1)


def test_half_arithmetic_is_plain_operators(tmp_path):
    p = parse(tmp_path, """
        #include <cuda_fp16.h>
        __global__ void k(__half* y, const __half* a, const __half* b, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = __hadd(a[i], b[i]) * __float2half(2.0f);
        }
    """)
    assert not errors(p), errors(p)
    k = p.unit.kernel("k")
    assert any(b.op == "*" for b in nodes(k, m.Binary))
    assert {c.callee for c in nodes(k, m.Call)} >= {"__hadd", "__float2half"}


def test_cooperative_groups_methods(tmp_path):
    p = parse(tmp_path, """
        #include <cooperative_groups.h>
        namespace cg = cooperative_groups;
        __global__ void k(float* y) {
            cg::thread_block block = cg::this_thread_block();
            cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
            float v = y[block.thread_rank()];
            v += tile.shfl_down(v, 1);
            block.sync();
            y[0] = v;
        }
    """)
    assert not errors(p), errors(p)
    k = p.unit.kernel("k")
    methods = {c.method for c in nodes(k, m.MethodCall)}
    assert {"thread_rank", "shfl_down", "sync"} <= methods
    calls = {c.callee: c.kind for c in nodes(k, m.Call)}
    assert calls["cooperative_groups::this_thread_block"] == "cg"


def test_macros_expand_and_spans_point_at_source(tmp_path):
    p = parse(tmp_path, HEADER + """
        #define IDX(r, c, ld) ((r) * (ld) + (c))
        #define BLOCK 128
        __global__ void k(float* a, int ld) {
            a[IDX(blockIdx.x, threadIdx.x, ld)] = BLOCK;
        }
    """)
    assert not errors(p)
    k = p.unit.kernel("k")
    (assign,) = nodes(k, m.Assign)
    assert isinstance(assign.value, m.Cast) or isinstance(assign.value, m.IntLit)
    lits = [n for n in nodes(k, m.IntLit)]
    assert any(lit.value == 128 for lit in lits)
    assert assign.span.line == 5


def test_defines_and_include_dirs_are_applied(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "sizes.h").write_text("#define VEC 4\n")
    p = parse(tmp_path, HEADER + """
        #include "sizes.h"
        #ifdef USE_DOUBLE
        typedef double real;
        #else
        typedef float real;
        #endif
        __global__ void k(real* y) { y[threadIdx.x] = VEC; }
    """, include_dirs=(str(inc),), defines=("USE_DOUBLE",))
    assert not errors(p)
    assert not [d for d in p.diagnostics if d.code == "M1005"]
    assert p.unit.kernel("k").params[0].type == m.Pointer(m.Scalar("float64"))


def test_dump_is_deterministic(tmp_path):
    src = HEADER + "\n__global__ void k(float* y) { y[threadIdx.x] = 2.0f * y[threadIdx.x]; }\n"
    first = m.dump(parse(tmp_path, src, "a.cu").unit.kernel("k"))
    second = m.dump(parse(tmp_path, src, "b.cu").unit.kernel("k"))
    assert first == second
    assert "Builtin(var='threadIdx', dim='x'" in first


#: a kernel taking arrays as its parameters (the way key-schedule kernels take a salt): C reads
#: each as the pointer it decays to
ARRAY_PARAMS = """
#include <cuda_runtime.h>
__global__ void salted(const unsigned char salt[16], unsigned int out[], int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = salt[i % 16] * 3u + salt[(i + 5) % 16];
}
"""


def _array_params_spec():
    from tests.analysis.support import spec_buffer, spec_kernel, spec_scalar
    return spec_kernel("salted", (2, 1, 1), (64, 1, 1), "exact",
                       spec_buffer("salt", "uint8", 16, "in", 1, 200),
                       spec_buffer("out", "uint32", 128, "out"), spec_scalar("n", "int32", 120))


ARRAY_PARAMS_SPEC = _array_params_spec()


def test_a_kernels_array_parameters_are_the_pointers_they_decay_to(tmp_path):
    from tests.analysis.support import converted
    (tmp_path / "p").mkdir()
    k = parse(tmp_path / "p", ARRAY_PARAMS).unit.kernel("salted")
    params = {q.name: q.type for q in k.params}
    assert params["salt"] == m.Pointer(m.Scalar("uint8"), const=True)
    assert params["out"] == m.Pointer(m.Scalar("uint32"))
    _out, (row,) = converted(tmp_path, ARRAY_PARAMS, ARRAY_PARAMS_SPEC)
    assert row["form"] == "tile" and row["check"]["status"] == "pass", (row["reason"], row["check"]["message"])
