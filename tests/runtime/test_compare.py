"""Output comparison (runtime/compare.py): tolerance classes, NaN, poison."""
from __future__ import annotations

import numpy as np
import pytest

from migrate.runtime.compare import TOLERANCES, compare_arrays, compare_outputs
from migrate.runtime.inputs import bits_to_bf16, poison_array, round_to_bf16
from migrate.runtime.spec import parse_spec


def test_exact_integers():
    e = np.arange(10, dtype=np.int64)
    a = e.astype(np.int32)
    r = compare_arrays(e, a, "int32", "exact", name="h")
    assert r.passed and r.max_abs_err == 0 and r.first_bad_index is None
    a[6] += 2
    r = compare_arrays(e, a, "int32", "exact", name="h")
    assert not r.passed and r.first_bad_index == 6 and r.n_bad == 1 and r.max_abs_err == 2
    assert "h: 1 of 10" in r.message and "[6]" in r.message
    # integer outputs are exact whatever the class
    assert not compare_arrays(e, a, "int32", "fp32").passed


def test_integer_expected_as_float():
    assert compare_arrays(np.array([1.0, 2.0]), np.array([1, 2], np.int32), "int32").passed
    r = compare_arrays(np.array([1.5, 2.0]), np.array([1, 2], np.int32), "int32")
    assert not r.passed and "non-integral" in r.message


def test_uint64_large_values():
    e = np.array([2**64 - 1, 2**63], dtype=np.uint64)
    assert compare_arrays(e, e.copy(), "uint64", "exact").passed
    a = e.copy()
    a[1] -= np.uint64(1)
    assert not compare_arrays(e, a, "uint64", "exact").passed


def test_fp32_tolerance():
    e = np.linspace(-10, 10, 1001)
    a = (e * (1 + 5e-6)).astype(np.float32)
    r = compare_arrays(e, a, "float32", "fp32")
    assert r.passed, r.message
    assert 0 < r.max_rel_err < 1e-5
    a2 = (e * (1 + 5e-5)).astype(np.float32)
    r2 = compare_arrays(e, a2, "float32", "fp32")
    assert not r2.passed and r2.max_rel_err > 1e-5
    # near zero the absolute tolerance scales with the output's magnitude
    e3 = np.array([100.0, 1e-9])
    a3 = np.array([100.0, 5e-5], dtype=np.float32)
    assert compare_arrays(e3, a3, "float32", "fp32").passed
    assert not compare_arrays(e3, np.array([100.0, 5e-3], np.float32), "float32", "fp32").passed


def test_accum_is_looser_and_takes_a_scale():
    e = np.array([1.0, 2.0, 3.0])
    a = (e * (1 + 5e-5)).astype(np.float32)
    assert not compare_arrays(e, a, "float32", "fp32").passed
    assert compare_arrays(e, a, "float32", "fp32_accum").passed
    # a sum that cancels: judged against the magnitude of its terms when given
    e2 = np.array([1e-3])
    a2 = np.array([1.5e-3], np.float32)
    assert not compare_arrays(e2, a2, "float32", "fp32_accum").passed
    assert compare_arrays(e2, a2, "float32", "fp32_accum", scale=1000.0).passed


def test_exact_float_means_equal():
    e = np.array([1.0, -0.0, 2.5])
    assert compare_arrays(e, np.array([1.0, 0.0, 2.5], np.float32), "float32", "exact").passed
    assert not compare_arrays(e, np.array([1.0, 0.0, np.nextafter(np.float32(2.5), 3)], np.float32),
                              "float32", "exact").passed


def test_nan_rules():
    e = np.array([1.0, np.nan, 3.0])
    ok = np.array([1.0, np.nan, 3.0], dtype=np.float32)
    assert compare_arrays(e, ok, "float32", "fp32").passed          # computed NaN where NaN expected
    r = compare_arrays(e, np.array([1.0, 2.0, 3.0], np.float32), "float32", "fp32")
    assert not r.passed and r.first_bad_index == 1
    r = compare_arrays(np.array([1.0, 2.0]), np.array([np.nan, 2.0], np.float32), "float32", "fp32")
    assert not r.passed and r.first_bad_index == 0 and r.max_abs_err == float("inf")


def test_poisoned_output_never_passes():
    for dtype, tol in [("float32", "fp32"), ("float64", "fp64"), ("float16", "fp16"), ("bfloat16", "bf16")]:
        a = poison_array(dtype, 4)
        e = np.full(4, np.nan)        # even where NaN is expected
        r = compare_arrays(e, a, dtype, tol, name="out")
        assert not r.passed and r.n_unwritten == 4, dtype
        assert "never written" in r.message
        part = a.copy()
        part[:2] = 1.0
        r = compare_arrays(np.array([1.0, 1.0, 5.0, 5.0]), part, dtype, tol)
        assert not r.passed and r.first_bad_index == 2 and r.n_unwritten == 2


