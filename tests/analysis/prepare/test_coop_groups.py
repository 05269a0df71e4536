"""Cooperative groups lowered to CUDA builtins (analysis.prepare.coop_groups), and groups used as values refused."""
from __future__ import annotations

import pytest

from migrate.analysis.prepare.coop_groups import GroupError, lower_cooperative_groups
from migrate.ir import model as m
from tests.analysis.support import calls, nodes, unit


def test_cooperative_groups_lower_to_builtins(tmp_path):
    u = unit(tmp_path, """
        #include <cooperative_groups/reduce.h>
        namespace cg = cooperative_groups;
        __global__ void k(const float* x, float* y) {
            cg::thread_block block = cg::this_thread_block();
            cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
            float v = x[block.thread_rank()];
            v = cg::reduce(tile, v, cg::plus<float>());
            block.sync();
            float w = tile.shfl_down(v, 1);
            unsigned slot = tile.meta_group_rank();
            if (tile.thread_rank() == 0) y[slot] = v + w;
        }
    """)
    fn = lower_cooperative_groups(u.kernel("k"))
    assert not nodes(fn, m.MethodCall)
    assert not [c for c in nodes(fn, m.Call) if c.kind == "cg"]
    names = calls(fn)
    assert "__syncthreads" in names and "__shfl_down_sync" in names and "__shfl_xor_sync" in names
    loops = nodes(fn, m.For)
    assert loops and loops[0].init.decls[0].init.value == 16  # butterfly over 32 lanes
    assert any(isinstance(b, m.Binary) and b.op == "%" and isinstance(b.rhs, m.IntLit) and b.rhs.value == 32
               for b in m.walk(fn.body))


def test_group_used_as_a_value_is_refused(tmp_path):
    u = unit(tmp_path, """
        namespace cg = cooperative_groups;
        __device__ float f(cg::thread_block b) { return 1.0f; }
        __global__ void k(float* y) {
            cg::thread_block block = cg::this_thread_block();
            y[0] = block.group_dim().x;
        }
    """)
    with pytest.raises(GroupError):
        lower_cooperative_groups(u.kernel("k"))
