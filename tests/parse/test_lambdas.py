"""Lambdas defined in device code (parse.lambdas): each a device function of the unit whose
captures are reference parameters, inlined at its calls. Written as the pool writes them
(ans's ``auto load_next = [&]() {...}`` reading and stepping the enclosing locals through a
captured pointer, ``auto sync = [&](uint32_t i) {...}`` setting a flag), with by-value captures
that must keep the value they had where the lambda was written. Checked equal on the CPU."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNELS = """
__device__ float twice(float v) { return 2.0f * v; }

__global__ void captures(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    int steps = 0;
    float scale = 1.5f;
    auto add = [&](float v) {          // by reference: acc and steps change in the kernel
        acc += v * scale;
        ++steps;
    };
    auto weighted = [=](float v) -> float { return v * scale + (float)i; };   // by value
    auto counter = [scale]() mutable { scale += 1.0f; return scale; };        // its own copy, kept between calls
    auto sq = [](float v) { return v * v; };                                  // no captures
    scale = 3.0f;                      // weighted and counter keep 1.5; add sees 3
    add(in[i]);
    add(twice(in[i]));
    float c1 = counter();
    float c2 = counter();
    out[i] = acc + weighted(in[i]) + (float)steps + sq(in[(i + 1) % n]) + c1 * 10.0f + c2 * 100.0f + scale;
}

__global__ void stream(const unsigned *in_ptr, unsigned *out, int n, int words)
{
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= n) return;
    int in_pos = gid % words;
    unsigned window = 0, next = 0, copy_next = 0;
    bool flag = false;
    auto load_next = [&]() {
        window = in_ptr[in_pos];
        next = in_ptr[(in_pos + 1) % words];
        copy_next = next;
    };
    auto check = [&](unsigned k) {
        if ((window ^ k) % 3u == 0u) flag = true;
    };
    load_next();
    check(next);
    for (int r = 0; r < 3; r++) {
        in_pos = (in_pos + 2) % words;
        load_next();
        check(copy_next + r);
        window += copy_next >> 3;
    }
    out[gid] = window + (flag ? 1000u : 0u) + (next & 15u);
}

__device__ float helper(float x, int k)       // a lambda in a device function the kernel calls
{
    float acc = 0.0f;
    auto add = [&](float v) { acc += v * (float)k; };
    add(x);
    add(x * x);
    return acc;
}

__global__ void via_helper(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = helper(in[i], i % 3);
}

template <typename T>
__global__ void in_template(const T *in, T *out, int n)   // converted per instance
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    T acc = T(0);
    auto add = [&](T v) { acc += v; };
    if (i < n) { add(in[i]); add(in[i] * T(2)); out[i] = acc; }
}
template __global__ void in_template<float>(const float *, float *, int);
"""

SPEC = (
    spec_kernel("captures", (2, 1, 1), (64, 1, 1), "fp32",
                spec_buffer("in", "float32", 100, "in", -2.0, 2.0),
                spec_buffer("out", "float32", 100, "out"),
                spec_scalar("n", "int32", 100))
    + spec_kernel("stream", (2, 1, 1), (64, 1, 1), "exact",
                  spec_buffer("in_ptr", "uint32", 37, "in", 1, 100000),
                  spec_buffer("out", "uint32", 100, "out"),
                  spec_scalar("n", "int32", 100),
                  spec_scalar("words", "int32", 37))
    + spec_kernel("via_helper", (2, 1, 1), (64, 1, 1), "fp32",
                  spec_buffer("in", "float32", 100, "in", -2.0, 2.0),
                  spec_buffer("out", "float32", 100, "out"),
                  spec_scalar("n", "int32", 100))
    + spec_kernel("in_template", (2, 1, 1), (64, 1, 1), "fp32",
                  spec_buffer("in", "float32", 100, "in", -2.0, 2.0),
                  spec_buffer("out", "float32", 100, "out"),
                  spec_scalar("n", "int32", 100), template="float")
)


def test_lambdas_capturing_by_reference_and_by_value_check_equal(tmp_path):
    out, rows = converted(tmp_path, KERNELS, SPEC, expect_ok=False)
    kernels = {k["kernel"]: k for k in rows}
    for name in ("captures", "stream", "via_helper", "in_template"):
        assert kernels[name]["form"] not in ("hybrid", "unsupported"), kernels[name]["diagnostics"]
        assert kernels[name]["check"]["status"] == "pass", kernels[name]["check"]
    text = (out / "k.py").read_text()
    assert "weighted__scale = scale" in text  # the closure's copy, taken where the lambda is written


REFUSED = """
__global__ void init_capture(float *out, int n)
{
    int i = threadIdx.x;
    auto f = [m = 2 * n](float v) { return v * m; };
    out[i] = f(out[i]);
}

