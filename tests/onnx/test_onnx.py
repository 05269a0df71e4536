"""migrate onnx: models built with onnx.helper (tests/onnx/models.py) converted, run on TileLang's
CPU target and compared with onnxruntime; the command line; fallbacks and refusals."""
from __future__ import annotations

import json

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from migrate.onnx.convert import convert  # noqa: E402

from . import models  # noqa: E402


def _save(model, tmp_path, name):
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def _in_tilelang(report):
    return all(n["fallback"] is False and n["kernel"] for n in report["nodes"])


def test_mlp_every_node_in_tilelang_and_equal_to_onnxruntime(tmp_path):
    res = convert(_save(models.mlp(), tmp_path, "mlp"), tmp_path / "out", check="cpu")
    assert res.ok, [str(d) for d in res.diagnostics]
    rep = res.report
    assert _in_tilelang(rep)
    # MatMul+Add+Relu is one GEMM with its epilogue; the second MatMul+Add another; Softmax a third
    assert [g["nodes"] for g in rep["groups"]] == [["fc1", "fc1_bias", "act1"], ["fc2", "fc2_bias"], ["softmax"]]
    assert rep["check"]["passed"] and rep["check"]["outputs"][0]["tensor"] == "probs"
    text = res.module.read_text()
    assert "T.gemm" not in text                      # fp32: no tf32 tensor cores by default
    assert "# Relu 'act1'" in text and "T.reduce_max" in text and "T.reduce_sum" in text


