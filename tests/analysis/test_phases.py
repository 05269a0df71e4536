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


@pytest.mark.parametrize("loop, exit_", [
    ("while (true) {", "if (done) break;"),
    ("for (int r = 0; r < 8; ++r) {", "if (done) continue;"),
    ("do {", "if (done) break;"),
])
def test_a_break_or_continue_in_a_loop_around_barriers_is_not_portable(tmp_path, loop, exit_):
    """The loop's phases are T.Parallel loops: its break ended the phase, not the loop (a while
    (true) around barriers then ran forever)."""
    tail = "} while (true);" if loop == "do {" else "}"
    fn = unit(tmp_path, f"""
        __global__ void k(float* y, float limit) {{
            __shared__ int done;
            {loop}
                if (threadIdx.x == 0) done = y[0] < limit;
                __syncthreads();
                {exit_}
                y[threadIdx.x] *= 0.5f;
                __syncthreads();
            {tail}
        }}
    """).kernel("k")
    word = exit_.split()[-1].rstrip(";")
    with pytest.raises(NotPortable, match=f"'{word}' in a loop around barriers"):
        plan_portable(unique_names(fn))


def test_a_break_of_a_nested_loop_or_a_switch_stays_in_its_phase(tmp_path):
    fn = unit(tmp_path, """
        __global__ void k(float* y, int n) {
            for (int r = 0; r < 4; ++r) {
                for (int i = 0; i < n; ++i) { if (y[i] < 0.0f) break; y[i] -= 1.0f; }
                switch (r) { case 1: y[threadIdx.x] += 1.0f; break; default: break; }
                __syncthreads();
            }
        }
    """).kernel("k")
    plan = plan_portable(unique_names(fn))
    assert any(isinstance(r, UniformLoop) for r in plan.regions)


#: uniform values a phase swaps through a temporary (two ping-pong buffer numbers) and one it
#: only sets: run once per thread on the CPU's serial T.Parallel, a kernel-level swap would be
#: undone by the next thread
SWAP = """
__global__ void k(float* a, int n, int times) {
    int i = threadIdx.x;
    int src = 0;
    int dst = 1;
    int last = 0;
    for (int t = 0; t < times; t++) {
        a[dst * n + i] = a[src * n + i] + last;
        __syncthreads();
        int tmp = src;
        src = dst;
        dst = tmp;
        last = 7;
    }
    a[i] += last;
}
"""


def test_a_uniform_swap_through_a_temporary_is_held_per_thread(tmp_path):
    plan = plan_portable(unique_names(unit(tmp_path, SWAP).kernel("k")))
    placement = {name: vp.placement for name, vp in plan.vars.items()}
    assert placement["src"] == "thread_array" and placement["dst"] == "thread_array"
    assert placement["last"] == "kernel_var"
