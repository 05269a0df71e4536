"""Forwarded shared caches of two more shapes (analysis.lift.forward_shared): a fixed cell one
pinned thread stores (``if (threadIdx.x == 0) s[0] = V``, read by the whole block), and a 2-D
block's rows laid out in one dimension (``s[threadIdx.y * W + threadIdx.x]``, ``W`` the block's
width or a constant). Each is converted, run on the CPU against the CUDA compiled with g++ and
lowered for sm_90a; refused: a cell that several threads store different values to, rows whose
width is not the block's plus a constant.
"""
from __future__ import annotations

import pytest

from tests.analysis.lift.support import convert, factory, load, note


def _spec(name, grid, block, args) -> str:
    lines = [f"[[kernel]]", f'name = "{name}"', f"grid = {list(grid)}", f"block = {list(block)}",
             'tolerance = "fp32"']
    for arg in args:
        lines.append("[[kernel.args]]")
        lines += [f"{k} = {v!r}".replace("'", '"') for k, v in arg.items()]
    return "\n".join(lines) + "\n"


def _buf(name, dtype, n, role, rng=(-2.0, 2.0)):
    out = {"name": name, "buffer": dtype, "elements": n, "role": role}
    if role != "out":
        out["range"] = list(rng) if dtype.startswith("float") else [1, 50]
    return out


#: A per-block value broadcast through a shared cell (radixsort's uniformUpdate): thread 0 loads
#: it, every thread of the block reads it after the barrier.
CELL = """
    __global__ void add_block(float* __restrict__ d, const float* __restrict__ b, int n) {
        __shared__ float base[1];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (threadIdx.x == 0) base[0] = b[blockIdx.x] * 2.0f;
        __syncthreads();
        if (i < n) d[i] = d[i] * base[0] + 1.0f;
    }
"""
CELL_SPEC = _spec("add_block", (8, 1, 1), (64, 1, 1), [
    _buf("d", "float32", 500, "inout"), _buf("b", "float32", 8, "in"),
    {"name": "n", "scalar": "int32", "value": 500}])


def test_a_cell_thread_zero_stores_is_forwarded_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, CELL, "--check", "cpu", spec=CELL_SPEC)
    k = kernels["add_block"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "add_block")
    assert "alloc_shared" not in body and "sync_threads" not in body
    # the cell's value read where it was used, with no guard left (thread 0 always exists)
    assert "b[gx // block_x] * 2.0" in body and "if_then_else" not in body, body


def test_a_cell_lowers_for_sm90(tmp_path):
    from tests.lowering import lower_sm90
    kernels, _ = convert(tmp_path, CELL)
    assert kernels["add_block"]["form"] == "tile"
    src = lower_sm90(load(tmp_path / "out" / "k.py").ADD_BLOCK, (8, 1, 1), (64, 1, 1))
    assert "__syncthreads" not in src and "b[" in src, src


#: The cell of one thread in a conditional block: its value only where that thread stored it.
CELL_GUARDED = """
    __global__ void first_of_block(const int* __restrict__ x, int* __restrict__ y, int n) {
        __shared__ int first;
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (threadIdx.x == 0 && i < n) first = x[i];
        __syncthreads();
        if (i < n) y[i] = x[i] - first;
    }
"""
CELL_GUARDED_SPEC = _spec("first_of_block", (5, 1, 1), (32, 1, 1), [
    _buf("x", "int32", 150, "in"), _buf("y", "int32", 150, "out"),
    {"name": "n", "scalar": "int32", "value": 150}]).replace('"fp32"', '"exact"')


def test_a_guarded_cell_keeps_its_guard_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, CELL_GUARDED, "--check", "cpu", spec=CELL_GUARDED_SPEC)
    k = kernels["first_of_block"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "first_of_block")
    assert "alloc_shared" not in body
    assert "if_then_else(" in body and "< n" in body, body  # thread 0's own bound


#: A 2-D block's tile in one flat shared array (asmooth's ``stid = tjd * blockDim.x + tid``),
#: each element reading its right neighbour in the tile where the block has it.
FLAT = """
    __global__ void right_diff(const float* __restrict__ in, float* __restrict__ out, int w, int h) {
        __shared__ float s[256];
        int tx = threadIdx.x, ty = threadIdx.y;
        int x = blockIdx.x * blockDim.x + tx;
        int y = blockIdx.y * blockDim.y + ty;
        int stid = ty * blockDim.x + tx;
        if (x < w && y < h) s[stid] = in[y * w + x];
        __syncthreads();
        if (x < w && y < h) {
            float r = (tx + 1 < blockDim.x && x + 1 < w) ? s[stid + 1] : in[y * w + x];
            out[y * w + x] = r - 0.5f * s[stid];
        }
    }
"""
FLAT_SPEC = _spec("right_diff", (3, 4, 1), (16, 8, 1), [
    _buf("in", "float32", 45 * 30, "in"), _buf("out", "float32", 45 * 30, "out"),
    {"name": "w", "scalar": "int32", "value": 45}, {"name": "h", "scalar": "int32", "value": 30}])


def test_flat_rows_of_the_block_are_forwarded_and_agree_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, FLAT, "--check", "cpu", spec=FLAT_SPEC)
    k = kernels["right_diff"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "right_diff")
    assert "sync_threads" not in body and "T.Parallel" in body
    assert "0.5 * in_[gy * w + gx]" in body, body  # its own element: the load the thread stored


def test_flat_rows_lower_for_sm90(tmp_path):
    from tests.lowering import lower_sm90
    kernels, _ = convert(tmp_path, FLAT)
    assert kernels["right_diff"]["form"] == "tile"
    src = lower_sm90(load(tmp_path / "out" / "k.py").RIGHT_DIFF, (3, 4, 1), (16, 8, 1))
    assert "__global__" in src and "in_[" in src, src


