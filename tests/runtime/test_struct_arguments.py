"""Vectors and structs passed to a kernel by value (``Params p``, ``float3 w``, ``Box b``): each
lane becomes a scalar parameter of the TileLang kernel (analysis.prepare.vectors), the signature
lists them as one ``"lanes"`` parameter with their byte offsets, and the launcher takes them out
of a tuple, a dict or the struct's bytes (runtime.tilelang_support.lane_values); a program's
recorded launches, whose struct arguments are bytes, replay into the migrated kernels."""
from __future__ import annotations

import json
import shutil
import struct

import numpy as np
import pytest

from migrate.cli import main
from migrate.runtime import tilelang_support as ts
from migrate.runtime.build import find_cxx
from migrate.runtime.tilelang_side import load_module
from tests.paths import FIXTURES

PROGRAM = FIXTURES / "runtime" / "struct_args.cu"
P_LANES = (("p_width", "int32", 0), ("p_height", "int32", 4), ("p_gain", "float32", 8))


def test_a_structs_lanes_come_from_a_tuple_a_dict_or_its_bytes():
    raw = struct.pack("<iif", 7, -3, 1.5)
    assert ts.lane_values("p", P_LANES, (7, -3, 1.5)) == [7, -3, 1.5]
    assert ts.lane_values("p", P_LANES, {"width": 7, "p_height": -3, "gain": 1.5}) == [7, -3, 1.5]
    assert ts.lane_values("p", P_LANES, raw) == [7, -3, 1.5]
    record = np.zeros((), np.dtype([("w", "<i4"), ("h", "<i4"), ("g", "<f4")]))
    record["w"], record["h"], record["g"] = 7, -3, 1.5
    assert ts.lane_values("p", P_LANES, record[()]) == [7, -3, 1.5]
    # a field in the upper bytes of a double's word, and bfloat16 as the upper half of a float32
    packed = struct.pack("<di", 0.75, -1) + b"\0" * 4
    assert ts.lane_values("s", (("s_scale", "float64", 0), ("s_offset", "int32", 8)), packed) == [0.75, -1]
    half = struct.pack("<f", -2.5)[2:]
    assert ts.lane_values("h", (("h_x", "bfloat16", 0),), half) == [-2.5]


@pytest.mark.parametrize("value, message", [
    ((7, -3), "pass its 3 lane values"),
    ({"width": 7, "height": 1}, "no value for its lane 'gain'"),
    (b"\0" * 8, "has 8 bytes; its lanes need 12"),
])
def test_a_struct_argument_that_does_not_fit_is_refused_by_name(value, message):
    with pytest.raises(ts.LaunchError, match=message):
        ts.lane_values("p", P_LANES, value)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("struct_args") / "out"
    assert main(["convert", str(PROGRAM), "-o", str(out), "-q"]) == 0
    return out


def test_each_lane_is_a_parameter_and_the_signature_keeps_the_cuda_order(converted):
    report = json.loads((converted / "report.json").read_text())
    assert {k["kernel"]: k["form"] for k in report["kernels"]} == {
        "scale_rows": "tile", "shift_points": "tile", "clamp_shift": "tile"}
    text = (converted / "struct_args.py").read_text()
    assert "b_lo: T.float64, b_hi: T.float64, s_scale: T.float64, s_offset: T.int32, n: T.int32" in text
    pytest.importorskip("tilelang")
    module = load_module(converted / "struct_args.py")
    sig = module.KERNELS["clamp_shift"]
    assert [(name, kind) for name, kind, _ in sig.params] == [("v", "buffer"), ("b", "lanes"), ("s", "lanes"),
                                                              ("n", "scalar")]
    assert tuple(sig.params[2][2]) == (("s_scale", "float64", 0), ("s_offset", "int32", 8))


def test_the_launcher_takes_structs_as_tuples_and_dicts(converted):
    pytest.importorskip("tilelang")
    module = load_module(converted / "struct_args.py")
    rng = np.random.default_rng(5)
    width, height = 150, 3
    x = rng.uniform(-4, 4, width * height).astype(np.float32)
    out = np.full(width * height, np.nan, np.float32)  # poisoned
    module.scale_rows(x, out, {"width": width, "height": height, "gain": 1.5},
                      grid=((width + 63) // 64, height), block=64, target="c")
    np.testing.assert_allclose(out, x * np.float32(1.5), rtol=1e-6)
    pts = rng.uniform(-4, 4, 3 * 70).astype(np.float32)
    moved = np.full_like(pts, np.nan)
    module.shift_points(pts, moved, (0.5, -2.0, 4.25), 70, grid=2, block=64, target="c")
    want = pts.reshape(70, 3) + np.float32(0)
    want = np.stack([want[:, 0] + 0.5, want[:, 1] * -2.0, want[:, 2] - 4.25], axis=1).astype(np.float32)
    np.testing.assert_allclose(moved.reshape(70, 3), want, rtol=1e-6)


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_the_programs_struct_arguments_replay_and_a_wrong_offset_fails(tmp_path):
    src = tmp_path / "src" / "struct_args.cu"
    src.parent.mkdir()
    shutil.copy(PROGRAM, src)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "300"]) == 0
    checks = {k["kernel"]: k["check"] for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert {k: (c["status"], c["inputs"]) for k, c in checks.items()} == {
        "scale_rows": ("pass", "trace"), "shift_points": ("pass", "trace"), "clamp_shift": ("pass", "trace")}
    # the gain read from the height's bytes: the replay must see it
    module = out / "struct_args.py"
    text = module.read_text()
    assert '("p_gain", "float32", 8)' in text
    module.write_text(text.replace('("p_gain", "float32", 8)', '("p_gain", "float32", 4)'))
    report = tmp_path / "check.json"
    assert main(["check", "--from", str(out), "--run", "300", "--json", str(report)]) == 1
    result = {c["kernel"]: c["status"] for c in json.loads(report.read_text())}
    assert result == {"scale_rows": "fail", "shift_points": "pass", "clamp_shift": "pass"}
