"""The statement printer (emit.printer): counted loops whose range differs between the threads of
the T.Parallel loop around them; loops TileLang would take for infinite ones (``do {} while``,
``for (;;)``, ``while (1)``) run on a flag, in every form, with the CUDA's results."""
from __future__ import annotations

import pytest

from tests.analysis.lift.support import convert, load
from tests.lowering import lower_sm90

# -- counted loops with a per-thread range around another loop ------------------------------------
# TileLang binds a counted loop's range when it meets the T.Parallel loop around it and again once
# that loop is mapped onto the threads; a range that reads the thread then differs, and a loop
# nested inside failed CUDA lowering ("Trying to update var 'dy' with a different minimum value").

#: A blur whose radius each pixel reads (portable: a shared tile read at a loaded offset), its window
#: loops nested, and a device function (a macro) looping over a window its caller computes.
RADIUS_BLUR = """
    __device__ float window_sum(const float* a, int w, int y0, int y1, int x0, int x1) {
        float acc = 0.0f;
        for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x)
                acc += a[y * w + x];
        return acc;
    }
    __global__ void radius_blur(const float* __restrict__ img, const int* __restrict__ rad,
                                float* __restrict__ out, float* __restrict__ area, int w, int h) {
        __shared__ float tile[16 * 16];
        const int x = blockIdx.x * blockDim.x + threadIdx.x;
        const int y = blockIdx.y * blockDim.y + threadIdx.y;
        const int t = threadIdx.y * blockDim.x + threadIdx.x;
        if (x < w && y < h) tile[t] = img[y * w + x];
        __syncthreads();
        if (x < w && y < h) {
            const int r = rad[y * w + x];
            float acc = 0.0f;
            int cnt = 0;
            for (int dy = -r; dy <= r; dy++)
                for (int dx = -r; dx <= r; dx++) {
                    const int yy = y + dy, xx = x + dx;
                    const int sy = (int)threadIdx.y + dy, sx = (int)threadIdx.x + dx;
                    if (yy >= 0 && yy < h && xx >= 0 && xx < w) {
                        if (sy >= 0 && sy < (int)blockDim.y && sx >= 0 && sx < (int)blockDim.x)
                            acc += tile[sy * blockDim.x + sx];
                        else
                            acc += img[yy * w + xx];
                        cnt++;
                    }
                }
            out[y * w + x] = acc / cnt;
            area[y * w + x] = window_sum(img, w, max(y - r, 0), min(y + r + 1, h), max(x - r, 0), min(x + r + 1, w));
        }
    }
"""

RADIUS_BLUR_SPEC = """
    [[kernel]]
    name = "radius_blur"
    grid = [3, 2, 1]
    block = [16, 16, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "img"
    buffer = "float32"
    elements = 1200
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "rad"
    buffer = "int32"
    elements = 1200
    role = "in"
    range = [0, 3]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 1200
    role = "out"
    [[kernel.args]]
    name = "area"
    buffer = "float32"
    elements = 1200
    role = "out"
    [[kernel.args]]
    name = "w"
    scalar = "int32"
    value = 40
    [[kernel.args]]
    name = "h"
    scalar = "int32"
    value = 30
"""


#: The same blur with its tile's rows 16 wide whatever the block: the shared cache is not forwarded
#: (lift.forward_shared takes rows blockDim.x wide), so the kernel stays portable.
RADIUS_BLUR_FIXED_ROWS = RADIUS_BLUR.replace("const int t = threadIdx.y * blockDim.x + threadIdx.x;",
                                             "const int t = threadIdx.y * 16 + threadIdx.x;")


