"""Device functions (emit.device): macros, and the plain functions of those that compute one
expression of their arguments, which callers use where C may not evaluate the call."""
from __future__ import annotations

import textwrap

import pytest

from tests.analysis.lift.support import convert, load
from migrate.parse.frontend import parse_file
from tests.lowering import lower_sm90

#: Helpers called right of && and ||, in a branch of ?: and in conditions of an else-if chain: a
#: magnitude, a range test written with && and !, a load that only an index below m may make.
CLASSIFY = """
    __device__ int gap(int a, int b) { const int d = a - b; return d < 0 ? -d : d; }
    __device__ bool inside(int v, int lo, int hi) { return v >= lo && v <= hi && !(v == 13); }
    __device__ float at(const float* p, int i) { return p[i]; }
    __global__ void classify(const int* __restrict__ a, const int* __restrict__ b, const float* __restrict__ w,
                             int* __restrict__ cls, float* __restrict__ out, int n, int m) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        int c;
        if (a[i] == 0) c = 0;
        else if (gap(a[i], b[i]) <= 3 && inside(gap(b[i], 0), 1, 50)) c = 1;
        else if (a[i] > 90 || gap(a[i], 7) > 80) c = 2;
        else c = 3;
        cls[i] = c;
        out[i] = (i < m && at(w, i) > 0.0f) ? at(w, i) : -1.0f;
    }
"""

#: 200 elements; w holds only 150 (at(w, i) for i >= 150 would read past it).
CLASSIFY_SPEC = """
    [[kernel]]
    name = "classify"
    grid = [2, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "a"
    buffer = "int32"
    elements = 200
    role = "in"
    range = [-100, 100]
    [[kernel.args]]
    name = "b"
    buffer = "int32"
    elements = 200
    role = "in"
    range = [-100, 100]
    [[kernel.args]]
    name = "w"
    buffer = "float32"
    elements = 150
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "cls"
    buffer = "int32"
    elements = 200
    role = "out"
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 200
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 200
    [[kernel.args]]
    name = "m"
    scalar = "int32"
    value = 150
"""


@pytest.mark.parametrize("flags", [(), ("--no-lift",)], ids=["tile", "portable"])
def test_helpers_where_c_may_not_call_them_run_as_in_c(tmp_path, flags):
    # TileLang refused the macros inside and/or ("Macro `gap` is used inside boolean expressions")
    kernels, text = convert(tmp_path, CLASSIFY, "--check", "cpu", *flags, spec=CLASSIFY_SPEC)
    k = kernels["classify"]
    assert k["form"] == ("portable" if flags else "tile") and k["check"]["status"] == "pass", k["check"]
    # the macro where C always calls it (each argument evaluated once), the plain function elsewhere
    assert "elif gap(a[i], b[i]) <= 3 and inside_expr(gap_expr(b[i], 0), 1, 50):" in text
    assert "T.if_then_else(i < m and at_expr(w, i) > 0.0, at_expr(w, i), " in text
    assert "return T.And(T.And(v >= lo, v <= hi), T.Not(v == 13))" in text
    assert "__global__" in lower_sm90(load(tmp_path / "out" / "k.py").CLASSIFY, (2, 1, 1), (128, 1, 1))


def test_a_macro_where_c_may_not_call_it_is_refused(tmp_path):
    kernels, _ = convert(tmp_path, """
        __device__ int ones(unsigned v) { int c = 0; while (v) { c += v & 1u; v >>= 1; } return c; }
        __device__ float bump(float* p, int i) { p[i] += 1.0f; return p[i]; }
        __global__ void sparse_bits(const unsigned* __restrict__ v, int* __restrict__ flag, int n) {
            const int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n && ones(v[i]) < 4) flag[i] = 1;
        }
        __global__ void bump_some(float* __restrict__ x, float* __restrict__ y, int n) {
            const int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = i % 2 ? bump(x, i) : 0.0f;
        }
    """)
    ones, bump = kernels["sparse_bits"], kernels["bump_some"]
    # right of &&, the call is a test computed where C evaluates it (analysis.prepare.effect_conditions)
    assert ones["form"] == "tile", ones["reason"]
    assert bump["form"] in ("hybrid", "unsupported") and "'bump' called in a branch of '?:'" in bump["reason"]
    assert [d["code"] for d in bump["diagnostics"] if d["code"] not in ("M3008", "M3009")] == ["M3001"]


