"""CUDA features of the CPU executor's header (tests/fixtures/runtime/features.cu) against numpy.

Warp shuffles with widths, votes, block barriers with predicates, atomics, cooperative groups,
half/bfloat16 conversions and arithmetic, math and integer intrinsics, __constant__/__device__
symbols, dynamic shared memory, template instances, the whole program's own main(), the
ucontext fallback for the fibers, and the library cache.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from migrate.runtime.compare import compare_arrays, compare_outputs
from migrate.runtime.cuda_cpu import compile_cpu, run_cpu, run_program
from migrate.runtime.inputs import bf16_to_bits, bits_to_bf16, make_inputs, round_to_bf16
from migrate.runtime.spec import load_spec
from migrate.runtime.build import find_cxx
from tests.runtime.support import FIX, WMMA, ref_warp_ops, ref_wmma_half, ref_wmma_tf32

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")

CU = FIX / "features.cu"
KERNELS = {k.id: k for k in load_spec(FIX / "features.toml")}


@pytest.fixture(scope="module")
def lib():
    return compile_cpu(CU, list(KERNELS.values()))


def run(lib, kid, schedule="forward", seed=5):
    k = KERNELS[kid]
    inp = make_inputs(k, seed)
    res = run_cpu(lib, k, inp.args, inp.symbols, schedule=schedule, seed=seed, timeout=60)
    assert res.ok, str(res)
    return inp, res


def assert_match(kernel, expected, outputs, tolerance=None):
    results = compare_outputs(kernel, expected, outputs, tolerance=tolerance)
    bad = [r.message for r in results if not r.passed]
    assert not bad, "; ".join(bad)


# --------------------------------------------------------------------------- warps and barriers

@pytest.mark.parametrize("schedule", ["forward", "reverse", "random"])
def test_warp_ops(lib, schedule):
    inp, res = run(lib, "warp_ops", schedule)
    assert_match(KERNELS["warp_ops"], {"r": ref_warp_ops()}, res.outputs)


def test_partial_warp_completes(lib):
    inp, res = run(lib, "partial_warp_sum")
    x = inp.args["x"].reshape(2, 40).astype(np.float64)
    y = res.outputs["y"].reshape(2, 40)
    for b in range(2):   # the first warp is full; the 8-lane warp reads lanes that do not exist
        assert compare_arrays(np.full(32, x[b, :32].sum()), y[b, :32], "float32", "fp32_accum").passed


# --------------------------------------------------------------------------- atomics

def ref_atomics(args):
    v = args["v"].astype(np.int64)
    ai = args["ai"].astype(np.int64).copy()
    ai[0] += v.sum()
    ai[1] = max(ai[1], v.max())
    ai[2] = min(ai[2], v.min())
    ai[3] ^= np.bitwise_xor.reduce(v)
    ai[4] |= np.bitwise_or.reduce(v)
    ai[5] &= np.bitwise_and.reduce(v | 0x70)
    ai[6] -= v.sum()
    ai[7] = 7
    au = args["au"].astype(np.int64).copy()
    for _ in range(len(v)):
        au[0] = 0 if au[0] >= 16 else au[0] + 1
        au[1] = 1000000 if (au[1] == 0 or au[1] > 1000000) else au[1] - 1
    au[2] = (au[2] + v.sum()) % 2**32
    aull = (int(args["aull"][0]) + int(v.sum()) * 1000000007) % 2**64
    af = args["af"].astype(np.float64).copy()
    af[0] += v.sum()
    af[1] = max(af[1], v.max() * 0.5)
    ad = args["ad"].astype(np.float64) + v.sum() * 0.25
    return ai, au, aull, af, ad


@pytest.mark.parametrize("schedule", ["forward", "random"])
def test_atomics(lib, schedule):
    inp, res = run(lib, "atomics", schedule)
    ai, au, aull, af, ad = ref_atomics(inp.args)
    o = res.outputs
    assert np.array_equal(o["ai"], ai.astype(np.int32))
    assert np.array_equal(o["au"], au.astype(np.uint32))
    assert int(o["aull"][0]) == aull
    assert compare_arrays(af, o["af"], "float32", "fp32_accum").passed     # rounding order differs
    assert compare_arrays(ad, o["ad"], "float64", "exact").passed


# --------------------------------------------------------------------------- cooperative groups

@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_cooperative_groups(lib, schedule):
    inp, res = run(lib, "coop", schedule)
    x = inp.args["x"].astype(np.float64)
    y = np.zeros((192, 3))
    ranks = np.zeros((192, 2), dtype=np.int64)
    for g in range(192):
        t = g % 96
        w0 = g - t + (t // 32) * 32
        t0 = g - t + (t // 8) * 8
        y[g, 0] = x[w0:w0 + 32].sum()
        y[g, 1] = x[t0:t0 + 8].max()
        y[g, 2] = x[g + 1] if (t % 8) + 1 < 8 else x[g]
        ranks[g] = [(t % 8) + 100 * (t // 8), (t % 32) + 100 * (t // 32) + 10000 * 96]
    assert_match(KERNELS["coop"], {"y": y.reshape(-1), "ranks": ranks.reshape(-1)}, res.outputs)


# --------------------------------------------------------------------------- half and bfloat16

def _same_or_both_nan16(a_bits, e_bits, exp_mask, man_mask):
    a_nan = ((a_bits & exp_mask) == exp_mask) & ((a_bits & man_mask) != 0)
    e_nan = ((e_bits & exp_mask) == exp_mask) & ((e_bits & man_mask) != 0)
    return np.where(e_nan, a_nan, a_bits == e_bits)


def test_half_and_bfloat16_conversions(lib):
    inp, res = run(lib, "fp16_convert")
    f = inp.args["fbits"].view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        e_h = f.astype(np.float16).view(np.uint16)
    ok = _same_or_both_nan16(res.outputs["f2h"], e_h, 0x7C00, 0x03FF)
    assert ok.all(), f"float->half differs at {np.flatnonzero(~ok)[:5]}"
    e_b = bf16_to_bits(f)
    ok = _same_or_both_nan16(res.outputs["f2b"], e_b, 0x7F80, 0x007F)
    assert ok.all(), f"float->bfloat16 differs at {np.flatnonzero(~ok)[:5]}"
    h = inp.args["hbits"].view(np.float16).astype(np.float32)
    got = res.outputs["h2f"]
    ok = np.where(np.isnan(h), np.isnan(got), got.view(np.uint32) == h.view(np.uint32))
    assert ok.all()
    # the random bit patterns covered subnormals, infinities and NaNs
    with np.errstate(over="ignore"):
        assert (np.abs(f) < 6e-5).any() and np.isinf(f.astype(np.float16)).any() and np.isnan(f).any()


def test_half_and_bfloat16_arithmetic(lib):
    inp, res = run(lib, "fp16_math")
    a, b, c = inp.args["a"], inp.args["b"], inp.args["c"]
    with np.errstate(over="ignore"):
        qx = (a.astype(np.float32) * np.float32(2.0)).astype(np.float16)
        qy = (b.astype(np.float32) * np.float32(0.5)).astype(np.float16)
        hs = np.stack([a + b, a * b, a - b, (qx.astype(np.float32) + a.astype(np.float32)).astype(np.float16)], 1)
    bs = np.stack([round_to_bf16(c * np.float32(3.0)), round_to_bf16(c * c)], 1)
    f = np.stack([qx.astype(np.float32) + qy.astype(np.float32), (a > b).astype(np.float32)], 1)
    assert_match(KERNELS["fp16_math"], {"hs": hs.reshape(-1), "bs": bs.reshape(-1), "f": f.reshape(-1)},
                 res.outputs)


# --------------------------------------------------------------------------- intrinsics

def _erfinv(y):
    x = 0.0
    for _ in range(60):
        x -= (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _brev(w):
    return int(f"{w:032b}"[::-1], 2)


def _byte_perm(x, y, s):
    v = (y << 32) | x
    return sum(((v >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))


def _i32(v):
    return ((int(v) + 2**31) % 2**32) - 2**31


def test_math_and_integer_intrinsics(lib):
    inp, res = run(lib, "intrinsics")
    x = inp.args["x"]
    u = inp.args["u"]
    xd = x.astype(np.float64)
    F = np.stack([np.exp(xd), np.log(np.abs(xd) + 1), 1 / np.sqrt(np.abs(xd) + 0.5), np.clip(xd, 0, 1), xd / 3,
                  np.minimum(xd, 0.25) + np.maximum(xd, -0.25), [_erfinv(v * 0.9) for v in x.astype(np.float32) * np.float32(1)],
                  xd * xd + 1], 1)
    x10 = x * np.float32(10.0)
    I = np.zeros((len(x), 8), dtype=np.int64)
    I[:, 0] = np.rint(x10)
    I[:, 1] = np.trunc(x10)
    I[:, 2] = np.floor(x10)
    I[:, 3] = np.ceil(x10)
    for i, w in enumerate(int(v) for v in u):
        clz = 32 - w.bit_length()
        ffs = (w & -w).bit_length()
        I[i, 4] = bin(w).count("1") + 100 * clz
        I[i, 5] = _i32(_brev(w))
        I[i, 6] = ffs + 100 * (((w * 2654435761) >> 32) & 0xFF)
        m = w & 0xFFFFFF
        m24 = m - (1 << 24) if m & 0x800000 else m
        I[i, 7] = _i32(_byte_perm(w, 0x11223344, 0x5140)) ^ _i32(m24 * 3)
    assert_match(KERNELS["intrinsics"], {"fo": F.reshape(-1), "io": I.reshape(-1)}, res.outputs)


def test_math_api_and_keywords(lib):
    inp, res = run(lib, "math_api")
    v = inp.args["x"].astype(np.float64)
    v32 = inp.args["x"]
    t = v32 * np.float32(3.0)
    erf = np.array([math.erf(a) for a in v])
    F = np.stack([
        np.exp(v), np.exp2(v), np.log(v), np.log2(v), np.log1p(v), np.sqrt(v), 1 / np.sqrt(v), np.sin(v),
        np.cos(v), np.tanh(v), v ** 1.5, v * 2 + 1, np.minimum(v, 1) + np.maximum(v, 1), v, np.floor(t),
        np.ceil(t) + np.where(t - np.floor(t) >= 0.5, np.ceil(t), np.floor(t)) + np.trunc(t),
        erf, 1 / v + np.sqrt(v), v * 3 + (v + 1), 3 + 4 + np.minimum(v, 0.5) + 0.5, v * v + v ** 3,
        np.floor(v32 * np.float32(7.0)), v + 8 + 31, v + 4 + 2], 1)
    D = np.stack([np.exp(v), np.log(v), np.sqrt(v), np.sin(v), np.tanh(v), v ** 1.5, v * v + 1,
                  2 * (np.minimum(v, 1) + np.maximum(v, 1))], 1)
    r = compare_arrays(F.reshape(-1), res.outputs["fo"], "float32", "fp32", name="fo")
    assert r.passed, r.message
    r = compare_arrays(D.reshape(-1), res.outputs["dout"], "float64", "fp64", name="dout")
    assert r.passed, r.message


# --------------------------------------------------------------------------- symbols, shared memory, templates

def test_constant_and_device_symbols(lib):
    inp, res = run(lib, "with_symbols")
    c = inp.symbols["c_coef"].astype(np.float64)
    assert inp.symbols["d_offset"][0] == 5
    x = inp.args["x"].astype(np.float64)
    y = c[0] + x * (c[1] + x * (c[2] + x * c[3])) + 5
    assert_match(KERNELS["with_symbols"], {"y": y}, res.outputs)


@pytest.mark.parametrize("schedule", ["forward", "random"])
def test_dynamic_shared_memory_as_float4(lib, schedule):
    inp, res = run(lib, "dyn_smem_float4", schedule)
    x = inp.args["x"].astype(np.float64).reshape(6, 512)
    assert_match(KERNELS["dyn_smem_float4"], {"y": x.sum(axis=1)}, res.outputs)


def test_template_instances(lib):
    inp, res = run(lib, "fill_iota")
    assert np.array_equal(res.outputs["out"], np.arange(1000, dtype=np.int32) - 7)
    inp, res = run(lib, "block_sum")
    x = np.concatenate([inp.args["x"].astype(np.float64), np.zeros(24)]).reshape(8, 128)
    assert_match(KERNELS["block_sum"], {"out": x.sum(axis=1)}, res.outputs)


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random"])
def test_spin_wait_within_a_block(lib, schedule):
    inp, res = run(lib, "spin_handoff", schedule)
    assert np.array_equal(res.outputs["y"], 2 * inp.args["x"])


def test_whole_program_runs(lib):
    rc, out, err = run_program(lib)
    assert rc == 0, out + err
    assert "features main: 0 bad, no error" in out


def test_ucontext_fallback(lib):
    lib_uc = compile_cpu(CU, list(KERNELS.values()), extra_flags=["-DC2T_USE_UCONTEXT"])
    assert lib_uc.path != lib.path
    for kid in ("warp_ops", "block_sum"):
        k = KERNELS[kid]
        inp = make_inputs(k, 2)
        res = run_cpu(lib_uc, k, inp.args, inp.symbols, schedule="random", seed=2, timeout=60)
        assert res.ok, str(res)
    assert np.array_equal(res.outputs["out"], run(lib, "block_sum", "random", 2)[1].outputs["out"])


def test_library_cache(lib):
    again = compile_cpu(CU, list(KERNELS.values()))
    assert again.cached and again.path == lib.path


def test_concurrent_builds_of_one_library_compile_it_once(tmp_path):
    """Threads (or processes) wanting the same library at once: one compiles, the others wait on
    the key's lock and take it from the cache."""
    from concurrent.futures import ThreadPoolExecutor

    cu = tmp_path / "twice.cu"
    cu.write_text("__global__ void twice(float* x, int n) {\n"
                  "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "    if (i < n) x[i] *= 2.0f;\n"
                  "}\n")
    with ThreadPoolExecutor(max_workers=4) as pool:
        libs = list(pool.map(lambda _: compile_cpu(cu, ["twice"], cache_dir=tmp_path / "cache"), range(4)))
    assert len({lib.path for lib in libs}) == 1
    assert sorted(lib.cached for lib in libs) == [False, True, True, True]


