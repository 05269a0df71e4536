"""Maps (analysis.lift.map): independent threads lifted to a map over tiles of their element domain.

What it lifts (grid-stride loops, constant block sizes, aliasing buffers kept in order, strided
stores) and what it must refuse (scatters, races, in-place shifts, lane arithmetic, stores that do
not tell elements apart).
"""
from __future__ import annotations

import json
import re

import pytest

from tests.analysis.lift.support import convert, factory, note
from tests.analysis.support import spec_buffer, spec_kernel, spec_scalar


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


RACY = [
    ("out[idx[i]] = x[i];", "data-dependent index"),                          # a scatter
    ("out[blockIdx.x] = x[i];", "race"),                                      # every element of a block
    ("out[i] = x[i]; out[i + 1] = 0.0f;", "race"),                            # neighbours overlap
]


@pytest.mark.parametrize("body, reason", RACY)
def test_stores_not_proven_apart_lift_on_cudas_race_rule_when_elements_are_threads(tmp_path, body, reason):
    """One element per CUDA thread and no barrier: two elements meeting at one place are two CUDA
    threads racing there, so the lift goes ahead and says what it could not prove (M3006)."""
    kernels, _ = convert(tmp_path, f"""
        __global__ void racy(const float* __restrict__ x, float* __restrict__ out, const int* idx,
                             float* x2, int n) {{
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) {{ {body} }}
        }}
    """)
    k = kernels["racy"]
    assert k["form"] == "tile", k
    races = [d["message"] for d in k["diagnostics"] if d["code"] == "M3006"]
    assert races and reason in races[0] and "race-free" in races[0], k["diagnostics"]


ALWAYS_REFUSED = [
    ("x2[i] = x2[i + 1];", "read at another element"),                         # in-place shift
    ("int at = atomicAdd(&count[0], 1); out[at] = x[i];", "a place an atomic hands out"),  # a slot
    ("if (i % 2 == 0 && i + 1 < n) x2[i] += x2[i + 1];", "read at another element"),  # red-black
]


# ``threadIdx.x % 32`` is lifted either way: the element's lane (one element per thread, or a
# grid-stride loop's element: test_stride_lanes.py)


@pytest.mark.parametrize("grid_stride", [False, True])
@pytest.mark.parametrize("body, reason", RACY + ALWAYS_REFUSED)
def test_maps_it_must_refuse(tmp_path, body, reason, grid_stride):
    """In a grid-stride loop one CUDA thread runs several elements in order: elements that meet
    there may be one thread's, whose order the CUDA fixes, so the proof stays the rule. Reads
    where another element stores, and places an atomic hands out, follow the CUDA's schedule:
    refused with threads as elements too (real kernels count on it: a scan with no barrier)."""
    if not grid_stride and (body, reason) in RACY:
        pytest.skip("lifted with one element per thread (the tests above and below)")
    loop = "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)" \
        if grid_stride else "int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n)"
    kernels, _ = convert(tmp_path, f"""
        __global__ void bad(const float* __restrict__ x, float* __restrict__ out, const int* idx,
                            float* x2, int* count, int n) {{
            {loop} {{ {body} }}
        }}
    """)
    assert kernels["bad"]["form"] == "portable"
    if grid_stride and "atomic" in reason:
        reason = "elements would race"  # the proof's own reason: no retry on the race rule
    assert reason in note(kernels["bad"]), note(kernels["bad"])
    assert not any(d["code"] == "M3006" for d in kernels["bad"]["diagnostics"])


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
    # the else runs for every element but one: each of them stores flag[0] (lifted on the race
    # rule: every CUDA thread but one stores there). A value that is the same for each of them
    # (``flag[0] = 1``) is proven instead: whichever stores last, flag[0] holds it (place_values)
    kernels, _text = convert(tmp_path, """
        __global__ void mark(const float* __restrict__ x, float* __restrict__ y, int* flag, int n) {
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
                if (i == 0) y[0] = x[0];
                else flag[0] = i;
            }
        }
        __global__ void mark1(const float* __restrict__ x, float* __restrict__ y, int* flag, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i == 0) y[0] = x[0];
            else flag[0] = i;
        }
        __global__ void mark2(const float* __restrict__ x, float* __restrict__ y, int* flag, int n) {
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
                if (i == 0) y[0] = x[0];
                else flag[0] = 1;
            }
        }
        int main() { mark<<<4, 256>>>(nullptr, nullptr, nullptr, 1000); }
    """)
    assert kernels["mark"]["form"] == "portable"
    assert "the store to 'flag' at line 6 does not tell elements apart along x" in note(kernels["mark"])
    assert kernels["mark1"]["form"] == "tile"
    assert any("the store to 'flag' at line 12 does not tell elements apart along x" in d["message"]
               for d in kernels["mark1"]["diagnostics"] if d["code"] == "M3006"), kernels["mark1"]
    assert kernels["mark2"]["form"] == "tile"
    assert not any(d["code"] == "M3006" for d in kernels["mark2"]["diagnostics"]), kernels["mark2"]


