"""Maps (analysis.lift.map): independent threads lifted to a map over tiles of their element domain.

What it lifts (grid-stride loops, constant block sizes, aliasing buffers kept in order, strided
stores) and what it must refuse (scatters, races, in-place shifts, lane arithmetic, stores that do
not tell elements apart).
"""
from __future__ import annotations

import re

import pytest

from tests.analysis.lift.support import convert, factory, note


def test_independent_threads_become_a_map_over_tiles(tmp_path):
    kernels, text = convert(tmp_path, """
        __global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
            int i = threadIdx.x + blockDim.x * blockIdx.x;   // the idiom in another order
            if (i < n) y[i] = a * x[i];
        }
        int main() { scale<<<40, 256>>>(nullptr, nullptr, 2.0f, 10000); }
    """)
    assert kernels["scale"]["form"] == "tile"
    body = factory(text, "scale")
    assert "for ix in T.Parallel(tile_x):" in body and "gx = bx * tile_x + ix" in body
    # a full tile is told apart from the last one by the CUDA tail guard's bound
    assert "if bx * tile_x + tile_x <= extent_x and bx * tile_x + tile_x <= n:" in body
    assert not re.search(r"\btx\b|get_thread|threadIdx", body)


def test_grid_stride_loop_becomes_a_domain_of_n_elements(tmp_path):
    kernels, text = convert(tmp_path, """
        __global__ void fill(float* __restrict__ y, int n) {
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
                y[i] = 1.0f;
        }
    """)
    assert kernels["fill"]["form"] == "tile"
    assert "with T.Kernel(T.ceildiv(n, tile_x), threads=threads) as bx:" in factory(text, "fill")


def test_constant_block_size_is_asserted(tmp_path):
    kernels, text = convert(tmp_path, """
        #define TILE 32
        __global__ void copy2d(const float* __restrict__ a, float* __restrict__ b, int rows, int cols) {
            int c = blockIdx.x * TILE + threadIdx.x;
            int r = blockIdx.y * 8 + threadIdx.y;
            if (r < rows && c < cols) b[r * cols + c] = a[r * cols + c];
        }
    """)
    assert kernels["copy2d"]["form"] == "tile"
    body = factory(text, "copy2d")
    assert 'assert block_x == 32' in body and 'assert block_y == 8' in body
    assert "for iy, ix in T.Parallel(tile_y, tile_x):" in body


@pytest.mark.parametrize("body, reason", [
    ("out[idx[i]] = x[i];", "data-dependent index"),                          # a scatter
    ("out[blockIdx.x] = x[i];", "race"),                                      # every element of a block
    ("out[i] = x[i]; out[i + 1] = 0.0f;", "race"),                            # neighbours overlap
    ("x2[i] = x2[i + 1];", "read at another element"),                         # in-place shift
    ("out[i] = (float)(threadIdx.x % 32);", "threadIdx.x is read"),           # lane arithmetic
])
def test_maps_it_must_refuse(tmp_path, body, reason):
    kernels, _ = convert(tmp_path, f"""
        __global__ void bad(const float* __restrict__ x, float* __restrict__ out, const int* idx,
                            float* x2, int n) {{
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) {{ {body} }}
        }}
    """)
    assert kernels["bad"]["form"] == "portable"
    assert reason in note(kernels["bad"]), note(kernels["bad"])


def test_buffers_that_may_alias_keep_program_order(tmp_path):
    kernels, text = convert(tmp_path, """
        __global__ void axpy(const float* x, float* y, float a, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = a * x[i] + y[i];
        }
    """)
    assert kernels["axpy"]["form"] == "tile"
    assert "T.annotate_restrict_buffers(x, y)" in factory(text, "axpy")


def test_strided_store_gets_square_tiles(tmp_path):
    _, text = convert(tmp_path, """
        __global__ void tr(const float* __restrict__ a, float* __restrict__ b, int rows, int cols) {
            int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
            if (r < rows && c < cols) b[c * rows + r] = a[r * cols + c];
        }
    """)
    assert "tile=(32, 32)" in factory(text, "tr")


def test_store_in_the_else_of_a_pinning_test_is_not_pinned(tmp_path):
    # the else runs for every element but one: each of them stores flag[0]
    kernels, _text = convert(tmp_path, """
        __global__ void mark(const float* __restrict__ x, float* __restrict__ y, int* flag, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i == 0) y[0] = x[0];
            else flag[0] = 1;
        }
        int main() { mark<<<4, 256>>>(nullptr, nullptr, nullptr, 1000); }
    """)
    assert kernels["mark"]["form"] == "portable"
    assert "the store to 'flag' at line 6 does not tell elements apart along x" in note(kernels["mark"])


