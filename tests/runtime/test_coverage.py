"""Checked coverage: a tile-form map's full-tile and last-tile branches both run in its check,
even when the spec is smaller than one tile, and the check reports which branches ran."""
from __future__ import annotations

import json
import shutil
import textwrap

import pytest

from migrate.cli import main
from migrate.runtime.checker import check_module
from migrate.runtime.spec import load_spec

SOURCE = textwrap.dedent("""\
    #include <cuda_runtime.h>
    __global__ void head_scale(const float* x, float* y, int n, int k)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            if (i < k) y[i] = 2.0f * x[i];
            else y[i] = x[i] - 1.0f;
        }
    }
    int main() { return 0; }
    """)


def spec(n: int, k: int, threads: int) -> str:
    return textwrap.dedent(f"""\
        [[kernel]]
        name = "head_scale"
        grid = [1, 1, 1]
        block = [{threads}, 1, 1]
        tolerance = "fp32"

        [[kernel.args]]
        name = "x"
        buffer = "float32"
        elements = {n}
        role = "in"
        range = [0.5, 1.0]

        [[kernel.args]]
        name = "y"
        buffer = "float32"
        elements = {n}
        role = "out"

        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = {n}

        [[kernel.args]]
        name = "k"
        scalar = "int32"
        value = {k}
        """)


def converted(tmp_path, spec_text: str):
    src = tmp_path / "src"
    src.mkdir()
    (src / "head.cu").write_text(SOURCE)
    (src / "head.toml").write_text(spec_text)
    out = tmp_path / "out"
    assert main(["convert", str(src / "head.cu"), "-o", str(out), "-q"]) == 0
    return out


def mutate_full_tile_guard(out):
    """`if i < k:` of the full-tile branch (its first occurrence) as `if i <= k:`."""
    module = out / "head.py"
    text = module.read_text()
    full = text.index("# a full tile:")
    at = text.index("if i < k:", full)
    assert at < text.index("# the last tile:")
    module.write_text(text[:at] + "if i <= k:" + text[at + len("if i < k:"):])


def check_json(out, tmp_path):
    report = tmp_path / "r.json"
    status = main(["check", "--from", str(out), "--json", str(report)])
    (c,) = json.loads(report.read_text())
    return status, c


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """n = 100 elements in one block of 128 threads: the module's tile (256, one element a thread
    as the CUDA's branching element runs, cut to the 128 the launch covers) holds the whole
    domain, so the spec's own run has no full tile."""
    return converted(tmp_path_factory.mktemp("small"), spec(100, 50, 128))


def test_both_branches_run_and_are_reported(small, tmp_path):
    status, c = check_json(small, tmp_path)
    assert status == 0 and c["status"] == "pass", c
    by = {e["branch"]: e for e in c["coverage"]}
    assert by["full tile"]["ran"] and by["last tile"]["ran"] and by["no full tile"]["ran"]
    assert by["last tile"]["tile"] == [128] and by["full tile"]["tile"] != [128]
    text = (small / "head.py").read_text().splitlines()
    assert "if bx * tile_x + tile_x <=" in text[by["full tile"]["line"] - 1]
    assert text[by["last tile"]["line"] - 1].strip().startswith("else:")
    assert "branches run: full tile, last tile" in c["message"]


def test_full_tile_mutant_is_caught_only_with_the_added_tiles(small, tmp_path):
    """The guard `i < k` mutated to `i <= k` in the full-tile branch changes y[50]; the spec's
    own run never takes that branch, so only the added tile run sees it."""
    out = tmp_path / "out"
    shutil.copytree(small, out)
    mutate_full_tile_guard(out)
    data = json.loads((out / "report.json").read_text())
    forms = {k["kernel"]: (k["form"], k.get("reason", "")) for k in data["kernels"]}
    kernels = load_spec(out / "head.toml")
    (alone,) = check_module(out / "head.py", out / "head.cu", kernels, forms, coverage_runs=False)
    assert alone.status == "pass", alone.message  # the blind spot this closes
    assert {e["branch"]: e["ran"] for e in alone.coverage}["full tile"] is False

    status, c = check_json(out, tmp_path)
    assert status == 1 and c["status"] == "fail", c
    assert c["first_mismatch"]["buffer"] == "y" and c["first_mismatch"]["index"] == 50
    assert c["message"].startswith("with tile [") and "full tile" in c["message"]


def test_unreachable_branch_is_a_coded_note(tmp_path, capsys):
    """One element in one thread: every tile is full, the last-tile branch cannot run (M4003)."""
    out = converted(tmp_path, spec(1, 1, 1))
    capsys.readouterr()
    status, c = check_json(out, tmp_path)
    err = capsys.readouterr().err
    assert status == 0 and c["status"] == "pass"
    by = {e["branch"]: e for e in c["coverage"]}
    assert by["full tile"]["ran"] and not by["last tile"]["ran"] and by["last tile"]["why"]
    assert "the last tile branch" in err and "[M4003]" in err
