"""Pointers that move (analysis.prepare.moving_pointers), written the way real programs write
them: a pitched image's row and column folded into its pointer parameters before a shared tile
and a barrier, a local pointer walking a row with ``p++``, a view re-pointed at another row."""
from __future__ import annotations

import json

import pytest

from migrate.analysis.prepare.moving_pointers import moving_pointers
from migrate.cli import main
from migrate.ir import model as m
from tests.analysis.support import converted, nodes, unit

TRANSPOSE = """
#include <cuda_runtime.h>
#define TILE 16
// each block transposes a 16x16 tile of a pitched image
__global__ void tile_transpose(const float* src, float* dst, int pitch_in, int pitch_out)
{
    __shared__ float tile[TILE][TILE + 1];
    src += (blockIdx.y * TILE + threadIdx.y) * pitch_in + blockIdx.x * TILE + threadIdx.x;
    tile[threadIdx.y][threadIdx.x] = src[0];
    __syncthreads();
    dst += (blockIdx.x * TILE + threadIdx.y) * pitch_out + blockIdx.y * TILE + threadIdx.x;
    dst[0] = tile[threadIdx.x][threadIdx.y];
}

// one thread per row: a local pointer walks it, another is re-pointed at the next row
__global__ void row_stats(const float* x, float* sums, float* firsts, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* p = x + r * cols;
    float acc = 0.0f;
    for (int j = 0; j < cols; ++j) {
        acc += *p;
        p++;
    }
    sums[r] = acc;
    const float* q = x;
    q = q + r * cols;
    firsts[r] = *(q + 1) - q[0];
}
"""

SPEC = """
[[kernel]]
name = "tile_transpose"
grid = [3, 2, 1]
block = [16, 16, 1]
tolerance = "exact"
[[kernel.args]]
name = "src"
buffer = "float32"
elements = 1536
role = "in"
range = [-4.0, 4.0]
[[kernel.args]]
name = "dst"
buffer = "float32"
elements = 1536
role = "out"
[[kernel.args]]
name = "pitch_in"
scalar = "int32"
value = 48
[[kernel.args]]
name = "pitch_out"
scalar = "int32"
value = 32

[[kernel]]
name = "row_stats"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 1300
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "sums"
buffer = "float32"
elements = 100
role = "out"
[[kernel.args]]
name = "firsts"
buffer = "float32"
elements = 100
role = "out"
[[kernel.args]]
name = "rows"
scalar = "int32"
value = 100
[[kernel.args]]
name = "cols"
scalar = "int32"
value = 13
"""


def test_a_stepped_pointer_becomes_an_offset_and_every_access_an_index(tmp_path):
    fn = moving_pointers(unit(tmp_path, TRANSPOSE).kernel("tile_transpose"))
    assert not [n for n in nodes(fn, m.Assign) if isinstance(n.target, m.Ref) and n.target.name in ("src", "dst")]
    decls = {d.name: d for d in nodes(fn, m.VarDecl)}
    assert {"src_off", "dst_off"} <= set(decls) and decls["src_off"].init.value == 0
    stores = [n for n in nodes(fn, m.Assign) if isinstance(n.target, m.Index)
              and isinstance(n.target.base, m.Ref) and n.target.base.name == "dst"]
    assert [s.target.index.lhs.name for s in stores] == ["dst_off"]


def test_moving_pointers_convert_and_check_equal_across_a_barrier(tmp_path):
    (tmp_path / "moving.cu").write_text(TRANSPOSE)
    (tmp_path / "moving.toml").write_text(SPEC)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "moving.cu"), "-o", str(out), "-q", "--check", "cpu"]) == 0
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    for name in ("tile_transpose", "row_stats"):
        k = kernels[name]
        assert k["form"] not in ("hybrid", "unsupported"), (name, k["reason"])
        assert k["check"]["status"] == "pass", (name, k["check"]["message"])
    text = (out / "moving.py").read_text()
    assert "src_off" in text and "p_off" in text and "q_off" in text


