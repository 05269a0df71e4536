"""Hybrid projects' hand-written side (issue 16): the math shim and the launcher support that
emitted modules import work in a process that has none of the converter's dependencies (no
libclang, jinja2 or rich), as in a project that only runs TileLang. Each case runs in a child
process in which importing those fails."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.paths import REPO

#: the child's first lines: the converter's dependencies cannot be imported
BLOCK = textwrap.dedent("""
    import sys
    for name in ("clang", "clang.cindex", "jinja2", "rich", "migrate.parse", "migrate.analysis", "migrate.emit"):
        sys.modules[name] = None
""")


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK + textwrap.dedent(code)], cwd=REPO, capture_output=True,
                          text=True, timeout=600)


def test_the_blocked_imports_really_fail():
    r = _run("import clang.cindex\n")
    assert r.returncode != 0 and ("ModuleNotFoundError" in r.stderr or "ImportError" in r.stderr), r.stderr


def test_a_hand_written_kernel_calls_cuda_math_without_the_converter():
    r = _run("""
        import runpy
        sys.argv = ["handwritten_math.py", "--n", "1000"]
        runpy.run_path("examples/handwritten_math.py", run_name="__main__")
    """)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "c: gelu max rel err" in r.stdout and "PASS" in r.stdout, r.stdout


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
        sys.exit(0 if err < 1e-5 else 1)
    """)
    assert r.returncode == 0, r.stdout + r.stderr