# Race-free kernels whose stores the lift cannot prove apart, as the pool writes them: a store
# through an index taken modulo a size (a permutation), a bitonic sort's compare-and-swap of
# the places i and i ^ j (each pair swapped by one thread: an element reads only places it
# stores to), the even elements to the first half and the odd ones to the second (a
# deinterleave), a flag every thread sets to one value. Lifted on the race rule, checked
# against the CUDA.
RACE_FREE = """
    __global__ void permute(const float* __restrict__ x, float* __restrict__ y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[(i * 7) % n] = x[i] * 2.0f;
    }
    __global__ void bitonic_step(float* v, int j, int k) {
        unsigned int i = threadIdx.x + blockDim.x * blockIdx.x;
        unsigned int ixj = i ^ j;
        if (ixj > i) {
            if ((i & k) == 0) {
                if (v[i] > v[ixj]) { float t = v[i]; v[i] = v[ixj]; v[ixj] = t; }
            } else {
                if (v[i] < v[ixj]) { float t = v[i]; v[i] = v[ixj]; v[ixj] = t; }
            }
        }
    }
    __global__ void halves(const float* __restrict__ x, float* y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i / 2 + (i % 2) * ((n + 1) / 2)] = x[i] + 0.5f;
    }
    __global__ void any_negative(const float* __restrict__ x, int* flag, float* __restrict__ y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            y[i] = fabsf(x[i]);
            if (x[i] < 0.0f) flag[0] = 1;
        }
    }
"""

RACE_FREE_SPEC = (
    spec_kernel("permute", (4, 1, 1), (256, 1, 1), "fp32",
                spec_buffer("x", "float32", 1000, "in", -4.0, 4.0),
                spec_buffer("y", "float32", 1000, "out"),
                spec_scalar("n", "int32", 1000))
    + spec_kernel("bitonic_step", (2, 1, 1), (256, 1, 1), "exact",
                  spec_buffer("v", "float32", 512, "inout", -4.0, 4.0),
                  spec_scalar("j", "int32", 4), spec_scalar("k", "int32", 8))
    + spec_kernel("halves", (4, 1, 1), (128, 1, 1), "fp32",
                  spec_buffer("x", "float32", 511, "in", -4.0, 4.0),
                  spec_buffer("y", "float32", 511, "out"),
                  spec_scalar("n", "int32", 511))
    + spec_kernel("any_negative", (3, 1, 1), (128, 1, 1), "fp32",
                  spec_buffer("x", "float32", 300, "in", -4.0, 4.0),
                  spec_buffer("flag", "int32", 1, "inout", 2, 2),
                  spec_buffer("y", "float32", 300, "out"),
                  spec_scalar("n", "int32", 300))
)


