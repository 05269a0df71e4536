"""cuda_fp16.h and cuda_bf16.h, both instances of __cuda2tile/half_like.inc: a kernel using
__half and __nv_bfloat16 side by side parses without diagnostics, every overload resolves to its
own type, and the CUDART_*_FP16 / CUDART_*_BF16 constants keep their bit patterns."""
from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from migrate.ir import model as m
from migrate.parse.frontend import ParseOptions, parse_file

HALF, BF16 = m.Scalar("float16"), m.Scalar("bfloat16")
HALF2, BF162 = m.Vector("__half2", "float16", 2), m.Vector("__nv_bfloat162", "bfloat16", 2)
F32 = m.Scalar("float32")

INCLUDES = {"fp16_first": "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n",
            "bf16_first": "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n"}

KERNEL = """
__global__ void k(__half *h, __nv_bfloat16 *b, half2 *h2, nv_bfloat162 *b2, float *f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half hs = __hadd(h[i], __float2half(f[i]));
  __nv_bfloat16 bs = __hadd(b[i], __float2bfloat16(f[i]));
  __half2 hp = __hmul2(h2[i], __half2half2(hs));
  __nv_bfloat162 bp = __hmul2(b2[i], __bfloat162bfloat162(bs));
  float hf = __half2float(hs) + __low2float(hp);
  float bf = __bfloat162float(bs) + __low2float(bp);
  h[i] = __hmax(hs, CUDART_ZERO_FP16) * CUDART_ONE_FP16;
  b[i] = __hmax(bs, CUDART_ZERO_BF16) * CUDART_ONE_BF16;
  h2[i] = hp;
  b2[i] = bp;
  f[i] = hf + bf;
}
"""


def parse(tmp_path, source: str):
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent(source))
    return parse_file(path, ParseOptions())


def nodes(fn: m.Function, cls):
    return [n for n in m.walk(fn.body) if isinstance(n, cls)]


@pytest.mark.parametrize("order", INCLUDES)
def test_half_and_bfloat16_kernel_keeps_its_types(tmp_path, order):
    p = parse(tmp_path, INCLUDES[order] + KERNEL)
    assert list(p.diagnostics) == []
    k = p.unit.kernel("k")
    assert [prm.type for prm in k.params] == [m.Pointer(HALF), m.Pointer(BF16), m.Pointer(HALF2),
                                              m.Pointer(BF162), m.Pointer(F32), m.Scalar("int32")]
    decls = {d.name: d.type for d in nodes(k, m.VarDecl)}
    assert decls == {"i": m.Scalar("int32"), "hs": HALF, "bs": BF16, "hp": HALF2, "bp": BF162,
                     "hf": F32, "bf": F32}
    # Each call with the overloads' result type: __hadd/__hmul2/__hmax/__low2float resolve per type.
    calls = {}
    for c in nodes(k, m.Call):
        calls.setdefault(c.callee, set()).add((tuple(a.type for a in c.args), c.type))
    assert calls["__hadd"] == {((HALF, HALF), HALF), ((BF16, BF16), BF16)}
    assert calls["__hmul2"] == {((HALF2, HALF2), HALF2), ((BF162, BF162), BF162)}
    assert calls["__hmax"] == {((HALF, HALF), HALF), ((BF16, BF16), BF16)}
    assert calls["__low2float"] == {((HALF2,), F32), ((BF162,), F32)}
    assert calls["__float2half"] == {((F32,), HALF)}
    assert calls["__float2bfloat16"] == {((F32,), BF16)}
    assert calls["__half2float"] == {((HALF,), F32)}
    assert calls["__bfloat162float"] == {((BF16,), F32)}
    assert calls["__half2half2"] == {((HALF,), HALF2)}
    assert calls["__bfloat162bfloat162"] == {((BF16,), BF162)}
    # the constants expand to the bit-reinterpreting call of their own type
    assert {t for _, t in calls["__ushort_as_half"]} == {HALF}
    assert {t for _, t in calls["__ushort_as_bfloat16"]} == {BF16}