@pytest.mark.parametrize("body, name", [
    ("const float* p = x + r; if (p < x + n) y[r] = *p;", "p"),  # compared
    ("const float* p = x + r; if (p != 0) y[r] = *p;", "p"),   # compared with a null pointer
    ("const float* p = x; p = (const float*)&n; y[r] = p[r];", "p"),  # re-pointed at a scalar
])
def test_a_pointer_it_cannot_follow_keeps_its_diagnostic(tmp_path, body, name):
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n__global__ void k(const float* x, float* y, int n) {\n"
                   f"    int r = blockIdx.x * blockDim.x + threadIdx.x;\n    {body}\n}}\n")
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q"])
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] in ("hybrid", "unsupported") and ("'p'" in k["reason"] or "'*'" in k["reason"]), k["reason"]


def test_an_atomic_through_a_view_updates_the_viewed_element(tmp_path):
    """``int* bin = hist + key; atomicAdd(bin, 1);``: the view's element is the atomic's target
    (its module used to name the dropped view and not build)."""
    (tmp_path / "hist.cu").write_text("""
#include <cuda_runtime.h>
__global__ void bins(const int* keys, int* hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int* bin = hist + (keys[i] & 15);
        atomicAdd(bin, 1);
    }
}
""")
    (tmp_path / "hist.toml").write_text("""
[[kernel]]
name = "bins"
grid = [4, 1, 1]
block = [128, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "keys"
buffer = "int32"
elements = 500
role = "in"
range = [0, 1000]
[[kernel.args]]
name = "hist"
buffer = "int32"
elements = 16
role = "inout"
range = [0, 3]
[[kernel.args]]
name = "n"
scalar = "int32"
value = 500
""")
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "hist.cu"), "-o", str(out), "-q", "--check", "cpu"]) == 0
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    assert "T.atomic_add(hist[keys[i] & 15], 1)" in (out / "hist.py").read_text()


#: pointers declared without a value and assigned views later, in branches (the end of a byte
#: slice, a row picked by parity), and the difference of two pointers into one buffer
ASSIGNED_LATER = """
#include <cuda_runtime.h>
// each thread sums its slice of the bytes; the last one's slice ends at the buffer's end
__global__ void slice_sum(const unsigned char* data, unsigned int* sums, int bpt, int nbytes, int nthreads)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= nthreads) return;
    const unsigned char *start = data + tid * bpt;
    const unsigned char *end;
    if (tid != nthreads - 1)
        end = start + bpt;
    else
        end = data + nbytes;
    int sz = end - start;
    unsigned int s = 0;
    for (int i = 0; i < sz; i++) s += start[i] * (i + 1);
    sums[tid] = s;
}
// a view chosen in a branch, then walked
__global__ void pick_row(const float* a, const float* b, float* out, int n, int w)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    const float* src;
    if (r % 2 == 0) src = a + r * w;
    else src = a + (n - 1 - r) * w;
    float acc = 0.0f;
    for (int j = 0; j < w; j++) acc += src[j] * b[j];
    out[r] = acc;
}
"""

ASSIGNED_LATER_SPEC = """
[[kernel]]
name = "slice_sum"
grid = [2, 1, 1]
block = [32, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "data"
buffer = "uint8"
elements = 1000
role = "in"
range = [0, 255]
[[kernel.args]]
name = "sums"
buffer = "uint32"
elements = 64
role = "out"
[[kernel.args]]
name = "bpt"
scalar = "int32"
value = 15
[[kernel.args]]
name = "nbytes"
scalar = "int32"
value = 1000
[[kernel.args]]
name = "nthreads"
scalar = "int32"
value = 64
[[kernel]]
name = "pick_row"
grid = [2, 1, 1]
block = [32, 1, 1]
tolerance = "fp32_accum"
[[kernel.args]]
name = "a"
buffer = "float32"
elements = 1024
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "b"
buffer = "float32"
elements = 16
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "out"
buffer = "float32"
elements = 64
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 64
[[kernel.args]]
name = "w"
scalar = "int32"
value = 16
"""


def _checked(tmp_path, source: str, spec: str):
    """``source`` converted with ``spec`` beside it and checked on the CPU: (its report's
    kernels, the module's text)."""
    out, kernels = converted(tmp_path, source, spec)
    return kernels, (out / "k.py").read_text()


def test_pointers_assigned_views_after_their_declaration_move_as_offsets_and_check_equal(tmp_path):
    kernels, text = _checked(tmp_path, ASSIGNED_LATER, ASSIGNED_LATER_SPEC)
    assert {k["kernel"]: k["form"] for k in kernels} == {"slice_sum": "tile", "pick_row": "tile"}
    assert "end_off - start_off" in text
    assert [k["check"]["status"] for k in kernels] == ["pass", "pass"], [k["check"]["message"] for k in kernels]


