"""ir.exprs: the expression helpers every pass shares (negation, casts, conjuncts, purity,
constant values, factors, node replacement), on expressions the real frontend builds."""
from __future__ import annotations

import math

from migrate.ir import model as m
from migrate.ir.exprs import (assigned_names, conjuncts, const_value, factors, is_ref, negate, negations,
                              pure, reads_no_memory, replace_node, strip_bool_casts, strip_casts,
                              strip_int_casts)
from tests.analysis.support import nodes, unit

GUARD = """
    __global__ void copy2d(const float* in, float* out, int rows, int cols, bool flag) {
        int r = blockIdx.y * blockDim.y + threadIdx.y;
        int c = blockIdx.x * blockDim.x + threadIdx.x;
        if (!(r >= rows || c >= cols)) out[r * cols + c] = in[r * cols + c];
        if (r < rows && c < cols) out[r] = 0.0f;
        if (cols && r < rows) out[r] = 1.0f;
        if (!(r < rows && c < cols)) out[0] = 2.0f;
        if (!flag) out[1] = 3.0f;
        bool ok = (bool)flag;
        long w = (long)(unsigned)c;
        int t = (int)in[0];
        float f = (float)r;
    }
"""


def _kernel(tmp_path, source, name):
    fn = unit(tmp_path, source).kernel(name)
    return fn, {d.name: d.init for d in nodes(fn, m.VarDecl)}, [s.cond for s in nodes(fn, m.If)]


def _names(e) -> list[str]:
    return [n.name for n in m.walk(e) if isinstance(n, m.Ref)]


def test_negate_flips_comparisons_and_drops_double_negation(tmp_path):
    _fn, _inits, conds = _kernel(tmp_path, GUARD, "copy2d")
    r_lt_rows = conds[1].lhs
    flipped = negate(r_lt_rows)
    assert isinstance(flipped, m.Binary) and flipped.op == ">="
    assert flipped.lhs is r_lt_rows.lhs and flipped.rhs is r_lt_rows.rhs
    assert negate(flipped) == r_lt_rows
    for op, other in (("<", ">="), (">", "<="), ("==", "!=")):
        assert negate(m.Binary(op, r_lt_rows.lhs, r_lt_rows.rhs, r_lt_rows.type, r_lt_rows.span)).op == other
    not_flag = conds[4]
    assert negate(not_flag) is not_flag.operand  # !!flag is flag
    both = conds[1]  # ``a && b`` negated is ``!(a && b)``: no De Morgan
    wrapped = negate(both)
    assert isinstance(wrapped, m.Unary) and wrapped.op == "!" and wrapped.operand is both
    assert wrapped.type == m.Scalar("bool")


def test_strip_casts_int_casts_and_bool_casts(tmp_path):
    _fn, inits, conds = _kernel(tmp_path, GUARD, "copy2d")
    w, t, f, ok = inits["w"], inits["t"], inits["f"], inits["ok"]
    assert is_ref(strip_casts(w), "c") and isinstance(strip_casts(t), m.Index)
    # (long)(unsigned)c: only integer-to-integer conversions, all of them go
    assert isinstance(strip_int_casts(w), m.Ref) and strip_int_casts(w).name == "c"
    # (int)in[0] converts a float, (float)r converts to a float: both stay
    assert isinstance(strip_int_casts(t), m.Cast) and strip_int_casts(t).operand.type == m.Scalar("float32")
    assert strip_int_casts(f) is f
    assert isinstance(strip_bool_casts(ok), m.Ref) and strip_bool_casts(ok).name == "flag"
    int_to_bool = conds[2].lhs  # ``cols`` in ``cols && ...``: an int tested as a bool
    assert isinstance(int_to_bool, m.Cast) and strip_bool_casts(int_to_bool) is int_to_bool


def test_conjuncts_and_negations(tmp_path):
    guard, both, int_and, not_both, not_flag = _kernel(tmp_path, GUARD, "copy2d")[2]
    terms = conjuncts(guard)  # !(r >= rows || c >= cols)
    assert [(t.op, _names(t)) for t in terms] == [("<", ["r", "rows"]), ("<", ["c", "cols"])]
    assert conjuncts(both) == [both.lhs, both.rhs]
    # !(a && b) implies neither term: the condition itself is its one conjunct
    assert negations(not_both.operand) == [] and conjuncts(not_both) == [not_both]
    assert conjuncts(not_flag) == [not_flag]  # !flag: nothing to negate
    assert [t.op for t in negations(both.lhs)] == [">="]
    assert negations(guard) == [guard.operand]  # the falsehood of !(x || y) is x || y, not split
    # the implicit int-to-bool conversion of ``cols``: dropped by default, kept by a stricter strip
    assert conjuncts(int_and)[0] == int_and.lhs.operand
    kept = conjuncts(int_and, strip=strip_bool_casts)
    assert kept[0] is int_and.lhs and kept[1] is int_and.rhs


PURITY = """
    namespace cg = cooperative_groups;
    __device__ float sq(float v) { return v * v; }
    __global__ void effects(float* x, const float* y, int* counter, int n) {
        int i = threadIdx.x;
        float* p = x;
        float a = y[i] * 2.0f + 1.0f;
        float b = sqrtf(y[i]) + fabsf(y[0]);
        float c = sq(y[i]);
        float d = x[i] = 1.0f;
        int e = i++;
        int g = atomicAdd(counter, 1);
        cg::thread_block blk = cg::this_thread_block();
        int h = blk.thread_rank();
        float k = *p;
        int l = (i + 1) * n - i;
        float o = -y[0];
    }
"""


