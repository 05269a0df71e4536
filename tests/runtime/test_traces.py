"""Recorded launches (runtime/traces.py and the executor's cpu/c2t_trace.h): a program sized from
argv runs its own main on the CPU executor, and its first launches of each kernel are recorded
with their configuration, arguments and the bytes before and after."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from migrate.runtime.build import find_cxx
from migrate.runtime.cuda_cpu import compile_cpu
from migrate.runtime.traces import load, read, record
from tests.paths import FIXTURES

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")

PROGRAM = FIXTURES / "runtime" / "record_sizes.cu"


@pytest.fixture(scope="module")
def lib():
    return compile_cpu(PROGRAM, [])


def test_the_first_launches_of_each_kernel_are_recorded(lib, tmp_path):
    rec = record(lib, ["300"], tmp_path / "t", limit=2)
    assert rec.status == 0 and rec.stdout.strip() == "PASS"  # the program ran as it does without recording
    scale = [L for L in rec.launches if L.name == "scale"]
    shift = [L for L in rec.launches if L.name == "shift"]
    assert [L.number for L in scale] == [0, 1]  # three launches, two kept
    assert len(shift) == 1 and [L.seq for L in rec.launches] == [0, 1, 2]
    first = scale[0]
    assert first.grid == (3, 1, 1) and first.block == (128, 1, 1) and first.shared_bytes == 0
    assert first.status == 0
    y, x, a, n = first.args
    assert (y.kind, x.kind) == ("pointer", "pointer") and y.alloc != x.alloc and y.offset == x.offset == 0
    assert (a.type, a.value) == ("f4", 2.0) and (n.type, n.value) == ("i4", 300)
    hx = np.frombuffer(first.before[x.alloc], np.float32)
    hy = np.frombuffer(first.before[y.alloc], np.float32)
    np.testing.assert_array_equal(hx, 0.5 * np.arange(300, dtype=np.float32))
    np.testing.assert_array_equal(hy, np.ones(300, np.float32))
    np.testing.assert_array_equal(np.frombuffer(first.after[y.alloc], np.float32), np.float32(2.0) * hx + hy)
    assert first.after[x.alloc] == first.before[x.alloc]
    # the second launch starts from what the first left
    assert scale[1].before[y.alloc] == first.after[y.alloc]


def test_an_interior_pointer_is_its_allocation_and_offset(lib, tmp_path):
    (L,) = [L for L in record(lib, ["301"], tmp_path / "t").launches if L.name == "shift"]
    v, by, count = L.args
    assert v.offset == 150 * 4 and (by.type, by.value) == ("i4", 7) and (count.type, count.value) == ("u4", 151)
    after = np.frombuffer(L.after[v.alloc], np.int32)
    assert len(after) == 301 and (after[:150] == 0).all() and (after[150:] == 7).all()
    assert (np.frombuffer(L.before[v.alloc], np.int32) == 0).all()


def test_limits_and_no_recording(lib, tmp_path):
    assert [L.name for L in record(lib, ["64"], tmp_path / "one", limit=1).launches] == ["scale", "shift"]
    assert record(lib, ["64"], tmp_path / "none", limit=0).launches == ()
    assert read(tmp_path / "missing") == []


def test_a_run_past_its_timeout_keeps_what_it_recorded(lib, tmp_path):
    rec = record(lib, ["20000000"], tmp_path / "t", timeout=0.5)
    assert rec.status is None and "longer than" in rec.stderr
    assert all(L.status == 0 for L in rec.launches)  # whatever was written completely


def test_launches_past_the_budget_are_listed_not_recorded(lib, tmp_path):
    # n = 300: a scale launch reaches x and y, 2 x 1200 bytes before it, and changes y only: 3600
    # bytes (x is written once); shift reaches v, 1200 bytes, and changes it: 2400
    rec = record(lib, ["300"], tmp_path / "t", limit=2, budget=6000)
    kept = [(L.name, L.number) for L in rec.launches if not L.skipped]
    skipped = [L for L in rec.launches if L.skipped]
    # scale's second launch fit before it ran (6000) but not with what it changed: cut off again
    assert kept == [("scale", 0), ("shift", 0)] and rec.status == 0
    assert [(L.name, L.number, L.skipped) for L in skipped] == [("scale", 1, "budget: 3600 bytes")]
    blobs = sorted((tmp_path / "t").glob("launch-*.zlib"))  # one compressed file per recorded launch
    assert [len(zlib.decompress(b.read_bytes())) for b in blobs] == [3600, 2400]
    assert not (tmp_path / "t" / "data.bin").exists()
    first = rec.launches[0]
    x = first.args[1].alloc
    assert first.after[x] == first.before[x] and len(first.after[x]) == 1200


def test_later_launches_of_a_kernel_leave_room_for_the_first_launch_of_the_next(lib, tmp_path):
    # budget 12000: scale 0, 1 take 7200; scale 2 would take later launches past half the budget
    # (7200 > 6000), so it is skipped and shift's first launch still fits
    rec = record(lib, ["300"], tmp_path / "t", limit=3, budget=12000)
    assert [(L.name, L.number, bool(L.skipped)) for L in rec.launches] == [
        ("scale", 0, False), ("scale", 1, False), ("scale", 2, True), ("shift", 0, False)]


def test_an_unpacked_recording_is_read_in_place(lib, tmp_path):
    rec = record(lib, ["300"], tmp_path / "t", limit=1, packed=False)
    assert (tmp_path / "t" / "data.bin").stat().st_size == 3600 + 2400
    assert not list((tmp_path / "t").glob("launch-*.zlib"))
    scale = rec.launches[0]
    y, x = scale.args[0].alloc, scale.args[1].alloc
    assert isinstance(scale.before[y], memoryview) and scale.before[y].readonly
    np.testing.assert_array_equal(np.frombuffer(scale.after[y], np.float32),
                                  np.float32(2.0) * 0.5 * np.arange(300, dtype=np.float32) + 1)


def test_a_recording_is_loaded_again_with_its_arguments_and_a_lost_launch_is_named(lib, tmp_path):
    rec = record(lib, ["300"], tmp_path / "t", limit=1)
    args, again = load(tmp_path / "t")
    assert args == ["300"] and again.status == 0
    assert [(L.name, L.grid, L.args) for L in again.launches] == [(L.name, L.grid, L.args) for L in rec.launches]
    assert all(again.launches[i].before == rec.launches[i].before for i in range(len(rec.launches)))
    first = sorted((tmp_path / "t").glob("launch-*.zlib"))[0]
    first.unlink()
    lost = read(tmp_path / "t")[0]
    assert lost.skipped.startswith(f"its bytes ({first.name})") and lost.name == rec.launches[0].name
    assert load(tmp_path / "nothing") is None


def test_a_launch_read_in_place_travels_to_another_process(lib, tmp_path):
    import pickle

    rec = record(lib, ["300"], tmp_path / "t", limit=1, packed=False)
    first = rec.launches[0]
    again = pickle.loads(pickle.dumps(first))
    assert again.before == first.before and again.after == first.after and again.args == first.args
    assert all(isinstance(v, bytes) for v in again.before.values())