def test_expression_functions_and_effects(tmp_path):
    from migrate.analysis.facts.calls import with_effects
    from migrate.emit.device import expression_functions
    from migrate.ir.names import unit_names

    path = tmp_path / "k.cu"
    path.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent("""
        __device__ int pong(int n);
        __device__ int ping(int n) { return n > 0 ? pong(n - 1) : 0; }
        __device__ int pong(int n) { return n > 0 ? ping(n - 1) + 1 : 1; }
        __device__ float sq(float v) { const float w = v; return w * w; }
        __device__ float norm2(float a, float b) { return sqrtf(sq(a) + sq(b)); }
        __device__ float clamp_up(float v) { if (v < 0.0f) v = 0.0f; return v; }
        __device__ void put(float* p, float v) { p[0] = v; }
        __device__ float put_and_read(float* p) { put(p, 1.0f); return p[0]; }
        __device__ int count(int* c) { return atomicAdd(c, 1); }
        __device__ float sq_expr(float v) { return v; }
        __global__ void k(float* x, int* c) { x[0] = ping(3) + norm2(x[1], x[2]) + clamp_up(x[3]) + put_and_read(x)
                                                     + count(c) + sq_expr(x[4]); }
    """))
    u = parse_file(path).unit  # (the recursion is an error of the frontend, M1204, not of these queries)
    device = {f.name: f for f in u.device_functions}
    # recursion, assignments, stores and atomics are no expression; sq's plain name is taken
    assert expression_functions(device, unit_names(u)) == {"norm2": "norm2_expr", "sq_expr": "sq_expr_expr"}
    assert with_effects(device) == {"put", "put_and_read", "count"}


# -- device functions in loop conditions ----------------------------------------------------------
# TileLang runs a macro's statements, and binds its arguments, where the statement holding the call
# stands: in `while f(x):` that is once, before the loop, so the loop tested a stale value (wrong
# numbers, or a loop that never ends). C tests the condition before every iteration.

#: Helpers of several statements (next_hop, small, skip, rounds_left, lim) and one of an expression
#: (below) in the conditions of while and for loops: a per-element map (tile form) whose while loop
#: has a continue, and a smoothing (portable form) whose loop around barriers and per-thread loop
#: call them. Each loop has a second bound so that a condition tested once still ends.
LOOP_TESTS = """
    __device__ int next_hop(int c, int n) {
        int j = c * 3 + 1;
        if (j >= n) j = j % n;
        return j;
    }
    __device__ bool small(int k, float v) {
        float t = v * k;
        if (t < 0.0f) t = -t;
        return t < 12.0f;
    }
    __device__ int skip(int k) {
        int s = k + 1;
        if (s % 3 == 0) s += 1;
        return s;
    }
    __device__ bool below(int k, int m) { return k < m; }
    __device__ int lim(int m) {
        int r = m / 2;
        if (r > 9) r = 9;
        return r;
    }
    __device__ int rounds_left(int r, int total) {
        int left = total - r;
        if (left < 0) left = 0;
        return left;
    }
    __global__ void hops(const float* __restrict__ x, float* __restrict__ y, int* __restrict__ steps, int n) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        int c = i, guard = 0;
        float acc = 0.0f;
        while (next_hop(c, n) > i / 2 && guard < 12) {
            c = next_hop(c, n);
            guard++;
            if (x[c] < -2.0f) continue;
            acc += x[c];
        }
        const float v = x[i];
        int k = 0;
        for (; small(k, v) && k < 40; k = skip(k)) acc += 0.5f * k;
        int b = 0;
        while (below(b, guard + k % 5) && b < 30) b++;
        int m = 4 + i % 5, e = 0;
        for (int j = 0; j < lim(m); j++) { m--; e++; }
        y[i] = acc;
        steps[i] = guard * 100000 + k * 1000 + b * 10 + e;
    }
    __global__ void smooth(const float* __restrict__ x, float* __restrict__ y, int* __restrict__ steps,
                           int n, int total) {
        __shared__ float buf[64];
        const int t = threadIdx.x;
        const int i = blockIdx.x * blockDim.x + t;
        buf[t] = i < n ? x[i] : 0.0f;
        __syncthreads();
        int r = 0;
        for (; rounds_left(r, total) > 0 && r < 6; r++) {
            const float l = buf[(t + 63) % 64], rr = buf[(t + 1) % 64];
            __syncthreads();
            buf[t] = 0.25f * l + 0.5f * buf[t] + 0.25f * rr;
            __syncthreads();
        }
        int c = t, guard = 0;
        float acc = 0.0f;
        while (next_hop(c, 64) > t / 2 && guard < 12) {
            c = next_hop(c, 64);
            acc += buf[c];
            guard++;
        }
        if (i < n) {
            y[i] = buf[t] + acc;
            steps[i] = guard + 100 * r;
        }
    }
"""

