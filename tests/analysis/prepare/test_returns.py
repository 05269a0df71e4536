"""analysis.prepare.returns: early returns become guards."""
from __future__ import annotations

from migrate.analysis.prepare.returns import remaining_returns, returns_to_guards
from migrate.ir import model as m
from tests.analysis.support import unit


def test_early_return_becomes_a_guard(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* y, int n) {
            int i = threadIdx.x;
            if (i >= n) return;
            y[i] = 1.0f;
            __syncthreads();
            y[i] += 1.0f;
        }
    """)
    fn = returns_to_guards(u.kernel("k"))
    assert not remaining_returns(fn)
    guard = [s for s in fn.body.stmts if isinstance(s, m.If)][0]
    assert guard.cond.op == "<" and len(guard.then.stmts) == 3
