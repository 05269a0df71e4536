"""The compat table as data: schema, catalog consistency, render / cuda_math API (no compiling)."""
from __future__ import annotations

import pytest

from migrate.compat import catalog, cuda_math, numpy_ref, table
from migrate.compat.externs import EXTERNS, prelude_source
from migrate.compat.table import APPROX, EXACT, ROWS, UNSUPPORTED, lookup, rows_for

SUPPORTED = [r for r in ROWS if r.status is not UNSUPPORTED]

#: names the table must cover (the brief's list)
REQUIRED = """
expf exp2f exp10f expm1f logf log2f log10f log1pf powf sqrtf rsqrtf cbrtf sinf cosf tanf asinf
acosf atanf atan2f sinhf coshf tanhf erff erfcf fabsf fminf fmaxf fmaf floorf ceilf roundf truncf
rintf fmodf remainderf copysignf hypotf ldexpf isnan isinf isfinite signbit
exp exp2 exp10 expm1 log log2 log10 log1p pow sqrt rsqrt cbrt sin cos tan asin acos atan atan2
sinh cosh tanh erf erfc fabs fmin fmax fma floor ceil round trunc rint fmod remainder copysign
hypot ldexp std::exp std::max std::min std::abs
__expf __logf __sinf __cosf __powf __fdividef __frcp_rn __fsqrt_rn __frsqrt_rn __fmaf_rn __fadd_rn
__fmul_rn __saturatef
__popc __popcll __clz __clzll __ffs __brev __mul24 __umul24 __mulhi __umulhi __sad __usad min max
abs umin umax
__float2int_rn __float2int_rz __float2int_rd __float2int_ru __float2uint_rn __float2uint_rz
__int2float_rn __uint2float_rn __float_as_int __int_as_float __float_as_uint __uint_as_float
__double2float_rn
__half2float __float2half __float2half_rn __hadd __hsub __hmul __hdiv __hfma __hneg __habs __hmax
__hmin hexp hsqrt __float2bfloat16 __float2bfloat16_rn __bfloat162float __low2float __high2float
atomicAdd atomicMax atomicMin atomicSub atomicExch atomicCAS
""".split()


def test_required_names_have_rows():
    missing = [n for n in REQUIRED if not rows_for(n)]
    assert not missing


def test_required_names_are_supported():
    unsupported = [n for n in REQUIRED if lookup(n).status is UNSUPPORTED]
    assert not unsupported


def test_labels_unique_and_statuses_counted():
    labels = [r.label for r in ROWS]
    assert len(labels) == len(set(labels))
    c = table.counts()
    assert sum(c.values()) == len(ROWS)
    assert set(c) == {"EXACT", "APPROX", "UNSUPPORTED"}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.label)
def test_row_schema(row):
    assert row.section in catalog.SECTIONS
    # the catalog classifies the name the same way (the half overload of __hadd is in "half")
    assert catalog.section_of(row.cuda) == row.section or (row.cuda, row.section) == ("__hadd", "half")
    assert row.note.strip()
    if row.status is UNSUPPORTED:
        assert row.tilelang is None and row.cpu_form is None
    else:
        assert row.tilelang is not None
        assert row.ulp is None or row.ulp >= 0
        assert row.cpu or row.cpu_form is not None
        # a numpy model of the CUDA function exists
        assert numpy_ref.has_reference(row) or row.kind == "atomic"
    for name in row.extern_names:
        assert name in EXTERNS


def test_unsupported_section_kept_with_codes():
    for name in catalog.SECTIONS["unsupported"].split():
        row = lookup(name)
        assert row is not None and row.status is UNSUPPORTED and row.tilelang is None
        assert row.code == catalog.UNSUPPORTED_CODES[name]


def test_catalog_row_sections_derive_from_the_rows():
    for section in table.SECTIONS:
        have = set(catalog.SECTIONS[section].split())
        want = {r.cuda for r in ROWS if r.section == section}
        assert have == want, (section, sorted(have - want), sorted(want - have))
    assert catalog.UNSUPPORTED_CODES == {r.cuda: r.code for r in ROWS if r.section == "unsupported"}
    assert list(catalog.SECTIONS)[:4] == ["math", "conversion", "half", "atomic"]


def test_catalog_api_without_rows_has_no_rows():
    """The hand-written sections list only API without compat rows: a name that gets a row is
    filed by its row (remove it from catalog.API_WITHOUT_ROWS)."""
    with_rows = {r.cuda for r in ROWS}
    extra = {s: sorted(set(names.split()) & with_rows) for s, names in catalog.API_WITHOUT_ROWS.items()}
    assert not any(extra.values()), f"names with rows in catalog.API_WITHOUT_ROWS: {extra}"
    assert not set(catalog.API_WITHOUT_ROWS) & set(table.SECTIONS)


def test_catalog_api_unchanged():
    assert catalog.section_of("::expf") == "math"
    assert catalog.section_of("std::exp") == "math"
    assert catalog.section_of("cg::this_thread_block") == "cg"
    assert catalog.section_of("isin") is None  # artefact of deriving double names from isinf
    assert catalog.section_of("isinf") == "math"