def test_race_free_kernels_lifted_on_the_race_rule_check_equal(tmp_path):
    from tests.analysis.support import converted
    _out, rows = converted(tmp_path, RACE_FREE, RACE_FREE_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    for name, k in kernels.items():
        assert k["form"] == "tile", (name, k["diagnostics"])
        # any_negative's flag[0] = 1 is the same value from every element: proven (place_values)
        assert any(d["code"] == "M3006" for d in k["diagnostics"]) == (name != "any_negative"), \
            (name, k["diagnostics"])
        assert k["check"]["status"] == "pass", (name, k["check"])


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
    __global__ void block_stride(int n, const float* x, float* y) {  // not a grid stride: a loop in the element
        int index = blockIdx.x * blockDim.x + threadIdx.x;
        int stride = blockDim.x;
        for (int i = index; i < n && i < (blockIdx.x + 1) * 64 * 4; i += stride) y[i] = 2.0f * x[i];
    }
"""

SPELLED_LATER_SPEC = (
    spec_kernel("late", (4, 1, 1), (256, 1, 1), "fp32",
                spec_buffer("y", "float32", 1000, "out"),
                spec_buffer("x", "float32", 1000, "in", -4.0, 4.0),
                spec_scalar("n", "int32", 1000))
    + spec_kernel("stride_for", (3, 1, 1), (64, 1, 1), "fp32",
                spec_scalar("n", "int32", 1000),
                spec_buffer("x", "float32", 1000, "in", -4.0, 4.0),
                spec_buffer("y", "float32", 1000, "inout", -4.0, 4.0))
    + spec_kernel("stride_while", (2, 1, 1), (128, 1, 1), "exact",
                spec_buffer("reads", "int8", 777, "inout", -100, 100),
                spec_scalar("length", "int64", 777))
    + spec_kernel("guarded_loop", (2, 1, 1), (32, 1, 1), "fp32",
                spec_scalar("rows", "int32", 9),
                spec_scalar("cols", "int32", 31),
                spec_buffer("x", "float32", 279, "in", -4.0, 4.0),
                spec_buffer("y", "float32", 279, "out"))
    + spec_kernel("flat_grid", (3, 2, 1), (64, 1, 1), "fp32",
                spec_buffer("a", "float32", 300, "inout", -4.0, 4.0),
                spec_buffer("b", "float32", 300, "in", -4.0, 4.0),
                spec_scalar("n", "int32", 300))
    + spec_kernel("named_indices", (3, 1, 1), (256, 1, 1), "fp32",
                spec_scalar("n", "int64", 700),
                spec_buffer("d", "float32", 700, "inout", 0.5, 4.0))
    + spec_kernel("block_stride", (4, 1, 1), (64, 1, 1), "fp32",
                spec_scalar("n", "int32", 1024),
                spec_buffer("x", "float32", 1024, "in", -4.0, 4.0),
                spec_buffer("y", "float32", 1024, "out"))
)


def test_indices_spelled_later_and_grid_strides_through_locals_lift_and_check_equal(tmp_path):
    from tests.analysis.support import converted
    out, rows = converted(tmp_path, SPELLED_LATER, SPELLED_LATER_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    assert {k: kernels[k]["form"] for k in kernels} == {
        "late": "tile", "stride_for": "tile", "stride_while": "tile", "named_indices": "tile", "guarded_loop": "tile",
        "flat_grid": "tile", "block_stride": "tile"}
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

DIGITS_SPEC = (
    spec_kernel("gated", (4, 1, 1), (128, 1, 1), "fp32",
                spec_scalar("rows", "int32", 5),
                spec_scalar("half", "int32", 6),
                spec_scalar("cols", "int32", 13),
                spec_buffer("x", "float32", 780, "in", -3.0, 3.0),
                spec_buffer("y", "float32", 390, "out"))
    + spec_kernel("lower_mask", (3, 1, 1), (256, 1, 1), "fp32",
                spec_scalar("B", "int32", 3),
                spec_scalar("N", "int32", 11),
                spec_scalar("M", "int32", 17),
                spec_buffer("in", "float32", 561, "in", -3.0, 3.0),
                spec_buffer("out", "float32", 561, "out"))
    + spec_kernel("grid_init", (5, 1, 1), (64, 1, 1), "fp64",
                spec_scalar("n", "uint32", 17),
                spec_scalar("h", "float64", 0.37),
                spec_buffer("u", "float64", 289, "out"))
)


def test_digits_of_a_flat_index_put_back_lift_to_maps_and_check_equal(tmp_path):
    from tests.analysis.support import converted
    _out, rows = converted(tmp_path, DIGITS, DIGITS_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    assert {k: v["form"] for k, v in kernels.items()} == {"gated": "tile", "lower_mask": "tile", "grid_init": "tile"}
    assert all(v["check"]["status"] == "pass" for v in kernels.values()), kernels


# A test every element takes the same way with a grid-stride loop on each side, over domains of
# their own (the pool's masks: B >= 0 walks B * N * M elements, else N * M): one domain of
# B >= 0 ? B * N * M : N * M elements, each running the branch it ran in; the two sides' stores
# to one buffer never both happen.
BRANCHED = """
    #define EACH(index, range) \\
        for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < (range); index += blockDim.x * gridDim.x)
    __global__ void masked(const int N, const int M, const int B, const float* in, const int* len,
                           const float fill, float* out) {
        if (B >= 0) {
            EACH(index, B * N * M) {
                int k = index % M;
                int j = (index - k) / M % N;
                int i = (index - M * j - k) / (N * M);
                int at = N * M * i + M * j + k;
                out[at] = k >= len[j] ? fill : in[at] * (float)(i + 1);
            }
        } else {
            EACH(index, N * M) {
                int i = index / M;
                int j = index % M;
                out[index] = j >= len[i] ? fill : -in[index];
            }
        }
    }