#: 100 elements in [-4, 4] (about a quarter below -2: the continue); total = 3 rounds (6 if the
#: condition were tested once).
LOOP_TESTS_SPEC = "".join(f"""
    [[kernel]]
    name = "{name}"
    grid = [2, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 100
    role = "in"
    range = [-4.0, 4.0]
    [[kernel.args]]
    name = "y"
    buffer = "float32"
    elements = 100
    role = "out"
    [[kernel.args]]
    name = "steps"
    buffer = "int32"
    elements = 100
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 100
""" + extra for name, extra in (("hops", ""), ("smooth", """
    [[kernel.args]]
    name = "total"
    scalar = "int32"
    value = 3
"""))) + "\n"


def test_device_functions_in_loop_conditions_are_called_at_every_test(tmp_path):
    # the macros' statements ran once, before the loops, which then ran to their second bounds:
    # hops computed other sums and counts for 98 of 100 elements, smooth ran 6 rounds instead of 3
    kernels, text = convert(tmp_path, LOOP_TESTS, "--check", "cpu", spec=LOOP_TESTS_SPEC)
    for name, form in (("hops", "tile"), ("smooth", "tile")):  # smooth: tiled loops (analysis.lift.tile_loops)
        k = kernels[name]
        assert k["form"] == form and k["check"]["status"] == "pass", (name, k["check"])
    # several statements: a flag set before the loop, at the end of each iteration and before a continue
    assert text.count("x_test = next_hop(c, n) > i // 2 and guard < 12") == 3 * 2  # the two tiles' loops
    assert "x_test = small(k, v) and k < 40" in text
    # one expression: its plain function, in the condition
    assert "while below_expr(b, guard + T.truncmod(k, 5)) and b < 30:" in text
    # a counted loop whose bound calls a macro keeps the while form
    assert "x_test = j < lim(m)" in text and "T.serial(lim(" not in text
    # around barriers, at the kernel's level
    assert "            x_test = rounds_left(r, total) > 0 and r < 6  # L" in text
    module = load(tmp_path / "out" / "k.py")
    for sig in (module.HOPS, module.SMOOTH):
        assert "__global__" in lower_sm90(sig, (2, 1, 1), (64, 1, 1))


#: Helpers that read memory, called in a branch of ?:, which C evaluates only where the condition
#: holds: a clamped load, and a clamp of a value its caller loads.
GUARDED_READS = """
    __device__ float clamp_load(const float* p, int i) {
        float v = p[i];
        if (v < 0.0f) v = 0.0f;
        return v;
    }
    __device__ float clamp_one(float v) {
        float r = v;
        if (r > 1.0f) r = 1.0f;
        return r;
    }
    __device__ float at(const float* p, int i) { return p[i]; }
    __global__ void guarded_load(const float* __restrict__ w, float* __restrict__ out, int n, int m) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = i < m ? clamp_load(w, i) : -1.0f;
    }
    __global__ void guarded_arg(const float* __restrict__ w, float* __restrict__ out, int n, int m) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = i < m ? clamp_one(w[i]) : -1.0f;
    }
    __global__ void guarded_call(const float* __restrict__ w, float* __restrict__ out, int n, int m) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = i < m ? clamp_one(at(w, i) * 0.5f) : -1.0f;
    }
    __global__ void guarded_expr(const float* __restrict__ w, float* __restrict__ out, int n, int m) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = i < m ? at(w, i) : clamp_one(0.5f * i);
    }
"""

#: 200 elements; w holds only 150.
GUARDED_READS_SPEC = """
    [[kernel]]
    name = "guarded_expr"
    grid = [2, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "w"
    buffer = "float32"
    elements = 150
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 200
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 200
    [[kernel.args]]
    name = "m"
    scalar = "int32"
    value = 150
"""


