"""Programs of a codebase (migrate/programs.py): the units that link into one executable with a
main(), the converted files each holds, and the run settings of cuda2tile.toml."""
from __future__ import annotations

import json

import pytest

from migrate.programs import find_programs, read_settings



def _sources(folder):
    return [(p, p.relative_to(folder.parent).as_posix()) for p in sorted(folder.rglob("*.cu"))]


def test_without_a_build_list_the_folder_of_main_is_the_program(multi_unit):
    (prog,) = find_programs(_sources(multi_unit))
    assert prog.main == (multi_unit / "main.cu").resolve()
    assert sorted(u.name for u in prog.units) == ["host_util.cpp", "kernels.cu", "keys.c"]
    assert prog.files == ["prog/kernels.cu", "prog/main.cu"]
    assert prog.run == {} and prog.problem == ""


def test_a_file_another_includes_is_not_a_unit(multi_unit):
    (multi_unit / "main.cu").write_text((multi_unit / "main.cu").read_text() + '\n#include "extra.cu"\n')
    (multi_unit / "extra.cu").write_text("__global__ void extra(float* p) { p[0] = 1.0f; }\n")
    (prog,) = find_programs(_sources(multi_unit))
    assert "extra.cu" not in [u.name for u in prog.units]
    assert "prog/extra.cu" in prog.files  # it belongs to the program through main.cu


def test_a_compilation_database_lists_the_units_of_each_build_folder(multi_unit, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "solo.cu").write_text("__global__ void k(int* p) { p[0] = 1; }\nint main() { return 0; }\n")
    db = tmp_path / "db"
    db.mkdir()
    entries = [{"directory": str(multi_unit), "command": f"nvcc -c {f}", "file": f}
               for f in ("main.cu", "kernels.cu", "host_util.cpp")]  # keys.c left out: not a unit of this build
    entries.append({"directory": str(other), "command": "nvcc -c solo.cu", "file": "solo.cu"})
    (db / "compile_commands.json").write_text(json.dumps(entries))
    progs = {p.main.name: p for p in find_programs(_sources(multi_unit) + [(other / "solo.cu", "other/solo.cu")], db)}
    assert sorted(u.name for u in progs["main.cu"].units) == ["host_util.cpp", "kernels.cu"]
    assert progs["solo.cu"].units == [] and progs["solo.cu"].files == ["other/solo.cu"]


def test_a_folder_without_main_is_no_program(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "k.cu").write_text("__global__ void k(int* p) { p[0] = 1; }\n")
    assert find_programs([(lib / "k.cu", "lib/k.cu")]) == []


@pytest.mark.parametrize("text, problem", [
    ('[run]\nargs = "-n 64 in.txt"\ntimeout = 30\ncwd = "data"\n', ""),
    ("[run\nargs = 1", "not valid TOML"),
    ('[run]\nargz = "1"\n', "unknown key run.argz"),
    ("[run]\nargs = 64\n", "run.args has the wrong type"),
    ("[run]\ntimeout = -1\n", "run.timeout must be between"),
    ('[run]\ncwd = "../elsewhere"\n', "run.cwd must be a folder inside"),
    ('[run]\nargs = "unbalanced \\"quote"\n', "cannot be split"),
])
def test_run_settings_are_read_or_their_problem_named(tmp_path, text, problem):
    (tmp_path / "cuda2tile.toml").write_text(text)
    run, found = read_settings(tmp_path)
    if problem:
        assert problem in found and run == {}
    else:
        assert found == "" and run == {"args": "-n 64 in.txt", "timeout": 30, "cwd": "data"}