def test_gelu_pattern_fused_into_the_gemm_epilogue(tmp_path):
    res = convert(_save(models.gelu_block(), tmp_path, "gelu"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics]
    assert len(res.kernels) == 1 and len(res.groups[0].nodes) == 7
    text = res.module.read_text()
    assert "T.erf(" in text and "T.float32(1.4142135381698608)" in text   # scalar constants inlined


def test_attention_block_every_node_in_tilelang(tmp_path):
    res = convert(_save(models.attention_block(), tmp_path, "attn"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert _in_tilelang(res.report)
    kinds = {g.kind for g in res.groups}
    assert {"layernorm", "matmul", "attention", "view", "reduce", "map"} <= kinds
    # scores, scale, Softmax and context in one kernel, the key transpose read through
    att = next(g for g in res.groups if g.kind == "attention")
    assert [n.name for n in att.nodes] == ["k_t", "scores", "scale", "softmax", "context"]
    assert set(att.inputs) == {"q", "k", "v", "scale"} and att.outputs == ["ctx"]
    # every group's intermediate was compared, not only the output
    assert len(res.check["groups"]) == sum(len(g.outputs) for g in res.groups)


def test_cli_writes_module_and_report(tmp_path, capsys):
    from migrate.cli import main

    path = _save(models.mlp(), tmp_path, "mlp")
    rc = main(["onnx", str(path), "-o", str(tmp_path / "out"), "-q"])
    assert rc == 0
    out = tmp_path / "out"
    assert (out / "mlp.py").is_file() and (out / "mlp.npz").is_file()
    rep = json.loads((out / "report.json").read_text())
    assert rep["tool"] == "cuda2tile" and rep["command"] == "onnx" and rep["check"] is None
    assert [n["name"] for n in rep["nodes"]] == ["fc1", "fc1_bias", "act1", "fc2", "fc2_bias", "softmax"]
    assert {n["kernel"] for n in rep["nodes"][:3]} == {"k0_matmul_add_relu"}
    assert rep["summary"]["fallback"] == 0 and rep["summary"]["kernels"] == 3
    assert "6 in 3 TileLang kernels" in capsys.readouterr().out
    # OUT is the tool's (its manifest): converting again is fine; a folder of the user's files is refused
    assert main(["onnx", str(path), "-o", str(out), "-q"]) == 0
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    assert main(["onnx", str(path), "-o", str(tmp_path / "mine"), "-q"]) == 2
    assert "M9005" in capsys.readouterr().err and not (tmp_path / "mine" / "mlp.py").exists()


def test_cli_check_with_user_inputs(tmp_path):
    from migrate.cli import main

    path = _save(models.mlp(), tmp_path, "mlp")
    x = np.random.default_rng(7).standard_normal((4, 24)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    assert main(["onnx", str(path), "-o", str(tmp_path / "out"), "--check", "cpu", "--inputs",
                 str(tmp_path / "in.npz"), "-q"]) == 0
    np.savez(tmp_path / "bad.npz", x=x[:2])
    assert main(["onnx", str(path), "-o", str(tmp_path / "out2"), "--check", "cpu", "--inputs",
                 str(tmp_path / "bad.npz"), "-q"]) == 1
    rep = json.loads((tmp_path / "out2" / "report.json").read_text())
    assert [d["code"] for d in rep["diagnostics"]] == ["M5007"]


def _gpu() -> bool:
    import torch
    return torch.cuda.is_available()


@pytest.mark.skipif(_gpu(), reason="checks the answer where torch sees no GPU")
def test_cli_check_cuda_without_a_gpu_is_a_setup_error(tmp_path, capsys):
    from migrate.cli import main

    path = _save(models.mlp(), tmp_path, "mlp")
    assert main(["onnx", str(path), "-o", str(tmp_path / "out"), "--check", "cuda", "-q"]) == 2
    err = capsys.readouterr().err
    assert "--check cuda" in err and "needs a CUDA GPU" in err and "--check cpu" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not _gpu(), reason="needs a CUDA GPU")
def test_cli_check_cuda_runs_the_model_on_the_gpu(tmp_path):
    from migrate.cli import main

    path = _save(models.mlp(), tmp_path, "mlp")
    assert main(["onnx", str(path), "-o", str(tmp_path / "out"), "--check", "cuda", "-q"]) == 0
    check = json.loads((tmp_path / "out" / "report.json").read_text())["check"]
    assert check["target"] == "cuda" and check["passed"] and check["groups"]


def test_unclaimed_op_runs_as_a_reported_torch_fallback(tmp_path):
    f = np.float32
    model = models.make(
        [helper.make_node("Sin", ["x"], ["s"], name="sine"),
         helper.make_node("Mul", ["s", "x"], ["y"], name="times_x")],
        [("x", TensorProto.FLOAT, [3, 7])], [("y", TensorProto.FLOAT, [3, 7])], name="with_sin")
    del f
    res = convert(_save(model, tmp_path, "with_sin"), tmp_path / "out", check="cpu")
    assert res.check["passed"]
    nodes = {n["name"]: n for n in res.report["nodes"]}
    assert nodes["sine"]["fallback"] == "no TileLang form for Sin yet" and nodes["sine"]["kernel"] is None
    assert nodes["times_x"]["fallback"] is False and nodes["times_x"]["kernel"]
    assert [d.code for d in res.diagnostics] == ["M5003"]
    assert res.report["summary"]["fallback_ops"] == {"Sin": 1}
    assert "# fallback: Sin 'sine' runs in torch" in res.module.read_text()


def test_refusals_are_coded(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    assert [d.code for d in convert(bad, tmp_path / "o1").diagnostics] == ["M5001"]
    # a declared dimension stays symbolic (tests/onnx/test_dynamic.py); one that no rule works out
    # from it (a pool's ceil_mode window count where the last window may start in the end padding:
    # whether it is dropped depends on H's value) is refused
    dyn = models.make([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[3, 3],
                                        pads=[0, 0, 1, 1], ceil_mode=1)],
                      [("x", TensorProto.FLOAT, [1, 2, "H", 4])], [("y", TensorProto.FLOAT, [1, 2, None, 2])])
    res = convert(_save(dyn, tmp_path, "dyn"), tmp_path / "o2")
    assert {d.code for d in res.diagnostics} == {"M5002"} and res.module is None
    assert all("no view determines" in d.message for d in res.diagnostics)
    odd = models.make([helper.make_node("Hardmax", ["x"], ["y"], name="hm")], [("x", TensorProto.FLOAT, [2, 4])],
                      [("y", TensorProto.FLOAT, [2, 4])])
    res = convert(_save(odd, tmp_path, "odd"), tmp_path / "o3")
    assert [d.code for d in res.diagnostics] == ["M5003", "M5004"] and res.module is None


def test_tf32_only_when_allowed_and_lowers_for_sm90a(tmp_path):
    """The emitted kernels lower for CUDA sm_90a without a GPU (reference 3b): the MLP's exact fp32
    GEMMs and softmax, and with --allow-tf32 the T.gemm tile on tensor cores."""
    import tilelang  # noqa: F401  (before tvm)
    import tvm

    from migrate.onnx import check as check_step

    res = convert(_save(models.mlp(batch=64, d_in=64, hidden=128, d_out=32), tmp_path, "mlp"),
                  tmp_path / "out", allow_tf32=True)
    assert [d.code for d in res.diagnostics] == ["M5005", "M5005"]
    assert "T.gemm(a_s, b_s, acc" in res.module.read_text()
    plain = convert(_save(models.mlp(batch=64, d_in=64, hidden=128, d_out=32), tmp_path, "mlp32"), tmp_path / "o2")
    tgt = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    for r in (res, plain):
        mod = check_step.load_module(r.module)
        for name, make in mod.KERNELS.items():
            with tgt:
                art = tilelang.lower(make(target="cuda"), target=tgt)
            assert "__global__" in art.kernel_source, name


def test_float16_matmul_uses_t_gemm_and_matches_in_fp16(tmp_path):
    rng = np.random.default_rng(5)
    h = np.float16
    model = models.make(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
         helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
         helper.make_node("Tanh", ["hb"], ["y"], name="act")],
        [("x", TensorProto.FLOAT16, [5, 40])], [("y", TensorProto.FLOAT16, [5, 24])],
        [("w", (rng.standard_normal((40, 24)) / 6).astype(h)), ("b", rng.standard_normal(24).astype(h))],
        name="half_mlp")
    res = convert(_save(model, tmp_path, "half"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert res.check["outputs"][0]["tolerance"] == "fp16"
    assert "T.gemm(a_s, b_s, acc" in res.module.read_text() and not res.diagnostics.items


def test_resnet_block_every_node_in_tilelang(tmp_path):
    res = convert(_save(models.resnet_block(), tmp_path, "resnet"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert _in_tilelang(res.report)
    # each convolution carries its BatchNormalization, ReLU and the residual Add as its epilogue
    assert [g.kind for g in res.groups] == ["conv", "conv", "reduce", "view", "matmul"]
    assert [n.name for n in res.groups[1].nodes] == ["conv2", "bn2", "residual", "relu2"]


def test_every_kernel_kind_lowers_for_sm90a(tmp_path):
    """One kernel of each kind (layernorm, transpose, reduce, softmax, conv, pool, map, attention) lowers to CUDA
    for sm_90a without a GPU, as the Model compiles it for target "cuda"."""
    import tilelang  # noqa: F401  (before tvm)
    import tvm

    from migrate.onnx import check as check_step

    tgt = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    seen = set()
    rows = models.make([helper.make_node("Transpose", ["x"], ["xt"], name="t", perm=[1, 0]),
                        helper.make_node("Softmax", ["xt"], ["y"], name="sm", axis=-1)],
                       [("x", TensorProto.FLOAT, [6, 10])], [("y", TensorProto.FLOAT, [10, 6])], name="rows")
    for name, model in (("attn", models.attention_block()), ("resnet", models.resnet_block()),
                        ("pools", models.pools()), ("rows", rows)):
        res = convert(_save(model, tmp_path, name), tmp_path / name)
        mod = check_step.load_module(res.module)
        for g in res.groups:
            if g.name in res.kernels and g.kind not in seen | {"matmul"}:
                seen.add(g.kind)
                with tgt:
                    art = tilelang.lower(mod.KERNELS[g.name](target="cuda"), target=tgt)
                assert "__global__" in art.kernel_source, g.name
    assert seen == {"layernorm", "transpose", "softmax", "reduce", "map", "conv", "pool", "attention"}



def test_check_names_the_first_group_that_differs(tmp_path):
    """A wrong epilogue in the first GEMM (its ReLU turned into a clamp from above) is found in that
    group, not only in the model's output, and the element is named."""
    from migrate.onnx import check as check_step

    res = convert(_save(models.mlp(), tmp_path, "mlp"), tmp_path / "out")
    text = res.module.read_text()
    assert text.count("T.max(v_h1, T.float32(0.0))") == 1
    res.module.write_text(text.replace("T.max(v_h1, T.float32(0.0))", "T.min(v_h1, T.float32(0.0))"))
    rec = check_step.run(res.graph, res.groups, res.kernels, res.module)
    assert not rec["passed"]
    assert rec["first_failing_group"]["group"] == "k0_matmul_add_relu"
    assert rec["first_failing_group"]["nodes"] == ["fc1", "fc1_bias", "act1"]
    assert not rec["outputs"][0]["passed"]


def test_tensor_names_that_clash_as_python_names(tmp_path):
    """``x:0``, ``x_0`` and ``k`` (a kernel's loop variable) stay distinct tensors."""
    model = models.make(
        [helper.make_node("Relu", ["x:0"], ["x_0"], name="a"),
         helper.make_node("Neg", ["x:0"], ["k"], name="b"),
         helper.make_node("Sub", ["x_0", "k"], ["y"], name="c")],
        [("x:0", TensorProto.FLOAT, [3, 5])], [("y", TensorProto.FLOAT, [3, 5])], name="clash")
    res = convert(_save(model, tmp_path, "clash"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics]


def test_softmax_in_one_pass_over_masked_rows(tmp_path):
    """The softmax kernel keeps a running maximum and sum (one read of the row, then one to
    write): rows of 96 in chunks of 64 whose first chunk is all -inf (an attention mask over the
    first 70 places) and rows whose maximum arrives late, equal to onnxruntime."""
    x = np.random.default_rng(21).standard_normal((6, 96)).astype(np.float32)
    x[:2, :70] = -np.inf
    x[2:4, 80:] += 12.0   # the maximum in the second chunk: the first chunk's sum is rescaled
    model = models.make([helper.make_node("Add", ["x", "m"], ["xm"], name="mask"),
                         helper.make_node("Softmax", ["xm"], ["y"], name="sm", axis=-1)],
                        [("x", TensorProto.FLOAT, [6, 96])], [("y", TensorProto.FLOAT, [6, 96])],
                        [("m", np.where(np.isinf(x), -np.inf, 0.0).astype(np.float32))], name="masked")
    res = convert(_save(model, tmp_path, "masked"), tmp_path / "out", check="cpu",
                  inputs={"x": np.where(np.isinf(x), 0.0, x).astype(np.float32)})
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    text = res.module.read_text()
    assert "T.reduce_max(chunk, chunk_max, dim=1, clear=True)" in text
    assert text.count("for ko in T.serial(") == 2, text