def test_a_macro_that_reads_memory_in_a_branch_of_a_conditional_is_refused(tmp_path):
    # the macro's load (or its argument's) ran before T.if_then_else chose, for i >= m too:
    # past the end of w
    kernels, text = convert(tmp_path, GUARDED_READS, "--check", "cpu", spec=GUARDED_READS_SPEC)
    load_, arg, call = kernels["guarded_load"], kernels["guarded_arg"], kernels["guarded_call"]
    assert load_["form"] in ("hybrid", "unsupported") and "'clamp_load' called in a branch of '?:'" in load_["reason"] \
        and "it reads memory" in load_["reason"], load_["reason"]
    for k in (arg, call):
        assert k["form"] in ("hybrid", "unsupported") and "'clamp_one' called in a branch of '?:'" in k["reason"] \
            and "its arguments read memory" in k["reason"], k["reason"]
    assert [d["code"] for d in load_["diagnostics"] if d["code"] not in ("M3008", "M3009")] == ["M3001"]
    # a load in a plain function's expression, and a macro of values alone, are still printed
    expr = kernels["guarded_expr"]
    assert expr["form"] == "tile" and expr["check"]["status"] == "pass", expr["check"]
    assert "T.if_then_else(i < m, at_expr(w, i), clamp_one(0.5 * T.Cast(T.float32, i)))" in text


# -- views into a buffer passed to device functions -----------------------------------------------
# A macro's pointer parameter is a whole TileLang buffer: a local pointer into a buffer (row = rows +
# gid * W) passed to one was printed by its name, which the folding of the pointer into the buffer's
# index had removed (NameError: name 'row' is not defined; pool: diamond maskSequences).

#: Per row of W bytes: its mean, and bytes above it looked up in a table, through device functions
#: given the row's pointer, with a local array beside it (mask_rows); the means of parts of the row,
#: given a pointer past its start and the address of an element, and a device function that passes
#: one on (part_means).
VIEW_ARGS = """
    #define W 6
    __device__ float row_mean(const unsigned char* r, int n) {
        float s = 0.0f;
        for (int i = 0; i < n; i++) s += r[i];
        return s / n;
    }
    __device__ float head_mean(const unsigned char* r, int at) { return row_mean(r + at + 1, 2) * 0.5f; }
    __device__ void relabel(unsigned char* r, const float* level, int n, const unsigned char* table) {
        for (int i = 0; i < n; i++)
            if (level[i] >= 0.5f) r[i] = table[r[i]];
    }
    __global__ void mask_rows(unsigned char* rows, const unsigned char* __restrict__ table,
                              float* __restrict__ means, int count) {
        const int gid = blockIdx.x * blockDim.x + threadIdx.x;
        if (gid >= count) return;
        unsigned char* row = rows + gid * W;
        float level[W];
        const float mean = row_mean(row, W);
        for (int i = 0; i < W; i++) level[i] = row[i] > mean ? 1.0f : 0.0f;
        means[gid] = mean;
        relabel(row, level, W, table);
    }
    __global__ void part_means(const unsigned char* __restrict__ rows, float* __restrict__ means, int count) {
        const int gid = blockIdx.x * blockDim.x + threadIdx.x;
        if (gid < count)
            means[gid] = row_mean(rows + gid * W + 2, 3) - row_mean(&rows[gid * W + 1], 2) + head_mean(rows, gid * W);
    }
"""

VIEW_ARGS_SPEC = """
    [[kernel]]
    name = "mask_rows"
    grid = [2, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "rows"
    buffer = "uint8"
    elements = 600
    role = "inout"
    range = [0, 255]
    [[kernel.args]]
    name = "table"
    buffer = "uint8"
    elements = 256
    role = "in"
    range = [0, 255]
    [[kernel.args]]
    name = "means"
    buffer = "float32"
    elements = 100
    role = "out"
    [[kernel.args]]
    name = "count"
    scalar = "int32"
    value = 100

    [[kernel]]
    name = "part_means"
    grid = [2, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "rows"
    buffer = "uint8"
    elements = 600
    role = "in"
    range = [0, 255]
    [[kernel.args]]
    name = "means"
    buffer = "float32"
    elements = 100
    role = "out"
    [[kernel.args]]
    name = "count"
    scalar = "int32"
    value = 100
"""


