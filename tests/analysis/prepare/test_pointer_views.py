"""analysis.prepare.pointer_views: local pointers that view a buffer fold into its indices."""
from __future__ import annotations

from migrate.analysis.prepare.pointer_views import pointer_aliases
from migrate.ir import model as m
from tests.analysis.support import converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit


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
    fn, aliases, unresolved = pointer_aliases(u.kernel("k"))
    assert set(aliases) == {"s_red", "row"} and not unresolved
    bases = {n.base.name: n.base.kind for n in nodes(fn, m.Index) if isinstance(n.base, m.Ref)}
    assert bases == {"smem": "shared", "x": "param", "y": "param"}


def test_a_view_through_bytes_counts_its_offset_in_elements(tmp_path):
    # a pitched row, the way pitched 2-D code reaches it: the offset counts bytes, not floats
    u = unit(tmp_path, """
        __global__ void k(float* p, size_t pitch, int width) {
            int r = blockIdx.y;
            float* row = (float*)((char*)p + r * pitch);
            const float* same = (const float*)(p + r * width);
            row[threadIdx.x] = same[threadIdx.x] * 2.0f;
        }
    """)
    fn, aliases, unresolved = pointer_aliases(u.kernel("k"))
    assert set(aliases) == {"same", "row"} and not unresolved
    off = aliases["row"].offset  # r * pitch bytes are r * pitch / 4 floats, not r * pitch
    assert isinstance(off, m.Binary) and off.op == "/" and off.rhs.value == 4


#: a view made, then its offset's local reassigned (concat kernels reuse ``idx`` to unflatten it)
REASSIGNED_OFFSET = """
#include <cuda_runtime.h>
__global__ void concat_like(const float* x, float* out, int n, int w)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    float *dst = out + idx;
    int col = idx % w;
    idx = idx / w;
    dst[0] = x[idx * w + col] * 2.0f;
}
"""

REASSIGNED_OFFSET_SPEC = """
[[kernel]]
name = "concat_like"
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 256
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "out"
buffer = "float32"
elements = 256
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 256
[[kernel.args]]
name = "w"
scalar = "int32"
value = 16
"""


def test_a_view_keeps_the_offset_it_was_made_with_when_the_local_changes_after(tmp_path):
    """``float* dst = out + idx; ... idx = idx / w; dst[0] = ...`` stored to ``out[idx/w]``: the
    folded index read ``idx`` where the store stands. The view's offset is now held in a local."""
    import json

    from migrate.cli import main
    (tmp_path / "k.cu").write_text(REASSIGNED_OFFSET)
    (tmp_path / "k.toml").write_text(REASSIGNED_OFFSET_SPEC)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "k.cu"), "-o", str(out), "-q", "--check", "cpu"]) == 0
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert "dst_at = idx" in (out / "k.py").read_text()
    assert k["check"]["status"] == "pass", k["check"]["message"]


def test_a_view_that_reads_a_buffers_bits_as_another_type_reads_them_as_bit_copies(tmp_path):
    """``float* px = (float*)&buf[k]`` on an int buffer (a TSP kernel keeps its coordinates in
    its int scratch array): folded into ``buf``'s index as it is it read ints (the square root of
    an int does not compile for CUDA); each read is the bit copy ``__int_as_float(buf[n + i])``."""
    from migrate.analysis.prepare.pointer_views import pointer_aliases
    from tests.analysis.support import unit
    fn = unit(tmp_path, """
        __global__ void k(int* buf, float* out, int n) {
            float* px = (float*)(&buf[n]);
            const int* same = (const int*)(&buf[2 * n]);
            out[threadIdx.x] = sqrtf(px[threadIdx.x]) + same[threadIdx.x];
        }""").kernel("k")
    folded, aliases, unresolved = pointer_aliases(fn)
    assert not unresolved and set(aliases) == {"px", "same"} and aliases["px"].bits is not None
    (copy,) = [n for n in m.walk(folded.body) if isinstance(n, m.Call) and n.callee == "__int_as_float"]
    element = copy.args[0]
    assert isinstance(element, m.Index) and element.base.name == "buf" and element.type == m.Scalar("int32")
    assert isinstance(element.index, m.Binary) and element.index.lhs.name == "n"