__device__ float apply(float v) { return v; }

__global__ void passed_on(float *out)
{
    int i = threadIdx.x;
    float s = 2.0f;
    auto f = [&](float v) { return v * s; };
    auto g = f;
    out[i] = g(out[i]);
}

__global__ void in_place(float *out)
{
    int i = threadIdx.x;
    float s = 2.0f;
    out[i] = [&](float v) { return v * s; }(out[i]);
}
"""


def test_lambdas_the_model_has_no_form_for_are_named(tmp_path):
    _out, rows = converted(tmp_path, REFUSED, expect_ok=False)
    kernels = {k["kernel"]: k for k in rows}
    messages = {name: [d["message"] for d in kernels[name]["diagnostics"]] for name in kernels}
    assert kernels["init_capture"]["form"] in ("hybrid", "unsupported")
    assert any("lambda capture 'm = 2 * n'" in msg for msg in messages["init_capture"]), messages
    assert kernels["passed_on"]["form"] in ("hybrid", "unsupported")
    assert any("lambda 'f' used other than by calling it" in msg for msg in messages["passed_on"]), messages
    assert kernels["in_place"]["form"] in ("hybrid", "unsupported")
    assert any("lambda that is not a local variable's initialiser" in msg for msg in messages["in_place"]), messages


NESTED = """
__global__ void nested(const float *src, float *dst, int n, int W, int C, float k)
{
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += blockDim.x * gridDim.x) {
        auto data_off = [=](int h, int w) { return h * W + w; };       // lrn's offset helper
        auto ker = [=](int h, int w) {                                   // calls data_off
            float sum = 0.0f;
            for (int c = 0; c < C; ++c) {
                int o = data_off(h, (w + c) % W);
                sum += src[o] * src[o];
            }
            return k + sum;
        };
        auto operation = [=](int h, int w) {                             // calls both
            dst[data_off(h, w)] = ker(h, w) * 0.5f + (float)h;
        };
        W = W + 0;                     // the closures keep their copies
        operation(idx / W, idx % W);
    }
}

__global__ void nested_ref(const float *src, float *dst, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 1.0f;
    int calls = 0;
    auto add = [&](float v) { acc += v; ++calls; };                    // by reference
    auto twice = [&](float v) { add(v); add(2.0f * v); };              // calls add
    auto scaled = [=](float v) { return v * acc; };                    // a copy of acc (1)
    auto both = [=](float v) { return scaled(v) + scaled(1.0f); };    // a copy of scaled's copy
    twice(src[i]);
    twice(src[(i + 3) % n]);
    dst[i] = acc * 10.0f + (float)calls + both(src[i]);
}
"""

NESTED_SPEC = (
    spec_kernel("nested", (3, 1, 1), (32, 1, 1), "fp32",
                spec_buffer("src", "float32", 96, "in", -2.0, 2.0),
                spec_buffer("dst", "float32", 96, "out"),
                spec_scalar("n", "int32", 96),
                spec_scalar("W", "int32", 12),
                spec_scalar("C", "int32", 3),
                spec_scalar("k", "float32", 0.25))
    + spec_kernel("nested_ref", (2, 1, 1), (64, 1, 1), "fp32",
                  spec_buffer("src", "float32", 100, "in", -2.0, 2.0),
                  spec_buffer("dst", "float32", 100, "out"),
                  spec_scalar("n", "int32", 100))
)


def test_lambdas_calling_other_lambdas_check_equal(tmp_path):
    """lrn's kernels: a lambda capturing (by value) and calling other local lambdas takes their
    captures, their by-value copies made where they are written."""
    out, rows = converted(tmp_path, NESTED, NESTED_SPEC, expect_ok=False)
    kernels = {k["kernel"]: k for k in rows}
    for name in ("nested", "nested_ref"):
        assert kernels[name]["form"] not in ("hybrid", "unsupported"), kernels[name]["diagnostics"]
        assert kernels[name]["check"]["status"] == "pass", kernels[name]["check"]
    text = (out / "k.py").read_text()
    assert "data_off__W = " in text and "scaled__acc = " in text  # the copies, where each lambda is written


MUTABLE_NESTED = """
__global__ void mutable_nested(float *out)
{
    int i = threadIdx.x;
    float s = 2.0f;
    auto counter = [s]() mutable { s += 1.0f; return s; };
    auto g = [=]() mutable { return counter(); };   // its own copy of counter
    out[i] = g();
}
"""


def test_a_lambda_calling_a_mutable_lambda_is_named(tmp_path):
    _out, rows = converted(tmp_path, MUTABLE_NESTED, expect_ok=False)
    (row,) = rows
    assert row["form"] in ("hybrid", "unsupported")
    assert any("calling the mutable lambda 'counter'" in d["message"] for d in row["diagnostics"]), row