def test_a_staged_store_keeps_the_helpers_of_the_cuda_functions_on_cpu(tmp_path):
    # the map's store is strided along x (``out[x * h + y]``): it is staged through a shared tile,
    # and the kernel keeps the C helper of __fdividef (which the CPU's C target links against)
    source = FLAT.replace("out[y * w + x] = r - 0.5f * s[stid];", "out[x * h + y] = __fdividef(r, 2.0f + s[stid] * s[stid]);")
    kernels, text = convert(tmp_path, source, "--check", "cpu", spec=FLAT_SPEC)
    k = kernels["right_diff"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "right_diff")
    assert "vals = T.alloc_shared" in body and "prelude=cuda_math.externs_for(['__fdividef'], target)" in body, body


#: Rows padded by one element (a transpose tile's ``blockDim.x + 1``), read by each element at
#: its own place and the one below it.
PADDED = FLAT.replace("int stid = ty * blockDim.x + tx;", "int stid = ty * (blockDim.x + 1) + tx;") \
    .replace("(tx + 1 < blockDim.x && x + 1 < w) ? s[stid + 1]",
             "(ty + 1 < blockDim.y && y + 1 < h) ? s[stid + blockDim.x + 1]")


def test_rows_padded_past_the_block_agree_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, PADDED, "--check", "cpu", spec=FLAT_SPEC)
    k = kernels["right_diff"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    assert "sync_threads" not in factory(text, "right_diff")


#: A staged tile next to a global atomic (a stencil that also counts its outliers): the atomic
#: stays, the cache is forwarded.
COUNTED = """
    #define B 64
    __global__ void smooth_count(const float* __restrict__ in, float* __restrict__ out, int* __restrict__ big,
                                 int n) {
        __shared__ float s[B];
        int i = blockIdx.x * B + threadIdx.x;
        s[threadIdx.x] = i < n ? in[i] : 0.0f;
        __syncthreads();
        if (i < n) {
            float v = threadIdx.x > 0 ? 0.5f * (s[threadIdx.x] + s[threadIdx.x - 1]) : s[threadIdx.x];
            out[i] = v;
            if (v > 0.5f) atomicAdd(big, 1);
        }
    }
"""
COUNTED_SPEC = _spec("smooth_count", (4, 1, 1), (64, 1, 1), [
    _buf("in", "float32", 250, "in"), _buf("out", "float32", 250, "out"),
    {"name": "big", "buffer": "int32", "elements": 1, "role": "inout", "range": [0, 3]},
    {"name": "n", "scalar": "int32", "value": 250}])


def test_a_cache_next_to_a_global_atomic_is_forwarded_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, COUNTED, "--check", "cpu", spec=COUNTED_SPEC)
    k = kernels["smooth_count"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "smooth_count")
    assert "sync_threads" not in body and "T.atomic_add(big" in body, body


# -- refusals ----------------------------------------------------------------------------------------

def test_a_cell_several_threads_store_is_refused(tmp_path):
    kernels, _ = convert(tmp_path, CELL.replace("if (threadIdx.x == 0) base[0] = b[blockIdx.x] * 2.0f;",
                                                "if (threadIdx.x < 4) base[0] = b[blockIdx.x] * threadIdx.x;"))
    k = kernels["add_block"]
    assert k["form"] == "portable", k
    assert "depends on 'x', which its index does not determine" in note(k), note(k)


@pytest.mark.parametrize("width", ["w", "17"])
def test_rows_of_another_width_are_refused(tmp_path, width):
    # a width the block may exceed: two threads would store one element
    source = FLAT.replace("int stid = ty * blockDim.x + tx;", f"int stid = ty * {width} + tx;")
    kernels, _ = convert(tmp_path, source)
    k = kernels["right_diff"]
    assert k["form"] == "portable", k
    assert "the row width of the shared store at line 9 is not the block's width along x (plus a constant)" \
        in note(k), note(k)


def test_a_cache_of_what_atomics_update_is_refused(tmp_path):
    # the staged value is read from the counter the atomics bump: after the barrier it may differ
    source = COUNTED.replace("s[threadIdx.x] = i < n ? in[i] : 0.0f;", "s[threadIdx.x] = i < n ? in[i] + big[0] : 0.0f;")
    kernels, _ = convert(tmp_path, source)
    k = kernels["smooth_count"]
    assert k["form"] != "tile", k
    assert "the value stored to 's' reads 'big', which atomics update" in note(k), note(k)


def test_atomics_on_the_shared_array_are_not_a_cache(tmp_path):
    source = COUNTED.replace("if (v > 0.5f) atomicAdd(big, 1);", "if (v > 0.5f) atomicAdd(&s[0], 1.0f);")
    kernels, _ = convert(tmp_path, source)
    assert "it combines shared memory with atomics on shared memory (line 13)" in note(kernels["smooth_count"])


def test_a_cell_holding_what_an_atomic_returned_is_refused(tmp_path):
    # one slot per block from a global counter: evaluated again at each read, it would be many
    kernels, _ = convert(tmp_path, """
        __global__ void slots(const float* __restrict__ in, float* __restrict__ out, int* __restrict__ counter) {
            __shared__ int slot;
            if (threadIdx.x == 0) slot = atomicAdd(counter, 1);
            __syncthreads();
            out[slot * blockDim.x + threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
        }
    """)
    k = kernels["slots"]
    assert k["form"] != "tile", k
    assert "the value stored to 'slot' at line 5 comes from an atomic" in note(k), note(k)
