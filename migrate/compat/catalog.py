"""The CUDA device API the tool knows, by section: one entry per name, as data.

The frontend uses the section to classify calls (:data:`migrate.ir.model.CALL_KINDS`); the
TileLang mapping of each name lives in the compat tables built on top of this catalog.
"""
from __future__ import annotations

_FLOAT_MATH = """
    acosf acoshf asinf asinhf atanf atan2f atanhf cbrtf ceilf copysignf cosf coshf cospif erff
    erfcf erfinvf erfcinvf exp10f exp2f expf expm1f fabsf fdimf floorf fmaf fmaxf fminf fmodf
    frexpf hypotf ilogbf isfinite isinf isnan ldexpf lgammaf log10f log1pf log2f logbf logf
    lrintf lroundf modff nanf nearbyintf nextafterf normcdff normcdfinvf powf rcbrtf remainderf
    rhypotf rintf roundf rsqrtf scalbnf signbit sincosf sincospif sinf sinhf sinpif sqrtf tanf
    tanhf tgammaf truncf
"""
# double forms drop the trailing "f" (isinf is not a float-suffixed name: keep it out)
_DOUBLE_MATH = " ".join(name[:-1] for name in _FLOAT_MATH.split()
                        if name.endswith("f") and name != "isinf") + """
    rsqrt fabs abs min max fmin fmax fma exp log sqrt pow
"""
_STD_MATH = "std::" + " std::".join(
    "abs fabs sqrt exp exp2 log log2 log10 sin cos tan tanh pow fma fmin fmax floor ceil round "
    "trunc min max isnan isinf isfinite erf".split())

