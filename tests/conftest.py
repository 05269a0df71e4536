"""Test-suite options and fixtures shared by every test folder.

``--update-golden``: tests that compare text with a golden file (:mod:`tests.golden`) rewrite the
golden instead of failing; without it a missing golden fails and says how to create it.
"""
from __future__ import annotations

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
