"""Test-suite options and fixtures shared by every test folder.

``--update-golden``: tests that compare text with a golden file (:mod:`tests.golden`) rewrite the
golden instead of failing; without it a missing golden fails and says how to create it.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

pytest_plugins = ["pytester"]  # tests/test_golden.py runs the option end to end


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden files (tests/golden/) that tests compare their output with, "
                          "creating missing ones, instead of failing")


@pytest.fixture
def update_golden(pytestconfig) -> bool:
    """True under ``--update-golden``: pass it to :func:`tests.golden.check_golden`."""
    return bool(pytestconfig.getoption("--update-golden"))


@pytest.fixture
def multi_unit(tmp_path):
    """A copy of the team's multi-file program (tests/fixtures/runtime/multi_unit: kernels in
    kernels.cu, main() in main.cu, a C++ and a C helper) in ``tmp_path/prog``."""
    import shutil

    from tests.paths import FIXTURES

    src = tmp_path / "prog"
    shutil.copytree(FIXTURES / "runtime" / "multi_unit", src)
    return src


class ConvertedCorpus(NamedTuple):
    out: Path    # the output folder: read it, never change it (copy it first)
    status: int  # the exit status of the conversion


@pytest.fixture(scope="session")
def converted_corpus(tmp_path_factory) -> ConvertedCorpus:
    """corpus/ converted once per test run (``migrate convert corpus -o OUT -q --jobs 2``) for the
    tests that read the whole converted corpus. Under pytest-xdist every worker shares it: the
    first to get here converts under a file lock in the run's temporary root, the others wait and
    reuse the folder. Tests must not change it: one that does works on a copy."""
    import fcntl
    import os
    import shutil

    from migrate.cli import main
    from tests.paths import CORPUS

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the run's root, above this worker's own folder
        root = root.parent
    shared = root / "converted-corpus"
    shared.mkdir(exist_ok=True)
    out, status = shared / "out", shared / "status"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not status.is_file():
            shutil.rmtree(out, ignore_errors=True)  # left by a conversion that did not finish
            status.write_text(str(main(["convert", str(CORPUS), "-o", str(out), "-q", "--jobs", "2"])))
    return ConvertedCorpus(out, int(status.read_text()))