#: pointers into several buffers, the way real programs pick them: an input chosen per element
#: (a concatenation), two buffers swapped after each sweep (ping-pong), a pointer re-pointed at a
#: second input after a first pass, and a walk that stops where another pointer ends (p < end)
SEVERAL = """
#include <cuda_runtime.h>
__global__ void join(const float* first, const float* second, float* out, int n1, int n2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n1 + n2) return;
    const float* src;
    int j = i;
    if (i < n1) {
        src = first;
    } else {
        src = second;
        j -= n1;
    }
    float* dst = out + i;
    *dst = src[j] * 2.0f + 1.0f;
}
__global__ void sweeps(float* a, float* b, int n, int times)
{
    int i = threadIdx.x;
    float* in = a;
    float* out = b;
    for (int t = 0; t < times; t++) {
        if (i >= 1 && i < n - 1)
            out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
        __syncthreads();
        float* tmp = in;
        in = out;
        out = tmp;
    }
}
__global__ void two_passes(const unsigned* zeros, const unsigned* ones, unsigned* counts, int n, int w)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned* row;
    unsigned c = 0;
    row = zeros + i * w;
    for (int k = 0; k < w; k++) c += __popc(row[k]);
    counts[2 * i] = c;
    c = 0;
    row = ones + i * w;
    for (int k = 0; k < w; k++) c += __popc(row[k]);
    counts[2 * i + 1] = c;
}
__global__ void walk(const unsigned char* data, unsigned* sums, int bpt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned char* p = data + i * bpt;
    const unsigned char* end = p + bpt;
    unsigned s = 0;
    while (p < end) {
        s = s * 31u + *p;
        p++;
    }
    sums[i] = s;
}
"""

SEVERAL_SPEC = """
[[kernel]]
name = "join"
grid = [3, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "first"
buffer = "float32"
elements = 100
role = "in"
range = [-4.0, 4.0]
[[kernel.args]]
name = "second"
buffer = "float32"
elements = 70
role = "in"
range = [-4.0, 4.0]
[[kernel.args]]
name = "out"
buffer = "float32"
elements = 170
role = "out"
[[kernel.args]]
name = "n1"
scalar = "int32"
value = 100
[[kernel.args]]
name = "n2"
scalar = "int32"
value = 70
[[kernel]]
name = "sweeps"
grid = [1, 1, 1]
block = [128, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "a"
buffer = "float32"
elements = 128
role = "inout"
range = [-1.0, 1.0]
[[kernel.args]]
name = "b"
buffer = "float32"
elements = 128
role = "inout"
range = [-1.0, 1.0]
[[kernel.args]]
name = "n"
scalar = "int32"
value = 128
[[kernel.args]]
name = "times"
scalar = "int32"
value = 3
[[kernel]]
name = "two_passes"
grid = [2, 1, 1]
block = [32, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "zeros"
buffer = "uint32"
elements = 400
role = "in"
range = [0, 4000000000]
[[kernel.args]]
name = "ones"
buffer = "uint32"
elements = 400
role = "in"
range = [0, 4000000000]
[[kernel.args]]
name = "counts"
buffer = "uint32"
elements = 128
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 50
[[kernel.args]]
name = "w"
scalar = "int32"
value = 8
[[kernel]]
name = "walk"
grid = [2, 1, 1]
block = [32, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "data"
buffer = "uint8"
elements = 600
role = "in"
range = [0, 255]
[[kernel.args]]
name = "sums"
buffer = "uint32"
elements = 64
role = "out"
[[kernel.args]]
name = "bpt"
scalar = "int32"
value = 9
[[kernel.args]]
name = "n"
scalar = "int32"
value = 60
"""


