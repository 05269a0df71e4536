"""Replaying recorded launches into migrated kernels (runtime/replay.py): a program sized from
argv, converted with no spec, is checked on its own launches; a changed migrated kernel fails,
naming the buffer."""
from __future__ import annotations

import shutil

import pytest

from migrate.cli import main
from migrate.runtime.build import find_cxx
from migrate.runtime.cuda_cpu import compile_cpu
from migrate.runtime.replay import replay
from migrate.runtime.traces import record
from tests.paths import FIXTURES

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")

PROGRAM = FIXTURES / "runtime" / "record_sizes.cu"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The program converted (no spec beside it) and its launches recorded with n = 300."""
    tmp = tmp_path_factory.mktemp("replay")
    src = tmp / "record_sizes.cu"
    shutil.copy(PROGRAM, src)
    assert main(["convert", str(src), "-o", str(tmp / "out"), "-q"]) == 0
    rec = record(compile_cpu(src, []), ["300"], tmp / "traces", limit=2)
    assert rec.status == 0, rec.stderr
    return tmp / "out" / "record_sizes.py", rec.launches


def test_every_recorded_launch_replays_equal(recorded):
    module, launches = recorded
    results = [replay(module, L) for L in launches]
    assert [(r.kernel, r.launch, r.status) for r in results] == [("scale", 0, "pass"), ("scale", 1, "pass"),
                                                                  ("shift", 0, "pass")]
    assert all(len(r.results) == 2 for r in results[:2]) and len(results[2].results) == 1


def test_a_changed_kernel_fails_its_replay(recorded, tmp_path):
    module, launches = recorded
    text = module.read_text()
    broken = tmp_path / "broken.py"
    # the migrated shift adds one more than the CUDA kernel (``by`` is spelled by_ in TileLang)
    changed = text.replace("v[i] = v[i] + by_", "v[i] = v[i] + by_ + 1")
    assert changed != text
    broken.write_text(changed)
    (shift,) = [L for L in launches if L.name == "shift"]
    r = replay(broken, shift)
    assert r.status == "fail" and "v" in r.message


def test_what_a_replay_cannot_take_is_skipped_with_the_reason(recorded, tmp_path):
    module, launches = recorded
    no_kernels = tmp_path / "empty.py"
    no_kernels.write_text("KERNELS = {}\n")
    r = replay(no_kernels, launches[0])
    assert r.status == "skipped" and "was not migrated" in r.message


def test_a_launch_past_the_trace_budget_replays_as_skipped(recorded, tmp_path):
    module, _launches = recorded
    rec = record(compile_cpu(PROGRAM, []), ["300"], tmp_path / "t", limit=2, budget=6000)
    skipped = [L for L in rec.launches if L.skipped]
    assert skipped
    for L in skipped:
        r = replay(module, L)
        assert r.status == "skipped" and "past the trace budget" in r.message


@pytest.mark.parametrize("side", ["past its end", "before its start"])
def test_a_write_outside_a_replayed_buffer_fails_naming_buffer_element_and_side(recorded, monkeypatch, side):
    # TileLang guards every tensor access by the tensor's shape; a kernel reaching past it some
    # other way (here: through the storage behind the tensor) lands in the red zone
    import migrate.runtime.tilelang_support as support

    module, launches = recorded
    real = support.launch

    def reaching(sig, args, **kw):
        real(sig, args, **kw)
        x = args[0]
        n = x.shape[0]
        if side == "past its end":
            x.as_strided((n + 3,), (1,))[n + 2] = 1.0
        else:
            x.as_strided((1,), (1,), x.storage_offset() - 5)[0] = 1.0

    monkeypatch.setattr(support, "launch", reaching)
    r = replay(module, launches[0])
    element = 302 if side == "past its end" else -5
    assert r.status == "fail"
    assert r.message.startswith("y: the migrated kernel wrote outside the buffer, "
                                f"element {element} ({side};")


def test_a_recorded_scalar_converts_to_the_parameter_type_as_c_converts_it():
    from migrate.runtime.replay import _scalar

    # an unsigned 0xDEADBEEF passed to an int parameter wraps; -1 to an unsigned; an int to a float
    assert _scalar(0xDEADBEEF, "int32") == -559038737 and _scalar(-1, "uint32") == 0xFFFFFFFF
    assert _scalar(5, "float32") == 5.0 and isinstance(_scalar(5, "float32"), float)
    assert _scalar(1 << 40, "int64") == 1 << 40 and _scalar(3, "bool") is True


def test_a_kernel_on_bool_buffers_replays_equal_and_a_wrong_flag_fails(tmp_path):
    # bool buffers are 1-byte tensors on the replay side (this raised KeyError: 'bool') and
    # int8_t pointers in TileLang's C kernel (its CPU host wrapper passed bool*, which g++ refused)
    src = tmp_path / "record_flags.cu"
    shutil.copy(FIXTURES / "runtime" / "record_flags.cu", src)
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "-q"]) == 0
    rec = record(compile_cpu(src, []), ["12"], tmp_path / "traces", limit=1)
    assert rec.status == 0, rec.stderr
    (launch,) = rec.launches
    module = tmp_path / "out" / "record_flags.py"
    r = replay(module, launch)
    assert (r.kernel, r.status) == ("tile_active", "pass"), r.message
    broken = tmp_path / "broken.py"
    text = module.read_text()
    broken.write_text(text.replace("active[t] = not all_[0]", "active[t] = all_[0]"))
    assert broken.read_text() != text
    r = replay(broken, launch)
    assert r.status == "fail" and r.message.startswith("active:")


def test_launches_given_null_pointers_for_optional_buffers_replay_equal(tmp_path):
    # a null pointer recorded for a buffer reaches the migrated kernel as None: an empty tensor,
    # whose handle the kernel tests at run time (TVM folded ``mask == 0`` to False, assuming every
    # buffer non-null, and read through the null pointer)
    import numpy as np

    from tests.analysis.support import module_of
    src = tmp_path / "record_optional.cu"
    shutil.copy(FIXTURES / "runtime" / "record_optional.cu", src)
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "-q"]) == 0
    rec = record(compile_cpu(src, []), ["100"], tmp_path / "traces", limit=3)
    assert rec.status == 0, rec.stderr
    module = tmp_path / "out" / "record_optional.py"
    results = [replay(module, L) for L in rec.launches]
    assert [(r.kernel, r.status) for r in results] == [("routed", "pass")] * 3, [r.message for r in results]
    mod = module_of(module)
    n = 100
    ids = (np.arange(n, dtype=np.int32) * 7) % 11 + 1
    out = np.full(n, np.nan, np.float32)
    counts = np.zeros(4, np.int32)
    mod.routed(ids, None, None, counts, out, n, grid=2, block=64, target="c")
    np.testing.assert_array_equal(out, ids.astype(np.float32))
    np.testing.assert_array_equal(counts, np.bincount(ids % 4, minlength=4))