def test_local_headers_include_dirs_and_defines(tmp_path):
    """Kernels in a quoted include (rewritten too), an -I folder, and -D defines."""
    from migrate.runtime.api import run_original
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.h").write_text("#pragma once\n#define SCALE_OF(v) ((v) * SCALE)\n")
    (tmp_path / "kern.cuh").write_text(
        '#pragma once\n#include "scale.h"\n'
        "__global__ void scaled_shift(const float* x, float* y, int n) {\n"
        "    extern __shared__ float s[];\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    s[threadIdx.x] = i < n ? x[i] : 0.0f;\n"
        "    __syncthreads();\n"
        "    if (i < n) y[i] = SCALE_OF(s[threadIdx.x]) + s[(threadIdx.x + 1) % blockDim.x];\n"
        "}\n"
        "inline void launch_scaled(const float* x, float* y, int n) {\n"
        "    scaled_shift<<<(n + 63) / 64, 64, 64 * sizeof(float)>>>(x, y, n);\n"
        "}\n")
    (tmp_path / "prog.cu").write_text('#include "kern.cuh"\nint main() { return 0; }\n')
    (tmp_path / "prog.toml").write_text(
        '[[kernel]]\nname = "scaled_shift"\ngrid = [4]\nblock = [64]\nshared_bytes = 256\ntolerance = "fp32"\n'
        '[[kernel.args]]\nname = "x"\nbuffer = "float32"\nelements = 256\nrole = "in"\nrange = [-1.0, 1.0]\n'
        '[[kernel.args]]\nname = "y"\nbuffer = "float32"\nelements = 256\nrole = "out"\n'
        '[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = 256\n')
    k = load_spec(tmp_path / "prog.toml")[0]
    inp = make_inputs(k, 3)
    r = run_original(tmp_path / "prog.cu", k, inp.args, inp.symbols, include_dirs=[tmp_path / "inc"],
                     defines=["SCALE=3.0f"], schedule="reverse")
    assert r.ok, r.message
    x = inp.args["x"].astype(np.float64).reshape(4, 64)
    y = 3.0 * x + np.roll(x, -1, axis=1)
    assert compare_arrays(y.reshape(-1), r.outputs["y"], "float32", "fp32").passed


