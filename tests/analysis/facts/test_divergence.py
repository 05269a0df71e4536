"""Which names depend on the thread (analysis.facts.divergence)."""
from __future__ import annotations

from migrate.analysis.facts.divergence import thread_dependent_names
from tests.analysis.support import PHASES, unit


def test_thread_dependence(tmp_path):
    fn = unit(tmp_path, PHASES).kernel("k")
    dependent = thread_dependent_names(fn)
    assert {"t", "v"} <= dependent and "half" not in dependent and "st" not in dependent