# The pool's spellings of the two map idioms: an index declared at the top and assigned later
# (C89 style), and grid-stride loops whose start and stride are locals, as a for or a while.
SPELLED_LATER = """
    __global__ void late(float* __restrict__ y, const float* __restrict__ x, const int n) {
        int tid, half;
        float v;
        half = n / 2;
        tid = threadIdx.x + blockIdx.x * blockDim.x;
        if (tid >= n) return;
        v = x[tid] * 2.0f;
        y[tid] = tid < half ? v : -v;
    }
    __global__ void stride_for(int n, const float* x, float* y) {
        int index = blockIdx.x * blockDim.x + threadIdx.x;
        int stride = blockDim.x * gridDim.x;
        for (int i = index; i < n; i += stride) y[i] += x[i];
    }
    __global__ void stride_while(signed char* reads, const long length) {
        long index = blockIdx.x * blockDim.x + threadIdx.x;
        while (index < length) {
            reads[index] = reads[index] * 3 + 1;
            index += blockDim.x * gridDim.x;
        }
    }
    #define EACH(index, range) \
        for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < (range); index += blockDim.x * gridDim.x)
    __global__ void guarded_loop(const int rows, const int cols, const float* x, float* y) {
        if (rows > 0) {
            EACH(e, rows * cols) { y[e] = x[e] * (float)(e % cols); }
        }
    }
    #define RANK (((gridDim.x) * (blockIdx.y) + (blockIdx.x)) * (blockDim.x) + (threadIdx.x))
    __global__ void flat_grid(float* a, const float* b, int n) {  // threads numbered across a 2-D grid
        if (RANK < n) a[RANK] = a[RANK] * b[RANK] - 1.0f;
    }
    #define THREADS 256
    __global__ void named_indices(const long n, float* d) {  // the thread and block indices named first
        int bx = blockIdx.x;
        int tx = threadIdx.x;
        int ei = (bx * THREADS) + tx;
        if (ei < n) d[ei] = logf(d[ei]) * 255.0f;
    }
    __global__ void block_stride(int n, const float* x, float* y) {  // not a grid stride: stays portable
        int index = blockIdx.x * blockDim.x + threadIdx.x;
        int stride = blockDim.x;
        for (int i = index; i < n && i < (blockIdx.x + 1) * 64 * 4; i += stride) y[i] = 2.0f * x[i];
    }
"""

SPELLED_LATER_SPEC = """
[[kernel]]
name = "late"
tolerance = "fp32"
grid = [4, 1, 1]
block = [256, 1, 1]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 1000
role = "out"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 1000
role = "in"
range = [-4.0, 4.0]
[[kernel.args]]
name = "n"
scalar = "int32"
value = 1000

[[kernel]]
name = "stride_for"
tolerance = "fp32"
grid = [3, 1, 1]
block = [64, 1, 1]
[[kernel.args]]
name = "n"
scalar = "int32"
value = 1000
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 1000
role = "in"
range = [-4.0, 4.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 1000
role = "inout"
range = [-4.0, 4.0]

[[kernel]]
name = "stride_while"
grid = [2, 1, 1]
block = [128, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "reads"
buffer = "int8"
elements = 777
role = "inout"
range = [-100, 100]
[[kernel.args]]
name = "length"
scalar = "int64"
value = 777

[[kernel]]
name = "guarded_loop"
tolerance = "fp32"
grid = [2, 1, 1]
block = [32, 1, 1]
[[kernel.args]]
name = "rows"
scalar = "int32"
value = 9
[[kernel.args]]
name = "cols"
scalar = "int32"
value = 31
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 279
role = "in"
range = [-4.0, 4.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 279
role = "out"

[[kernel]]
name = "flat_grid"
tolerance = "fp32"
grid = [3, 2, 1]
block = [64, 1, 1]
[[kernel.args]]
name = "a"
buffer = "float32"
elements = 300
role = "inout"
range = [-4.0, 4.0]
[[kernel.args]]
name = "b"
buffer = "float32"
elements = 300
role = "in"
range = [-4.0, 4.0]
[[kernel.args]]
name = "n"
scalar = "int32"
value = 300

[[kernel]]
name = "named_indices"
tolerance = "fp32"
grid = [3, 1, 1]
block = [256, 1, 1]
[[kernel.args]]
name = "n"
scalar = "int64"
value = 700
[[kernel.args]]
name = "d"
buffer = "float32"
elements = 700
role = "inout"
range = [0.5, 4.0]

[[kernel]]
name = "block_stride"
tolerance = "fp32"
grid = [4, 1, 1]
block = [64, 1, 1]
[[kernel.args]]
name = "n"
scalar = "int32"
value = 1024
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 1024
role = "in"
range = [-4.0, 4.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 1024
role = "out"
"""


