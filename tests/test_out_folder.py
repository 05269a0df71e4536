"""The output folder, as a user meets it: OUT that overlaps the sources (M9004), OUT holding files
cuda2tile did not write (M9005, --force, the manifest), odd bytes and file names, TileLang's
temporary files, and OUT remembering the flags it was converted with (report.json ``build``,
M9006)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from migrate.cli import main
from migrate.outdir import MANIFEST, Manifest
from migrate.runtime import flags
from tests.paths import REPO

KERNEL = """\
// scale: y = a * x + SHIFT
__global__ void scale(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + SHIFT;
}
"""
PLAIN = KERNEL.replace(" + SHIFT", "")

SPEC = """\
[[kernel]]
name = "scale"
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "fp32"

[[kernel.args]]
name = "y"
buffer = "float32"
elements = 200
role = "out"

[[kernel.args]]
name = "x"
buffer = "float32"
elements = 200
role = "in"
range = [0.0, 1.0]

[[kernel.args]]
name = "a"
scalar = "float32"
value = 2.0

[[kernel.args]]
name = "n"
scalar = "int32"
value = 200
"""


def write_kernel(folder: Path, name: str = "k", text: str = PLAIN, spec: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cu = folder / f"{name}.cu"
    cu.write_bytes(text.encode() if isinstance(text, str) else text)
    if spec:
        (folder / f"{name}.toml").write_text(SPEC)
    return cu


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def manifest_files(out: Path) -> set[str]:
    data = json.loads((out / MANIFEST).read_text())
    assert data["complete"] is True and data["tool"] == "cuda2tile"
    return set(data["files"])


def checks(out: Path) -> dict[str, dict]:
    return {k["kernel"]: k["check"] for k in json.loads((out / "report.json").read_text())["kernels"]}


# -- 1. OUT equal to or containing a source ------------------------------------------------------

def test_out_equal_to_the_source_folder_is_refused(tmp_path, capsys):
    src = tmp_path / "src"
    write_kernel(src)
    before = tree(src)
    assert main(["convert", str(src), "-o", str(src), "-q"]) == 2
    assert "M9004" in capsys.readouterr().err
    assert tree(src) == before  # nothing written: no reports, no modules, no manifest


@pytest.mark.parametrize("given", ["sub", "sub/k.cu"])
def test_out_containing_a_source_is_refused(tmp_path, capsys, given):
    src = tmp_path / "src"
    write_kernel(src / "sub")
    before = tree(src)
    assert main(["convert", str(src / given), "-o", str(src), "-q"]) == 2
    err = capsys.readouterr().err
    assert "M9004" in err and "contains the source" in err
    assert tree(src) == before


def test_out_inside_the_source_folder_is_skipped_when_scanning(tmp_path):
    src = tmp_path / "src"
    write_kernel(src)
    for _ in range(2):  # the second run sees OUT's copy of k.cu and must not convert it
        assert main(["convert", str(src), "-o", str(src / "out"), "-q"]) == 0
        report = json.loads((src / "out" / "report.json").read_text())
        assert [f["file"] for f in report["files"]] == ["k.cu"]
    assert not (src / "out" / "out").exists()
    assert sorted(p.name for p in src.iterdir()) == ["k.cu", "k.toml", "out"]


# -- 2. files cuda2tile did not write; the manifest ----------------------------------------------

def test_out_holding_user_files_is_refused_unless_forced(tmp_path, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    write_kernel(src)
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "k.py").write_text("# my own module\n")
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert "M9005" in err and "notes.txt" in err and "k.py" in err and "--force" in err
    assert tree(out) == {"notes.txt": b"mine", "k.py": b"# my own module\n"}  # nothing written

    assert main(["convert", str(src), "-o", str(out), "-q", "--force"]) == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert "make_scale" in (out / "k.py").read_text()  # the conversion's own name: overwritten
    listed = manifest_files(out)
    assert {"k.py", "k.cu", "k.toml", "report.json"} <= listed and "notes.txt" not in listed
    # the user's file is still not the tool's: a later run without --force refuses again
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 2
    assert "notes.txt" in capsys.readouterr().err


def test_rerun_into_its_own_out_removes_only_its_stale_files(tmp_path, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    write_kernel(src / "a", "one")
    write_kernel(src / "b", "two")
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    assert {"a/one.py", "a/one.cu", "b/two.py", "b/two.toml", "report.html"} <= manifest_files(out)
    (out / "a" / "__pycache__").mkdir()
    (out / "a" / "__pycache__" / "one.cpython-311.pyc").write_bytes(b"python imported it")

    (src / "b" / "two.cu").unlink()
    (src / "b" / "two.toml").unlink()
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0  # no --force needed
    assert "removed 3 file(s)" in capsys.readouterr().err
    assert not (out / "b").exists()  # two.py, two.cu, two.toml and their folder
    assert (out / "a" / "one.py").is_file() and (out / "a" / "__pycache__" / "one.cpython-311.pyc").is_file()
    listed = manifest_files(out)
    assert "a/one.py" in listed and not any(f.startswith("b/") for f in listed)


def test_a_user_file_is_never_removed(tmp_path, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    write_kernel(src, "one")
    write_kernel(src, "two")
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    (out / "two.py").write_text("# edited by hand\n")  # the tool's file, changed by the user
    (out / "mine.cu").write_text("// mine\n")
    (src / "two.cu").unlink()
    (src / "two.toml").unlink()
    assert main(["convert", str(src), "-o", str(out), "-q", "--force"]) == 0
    err = capsys.readouterr().err
    assert "removed 2 file(s)" in err and "kept 1 file(s)" in err and "two.py" in err
    assert (out / "mine.cu").read_text() == "// mine\n"
    assert (out / "two.py").read_text() == "# edited by hand\n"  # kept: the user's now
    assert not (out / "two.cu").exists() and not (out / "two.toml").exists()
    assert not {"mine.cu", "two.py"} & manifest_files(out)


def test_examine_into_a_converted_folder_keeps_its_modules(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_kernel(src)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    assert main(["convert", str(src), "-o", str(out), "-q", "--examine"]) == 0
    assert (out / "k.py").is_file() and {"k.py", "examine.json"} <= manifest_files(out)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0


def test_a_command_that_did_not_finish_leaves_a_folder_it_recognises(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_kernel(src)
    Manifest.open(out, refuse_foreign=True, create=True)  # a conversion killed after it began...
    (out / "k.py").write_text("# half written\n")  # ...and wrote one file
    assert json.loads((out / MANIFEST).read_text())["complete"] is False
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    assert "k.py" in manifest_files(out)


def test_an_out_of_a_cuda2tile_without_manifest_is_its_own(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_kernel(src)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    (out / MANIFEST).unlink()  # as an earlier cuda2tile left it: report.json names its files
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    (out / MANIFEST).unlink()
    (out / "mine.txt").write_text("x")
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 2


PROGRAM = PLAIN + """\
#include <cstdio>
int main() {
    const int n = 200;
    float *x, *y;
    cudaMallocManaged(&x, n * sizeof(float));
    cudaMallocManaged(&y, n * sizeof(float));
    for (int i = 0; i < n; ++i) x[i] = i * 0.5f;
    scale<<<4, 64>>>(y, x, 3.0f, n);
    cudaDeviceSynchronize();
    printf("%f\\n", y[n - 1]);
    return 0;
}
"""


def test_check_from_out_adds_its_recording_to_the_manifest(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_kernel(src, "prog", PROGRAM, spec=False)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    assert main(["check", "--from", str(out), "--run", ""]) == 0
    recorded = {f for f in manifest_files(out) if f.startswith("traces/")}
    assert recorded and all((out / f).exists() or (out / f).is_symlink() for f in recorded)
    # a conversion into the checked folder needs no --force, and keeps the recording
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    assert recorded <= manifest_files(out)
    assert all((out / f).exists() or (out / f).is_symlink() for f in recorded)


# -- 3. bytes and names --------------------------------------------------------------------------

def test_latin1_in_a_comment_converts_and_checks(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    text = b"// caf\xe9 \xb5s -- Latin-1, not UTF-8\n" + PLAIN.encode().replace(b"// scale", b"/* na\xefve */ // scale")
    write_kernel(src, text=text)
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["files"][0]["diagnostics"] == []
    assert checks(out)["scale"]["status"] == "pass"
    assert (out / "k.cu").read_bytes() == text  # the copy is the source, byte for byte


ODD = ["sp ace 'q\"u\u00e9/k\u00e9 rn'el.cu", "new\nline/a\nb.cu", "back\\slash/x\\y \"z\".cu"]


@pytest.mark.parametrize("name", ODD, ids=["quotes-spaces-accents", "newlines", "backslashes"])
def test_odd_file_names_convert_and_check(tmp_path, name):
    src, out = tmp_path / "src", tmp_path / "out"
    cu = src / name
    write_kernel(cu.parent, cu.stem)
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu"]) == 0
    report = json.loads((out / "report.json").read_text())
    (entry,) = report["files"]
    assert entry["file"] == name and (out / entry["output"]).is_file() and (out / name).is_file()
    assert checks(out)["scale"]["status"] == "pass", checks(out)["scale"]["message"]
    if "\n" in name:  # `migrate check FILE.cu` too
        assert main(["check", str(cu)]) == 0


def test_a_file_name_that_is_not_utf8_is_a_coded_error(tmp_path, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    write_kernel(src, "fine")
    os.rename(write_kernel(src, "other"), os.fsencode(src) + b"/caf\xe9.cu")  # a Latin-1 name on Linux
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 1
    assert "caf\\udce9.cu: error: M9008" in capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert [f["file"] for f in report["files"]] == ["fine.cu"]
    assert main(["convert", str(src), "-o", os.fsdecode(os.fsencode(tmp_path) + b"/out\xe9"), "-q"]) == 2
    assert "M9008" in capsys.readouterr().err


def test_two_sources_with_one_module_name_both_convert(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_kernel(src, "a-b", PLAIN, spec=False)
    write_kernel(src, "a_b", PLAIN.replace("scale", "scale2"), spec=False)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    files = {f["file"]: f for f in json.loads((out / "report.json").read_text())["files"]}
    assert files["a-b.cu"]["output"] == "a_b.py" and files["a_b.cu"]["output"] == "a_b_2.py"
    assert [d["code"] for d in files["a_b.cu"]["diagnostics"]] == ["M9007"]
    assert "make_scale(" in (out / "a_b.py").read_text() and "make_scale2(" in (out / "a_b_2.py").read_text()


# -- 4. TileLang's temporary files ---------------------------------------------------------------

def test_check_leaves_nothing_in_the_system_temp_folder(tmp_path):
    src = tmp_path / "src"
    cu = write_kernel(src)
    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(system_tmp))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.Popen([sys.executable, "-m", "migrate", "check", str(cu)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    assert "1 pass" in output
    assert list(system_tmp.iterdir()) == []  # TileLang's tmp*.cpp/.so went to the tool's own folder
    from migrate.runtime.build import cache_root
    assert not list((cache_root() / "tmp").glob(f"{proc.pid}-*"))  # and that folder is gone


def test_owned_tempdir_restores_and_sweeps(tmp_path, monkeypatch):
    import tempfile

    from migrate.scratch import owned_tempdir

    monkeypatch.setenv("TMPDIR", str(tmp_path / "system"))
    dead = tmp_path / "cache" / "tmp" / "999999999-abc"  # a killed command's folder (no such process)
    dead.mkdir(parents=True)
    with owned_tempdir(tmp_path / "cache") as folder:
        assert folder.parent == tmp_path / "cache" / "tmp"
        assert os.environ["TMPDIR"] == str(folder) and tempfile.gettempdir() == str(folder)
        Path(tempfile.mkstemp()[1]).write_text("tvm")
        assert not dead.exists()
    assert not folder.exists()
    assert os.environ["TMPDIR"] == str(tmp_path / "system")


# -- 5. OUT remembers how it was made ------------------------------------------------------------

@pytest.fixture(scope="module")
def shifted(tmp_path_factory):
    """k.cu with a macro SHIFT and a header from -I, converted with -D SHIFT=3 -I inc."""
    root = tmp_path_factory.mktemp("shifted")
    src, out = root / "src", root / "out"
    write_kernel(src, text='#include "extra.h"\n' + KERNEL.replace("+ SHIFT", "+ SHIFT + EXTRA"))
    (root / "inc").mkdir()
    (root / "inc" / "extra.h").write_text("#define EXTRA 0.25f\n")
    assert main(["convert", str(src), "-o", str(out), "-q", "-D", "SHIFT=3", "-I", str(root / "inc")]) == 0
    return root, out


def test_convert_records_its_flags(shifted):
    root, out = shifted
    report = json.loads((out / "report.json").read_text())
    build = report["build"]
    assert build["version"] == report["version"] and build["defines"] == ["SHIFT=3"]
    assert build["include_dirs"] == [str(root / "inc")]
    assert build["files"]["k.cu"]["defines"] == ["SHIFT=3"] and build["files"]["k.cu"]["compile_commands"] is False
    for k in report["kernels"]:  # the existing interface is unchanged
        assert {"file", "kernel", "line", "form", "diagnostics", "check"} <= set(k)


def test_check_from_out_uses_the_recorded_flags(shifted, capsys):
    _root, out = shifted
    assert main(["check", "--from", str(out)]) == 0  # no -D/-I given: SHIFT and extra.h as converted
    captured = capsys.readouterr()
    assert "M9006" not in captured.err and "1 pass" in captured.out
    assert main(["check", "--from", str(out), "-D", "SHIFT=3"]) == 0  # the same flag: no warning
    assert "M9006" not in capsys.readouterr().err


def test_check_from_out_warns_about_other_flags(shifted, capsys):
    _root, out = shifted
    assert main(["check", "--from", str(out), "-D", "SHIFT=4", "-D", "NEW"]) == 1  # a different program
    err = capsys.readouterr().err
    assert "M9006" in err and "SHIFT=4 (converted with SHIFT=3)" in err and "-D NEW (not a macro" in err


def test_compile_commands_flags_are_recorded_per_file(tmp_path, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    write_kernel(src, text='#include "cfg.h"\n' + KERNEL)
    (src / "include").mkdir()
    (src / "include" / "cfg.h").write_text("#define SHIFT 1.5f\n")
    db = [{"directory": str(src), "file": "k.cu", "command": "nvcc -Iinclude -DUNUSED=7 -c k.cu -o k.o"}]
    (src / "compile_commands.json").write_text(json.dumps(db))
    assert main(["convert", str(src / "k.cu"), "-o", str(out), "-q", "-p", str(src)]) == 0
    entry = json.loads((out / "report.json").read_text())["build"]["files"]["k.cu"]
    assert entry["compile_commands"] is True and entry["include_dirs"] == [str(src / "include")]
    assert entry["defines"] == ["UNUSED=7"]
    assert main(["check", "--from", str(out)]) == 0
    assert "1 pass" in capsys.readouterr().out


def test_given_flags_merge_with_the_recorded_ones():
    report = {"build": {"include_dirs": ["/a"], "defines": ["N=1", "M"],
                        "files": {"k.cu": {"include_dirs": ["/a", "/b"], "defines": ["N=1", "K=2"]}}}}
    assert flags.file_flags(report, "k.cu") == (("/a", "/b"), ("N=1", "K=2"))
    assert flags.file_flags(report, "k.cu", ["/c"], ["N=5", "Z"]) == (("/c", "/a", "/b"), ("N=5", "K=2", "Z"))
    assert flags.file_flags({}, "k.cu", ["/c"], ["Z"]) == (("/c",), ("Z",))  # a folder that recorded nothing
    assert flags.differences(report, ["/b"], ["N=1", "M=1", "K=2"]) == []
    assert flags.differences(report, ["/c"], ["N=2"]) == ["-D N=2 (converted with N=1)",
                                                           "-I /c (not a folder of the conversion)"]
    assert flags.differences({}, ["/c"], ["N=2"]) == []