def test_pure_allows_math_calls_unless_told_not_to(tmp_path):
    _fn, inits, _ = _kernel(tmp_path, PURITY, "effects")
    assert pure(inits["a"]) and pure(inits["a"], math=False)
    assert pure(inits["b"]) and not pure(inits["b"], math=False)
    for impure in ("c", "d", "e", "g", "h"):  # device call, store, ++, atomic, method call
        assert not pure(inits[impure]), impure
    assert pure(inits["k"]) and pure(inits["l"])


def test_reads_no_memory(tmp_path):
    _fn, inits, _ = _kernel(tmp_path, PURITY, "effects")
    assert reads_no_memory(inits["l"]) and reads_no_memory(inits["i"])
    for loads in ("a", "b", "k", "o", "e"):  # an index, calls, a dereference, ++
        assert not reads_no_memory(inits[loads]), loads


def test_assigned_names(tmp_path):
    fn = unit(tmp_path, """
        __global__ void acc(const float* x, float* out, int n) {
            float s = 0.0f;
            int i = threadIdx.x, j = n;
            float* p = out;
            while (i < n) { s += x[i]; ++i; j--; }
            out[0] = s;
            *p = 1.0f;
        }
    """).kernel("acc")
    assert assigned_names(fn.body) == {"s", "i", "j"}  # not out[0], not *p, not declarations
    loop = nodes(fn, m.While)[0]
    assert assigned_names(loop.cond) == set()


CONSTANTS = """
    #define TILE 16
    __global__ void consts(float* out, int n) {
        const int half = TILE / 2;
        const int lanes = half * warpSize;
        int nwarps = blockDim.x / warpSize;
        int rows = blockDim.y * 2;
        int q = -7 / 2, rem = -7 % 2, rem2 = 7 % -2;
        int bits = (1 << 10) | (256 >> 3), inv = ~0;
        int zero = TILE - 16;
        int bad = 7 / zero;
        float lo = -INFINITY, hi = INFINITY, quarter = 1.0f / 4;
        int dyn = n * 2;
        unsigned half_mask = ~0u >> 16;
        long long seed = 1LL << 62;
        int bucket = seed % 3;
    }
"""


def test_const_value(tmp_path):
    _fn, inits, _ = _kernel(tmp_path, CONSTANTS, "consts")
    assert const_value(inits["half"]) == 8
    assert const_value(inits["lanes"]) is None  # reads the local ``half``
    assert const_value(inits["lanes"], names=inits) == 8 * 32
    assert const_value(inits["nwarps"]) is None and const_value(inits["nwarps"], block=256) == 8
    assert const_value(inits["rows"], block=256) is None  # block= is blockDim.x only
    # C truncates towards zero: -7 / 2 is -3 (Python floors to -4), -7 % 2 is -1, 7 % -2 is 1
    assert (const_value(inits["q"]), const_value(inits["rem"]), const_value(inits["rem2"])) == (-3, -1, 1)
    assert const_value(inits["bits"]) == 1024 | 32 and const_value(inits["inv"]) == -1
    assert const_value(inits["bad"], names=inits) is None  # division by zero
    assert const_value(inits["lo"]) == -math.inf and const_value(inits["hi"]) == math.inf
    assert const_value(inits["quarter"]) == 0.25
    assert const_value(inits["dyn"], names=inits) is None  # a parameter is no constant


def test_const_value_of_unsigned_wraps(tmp_path):
    _fn, inits, _ = _kernel(tmp_path, CONSTANTS, "consts")
    assert const_value(inits["half_mask"]) == 0xFFFF


def test_const_value_of_64_bit_modulo(tmp_path):
    _fn, inits, _ = _kernel(tmp_path, CONSTANTS, "consts")
    assert const_value(inits["bucket"], names=inits) == (1 << 62) % 3 == 1


def test_is_ref_and_factors(tmp_path):
    _fn, inits, _ = _kernel(tmp_path, """
        __global__ void prod(const float* x, float* y, int a, int b, int c) {
            long s = (long)(a * b) * c;
            int t = a + b;
            float v = x[a * (b * c)];
        }
    """, "prod")
    s, t = inits["s"], inits["t"]
    assert [_names(f) for f in factors(s)] == [["a"], ["b"], ["c"]]
    assert is_ref(factors(s)[0], "a") and not is_ref(factors(s)[0], "b")
    assert factors(t) == [t] and not is_ref(t, "a")
    index = inits["v"].index
    assert [f.name for f in factors(index)] == ["a", "b", "c"]


def test_replace_node_replaces_by_identity(tmp_path):
    _fn, inits, _ = _kernel(tmp_path, """
        __global__ void sq(const float* x, float* y) {
            float v = x[threadIdx.x];
            float w = v * v;
        }
    """, "sq")
    w = inits["w"]
    lhs, rhs = w.lhs, w.rhs
    assert lhs.name == rhs.name == "v" and lhs is not rhs
    one = m.FloatLit(1.0, "1.0f", lhs.type, lhs.span)
    out = replace_node(w, lhs, one)
    assert out.lhs is one and out.rhs is rhs  # the other read of v is another node
    assert replace_node(w, inits["v"], one) is w  # not in the tree: nothing rebuilt
    assert replace_node(w, w, one) is one
