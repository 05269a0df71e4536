"""migrate onnx with dimensions the model declares by name (dim_param): kernels take them as
T.dynamic extents, one compiled kernel per group serves every value, and the Model runs at two
batch sizes in one process, each compared with onnxruntime; a group that needs a value is
specialised per value (M5009)."""
from __future__ import annotations

import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from migrate.onnx import check as check_step  # noqa: E402
from migrate.onnx.convert import convert  # noqa: E402
from migrate.onnx.dims import Dim, Floor, NeedsValue, factors, substitute, window_count  # noqa: E402
from migrate.runtime.compare import compare_arrays  # noqa: E402

from . import models  # noqa: E402


def _declare(model, dims):
    """``model`` with the given axes of its graph inputs/outputs declared by name."""
    for vi in list(model.graph.input) + list(model.graph.output):
        for axis, name in dims.get(vi.name, {}).items():
            d = vi.type.tensor_type.shape.dim[axis]
            d.ClearField("dim_value")
            d.dim_param = name
    onnx.checker.check_model(model)
    return model


def _save(model, tmp_path, name):
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def _ln_softmax(width=16, seed=0):
    """LayerNormalization → Softmax → ReduceMean over the sequence → Sub, on (batch, seq, width)."""
    rng = np.random.default_rng(seed)
    f = np.float32
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["xn"], name="ln", axis=-1),
             helper.make_node("Softmax", ["xn"], ["p"], name="sm", axis=-1),
             helper.make_node("ReduceMean", ["p"], ["m"], name="seq_mean", axes=[1], keepdims=1),
             helper.make_node("Sub", ["p", "m"], ["y"], name="center")]
    return models.make(nodes, [("x", TensorProto.FLOAT, ["batch", "seq", width])],
                       [("y", TensorProto.FLOAT, ["batch", "seq", width])],
                       [("g", rng.uniform(.5, 1.5, width).astype(f)), ("b", rng.standard_normal(width).astype(f))],
                       name="ln_softmax")


def _run_both(path, module, sizes, seed=11):
    """Run the converted Model (CPU target) at each input shape in ``sizes`` in one process and compare
    with onnxruntime; returns the number of compiled kernels after each run."""
    import torch

    mod = check_step.load_module(module)
    model = mod.Model(target="c", alloc=check_step.poisoned_empty)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    compiled = []
    for shape in sizes:
        x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        want = sess.run(None, {name: x})[0]
        got = model(torch.from_numpy(x))
        assert tuple(got.shape) == want.shape
        r = compare_arrays(want, got.numpy(), "float32", "fp32_accum", name="y")
        assert r.passed, (shape, r.message)
        compiled.append(len(model.compiled))
    return compiled


def test_dims_are_products_of_names():
    b, s = Dim.named("batch"), Dim.named("seq")
    x = math.prod((b, s, 8))
    assert str(x) == "(batch * seq * 8)" and str(b) == "batch"
    assert x // 8 == b * s and x // (b * 8) == s and (x // 8) // (b * s) == 1
    assert factors(x) == (b, s, 8) and factors(b + 1) is None
    assert b == b and b != 1 and x in (1, b * s * 8)
    assert substitute((x, b - 1, 4), {"batch": 2, "seq": 3}) == (48, 1, 4)
    with pytest.raises(NeedsValue):
        b < 2  # noqa: B015
    with pytest.raises(NeedsValue):
        x // 5


