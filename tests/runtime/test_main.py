"""The runtime's command line (runtime/__main__.py): ``run`` compares only with the references that
``--references FILE.py`` names, and imports nothing from ``tests`` on its own."""
from __future__ import annotations

import subprocess
import sys

from migrate.runtime.__main__ import main
from tests.paths import CORPUS, REPO, TESTS

SAXPY = CORPUS / "elementwise" / "saxpy.cu"
REFERENCES = TESTS / "references" / "__init__.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


def test_run_compares_with_the_references_file():
    p = _run("-m", "migrate.runtime", "run", str(SAXPY.relative_to(REPO)),
             "--references", str(REFERENCES.relative_to(REPO)))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "saxpy [cpu, forward, seed " in p.stdout
    assert "PASS y: " in p.stdout


def test_run_without_references_imports_nothing_from_tests():
    # run from the repository root, where `tests` is importable: nothing may import it anyway
    code = ("import sys\n"
            "from migrate.runtime.__main__ import main\n"
            f"rc = main(['run', {str(SAXPY)!r}])\n"
            "bad = [m for m in sys.modules if m == 'tests' or m.startswith(('tests.', '_c2t_references'))]\n"
            "assert not bad, bad\n"
            "sys.exit(rc)\n")
    p = _run("-c", code)
    assert p.returncode == 0, p.stdout + p.stderr
    assert ": ok in " in p.stdout
    assert "PASS" not in p.stdout and "FAIL" not in p.stdout


def test_a_plain_references_file_is_loaded_from_its_path(tmp_path, capsys):
    refs = tmp_path / "my refs.py"  # not an importable module name
    refs.write_text("import numpy as np\n"
                    "def wrong(args, symbols):\n"
                    "    return {'y': np.zeros_like(args['y'])}\n"
                    "REFERENCES = {'elementwise/saxpy.cu:saxpy': wrong}\n")
    assert main(["run", str(SAXPY), "--references", str(refs)]) == 1
    assert "FAIL y: " in capsys.readouterr().out


def test_a_bad_references_file_is_a_usage_error(tmp_path, capsys):
    none = tmp_path / "none.py"
    none.write_text("X = 1\n")
    assert main(["run", str(SAXPY), "--references", str(none)]) == 2
    assert "defines no REFERENCES dict" in capsys.readouterr().err
    assert main(["run", str(SAXPY), "--references", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    assert main(["run", str(SAXPY), "--references", str(broken)]) == 2
    assert "RuntimeError: boom" in capsys.readouterr().err