@pytest.mark.parametrize("flags", [(), ("--no-lift",)], ids=["default", "portable"])
def test_views_into_a_buffer_passed_to_device_functions(tmp_path, flags):
    # mask_rows did not build (NameError: name 'row' is not defined); part_means was refused
    # ("operator '&' used as a value")
    kernels, text = convert(tmp_path, VIEW_ARGS, "--check", "cpu", *flags, spec=VIEW_ARGS_SPEC)
    for name in ("mask_rows", "part_means"):
        k = kernels[name]
        assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (name, k["reason"], k["check"])
    # the functions given a view are inlined, the view folded into the buffer's index
    assert "rows[gid * 6 + 2 + " in text and "rows[gid * 6 + 1 + " in text and "rows[gid * 6 + " in text
    assert "row_mean(" not in text.split("def make_mask_rows")[1] and "row[" not in text
    # a macro passing a view on: the function inlined into it
    head = text.split("def head_mean(")[1].split("\n\n")[0]
    assert "r[at + 1 + " in head and "row_mean(" not in head
    module = load(tmp_path / "out" / "k.py")
    for sig in (module.MASK_ROWS, module.PART_MEANS):
        assert "__global__" in lower_sm90(sig, (2, 1, 1), (64, 1, 1))


#: A do-while whose condition calls a device function of several statements, and an endless loop
#: that ends at a break a device function decides: both loops run on a flag (TileLang refuses
#: ``while True``), and the calls run at every test (the do-while's after each body).
DO_WHILE_CALLS = """
    __device__ int halve_or_stop(int v, int floor) {
        int h = v / 2;
        if (h < floor) h = 0;
        return h;
    }
    __global__ void halvings(const int* __restrict__ x, int* __restrict__ y, int n) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            int v = x[i], c = 0;
            do { c++; v = v - 1; } while (halve_or_stop(v, 3) > 2);
            int w = x[i] + 7, d = 0;
            for (;;) {
                w = halve_or_stop(w, 2);
                if (w == 0) break;
                d++;
            }
            y[i] = 100 * c + d;
        }
    }
"""


def test_a_do_while_or_endless_loop_whose_condition_calls_a_device_function_runs_it_at_every_test(tmp_path):
    kernels, text = convert(tmp_path, DO_WHILE_CALLS, "--check", "cpu", spec="""
        [[kernel]]
        name = "halvings"
        grid = [2, 1, 1]
        block = [64, 1, 1]
        tolerance = "exact"
        [[kernel.args]]
        name = "x"
        buffer = "int32"
        elements = 100
        role = "in"
        range = [1, 60]
        [[kernel.args]]
        name = "y"
        buffer = "int32"
        elements = 100
        role = "out"
        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = 100
    """)
    k = kernels["halvings"]
    assert k["check"]["status"] == "pass", k["check"]
    assert "while True" not in text and "x_loop = halve_or_stop(v, 3) > 2" in text
    assert "__global__" in lower_sm90(load(tmp_path / "out" / "k.py").HALVINGS, (2, 1, 1), (64, 1, 1))


# -- a template device function's type parameter in its body ---------------------------------------
# `template <class T> f(const T* in, ...)` declares a local `T acc`: the macro is called with the
# kernel's buffers, and reads T off its argument (`T_ = in_.dtype`); T_ was unbound before
# ("NameError: name 'T_' is not defined", a real program's warp scan)

WINDOW = """
    template <class T>
    __device__ void window_sum(const T* in, T* out, int i, int n) {
        T acc = 0;
        for (int k = i; k < n && k < i + 4; ++k) acc += in[k];
        out[i] = acc;
    }
    __global__ void windows(const float* __restrict__ x, float* __restrict__ y,
                            const int* __restrict__ u, int* __restrict__ v, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            window_sum(x, y, i, n);
            window_sum(u, v, i, n);
        }
    }
"""


def test_a_template_device_function_reads_its_type_parameter_off_its_argument(tmp_path):
    kernels, text = convert(tmp_path, WINDOW, "--check", "cpu", spec="""
        [[kernel]]
        name = "windows"
        grid = [2, 1, 1]
        block = [128, 1, 1]
        tolerance = "fp32"
        [[kernel.args]]
        name = "x"
        buffer = "float32"
        elements = 200
        role = "in"
        range = [-2.0, 2.0]
        [[kernel.args]]
        name = "y"
        buffer = "float32"
        elements = 200
        role = "out"
        [[kernel.args]]
        name = "u"
        buffer = "int32"
        elements = 200
        role = "in"
        range = [-1000, 1000]
        [[kernel.args]]
        name = "v"
        buffer = "int32"
        elements = 200
        role = "out"
        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = 200
    """)
    assert kernels["windows"]["check"]["status"] == "pass", kernels["windows"]["check"]
    assert "T_ = in_.dtype" in text
    lower_sm90(load(tmp_path / "out" / "k.py").WINDOWS, (2, 1, 1), (128, 1, 1))  # builds for the GPU too


