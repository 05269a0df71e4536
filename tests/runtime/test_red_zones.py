"""Red zones on the spec check: every buffer the migrated kernel receives lies between poisoned
zones, and a write into one fails naming the buffer, the element and the side."""
from __future__ import annotations

import json
import shutil

import pytest

from migrate.cli import main
from tests.runtime.test_spec_errors import SCALE, SHIFT, SOURCE


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    (src / "k.cu").write_text(SOURCE)
    (src / "k.toml").write_text(SCALE + SHIFT)
    out = tmp_path_factory.mktemp("out")
    assert main(["convert", str(src / "k.cu"), "-o", str(out), "-q"]) == 0
    return out


def check_edited(converted, tmp_path, old, new, count, kernel="scale"):
    """The check of a copy of the converted folder whose module has ``old`` replaced by ``new``
    in the factory of ``kernel`` (``count`` times: a tile-form kernel prints its body twice)."""
    out = tmp_path / "out"
    shutil.copytree(converted, out)
    module = out / "k.py"
    text = module.read_text()
    start = text.index(f"def make_{kernel}(")
    end = text.index("\n    return ", start)
    assert text[start:end].count(old) == count, text[start:end]
    module.write_text(text[:start] + text[start:end].replace(old, new) + text[end:])
    report = tmp_path / "r.json"
    status = main(["check", "--from", str(out), "--json", str(report)])
    return status, {c["kernel"]: c for c in json.loads(report.read_text())}


def test_unedited_module_passes(converted, tmp_path):
    status, checks = check_edited(converted, tmp_path, "y[i] = ", "y[i] = ", 2)
    assert status == 0 and checks["scale"]["status"] == "pass"


def test_write_past_the_end_fails_naming_buffer_and_side(converted, tmp_path):
    """The guard `i < n` of both branches as `i <= n`: thread 200 of 256 writes y[200], one past
    the end of y's 200 elements, where before this check saw nothing (the extra element lay in
    memory no buffer was compared in)."""
    status, checks = check_edited(converted, tmp_path, "if i < n:", "if i <= n:", 2)
    assert status == 1
    c = checks["scale"]
    assert c["status"] == "fail", c
    assert c["first_mismatch"]["buffer"] == "y" and c["first_mismatch"]["side"] == "after"
    assert c["first_mismatch"]["index"] == 200
    assert "y: the migrated kernel wrote outside the buffer, element 200 (past its end" in c["message"]
    assert checks["shift"]["status"] == "pass"


def test_write_before_the_start_fails(converted, tmp_path):
    status, checks = check_edited(converted, tmp_path, "b[i] = a[i] + 7", "b[i - 3] = a[i] + 7", 2, "shift")
    assert status == 1
    c = checks["shift"]
    assert c["status"] == "fail" and c["first_mismatch"]["side"] == "before", c
    assert c["first_mismatch"]["buffer"] == "b" and c["first_mismatch"]["index"] == -1
    assert "element -1 (before its start" in c["message"]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "int32", "uint8", "float64"])
def test_an_untouched_buffer_round_trips_through_torch_with_intact_red_zones(dtype):
    """The migrated side's buffers travel as torch tensors: the red zones' pattern must survive the
    conversion from its holder dtype (bfloat16 is held as float32 and converted; torch turns every
    float32 NaN into its own bfloat16 NaN, so a NaN pattern read back as written everywhere)."""
    import numpy as np

    from migrate.runtime import redzone
    from migrate.runtime.tilelang_side import to_numpy, to_tensor

    values = np.arange(1, 11)
    whole = to_numpy(to_tensor(redzone.padded(values, dtype), dtype, None), dtype)
    assert redzone.red_zone_write(whole, len(values), dtype) is None
    whole[redzone.RED_ZONE + len(values)] = 7  # one element written past the end is still seen
    assert redzone.red_zone_write(whole, len(values), dtype) == ("after", len(values), 1)
