"""Bad specs through `migrate check`: each kind is a coded diagnostic at the spec's FILE:LINE,
never a traceback; it costs only the kernels it is about (the others are still checked), and
the check exits 2 (a setup error)."""
from __future__ import annotations

import json
import textwrap

import pytest

from migrate.cli import main

SOURCE = textwrap.dedent("""\
    #include <cuda_runtime.h>
    __global__ void scale(const float* x, float* y, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = 2.0f * x[i] + 1.0f;
    }
    __global__ void shift(const int* a, int* b, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) b[i] = a[i] + 7;
    }
    int main() { return 0; }
    """)

SCALE = textwrap.dedent("""\
    [[kernel]]
    name = "scale"
    grid = [2, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32"

    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 200
    role = "in"
    range = [-1.0, 1.0]

    [[kernel.args]]
    name = "y"
    buffer = "float32"
    elements = 200
    role = "out"

    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 200
    """)

SHIFT = textwrap.dedent("""\

    [[kernel]]
    name = "shift"
    grid = [1, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"

    [[kernel.args]]
    name = "a"
    buffer = "int32"
    elements = 50
    role = "in"
    range = [-100, 100]

    [[kernel.args]]
    name = "b"
    buffer = "int32"
    elements = 50
    role = "out"

    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 50
    """)


def run_check(tmp_path, spec_text, capsys, *extra):
    (tmp_path / "k.cu").write_text(SOURCE)
    (tmp_path / "k.toml").write_text(spec_text)
    report = tmp_path / "r.json"
    status = main(["check", str(tmp_path / "k.cu"), "--json", str(report), *extra])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, {c["kernel"]: c for c in json.loads(report.read_text())}, err


# (edit of the scale table, code, line of the spec the error is at)
CASES = {
    "unknown key": (('role = "in"', 'rol = "in"'), "M4101", 11, "did you mean 'role'"),
    "wrong type": (("elements = 200\nrole = \"out\"", "elements = 1e12\nrole = \"out\""), "M4102", 17, "float"),
    "string value": (("value = 200", 'value = "200"'), "M4102", 23, "must be an integer"),
    "negative size": (("elements = 200\nrole = \"in\"", "elements = -5\nrole = \"in\""), "M4103", 10, "positive"),
    "zero grid": (("grid = [2, 1, 1]", "grid = [0, 1, 1]"), "M4103", 3, "positive integers"),
    "above the limit": (("elements = 200\nrole = \"out\"", "elements = 1000000000000\nrole = \"out\""),
                        "M4104", 17, "4,000,000,000,800 bytes (3.6 TiB), above the limit of 4,294,967,296"),
    "no such kernel": (('name = "scale"', 'name = "scal"'), "M4105", 2, "did you mean 'scale'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_table_costs_only_its_kernel(tmp_path, capsys, case):
    (old, new), code, line, needle = CASES[case]
    text = SCALE.replace(old, new, 1)
    assert text != SCALE
    status, checks, err = run_check(tmp_path, text + SHIFT, capsys)
    assert status == 2, err
    name = "scal" if code == "M4105" else "scale"
    bad = checks[name]
    assert bad["status"] == "error" and bad["code"] == code, bad
    assert bad["at"] == f"{tmp_path / 'k.toml'}:{line}", bad["at"]
    assert needle in bad["message"], bad["message"]
    assert f"k.toml:{line}: error: " in err and f"[{code}]" in err, err
    assert checks["shift"]["status"] == "pass", checks["shift"]  # the other kernel is still checked


def test_malformed_toml_costs_its_file_only(tmp_path, capsys):
    """Invalid TOML in one file's spec: that file's kernels are M4100 at the TOML error's line;
    a second file with a good spec is still checked."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "o.cu").write_text(SOURCE.replace("scale", "twice"))
    (other / "o.toml").write_text(SHIFT)
    (tmp_path / "k.cu").write_text(SOURCE)
    (tmp_path / "k.toml").write_text(SCALE.replace("[[kernel.args]]", "[[kernel.args]\n", 1))
    report = tmp_path / "r.json"
    status = main(["check", str(tmp_path / "k.cu"), str(other / "o.cu"), "--json", str(report)])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    checks = {(c["file"], c["kernel"]): c for c in json.loads(report.read_text())}
    for name in ("scale", "shift"):
        c = checks[("k.cu", name)]
        assert c["status"] == "error" and c["code"] == "M4100" and c["at"].endswith("k.toml:7"), c
    assert checks[("other/o.cu", "shift")]["status"] == "pass"


def test_max_check_bytes_option(tmp_path, capsys):
    """The limit is an option: 200 floats (800 bytes) are refused under --max-check-bytes 1K."""
    status, checks, err = run_check(tmp_path, SCALE + SHIFT, capsys, "--max-check-bytes", "1K")
    assert status == 2
    assert checks["scale"]["code"] == "M4104" and "1,024 bytes" in checks["scale"]["message"]
    assert checks["shift"]["status"] == "pass"  # 400 bytes


def test_good_spec_still_exits_0(tmp_path, capsys):
    status, checks, _ = run_check(tmp_path, SCALE + SHIFT, capsys)
    assert status == 0 and {c["status"] for c in checks.values()} == {"pass"}
    assert all(c["code"] == "" for c in checks.values())


def test_derived_spec_above_the_limit_is_skipped_not_an_input_error(tmp_path, capsys):
    """Sizes the tool derived from the launch sites (NAME.auto.toml) are the program's, not a
    user's input: above the limit the kernel is skipped with M4104, and the exit status is 0."""
    main_code = textwrap.dedent("""\
        int main() {
            float *x, *y;
            cudaMalloc(&x, 200 * sizeof(float));
            cudaMalloc(&y, 200 * sizeof(float));
            scale<<<2, 128>>>(x, y, 200);
            cudaDeviceSynchronize();
            return 0;
        }
        """)
    (tmp_path / "k.cu").write_text(SOURCE.replace("int main() { return 0; }\n", main_code))
    report = tmp_path / "r.json"
    status = main(["check", str(tmp_path / "k.cu"), "--json", str(report), "--max-check-bytes", "1K"])
    assert "Traceback" not in capsys.readouterr().err
    checks = {c["kernel"]: c for c in json.loads(report.read_text())}
    assert status == 0
    assert checks["scale"]["status"] == "skipped" and checks["scale"]["code"] == "M4104", checks["scale"]
    assert "k.auto.toml:" in checks["scale"]["at"] and "1,600 bytes" in checks["scale"]["message"]
