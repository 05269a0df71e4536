"""analysis.lift.warp_trees: the warp-shuffle trees of a portable plan (warp_tree), the
combine of a value with its partner (combine_op), and the roles of a kernel's thread indices
(Roles); with the trees the lift must refuse."""
from __future__ import annotations

import pytest

from migrate.analysis.facts.calls import callees_of
from migrate.analysis.lift.base import NotLiftable
from migrate.analysis.lift.warp_trees import Roles, combine_op, warp_tree
from migrate.ir import model as m
from migrate.ir.loops import Exchange, UniformIf, UniformLoop
from migrate.pipeline import plan_threads, prepare
from tests.analysis.support import nodes, unit


def _loops(regions):
    for r in regions:
        if isinstance(r, UniformLoop):
            yield r
            yield from _loops(r.body)
        elif isinstance(r, UniformIf):
            yield from _loops(r.then + r.other)


def tree_of(tmp_path, shuffle_loop: str, value: str = "float", combine: str = "v += t;"):
    """The warp tree (or the refusal) of a kernel whose one shuffle loop is ``shuffle_loop``:
    ``for (...) { T t = SHUFFLE; combine }`` as the portable plan holds it."""
    u = unit(tmp_path, f"""
        __global__ void tree(const {value}* x, {value}* out) {{
            {value} v = x[blockIdx.x * blockDim.x + threadIdx.x];
            {shuffle_loop.replace("COMBINE", combine)}
            if (threadIdx.x % warpSize == 0) out[blockIdx.x * (blockDim.x / warpSize) + threadIdx.x / warpSize] = v;
        }}
    """)
    device = {f.name: f for f in u.device_functions}
    fn, _aliases = prepare(u.kernel("tree"), device)
    plan, why = plan_threads(fn, callees_of(fn, device))
    assert plan.form == "portable", why
    (loop,) = [r for r in _loops(plan.regions) if any(isinstance(x, Exchange) for x in r.body)]
    return warp_tree(loop, Roles(fn, set()))


DOWN = "for (int off = warpSize / 2; off > 0; off >>= 1) { float t = __shfl_down_sync(0xffffffff, v, off); COMBINE }"


def test_shfl_down_sum(tmp_path):
    tree = tree_of(tmp_path, DOWN)
    assert (tree.var, tree.op, tree.everywhere, tree.pair) == ("v", "sum", False, None)
    assert tree.temps == ("t", "off")


@pytest.mark.parametrize("loop, combine, op", [
    ("for (int off = 16; off >= 1; off /= 2) { float t = __shfl_xor_sync(0xffffffffu, v, off); COMBINE }",
     "v = fmaxf(v, t);", "max"),
    ("for (int off = warpSize >> 1; off > 0; off = off >> 1) { float t = __shfl_xor_sync(FULL, v, off, 32); COMBINE }",
     "v = t < v ? t : v;", "min"),
])
def test_xor_butterflies_leave_the_result_everywhere(tmp_path, loop, combine, op):
    tree = tree_of(tmp_path, "const unsigned FULL = 0xffffffffu;\n" + loop, combine=combine)
    assert (tree.var, tree.op, tree.everywhere) == ("v", op, True)


def test_a_loop_without_shuffles_is_no_tree(tmp_path):
    u = unit(tmp_path, """
        __global__ void shared_tree(const float* x, float* out) {
            __shared__ float s[256];
            int t = threadIdx.x;
            s[t] = x[blockIdx.x * blockDim.x + t];
            __syncthreads();
            for (int st = blockDim.x / 2; st > 0; st >>= 1) {
                if (t < st) s[t] += s[t + st];
                __syncthreads();
            }
            if (t == 0) out[blockIdx.x] = s[0];
        }
    """)
    fn, _ = prepare(u.kernel("shared_tree"), {})
    plan, _why = plan_threads(fn, [])
    (loop,) = _loops(plan.regions)
    assert warp_tree(loop, Roles(fn, {"t"})) is None


