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


def _preorder_reference(node):
    return [node] + [d for c in m.children(node) for d in _preorder_reference(c)]


def test_walk_is_pre_order_and_its_memo_stays_true(tmp_path, monkeypatch):
    """walk keeps the pre-order lists of the trees it walked last (nodes are immutable): a second
    walk of a tree gives the same nodes, a rebuilt tree its own, and trees pushed out of the memo
    are walked again correctly."""
    import dataclasses
    u = unit(tmp_path, """
        __global__ void k(const float* a, float* b, int n) {
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
                float v = a[i] * 2.0f;
                if (v > 1.0f) { b[i] = v; } else { b[i] = -v + a[(i + 1) % n]; }
                if (i + 2 < n && v < -1.0f) { b[i + 1] = b[i + 1] * v - a[i + 2] / (v * v + 1.0f); }
            }
        }
    """)
    body = u.kernels[0].body
    want = [id(x) for x in _preorder_reference(body)]
    assert len(want) >= 64  # big enough to be kept
    assert [id(x) for x in m.walk(body)] == want
    assert [id(x) for x in m.walk(body)] == want  # from the memo
    rebuilt = dataclasses.replace(body, stmts=body.stmts[:1])
    assert [id(x) for x in m.walk(rebuilt)] == [id(x) for x in _preorder_reference(rebuilt)]
    monkeypatch.setattr(m, "_WALKS_LIMIT", 100)  # room for one such tree: each new one evicts
    copies = [dataclasses.replace(body) for _ in range(5)]
    for c in copies + copies:
        assert [id(x) for x in m.walk(c)] == [id(x) for x in _preorder_reference(c)]
    assert m._walks_held[0] <= 100