"""


def _masked_spec(b: int, ident: str) -> str:
    n, mm = 7, 19
    count = max(b, 1) * n * mm
    return spec_kernel("masked", (3, 1, 1), (64, 1, 1), "fp32",
                       spec_scalar("N", "int32", n), spec_scalar("M", "int32", mm), spec_scalar("B", "int32", b),
                       spec_buffer("in", "float32", count, "in", -3.0, 3.0),
                       spec_buffer("len", "int32", n, "in", 0, mm),
                       spec_scalar("fill", "float32", 7.5),
                       spec_buffer("out", "float32", count, "out")).replace(
        'name = "masked"\n', f'name = "masked"\nid = "{ident}"\n')


BRANCHED_SPEC = _masked_spec(3, "masked_b3") + _masked_spec(-1, "masked_all")


def test_a_grid_stride_loop_on_each_side_of_a_uniform_test_lifts_and_checks_equal(tmp_path):
    from tests.analysis.support import converted
    out, rows = converted(tmp_path, BRANCHED, BRANCHED_SPEC)
    assert [k["form"] for k in rows] == ["tile"], rows
    checks = json.loads((out / "report.json").read_text())["kernels"][0]["check"]
    assert checks["status"] == "pass" and "masked_b3: pass" in checks["message"] \
        and "masked_all: pass" in checks["message"], checks  # both sides of the test ran
    text = factory((out / "k.py").read_text(), "masked")
    assert not re.search(r"\bwhile\b|gridDim|grid_x", text.split("with T.Kernel(")[1])


# Kernels that read threadIdx other than through the global index, as the pool writes them: a
# block per row with its threads across the columns, a block-stride loop behind a test of the
# block, lane arithmetic. One element per CUDA thread, threadIdx.x = globalIdx.x % blockDim.x
# and blockIdx.x = globalIdx.x / blockDim.x.
THREAD_LANES = """
    __global__ void rows(const float* __restrict__ a, float* __restrict__ b, int cols) {
        int tid = threadIdx.x;
        int row = blockIdx.x;
        if (tid < cols) b[row * cols + tid] = a[row * cols + tid] * 2.0f + row;
    }
    __global__ void block_rows(const float* __restrict__ x, float* __restrict__ y, int m, int n) {
        if (blockIdx.x >= m) return;
        for (int i = threadIdx.x; i < n; i += blockDim.x)
            y[blockIdx.x * n + i] = x[blockIdx.x * n + i] + (float)threadIdx.x;
    }
    __global__ void lanes(const float* __restrict__ x, float* __restrict__ y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = x[i] * (float)(threadIdx.x % 32);
    }
"""

THREAD_LANES_SPEC = (
    spec_kernel("rows", (6, 1, 1), (64, 1, 1), "fp32",
                spec_buffer("a", "float32", 300, "in", -4.0, 4.0),
                spec_buffer("b", "float32", 300, "out"),
                spec_scalar("cols", "int32", 50))
    + spec_kernel("block_rows", (5, 1, 1), (32, 1, 1), "fp32",
                  spec_buffer("x", "float32", 400, "in", -4.0, 4.0),
                  spec_buffer("y", "float32", 400, "out"),
                  spec_scalar("m", "int32", 4), spec_scalar("n", "int32", 100))
    + spec_kernel("lanes", (3, 1, 1), (128, 1, 1), "fp32",
                  spec_buffer("x", "float32", 300, "in", -4.0, 4.0),
                  spec_buffer("y", "float32", 300, "out"),
                  spec_scalar("n", "int32", 300))
)


def test_thread_indices_read_as_lanes_of_one_element_per_thread_check_equal(tmp_path):
    from tests.analysis.support import converted
    out, rows = converted(tmp_path, THREAD_LANES, THREAD_LANES_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    for name, k in kernels.items():
        assert k["form"] == "tile", (name, k["diagnostics"])
        assert k["check"]["status"] == "pass", (name, k["check"])
    text = (out / "k.py").read_text()
    assert "gx % block_x" in factory(text, "rows"), factory(text, "rows")


# An array of records where each element reads every record's position and writes its own
# density, as the pool's particle codes do: the fields it reads are ones no element stores, so
# the reads at other elements meet no store (a proof, no race rule needed).
RECORDS_ACROSS = """
    struct particle { float x, y, density, pressure; };
    __global__ void densities(particle* __restrict__ p, int n) {
        int i = blockDim.x * blockIdx.x + threadIdx.x;
        if (i >= n) return;
        float px = p[i].x, py = p[i].y;
        float d = 0.0f;
        for (int j = 0; j < n; j++) {
            float dx = p[j].x - px, dy = p[j].y - py;
            d += 1.0f / (1.0f + dx * dx + dy * dy);
        }
        p[i].density = d;
        p[i].pressure = 0.5f * d;
    }
    __global__ void smooth(particle* __restrict__ p, int n) {
        int i = blockDim.x * blockIdx.x + threadIdx.x;
        if (i >= n) return;
        p[i].density = 0.5f * (p[i].density + p[(i + 1) % n].density);  // a stored field: refused
    }