def test_integer_poison_explains_mismatch_only():
    # int8's sentinel is a legitimate value: judged by value, poison only explains a mismatch
    p = poison_array("int8", 3)
    assert compare_arrays(p.astype(np.int64), p, "int8", "exact").passed
    r = compare_arrays(np.array([1, 2, 3]), p, "int8", "exact")
    assert not r.passed and r.n_unwritten == 3 and "never written" in r.message


def test_infinities():
    e = np.array([np.inf, -np.inf])
    assert compare_arrays(e, np.array([np.inf, -np.inf], np.float32), "float32", "fp32").passed
    assert not compare_arrays(e, np.array([np.inf, np.inf], np.float32), "float32", "fp32").passed
    assert not compare_arrays(e, np.array([3e38, -np.inf], np.float32), "float32", "fp32").passed


def test_half_classes():
    e = np.linspace(-4, 4, 257)
    a16 = e.astype(np.float16)
    assert compare_arrays(e, a16, "float16", "fp16").passed
    wrong = (e * 1.01).astype(np.float16)
    assert not compare_arrays(e, wrong, "float16", "fp16").passed
    ab = round_to_bf16(e.astype(np.float32))
    assert compare_arrays(e, ab, "bfloat16", "bf16").passed
    assert not compare_arrays(e, round_to_bf16((e * 1.05).astype(np.float32)), "bfloat16", "bf16").passed
    assert compare_arrays(e, (e * (1 + 2e-3)).astype(np.float32), "float32", "tf32").passed
    assert not compare_arrays(e, (e * (1 + 2e-2)).astype(np.float32), "float32", "tf32").passed


def test_lengths():
    r = compare_arrays(np.ones(3), np.ones(5, np.float32), "float32", "fp32")
    assert r.passed and "first 3 of 5" in r.message
    r = compare_arrays(np.ones(6), np.ones(5, np.float32), "float32", "fp32")
    assert not r.passed and "only 5" in r.message


def test_classes_are_ordered():
    assert TOLERANCES["fp32"].rtol < TOLERANCES["fp32_accum"].rtol < TOLERANCES["fp16"].rtol < TOLERANCES["bf16"].rtol
    assert TOLERANCES["fp64"].rtol < TOLERANCES["fp32"].rtol
    with pytest.raises(ValueError):
        compare_arrays(np.ones(1), np.ones(1), "float32", "sloppy")


def test_compare_outputs_uses_the_spec():
    (k,) = parse_spec("""
[[kernel]]
name = "k"
grid = [1]
block = [1]
tolerance = "fp32"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 2
role = "in"
range = [0.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 2
role = "out"
[[kernel.args]]
name = "h"
buffer = "int32"
elements = 2
role = "inout"
range = [0, 9]
""")
    res = compare_outputs(k, {"y": [1.0, 2.0], "h": [3, 4]},
                          {"y": np.array([1.0, 2.0], np.float32), "h": np.array([3, 5], np.int32)})
    assert [r.name for r in res] == ["y", "h"]
    assert res[0].passed and not res[1].passed
    res = compare_outputs(k, {"y": [1.0, 2.0]}, {"y": np.array([1.0, 2.0], np.float32)})
    assert not res[1].passed and "no expected value" in res[1].message


def test_a_chunked_comparison_gives_the_verdict_of_the_whole():
    from migrate.runtime.compare import compare_chunked

    rng = np.random.default_rng(7)
    e = rng.standard_normal(10_000).astype(np.float32) * 100
    e[17] = np.nan
    a = e.copy()
    a[[3000, 7001]] += np.float32(1.0)  # beyond fp32_accum at this scale (atol ~ 1e-5 * max |e|)
    a[9000] += np.float32(1e-7) * abs(a[9000])  # within it
    whole = compare_arrays(e, a, "float32", "fp32_accum", name="y", check_poison=False)
    part = compare_chunked(e, a, "float32", "fp32_accum", name="y", chunk=1024)
    assert not whole.passed and not part.passed
    assert (part.n_bad, part.first_bad_index, part.max_abs_err, part.max_rel_err) == \
        (whole.n_bad, whole.first_bad_index, whole.max_abs_err, whole.max_rel_err) == (2, 3000, 1.0, whole.max_rel_err)
    assert part.message == whole.message
    a[[3000, 7001]] = e[[3000, 7001]]
    ok = compare_chunked(e, a, "float32", "fp32_accum", name="y", chunk=1024)
    assert ok.passed and ok.message == compare_arrays(e, a, "float32", "fp32_accum", name="y",
                                                      check_poison=False).message


def test_equal_bits_pass_at_once_and_integers_are_exact_in_chunks():
    from migrate.runtime.compare import compare_chunked

    e = np.arange(5000, dtype=np.int32) * 3
    r = compare_chunked(e, e.copy(), "int32", "exact", name="h", chunk=512)
    assert r.passed and r.n == 5000 and "bit for bit" in r.message
    a = e.copy()
    a[4097] += 1
    r = compare_chunked(e, a, "int32", "exact", name="h", chunk=512)
    assert not r.passed and r.first_bad_index == 4097 and r.n_bad == 1 and r.expected_value == 4097 * 3
    short = compare_chunked(e, a[:10], "int32", "exact", name="h", chunk=512)
    assert not short.passed and "only 10" in short.message
