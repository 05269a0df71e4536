"""Shapes a graph computes at run time (migrate/onnx/shape_values.py): Shape → Gather/Slice →
Unsqueeze → Concat (and arithmetic) → the shape input of Reshape or Expand, as exporters with
dynamic axes write them. With static shapes they fold to constants; with declared batch/seq they
are values holding those names, which give Reshape, Expand, ConstantOfShape and Range their output
shapes. The nodes that computed them get no kernel; a shape read by real arithmetic runs in torch.
Every model is compared with onnxruntime on TileLang's CPU target (at two sizes of declared dims,
one compiled kernel per group for both)."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from migrate.diagnostics import DiagnosticBag  # noqa: E402
from migrate.onnx.convert import convert  # noqa: E402
from migrate.onnx.dims import Dim  # noqa: E402
from migrate.onnx.graph import load  # noqa: E402

from . import models  # noqa: E402

F = TensorProto.FLOAT
n = helper.make_node
I64 = np.int64


def _dims(batch, seq):
    return (batch, seq) if batch == "batch" else (2, 6)


def _reshape_model(batch, seq):
    """x (batch, seq, 8) reshaped to (batch, seq * 2, 4), that shape computed from Shape(x): the
    batch by a Slice, seq by a scalar Gather, Unsqueeze and Mul, 4 by a Gather and Div; then Relu."""
    nodes = [n("Shape", ["x"], ["s"], name="shape"),
             n("Slice", ["s", "zero", "one"], ["b"], name="take_batch"),
             n("Gather", ["s", "i1"], ["t"], name="take_seq", axis=0),
             n("Unsqueeze", ["t", "axes0"], ["tu"], name="seq_1d"),
             n("Mul", ["tu", "two"], ["t2"], name="seq_times_2"),
             n("Gather", ["s", "i2"], ["w"], name="take_width", axis=0),
             n("Div", ["w", "two"], ["w2"], name="width_by_2"),
             n("Concat", ["b", "t2", "w2"], ["target"], name="target", axis=0),
             n("Reshape", ["x", "target"], ["r"], name="reshape"),
             n("Relu", ["r"], ["y"], name="relu")]
    inits = [("zero", np.array([0], I64)), ("one", np.array([1], I64)), ("i1", np.array(1, I64)),
             ("axes0", np.array([0], I64)), ("two", np.array([2], I64)), ("i2", np.array([2], I64))]
    out = [batch, None, 4] if batch == "batch" else [batch, seq * 2, 4]
    return models.make(nodes, [("x", F, [batch, seq, 8])], [("y", F, out)], inits, name="reshape_from_shape")


def _expand_model(batch, seq):
    """x (batch, seq, 1) expanded to (batch, seq, 8), that shape Concat(Shape(x)[0:2], [8]); plus a bias."""
    nodes = [n("Shape", ["x"], ["s"], name="shape", end=2),
             n("Concat", ["s", "eight"], ["target"], name="target", axis=0),
             n("Expand", ["x", "target"], ["e"], name="expand"),
             n("Add", ["e", "bias"], ["y"], name="bias")]
    inits = [("eight", np.array([8], I64)), ("bias", np.arange(8, dtype=np.float32))]
    return models.make(nodes, [("x", F, [batch, seq, 1])], [("y", F, [batch, seq, 8])], inits, name="expand",
                       opset=17)


def _arith_model(batch, seq):
    """x divided by its sequence length (Cast(Gather(Shape(x), 1)) to float), plus the positions
    Range(0, seq, 1) as floats (seq, 1), plus ConstantOfShape(Shape(x)) of 0.5."""
    nodes = [n("Shape", ["x"], ["s"], name="shape"),
             n("Gather", ["s", "i1"], ["t"], name="take_seq", axis=0),
             n("Cast", ["t"], ["tf"], name="seq_as_float", to=F),
             n("Div", ["x", "tf"], ["d"], name="by_seq"),
             n("Range", ["zero", "t", "step"], ["pos"], name="positions"),
             n("Cast", ["pos"], ["posf"], name="pos_as_float", to=F),
             n("Unsqueeze", ["posf", "axes1"], ["posu"], name="pos_column"),
             n("Add", ["d", "posu"], ["a"], name="add_pos"),
             n("Shape", ["x"], ["s2"], name="shape2"),
             n("ConstantOfShape", ["s2"], ["half"], name="halves",
               value=helper.make_tensor("v", F, [1], [0.5])),
             n("Add", ["a", "half"], ["y"], name="add_half")]
    inits = [("i1", np.array(1, I64)), ("zero", np.array(0, I64)), ("step", np.array(1, I64)),
             ("axes1", np.array([1], I64))]
    return models.make(nodes, [("x", F, [batch, seq, 8])], [("y", F, [batch, seq, 8])], inits, name="arith")


def _convert(model, tmp_path, name):
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    res = convert(path, tmp_path / name, check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    return res


def _kernels(res):
    return {r["name"]: r["kernel"] for r in res.report["nodes"]}


def test_static_shapes_fold_to_a_constant_reshape(tmp_path):
    res = _convert(_reshape_model(2, 6), tmp_path, "static")
    kernels = _kernels(res)
    computed = {"shape", "take_batch", "take_seq", "seq_1d", "seq_times_2", "take_width", "width_by_2", "target"}
    assert {k for k, v in kernels.items() if v == "shape"} == computed
    assert kernels["reshape"] == "view" and not res.report["summary"]["fallback"]
    assert res.graph.constants["target"].tolist() == [2, 12, 4] and res.graph.values == {}
    text = res.module.read_text()
    assert "x.reshape((2, 12, 4))  # Reshape 'reshape': a view" in text and "Shape" not in text.split("class Model")[1]


def test_declared_dims_give_a_symbolic_reshape(tmp_path):
    res = _convert(_reshape_model("batch", "seq"), tmp_path, "dynamic")
    g = res.graph
    b, s = Dim.named("batch"), Dim.named("seq")
    assert g.values["target"] == (b, s * 2, 4) and g.info("y").shape == (b, s * 2, 4)
    assert "target" not in g.constants and g.constants["w2"].tolist() == [4]   # all ints: a constant
    assert [k for k, v in _kernels(res).items() if v not in ("shape", "view")] == ["relu"]
    assert [s["compiled"] for s in res.check["sizes"]] == [1, 1]
    assert "x.reshape((batch, (seq * 2), 4))  # Reshape 'reshape': a view" in res.module.read_text()


@pytest.mark.parametrize("batch, seq", [(2, 6), ("batch", "seq")])
def test_expand_is_a_broadcast_map(tmp_path, batch, seq):
    res = _convert(_expand_model(batch, seq), tmp_path, "expand")
    kernels = _kernels(res)
    assert kernels["shape"] == kernels["target"] == "shape"
    assert kernels["expand"] == kernels["bias"] and kernels["expand"].startswith("k0_expand")
    assert [g.kind for g in res.groups] == ["map"] and not res.report["summary"]["fallback"]
    assert res.groups[0].inputs == ["x", "bias"] or res.groups[0].inputs == ["x", "target", "bias"]
    if batch == "batch":
        assert [s["compiled"] for s in res.check["sizes"]] == [1, 1]
    # the torch baseline (Eager) spells it as a broadcast too
    assert ".broadcast_to(" in res.module.read_text().split("class Eager")[1]


def test_expand_shape_value_from_a_graph():
    """The values themselves, with declared names (GQA's repeat_kv: Shape of the Unsqueeze times
    [1, 1, 2, 1, 1]), and the nodes that made them leave the graph's nodes."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "gqa.onnx"
        onnx.save(models.gqa(batch="batch", seq="seq"), str(path))
        g = load(path, DiagnosticBag())
    b, s = Dim.named("batch"), Dim.named("seq")
    assert g.values == {"k_shape": (b, 2, 1, s, 8), "k_eshape": (b, 2, 2, s, 8),
                        "v_shape": (b, 2, 1, s, 8), "v_eshape": (b, 2, 2, s, 8)}
    assert [x.name for x in g.shape_nodes] == ["k_shape", "k_eshape", "v_shape", "v_eshape"]
    assert not {x.op_type for x in g.nodes} & {"Shape"}
    assert g.info("k_e").shape == (b, 2, 2, s, 8) and g.info("k_r").shape == (b, 4, s, 8)