def test_mlp_with_a_batch_dim_one_kernel_serves_two_batch_sizes(tmp_path):
    path = _save(_declare(models.mlp(), {"x": {0: "batch"}, "probs": {0: "batch"}}), tmp_path, "mlp")
    res = convert(path, tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert res.report["dims"] == {"batch": {"input": "x", "axis": 0}}
    # the check ran at batch 2 and 5 with the same three compiled kernels
    assert [(s["dims"], s["passed"], s["compiled"]) for s in res.check["sizes"]] == \
        [({"batch": 2}, True, 3), ({"batch": 5}, True, 3)]
    text = res.module.read_text()
    assert "batch = T.dynamic('batch') if batch is None else batch" in text
    assert "x: T.Tensor((batch, 24), T.float32)" in text and "T.ceildiv(batch, block_m)" in text
    assert _run_both(path, res.module, [(2, 24), (5, 24)]) == [3, 3]


def test_layernorm_softmax_with_batch_and_seq(tmp_path):
    path = _save(_ln_softmax(), tmp_path, "lnsm")
    res = convert(path, tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert set(res.report["dims"]) == {"batch", "seq"} and not res.special
    text = res.module.read_text()
    # a view that folds both names into its rows binds them through a parameter declared with its factors
    assert "x_dims: T.Tensor((batch, seq, 16), T.float32)" in text
    assert "x = T.reshape(x_dims, ((batch * seq), 16))  # binds batch, seq" in text
    assert _run_both(path, res.module, [(2, 3, 16), (5, 7, 16)]) == [4, 4]


def test_attention_block_with_a_batch_dim_and_reshapes_by_minus_one(tmp_path):
    """Reshape to [-1, dim] and back to [-1, seq, dim]: shape inference names the rows itself
    (unk__N); the converter works them out from 'batch' and every group stays symbolic."""
    model = models.attention_block(batch=2, seq=5, dim=8)
    for init in model.graph.initializer:
        if init.name == "flat":
            init.CopyFrom(numpy_helper.from_array(np.array([-1, 8], np.int64), "flat"))
        if init.name == "shape3":
            init.CopyFrom(numpy_helper.from_array(np.array([-1, 5, 8], np.int64), "shape3"))
    path = _save(_declare(model, {"x": {0: "batch"}, "yc": {0: "batch"}}), tmp_path, "attn")
    res = convert(path, tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert not res.special and all(n["fallback"] is False for n in res.report["nodes"])
    n = len(res.kernels)
    assert _run_both(path, res.module, [(2, 5, 8), (5, 5, 8)]) == [n, n]


def test_a_slice_clamped_to_a_declared_extent_is_specialised_per_value(tmp_path):
    """x[:, 1:] on a dynamic sequence (dropping a class token): its length 'seq - 1' becomes a derived
    extent the other groups take symbolically; the Slice's own kernel needs seq's value (ONNX clamps
    the start to it) and is emitted and compiled per value (M5009)."""
    rng = np.random.default_rng(3)
    f = np.float32
    nodes = [helper.make_node("Slice", ["x", "st", "en", "ax"], ["xs"], name="drop_cls"),
             helper.make_node("LayerNormalization", ["xs", "g", "b"], ["xn"], name="ln", axis=-1),
             helper.make_node("MatMul", ["xn", "w"], ["y"], name="proj")]
    model = models.make(nodes, [("x", TensorProto.FLOAT, ["batch", "seq", 16])],
                        [("y", TensorProto.FLOAT, ["batch", "tokens", 8])],
                        [("g", rng.uniform(.5, 1.5, 16).astype(f)), ("b", rng.standard_normal(16).astype(f)),
                         ("st", np.array([1], np.int64)), ("en", np.array([2 ** 62], np.int64)),
                         ("ax", np.array([1], np.int64)), ("w", rng.standard_normal((16, 8)).astype(f))],
                        name="drop_cls")
    path = _save(model, tmp_path, "drop")
    res = convert(path, tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert [d.code for d in res.diagnostics] == ["M5009"]
    assert res.special == {"k0_slice": ["batch", "seq", "seq_minus_1"]}
    assert res.graph.derived == {"seq_minus_1": Dim.named("seq") - 1}
    group = {g["kernel"]: g for g in res.report["groups"]}
    assert group["k0_slice"]["specialised"] == ["batch", "seq", "seq_minus_1"]
    assert (tmp_path / "out" / "drop.groups.pkl").is_file()
    assert "seq_minus_1 = seq - 1  # derived" in res.module.read_text()
    # two symbolic kernels compiled once; the Slice once per sequence length
    assert _run_both(path, res.module, [(2, 4, 16), (3, 4, 16), (2, 9, 16)]) == [3, 4, 5]


def test_symbolic_kernels_lower_for_sm90a(tmp_path):
    """The dynamic-extent kernels lower to CUDA for sm_90a without a GPU (the extents are kernel
    arguments)."""
    import tilelang  # noqa: F401  (before tvm)
    import tvm

    res = convert(_save(_ln_softmax(), tmp_path, "lnsm"), tmp_path / "out")
    mod = check_step.load_module(res.module)
    tgt = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    for name, make in mod.KERNELS.items():
        with tgt:
            art = tilelang.lower(make(target="cuda"), target=tgt)
        assert "__global__" in art.kernel_source and "int batch" in art.kernel_source, name


def test_cli_check_with_user_inputs_takes_their_batch(tmp_path, capsys):
    from migrate.cli import main

    path = _save(_declare(models.mlp(), {"x": {0: "batch"}, "probs": {0: "batch"}}), tmp_path, "mlp")
    np.savez(tmp_path / "in.npz", x=np.random.default_rng(8).standard_normal((3, 24)).astype(np.float32))
    assert main(["onnx", str(path), "-o", str(tmp_path / "out"), "--check", "cpu", "--inputs",
                 str(tmp_path / "in.npz"), "-q"]) == 0
    rep = __import__("json").loads((tmp_path / "out" / "report.json").read_text())
    assert rep["check"]["sizes"] == [{"dims": {"batch": 3}, "passed": True, "compiled": 3}]
    assert rep["inputs"] == [{"name": "x", "shape": ["batch", 24], "dtype": "float32"}]
    # a width that is not the model's is refused, whatever the batch
    np.savez(tmp_path / "bad.npz", x=np.ones((3, 5), np.float32))
    assert main(["onnx", str(path), "-o", str(tmp_path / "out2"), "--check", "cpu", "--inputs",
                 str(tmp_path / "bad.npz"), "-q"]) == 1
    assert "M5007" in capsys.readouterr().err + (tmp_path / "out2" / "report.json").read_text()


@pytest.mark.parametrize("group, stride", [(1, 2), (2, 1)])
def test_convolution_with_a_batch_dim(tmp_path, group, stride):
    """An ungrouped convolution (a GEMM over shared im2col and weight tiles) and a grouped one (the
    direct form), strided and padded, with a declared batch: equal to onnxruntime at two batch sizes."""
    rng = np.random.default_rng(group * 10 + stride)
    f = np.float32
    model = models.make(
        [helper.make_node("Conv", ["x", "w", "cb"], ["y"], name="conv", group=group, kernel_shape=[3, 3],
                          pads=[1, 1, 1, 1], strides=[stride, stride]),
         helper.make_node("Relu", ["y"], ["z"], name="act")],
        [("x", TensorProto.FLOAT, ["batch", 4, 7, 7])], [("z", TensorProto.FLOAT, ["batch", 6, None, None])],
        [("w", rng.standard_normal((6, 4 // group, 3, 3)).astype(f)), ("cb", rng.standard_normal(6).astype(f))],
        name="conv")
    res = convert(_save(model, tmp_path, "conv"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    text = res.module.read_text()
    assert ("a_s[i, kk] = T.if_then_else(" in text) == (group == 1)
    assert "T.ceildiv((batch * " in text and len(res.check["sizes"]) == 2


def test_window_counts_of_declared_extents():
    """A strided window count along a declared extent is a Floor (no polynomial spells it); an
    unstrided one, or one whose division is exact, stays a Dim; numbers stay numbers."""
    h = Dim.named("H")
    assert window_count(h, 3, 1, 1, 1) == h and window_count(h * 2, 2, 2) == h
    half = window_count(h, 3, 2, 1, 1)
    assert isinstance(half, Floor) and str(half) == "((H - 1) // 2 + 1)" and half.names == {"H"}
    assert [substitute(half, {"H": v}) for v in (5, 6, 7)] == [3, 3, 4]
    assert window_count(7, 3, 2, 1, 1) == 4


def _conv_pool(stride, seed=5):
    """Conv 3x3 (pad 1, ``stride``) → Relu → MaxPool 2x2 stride 2 on (batch, 3, H, W)."""
    rng = np.random.default_rng(seed)
    f = np.float32
    nodes = [helper.make_node("Conv", ["x", "w", "cb"], ["c"], name="conv", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[stride, stride]),
             helper.make_node("Relu", ["c"], ["r"], name="act"),
             helper.make_node("MaxPool", ["r"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2])]
    return models.make(nodes, [("x", TensorProto.FLOAT, ["batch", 3, "H", "W"])],
                       [("y", TensorProto.FLOAT, ["batch", 6, None, None])],
                       [("w", rng.standard_normal((6, 3, 3, 3)).astype(f)), ("cb", rng.standard_normal(6).astype(f))],
                       name="conv_pool")


@pytest.mark.parametrize("stride", [1, 2])
def test_convolution_and_pool_on_declared_image_sizes(tmp_path, stride):
    """Declared H and W (they were refused with M5002): each window count is a derived extent
    (``H_1 = ((H - 1) // 2 + 1)``) the Model computes from the input's shape and the kernels take
    as T.dynamic, so one compiled kernel per group serves every image size, equal to onnxruntime."""
    path = _save(_conv_pool(stride), tmp_path, "cp")
    res = convert(path, tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert not res.special and all(n["fallback"] is False for n in res.report["nodes"])
    want = {"H_1": "((H - 2) // 2 + 1)", "W_1": "((W - 2) // 2 + 1)"} if stride == 1 else \
        {"H_1": "((H - 1) // 2 + 1)", "W_1": "((W - 1) // 2 + 1)", "H_2": "((H_1 - 2) // 2 + 1)",
         "W_2": "((W_1 - 2) // 2 + 1)"}
    assert res.report["derived"] == want
    text = res.module.read_text()
    assert ("H_1 = (H - 1) // 2 + 1  # derived" if stride == 2 else "H_1 = (H - 2) // 2 + 1  # derived") in text
    # the check's image sizes fit the windows (H = 2 would leave the stride-2 pool nothing to cover)
    assert all(min(s["dims"]["H"], s["dims"]["W"]) >= (3 if stride == 2 else 2) for s in res.check["sizes"])
    n = len(res.kernels)
    assert _run_both(path, res.module, [(2, 3, 8, 8), (3, 3, 11, 9), (1, 3, 16, 5)]) == [n, n, n]


def test_resnet_block_on_declared_image_sizes(tmp_path):
    model = _declare(models.resnet_block(), {"x": {0: "batch", 2: "H", 3: "W"}, "logits": {0: "batch"}})
    res = convert(_save(model, tmp_path, "res"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert set(res.report["dims"]) == {"batch", "H", "W"} and not res.special
    assert all(n["fallback"] is False for n in res.report["nodes"])


def test_concat_along_a_declared_extent(tmp_path):
    """Concat of (batch, seq, 16) and (batch, mem, 16) along axis 1: the output's extent is the
    derived ``mem_plus_seq``; the element's input is chosen against the declared ``seq``."""
    nodes = [helper.make_node("Concat", ["a", "b"], ["c"], name="cat", axis=1),
             helper.make_node("Relu", ["c"], ["y"], name="act")]
    model = models.make(nodes, [("a", TensorProto.FLOAT, ["batch", "seq", 16]),
                                ("b", TensorProto.FLOAT, ["batch", "mem", 16])],
                        [("y", TensorProto.FLOAT, ["batch", None, 16])], name="cat")
    res = convert(_save(model, tmp_path, "cat"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert res.report["derived"] == {"mem_plus_seq": "(mem + seq)"} and not res.special
    assert len(res.check["sizes"]) == 2 and all(s["passed"] for s in res.check["sizes"])
    assert "T.if_then_else(" in res.module.read_text()


@pytest.mark.parametrize("op, attrs", [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1], count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[2, 2], strides=[2, 2], count_include_pad=0)),
])
def test_ceil_mode_pools_on_declared_image_sizes(tmp_path, op, attrs):
    """ceil_mode counts a last partial window; along a declared extent that is one expression
    whenever the window cannot start in the end padding (here: ``(H + 1) // 2 + 1``, ...). With
    count_include_pad the partial window divides by its taps inside the padded image. Odd and even
    sizes, against onnxruntime."""
    model = models.make([helper.make_node(op, ["x"], ["y"], name="pool", ceil_mode=1, **attrs)],
                        [("x", TensorProto.FLOAT, ["batch", 3, "H", "W"])],
                        [("y", TensorProto.FLOAT, ["batch", 3, None, None])], name="ceilpool")
    res = convert(_save(model, tmp_path, "ceilpool"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert [g.kind for g in res.groups] == ["pool"] and not res.special
    assert _run_both(_save(model, tmp_path, "ceilpool"), res.module, [(2, 3, 7, 8), (1, 3, 8, 5)]) == [1, 1]


@pytest.mark.parametrize("op, attrs, dims, sizes", [
    ("MaxPool", dict(kernel_shape=[3], strides=[2], pads=[1, 0], dilations=[2]), ["batch", 3, "L"],
     [(2, 3, 13), (1, 3, 8)]),
    ("AveragePool", dict(kernel_shape=[2], strides=[1], pads=[1, 1], count_include_pad=0), ["batch", 3, "L"],
     [(2, 3, 9), (1, 3, 4)]),
    ("MaxPool", dict(kernel_shape=[2, 3, 2], strides=[1, 2, 2], pads=[0, 1, 1, 1, 1, 0], dilations=[2, 1, 1]),
     ["batch", 2, "D", "H", "W"], [(2, 2, 6, 7, 5), (1, 2, 5, 9, 8)]),
    ("AveragePool", dict(kernel_shape=[2, 2, 3], strides=[2, 1, 2], pads=[1, 0, 1, 0, 1, 1], dilations=[1, 2, 1],
                         count_include_pad=1, ceil_mode=1), ["batch", 2, "D", "H", "W"],
     [(2, 2, 5, 6, 7), (1, 2, 8, 5, 6)]),
    ("AveragePool", dict(kernel_shape=[3, 2, 2], pads=[1, 1, 0, 1, 1, 1], count_include_pad=0), ["batch", 2, "D", "H", "W"],
     [(1, 2, 4, 5, 6)]),
])
def test_pools_over_one_and_three_spatial_axes(tmp_path, op, attrs, dims, sizes):
    """MaxPool and AveragePool of 1-D (NCW) and 3-D (NCDHW) inputs are TileLang pool kernels
    like the 2-D ones (strides, dilations, begin and end padding, count_include_pad, ceil_mode),
    at declared sizes, against onnxruntime."""
    model = models.make([helper.make_node(op, ["x"], ["y"], name="pool", **attrs)],
                        [("x", TensorProto.FLOAT, dims)],
                        [("y", TensorProto.FLOAT, [dims[0], dims[1]] + [None] * (len(dims) - 2))], name="pool",
                        opset=19)   # AveragePool has dilations from opset 19
    res = convert(_save(model, tmp_path, "pool"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert [g.kind for g in res.groups] == ["pool"] and not res.special
    assert all(n["fallback"] is False for n in res.report["nodes"])
    assert _run_both(_save(model, tmp_path, "pool"), res.module, sizes) == [1] * len(sizes)


def test_a_product_view_before_the_tensor_that_holds_its_names_whole(tmp_path):
    """Add of (batch, seq, 8) and a (batch, seq, 1) per-token value: the map's first operand is
    viewed as (batch * seq, 8) and comes before the one that holds batch and seq whole; TVM binds
    arguments in order and cannot solve the product, so that operand is declared with its factors
    (it failed to compile: "unable to solve variables (batch, seq)")."""
    model = models.make([helper.make_node("Add", ["x", "m"], ["y"], name="add")],
                        [("x", TensorProto.FLOAT, ["batch", "seq", 8]), ("m", TensorProto.FLOAT, ["batch", "seq", 1])],
                        [("y", TensorProto.FLOAT, ["batch", "seq", 8])], name="tok")
    res = convert(_save(model, tmp_path, "tok"), tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert "x_dims: T.Tensor((batch, seq, 8)" in res.module.read_text()
