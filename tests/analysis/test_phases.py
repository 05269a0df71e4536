"""The portable plan (analysis.phases): phases split at barriers, uniform loops and branches, where each
variable lives, and barriers it cannot place."""
from __future__ import annotations

import pytest

from migrate.analysis.prepare.names import unique_names
from migrate.analysis.prepare.inline import hoist_warp_calls
from migrate.analysis.phases import NotPortable, plan_portable
from migrate.ir.loops import Barrier, Exchange, UniformIf, UniformLoop
from tests.analysis.support import PHASES, unit


def test_phase_split(tmp_path):
    fn = hoist_warp_calls(unit(tmp_path, PHASES).kernel("k"))
    plan = plan_portable(unique_names(fn))
    kinds = [type(r).__name__ for r in plan.regions]
    assert kinds[:4] == ["Phase", "Barrier", "UniformLoop", "Phase"]
    loop = plan.regions[2]
    assert isinstance(loop, UniformLoop) and any(isinstance(r, Barrier) for r in loop.body)
    branch = [r for r in plan.regions if isinstance(r, UniformIf)][0]
    assert branch.predicate and any(isinstance(r, Exchange) and r.op == "shfl_xor" for r in branch.then)
    placement = {name: vp.placement for name, vp in plan.vars.items()}
    assert placement["s"] == "shared" and placement["t"] == "thread_array"
    assert placement["half"] in ("kernel_var", "phase") and placement[branch.predicate] == "thread_array"


def test_barrier_in_a_thread_dependent_loop_is_not_portable(tmp_path):
    fn = unit(tmp_path, """
        __global__ void k(float* y) {
            for (int i = 0; i < threadIdx.x; ++i) { y[i] += 1; __syncthreads(); }
        }
    """).kernel("k")
    with pytest.raises(NotPortable, match="loop that depends on the thread"):
        plan_portable(fn)
