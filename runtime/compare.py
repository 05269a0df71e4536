"""Output comparison with dtype-aware tolerance classes.

An element passes when ``|actual - expected| <= atol + rtol * |expected|``, where ``atol`` is
``atol_scale * S`` and ``S`` is the magnitude scale of the output: by default the largest
finite ``|expected|`` of the whole output (so values that cancel to almost zero are judged
against the size of what was computed), or, when the caller knows it, the magnitude of the
summed terms (``scale=``, a number or a per-element array such as ``sum |terms|``).

============ ======== ============ ==================================================
class        rtol     atol_scale   meant for
============ ======== ============ ==================================================
exact        0        0            integers; floats that must be bit-identical
fp32         1e-5     1e-6         float32 elementwise math
fp32_accum   1e-4     1e-5         float32 sums whose order may change (reductions)
fp64         1e-12    1e-13        float64 math
fp16         2e-3     1e-3         results stored as half (2 ulp)
bf16         1.6e-2   8e-3         results stored as bfloat16 (2 ulp)
tf32         5e-3     2e-3         float32 products on tensor cores (10-bit mantissas)
============ ======== ============ ==================================================

Integer outputs are always compared exactly, whatever the class. NaN equals nothing, except a
NaN the kernel computed where the reference expects NaN; an element that still holds the
poison pattern written before the run (see :mod:`.inputs`) never passes: an unwritten output
fails even where a NaN is expected. Infinities must match in sign.

    >>> r = compare_arrays(expected, actual, "float32", "fp32", name="y")
    >>> r.passed, r.max_abs_err, r.max_rel_err, r.first_bad_index
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .inputs import is_poison
from .spec import FLOAT_DTYPES, INT_DTYPES, KernelSpec, TOLERANCE_CLASSES

__all__ = ["Tolerance", "TOLERANCES", "CompareResult", "compare_arrays", "compare_chunked", "compare_outputs",
           "all_passed"]


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol_scale: float


TOLERANCES: dict[str, Tolerance] = {
    "exact": Tolerance(0.0, 0.0),
    "fp32": Tolerance(1e-5, 1e-6),
    "fp32_accum": Tolerance(1e-4, 1e-5),
    "fp64": Tolerance(1e-12, 1e-13),
    "fp16": Tolerance(2e-3, 1e-3),
    "bf16": Tolerance(1.6e-2, 8e-3),
    "tf32": Tolerance(5e-3, 2e-3),
}
assert set(TOLERANCES) == set(TOLERANCE_CLASSES)


@dataclass
class CompareResult:
    """The verdict on one output."""

    name: str
    dtype: str
    tolerance: str
    passed: bool
    n: int = 0                       # elements compared
    n_bad: int = 0
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    first_bad_index: int | None = None
    expected_value: object = None    # at first_bad_index
    actual_value: object = None
    n_unwritten: int = 0             # elements still holding the poison
    message: str = ""

    def __str__(self) -> str:
        return self.message


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.9g}"
    return str(v)


def compare_arrays(expected, actual, dtype: str, tolerance: str = "fp32", name: str = "output",
                   scale=None, check_poison: bool = True) -> CompareResult:
    """Compare one output (flat arrays; ``actual`` in the holder dtype of ``dtype``)."""
    if tolerance not in TOLERANCES:
        raise ValueError(f"unknown tolerance class {tolerance!r}")
    act = np.asarray(actual).reshape(-1)
    exp = np.asarray(expected).reshape(-1)
    res = CompareResult(name=name, dtype=dtype, tolerance=tolerance, passed=False)
    notes = []
    if exp.size > act.size:
        res.message = (f"{name}: the reference has {exp.size} elements but the output only {act.size}")
        return res
    if exp.size < act.size:
        notes.append(f"only the first {exp.size} of {act.size} elements are checked")
        act = act[:exp.size]
    n = exp.size
    res.n = n
    poison = is_poison(act, dtype) if (check_poison and dtype in (FLOAT_DTYPES | INT_DTYPES)) else np.zeros(n, bool)
    res.n_unwritten = int(poison.sum())

    if dtype in INT_DTYPES or (exp.dtype.kind in "iub" and act.dtype.kind in "iub"):
        e_int = _as_int(exp)
        if e_int is None:
            res.message = f"{name}: integer output but the reference holds non-integral values"
            return res
        a_int = act.astype(np.int64) if act.dtype != np.uint64 else act
        if act.dtype == np.uint64 or e_int.dtype == np.uint64:
            bad = a_int.astype(np.uint64) != e_int.astype(np.uint64)
            diff = np.where(bad, 1.0, 0.0)
        else:
            bad = a_int != e_int
            diff = np.abs(a_int.astype(np.float64) - e_int.astype(np.float64))
        # Integer sentinels can be legitimate results (int8 has 256 values), so an integer element
        # is judged by its value; the poison only explains a mismatch as "never written".
        poison = poison & bad
        res.n_unwritten = int(poison.sum())
        res.max_abs_err = float(diff.max()) if n else 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(e_int != 0, diff / np.abs(e_int.astype(np.float64)), np.where(diff > 0, np.inf, 0.0))
        res.max_rel_err = float(rel.max()) if n else 0.0
        return _finish(res, bad, exp, act, poison, "exact", notes)

    e = exp.astype(np.float64)
    a = act.astype(np.float64)
    tol = TOLERANCES[tolerance]
    e_nan, a_nan = np.isnan(e), np.isnan(a)
    e_inf, a_inf = np.isinf(e), np.isinf(a)
    finite = ~(e_nan | a_nan | e_inf | a_inf)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(finite, np.abs(a - e), 0.0)
        if scale is None:
            fin_e = np.abs(e[np.isfinite(e)])
            S = float(fin_e.max()) if fin_e.size else 0.0
        else:
            S = np.abs(np.asarray(scale, dtype=np.float64)).reshape(-1)
            if S.size not in (1, n):
                raise ValueError(f"scale has {S.size} elements, expected 1 or {n}")
        atol = tol.atol_scale * S
        if tolerance == "exact":
            ok = (a == e)
        else:
            ok = diff <= atol + tol.rtol * np.abs(e)
        ok = np.where(finite, ok, False)
        ok |= e_nan & a_nan
        ok |= e_inf & a_inf & (np.sign(e) == np.sign(a))
    bad = ~ok | poison
    fin = finite
    res.max_abs_err = float(diff[fin].max()) if fin.any() else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(fin & (e != 0), diff / np.abs(e), np.where(fin & (diff > 0), np.inf, 0.0))
    res.max_rel_err = float(rel.max()) if n else 0.0
    if (bad & ~finite).any():
        res.max_abs_err = res.max_rel_err = float("inf")
    desc = f"{tolerance} (rtol {tol.rtol:g}, atol {float(np.max(atol)) if np.size(atol) else 0.0:.3g})"
    return _finish(res, bad, exp, act, poison, desc, notes)


def _as_int(exp: np.ndarray):
    if exp.dtype.kind in "iub":
        return exp
    if exp.dtype.kind == "f":
        if not np.all(np.isfinite(exp)) or not np.all(exp == np.round(exp)):
            return None
        return exp.astype(np.int64)
    return None


def _finish(res: CompareResult, bad: np.ndarray, exp, act, poison, desc: str, notes) -> CompareResult:
    res.n_bad = int(bad.sum())
    res.passed = res.n_bad == 0
    first_poison = False
    if not res.passed:
        i = int(np.argmax(bad))
        res.first_bad_index = i
        res.expected_value = exp[i].item() if hasattr(exp[i], "item") else exp[i]
        res.actual_value = act[i].item() if hasattr(act[i], "item") else act[i]
        first_poison = bool(poison[i])
    res.message = _message(res, desc, notes, first_poison)
    return res


def _message(res: CompareResult, desc: str, notes, first_poison: bool) -> str:
    if not res.passed:
        parts = [f"{res.name}: {res.n_bad} of {res.n} elements differ beyond {desc}"]
        if res.n_unwritten:
            parts.append(f"{res.n_unwritten} never written (still poison)")
        where = "never written" if first_poison else f"got {_fmt(res.actual_value)}"
        parts.append(f"first at [{res.first_bad_index}]: expected {_fmt(res.expected_value)}, {where}")
        parts.append(f"max abs err {res.max_abs_err:.3g}, max rel err {res.max_rel_err:.3g}")
        return "; ".join(parts + list(notes))
    return (f"{res.name}: {res.n} elements match ({desc}); max abs err {res.max_abs_err:.3g}, "
            f"max rel err {res.max_rel_err:.3g}" + ("; " + "; ".join(notes) if notes else ""))


#: elements :func:`compare_chunked` compares at a time
CHUNK = 1 << 22


def compare_chunked(expected, actual, dtype: str, tolerance: str = "fp32", name: str = "output",
                    chunk: int = CHUNK) -> CompareResult:
    """:func:`compare_arrays` with no poison check, for outputs of any size: outputs equal bit for
    bit pass at once; others are compared ``chunk`` elements at a time against the scale of the
    whole output, so the verdict, the errors and the first bad element are those
    :func:`compare_arrays` gives, with a working set of a few chunks instead of several copies of
    the whole output in float64."""
    exp = np.asarray(expected).reshape(-1)
    act = np.asarray(actual).reshape(-1)
    if tolerance not in TOLERANCES:
        raise ValueError(f"unknown tolerance class {tolerance!r}")
    if exp.size > act.size:
        return compare_arrays(exp, act, dtype, tolerance, name=name, check_poison=False)
    notes = [f"only the first {exp.size} of {act.size} elements are checked"] if exp.size < act.size else []
    act = act[:exp.size]
    n = exp.size
    if exp.dtype == act.dtype and exp.dtype.kind in "iubf" and all(
            np.array_equal(exp[i:i + chunk].view(np.uint8), act[i:i + chunk].view(np.uint8))
            for i in range(0, n, chunk)):
        res = CompareResult(name=name, dtype=dtype, tolerance=tolerance, passed=True, n=n)
        res.message = f"{name}: {n} elements match bit for bit" + ("; " + "; ".join(notes) if notes else "")
        return res
    if n <= chunk:
        return compare_arrays(exp, act, dtype, tolerance, name=name, check_poison=False)
    integral = dtype in INT_DTYPES or (exp.dtype.kind in "iub" and act.dtype.kind in "iub")
    scale = None
    if not integral:
        scale = 0.0
        for i in range(0, n, chunk):
            part = np.abs(exp[i:i + chunk].astype(np.float64))
            part = part[np.isfinite(part)]
            scale = max(scale, float(part.max()) if part.size else 0.0)
    tol = TOLERANCES[tolerance]
    desc = "exact" if integral else f"{tolerance} (rtol {tol.rtol:g}, atol {tol.atol_scale * scale:.3g})"
    res = CompareResult(name=name, dtype=dtype, tolerance=tolerance, passed=True, n=n)
    for i in range(0, n, chunk):
        r = compare_arrays(exp[i:i + chunk], act[i:i + chunk], dtype, tolerance, name=name, scale=scale,
                           check_poison=False)
        if not r.passed and r.first_bad_index is None:  # a chunk that cannot be compared at all
            r.message = r.message.replace(f"{name}:", f"{name} (elements {i}..):", 1)
            return r
        res.n_bad += r.n_bad
        res.max_abs_err = max(res.max_abs_err, r.max_abs_err)
        res.max_rel_err = max(res.max_rel_err, r.max_rel_err)
        if not r.passed and res.first_bad_index is None:
            res.first_bad_index = i + r.first_bad_index
            res.expected_value, res.actual_value = r.expected_value, r.actual_value
    res.passed = res.n_bad == 0
    res.message = _message(res, desc, notes, False)
    return res


def compare_outputs(kernel: KernelSpec, expected: dict, actual: dict, tolerance: str | None = None,
                    scales: dict | None = None) -> list[CompareResult]:
    """Compare every ``out``/``inout`` buffer of ``kernel``; missing ones fail."""
    tolerance = tolerance or kernel.tolerance
    results = []
    for a in kernel.outputs:
        if a.name not in expected:
            results.append(CompareResult(name=a.name, dtype=a.dtype, tolerance=tolerance, passed=False,
                                         message=f"{a.name}: the reference gives no expected value"))
            continue
        if a.name not in actual:
            results.append(CompareResult(name=a.name, dtype=a.dtype, tolerance=tolerance, passed=False,
                                         message=f"{a.name}: the run produced no value"))
            continue
        results.append(compare_arrays(expected[a.name], actual[a.name], a.dtype, tolerance, name=a.name,
                                      scale=(scales or {}).get(a.name)))
    return results


def all_passed(results) -> bool:
    return all(r.passed for r in results)