SECTIONS: dict[str, str] = {
    "math": _FLOAT_MATH + _DOUBLE_MATH + _STD_MATH + """
        __expf __exp10f __logf __log2f __log10f __sinf __cosf __tanf __sincosf __powf __fdividef
        __fdiv_rn __fdiv_rz __frcp_rn __frcp_rz __fsqrt_rn __fsqrt_rz __frsqrt_rn __fmaf_rn
        __fmaf_rz __fmaf_ru __fmaf_rd __fadd_rn __fadd_rz __fadd_ru __fadd_rd __fsub_rn __fsub_rz
        __fmul_rn __fmul_rz __fmul_ru __fmul_rd __saturatef __dadd_rn __dmul_rn __fma_rn __drcp_rn
        __dsqrt_rn
        __builtin_inff __builtin_inf __builtin_nanf __builtin_nan __builtin_huge_valf
        __builtin_huge_val __builtin_fabsf __builtin_fabs __builtin_isnan __builtin_isinf
        __popc __popcll __clz __clzll __ffs __ffsll __brev __brevll __byte_perm __mul24 __umul24
        __mulhi __umulhi __mul64hi __umul64hi __sad __usad __hadd __rhadd __uhadd __urhadd __funnelshift_l
        __funnelshift_r umin umax llmin llmax ullmin ullmax
    """,
    "conversion": """
        __float2int_rn __float2int_rz __float2int_rd __float2int_ru __float2uint_rn __float2uint_rz
        __float2uint_rd __float2uint_ru __float2ll_rn __float2ll_rz __float2ull_rn __float2ull_rz
        __int2float_rn __int2float_rz __uint2float_rn __ll2float_rn __ull2float_rn __double2float_rn
        __double2int_rn __double2int_rz __int2double_rn __float_as_int __int_as_float __float_as_uint
        __uint_as_float __double_as_longlong __longlong_as_double __double2hiint __double2loint
    """,
    "half": """
        __float2half __float2half_rn __float2half_rz __half2float __hadd __hsub __hmul __hdiv __hfma
        __hneg __habs __hmax __hmin __heq __hne __hlt __hle __hgt __hge __hisnan __hisinf hexp hexp2
        hlog hlog2 hsqrt hrsqrt hrcp hsin hcos hfloor hceil htrunc __half2half2 __halves2half2
        __floats2half2_rn __float2half2_rn __float22half2_rn __half22float2 __low2float __high2float
        __low2half __high2half __lows2half2 __highs2half2 __hadd2 __hsub2 __hmul2 __hfma2 __hneg2
        __habs2 __hmax2 __hmin2 h2exp h2sqrt h2rsqrt __half2int_rn __int2half_rn __half_as_short
        __short_as_half __half_as_ushort __ushort_as_half __ldg_half
        __float2bfloat16 __float2bfloat16_rn __float2bfloat16_rz __bfloat162float __bfloat1622float2
        __float22bfloat162_rn __floats2bfloat162_rn __low2bfloat16 __high2bfloat16 __bfloat162bfloat162
        __halves2bfloat162 __bfloat16_as_short __bfloat16_as_ushort __ushort_as_bfloat16
    """,
    "atomic": """
        atomicAdd atomicSub atomicExch atomicMin atomicMax atomicInc atomicDec atomicCAS atomicAnd
        atomicOr atomicXor atomicAdd_block atomicAdd_system atomicExch_block atomicMax_block
        atomicMin_block atomicCAS_block atomicAnd_block atomicOr_block atomicXor_block
    """,
    "warp": """
        __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __ballot_sync __any_sync
        __all_sync __activemask __match_any_sync __match_all_sync __reduce_add_sync
        __reduce_min_sync __reduce_max_sync __reduce_and_sync __reduce_or_sync __reduce_xor_sync
        __shfl __shfl_up __shfl_down __shfl_xor __ballot __any __all __lanemask_lt
    """,
    "sync": """
        __syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp
        __threadfence __threadfence_block __threadfence_system
    """,
    "memory": """
        __ldg __ldcg __ldca __ldcs __ldlu __ldcv __stwb __stcg __stcs __stwt memcpy memset
        __prefetch_global_l1 __prefetch_global_l2 __isGlobal __isShared __cvta_generic_to_shared
    """,
    "cg": """
        cooperative_groups::this_thread_block cooperative_groups::tiled_partition
        cooperative_groups::this_grid cooperative_groups::coalesced_threads cooperative_groups::reduce
        cooperative_groups::inclusive_scan cooperative_groups::exclusive_scan
        cooperative_groups::sync
    """,
    "io": "printf assert __assert_fail __trap __brkpt clock clock64 __nanosleep",
    "constructor": """
        make_char1 make_char2 make_char3 make_char4 make_uchar1 make_uchar2 make_uchar3 make_uchar4
        make_short2 make_short4 make_ushort2 make_ushort4 make_int1 make_int2 make_int3 make_int4
        make_uint1 make_uint2 make_uint3 make_uint4 make_long2 make_longlong2 make_float1
        make_float2 make_float3 make_float4 make_double1 make_double2 make_double3 make_double4
    """,
    "unsupported": """
        tex1Dfetch tex1D tex2D tex3D tex1DLayered tex2DLayered texCubemap tex2Dgather surf1Dread
        surf2Dread surf3Dread surf1Dwrite surf2Dwrite surf3Dwrite malloc free
    """,
}

_SECTION_OF: dict[str, str] = {}
for _section, _names in SECTIONS.items():
    for _name in _names.split():
        _SECTION_OF.setdefault(_name, _section)

#: Sections whose calls the frontend reports as unsupported, with the diagnostic code.
UNSUPPORTED_CODES = {
    **{n: "M1202" for n in SECTIONS["unsupported"].split() if n.startswith(("tex", "surf"))},
    "malloc": "M1210",
    "free": "M1210",
}


def section_of(name: str) -> str | None:
    """The catalog section of a CUDA API name (``std::`` and ``::`` prefixes allowed), or None."""
    name = name.lstrip(":")
    if name in _SECTION_OF:
        return _SECTION_OF[name]
    if name.startswith("cg::"):
        return _SECTION_OF.get("cooperative_groups::" + name[4:])
    return None
