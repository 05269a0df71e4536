"""The loop IR (migrate/ir/loops.py): nodes check what the emitter relies on when they are built,
forms and placements are closed sets that print as their names, plans are read-only, and the
dump is deterministic."""
from __future__ import annotations

import dataclasses
import json

import pytest

from migrate.ir import model as m
from migrate.ir.loops import (BlockReduce, BlockScan, Form, GemmLayout, KernelPlan, LaneExchange, Phase, Placement,
                              SimtBody, TileMap, UniformLoop, VarPlan, dump)
from migrate.ir.span import Span

SPAN = Span("k.cu", 3, 1, 3, 9)
INT = m.Scalar("int32")


def _fn(body=()):
    return m.Function("k", "global", (), m.Scalar("void"), m.Block(tuple(body), SPAN), (), (), (), (), SPAN)


def _stmt():
    return m.ExprStmt(m.Assign("=", m.Ref("x", "local", INT, SPAN), m.IntLit(1, "1", INT, SPAN), INT, SPAN), SPAN)


def test_forms_and_placements_print_and_serialise_as_their_names():
    assert Form("tile") is Form.TILE and Form.TILE == "tile"
    assert str(Form.PORTABLE) == "portable" and f"{Form.SIMT}" == "simt"
    assert json.dumps({"form": Form.TILE}) == '{"form": "tile"}'
    assert str(Placement.THREAD_ARRAY) == "thread_array"
    with pytest.raises(ValueError):
        Form("tiles")


def test_a_plan_refuses_regions_its_form_cannot_hold():
    phase = Phase((_stmt(),), 0, SPAN)
    KernelPlan(_fn(), "portable", (phase,))  # a portable plan of phases
    with pytest.raises(ValueError, match="SimtBody in a portable plan"):
        KernelPlan(_fn(), "portable", (SimtBody((_stmt(),), SPAN),))
    with pytest.raises(ValueError, match="Phase in a simt plan"):
        KernelPlan(_fn(), "simt", (phase,))
    with pytest.raises(ValueError, match="cannot be in form unsupported"):
        KernelPlan(_fn(), "unsupported", ())
    loop = UniformLoop("for", None, None, None, (SimtBody((_stmt(),), SPAN),), SPAN)
    with pytest.raises(ValueError, match="SimtBody in a portable plan"):  # nested regions are checked too
        KernelPlan(_fn(), "portable", (loop,))


def test_nodes_check_their_fields():
    with pytest.raises(ValueError, match="not a tuple"):
        Phase([_stmt()], 0, SPAN)
    with pytest.raises(ValueError, match="loop kind"):
        UniformLoop("until", None, None, None, (), SPAN)
    with pytest.raises(ValueError, match="reduction 'product'"):
        BlockReduce((), m.IntLit(1, "1", INT, SPAN), "product", "s", INT, (), None, SPAN)
    with pytest.raises(ValueError, match="dimensions"):
        TileMap((), ("w",), {}, {}, SPAN)
    with pytest.raises(ValueError, match="extents of dimensions it does not have"):
        TileMap((), ("x",), {"y": m.IntLit(4, "4", INT, SPAN)}, {}, SPAN)
    with pytest.raises(ValueError, match="empty segment"):
        BlockScan("s", INT, 0, 128, (), (), SPAN, SPAN)
    with pytest.raises(ValueError, match="tensor-core path at run-time sizes"):
        GemmLayout(None, None, (), "half", (256, 64, 3), True, True, True, True, False, ())
    with pytest.raises(ValueError, match="tensor cores where T.gemm cannot run"):
        GemmLayout(None, None, (), None, None, True, False, True, False, False, ())
    with pytest.raises(ValueError):
        VarPlan("x", INT, "register", True, m.VarDecl("x", INT, "local", False, None, SPAN))
    v = m.Ref("v", "local", INT, SPAN)
    with pytest.raises(ValueError, match="shfl_xor lane argument 4 for width 4"):  # a partner past the group
        LaneExchange("shfl_xor", v, 4, 4, v, None, None, SPAN)
    with pytest.raises(ValueError, match="width 12"):
        LaneExchange("shfl", v, 0, 12, v, None, None, SPAN)
    with pytest.raises(ValueError, match="exchange 'shfl_up'"):
        LaneExchange("shfl_up", v, 1, 32, v, None, None, SPAN)


def test_lane_exchanges_name_their_partner_and_group():
    v = m.Ref("v", "local", INT, SPAN)
    xor = LaneExchange("shfl_xor", v, 5, 32, v, None, None, SPAN)
    assert xor.partner == "lane ^ 5" and xor.group == 8  # masks up to 7 stay in aligned groups of 8
    bcast = LaneExchange("shfl", v, 3, 16, v, None, None, SPAN)
    assert bcast.partner == "lane - lane % 16 + 3" and bcast.group == 16
    assert LaneExchange("shfl", v, 0, 32, v, None, None, SPAN).partner == "lane - lane % 32"
    KernelPlan(_fn(), "tile", (xor,))  # a region of the tile form only
    with pytest.raises(ValueError, match="LaneExchange in a portable plan"):
        KernelPlan(_fn(), "portable", (xor,))


def test_plans_are_read_only():
    decl = m.VarDecl("x", INT, "local", False, None, SPAN)
    plan = KernelPlan(_fn(), "portable", (Phase((_stmt(),), 0, SPAN),), {"x": VarPlan("x", INT, "phase", False, decl)})
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.form = Form.SIMT
    with pytest.raises(TypeError):
        plan.vars["y"] = plan.vars["x"]
    tile = TileMap((), ("x",), {"x": m.Ref("n", "param", INT, SPAN)}, {}, SPAN)
    with pytest.raises(TypeError):
        tile.extents["x"] = None
    assert dataclasses.replace(plan, form="simt", regions=(SimtBody((_stmt(),), SPAN),)).form is Form.SIMT


def test_dump_is_deterministic_and_names_every_part():
    decl = m.VarDecl("x", INT, "local", False, None, SPAN)
    plan = KernelPlan(_fn(), "portable", (Phase((_stmt(),), 0, SPAN),),
                      {"x": VarPlan("x", INT, "kernel_var", False, decl)}, shapes={"A": ("M", None)})
    text = dump(plan)
    assert text == dump(dataclasses.replace(plan)) and text.endswith("\n")
    assert text.splitlines()[:3] == ["KernelPlan k: portable", "  var x: int32 in kernel_var", "  shape A: (M, None)"]
    assert "  Phase(index=0)" in text and "Assign(op='=', type='int32')" in text
    assert "k.cu" not in text  # no spans
