"""analysis.lift.base: the refusal family every lift raises, and the table of reduction
operations (their combining calls, atomics, TileLang reductions and identities)."""
from __future__ import annotations

import math

import pytest

from migrate import dtypes
from migrate.analysis.lift.base import (REDUCTIONS, MicroTilesRefused, NotGemm, NotLiftable, NotScan,
                                        combine_call)
from migrate.ir import model as m


def test_the_reductions_table():
    assert set(REDUCTIONS) == {"sum", "max", "min"}
    assert [(r.atomic, r.tile_reduce) for r in REDUCTIONS.values()] == [
        ("atomicAdd", "T.reduce_sum"), ("atomicMax", "T.reduce_max"), ("atomicMin", "T.reduce_min")]
    assert REDUCTIONS["sum"].calls == ()  # a sum combines with +, not a call


def test_combine_call():
    assert combine_call("fmaxf") == combine_call("fmax") == combine_call("max") == "max"
    assert combine_call("fminf") == combine_call("std::min") == "min"
    assert combine_call("std::max") == "max"
    for other in ("fabsf", "atomicMax", "__hmax", "maxf", "sum", "std::fabs", ""):
        assert combine_call(other) is None, other


def _scalars(kind):
    return [d for d in dtypes.TABLE if d.kind == kind]


@pytest.mark.parametrize("d", _scalars("float"), ids=lambda d: d.name)
def test_float_identities(d):
    t = m.Scalar(d.name)
    s, hi, lo = REDUCTIONS["sum"], REDUCTIONS["max"], REDUCTIONS["min"]
    assert s.is_identity(t, 0) and s.is_identity(t, 0.0) and not s.is_identity(t, 1.0)
    assert hi.is_identity(t, -math.inf) and not hi.is_identity(t, math.inf)
    assert lo.is_identity(t, math.inf) and not lo.is_identity(t, -math.inf)
    # the lowest finite float is not the identity of max (max(-FLT_MAX, -inf) is -FLT_MAX)
    assert not hi.is_identity(t, -3.4028234663852886e38) and not hi.is_identity(t, 0.0)


@pytest.mark.parametrize("d", _scalars("int"), ids=lambda d: d.name)
def test_signed_identities(d):
    t, bits = m.Scalar(d.name), 8 * d.size
    lowest, highest = -2 ** (bits - 1), 2 ** (bits - 1) - 1
    assert REDUCTIONS["sum"].is_identity(t, 0)
    assert REDUCTIONS["max"].is_identity(t, lowest) and not REDUCTIONS["max"].is_identity(t, lowest + 1)
    assert REDUCTIONS["min"].is_identity(t, highest) and not REDUCTIONS["min"].is_identity(t, highest + 1)
    assert not REDUCTIONS["max"].is_identity(t, -math.inf) and not REDUCTIONS["max"].is_identity(t, 0)


@pytest.mark.parametrize("d", _scalars("uint"), ids=lambda d: d.name)
def test_unsigned_identities(d):
    t, bits = m.Scalar(d.name), 8 * d.size
    assert REDUCTIONS["max"].is_identity(t, 0) and not REDUCTIONS["max"].is_identity(t, -2 ** (bits - 1))
    assert REDUCTIONS["min"].is_identity(t, 2 ** bits - 1) and not REDUCTIONS["min"].is_identity(t, 2 ** (bits - 1) - 1)


def test_no_identity_without_a_value_or_a_number_type():
    for r in REDUCTIONS.values():
        assert not r.is_identity(m.Scalar("float32"), None)
    assert not REDUCTIONS["max"].is_identity(m.Scalar("bool"), 0)
    assert not REDUCTIONS["max"].is_identity(m.TemplateType("T"), -math.inf)
    assert REDUCTIONS["sum"].is_identity(m.TemplateType("T"), 0)  # 0 is every type's sum identity


def test_refusals_are_not_liftable():
    for kind in (NotGemm, NotScan, MicroTilesRefused):
        assert issubclass(kind, NotLiftable)
        with pytest.raises(NotLiftable, match="why"):
            raise kind("why")
    assert NotScan("looks like one").candidate and not NotScan("no", candidate=False).candidate
    assert str(NotScan("the reason")) == "the reason"