@pytest.mark.parametrize("source, form", [(RADIUS_BLUR_FIXED_ROWS, "portable"), (RADIUS_BLUR, "tile")])
def test_portable_loops_nested_in_a_per_thread_range_lower_for_cuda(tmp_path, source, form):
    """Portable with a tile of fixed rows; lifted (the cache forwarded into the map, its window
    loops per element) where the rows are the block's."""
    assert source.count("threadIdx.y * 16 + threadIdx.x") == (form == "portable")
    kernels, _ = convert(tmp_path, source, "--check", "cpu", spec=RADIUS_BLUR_SPEC)
    k = kernels["radius_blur"]
    assert k["form"] == form and k["check"]["status"] == "pass", k["check"]
    src = lower_sm90(load(tmp_path / "out" / "k.py").RADIUS_BLUR, (3, 2, 1), (16, 16, 1))
    assert "__global__" in src


#: Each input position sums the gradients of the strided windows that cover it (a map whose window
#: bounds divide by size parameters: compiled in as constants on GPUs, where they are values).
POOL_GRAD = """
    __global__ void pool_grad(const float* __restrict__ dy, float* __restrict__ dx, int n, int len, int k,
                              int stride, int outs, int groups) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            const int x = i % len;
            const int row = i / len;
            const int first = x < k ? 0 : (x - k) / stride + 1;
            const int last = min(x / stride + 1, outs);
            float g = 0.0f;
            for (int p = first; p < last; ++p)
                for (int s = 0; s < groups; ++s)
                    g += dy[(row * groups + s) * outs + p];
            dx[i] = g;
        }
    }
"""

#: 5 rows of 37 positions, windows of 4 every 3 (12 per row), 2 groups.
POOL_GRAD_SPEC = """
    [[kernel]]
    name = "pool_grad"
    grid = [1, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "dy"
    buffer = "float32"
    elements = 120
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "dx"
    buffer = "float32"
    elements = 185
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 185
    [[kernel.args]]
    name = "len"
    scalar = "int32"
    value = 37
    [[kernel.args]]
    name = "k"
    scalar = "int32"
    value = 4
    [[kernel.args]]
    name = "stride"
    scalar = "int32"
    value = 3
    [[kernel.args]]
    name = "outs"
    scalar = "int32"
    value = 12
    [[kernel.args]]
    name = "groups"
    scalar = "int32"
    value = 2
"""


