"""The dtype table (migrate/dtypes.py): its rows agree with numpy, TileLang and the C++ launcher, and
the old tables are views of it."""
from __future__ import annotations

import re
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

from migrate import dtypes as D
from tests.paths import REPO

SCALARS = [d for d in D.TABLE if d.kind != "void"]


def test_names_are_unique():
    names = [d.name for d in D.TABLE]
    assert len(names) == len(set(names))
    spellings = [c for d in D.TABLE for c in d.clang + d.aliases]
    assert len(spellings) == len(set(spellings)), "a C spelling names two dtypes"


@pytest.mark.parametrize("d", SCALARS, ids=lambda d: d.name)
def test_sizes_and_kinds_match_numpy(d):
    exact = np.dtype(ml_dtypes.bfloat16) if d.name == "bfloat16" else np.dtype(d.name)
    assert exact.itemsize == d.size
    assert {"bool": "b", "int": "i", "uint": "u", "float": "f"}[d.kind] == \
        ("f" if d.name == "bfloat16" else exact.kind)
    holder = np.dtype(d.numpy)
    assert holder.kind == ("f" if d.is_float else exact.kind)
    assert holder.itemsize >= d.size  # holds every value (bfloat16 in float32)
    assert d.signed == (d.kind in ("int", "float"))


@pytest.mark.parametrize("d", SCALARS, ids=lambda d: d.name)
def test_spellings(d):
    assert d.tilelang == f"T.{d.name}"
    assert d.clang, d.name
    for c in d.clang:
        assert c.startswith("unsigned") == (d.kind == "uint"), c
    if d.kind in ("int", "uint"):
        assert f"{d.name}_t" in d.aliases


def test_launcher_codes_match_c2t_launcher_h():
    header = (REPO / "runtime" / "cpu" / "c2t_launcher.h").read_text()
    names = re.search(r"dtype_names\[\]\s*=\s*\{([^}]*)\}", header).group(1)
    assert [n.strip().strip('"') for n in names.split(",")] == list(D.LAUNCHER_CODES)
    assert list(D.LAUNCHER_CODES.values()) == list(range(len(D.LAUNCHER_CODES)))
    assert set(D.SPEC_SIZES) == {d.name for d in D.TABLE if d.code is not None}


def test_views():
    assert D.C_SPELLINGS["unsigned long long"] == "uint64" and D.C_SPELLINGS["void"] == "void"
    assert D.C_SPELLINGS["char"] == "int8" and D.C_SPELLINGS["__nv_bfloat16"] == "bfloat16"
    assert "void" not in D.TEMPLATE_SPELLINGS and "void" not in D.SIZES
    assert D.TEMPLATE_SPELLINGS["unsigned"] == "uint32" and D.TEMPLATE_SPELLINGS["size_t"] == "uint64"
    assert D.TEMPLATE_SPELLINGS["half"] == "float16"
    assert set(D.C_SPELLINGS.items()) - {("void", "void")} <= set(D.TEMPLATE_SPELLINGS.items())
    assert D.VECTOR_TYPES["float4"] == ("float32", 4) and D.VECTOR_TYPES["ulonglong2"] == ("uint64", 2)
    assert D.VECTOR_TYPES["__half2"] == ("float16", 2) and "__half4" not in D.VECTOR_TYPES
    assert len(D.VECTOR_TYPES) == 12 * 4 + 2
    assert D.SIZES["bool"] == 1 and "bool" not in D.SPEC_SIZES
    assert D.SPEC_FLOATS == {"float16", "bfloat16", "float32", "float64"}
    assert D.SPEC_INTS | D.SPEC_FLOATS == set(D.SPEC_SIZES)


def test_the_old_tables_are_views():
    from migrate.emit import printer
    from migrate.ir import model
    from migrate.runtime import inputs, spec, tilelang_support

    assert model.SCALAR_DTYPES is D.C_SPELLINGS and model.VECTOR_TYPES is D.VECTOR_TYPES
    assert printer.DTYPES is D.TILELANG
    assert tilelang_support.C_TYPE_DTYPES is D.TEMPLATE_SPELLINGS
    assert spec.DTYPES is D.SPEC_SIZES and inputs.DTYPE_CODES is D.LAUNCHER_CODES
    assert spec.FLOAT_DTYPES is D.SPEC_FLOATS and spec.INT_DTYPES is D.SPEC_INTS
    assert spec.numpy_dtype("bfloat16") == np.float32 and spec.numpy_dtype("uint16") == np.uint16


def test_the_table_needs_no_libclang():
    code = ("import sys\n"
            "import migrate.dtypes\n"
            "assert not [m for m in sys.modules if m.startswith(('numpy', 'migrate.'))\n"
            "            and m != 'migrate.dtypes'], 'migrate.dtypes imports more than the stdlib'\n"
            "import migrate.runtime.tilelang_support\n"
            "bad = [m for m in sys.modules if m.startswith(('clang', 'migrate.parse', 'migrate.ir', "
            "'migrate.emit', 'tilelang', 'torch'))]\n"
            "assert not bad, bad\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
