"""analysis.prepare.global_index: the ``blockIdx * blockDim + threadIdx`` idioms folded into
``globalIdx``, the block sizes a constant spelling assumes, and what is left over."""
from __future__ import annotations

from migrate.analysis.prepare.global_index import (assumed_block_sizes, blocks_as_segments, builtin_uses,
                                                   domain_dims, fold_global_indices, global_builtin,
                                                   global_index_dim, leftover_thread_indices)
from migrate.ir import model as m
from tests.analysis.support import nodes, unit

KERNELS = """
    #define TILE 16
    __global__ void saxpy(float a, const float* x, float* y, int n) {
        int i = threadIdx.x + blockDim.x * blockIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }
    __global__ void tiled(const float* in, float* out, int w, int h) {
        int col = blockIdx.x * TILE + threadIdx.x;
        int row = blockIdx.y * TILE + threadIdx.y;
        if (row < h && col < w) out[row * w + col] = in[row * w + col];
    }
    __global__ void shifted(const float* in, float* out, int n) {
        int i = threadIdx.x + 1 + blockIdx.x * blockDim.x;
        if (i < n) out[i - 1] = in[i];
    }
    __global__ void checked(const float* in, float* out, int n) {
        int i = blockIdx.x * 32 + threadIdx.x;
        if (i < n && blockDim.x == 32) out[i] = in[i];
    }
    __global__ void two_sizes(float* out) {
        out[blockIdx.x * 16 + threadIdx.x] = 1.0f;
        out[blockIdx.x * 32 + threadIdx.x] = 2.0f;
    }
    __global__ void per_block(const float* in, float* out) { out[blockIdx.x] = 2.0f * in[blockIdx.x]; }
    __global__ void one_block(const float* in, float* out) { out[threadIdx.x] = in[threadIdx.x]; }
    __global__ void block_sum(const float* in, float* out) {
        __shared__ float s[256];
        s[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
        __syncthreads();
        if (threadIdx.x == 0) { float t = 0.0f; for (int k = 0; k < 256; ++k) t += s[k]; out[blockIdx.x] = t; }
    }
    __global__ void odd(float* out, int n) {
        out[blockIdx.x * blockDim.y + threadIdx.x] = 1.0f;
        out[blockIdx.x * blockDim.x + threadIdx.y] = 2.0f;
        out[blockIdx.x * blockDim.x] = 3.0f;
    }
"""


def _builtins(node) -> set[tuple]:
    return {(n.var, n.dim) for n in m.walk(node) if isinstance(n, m.Builtin)}


def _stripped(e):
    while isinstance(e, m.Cast):
        e = e.operand
    return e


def _inits(fn) -> dict:
    return {d.name: _stripped(d.init) for d in nodes(fn, m.VarDecl) if d.init is not None}


def _stored_indices(fn) -> list:
    return [_stripped(a.target.index) for a in nodes(fn, m.Assign) if isinstance(a.target, m.Index)]


def test_global_index_dim_recognises_the_idiom_in_any_order(tmp_path):
    u = unit(tmp_path, KERNELS)
    assert global_index_dim(_inits(u.kernel("saxpy"))["i"]) == ("x", None)
    tiled = _inits(u.kernel("tiled"))
    assert global_index_dim(tiled["col"]) == ("x", 16) and global_index_dim(tiled["row"]) == ("y", 16)
    # blockDim.y with blockIdx.x, threadIdx.y with blockIdx.x, no thread term: none is the idiom
    assert [global_index_dim(e) for e in _stored_indices(u.kernel("odd"))] == [None, None, None]
    g = global_builtin("y", tiled["row"])
    assert (g.var, g.dim, g.type) == ("globalIdx", "y", tiled["row"].type)


def test_fold_global_indices(tmp_path):
    u = unit(tmp_path, KERNELS)
    saxpy, sizes = fold_global_indices(u.kernel("saxpy"))
    assert sizes == {} and _builtins(saxpy.body) == {("globalIdx", "x")}
    tiled, sizes = fold_global_indices(u.kernel("tiled"))
    # blockIdx.d * TILE + threadIdx.d assumes blockDim.d == TILE: the launch must use it
    assert sizes == {"x": 16, "y": 16} and _builtins(tiled.body) == {("globalIdx", "x"), ("globalIdx", "y")}
    # the idiom split by a constant (tx + 1 + bx * bdx) folds through its affine form
    shifted, _ = fold_global_indices(u.kernel("shifted"))
    i = _inits(shifted)["i"]
    assert _builtins(i) == {("globalIdx", "x")} and any(isinstance(n, m.IntLit) and n.value == 1 for n in m.walk(i))


def test_constant_block_sizes_are_only_assumed_when_consistent(tmp_path):
    u = unit(tmp_path, KERNELS)
    # the kernel reads blockDim.x itself: 32 is not assumed, and the idiom does not fold
    checked = u.kernel("checked")
    assert assumed_block_sizes(checked) == {}
    folded, sizes = fold_global_indices(checked)
    assert sizes == {} and ("globalIdx", "x") not in _builtins(folded.body)
    # two different constants for x: neither is the block size
    two = u.kernel("two_sizes")
    assert assumed_block_sizes(two) == {}
    assert fold_global_indices(two)[0].body == two.body


def test_blocks_and_threads_alone_are_global_indices(tmp_path):
    u = unit(tmp_path, KERNELS)
    # no thread index: one element per block; no block index: the block is the whole domain
    per_block, _ = fold_global_indices(u.kernel("per_block"))
    one_block, _ = fold_global_indices(u.kernel("one_block"))
    assert _builtins(per_block.body) == _builtins(one_block.body) == {("globalIdx", "x")}
    assert builtin_uses(per_block) == {("globalIdx", "x")}
    assert leftover_thread_indices(per_block) == leftover_thread_indices(one_block) == []


def test_leftovers_and_blocks_as_segments(tmp_path):
    u = unit(tmp_path, KERNELS)
    fn = u.kernel("block_sum")
    assert builtin_uses(fn) == {("threadIdx", "x"), ("blockIdx", "x"), ("blockDim", "x")}
    folded, _ = fold_global_indices(fn)
    # s[threadIdx.x], threadIdx.x == 0: the thread's place in its block, not an element
    assert len(leftover_thread_indices(folded)) == 2
    assert ("globalIdx", "x") in _builtins(folded.body) and ("blockIdx", "x") in _builtins(folded.body)
    seg = blocks_as_segments(folded)
    assert ("blockIdx", "x") not in _builtins(seg.body)
    last = _stored_indices(seg)[-1]  # out[blockIdx.x] -> out[globalIdx.x / blockDim.x]
    assert isinstance(last, m.Binary) and last.op == "/"
    assert (last.lhs.var, last.rhs.var) == ("globalIdx", "blockDim")


def test_domain_dims(tmp_path):
    u = unit(tmp_path, KERNELS)
    assert domain_dims(fold_global_indices(u.kernel("saxpy"))[0].body) == ["x"]
    assert domain_dims(fold_global_indices(u.kernel("tiled"))[0].body) == ["x", "y"]
    assert domain_dims(u.kernel("saxpy").body) == ["x"]  # nothing folded yet: x alone
    z = global_builtin("z", _inits(u.kernel("saxpy"))["i"])
    assert domain_dims(m.ExprStmt(z, z.span)) == ["x", "y", "z"]
