"""Each analysis pass on its own: what it rewrites, and what it must refuse."""
from __future__ import annotations

import textwrap

import pytest

from migrate.analysis.prepare import rewrite
from migrate.analysis.prepare.coop_groups import GroupError, lower_cooperative_groups
from migrate.analysis.facts.divergence import thread_dependent_names
from migrate.analysis.prepare.inline import InlineError, hoist_warp_calls, inline_calls, needs_inlining
from migrate.ir.loops import Barrier, Exchange, Phase, UniformIf, UniformLoop
from migrate.analysis.phases import NotPortable, plan_portable
from migrate.analysis.prepare.renaming import rename_reassigned_locals
from migrate.analysis.prepare.vectors import VectorError, scalarize_vectors
from migrate.ir import model as m
from migrate.parse.frontend import parse_file


def unit(tmp_path, source: str):
    path = tmp_path / "k.cu"
    path.write_text("#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cooperative_groups.h>\n"
                    + textwrap.dedent(source))
    parsed = parse_file(path)
    assert not [d for d in parsed.diagnostics if d.severity.value == "error"], parsed.diagnostics
    return parsed.unit


def nodes(fn, cls):
    return [n for n in m.walk(fn.body) if isinstance(n, cls)]


def calls(fn):
    return [n.callee for n in nodes(fn, m.Call)]


# -- inlining ---------------------------------------------------------------------------------

INLINE = """
__device__ float block_sum(float v, float* scratch) {
    scratch[threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.x == 0) { float t = 0; for (int i = 0; i < blockDim.x; ++i) t += scratch[i]; scratch[0] = t; }
    __syncthreads();
    return scratch[0];
}
__device__ float twice(float v) { return 2 * v; }
__device__ void bump(float& acc, float v) { acc += v; }
__global__ void k(const float* x, float* y) {
    __shared__ float s[128];
    float acc = 0;
    bump(acc, x[threadIdx.x]);
    float total = twice(block_sum(acc, s)) + 1.0f;
    y[blockIdx.x] = total;
}
"""


def test_inline_only_what_the_phase_split_must_see(tmp_path):
    u = unit(tmp_path, INLINE)
    device = {f.name: f for f in u.device_functions}
    assert needs_inlining(device) == {"block_sum", "bump"}
    assert needs_inlining(device, portable=False) == {"bump"}  # reference parameter only
    fn = inline_calls(u.kernel("k"), device, needs_inlining(device))
    assert "block_sum" not in calls(fn) and "bump" not in calls(fn)
    assert "twice" in calls(fn) and fn.calls == ("twice",)  # a plain helper stays a macro
    assert calls(fn).count("__syncthreads") == 2
    # the shared array reaches the inlined body through the pointer parameter
    assert any(isinstance(n, m.Index) and isinstance(n.base, m.Ref) and n.base.name == "s"
               for n in m.walk(fn.body))
    # the reference parameter writes the caller's variable
    assigns = [n for n in nodes(fn, m.Assign) if isinstance(n.target, m.Ref) and n.target.name == "acc"]
    assert assigns and assigns[0].op == "+="


def test_inline_refuses_calls_it_cannot_hoist(tmp_path):
    u = unit(tmp_path, INLINE.replace("float total = twice(block_sum(acc, s)) + 1.0f;",
                                      "float total = acc > 0 && block_sum(acc, s) > 0;"))
    device = {f.name: f for f in u.device_functions}
    with pytest.raises(InlineError, match="after '&&'"):
        inline_calls(u.kernel("k"), device, needs_inlining(device))


