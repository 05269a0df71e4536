"""Every compat row, run on TileLang's CPU ``c`` target against a numpy model of CUDA.

One test per row. To keep the suite fast the rows of one signature share a kernel (row ``j``
writes output row ``j``; the kernels are compiled in parallel threads and cached on disk under
``TILELANG_CACHE_DIR``); when a shared kernel fails to build, the row's test compiles the row on
its own so the error names the row. ``test_row_isolated_on_c`` (slow) builds one tiny kernel per
row, as the emitter would emit it.

Tolerance: bit-exact (including the sign of zero) for rows whose CUDA function is correctly
rounded (``ulp == 0``); otherwise CUDA's documented ULP bound plus the reference's own rounding.
"""
from __future__ import annotations

import dataclasses
import os
from concurrent.futures import ThreadPoolExecutor

from migrate.compat import verify

os.environ.setdefault("TILELANG_CACHE_DIR", verify.default_cache_dir())

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from migrate.compat import cuda_math, numpy_ref  # noqa: E402
from migrate.compat.table import ROWS, UNSUPPORTED, lookup  # noqa: E402

SUPPORTED = [r for r in ROWS if r.status is not UNSUPPORTED]
GROUPS = verify.cpu_groups(SUPPORTED)
GROUP_OF = {r.label: key for key, rows in GROUPS.items() for r in rows}


def _selected_labels(session) -> set[str]:
    labels = set()
    for item in session.items:
        spec = getattr(item, "callspec", None)
        if spec is not None and item.originalname == "test_row_on_c" and "row" in spec.params:
            labels.add(spec.params["row"].label)
    return labels


@pytest.fixture(scope="module")
def cpu_results(request):
    """Per group: {label: output} from the shared kernel, or the exception that stopped it."""
    keys = sorted({GROUP_OF[label] for label in _selected_labels(request.session)})

    # parse here (the TileLang parser keeps global state), compile (g++) in a thread pool
    funcs = {}
    for key in keys:
        try:
            funcs[key] = verify.load_prim_func(verify.cpu_batch_source(GROUPS[key]))
        except Exception as exc:  # reported per row below
            funcs[key] = exc

    def build(key):
        if isinstance(funcs[key], Exception):
            return funcs[key]
        try:
            return verify.compile_cpu_batch(GROUPS[key], funcs[key])
        except Exception as exc:  # reported per row below
            return exc

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        kernels = dict(zip(keys, pool.map(build, keys)))
    results = {}
    for key, kernel in kernels.items():
        rows = GROUPS[key]
        if isinstance(kernel, Exception):
            results[key] = kernel
            continue
        try:
            outs = verify.run_cpu_batch(kernel, rows, [numpy_ref.inputs(r) for r in rows])
            results[key] = {r.label: out for r, out in zip(rows, outs)}
        except Exception as exc:
            results[key] = exc
    return results


def _check(row, got, ins):
    bad = verify.check_row(row, got, ins)
    assert not bad, f"{row.label} ({row.tilelang!r} / c form {row.form('c')!r}):\n  " + "\n  ".join(bad)


@pytest.mark.parametrize("row", SUPPORTED, ids=lambda r: r.label)
def test_row_on_c(row, cpu_results):
    ins = numpy_ref.inputs(row)
    res = cpu_results[GROUP_OF[row.label]]
    if isinstance(res, Exception):
        kernel = verify.compile_cpu(row)  # raises this row's own error if the row is the cause
        got = verify.run_cpu(kernel, row, ins)
    else:
        got = res[row.label]
    _check(row, got, ins)


@pytest.mark.slow
@pytest.mark.parametrize("row", SUPPORTED, ids=lambda r: r.label)
def test_row_isolated_on_c(row, request):
    """One tiny kernel per row, with only its own helpers (~5 min cold on 2 cores, cached
    afterwards). Opt-in: runs when selected with ``-m slow``."""
    if "slow" not in (request.config.getoption("markexpr") or "").replace("not slow", ""):
        pytest.skip("isolated per-row kernels: select with -m slow")
    ins = numpy_ref.inputs(row)
    _check(row, verify.run_cpu(verify.compile_cpu(row), row, ins), ins)