def test_pointers_into_several_buffers_keep_which_one_and_check_equal(tmp_path):
    report, text = _checked(tmp_path, SEVERAL, SEVERAL_SPEC)
    kernels = {k["kernel"]: k for k in report}
    assert set(kernels) == {"join", "sweeps", "two_passes", "walk"}
    for name, k in kernels.items():
        assert k["form"] not in ("hybrid", "unsupported"), (name, k["reason"])
        assert k["check"]["status"] == "pass", (name, k["check"]["message"])
    # a read picks its buffer; a store through a pointer into two buffers is a branch per buffer
    # (the swap's pointers are per-thread values: each lane swaps its own, once; the sweeps
    # between barriers are lifted as tiled loops, analysis.lift.tile_loops)
    assert kernels["sweeps"]["form"] == "tile"
    assert "T.if_then_else(in__buf[lane] == 0, a[in__off[lane] + (i[lane] - 1)], b[in__off[lane] + (i[lane] - 1)])" \
        in text
    assert "if out_buf[lane] == 0:" in text and "tmp_buf = in__buf[lane]" in text
    assert "p_off < end_off" in text


def test_a_pointer_into_two_buffers_reads_the_one_its_last_assignment_chose(tmp_path):
    fn = moving_pointers(unit(tmp_path, SEVERAL).kernel("two_passes"))
    picks = [n for n in nodes(fn, m.Ternary)]
    assert picks and all(isinstance(p.then, m.Index) and {p.then.base.name, p.other.base.name} == {"zeros", "ones"}
                         for p in picks)
    sets = [n for n in nodes(fn, m.Assign) if isinstance(n.target, m.Ref) and n.target.name == "row_buf"]
    # zeros, then ones, numbered by their place among the sorted buffers (counts, ones, zeros)
    assert [s.value.value for s in sets] == [2, 1]


#: a normalisation backward pass's tail, written the way group-norm kernels write it: pointer
#: parameters moved to the block's group, then moved on by a channel in a loop around a block
#: reduction; an atomic's address and a view are taken from them as they stand
CHANNELS = """
#include <cuda_runtime.h>
__global__ void channel_sums(const float* x, float* dw, float* rows, int img, int group)
{
    __shared__ float part[64];
    x += blockIdx.x * img * group;
    rows += blockIdx.x * group;
    for (int c = 0; c < group; c++) {
        float s = 0.0f;
        for (int i = threadIdx.x; i < img; i += blockDim.x) s += x[i];
        part[threadIdx.x] = s;
        __syncthreads();
        for (int h = blockDim.x / 2; h > 0; h >>= 1) {
            if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
            __syncthreads();
        }
        const float* first = x + 1;
        if (threadIdx.x == 0) {
            atomicAdd(dw + c, part[0]);
            *(rows + c) = part[0] - first[0];
        }
        __syncthreads();
        x += img;
    }
}
"""


def _channels_spec():
    from tests.analysis.support import spec_buffer, spec_kernel, spec_scalar
    return spec_kernel("channel_sums", (3, 1, 1), (64, 1, 1), "fp32",
                       spec_buffer("x", "float32", 3 * 50 * 4, "in", -1.0, 1.0),
                       spec_buffer("dw", "float32", 4, "inout", -1.0, 1.0),
                       spec_buffer("rows", "float32", 12, "out"),
                       spec_scalar("img", "int32", 50), spec_scalar("group", "int32", 4))


CHANNELS_SPEC = _channels_spec()


def test_an_atomics_address_and_a_view_taken_from_a_moving_pointer_check_equal(tmp_path):
    out, (k,) = converted(tmp_path, CHANNELS, CHANNELS_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    assert "x_off" in (out / "k.py").read_text()


def test_a_pointer_stepped_by_an_expression_of_itself_counts_its_start_once(tmp_path):
    # patch = patch + start + t parses as (patch + start) + t: the step is start + t, not patch's
    # offset twice (a patch-stack filter did so)
    from tests.analysis.support import spec_buffer, spec_kernel, spec_scalar
    src = """
    #include <cuda_runtime.h>
    __global__ void stacks(float* patch, const float* add, unsigned start) {
        unsigned t = threadIdx.x;
        patch += 3;
        patch = patch + start + t;
        __syncthreads();
        patch[0] = patch[0] + add[t];
        __syncthreads();
        atomicAdd(patch + 1, 1.0f);
    }
    """
    spec = spec_kernel("stacks", (1, 1, 1), (32, 1, 1), "fp32",
                       spec_buffer("patch", "float32", 80, "inout", -1.0, 1.0),
                       spec_buffer("add", "float32", 32, "in", -1.0, 1.0), spec_scalar("start", "uint32", 5))
    _out, (k,) = converted(tmp_path, src, spec)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