def test_a_shared_array_declared_in_a_device_function_is_the_blocks_not_made_local(tmp_path):
    """``static __shared__ T shared[32];`` inside a templated block reduction (as real programs'
    reduce.h write it) was emitted as a thread-local array: each thread summed only its own warp.
    The function is inlined, so the array is the kernel's (one per block); since the twelfth
    session its second level, run by every warp with thread 0 alone reading the total, lifts to
    one ``T.reduce`` over the block's lanes (tests/analysis/lift/test_every_warp.py), and the sums
    are checked equal on the CPU."""
    import json

    from migrate.cli import main
    src = tmp_path / "blk.cu"
    src.write_text(textwrap.dedent("""
        #include <cuda_runtime.h>
        template <typename T>
        __inline__ __device__ T warpSum(T v) {
            for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffff, v, m, 32);
            return v;
        }
        template <typename T>
        __inline__ __device__ T blockSum(T v) {
            static __shared__ T shared[32];
            int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
            v = warpSum<T>(v);
            if (lane == 0) shared[wid] = v;
            __syncthreads();
            v = (threadIdx.x < blockDim.x / 32) ? shared[lane] : (T)0;
            return warpSum<T>(v);
        }
        __global__ void rowsum(const float* x, float* y, int n) {
            float acc = 0.0f;
            for (int i = threadIdx.x; i < n; i += blockDim.x) acc += x[blockIdx.x * n + i];
            acc = blockSum<float>(acc);
            if (threadIdx.x == 0) y[blockIdx.x] = acc;
        }
    """))
    src.with_suffix(".toml").write_text("\n".join([
        '[[kernel]]', 'name = "rowsum"', 'grid = [3, 1, 1]', 'block = [128, 1, 1]', 'tolerance = "fp32_accum"',
        '[[kernel.args]]', 'name = "x"', 'buffer = "float32"', 'elements = 600', 'role = "in"', 'range = [-1.0, 1.0]',
        '[[kernel.args]]', 'name = "y"', 'buffer = "float32"', 'elements = 3', 'role = "out"',
        '[[kernel.args]]', 'name = "n"', 'scalar = "int32"', 'value = 200', '']))
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu"])
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["form"], k["reason"], k["check"]["message"])
    text = (out / "blk.py").read_text()
    assert "T.reduce_sum(" in text and "T.alloc_local((32,)" not in text


#: a hash whose parameter is stepped in straight-line code, compared right of && (the way graph
#: colouring breaks ties between neighbours of equal degree)
TIES = """
    __device__ unsigned int mix(unsigned int val) {
        val = ((val >> 16) ^ val) * 0x45d9f3b;
        val ^= val >> 7;
        unsigned int hi = val >> 16;
        val = (hi ^ val) * 0x45d9f3b;
        return (val >> 16) ^ val;
    }
    __global__ void ties(const int* __restrict__ deg, const int* __restrict__ nbr, int* __restrict__ wins, int n) {
        const int v = blockIdx.x * blockDim.x + threadIdx.x;
        if (v >= n) return;
        const int u = nbr[v];
        wins[v] = (deg[v] > deg[u]) || ((deg[v] == deg[u]) && (mix(v) < mix(u))) ? 1 : 0;
    }
"""

TIES_SPEC = """
    [[kernel]]
    name = "ties"
    grid = [2, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "deg"
    buffer = "int32"
    elements = 250
    role = "in"
    range = [1, 3]
    [[kernel.args]]
    name = "nbr"
    buffer = "int32"
    elements = 250
    role = "in"
    range = [0, 249]
    [[kernel.args]]
    name = "wins"
    buffer = "int32"
    elements = 250
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 250
"""


def test_a_helper_assigning_its_values_in_straight_line_is_an_expression_where_c_may_not_call_it(tmp_path):
    kernels, text = convert(tmp_path, TIES, "--check", "cpu", spec=TIES_SPEC)
    k = kernels["ties"]
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"])
    plain = text.split("def mix_expr(")[1].split("\n\n")[0]
    assert "T.alloc_var" not in plain and "val_3 = " in plain  # each value a name of its own
