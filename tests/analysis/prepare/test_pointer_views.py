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