#: Rows of a pitched allocation reached through byte offsets, the way cudaMallocPitch users write them.
PITCHED = """#include <cuda_runtime.h>
#include <stdint.h>
// rows of a pitched allocation reached through byte offsets (cudaMallocPitch's layout)
__global__ void scale_rows(float* devPtr, size_t pitch, int width, int height) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= height) return;
    float* row = (float*)((char*)devPtr + r * pitch);
    for (int c = 0; c < width; c++) row[c] = row[c] * 2.0f + r;
}

__global__ void row_sums(const int* d, size_t pitch_d, int* out, int width) {
    const int* d_row = (const int*)((const char*)d + blockIdx.x * pitch_d);
    int t = threadIdx.x;
    int s = 0;
    for (int c = t; c < width; c += blockDim.x) s += d_row[c];
    atomicAdd(&out[blockIdx.x], s);
}

// points of a cloud reached through an address as an integer (a point-cloud projection's way)
__global__ void intensities(const float* __restrict__ cp, float* __restrict__ out, int width, int point_step) {
    int y = blockIdx.x;
    int x = threadIdx.x;
    if (x >= width) return;
    const float* fp = (float *)((uintptr_t)cp + (x + y * width) * point_step);
    out[y * width + x] = fp[1] * 2.0f - fp[0];
}
"""

PITCHED_SPEC = """[[kernel]]
name = "scale_rows"
grid = [1, 1, 1]
block = [32, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "devPtr"
buffer = "float32"
elements = 480
role = "inout"
range = [-1.0, 1.0]
[[kernel.args]]
name = "pitch"
scalar = "uint64"
value = 64
[[kernel.args]]
name = "width"
scalar = "int32"
value = 12
[[kernel.args]]
name = "height"
scalar = "int32"
value = 30

[[kernel]]
name = "row_sums"
grid = [6, 1, 1]
block = [32, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "d"
buffer = "int32"
elements = 600
role = "in"
range = [-50, 50]
[[kernel.args]]
name = "pitch_d"
scalar = "uint64"
value = 400
[[kernel.args]]
name = "out"
buffer = "int32"
elements = 6
role = "inout"
range = [0, 3]
[[kernel.args]]
name = "width"
scalar = "int32"
value = 90

[[kernel]]
name = "intensities"
grid = [3, 1, 1]
block = [32, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "cp"
buffer = "float32"
elements = 288
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "out"
buffer = "float32"
elements = 90
role = "out"
[[kernel.args]]
name = "width"
scalar = "int32"
value = 30
[[kernel.args]]
name = "point_step"
scalar = "int32"
value = 12
"""


def test_a_row_reached_through_a_byte_offset_is_a_view_pitch_over_element_size_on(tmp_path):
    fn, aliases, unresolved = pointer_aliases(unit(tmp_path, PITCHED).kernel("scale_rows"))
    assert not unresolved and aliases["row"].buffer == "devPtr"
    off = aliases["row"].offset
    assert isinstance(off, m.Binary) and off.op == "/" and off.rhs.value == 4
    # the address as an integer ((uintptr_t)cp + bytes) is the same byte step
    _, aliases, unresolved = pointer_aliases(unit(tmp_path, PITCHED).kernel("intensities"))
    assert not unresolved and aliases["fp"].buffer == "cp"
    out, kernels = converted(tmp_path, PITCHED, PITCHED_SPEC)
    assert {k["kernel"]: k["check"]["status"] for k in kernels} == \
        {"scale_rows": "pass", "row_sums": "pass", "intensities": "pass"}


#: addresses given to an atomic and to a cache-hinted load as pointer arithmetic on a buffer, the
#: way all-pairs-distance and channelShuffle write them
ADDRESSES = """
#include <cuda_runtime.h>
#define INSTANCES 16
__global__ void pairs(const unsigned char* a, int* distance, int n)
{
    int gx = blockIdx.x;
    int gy = threadIdx.x;
    int count = 0;
    for (int k = 0; k < n; k++) count += a[gx * n + k] != a[gy * n + k];
    atomicAdd(distance + INSTANCES * gx + gy, count);
}
__global__ void shuffle(const float* X, float* Y, int C, int G, int HxW)
{
    const int K = C / G;
    int offset = threadIdx.x;
    int n = blockIdx.y, c = blockIdx.x;
    int g = c % G, k = c / G;
    if (offset < HxW)
        Y[(n * C + c) * HxW + offset] = __ldg(X + (n * C + g * K + k) * HxW + offset);
}
"""

