"""Every compat form lowers for ``{"kind": "cuda", "arch": "sm_90a"}``, and nvcc compiles them.

No GPU is needed: ``tilelang.lower`` produces the CUDA source, and ``tilelang.compile`` runs nvcc
(its result is cached under ``TILELANG_CACHE_DIR``). Rows are batched: one kernel per signature
applies each form to its own output column (the CPU forms and atomic statement forms too, since
an emitter may use them on CUDA).
"""
from __future__ import annotations

import os
import re

from migrate.compat import verify

os.environ.setdefault("TILELANG_CACHE_DIR", verify.default_cache_dir())

import pytest  # noqa: E402

from migrate.compat import cuda_math  # noqa: E402
from migrate.compat.table import ROWS, UNSUPPORTED, lookup  # noqa: E402

VARIANTS = verify.variants(ROWS)
GROUPS: dict[str, list[verify.Variant]] = {}
for _v in VARIANTS:
    GROUPS.setdefault(_v.group, []).append(_v)


def test_every_supported_row_is_batched():
    covered = {v.row.label for v in VARIANTS if v.which == "tilelang"}
    assert covered == {r.label for r in ROWS if r.status is not UNSUPPORTED}


@pytest.mark.parametrize("group", sorted(GROUPS), ids=str)
def test_group_lowers_for_sm90a(group):
    vs = GROUPS[group]
    try:
        art = verify.lower_cuda(verify.cuda_batch_source(vs))
    except Exception as exc:  # name the variants that fail on their own
        failing = []
        for v in vs:
            try:
                verify.lower_cuda(verify.cuda_batch_source([v]))
            except Exception as one:  # noqa: PERF203
                failing.append(f"{v.row.label} [{v.which}]: {str(one).strip().splitlines()[-1][:200]}")
        pytest.fail(f"lowering {group} failed: {exc!s:.300}\n" + "\n".join(failing))
    assert "__global__" in art.kernel_source


def test_everything_compiles_with_nvcc():
    """All forms in one kernel with the full CUDA prelude, compiled for sm_90a (nvcc)."""
    import tilelang
    src = verify.cuda_batch_source(VARIANTS, prelude=cuda_math.prelude("cuda"))
    kernel = tilelang.compile(verify.load_prim_func(src), target=verify.CUDA_TARGET)
    source = kernel.get_kernel_source()
    assert "c2t_erfinvf" in source and "AtomicAddRet" in source


#: what a row's TileLang form becomes in the generated CUDA (the basis of its EXACT status)
EMITS = {
    "expf": "expf(", "exp": "exp(", "exp10f": "exp10f(", "powf": "powf(", "sqrtf": "sqrtf(",
    "rsqrtf": "rsqrtf(", "tanhf": "tanhf(", "erff": "erff(", "hypotf": "hypotf(",
    "rintf": "nearbyintf(", "roundf": "RoundTiesAwayFromZero(", "round": "RoundTiesAwayFromZero(",
    "fmodf": "fmodf(", "fmod": "fmod(", "fabsf": "fabsf(", "fmaxf": "max(", "fminf": "min(",
    "fmaf": "__fmaf_rn(", "fma": "__fma_rn(", "copysignf": "copysignf(", "ldexpf": "ldexpf(",
    "nextafterf": "nextafterf(", "isfinite": "isfinite(", "isnan": "!=",
    "__expf": "__expf(", "__logf": "__logf(", "__sinf": "__sinf(", "__cosf": "__cosf(",
    "__tanf": "__tanf(", "__log2f": "__log2f(", "__log10f": "__log10f(", "__exp10f": "__exp10f(",
    "__fadd_rn": "__fadd_rn(", "__fadd_rz": "__fadd_rz(", "__fsub_rn": "__fsub_rn(",
    "__fmul_ru": "__fmul_ru(", "__fdiv_rn": "__fdiv_rn(", "__fdiv_rz": "__fdiv_rz(",
    "__fmaf_rd": "__fmaf_rd(", "__frcp_rn": "__frcp_rn(", "__fsqrt_rn": "__fsqrt_rn(",
    "__frsqrt_rn": "__frsqrt_rn(", "__dadd_rn": "__dadd_rn(", "__dmul_rn": "__dmul_rn(",
    "__fma_rn": "__fma_rn(", "__drcp_rn": "__drcp_rn(", "__dsqrt_rn": "__dsqrt_rn(",
    "__clz": "__clz(", "__clzll": "__clzll(", "__ffs": "__ffs(", "__ffsll": "__ffsll(",
    "__hfma": "__hfma(", "__habs": "__habs(", "__hmax": "__hmax(", "__hmin": "__hmin(",
    "hexp": "hexp(", "hsqrt": "hsqrt(", "hrsqrt": "hrsqrt(", "hlog2": "hlog2(", "hfloor": "hfloor(",
    "__float2half": "(half_t)", "__float2bfloat16": "(bfloat16_t)", "__half2float": "(float)",
    "__float2int_rn": "nearbyintf(", "__float2uint_rd": "floorf(", "__float2int_rz": "((int)",
    "__float_as_int": "(int *)", "__double2hiint": ">> (int64_t)32",
    "atomicAdd": "AtomicAddRet(", "atomicMax": "AtomicMaxRet(", "atomicMin": "AtomicMinRet(",
    "atomicSub": "AtomicAddRet(",
}


@pytest.mark.parametrize("name", sorted(EMITS))
def test_form_emits_the_cuda_function(name):
    row = lookup(name)
    art = verify.lower_cuda(verify.cuda_batch_source([verify.Variant(row, "tilelang")]))
    body = art.kernel_source[art.kernel_source.index("__global__ void __launch_bounds__"):]
    assert EMITS[name] in body, body[:1500]


def test_extern_rows_call_the_cuda_function_through_the_prelude():
    # e.g. expm1f: the helper is called in the kernel and its CUDA body is CUDA's expm1f
    row = lookup("expm1f")
    art = verify.lower_cuda(verify.cuda_batch_source([verify.Variant(row, "tilelang")]))
    src = art.kernel_source
    assert re.search(r"static __device__ __forceinline__ float c2t_expm1f\(float x\) \{ return expm1f\(x\); \}", src)
    assert "c2t_expm1f(" in src[src.index("__global__ void __launch_bounds__"):]
