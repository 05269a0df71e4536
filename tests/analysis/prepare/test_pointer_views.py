"""analysis.prepare.pointer_views: local pointers that view a buffer fold into its indices."""
from __future__ import annotations

from migrate.analysis.prepare.pointer_views import pointer_aliases
from migrate.ir import model as m
from tests.analysis.support import nodes, unit


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


def test_a_view_through_bytes_is_not_taken_for_an_element_offset(tmp_path):
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
    assert set(aliases) == {"same"} and [d.name for d in unresolved] == ["row"]


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


def test_a_view_that_reads_a_buffers_bits_as_another_type_is_not_folded(tmp_path):
    """``float* px = (float*)&buf[k]`` on an int buffer (a TSP kernel keeps its coordinates in
    its int scratch array): folded into ``buf``'s index it read ints, and the square root of an
    int does not compile for CUDA. Such a view is refused, naming it."""
    from migrate.analysis.prepare.pointer_views import pointer_aliases
    from tests.analysis.support import unit
    fn = unit(tmp_path, """
        __global__ void k(int* buf, float* out, int n) {
            float* px = (float*)(&buf[n]);
            const int* same = (const int*)(&buf[2 * n]);
            out[threadIdx.x] = sqrtf(px[threadIdx.x]) + same[threadIdx.x];
        }""").kernel("k")
    _, aliases, unresolved = pointer_aliases(fn)
    assert [d.name for d in unresolved] == ["px"] and set(aliases) == {"same"}