ADDRESSES_SPEC = """
[[kernel]]
name = "pairs"
grid = [16, 1, 1]
block = [16, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "a"
buffer = "uint8"
elements = 256
role = "in"
range = [0, 3]
[[kernel.args]]
name = "distance"
buffer = "int32"
elements = 256
role = "inout"
range = [0, 5]
[[kernel.args]]
name = "n"
scalar = "int32"
value = 16
[[kernel]]
name = "shuffle"
grid = [6, 2, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "X"
buffer = "float32"
elements = 600
role = "in"
range = [-2.0, 2.0]
[[kernel.args]]
name = "Y"
buffer = "float32"
elements = 600
role = "out"
[[kernel.args]]
name = "C"
scalar = "int32"
value = 6
[[kernel.args]]
name = "G"
scalar = "int32"
value = 2
[[kernel.args]]
name = "HxW"
scalar = "int32"
value = 50
"""


def test_an_address_given_as_pointer_arithmetic_is_the_element_it_names(tmp_path):
    fn, _aliases, _left = pointer_aliases(unit(tmp_path, ADDRESSES).kernel("pairs"))
    (call,) = [c for c in nodes(fn, m.Call) if c.callee == "atomicAdd"]
    target = call.args[0]
    assert isinstance(target, m.Unary) and target.op == "&" and isinstance(target.operand, m.Index)
    assert target.operand.base.name == "distance"
    (tmp_path / "conv").mkdir()
    _out, kernels = converted(tmp_path / "conv", ADDRESSES, ADDRESSES_SPEC)
    for k in kernels:
        assert k["form"] not in ("hybrid", "unsupported"), (k["kernel"], k["reason"])
        assert k["check"]["status"] == "pass", (k["kernel"], k["check"]["message"])


#: a forecast buffer that a launch may leave out: the view is null unless its steps are asked
#: for, and the kernel tests it before storing (the way Kalman-filter batches write forecasts)
MAYBE_NULL = """
#include <cuda_runtime.h>
__global__ void forecast(const double* level, double* fc, double* band, int steps, int want_band)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    double* b_fc = steps ? fc + b * steps : nullptr;
    double* b_band = want_band ? band + b * steps : NULL;
    double v = level[b];
    for (int it = 0; it < steps; it++) {
        v = 0.5 * v + 1.0;
        b_fc[it] = v;
        if (b_band != nullptr) b_band[it] = 2.0 * v;
        if (!b_band) b_fc[it] += 100.0;
    }
    if (b_fc && steps > 1) b_fc[0] -= level[b];
}
"""


def _maybe_null_spec(want_band: str) -> str:
    return spec_kernel("forecast", (2, 1, 1), (32, 1, 1), "fp64",
                       spec_buffer("level", "float64", 64, "in", -4.0, 4.0),
                       spec_buffer("fc", "float64", 64 * 5, "inout", -1.0, 1.0),
                       spec_buffer("band", "float64", 64 * 5, "inout", -1.0, 1.0),
                       spec_scalar("steps", "int32", 5), spec_scalar("want_band", "int32", want_band))


#: the spec bench/test_kernels.py checks the kernel with on a GPU (the band asked for)
MAYBE_NULL_SPEC = _maybe_null_spec("1")


def test_a_view_that_may_be_null_is_tested_by_its_condition(tmp_path):
    for want in ("1", "0"):
        (tmp_path / want).mkdir()
        out, (k,) = converted(tmp_path / want, MAYBE_NULL, _maybe_null_spec(want))
        assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "b_band" not in text and "b_fc" not in text  # folded: tests read the conditions
    assert "want_band" in text.split("def forecast(")[1]


def test_a_view_that_may_be_null_whose_condition_changes_after_is_not_folded(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* y, int n) {
            int on = n > 4;
            float* p = on ? y + threadIdx.x : nullptr;
            on = 0;
            if (p) p[0] = 1.0f;
        }
    """)
    _fn, aliases, unresolved = pointer_aliases(u.kernel("k"))
    assert [d.name for d in unresolved] == ["p"] and "p" not in aliases


#: views laid one after another in a header block whose lengths the buffer itself holds (the way
#: clique and graph codes pack several arrays into one device allocation)
PACKED = """
#include <cuda_runtime.h>
__global__ void packed(const int* pack, int* out)
{
    int rows = pack[0];
    const int* lens = pack + 1;
    const int* data = lens + rows;
    const int* tail = data + *(lens + rows - 1);
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) out[r] = lens[r] * 10 + data[r] + tail[r % 3];
}
"""


PACKED_SPEC = spec_kernel("packed", (1, 1, 1), (32, 1, 1), "exact",
                          spec_buffer("pack", "int32", 64, "in", 1, 9),
                          spec_buffer("out", "int32", 32, "out"))


def test_a_view_whose_offset_reads_through_another_view(tmp_path):
    out, (k,) = converted(tmp_path, PACKED, PACKED_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    assert "lens" not in (out / "k.py").read_text()