# ------------------------------------------------------------------------------ the harness itself
@pytest.mark.parametrize("name, wrong, why", [
    ("fmaxf", "T.max({0}, {1})", "T.max on c returns the second operand when one is NaN"),
    ("rintf", "T.round({0})", "T.round on c is C round (half away from zero)"),
    ("__float2int_rn", 'T.cast({0}, "int32")', "a plain cast truncates"),
    ("atanhf", "T.atan({0})", "a different function"),
])
def test_harness_catches_wrong_forms(name, wrong, why):
    row = dataclasses.replace(lookup(name), tilelang=wrong, cpu=True, cpu_form=None)
    ins = numpy_ref.inputs(row)
    got = verify.run_cpu(verify.compile_cpu(row), row, ins)
    assert verify.check_row(row, got, ins), why


def test_full_c_prelude_compiles_and_runs():
    """All extern helpers in one prelude (as cuda_math.prelude('c') hands them out)."""
    import tilelang
    import tilelang.language as T
    import torch

    src = (
        "import tilelang.language as T\n"
        f"PRELUDE = {cuda_math.prelude('c')!r}\n"
        "@T.prim_func\n"
        "def kernel(A: T.Tensor((8,), 'float32'), B: T.Tensor((8,), 'float32')):\n"
        "    with T.Kernel(1, prelude=PRELUDE):\n"
        "        for i in T.Parallel(8):\n"
        f"            B[i] = {cuda_math.render('erfinvf', ['A[i]'])}\n"
    )
    kernel = tilelang.compile(verify.load_prim_func(src), out_idx=[1], target="c",
                              pass_configs=verify.CPU_PASS_CONFIGS)
    x = np.linspace(-0.9, 0.9, 8, dtype=np.float32)
    got = kernel(torch.from_numpy(x)).numpy()
    want = numpy_ref.reference(lookup("erfinvf"), x)
    assert not verify.mismatches(got, want, 3, zero_sign=False)
    assert T is not None


def test_cuda_math_in_handwritten_kernel_on_c():
    """The documented use: cuda_math functions inside a hand-written TileLang kernel."""
    import tilelang
    import tilelang.language as T
    import torch

    n = 16
    prelude = cuda_math.prelude("c")
    old = cuda_math.get_target()
    cuda_math.set_target("c")  # the functions pick their c forms while the kernel is parsed
    try:
        @T.prim_func
        def kernel(X: T.Tensor((n,), "float32"), K: T.Tensor((n,), "int32"),
                   Y: T.Tensor((n,), "float32")):
            with T.Kernel(1, prelude=prelude):
                for i in T.Parallel(n):
                    Y[i] = (cuda_math.fmaxf(X[i], 0.0) + cuda_math.rintf(X[i])
                            + T.cast(cuda_math.popc(K[i]), "float32"))
    finally:
        cuda_math.set_target(old)
    compiled = tilelang.compile(kernel, out_idx=[2], target="c", pass_configs=verify.CPU_PASS_CONFIGS)
    x = np.array([-2.5, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, np.nan, 3.7, -3.7, 1e30, -1e30, 7, 8, 9, 10],
                 dtype=np.float32)
    k = np.arange(n, dtype=np.int32) * 37 - 200
    got = compiled(torch.from_numpy(x), torch.from_numpy(k)).numpy()
    popc = np.array([bin(v & 0xFFFFFFFF).count("1") for v in k.tolist()], dtype=np.float32)
    want = np.fmax(x, np.float32(0)) + np.rint(x) + popc
    assert not verify.mismatches(got, want.astype(np.float32), 0, zero_sign=False)
