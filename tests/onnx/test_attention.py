"""Attention patterns (migrate/onnx/attention.py) fused into one flash-attention kernel: which
graphs match, the kernel on TileLang's CPU target against onnxruntime at ragged sequence lengths
(keys past a block's end), every tile orientation the transposes give, lowering for sm_90a, and
the tile-size tuning of `migrate bench --onnx --tune` on the C target."""
from __future__ import annotations

import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from migrate.onnx import attention  # noqa: E402
from migrate.onnx.bench import bench_onnx  # noqa: E402
from migrate.onnx.convert import convert  # noqa: E402
from migrate.onnx.graph import load  # noqa: E402

from . import models  # noqa: E402

ELEM = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16}


def _heads(dtype="float32", heads=2, dim=8, q_perm=(0, 2, 1, 3), k_perm=(0, 2, 3, 1), v_perm=(0, 2, 1, 3),
           out_perm=(0, 2, 1, 3), scale=("Mul", 0.35), extra_output=None, mask=None, kv_heads=None, where=None):
    """Multi-head attention over (batch, seq, heads, dim) inputs as exporters write it: each of Q,
    K, V transposed to its operand layout, the scores scaled, Softmax, context, transposed back.
    A perm of None leaves that tensor as the graph gives it (already in operand layout). ``mask``:
    the shape of an additive mask input (``"computed"``: (batch, 1, 1, seq) made in the graph
    as ``(1 - m) * -10000`` from a 0/1 input, as BERT exports write it). ``where``: (keep, fill):
    the scaled scores replaced by the constant ``fill`` where a boolean (batch, 1, 1, seq) input
    ``cond`` is false (keep) or true (not keep: masked_fill), before the mask."""
    e = ELEM[dtype]
    n = helper.make_node
    nodes, inputs = [], []

    def operand(name, perm, operand_shape):
        if perm is None:
            inputs.append((name, e, operand_shape))
            return name
        # the graph input holds the operand's axes in the order the inverse of perm gives
        inv = [perm.index(i) for i in range(4)]
        inputs.append((name, e, [operand_shape[i] for i in inv]))
        nodes.append(n("Transpose", [name], [name + "_t"], name=name + "_t", perm=list(perm)))
        return name + "_t"

    q = operand("q", q_perm, ["batch", heads, "seq", dim])
    kv = heads if kv_heads is None else kv_heads
    k = operand("k", k_perm, ["batch", kv, dim, "seq"])
    v = operand("v", v_perm, ["batch", kv, "seq", dim])
    nodes.append(n("MatMul", [q, k], ["s0"], name="scores"))
    inits = []
    scores = "s0"
    if scale is not None:
        op, c = scale
        nodes.append(n(op, ["s0", "c"], ["s1"], name="scale"))
        inits.append(("c", np.array(c, dtype)))
        scores = "s1"
    if where is not None:
        keep, fill = where
        inputs.append(("cond", TensorProto.BOOL, ["batch", 1, 1, "seq"]))
        inits.append(("fill", np.array(fill, dtype)))
        nodes.append(n("Where", ["cond", scores, "fill"] if keep else ["cond", "fill", scores], ["s_w"], name="kept"))
        scores = "s_w"
    if mask == "computed":
        inputs.append(("m", e, ["batch", 1, 1, "seq"]))
        inits += [("one", np.array(1, dtype)), ("big", np.array(-10000, dtype))]
        nodes += [n("Sub", ["one", "m"], ["m1"], name="invert"), n("Mul", ["m1", "big"], ["mask"], name="to_bias")]
    elif mask is not None:
        inputs.append(("mask", e, list(mask)))
    if mask is not None:
        nodes.append(n("Add", [scores, "mask"], ["s2"], name="masked"))
        scores = "s2"
    nodes += [n("Softmax", [scores], ["p"], name="softmax", axis=-1), n("MatMul", ["p", v], ["ctx"], name="context")]
    ctx = ["batch", heads, "seq", dim]
    outputs = [("y", e, ctx if out_perm is None else [ctx[i] for i in out_perm])]
    if out_perm is None:
        nodes.append(n("Identity", ["ctx"], ["y"], name="keep"))
    else:
        nodes.append(n("Transpose", ["ctx"], ["y"], name="ctx_t", perm=list(out_perm)))
    if extra_output:
        outputs.append((extra_output, e, ["batch", heads, "seq", "seq"]))
    return models.make(nodes, inputs, outputs, inits, name="heads")