# --------------------------------------------------------------------------- wmma

@pytest.mark.parametrize("kid,ref", [("wmma_gemm_half", ref_wmma_half), ("wmma_gemm_tf32", ref_wmma_tf32)])
@pytest.mark.parametrize("schedule", ["forward", "random"])
def test_wmma(kid, ref, schedule):
    from migrate.runtime.api import check_original
    c = check_original(FIX / "wmma.cu", WMMA[kid], ref, schedule=schedule, seed=4)
    assert c.passed, c.message


def test_declaration_forms_and_namespaces(tmp_path):
    """Qualifier orders of __shared__, extern "C" kernels, kernels in namespaces."""
    from migrate.runtime.api import run_original
    (tmp_path / "forms.cu").write_text(r'''
#include <cuda_runtime.h>
namespace ops {
__global__ void forms(const float* x, float* y) {
    volatile __shared__ float a[64];
    __shared__ volatile int b;
    static __shared__ float c[64];
    __shared__ __align__(16) float d[64];
    extern __shared__ __align__(16) volatile float e[];
    int t = threadIdx.x;
    if (t == 0) b = 3;
    a[t] = x[t]; c[t] = 2.0f * x[t]; d[t] = 3.0f; e[t] = 1.0f;
    __syncthreads();
    y[t] = a[63 - t] + c[t] + d[t] * (float)b + e[(t + 1) % 64];
}
}  // namespace ops
extern "C" __global__ void plain_c(float* y) { y[threadIdx.x] = 1.0f; }
int main() {
    float *x, *y;
    cudaMalloc(&x, 256); cudaMalloc(&y, 256);
    ops::forms<<<1, 64, 64 * sizeof(float)>>>(x, y);
    plain_c<<<1, 64>>>(y);
    return 0;
}
''')
    (tmp_path / "forms.toml").write_text(
        '[[kernel]]\nname = "ops::forms"\nid = "forms"\ngrid = [1]\nblock = [64]\nshared_bytes = 256\n'
        'tolerance = "fp32"\n'
        '[[kernel.args]]\nname = "x"\nbuffer = "float32"\nelements = 64\nrole = "in"\nrange = [-1.0, 1.0]\n'
        '[[kernel.args]]\nname = "y"\nbuffer = "float32"\nelements = 64\nrole = "out"\n'
        '[[kernel]]\nname = "plain_c"\ngrid = [1]\nblock = [64]\ntolerance = "exact"\n'
        '[[kernel.args]]\nname = "y"\nbuffer = "float32"\nelements = 64\nrole = "out"\n')
    ks = load_spec(tmp_path / "forms.toml")
    inp = make_inputs(ks[0], 1)
    r = run_original(tmp_path / "forms.cu", ks[0], inp.args, schedule="random", seed=2)
    assert r.ok, r.message
    x = inp.args["x"].astype(np.float64)
    assert compare_arrays(x[::-1] + 2 * x + 9 + 1, r.outputs["y"], "float32", "fp32").passed
    r = run_original(tmp_path / "forms.cu", "plain_c")
    assert r.ok and (r.outputs["y"] == 1).all()
