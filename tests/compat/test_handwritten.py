"""Hybrid projects' hand-written side (issue 16): the math shim and the launcher support that
emitted modules import work in a process that has none of the converter's dependencies (no
libclang, jinja2 or rich), as in a project that only runs TileLang. Each case runs in a child
process whose import system refuses those (a meta-path hook: ``import clang`` raises ImportError)
and cuda2tile's converter packages. tests/test_architecture.py checks the same statically: the
import closure of what emitted modules import never reaches the converter."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np

from migrate.runtime.compare import compare_arrays
from tests.paths import CORPUS, REPO

#: the child's first lines: importing the converter's dependencies or its packages raises ImportError
#: (and is recorded: nothing on the normal paths may even try)
BLOCK = textwrap.dedent("""
    import importlib.abc, sys
    BLOCKED = ("clang", "jinja2", "rich", "migrate.parse", "migrate.analysis", "migrate.emit", "migrate.convert",
               "migrate.pipeline")
    TRIED = []

    class NoConverter(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name in BLOCKED or name.startswith(tuple(b + "." for b in BLOCKED)):
                TRIED.append(name)
                raise ImportError(f"{name}: not installed in this process (tests/compat/test_handwritten.py)")
            return None

    sys.meta_path.insert(0, NoConverter())
""")


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK + textwrap.dedent(code), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=600)


def test_the_blocked_imports_really_fail():
    for name in ("clang", "clang.cindex", "jinja2", "rich", "migrate.parse", "migrate.analysis.lift", "migrate.emit"):
        r = _run(f"import {name}\n")
        assert r.returncode != 0 and "ImportError" in r.stderr and "not installed in this process" in r.stderr, \
            (name, r.stderr)


def test_a_hand_written_kernel_calls_cuda_math_without_the_converter():
    r = _run("""
        import runpy
        sys.argv = ["handwritten_math.py", "--n", "1000"]
        try:
            runpy.run_path("examples/handwritten_math.py", run_name="__main__")
        except SystemExit as e:
            assert not e.code, e.code
        print("tried:", TRIED)
    """)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "c: gelu max rel err" in r.stdout and "PASS" in r.stdout, r.stdout
    assert "tried: []" in r.stdout, r.stdout


def test_the_hand_written_kernel_lowers_for_sm90a_calling_the_cuda_functions():
    """Without a GPU: TileLang's CUDA source for an H100 (sm_90a) calls CUDA's own functions,
    ``__popc`` and ``__fdividef`` through the prelude's helpers."""
    r = _run("""
        import json, runpy
        example = runpy.run_path("examples/handwritten_math.py")
        print(json.dumps({"source": example["cuda_source"](1000), "calls": example["CUDA_CALLS"], "tried": TRIED}))
    """)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    source, tried = out["source"], out["tried"]
    assert tried == [] and set(out["calls"]) == {"erff", "rsqrtf", "__expf", "__fdividef", "__popc"}
    kernel = source[source.index("__launch_bounds__"):]
    for call in ("erff(", "rsqrtf(", "__expf(", "c2t___fdividef(", "c2t___popc("):
        assert call in kernel, (call, kernel)
    assert "c2t___fdividef(float x, float y) { return __fdividef(x, y); }" in source
    assert "c2t___popc(unsigned int x) { return __popc(x); }" in source
    assert "expf(" not in kernel.replace("__expf(", "")  # the fast form, not expf


#: the corpus programs converted in the parent and run in the child: a portable kernel (shared
#: memory, atomics; both thread orders of the C target), a half kernel calling the shim
#: (``cuda_math.hfma``), a kernel with an extern helper prelude (``cuda_math.externs_for``)
PROGRAMS = ("histogram/histogram.cu", "precision/half_ops.cu", "features/device_functions.cu")

CHILD = """
    import importlib.util
    import numpy as np
    out, inputs = sys.argv[1], dict(np.load(sys.argv[2]))

    def load(rel):
        spec = importlib.util.spec_from_file_location(rel.replace("/", "_"), f"{out}/{rel}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    histogram, half_ops, device_functions = (load(p) for p in ("histogram/histogram", "precision/half_ops",
                                                                 "features/device_functions"))
    from migrate.runtime import tilelang_support
    results = {}
    for schedule in ("forward", "reverse"):
        tilelang_support.set_cpu_schedule(schedule)
        bins = inputs["bins"].copy()
        histogram.histogram256Shared(inputs["data"], bins, len(inputs["data"]), grid=5, block=128, target="c")
        results["bins_" + schedule] = bins
    tilelang_support.set_cpu_schedule("forward")
    n = int(inputs["n"])
    hy = inputs["hy"].copy()
    half_ops.half_axpby(n, 1.5, inputs["hx"], -0.5, hy, grid=(n + 255) // 256, block=256, target="c")
    results["hy"] = hy
    px, coeffs = inputs["px"], inputs["coeffs"]
    py = np.full(len(px), np.nan, np.float32)
    device_functions.poly_soft_clip(px, coeffs, py, len(px), len(coeffs) - 1, 2.0,
                                    grid=(len(px) + 255) // 256, block=256, target="c")
    results["py"] = py
    np.savez(f"{out}/results.npz", **results)
    print("tried:", TRIED)
    print("loaded:", sorted(m for m in sys.modules if m.startswith("migrate")))
"""


def _convert(tmp_path):
    from migrate.cli import main

    out = tmp_path / "out"
    assert main(["convert", *(str(CORPUS / p) for p in PROGRAMS), "-o", str(out), "-q", "--jobs", "1"]) == 0
    return out


def _horner_soft_clip(x, coeffs, limit):
    """``limit * tanhf(horner(coeffs, x) / limit)``: Horner with fmaf rounded to float32 at each
    step (a float32 product is exact in float64, so one float64 fma rounds as fmaf does), the
    division in float32, tanh in float64."""
    acc = np.full(x.shape, coeffs[0], np.float32)
    for c in coeffs[1:]:
        acc = (acc.astype(np.float64) * x.astype(np.float64) + np.float64(c)).astype(np.float32)
    return limit * np.tanh((acc / np.float32(limit)).astype(np.float64))


def test_converted_corpus_modules_run_on_the_cpu_without_the_converter(tmp_path):
    out = _convert(tmp_path)
    rng = np.random.default_rng(16)
    data = rng.integers(0, 256, 7001).astype(np.uint8)
    start = rng.integers(1, 50, 256).astype(np.uint32)  # the kernel adds to the bins: they start non-zero
    n = 3001
    hx = rng.uniform(-4, 4, n + 99).astype(np.float16)
    hy = rng.uniform(-4, 4, n + 99).astype(np.float16)
    hy[n:] = 7.0  # past n: never written
    px = rng.uniform(-1, 1, 2999).astype(np.float32)
    coeffs = rng.uniform(-1, 1, 6).astype(np.float32)
    np.savez(tmp_path / "inputs.npz", data=data, bins=start, n=n, hx=hx, hy=hy, px=px, coeffs=coeffs)

    r = _run(CHILD, str(out), str(tmp_path / "inputs.npz"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tried: []" in r.stdout, r.stdout
    loaded = r.stdout.split("loaded:")[1]
    assert "migrate.runtime.c_schedule" in loaded and "migrate.compat.cuda_math" in loaded
    got = np.load(out / "results.npz")

    want_bins = start + np.bincount(data, minlength=256).astype(np.uint32)
    for schedule in ("forward", "reverse"):
        assert compare_arrays(want_bins, got["bins_" + schedule], "uint32", "exact", name="bins").passed, schedule
    # __hfma(ha, x, __hmul(hb, y)): the product hb * y rounded to half, then one fused rounding
    product = (np.float64(-0.5) * hy[:n].astype(np.float64)).astype(np.float16)
    want_hy = (1.5 * hx[:n].astype(np.float64) + product.astype(np.float64)).astype(np.float16)
    res = compare_arrays(want_hy, got["hy"][:n], "float16", "fp16", name="y")
    assert res.passed, (res.max_abs_err, res.first_bad_index)
    assert np.all(got["hy"][n:] == 7.0)
    res = compare_arrays(_horner_soft_clip(px, coeffs, 2.0), got["py"], "float32", "fp32", name="y")
    assert res.passed, (res.max_abs_err, res.first_bad_index)


def test_an_emitted_module_runs_on_the_cpu_without_the_converter():
    r = _run("""
        import importlib.util, numpy as np, torch
        spec = importlib.util.spec_from_file_location("saxpy_mod", "tests/golden/saxpy.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        n = 3000
        x = torch.linspace(-3.0, 5.0, n, dtype=torch.float32)
        y = torch.linspace(2.0, -1.0, n, dtype=torch.float32)
        want = 1.75 * x.numpy().astype(np.float64) + y.numpy().astype(np.float64)
        mod.saxpy(n, 1.75, x, y, grid=(n + 255) // 256, block=256, target="c")
        err = float(np.max(np.abs(y.numpy() - want)))
        print("max abs err", err)
        sys.exit(0 if err < 1e-5 and not TRIED else 1)
    """)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_command_line_says_what_a_runtime_only_installation_lacks(tmp_path):
    """``migrate convert`` where libclang, jinja2 and rich cannot be imported: a usage error that
    names them, not an ImportError's traceback; ``migrate explain`` needs none of them."""
    r = _run("""
        from migrate.cli import main
        print("explain", main(["explain", "M3003"]))
        print("convert", main(["convert", sys.argv[1], "-o", sys.argv[2]]))
        print("bench", main(["bench", "--from", sys.argv[2]]))
    """, str(CORPUS / "elementwise" / "saxpy.cu"), str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "explain 0" in r.stdout and "convert 2" in r.stdout and "bench 2" in r.stdout, r.stdout
    assert "Traceback" not in r.stderr
    assert "migrate convert: libclang, jinja2, rich not installed" in r.stderr
    assert "pip install libclang jinja2 rich" in r.stderr and "migrate bench: rich not installed" in r.stderr
    assert not (tmp_path / "out").exists()