def _save(model, tmp_path, name="heads"):
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def test_pattern_takes_the_transposes_around_it(tmp_path):
    res = convert(_save(_heads(), tmp_path), tmp_path / "out")
    att = [g for g in res.groups if g.kind == "attention"]
    assert len(att) == 1 and att[0].name == "k0_attention"
    assert [n.name for n in att[0].nodes] == ["q_t", "k_t", "v_t", "scores", "scale", "softmax", "context", "ctx_t"]
    assert att[0].inputs[:3] == ["q", "k", "v"] and att[0].outputs == ["y"]
    pat = att[0].pattern
    assert pat.scale == pytest.approx(0.35) and pat.q.axes == (0, 2, 1, 3) and pat.out.axes == (0, 2, 1, 3)
    text = res.module.read_text()
    assert "T.gemm" not in text and "exact float32 multiply-adds" in text
    # one kernel for the whole pattern; the score matrix is never a tensor of the Model
    assert len(res.kernels) == 1 and "s0 = self.alloc" not in text


@pytest.mark.parametrize("why, model", [
    ("the probabilities are a graph output", _heads(extra_output="p")),
    ("the scale is a tensor, not a scalar", None),
])
def test_no_pattern_where_an_intermediate_is_needed(tmp_path, why, model):
    if model is None:   # Mul by a per-key vector: not a softmax scale
        model = _heads()
        for init in model.graph.initializer:
            if init.name == "c":
                init.CopyFrom(onnx.numpy_helper.from_array(np.full(8, 0.3, np.float32), "c"))
        assert model.graph.node[4].name == "scale"
    graph = load(_save(model, tmp_path), __import__("migrate.diagnostics", fromlist=["DiagnosticBag"]).DiagnosticBag())
    assert attention.find(graph) == [], why


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("layout", [
    dict(),                                                       # Q, V (s, d) rows; K^T read as (s, d): transpose_B
    dict(q_perm=(0, 2, 3, 1), k_perm=None, v_perm=(0, 1, 3, 2)),  # Q read as (d, s): transpose_A; V as (d, s)
    dict(q_perm=None, k_perm=(0, 1, 3, 2), v_perm=None, out_perm=None, scale=("Div", 2.5)),
])
def test_equal_to_onnxruntime_at_ragged_lengths(tmp_path, dtype, layout):
    """Sequence lengths 2 and 5 (the check's sizes) and 9 against blocks of 64 keys: the keys past
    the end are masked, the rows past the end not stored. Every orientation of the Q, K and V tiles."""
    res = convert(_save(_heads(dtype, **layout), tmp_path), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert [g.kind for g in res.groups] == ["attention"] + (["map"] if "out_perm" in layout else [])
    assert ("T.gemm(" in res.module.read_text()) == (dtype == "float16")


def test_half_kernels_lower_for_sm90a_in_every_orientation(tmp_path):
    import tilelang  # noqa: F401  (before tvm)
    import tvm

    from migrate.onnx import check as check_step

    tgt = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    for i, layout in enumerate([dict(), dict(q_perm=(0, 2, 3, 1), k_perm=None, v_perm=(0, 1, 3, 2)),
                                dict(mask=["batch", 1, 1, "seq"])]):
        res = convert(_save(_heads("float16", dim=64, **layout), tmp_path, f"h{i}"), tmp_path / f"out{i}")
        mod = check_step.load_module(res.module)
        with tgt:
            art = tilelang.lower(mod.KERNELS["k0_attention"](target="cuda"), target=tgt)
        assert "__global__" in art.kernel_source and "exp2" in art.kernel_source


def test_tuning_on_the_c_target_keeps_equal_configurations(tmp_path):
    """`migrate bench --onnx --tune` (here on TileLang's C target): every configuration tried is
    run on the model's own inputs and compared with the default's outputs; the fastest equal one
    is written to <model>.tiles.json and the Model built afterwards uses it."""
    from migrate.cli import main

    assert main(["onnx", str(_save(_heads(), tmp_path)), "-o", str(tmp_path / "out"), "-q"]) == 0
    seen = []
    rec = bench_onnx(tmp_path / "out", {"batch": 2, "seq": 70}, target="c", reps=1, rounds=1, tune=True,
                     on_tuned=lambda k, r: seen.append(k))
    assert seen == ["k0_attention"] and rec["agreement"]["eager"]["passed"]
    tried = rec["tuning"]["kernels"]["k0_attention"]["tried"]
    assert len(tried) >= 3 and all(r.get("equal", True) and "ms" in r for r in tried)
    saved = json.loads((tmp_path / "out" / "heads.tiles.json").read_text())
    assert saved["kernels"]["k0_attention"] == rec["tuning"]["kernels"]["k0_attention"]["config"]
    assert saved["dims"] == {"batch": 2, "seq": 70}


def test_a_wrong_configuration_is_refused_by_the_comparison(tmp_path, monkeypatch):
    """A configuration whose kernel computes something else (a kernel that scales the scores twice
    stands in for a miscompiled tile) is recorded as unequal and never chosen, however fast."""
    from types import SimpleNamespace

    from migrate.onnx import bench as bench_step
    from migrate.onnx import check as check_step
    from migrate.onnx import tune as tune_step

    from migrate.cli import main

    assert main(["onnx", str(_save(_heads(), tmp_path)), "-o", str(tmp_path / "out"), "-q"]) == 0
    module = tmp_path / "out" / "heads.py"
    mod = check_step.load_module(module)
    text = module.read_text()
    wrong_text = text.replace("s[i, j] * T.float32(", "s[i, j] * T.float32(2.0) * T.float32(")
    assert wrong_text != text
    (tmp_path / "wrong.py").write_text(wrong_text)   # TileLang reads a kernel's source from its file
    good = mod.KERNELS["k0_attention"]
    wrong = check_step.load_module(tmp_path / "wrong.py").KERNELS["k0_attention"]

    def make(target="cuda", batch=None, seq=None, block_m=64, block_n=64, stages=1, threads=256):
        return (wrong if block_m == 16 else good)(target=target, block_m=block_m, block_n=block_n,
                                                  stages=stages, threads=threads)

    monkeypatch.setattr(tune_step, "CANDIDATES", {("attention", "exact"): [dict(block_m=16), dict(block_m=32)]})
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    inputs = bench_step.make_inputs(report, {"batch": 2, "seq": 40}, "cpu")
    tuned = tune_step.tune(mod.Model(target="c"), SimpleNamespace(KERNELS={"k0_attention": make}), report, inputs,
                           bench_step._Clock("c"), reps=1, rounds=1, target="c")
    rows = {r["config"]["block_m"]: r for r in tuned["k0_attention"]["tried"]}
    assert rows[16]["equal"] is False and "ms" not in rows[16] and rows[16]["message"]
    assert rows[32]["equal"] is True and "ms" in rows[32]
    assert tuned["k0_attention"]["config"]["block_m"] in (64, 32)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("mask", [["batch", 1, 1, "seq"], ["batch", 2, "seq", "seq"], "computed"])
def test_an_additive_mask_joins_the_pattern(tmp_path, dtype, mask):
    """Softmax(scores · c + mask): the mask (one row per batch entry broadcast over heads and
    queries, a full one, or one the graph computes with a Mul of its own) is added inside the
    kernel; equal to onnxruntime at ragged lengths."""
    res = convert(_save(_heads(dtype, mask=mask), tmp_path), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    att = next(g for g in res.groups if g.kind == "attention")
    assert "masked" in [n.name for n in att.nodes] and att.pattern.mask == "mask"
    assert "to_bias" not in [n.name for n in att.nodes]   # the mask's own Mul is not the scale
    assert att.pattern.scale == pytest.approx(0.35, rel=1e-3)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_one_key_value_head_for_all_query_heads(tmp_path, dtype):
    """Multi-query attention: K and V with one head, broadcast by the MatMuls over Q's three; the
    kernel reads head 0 of them for every query head; equal to onnxruntime."""
    model = _heads(dtype, heads=3, kv_heads=1, k_perm=None, v_perm=None, mask=["batch", 1, 1, "seq"])
    res = convert(_save(model, tmp_path), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert [g.kind for g in res.groups][0] == "attention"
    text = res.module.read_text()
    assert "k[bz // 3, 0, " in text or "k[bz // 3, 0," in text, text[text.index("T.copy(k"):][:200]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("where, mask", [
    ((True, -1e4), None),                         # Where(cond, scores, -1e4)
    ((False, "lowest"), None),                    # masked_fill: Where(cond, lowest, scores)
    ((True, "lowest"), ["batch", 1, 1, "seq"]),   # then an additive mask
])
def test_a_where_mask_joins_the_pattern(tmp_path, dtype, where, mask):
    """Scores replaced by a constant where a boolean condition (broadcast over heads and queries)
    says, as masked_fill exports write it, before an optional additive mask. The fill may be the
    type's lowest value: times log2(e) it is held at that value, so that a row whose every key is
    masked (frequent at the check's lengths 2 and 5 with random conditions) is the uniform
    softmax the graph gives. Equal to onnxruntime."""
    keep, fill = where
    fill = float(np.finfo(dtype).min) if fill == "lowest" else fill
    res = convert(_save(_heads(dtype, where=(keep, fill), mask=mask), tmp_path), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    att = next(g for g in res.groups if g.kind == "attention")
    assert [g.kind for g in res.groups] == ["attention"]
    assert "kept" in [n.name for n in att.nodes] and att.pattern.where.keep == keep
    assert att.pattern.where.fill == pytest.approx(fill) and att.pattern.mask == ("mask" if mask else None)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("batch, seq", [(2, 9), ("batch", "seq")])
def test_grouped_query_heads_read_through_repeat_kv(tmp_path, dtype, batch, seq):
    """Grouped-query attention (4 query heads, 2 K/V heads) with HF's repeat_kv: the Transposes,
    Unsqueeze, Expand and Reshape of K and V join the fused kernel, which reads K/V head h // 2 of
    the inputs; the Shape → Mul computing the Expand's shape are shape nodes (no kernel). Static and
    with declared batch/seq (one compiled kernel for both of the check's sizes); equal to onnxruntime."""
    res = convert(_save(models.gqa(dtype, batch=batch, seq=seq), tmp_path, "gqa"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert [g.kind for g in res.groups] == ["attention"]
    att = res.groups[0]
    assert att.pattern.k == attention.Operand("k", (0, 2, 3, 1), (1, 2, 1, 1))
    assert att.pattern.v == attention.Operand("v", (0, 2, 1, 3), (1, 2, 1, 1))
    kinds = {n["name"]: n["kernel"] for n in res.report["nodes"]}
    assert {k for k, v in kinds.items() if v == "shape"} == {"k_shape", "k_eshape", "v_shape", "v_eshape"}
    assert set(kinds.values()) == {"k0_attention", "shape"} and len(kinds) == 19
    assert res.report["summary"]["nodes_in_tilelang"] == 15 and res.report["summary"]["shape_nodes"] == 4
    text = res.module.read_text()
    assert "(bz % 4) // 2" in text and "k_e = self.alloc" not in text
    if batch == "batch":
        assert [s["compiled"] for s in res.check["sizes"]] == [1, 1]


def test_grouped_query_kernel_lowers_for_sm90a(tmp_path):
    """fp16 grouped-query attention (8 query heads on 2 K/V heads, declared batch and seq) lowers
    for sm_90a with K and V loaded by TMA from the original (un-repeated) tensors at head h // 4."""
    import tilelang  # noqa: F401  (before tvm)
    import tvm

    from migrate.onnx import check as check_step

    model = models.gqa("float16", batch="batch", seq="seq", dim=64, heads=8, kv_heads=2)
    res = convert(_save(model, tmp_path, "gqa"), tmp_path / "out")
    assert [g.kind for g in res.groups] == ["attention"]
    mod = check_step.load_module(res.module)
    with tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}) as tgt:
        src = tilelang.lower(mod.KERNELS[res.groups[0].name](target="cuda"), target=tgt).kernel_source
    loads = [ln for ln in src.split("\n") if "tma_load(" in ln]
    assert any("k_desc" in ln and ">> 2)" in ln for ln in loads), loads
    assert any("v_desc" in ln and ">> 2)" in ln for ln in loads), loads
