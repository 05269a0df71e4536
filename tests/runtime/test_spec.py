"""Spec loading (runtime/spec.py): valid specs, and clear errors for malformed ones."""
from __future__ import annotations

from pathlib import Path

import pytest

from migrate.runtime.spec import SpecError, load_spec, parse_spec
from tests.paths import REPO

ROOT = REPO

GOOD = """
[[kernel]]
name = "reduce"
id = "reduce_f32"
template = ["float", "256"]
grid = [40]
block = [256, 1]
shared_bytes = 1024
tolerance = "fp32_accum"
description = "a reduction"

[[kernel.args]]
name = "n"
scalar = "int32"
value = 10000

[[kernel.args]]
name = "x"
buffer = "float32"
elements = 10000
role = "in"
range = [-1.0, 1.0]

[[kernel.args]]
name = "out"
buffer = "float32"
elements = 40
role = "out"

[[kernel.symbols]]
name = "c_taps"
dtype = "float32"
elements = 9
range = [-1.0, 1.0]
"""


def test_parse_good_spec():
    (k,) = parse_spec(GOOD, "corpus/reduction/reduce.toml")
    assert k.name == "reduce" and k.id == "reduce_f32"
    assert k.template == ("float", "256")
    assert k.instance == "reduce<float, 256>"
    assert k.grid == (40, 1, 1) and k.block == (256, 1, 1)
    assert k.shared_bytes == 1024 and k.tolerance == "fp32_accum"
    assert [a.name for a in k.args] == ["n", "x", "out"]
    n, x, out = k.args
    assert n.is_scalar and n.value == 10000 and n.dtype == "int32"
    assert x.is_buffer and x.role == "in" and x.range == (-1.0, 1.0) and x.nbytes == 40000
    assert out.is_output and not x.is_output and out.range is None
    assert k.symbols[0].name == "c_taps" and k.symbols[0].elements == 9
    assert k.cu_path.endswith("reduce.cu")
    assert k.reference_key() == "reduction/reduce.cu:reduce_f32"
    with pytest.raises(Exception):
        k.name = "other"          # frozen


def test_id_defaults_to_name_and_template_ints():
    (k,) = parse_spec(GOOD.replace('id = "reduce_f32"\n', "").replace('["float", "256"]', '["float", 256]'))
    assert k.id == "reduce" and k.template == ("float", "256")


def _bad(text_from_good, old, new):
    return text_from_good.replace(old, new)


@pytest.mark.parametrize("old,new,needle", [
    ('name = "reduce"', 'nam = "reduce"', "unknown key"),
    ('name = "reduce"\n', "", "missing or empty 'name'"),
    ('buffer = "float32"\nelements = 10000', 'buffer = "float31"\nelements = 10000', "unknown dtype"),
    ('range = [-1.0, 1.0]\n\n[[kernel.args]]\nname = "out"', '\n[[kernel.args]]\nname = "out"', "needs 'range"),
    ("range = [-1.0, 1.0]\n\n[[kernel.args]]", "range = [0, 0]\n\n[[kernel.args]]", "all zero"),
    ("range = [-1.0, 1.0]\n\n[[kernel.args]]", "range = [1.0, -1.0]\n\n[[kernel.args]]", "lo > hi"),
    ("value = 10000", "", "needs a 'value'"),
    ("value = 10000", "value = 1.5", "must be an integer"),
    ("value = 10000", "value = 3000000000", "does not fit int32"),
    ("block = [256, 1]", "block = [2048, 1]", "at most 1024"),
    ("grid = [40]", "grid = [0]", "positive integers"),
    ("grid = [40]", "grid = [1, 2, 3, 4]", "1 to 3"),
    ('tolerance = "fp32_accum"', 'tolerance = "loose"', "unknown tolerance class"),
    ('tolerance = "fp32_accum"\n', "", "missing 'tolerance'"),
    ('role = "out"', 'role = "output"', "'role' must be one of"),
    ("elements = 40\n", "elements = 0\n", "positive integer"),
    ('scalar = "int32"', 'scalar = "int32"\nbuffer = "int32"', "exactly one of"),
    ("shared_bytes = 1024", "shared_bytes = -1", "non-negative"),
    ('name = "n"', 'name = "x"', "duplicate argument name"),
    ("dtype = \"float32\"\nelements = 9\nrange = [-1.0, 1.0]", "dtype = \"float32\"\nelements = 9", "symbol needs 'range"),
])
def test_spec_errors(old, new, needle):
    text = GOOD.replace(old, new, 1)
    assert text != GOOD
    with pytest.raises(SpecError) as ei:
        parse_spec(text, "corpus/x/bad.toml")
    msg = str(ei.value)
    assert needle in msg, msg
    assert msg.startswith("corpus/x/bad.toml:")
    assert ei.value.line > 0 and ei.value.code.startswith("M41"), (ei.value.line, ei.value.code)
    assert ei.value.path == "corpus/x/bad.toml"


def test_invalid_toml_and_empty(tmp_path):
    p = tmp_path / "broken.toml"
    p.write_text("[[kernel]]\nname = \n")
    with pytest.raises(SpecError, match="invalid TOML"):
        load_spec(p)
    p.write_text("")
    with pytest.raises(SpecError, match=r"no \[\[kernel\]\] table"):
        load_spec(p)
    with pytest.raises(SpecError, match="cannot read spec"):
        load_spec(tmp_path / "missing.toml")


def test_duplicate_ids():
    with pytest.raises(SpecError, match="duplicate kernel id"):
        parse_spec(GOOD + GOOD.replace("[[kernel]]", "[[kernel]]", 1))


def test_integer_range_rules():
    text = GOOD.replace('buffer = "float32"\nelements = 10000', 'buffer = "uint8"\nelements = 10000') \
               .replace("range = [-1.0, 1.0]\n\n[[kernel.args]]", "range = [0, 300]\n\n[[kernel.args]]")
    with pytest.raises(SpecError, match="does not fit uint8"):
        parse_spec(text)
    text2 = text.replace("range = [0, 300]", "range = [0.5, 3]")
    with pytest.raises(SpecError, match="integer bounds"):
        parse_spec(text2)


def test_every_corpus_spec_parses():
    specs = sorted((ROOT / "corpus").glob("**/*.toml"))
    for p in specs:
        kernels = load_spec(p)
        assert kernels, p
        assert Path(kernels[0].cu_path).is_file(), f"{p}: no .cu beside it"


def test_runtime_needs_no_libclang():
    """A GPU machine runs the runtime with only the runtime installed: no libclang, no migrate.parse."""
    import subprocess
    import sys
    code = ("import sys\n"
            "import migrate.runtime.api, migrate.runtime.cuda_cpu, migrate.runtime.cuda_gpu, migrate.runtime.compare\n"
            "import migrate.runtime.__main__\n"
            "bad = [m for m in sys.modules if m.startswith(('clang', 'migrate.parse', 'migrate.analysis', "
            "'migrate.emit', 'tilelang', 'torch'))]\n"
            "assert not bad, bad\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