def test_warp_calls_get_statements_of_their_own(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* y) {
            float v = y[threadIdx.x];
            v += __shfl_down_sync(0xffffffffu, v, 1) * 2.0f;
            y[threadIdx.x] = v;
        }
    """)
    fn = hoist_warp_calls(u.kernel("k"))
    decls = [d for d in nodes(fn, m.VarDecl) if d.name.startswith("shfl_down")]
    assert len(decls) == 1
    assigns = [a for a in nodes(fn, m.Assign) if isinstance(a.value, m.Call)]
    assert assigns and assigns[0].value.callee == "__shfl_down_sync"


# -- vectors ----------------------------------------------------------------------------------

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


# -- cooperative groups -----------------------------------------------------------------------

def test_cooperative_groups_lower_to_builtins(tmp_path):
    u = unit(tmp_path, """
        #include <cooperative_groups/reduce.h>
        namespace cg = cooperative_groups;
        __global__ void k(const float* x, float* y) {
            cg::thread_block block = cg::this_thread_block();
            cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
            float v = x[block.thread_rank()];
            v = cg::reduce(tile, v, cg::plus<float>());
            block.sync();
            float w = tile.shfl_down(v, 1);
            unsigned slot = tile.meta_group_rank();
            if (tile.thread_rank() == 0) y[slot] = v + w;
        }
    """)
    fn = lower_cooperative_groups(u.kernel("k"))
    assert not nodes(fn, m.MethodCall)
    assert not [c for c in nodes(fn, m.Call) if c.kind == "cg"]
    names = calls(fn)
    assert "__syncthreads" in names and "__shfl_down_sync" in names and "__shfl_xor_sync" in names
    loops = nodes(fn, m.For)
    assert loops and loops[0].init.decls[0].init.value == 16  # butterfly over 32 lanes
    assert any(isinstance(b, m.Binary) and b.op == "%" and isinstance(b.rhs, m.IntLit) and b.rhs.value == 32
               for b in m.walk(fn.body))


def test_group_used_as_a_value_is_refused(tmp_path):
    u = unit(tmp_path, """
        namespace cg = cooperative_groups;
        __device__ float f(cg::thread_block b) { return 1.0f; }
        __global__ void k(float* y) {
            cg::thread_block block = cg::this_thread_block();
            y[0] = block.group_dim().x;
        }
    """)
    with pytest.raises(GroupError):
        lower_cooperative_groups(u.kernel("k"))


# -- rewrites ---------------------------------------------------------------------------------

def test_unique_names_renames_shadowed_and_reserved(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* T, int n) {
            int i = 0;
            for (int i = 1; i < n; ++i) { T[i] = i; }
            { float lambda = 2; T[0] = lambda + i; }
        }
    """)
    fn = rewrite.unique_names(u.kernel("k"))
    decls = [d.name for d in nodes(fn, m.VarDecl)]
    assert len(set(decls)) == len(decls) and "lambda" not in decls and "lambda_" in decls
    assert fn.params[0].name == "T_"
    refs = {r.name for r in nodes(fn, m.Ref)}
    assert "T" not in refs and "T_" in refs


def test_straight_line_reassignments_get_names_of_their_own(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* out, int n) {
            int x = threadIdx.x;
            int y = 1;
            out[x] = 0.0f;
            __syncthreads();
            x = x + blockIdx.x;
            if (n > 0) y = 2;
            out[x] = y;
        }
    """)
    fn = rename_reassigned_locals(rewrite.unique_names(u.kernel("k")))
    decls = {d.name: d.init for d in nodes(fn, m.VarDecl)}
    assert set(decls) == {"x", "x_2", "y"}
    # the new x reads the old one; the store after it reads the new one
    assert {r.name for r in m.walk(decls["x_2"]) if isinstance(r, m.Ref)} == {"x"}
    stores = [a for a in nodes(fn, m.Assign) if isinstance(a.target, m.Index)]
    assert [{r.name for r in m.walk(a.target.index) if isinstance(r, m.Ref)} for a in stores] == [{"x"}, {"x_2"}]
    # y is also assigned in a branch: which value reaches the store is not decided by the text
    assert [a.target.name for a in nodes(fn, m.Assign) if isinstance(a.target, m.Ref)] == ["y"]


def test_early_return_becomes_a_guard(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* y, int n) {
            int i = threadIdx.x;
            if (i >= n) return;
            y[i] = 1.0f;
            __syncthreads();
            y[i] += 1.0f;
        }
    """)
    fn = rewrite.returns_to_guards(u.kernel("k"))
    assert not rewrite.remaining_returns(fn)
    guard = [s for s in fn.body.stmts if isinstance(s, m.If)][0]
    assert guard.cond.op == "<" and len(guard.then.stmts) == 3