# ---- the constants' bit patterns, decoded with numpy against their IEEE meaning -----------------

def _fp16_value(bits: int) -> float:
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


def _bf16_value(bits: int) -> float:
    """bfloat16 is the upper half of a float32."""
    return float(np.array([bits << 16], dtype=np.uint32).view(np.float32)[0])


# (constant name without suffix, expected value for fp16, for bf16): fp16 has 5 exponent and
# 10 mantissa bits, bf16 has float32's 8 exponent bits and 7 mantissa bits.
CONSTANTS = [
    ("INF", math.inf, math.inf),
    ("NAN", math.nan, math.nan),
    ("MAX_NORMAL", float(np.finfo(np.float16).max), (2 - 2 ** -7) * 2.0 ** 127),
    ("MIN_DENORM", 2.0 ** -24, 2.0 ** -133),
    ("ZERO", 0.0, 0.0),
    ("ONE", 1.0, 1.0),
    ("NEG_ZERO", -0.0, -0.0),
]


@pytest.fixture(scope="module")
def constant_bits(tmp_path_factory) -> dict[str, int]:
    """CUDART_<name>_FP16 / _BF16 -> the unsigned short each expands to, read from the model."""
    lines = [f"  h[{i}] = CUDART_{name}_FP16;\n  b[{i}] = CUDART_{name}_BF16;" for i, (name, _, _) in enumerate(CONSTANTS)]
    source = INCLUDES["fp16_first"] + "__global__ void k(__half *h, __nv_bfloat16 *b) {\n" + "\n".join(lines) + "\n}\n"
    p = parse(tmp_path_factory.mktemp("constants"), source)
    assert list(p.diagnostics) == []
    bits = {}
    for stmt in nodes(p.unit.kernel("k"), m.Assign):
        target = stmt.target.base.name
        call = stmt.value
        while isinstance(call, m.Cast):
            call = call.operand
        assert isinstance(call, m.Call) and len(call.args) == 1
        assert call.callee == {"h": "__ushort_as_half", "b": "__ushort_as_bfloat16"}[target]
        arg = call.args[0]
        assert arg.type == m.Scalar("uint16")  # the (unsigned short) cast
        while isinstance(arg, m.Cast):
            arg = arg.operand
        assert isinstance(arg, m.IntLit)
        index = stmt.target.index.value
        bits[f"{CONSTANTS[index][0]}_{'FP16' if target == 'h' else 'BF16'}"] = arg.value
    return bits


@pytest.mark.parametrize("name, fp16, bf16", CONSTANTS, ids=[c[0] for c in CONSTANTS])
def test_cudart_constants_mean_what_they_say(constant_bits, name, fp16, bf16):
    for bits, decode, expected in ((constant_bits[f"{name}_FP16"], _fp16_value, fp16),
                                   (constant_bits[f"{name}_BF16"], _bf16_value, bf16)):
        value = decode(bits)
        if math.isnan(expected):
            assert math.isnan(value)
        else:
            assert value == expected and math.copysign(1.0, value) == math.copysign(1.0, expected)


def test_template_parameters_do_not_leak(tmp_path):
    """half_like.inc #undefs its parameters and helpers: user code sees none of them."""
    names = ["__C2T_H", "__C2T_H2", "__C2T_H_RAW", "__C2T_H2_RAW", "__C2T_H_NAME", "__C2T_NAME", "__C2T_NAME2"]
    leaked = " || ".join(f"defined({n})" for n in names)
    guard = f"#if {leaked}\n#error \"a half_like.inc parameter leaked\"\n#endif\n"
    body = "__global__ void k(float *f) { f[0] = 1.0f; }\n"
    assert list(parse(tmp_path, INCLUDES["fp16_first"] + guard + body).diagnostics) == []
    # the check can fail: the same #error without the #undefs' protection is reported
    control = "#define __C2T_H_NAME half\n" + guard + body
    assert list(parse(tmp_path, control).diagnostics) != []