def test_indices_spelled_later_and_grid_strides_through_locals_lift_and_check_equal(tmp_path):
    from tests.analysis.support import converted
    out, rows = converted(tmp_path, SPELLED_LATER, SPELLED_LATER_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    assert {k: kernels[k]["form"] for k in kernels} == {
        "late": "tile", "stride_for": "tile", "stride_while": "tile", "named_indices": "tile", "guarded_loop": "tile", "flat_grid": "tile",
        "block_stride": "portable"}
    assert all(kernels[k]["check"]["status"] == "pass" for k in kernels), kernels
    text = (out / "k.py").read_text()
    # the grid-stride loops became domains of n (length) elements, their strides gone
    assert "with T.Kernel(T.ceildiv(n, tile_x), threads=threads) as bx:" in factory(text, "stride_for")
    assert not re.search(r"\bstride\s*=", factory(text, "stride_for"))
    for name in ("stride_for", "stride_while", "guarded_loop"):
        assert not re.search(r"\bwhile\b|gridDim|grid_x", factory(text, name).split("with T.Kernel(")[1]), name


# Flat indices taken apart into digits and stored to the place the digits name again, as the
# pool's gated activations, masks and initialisers do (analysis.facts.radix proves the store
# is the element's own).
DIGITS = """
    __global__ void gated(const int rows, const int half, const int cols, const float* x, float* y) {
        int index = blockIdx.x * blockDim.x + threadIdx.x;
        if (index >= rows * half * cols) return;
        const int xrow = 2 * half * cols;
        const int yrow = half * cols;
        const int r = index / half / cols;
        const int h = index / cols % half;
        const int c = index % cols;
        const float a = x[r * xrow + h * cols + c];
        const float g = x[r * xrow + (h + half) * cols + c];
        y[r * yrow + h * cols + c] = a / (1.0f + expf(-g));
    }
    __global__ void lower_mask(const int B, const int N, const int M, const float* in, float* out) {
        int index = blockIdx.x * blockDim.x + threadIdx.x;
        if (index < B * N * M) {
            int k = index % M;
            int j = (index - k) / M % N;
            int i = (index - M * j - k) / (N * M);
            int at = N * M * i + M * j + k;
            out[at] = k > j ? -1.0f : in[at] * (float)(i + 1);
        }
    }
    __global__ void grid_init(const unsigned int n, const double h, double* u) {
        int idx = blockDim.x * blockIdx.x + threadIdx.x;
        if (idx < n * n) {
            int i = idx % n;
            int j = idx / n;
            u[i + j * n] = sin(h * (i + 1)) * cos(h * (j + 1));
        }
    }
"""

DIGITS_SPEC = """
[[kernel]]
name = "gated"
tolerance = "fp32"
grid = [4, 1, 1]
block = [128, 1, 1]
[[kernel.args]]
name = "rows"
scalar = "int32"
value = 5
[[kernel.args]]
name = "half"
scalar = "int32"
value = 6
[[kernel.args]]
name = "cols"
scalar = "int32"
value = 13
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 780
role = "in"
range = [-3.0, 3.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 390
role = "out"

[[kernel]]
name = "lower_mask"
tolerance = "fp32"
grid = [3, 1, 1]
block = [256, 1, 1]
[[kernel.args]]
name = "B"
scalar = "int32"
value = 3
[[kernel.args]]
name = "N"
scalar = "int32"
value = 11
[[kernel.args]]
name = "M"
scalar = "int32"
value = 17
[[kernel.args]]
name = "in"
buffer = "float32"
elements = 561
role = "in"
range = [-3.0, 3.0]
[[kernel.args]]
name = "out"
buffer = "float32"
elements = 561
role = "out"

[[kernel]]
name = "grid_init"
tolerance = "fp64"
grid = [5, 1, 1]
block = [64, 1, 1]
[[kernel.args]]
name = "n"
scalar = "uint32"
value = 17
[[kernel.args]]
name = "h"
scalar = "float64"
value = 0.37
[[kernel.args]]
name = "u"
buffer = "float64"
elements = 289
role = "out"
"""


def test_digits_of_a_flat_index_put_back_lift_to_maps_and_check_equal(tmp_path):
    from tests.analysis.support import converted
    _out, rows = converted(tmp_path, DIGITS, DIGITS_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    assert {k: v["form"] for k, v in kernels.items()} == {"gated": "tile", "lower_mask": "tile", "grid_init": "tile"}
    assert all(v["check"]["status"] == "pass" for v in kernels.values()), kernels