@pytest.mark.parametrize("batch, seq", [(2, 6), ("batch", "seq")])
def test_a_shape_read_by_arithmetic(tmp_path, batch, seq):
    """A sequence length that divides the data, a Range of positions and a ConstantOfShape. With
    static shapes the length is a constant; with declared ones Shape runs in torch (a fallback
    with its reason), and Range and ConstantOfShape take their lengths from the shape values."""
    res = _convert(_arith_model(batch, seq), tmp_path, "arith")
    kernels = _kernels(res)
    torch_ops = res.report["summary"]["fallback_ops"]
    if batch == "batch":
        assert torch_ops == {"ConstantOfShape": 1, "Range": 1, "Shape": 1}
        assert kernels["shape2"] == "shape" and kernels["take_seq"] not in ("shape", None)
        assert res.check["sizes"][0]["compiled"] == res.check["sizes"][1]["compiled"] > 0
        text = res.module.read_text()
        assert "torch.tensor(x.shape[0:3], dtype=torch.int64, device=x.device)" in text
        assert "torch.arange(0, seq, 1, device=dev)" in text and "torch.full((batch, seq, 8), 0.5, device=dev)" in text
    else:
        assert torch_ops == {"ConstantOfShape": 1, "Range": 1}
        assert kernels["shape"] == kernels["take_seq"] == kernels["shape2"] == "shape"
        assert res.graph.constants["t"].tolist() == 6
