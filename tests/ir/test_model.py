"""The parse model's access helpers (ir.model): the buffer an access reaches, the targets of stores."""
from __future__ import annotations

from migrate.ir import model as m
from tests.analysis.support import unit


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