@pytest.mark.parametrize("loop, combine, why", [
    (DOWN.replace("0xffffffff", "0x0000ffffu"), "v += t;", "full mask"),
    (DOWN.replace("warpSize / 2", "warpSize"), "v += t;", "do not halve"),
    (DOWN.replace("off >>= 1", "off -= 1"), "v += t;", "do not halve"),
    (DOWN.replace("off > 0", "off > 1"), "v += t;", "do not halve"),
    (DOWN.replace("v, off)", "v, off, 16)"), "v += t;", "narrower than a warp"),
    (DOWN.replace("v, off)", "v, 1)"), "v += t;", "does not take the loop's offset"),
    (DOWN.replace("__shfl_down_sync", "__shfl_up_sync"), "v += t;", "not a shfl_down or shfl_xor"),
    (DOWN, "v *= t;", "not a sum, max or min"),
    (DOWN, "v = v - t;", "not a sum, max or min"),
])
def test_refusals(tmp_path, loop, combine, why):
    with pytest.raises(NotLiftable, match=why):
        tree_of(tmp_path, loop, combine=combine)


def test_a_computed_half_mask_is_refused(tmp_path):
    with pytest.raises(NotLiftable, match="full mask"):
        tree_of(tmp_path, DOWN.replace("0xffffffff", "~0u >> 16"))


COMBINES = """
    __global__ void combines(float* out, float v, float t, float w) {
        v += t;
        v = t + v;
        v = fmaxf(v, t);
        v = fminf(t, v);
        v = (t > v) ? t : v;
        v = (v < t) ? v : t;
        v = (v >= t) ? t : v;
        v = max(v, t);
        v -= t;
        v = v * t;
        w += t;
        v = fmaxf(v, v);
        v += 2.0f * t;
        v = (t > v) ? v : v;
    }
"""


def test_combine_op(tmp_path):
    fn = unit(tmp_path, COMBINES).kernel("combines")
    ops = [combine_op(s, "v", "t") for s in fn.body.stmts]
    assert ops == ["sum", "sum", "max", "min", "max", "min", "min", "max",
                   None, None, None, None, None, None]
    assert combine_op(fn.body.stmts[0], "v", "w") is None  # v += t does not combine with w


ROLES = """
    __global__ void roles(const float* x, float* out, int n) {
        const int lane = threadIdx.x % warpSize;
        const int warp = threadIdx.x / warpSize;
        int tid = threadIdx.x;
        int lane2 = tid & 31;
        int warp2 = tid >> 5;
        int half = threadIdx.x % 16;
        int nwarps = blockDim.x / warpSize;
        int nwarps_up = (blockDim.x + warpSize - 1) / warpSize;
        int halves = blockDim.x / 16;
        float v = x[tid];
        if (lane == 0) out[warp] = v;
        if (0 == lane2) out[warp2] = v;
        if (tid == 0) out[0] = v;
        if (lane == 1) out[1] = v;
        if (warp == 0) out[2] = v;
        if (threadIdx.x < warpSize) out[3] = v;
        if (threadIdx.x < 64) out[4] = v;
        if (half == 0) out[5] = v;
    }
"""


def test_roles(tmp_path):
    fn = unit(tmp_path, ROLES).kernel("roles")
    roles = Roles(fn, {"tid"})
    ref = {d.name: m.Ref(d.name, "local", d.type, d.span) for d in nodes(fn, m.VarDecl)}
    assert roles.is_thread(ref["tid"]) and not roles.is_thread(ref["lane"])
    assert roles.is_lane(ref["lane"]) and roles.is_lane(ref["lane2"]) and not roles.is_lane(ref["half"])
    assert roles.is_warp(ref["warp"]) and roles.is_warp(ref["warp2"]) and not roles.is_warp(ref["lane"])
    # tid is threadIdx.x through its one value; a name without one is a thread index when told so
    assert Roles(fn, set()).is_lane(ref["lane2"])
    me = m.Ref("me", "local", ref["tid"].type, ref["tid"].span)
    assert roles.is_thread(me) is False and Roles(fn, {"me"}).is_thread(me)
    conds = [s.cond for s in nodes(fn, m.If)]
    assert [roles.is_leader(c) for c in conds] == [True, True, False, False, False, False, False, False]
    assert roles.is_leader(conds[2], first_warp=True)  # tid == 0: the leader of warp 0
    assert [roles.is_first_warp(c) for c in conds] == [False, False, False, False, True, True, False, False]
    inits = {d.name: d.init for d in nodes(fn, m.VarDecl)}
    counts = {name: roles.counts_warps(inits[name]) for name in ("nwarps", "nwarps_up", "halves")}
    assert counts == {"nwarps": True, "nwarps_up": True, "halves": False}
    assert roles.mentions_thread(conds[0]) and not roles.mentions_thread(inits["nwarps"])