def test_tile_loops_nested_in_a_per_element_range_lower_for_cuda_at_constant_sizes(tmp_path):
    kernels, _ = convert(tmp_path, POOL_GRAD, "--check", "cpu", spec=POOL_GRAD_SPEC)
    k = kernels["pool_grad"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    sig = load(tmp_path / "out" / "k.py").POOL_GRAD
    assert sig.specialize == ("len_", "k", "stride", "outs", "groups")
    sizes = {"len_": 37, "k": 4, "stride": 3, "outs": 12, "groups": 2}
    assert "__global__" in lower_sm90(sig, (2, 1, 1), (128, 1, 1), sizes)
    assert "__global__" in lower_sm90(sig, (2, 1, 1), (128, 1, 1))


#: A do-while inside a do-while (each thread's trip counts differ), and endless loops that end
#: at a break, the three ways CUDA code writes them.
LOOPS = """
    __global__ void digit_runs(const int* __restrict__ x, int* __restrict__ y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            int v = x[i], c = 0;
            do {
                int w = v;
                do { c++; w /= 10; } while (w != 0);
                v /= 3;
            } while (v != 0);
            y[i] = c;
        }
    }
    __global__ void steps(const int* __restrict__ x, int* __restrict__ y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            int v = x[i], s = 0;
            for (;;) {
                if (v <= 1) break;
                v = (v & 1) ? 3 * v + 1 : v / 2;
                s++;
            }
            while (true) { if (s < 40) break; s -= 40; }
            while (1) { s += 1; if (s % 7 == 0) break; }
            y[i] = s;
        }
    }
"""


def _int_kernel(name: str, lo: int, hi: int) -> str:
    return f"""
    [[kernel]]
    name = "{name}"
    grid = [4, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "x"
    buffer = "int32"
    elements = 500
    role = "in"
    range = [{lo}, {hi}]
    [[kernel.args]]
    name = "y"
    buffer = "int32"
    elements = 500
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 500
"""


LOOPS_SPEC = _int_kernel("digit_runs", -100000, 100000) + _int_kernel("steps", 1, 3000)


@pytest.mark.parametrize("flags", [(), ("--no-lift",)])
def test_do_while_and_endless_loops_run_on_a_flag_and_pass_their_check(tmp_path, flags):
    """They were printed as ``while True:``, which TileLang refuses ("Infinite while loop
    detected"): no such kernel built."""
    kernels, text = convert(tmp_path, LOOPS, "--check", "cpu", *flags, spec=LOOPS_SPEC)
    assert "while True" not in text
    assert "x_loop1 = w != 0" in text  # the inner do-while's own flag
    for name in ("digit_runs", "steps"):
        k = kernels[name]
        assert k["form"] == ("portable" if flags else "tile"), k["reason"]
        assert k["check"]["status"] == "pass", k["check"]["message"]


#: A do-while around barriers, steered by a shared flag every thread reads: a loop of the
#: portable form's uniform regions (each block's running maximum, settled round by round).
SETTLE = """
    __global__ void settle(const float* __restrict__ x, float* __restrict__ y) {
        __shared__ float s[128];
        __shared__ int changed;
        int t = threadIdx.x;
        s[t] = x[blockIdx.x * blockDim.x + t];
        do {
            __syncthreads();
            if (t == 0) changed = 0;
            float m = t > 0 ? fmaxf(s[t], s[t - 1]) : s[t];
            __syncthreads();
            if (m > s[t]) { s[t] = m; changed = 1; }
            __syncthreads();
        } while (changed);
        y[blockIdx.x * blockDim.x + t] = s[t];
    }
"""

SETTLE_SPEC = """
    [[kernel]]
    name = "settle"
    grid = [3, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 384
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "y"
    buffer = "float32"
    elements = 384
    role = "out"
"""


def test_a_do_while_around_barriers_loops_on_a_flag_in_the_portable_form(tmp_path):
    # --no-lift: the tiled loops would lift it (their own tests check that form)
    kernels, text = convert(tmp_path, SETTLE, "--check", "cpu", "--no-lift", spec=SETTLE_SPEC)
    k = kernels["settle"]
    assert k["form"] == "portable", k["reason"]
    assert "x_loop = changed[0] != 0" in text
    assert k["check"]["status"] == "pass", k["check"]["message"]


#: A do-while whose counter is updated between barriers: thread-level (simt) TileLang.
HALVE = """
    __global__ void halve_sum(const float* __restrict__ x, float* __restrict__ y) {
        __shared__ float s[256];
        int t = threadIdx.x;
        s[t] = x[blockIdx.x * blockDim.x + t];
        __syncthreads();
        int stride = blockDim.x / 2;
        do {
            if (t < stride) s[t] += s[t + stride];
            __syncthreads();
            stride /= 2;
        } while (stride > 0);
        if (t == 0) y[blockIdx.x] = s[0];
    }
"""


def test_a_do_while_of_the_simt_form_builds_for_the_gpu(tmp_path):
    kernels, _ = convert(tmp_path, HALVE)
    assert kernels["halve_sum"]["form"] == "simt", kernels["halve_sum"]["reason"]
    sig = load(tmp_path / "out" / "k.py").KERNELS["halve_sum"]
    cuda = lower_sm90(sig, (3, 1, 1), (256, 1, 1))
    assert "x_loop = ((signed char)(0 < stride));" in cuda


#: An endless loop around barriers that a uniform break ends: thread-level (a phase's break would
#: end the phase), its loop on a flag.
HALVE_UNTIL = """
    __global__ void halve_until(const float* __restrict__ x, float* __restrict__ y, float limit) {
        __shared__ float s[128];
        __shared__ int done;
        int t = threadIdx.x;
        s[t] = x[blockIdx.x * blockDim.x + t];
        __syncthreads();
        while (true) {
            if (t == 0) done = s[0] < limit;
            __syncthreads();
            if (done) break;
            s[t] = s[t] * 0.5f;
            __syncthreads();
        }
        y[blockIdx.x * blockDim.x + t] = s[t];
    }
"""


def test_an_endless_loop_around_barriers_ends_at_its_break_in_the_simt_form(tmp_path):
    kernels, text = convert(tmp_path, HALVE_UNTIL)
    k = kernels["halve_until"]
    assert k["form"] == "simt" and "'break' in a loop around barriers" in k["reason"], k["reason"]
    cuda = lower_sm90(load(tmp_path / "out" / "k.py").KERNELS["halve_until"], (3, 1, 1), (128, 1, 1))
    loop = cuda[cuda.index("while (1)"):]
    assert "__syncthreads();" in loop and "if (done[0] != 0) {\n      break;" in loop


# -- float roundings TVM's simplifier would fold ---------------------------------------------------
# TVM rewrites (a + b) - a to b in every dtype; CUDA programs add and subtract a large value on
# purpose to round to a grid (reproducible sums), which the folding silently undid (a real program's
# replayed check failed: expected 0, got the unrounded sum)

ROUNDINGS = """
    __device__ float snap(float grid, float x) { return (grid + x) - grid; }
    __global__ void rounded(const float* __restrict__ x, float* __restrict__ out, double* __restrict__ d,
                            float grid, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            out[i] = snap(grid, x[i]) + ((x[i] + 12582912.0f) - 12582912.0f);
            double v = (double)x[i] * 1e-9;
            d[i] = v - (v - 1e16) - 1e16;
        }
    }
"""


def test_roundings_by_adding_and_subtracting_a_value_survive_the_simplifier(tmp_path):
    kernels, text = convert(tmp_path, ROUNDINGS, "--check", "cpu", spec="""
        [[kernel]]
        name = "rounded"
        grid = [2, 1, 1]
        block = [64, 1, 1]
        tolerance = "exact"
        [[kernel.args]]
        name = "x"
        buffer = "float32"
        elements = 100
        role = "in"
        range = [-1000.0, 1000.0]
        [[kernel.args]]
        name = "out"
        buffer = "float32"
        elements = 100
        role = "out"
        [[kernel.args]]
        name = "d"
        buffer = "float64"
        elements = 100
        role = "out"
        [[kernel.args]]
        name = "grid"
        scalar = "float32"
        value = 1048576.0
        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = 100
    """)
    k = kernels["rounded"]
    assert k["check"]["status"] == "pass", k["check"]
    assert "return cuda_math.fadd_rn(grid, x) - grid" in text
    assert "cuda_math.fadd_rn(x[i], T.float32(12582912.0)) - T.float32(12582912.0)" in text or \
        "cuda_math.fadd_rn(x[i], 12582912.0) - 12582912.0" in text
    assert "d[i] = cuda_math.dsub_rn(v, v - 1e+16) - T.float64(1e+16)" in text
    cuda = lower_sm90(load(tmp_path / "out" / "k.py").ROUNDED, (2, 1, 1), (64, 1, 1))
    assert "__fadd_rn" in cuda and "__dsub_rn" in cuda


# -- integer literals that do not fit int32 ---------------------------------------------------------
# a Python int beside a typed expression takes its dtype in TVM, but one past int32 becomes int64
# and the product no longer wraps at 32 bits (found by bench/fuzz.py: a multiplicative hash)

HASHES = """
    __global__ void umul(const unsigned* __restrict__ u, int* __restrict__ z, unsigned* __restrict__ w,
                         long long* __restrict__ q, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            z[i] = (int)((u[i] * 2654435761u) >> 20);
            w[i] = (u[i] + 3000000000u) ^ (u[i] * 2246822519u);
            q[i] = u[i] * 2654435761;  // a long literal: the product is 64-bit in C too
        }
    }
"""


def test_unsigned_literals_past_int32_keep_their_type_and_wrap(tmp_path):
    kernels, text = convert(tmp_path, HASHES, "--check", "cpu", spec="""
        [[kernel]]
        name = "umul"
        grid = [4, 1, 1]
        block = [128, 1, 1]
        tolerance = "exact"
        [[kernel.args]]
        name = "u"
        buffer = "uint32"
        elements = 500
        role = "in"
        range = [0, 4000000000]
        [[kernel.args]]
        name = "z"
        buffer = "int32"
        elements = 500
        role = "out"
        [[kernel.args]]
        name = "w"
        buffer = "uint32"
        elements = 500
        role = "out"
        [[kernel.args]]
        name = "q"
        buffer = "int64"
        elements = 500
        role = "out"
        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = 500
    """)
    assert kernels["umul"]["check"]["status"] == "pass", kernels["umul"]["check"]
    assert "u[i] * T.uint32(2654435761)" in text


# -- a template's bool value as a ?: condition --------------------------------------------------------
# the factory receives `weighted` as a Python value, which TVM's if_then_else took as an integer
# ("if_then_else only accept the condition to be boolean type"; a real program's kernel did not run)

PICK = """
    template <bool weighted, typename T>
    __global__ void pick(const T* __restrict__ v, T* __restrict__ out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = (weighted ? v[i] : (T)1.0) * (T)2.0 + (n > 3 ? (T)0.5 : (T)0.25);
    }
    void run(const float* v, float* o, int n) {
        pick<true, float><<<(n + 127) / 128, 128>>>(v, o, n);
        pick<false, float><<<(n + 127) / 128, 128>>>(v, o, n);
    }
"""


def test_a_template_bool_chooses_in_a_ternary(tmp_path):
    instance = """
        [[kernel]]
        name = "pick"
        id = "pick_{w}"
        template = ["{w}", "float"]
        grid = [4, 1, 1]
        block = [128, 1, 1]
        tolerance = "exact"
        [[kernel.args]]
        name = "v"
        buffer = "float32"
        elements = 500
        role = "in"
        range = [-2.0, 2.0]
        [[kernel.args]]
        name = "out"
        buffer = "float32"
        elements = 500
        role = "out"
        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = 500
    """
    kernels, text = convert(tmp_path, PICK, "--check", "cpu",
                            spec=instance.format(w="true") + instance.format(w="false"))
    check = kernels["pick"]["check"]
    assert check["status"] == "pass" and "pick_true: pass; pick_false: pass" in check["message"], check
    assert "T.if_then_else(T.bool(weighted), v[i]" in text


# -- an unsigned index minus a constant ------------------------------------------------------------
# TileLang's vectoriser evaluates an index at thread 0, and TVM refuses to fold an unsigned `0 - k`
# ("Minuend's value is 0U ... will cause a negative uint"): a stencil on unsigned coordinates did
# not compile (a real program's 3-D stencil)

STENCIL = """
    __device__ int at(int i) { return i; }
    __global__ void ustencil(const float* __restrict__ in, float* __restrict__ out, unsigned long long* __restrict__ w,
                             int n) {
        unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
        unsigned long long y = x;
        if (2 <= x && x < n - 2) {
            out[x] = in[x - 1] + 2.0f * in[x + 1] - in[at(x - 2)];  // (int)(x - 2): the signed bits
            w[x] = (y - 3) * 7;  // wraps below 3: 64-bit
        }
    }
"""


def test_an_unsigned_index_minus_a_constant_compiles_and_wraps(tmp_path):
    kernels, text = convert(tmp_path, STENCIL, "--check", "cpu", spec="""
        [[kernel]]
        name = "ustencil"
        grid = [4, 1, 1]
        block = [64, 1, 1]
        tolerance = "exact"
        [[kernel.args]]
        name = "in"
        buffer = "float32"
        elements = 250
        role = "in"
        range = [-4.0, 4.0]
        [[kernel.args]]
        name = "out"
        buffer = "float32"
        elements = 250
        role = "inout"  # the ends are not written
        range = [-1.0, 1.0]
        [[kernel.args]]
        name = "w"
        buffer = "uint64"
        elements = 250
        role = "inout"
        range = [0, 1000]
        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = 250
    """)
    assert kernels["ustencil"]["check"]["status"] == "pass", kernels["ustencil"]["check"]
    assert "x + T.uint32(2**32 - 1)" in text and "y + T.uint64(2**64 - 3)" in text
    assert "at(T.Cast(T.int32, x) - 2)" in text


# -- a long else-if chain --------------------------------------------------------------------------
# TileLang's front end nests every `elif` two Python blocks deeper and Python allows 20: a real
# program's 13-way binning of segment sizes did not compile ("too many statically nested blocks")

BINS = """
    __global__ void bin13(int* __restrict__ v, int* __restrict__ bin, int* __restrict__ histo, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            int s = v[i];
            int b;
            if (s <= 1) { b = 0; s = 5000; }  // changes s: the later tests must not run again on it
            else if (s <= 2) b = 1;
            else if (s <= 4) b = 2;
            else if (s <= 8) b = 3;
            else if (s <= 16) b = 4;
            else if (s <= 32) b = 5;
            else if (s <= 64) b = 6;
            else if (s <= 128) b = 7;
            else if (s <= 256) b = 8;
            else if (s <= 512) b = 9;
            else if (s <= 1024) b = 10;
            else if (s <= 2048) b = 11;
            else b = 12;
            bin[i] = b;
            v[i] = s;
            atomicAdd(&histo[b], 1);
        }
    }
"""


def test_a_long_else_if_chain_is_written_flat_and_keeps_its_order(tmp_path):
    kernels, text = convert(tmp_path, BINS, "--check", "cpu", spec="""
        [[kernel]]
        name = "bin13"
        grid = [4, 1, 1]
        block = [128, 1, 1]
        tolerance = "exact"
        [[kernel.args]]
        name = "v"
        buffer = "int32"
        elements = 500
        role = "inout"
        range = [-5, 5000]
        [[kernel.args]]
        name = "bin"
        buffer = "int32"
        elements = 500
        role = "out"
        [[kernel.args]]
        name = "histo"
        buffer = "int32"
        elements = 13
        role = "inout"
        range = [0, 3]
        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = 500
    """)
    assert kernels["bin13"]["check"]["status"] == "pass", kernels["bin13"]["check"]
    assert "if not x_taken:" in text and "elif" not in text


# -- a dereference of pointer arithmetic -------------------------------------------------------------
# `*(in + i*size + idx)` is `in[i*size + idx]` (an erasure-coding program's 20 kernels were
# refused: "operator '*' used as a value has no TileLang form")

DEREF = """
    __global__ void deref_sum(const float* __restrict__ in, float* __restrict__ out, int size, int n) {
        int idx = blockIdx.x * blockDim.x + threadIdx.x;
        if (idx < size) {
            float s = 0.0f;
            for (int i = 0; i < n; i++) s += *(in + i * size + idx);
            *(out + idx) = s;
            *(idx + out + size) = -*(in + idx) + 1.0f;
        }
    }
"""


def test_a_dereference_of_a_buffer_plus_an_offset_is_an_index(tmp_path):
    kernels, text = convert(tmp_path, DEREF, "--check", "cpu", spec="""
        [[kernel]]
        name = "deref_sum"
        grid = [3, 1, 1]
        block = [128, 1, 1]
        tolerance = "fp32"
        [[kernel.args]]
        name = "in"
        buffer = "float32"
        elements = 1500
        role = "in"
        range = [-2.0, 2.0]
        [[kernel.args]]
        name = "out"
        buffer = "float32"
        elements = 600
        role = "out"
        [[kernel.args]]
        name = "size"
        scalar = "int32"
        value = 300
        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = 5
    """)
    k = kernels["deref_sum"]
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["form"], k["check"])
    assert "s = s + in_[i, idx]" in text and "out[1, idx] = -in_[0, idx] + 1.0" in text  # rows of `size`