"""

RECORDS_ACROSS_SPEC = (
    spec_kernel("densities", (2, 1, 1), (64, 1, 1), "fp32",
                spec_buffer("p", "float32", 400, "inout", -4.0, 4.0), spec_scalar("n", "int32", 100))
    + spec_kernel("smooth", (2, 1, 1), (64, 1, 1), "fp32",
                  spec_buffer("p", "float32", 400, "inout", -4.0, 4.0), spec_scalar("n", "int32", 100))
)


def test_reads_of_fields_no_element_stores_are_not_a_race(tmp_path):
    from tests.analysis.support import converted
    _out, rows = converted(tmp_path, RECORDS_ACROSS, RECORDS_ACROSS_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    k = kernels["densities"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["diagnostics"], k["check"])
    assert not any(d["code"] == "M3006" for d in k["diagnostics"]), k["diagnostics"]
    s = kernels["smooth"]
    assert s["form"] == "portable" and s["check"]["status"] == "pass", s["check"]
    assert "read at another element" in note(s), note(s)


# Differences along one axis of a stack of frames, as the pool's total-variation solvers take
# them: a grid-stride loop over all elements but the last column (row) of each frame, the
# element's place found by skipping it (``id % (rows * (cols - 1)) + id / (rows * (cols - 1)) *
# (rows * cols)``), complex values as float2 lanes. The place grows with the element (the
# remainder stays below its quotient's step), and the two lanes of one place never meet another's
# (analysis.facts.radix).
SKIPS = """
    #include <cuda_runtime.h>
    __global__ void diff_cols(float2* out, const float2* in, const size_t N, const size_t rows,
                              const size_t cols, const size_t frames) {
        for (size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x; id < N - rows * frames;
             id += blockDim.x * gridDim.x) {
            size_t idx = id % (rows * (cols - 1)) + id / (rows * (cols - 1)) * (rows * cols);
            out[idx].x = in[idx + rows].x - in[idx].x;
            out[idx].y = in[idx + rows].y - in[idx].y;
        }
    }
    __global__ void diff_rows(float* out, const float* in, const size_t N, const size_t rows,
                              const size_t cols, const size_t frames) {
        for (size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x; id < N - 2 * cols * frames;
             id += blockDim.x * gridDim.x) {
            size_t idx = id % (rows - 2) + id / (rows - 2) * rows + 1;
            out[idx] = in[idx] - 0.5f * in[idx - 1];
        }
    }
"""


def _skips_spec(name, lanes):
    n = 7 * 9 * 3
    return spec_kernel(name, (2, 1, 1), (64, 1, 1), "fp32",
                       spec_buffer("out", "float32", n * lanes, "inout", -1.0, 1.0),
                       spec_buffer("in", "float32", n * lanes, "in", -3.0, 3.0),
                       spec_scalar("N", "uint64", n), spec_scalar("rows", "uint64", 7),
                       spec_scalar("cols", "uint64", 9), spec_scalar("frames", "uint64", 3))


SKIPS_SPEC = _skips_spec("diff_cols", 2) + _skips_spec("diff_rows", 1)


def test_places_that_skip_a_column_of_each_frame_lift_to_maps_and_check_equal(tmp_path):
    from tests.analysis.support import converted
    _out, rows = converted(tmp_path, SKIPS, SKIPS_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    assert {k: v["form"] for k, v in kernels.items()} == {"diff_cols": "tile", "diff_rows": "tile"}
    assert all(v["check"]["status"] == "pass" for v in kernels.values()), kernels