def test_buffer_views_fold_into_indices(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(const float* x, float* y, int cols) {
            extern __shared__ float smem[];
            float* s_red = smem + cols;
            const float* row = x + blockIdx.x * cols;
            s_red[threadIdx.x] = row[threadIdx.x];
            y[0] = s_red[0];
        }
    """)
    fn, aliases, unresolved = rewrite.pointer_aliases(u.kernel("k"))
    assert set(aliases) == {"s_red", "row"} and not unresolved
    bases = {n.base.name: n.base.kind for n in nodes(fn, m.Index) if isinstance(n.base, m.Ref)}
    assert bases == {"smem": "shared", "x": "param", "y": "param"}


# -- divergence and phases --------------------------------------------------------------------

PHASES = """
__global__ void k(const float* x, float* y, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    int half = blockDim.x / 2;
    s[t] = x[t];
    __syncthreads();
    for (int st = half; st > 0; st >>= 1) {
        if (t < st) s[t] += s[t + st];
        __syncthreads();
    }
    if (t < 32) {
        float v = s[t];
        v += __shfl_xor_sync(0xffffffffu, v, 16);
        if (t == 0) y[blockIdx.x] = v;
    }
}
"""


def test_thread_dependence(tmp_path):
    fn = unit(tmp_path, PHASES).kernel("k")
    dependent = thread_dependent_names(fn)
    assert {"t", "v"} <= dependent and "half" not in dependent and "st" not in dependent


def test_phase_split(tmp_path):
    fn = hoist_warp_calls(unit(tmp_path, PHASES).kernel("k"))
    plan = plan_portable(rewrite.unique_names(fn))
    kinds = [type(r).__name__ for r in plan.regions]
    assert kinds[:4] == ["Phase", "Barrier", "UniformLoop", "Phase"]
    loop = plan.regions[2]
    assert isinstance(loop, UniformLoop) and any(isinstance(r, Barrier) for r in loop.body)
    branch = [r for r in plan.regions if isinstance(r, UniformIf)][0]
    assert branch.predicate and any(isinstance(r, Exchange) and r.op == "shfl_xor" for r in branch.then)
    placement = {name: vp.placement for name, vp in plan.vars.items()}
    assert placement["s"] == "shared" and placement["t"] == "thread_array"
    assert placement["half"] in ("kernel_var", "phase") and placement[branch.predicate] == "thread_array"


def test_barrier_in_a_thread_dependent_loop_is_not_portable(tmp_path):
    fn = unit(tmp_path, """
        __global__ void k(float* y) {
            for (int i = 0; i < threadIdx.x; ++i) { y[i] += 1; __syncthreads(); }
        }
    """).kernel("k")
    with pytest.raises(NotPortable, match="loop that depends on the thread"):
        plan_portable(fn)


def test_access_root_and_store_targets_find_the_buffers_of_accesses(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(const float4* a, float* b, float* total, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            float v = a[i].x + *(b + i);
            b[i] = v;
            b[i] += 1.0f;
            atomicAdd(total, v);
        }
    """)
    fn = u.kernels[0]
    roots = [m.access_root(t) for t in m.store_targets(fn.body)]
    assert [r.name for r in roots] == ["b", "b", "total"]
    member = next(n for n in m.walk(fn.body) if isinstance(n, m.Member))
    assert m.access_root(member).name == "a"  # through the member and the index
    assert m.access_root(member, through=(m.Cast,)) is None  # only casts peeled
    deref = next(n for n in m.walk(fn.body) if isinstance(n, m.Unary) and n.op == "*")
    assert m.access_root(deref) is None  # *(b + i): the pointer arithmetic is no access root
