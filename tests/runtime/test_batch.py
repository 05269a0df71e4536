"""runtime/batch.py's RESULT log, piece by piece (the workers' crashes, hangs and claims are
tested end to end in test_limits.py)."""
from __future__ import annotations

from migrate.runtime.batch import DONE, STARTED, _append, _Markers


def test_markers_are_read_once_and_one_cut_short_waits_for_its_end(tmp_path):
    path = tmp_path / "result"
    markers = _Markers(path)
    assert markers.new() == []  # no file yet: the worker has not started
    with open(path, "ab", buffering=0) as log:
        _append(log, "a", {"status": STARTED})
        _append(log, "a", {"status": DONE, "file": "f0"})
        assert markers.new() == [("a", {"status": STARTED}), ("a", {"status": DONE, "file": "f0"})]
        assert markers.new() == []  # read once
        # a marker being written: its length and half its pickle are there
        whole = tmp_path / "whole"
        with open(whole, "ab", buffering=0) as other:
            _append(other, 7, {"status": STARTED})
        data = whole.read_bytes()
        log.write(data[:len(data) // 2])
        assert markers.new() == []
        log.write(data[len(data) // 2:])
        assert markers.new() == [(7, {"status": STARTED})]