def test_malformed_rows_are_rejected():
    with pytest.raises(table.TableError):
        table.R("expf", "T.exp({0}) if {0} else 0", "f:f")
    with pytest.raises(table.TableError):
        table.R("expf", "T.exp({1})", "f:f")
    with pytest.raises(table.TableError):
        table.R("expf", None, "f:f", EXACT)
    with pytest.raises(table.TableError):
        table.R("expf", "T.exp({0})", "f:f", cpu=False)  # no CPU form, no reason
    with pytest.raises(table.TableError):
        table.R("expf", 'T.call_extern("float32", "c2t_nope", {0})', "f:f")


def test_lookup_overloads():
    assert lookup("max", ["int32", "int32"]).overload == "int32"
    assert lookup("max", ["float32", "float32"]).overload == "float32"
    assert lookup("max", ["float64"]).overload == "float64"
    assert lookup("max", ["int16"]).overload == "int32"          # C promotion
    assert lookup("max").overload == "int32"                     # default row first
    assert lookup("__hadd", ["float16", "float16"]).section == "half"
    assert lookup("__hadd", ["int32", "int32"]).section == "math"
    assert lookup("::expf").cuda == "expf"
    assert lookup("no_such_function") is None


# ------------------------------------------------------------------------------------ render
def test_render_examples():
    assert cuda_math.render("expf", ["x[i]"]) == "T.exp(x[i])"
    assert cuda_math.render("powf", ["a + b", "2.0"]) == "T.pow(a + b, 2.0)"
    assert cuda_math.render("rintf", ["x"]) == "T.nearbyint(x)"
    assert cuda_math.render("fmodf", ["a", "b"]) == "T.truncmod(a, b)"
    assert cuda_math.render("__hne", ["a", "b"]) == "(a < b) | (a > b)"


def test_render_precedence():
    assert cuda_math.render("__hadd", ["a * b", "c"], dtypes=["float16", "float16"]) == "a * b + c"
    assert cuda_math.render("__hmul", ["a + b", "c"]) == "(a + b) * c"
    assert cuda_math.render("__hneg", ["a - b"]) == "-(a - b)"
    assert cuda_math.render("atomicSub", ["acc[0]", "v - 1"]) == \
        "T.atomic_add(acc[0], -(v - 1), return_prev=True)"


def test_render_targets_and_casts():
    assert cuda_math.render("fmaxf", ["a", "b"]) == "T.max(a, b)"
    assert cuda_math.render("fmaxf", ["a", "b"], target="c") == \
        "T.call_extern('float32', 'c2t_fmaxf', T.cast(a, 'float32'), T.cast(b, 'float32'))"
    # known argument dtypes drop the no-op casts
    assert cuda_math.render("fmaxf", ["a", "b"], target="c", dtypes=["float32", "float32"]) == \
        "T.call_extern('float32', 'c2t_fmaxf', a, b)"
    assert cuda_math.render("__expf", ["x"]) == "T.__exp(x)"
    assert cuda_math.render("__expf", ["x"], target="c") == "T.exp(x)"
    assert cuda_math.render("expf", ["x"], target="c") == "T.exp(x)"  # cpu rows: same form
    assert cuda_math.render("atomicAdd", ["a[0]", "v"], statement=True) == "T.atomic_add(a[0], v)"
    assert cuda_math.render("max", ["a", "b"], dtypes=["int32", "int32"], target="c") == "T.max(a, b)"


def test_render_errors():
    with pytest.raises(cuda_math.UnsupportedCall, match="Texture"):
        cuda_math.render("tex2D", ["t", "x", "y"])
    with pytest.raises(cuda_math.UnsupportedCall, match="not in the CUDA compat table"):
        cuda_math.render("nosuch", ["x"])
    with pytest.raises(TypeError):
        cuda_math.render("expf", ["x", "y"])


@pytest.mark.parametrize("row", SUPPORTED, ids=lambda r: r.label)
def test_render_every_row_parses(row):
    import ast
    args = [f"a{i}[i]" for i in range(len(row.args))]
    for target in ("cuda", "c"):
        text = cuda_math.render(row.cuda, args, target=target, dtypes=list(row.args))
        ast.parse(text, mode="eval")
        for a, dt in zip(args, row.args):
            assert a in text or row.kind == "atomic" or dt == "str"


# ------------------------------------------------------------------------------------ cuda_math
def test_python_names():
    assert cuda_math.python_name("__expf") == "fast_expf"
    assert cuda_math.python_name("__popc") == "popc"
    assert cuda_math.python_name("std::exp") == "std_exp"
    assert cuda_math.python_name("__float2int_rn") == "float2int_rn"
    assert cuda_math.python_name("expf") == "expf"
    names = cuda_math.names()
    assert len(names) == len(set(names))
    assert {"expf", "fast_expf", "popc", "std_max", "max", "atomicAdd"} <= set(names)


