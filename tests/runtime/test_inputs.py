"""Random inputs, poison and byte layouts (runtime/inputs.py)."""
from __future__ import annotations

import numpy as np
import pytest

from migrate.runtime.inputs import (
    ARG_FLOAT, ARG_INT, ARG_UINT, bf16_to_bits, bits_to_bf16, from_kernel_bytes, is_poison,
    make_inputs, poison_array, random_buffer, repoison, round_to_bf16, scalar_slot, to_kernel_bytes,
)
from migrate.runtime.spec import DTYPES, parse_spec


def _spec(dtype, rng, elements=5000, extra=""):
    return parse_spec(f"""
[[kernel]]
name = "k"
grid = [1]
block = [32]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "{dtype}"
elements = {elements}
role = "in"
range = {rng}
[[kernel.args]]
name = "y"
buffer = "{dtype}"
elements = {elements}
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = {elements}
{extra}
""")[0]


FLOAT_CASES = [("float16", "[-2.0, 3.0]"), ("bfloat16", "[-2.0, 3.0]"), ("float32", "[0.1, 0.2]"),
               ("float64", "[-1e6, 1e6]")]
INT_CASES = [("int8", "[-128, 127]"), ("uint8", "[0, 255]"), ("int16", "[-5, 5]"), ("uint16", "[1, 2]"),
             ("int32", "[-100, 100]"), ("uint32", "[0, 4294967295]"), ("int64", "[-3, 3]"),
             ("uint64", "[0, 18446744073709551615]")]


@pytest.mark.parametrize("dtype,rng", FLOAT_CASES + INT_CASES)
def test_inputs_in_range_and_dtype(dtype, rng):
    k = _spec(dtype, rng)
    inp = make_inputs(k, seed=11)
    x = inp.args["x"]
    lo, hi = k.args[0].range
    holder = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    assert x.dtype == holder and x.shape == (5000,)
    if dtype in ("uint64",):
        assert int(x.min()) >= lo and int(x.max()) <= hi
    else:
        assert x.astype(np.float64).min() >= lo and x.astype(np.float64).max() <= hi
    assert np.any(x != 0)
    assert len(np.unique(x)) > 1
    if dtype == "bfloat16":
        assert np.array_equal(round_to_bf16(x), x), "bfloat16 inputs must be exact bfloat16 values"
    assert inp.args["n"] == 5000
    assert is_poison(inp.args["y"], dtype).all()


def test_integer_ranges_are_inclusive():
    x = make_inputs(_spec("int32", "[3, 4]"), seed=1).args["x"]
    assert set(np.unique(x)) == {3, 4}


def test_never_all_zero():
    for seed in range(30):
        x = make_inputs(_spec("int32", "[0, 1]", elements=1), seed=seed).args["x"]
        assert x[0] == 1
    x = make_inputs(_spec("float32", "[0.0, 1e-30]", elements=3), seed=1).args["x"]
    assert np.any(x != 0)
    with pytest.raises(ValueError, match="no non-zero"):
        random_buffer("float16", 4, (0.0, 1e-12), np.random.default_rng(0))


def test_seed_reproducibility_and_independence():
    k = _spec("float32", "[-1.0, 1.0]")
    a, b, c = make_inputs(k, 5), make_inputs(k, 5), make_inputs(k, 6)
    assert np.array_equal(a.args["x"], b.args["x"]) and a.seed == 5
    assert not np.array_equal(a.args["x"], c.args["x"])
    # adding an argument does not change the data of the others
    k2 = _spec("float32", "[-1.0, 1.0]", extra='[[kernel.args]]\nname = "w"\nbuffer = "float32"\n'
                                               'elements = 4\nrole = "in"\nrange = [0.0, 1.0]')
    assert np.array_equal(make_inputs(k2, 5).args["x"], a.args["x"])


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_poison(dtype):
    p = poison_array(dtype, 7)
    assert p.shape == (7,)
    assert is_poison(p, dtype).all()
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        assert np.isnan(p.astype(np.float64)).all()
    else:
        assert not is_poison(np.zeros(3, dtype=dtype), dtype).any()
    back = from_kernel_bytes(to_kernel_bytes(p, dtype), dtype)
    assert is_poison(back, dtype).all()
    if dtype in ("int32", "uint32"):
        assert int(p.view(np.uint32)[0]) == 0x7FBADBAD


def test_repoison_before_every_run():
    k = _spec("float32", "[-1.0, 1.0]")
    inp = make_inputs(k, 1)
    args = dict(inp.args)
    args["y"] = np.zeros(5000, np.float32)
    again = repoison(k, args)
    assert is_poison(again["y"], "float32").all()
    assert again["x"] is args["x"]


def test_bfloat16_conversions():
    f = np.array([1.0, -2.5, 3.1415927, 1e-40, 65504.0, np.inf, -np.inf, np.nan, 1.00390625, 1.01171875],
                 dtype=np.float32)
    bits = bf16_to_bits(f)
    assert bits.dtype == np.uint16
    assert bits[0] == 0x3F80 and bits[1] == 0xC020 and bits[5] == 0x7F80 and bits[6] == 0xFF80
    assert (bits[7] & 0x7F80) == 0x7F80 and (bits[7] & 0x7F) != 0
    # ties go to even: 1 + 2^-8 -> 1.0; 1 + 3 * 2^-8 -> 1 + 2^-6
    assert bits[8] == 0x3F80 and bits[9] == 0x3F82
    back = bits_to_bf16(bits)
    assert back.dtype == np.float32
    assert np.array_equal(round_to_bf16(back), back, equal_nan=True)
    data = to_kernel_bytes(back, "bfloat16")
    assert len(data) == 2 * len(f)
    assert np.array_equal(from_kernel_bytes(data, "bfloat16"), back, equal_nan=True)


def test_float16_bytes_roundtrip():
    x = np.array([0.5, -1.25, 65504.0], dtype=np.float16)
    data = to_kernel_bytes(x, "float16")
    assert data == x.tobytes()
    assert from_kernel_bytes(data, "float16").dtype == np.float16


def test_scalar_slots():
    assert scalar_slot(-3, "int32") == (ARG_INT, (-3).to_bytes(8, "little", signed=True))
    assert scalar_slot(7, "uint64")[0] == ARG_UINT
    kind, raw = scalar_slot(2.5, "float32")
    assert kind == ARG_FLOAT and np.frombuffer(raw, np.float64)[0] == 2.5
    assert scalar_slot(0.5, "float16")[0] == ARG_FLOAT
