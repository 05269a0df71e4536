"""Inlining device functions (analysis.prepare.inline): what the phase split must see, what cannot be
hoisted, and warp calls as statements of their own."""
from __future__ import annotations

import pytest

from migrate.analysis.prepare.inline import InlineError, hoist_warp_calls, inline_calls, needs_inlining
from migrate.ir import model as m
from tests.analysis.support import calls, nodes, unit


INLINE = """
__device__ float block_sum(float v, float* scratch) {
    scratch[threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.x == 0) { float t = 0; for (int i = 0; i < blockDim.x; ++i) t += scratch[i]; scratch[0] = t; }
    __syncthreads();
    return scratch[0];
}
__device__ float twice(float v) { return 2 * v; }
__device__ void bump(float& acc, float v) { acc += v; }
__global__ void k(const float* x, float* y) {
    __shared__ float s[128];
    float acc = 0;
    bump(acc, x[threadIdx.x]);
    float total = twice(block_sum(acc, s)) + 1.0f;
    y[blockIdx.x] = total;
}
"""


def test_inline_only_what_the_phase_split_must_see(tmp_path):
    u = unit(tmp_path, INLINE)
    device = {f.name: f for f in u.device_functions}
    assert needs_inlining(device) == {"block_sum", "bump"}
    assert needs_inlining(device, portable=False) == {"bump"}  # reference parameter only
    fn = inline_calls(u.kernel("k"), device, needs_inlining(device))
    assert "block_sum" not in calls(fn) and "bump" not in calls(fn)
    assert "twice" in calls(fn) and fn.calls == ("twice",)  # a plain helper stays a macro
    assert calls(fn).count("__syncthreads") == 2
    # the shared array reaches the inlined body through the pointer parameter
    assert any(isinstance(n, m.Index) and isinstance(n.base, m.Ref) and n.base.name == "s"
               for n in m.walk(fn.body))
    # the reference parameter writes the caller's variable
    assigns = [n for n in nodes(fn, m.Assign) if isinstance(n.target, m.Ref) and n.target.name == "acc"]
    assert assigns and assigns[0].op == "+="


def test_inline_refuses_calls_it_cannot_hoist(tmp_path):
    u = unit(tmp_path, INLINE.replace("float total = twice(block_sum(acc, s)) + 1.0f;",
                                      "float total = acc > 0 && block_sum(acc, s) > 0;"))
    device = {f.name: f for f in u.device_functions}
    with pytest.raises(InlineError, match="after '&&'"):
        inline_calls(u.kernel("k"), device, needs_inlining(device))


def test_warp_calls_get_statements_of_their_own(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* y) {
            float v = y[threadIdx.x];
            v += __shfl_down_sync(0xffffffffu, v, 1) * 2.0f;
            y[threadIdx.x] = v;
        }
    """)
    fn = hoist_warp_calls(u.kernel("k"))
    decls = [d for d in nodes(fn, m.VarDecl) if d.name.startswith("shfl_down")]
    assert len(decls) == 1
    assigns = [a for a in nodes(fn, m.Assign) if isinstance(a.value, m.Call)]
    assert assigns and assigns[0].value.callee == "__shfl_down_sync"