def _args_for(row):
    import tilelang  # noqa: F401
    from tvm import tirx
    if row.kind == "atomic":
        buf = tirx.decl_buffer((4,), row.args[0], name="acc")
        return [tirx.BufferLoad(buf, [0])] + [tirx.Var(f"v{i}", dt) for i, dt in enumerate(row.args[1:])]
    out = []
    for i, dt in enumerate(row.args):
        if dt == "str":
            out.append("")
        elif dt.endswith("x2"):
            out.append(tirx.decl_buffer((2,), dt[:-2], name=f"lanes{i}"))
        else:
            out.append(tirx.Var(f"v{i}", dt))
    return out


@pytest.mark.parametrize("row", SUPPORTED, ids=lambda r: r.label)
def test_cuda_math_function_builds_expression(row):
    fn = getattr(cuda_math, cuda_math.python_name(row.cuda))
    for target in ("cuda", "c"):
        if target == "c" and "bfloat16" in (row.ret, *row.args) and not row.cpu:
            continue  # the CPU forms of bfloat16 rows take float32-held values
        expr = fn(*_args_for(row), target=target)
        want = {"bool": "bool"}.get(row.ret, row.ret)
        if row.kind == "expr":
            assert str(expr.dtype) == want, (target, expr)


def test_cuda_math_exact_cuda_spelling_and_target():
    import tilelang  # noqa: F401
    from tvm import tirx
    x = tirx.Var("x", "float32")
    assert str(cuda_math.__expf(x)) == str(cuda_math.fast_expf(x))
    assert "c2t_" not in str(cuda_math.fmaxf(x, 0.0))
    assert "c2t_fmaxf" in str(cuda_math.fmaxf(x, 0.0, target="c"))
    assert str(cuda_math.call("__expf", x)) == str(cuda_math.fast_expf(x))
    old = cuda_math.get_target()
    try:
        cuda_math.set_target("c")
        assert "c2t_fmaxf" in str(cuda_math.fmaxf(x, 1.0))
    finally:
        cuda_math.set_target(old)
    with pytest.raises(AttributeError, match="Texture"):
        cuda_math.tex2D  # noqa: B018


# ------------------------------------------------------------------------------------ externs
def test_prelude_helpers_are_guarded_and_complete():
    for target in ("c", "cuda"):
        text = cuda_math.prelude(target)
        for name in EXTERNS:
            assert f"#ifndef C2T_DEF_{name}" in text
        assert text.count("#define C2T_DEF_") == len(EXTERNS)
    assert 'extern "C" float c2t_expm1f(float x)' in cuda_math.prelude("c")
    assert "static __device__ __forceinline__ float c2t_expm1f(float x) { return expm1f(x); }" \
        in cuda_math.prelude("cuda")
    assert "tl_templates/cuda/common.h" in cuda_math.prelude("cuda")


def test_externs_for_selects_helpers():
    assert cuda_math.helper_names(["expf"], "c") == []
    assert cuda_math.helper_names(["fmaxf"], "c") == ["c2t_fmaxf"]
    assert cuda_math.helper_names(["fmaxf"], "cuda") == ["c2t_fmaxf"]  # CPU forms also valid on CUDA
    text = cuda_math.externs_for(["erfinvf", "__popc"], "c")
    assert "c2t_erfinvf" in text and "c2t___popc" in text and "C2T_SUPPORT_erfinv" in text
    assert "c2t_expm1f" not in text
    assert prelude_source([], "c").startswith("// cuda2tile compat helpers (target c)")


def test_extern_helpers_call_the_cuda_function():
    # the CUDA body of a helper behind a CUDA name is that CUDA function itself
    for row in SUPPORTED:
        for ext in row.extern:
            base = row.cuda.split("_block")[0].split("_system")[0]
            if ext.name.startswith("c2t_bf16_"):
                continue
            assert base in ext.cuda or base.rstrip("f") in ext.cuda, (row.label, ext.cuda)


def test_status_semantics():
    assert all(r.status in (EXACT, APPROX, UNSUPPORTED) for r in ROWS)
    fast = [r for r in ROWS if r.fast_math and r.status is not UNSUPPORTED]
    assert fast and all(r.note for r in fast)
    assert lookup("__expf").fast_math and not lookup("__expf").cpu


def test_round_frac_reference_helper():
    from fractions import Fraction
    import numpy as np
    rf = numpy_ref.round_frac
    assert rf(Fraction(1, 3), "float32") == np.float32(1 / 3)
    third = Fraction(1, 3)
    assert rf(third, "float32", "rz") < third < rf(third, "float32", "ru")
    assert rf(Fraction(2049), "float16") == np.float16(2048)  # tie to even
    assert rf(Fraction(2051), "float16") == np.float16(2052)
    assert rf(Fraction(10**40), "float32") == np.float32(np.inf)
    assert rf(Fraction(10**40), "float32", "rz") == np.finfo(np.float32).max
