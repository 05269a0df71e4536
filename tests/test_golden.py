"""The golden-file mechanism (tests/golden.py, ``--update-golden`` in tests/conftest.py)."""
from __future__ import annotations

import textwrap

import pytest

from tests.golden import check_golden, update_command
from tests.paths import TESTS

COMMAND = "python -m pytest tests/emit/test_module.py --update-golden"


def test_a_missing_golden_fails_and_says_how_to_create_it(tmp_path):
    golden = tmp_path / "golden" / "k.py"
    with pytest.raises(pytest.fail.Exception) as failed:
        check_golden(golden, "x = 1\n", update=False, command=COMMAND)
    assert str(golden) in str(failed.value) and "does not exist" in str(failed.value)
    assert f"`{COMMAND}`" in str(failed.value)
    assert not golden.exists()  # nothing written without the option


def test_update_writes_a_missing_golden_and_then_it_passes(tmp_path):
    golden = tmp_path / "golden" / "k.plan"
    check_golden(golden, "x = 1\n", update=True)
    assert golden.read_text() == "x = 1\n"
    check_golden(golden, "x = 1\n", update=False)


def test_a_differing_golden_fails_with_a_diff_and_is_kept(tmp_path):
    golden = tmp_path / "k.py"
    golden.write_text("a = 1\nb = 2\nc = 3\n")
    with pytest.raises(pytest.fail.Exception) as failed:
        check_golden(golden, "a = 1\nb = 20\nc = 3\n", update=False, command=COMMAND)
    message = str(failed.value)
    assert "differs from the golden file" in message and f"`{COMMAND}`" in message
    assert f"--- {golden} (golden)" in message and f"+++ {golden} (produced)" in message
    assert "\n-b = 2\n+b = 20\n" in message and "\n a = 1\n" in message
    assert golden.read_text() == "a = 1\nb = 2\nc = 3\n"


def test_a_missing_last_newline_is_a_difference(tmp_path):
    golden = tmp_path / "k.py"
    golden.write_text("a = 1\n")
    with pytest.raises(pytest.fail.Exception, match="No newline at end of file"):
        check_golden(golden, "a = 1", update=False)


def test_update_rewrites_a_differing_golden(tmp_path):
    golden = tmp_path / "k.py"
    golden.write_text("old\n")
    check_golden(golden, "new\n", update=True)
    assert golden.read_text() == "new\n"
    check_golden(golden, "new\n", update=False)


def test_the_default_command_names_the_running_test_file():
    assert update_command() == "python -m pytest tests/test_golden.py --update-golden"
    assert update_command(TESTS / "emit" / "test_module.py") == COMMAND


def test_update_golden_fixture_follows_the_option(update_golden, pytestconfig):
    assert update_golden is pytestconfig.getoption("--update-golden")


def test_the_option_end_to_end(pytester, monkeypatch):
    """An inner pytest with this suite's conftest: fails on the missing golden, writes it under
    --update-golden, then passes; a changed output fails again with a diff."""
    pytester.makeconftest((TESTS / "conftest.py").read_text())
    pytester.makepyfile(test_inner=textwrap.dedent("""
        import os
        from pathlib import Path

        from tests.golden import check_golden

        def test_text(update_golden):
            check_golden(Path("golden") / "inner.plan", os.environ.get("INNER_TEXT", "plan 1\\n"), update_golden)
    """))
    golden = pytester.path / "golden" / "inner.plan"
    missing = pytester.runpytest()
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*does not exist: create it with `python -m pytest *test_inner.py --update-golden`*"])
    assert not golden.exists()

    pytester.runpytest("--update-golden").assert_outcomes(passed=1)
    assert golden.read_text() == "plan 1\n"
    pytester.runpytest().assert_outcomes(passed=1)

    monkeypatch.setenv("INNER_TEXT", "plan 2\n")
    changed = pytester.runpytest()
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(["-plan 1", "+plan 2"])
    assert golden.read_text() == "plan 1\n"
