"""Small ONNX models built with onnx.helper for the tests (no exporter needed)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def make(nodes, inputs, outputs, inits=(), name="model", opset=OPSET):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        initializer=[_init(n, a) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def mlp(batch=4, d_in=24, hidden=40, d_out=10, seed=1):
    """MatMul + Add + Relu + MatMul + Add + Softmax."""
    rng = np.random.default_rng(seed)
    f = np.float32
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
        helper.make_node("Relu", ["h1"], ["h2"], name="act1"),
        helper.make_node("MatMul", ["h2", "w2"], ["l0"], name="fc2"),
        helper.make_node("Add", ["l0", "b2"], ["logits"], name="fc2_bias"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    inits = [("w1", (rng.standard_normal((d_in, hidden)) / np.sqrt(d_in)).astype(f)),
             ("b1", rng.standard_normal(hidden).astype(f)),
             ("w2", (rng.standard_normal((hidden, d_out)) / np.sqrt(hidden)).astype(f)),
             ("b2", rng.standard_normal(d_out).astype(f))]
    return make(nodes, [("x", TensorProto.FLOAT, [batch, d_in])], [("probs", TensorProto.FLOAT, [batch, d_out])],
                inits, name="mlp")


def gelu_block(rows=6, cols=20, seed=2):
    """x·W + b, then GELU spelled Div → Erf → Add → Mul → Mul (as exporters write it), then Sub."""
    rng = np.random.default_rng(seed)
    f = np.float32
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="proj"),
        helper.make_node("Add", ["h", "b"], ["hb"], name="proj_bias"),
        helper.make_node("Div", ["hb", "sqrt2"], ["g0"], name="gelu_div"),
        helper.make_node("Erf", ["g0"], ["g1"], name="gelu_erf"),
        helper.make_node("Add", ["g1", "one"], ["g2"], name="gelu_add"),
        helper.make_node("Mul", ["hb", "g2"], ["g3"], name="gelu_mul"),
        helper.make_node("Mul", ["g3", "half"], ["y"], name="gelu_half"),
    ]
    inits = [("w", (rng.standard_normal((cols, cols)) / np.sqrt(cols)).astype(f)),
             ("b", rng.standard_normal(cols).astype(f)),
             ("sqrt2", np.array(1.4142135381698608, f)), ("one", np.array(1.0, f)), ("half", np.array(0.5, f))]
    return make(nodes, [("x", TensorProto.FLOAT, [rows, cols])], [("y", TensorProto.FLOAT, [rows, cols])],
                inits, name="gelu_block")


def attention_block(batch=2, seq=5, dim=8, seed=3):
    """A one-head transformer block: LayerNormalization, Q/K/V projections (Gemm-style MatMul + Add),
    Transpose, scaled scores, Softmax, context, output projection, residual Add, ReduceMean."""
    rng = np.random.default_rng(seed)
    f = np.float32

    def w(*s):
        return (rng.standard_normal(s) / np.sqrt(s[0])).astype(f)

    nodes = [
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["xn"], name="ln", axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["xn", "wq"], ["q"], name="q_proj"),
        helper.make_node("MatMul", ["xn", "wk"], ["k"], name="k_proj"),
        helper.make_node("MatMul", ["xn", "wv"], ["v"], name="v_proj"),
        helper.make_node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s0"], name="scores"),
        helper.make_node("Mul", ["s0", "scale"], ["s1"], name="scale"),
        helper.make_node("Softmax", ["s1"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["ctx"], name="context"),
        helper.make_node("Reshape", ["ctx", "flat"], ["ctx2"], name="flatten_rows"),
        helper.make_node("Gemm", ["ctx2", "wo", "bo"], ["o2"], name="out_proj"),
        helper.make_node("Reshape", ["o2", "shape3"], ["o"], name="unflatten"),
        helper.make_node("Add", ["o", "x"], ["y"], name="residual"),
        helper.make_node("ReduceMean", ["y"], ["m"], name="row_mean", axes=[-1], keepdims=1),
        helper.make_node("Sub", ["y", "m"], ["yc"], name="center"),
    ]
    inits = [("gamma", rng.uniform(0.5, 1.5, dim).astype(f)), ("beta", rng.standard_normal(dim).astype(f)),
             ("wq", w(dim, dim)), ("wk", w(dim, dim)), ("wv", w(dim, dim)), ("wo", w(dim, dim)),
             ("bo", rng.standard_normal(dim).astype(f)), ("scale", np.array(1 / np.sqrt(dim), f)),
             ("flat", np.array([batch * seq, dim], np.int64)), ("shape3", np.array([batch, seq, dim], np.int64))]
    return make(nodes, [("x", TensorProto.FLOAT, [batch, seq, dim])],
                [("yc", TensorProto.FLOAT, [batch, seq, dim])], inits, name="attention_block", opset=17)


def resnet_block(n=2, c=4, hw=6, classes=5, seed=4):
    """Conv → BatchNormalization → Relu → Conv (stride 1, pad 1) → BatchNormalization → residual Add →
    Relu → GlobalAveragePool → Flatten → Gemm: a basic ResNet block and its classifier head."""
    rng = np.random.default_rng(seed)
    f = np.float32

    def bn(prefix):
        return [(f"{prefix}_scale", rng.uniform(0.5, 1.5, c).astype(f)), (f"{prefix}_bias", rng.standard_normal(c).astype(f)),
                (f"{prefix}_mean", rng.standard_normal(c).astype(f) * 0.1), (f"{prefix}_var", rng.uniform(0.5, 2, c).astype(f))]

    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn1_scale", "bn1_bias", "bn1_mean", "bn1_var"], ["b1"],
                         name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "cb2"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "bn2_scale", "bn2_bias", "bn2_mean", "bn2_var"], ["b2"],
                         name="bn2", epsilon=1e-5),
        helper.make_node("Add", ["b2", "x"], ["s"], name="residual"),
        helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="pool"),
        helper.make_node("Flatten", ["g"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
    ]
    inits = ([("w1", (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)).astype(f)),
              ("w2", (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)).astype(f)),
              ("cb2", rng.standard_normal(c).astype(f) * 0.1)] + bn("bn1") + bn("bn2")
             + [("fc_w", rng.standard_normal((classes, c)).astype(f)), ("fc_b", rng.standard_normal(classes).astype(f))])
    return make(nodes, [("x", TensorProto.FLOAT, [n, c, hw, hw])], [("logits", TensorProto.FLOAT, [n, classes])],
                inits, name="resnet_block")


def pools(n=2, c=8, hw=16):
    """MaxPool 3×3 stride 2 pad 1, then AveragePool 2×2."""
    return make([helper.make_node("MaxPool", ["x"], ["y"], name="maxpool", kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1]),
                 helper.make_node("AveragePool", ["y"], ["z"], name="avgpool", kernel_shape=[2, 2])],
                [("x", TensorProto.FLOAT, [n, c, hw, hw])], [("z", TensorProto.FLOAT, [n, c, (hw - 1) // 2, (hw - 1) // 2])],
                name="pools")


def gqa(dtype="float32", batch=2, seq=16, heads=4, kv_heads=2, dim=8, scale=0.35):
    """Grouped-query attention as HF exports it: Q, K, V as (batch, seq, heads, dim) activations
    transposed to (batch, heads, seq, dim); K and V with ``kv_heads`` heads repeated to ``heads``
    by repeat_kv (Unsqueeze at axis 2, Expand to the Unsqueeze's shape times [1, 1, rep, 1, 1]
    computed with Shape → Mul, Reshape to [0, heads, -1, dim]); K transposed to (dim, seq), scaled
    scores, Softmax, context, transposed back. ``batch``/``seq`` may be names (dim_param)."""
    e = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16}[dtype]
    n = helper.make_node
    rep = heads // kv_heads

    def repeat_kv(x):
        return [n("Transpose", [x], [f"{x}_t0"], name=f"{x}_t0", perm=[0, 2, 1, 3]),
                n("Unsqueeze", [f"{x}_t0", "ax2"], [f"{x}_u"], name=f"{x}_u"),
                n("Shape", [f"{x}_u"], [f"{x}_shape"], name=f"{x}_shape"),
                n("Mul", [f"{x}_shape", "rep_vec"], [f"{x}_eshape"], name=f"{x}_eshape"),
                n("Expand", [f"{x}_u", f"{x}_eshape"], [f"{x}_e"], name=f"{x}_e"),
                n("Reshape", [f"{x}_e", "kv_rs"], [f"{x}_r"], name=f"{x}_r")]

    nodes = [n("Transpose", ["q"], ["q_t"], name="q_t", perm=[0, 2, 1, 3]), *repeat_kv("k"),
             n("Transpose", ["k_r"], ["k_tt"], name="k_tt", perm=[0, 1, 3, 2]), *repeat_kv("v"),
             n("MatMul", ["q_t", "k_tt"], ["s0"], name="scores"),
             n("Mul", ["s0", "c"], ["s1"], name="scale"),
             n("Softmax", ["s1"], ["p"], name="softmax", axis=-1),
             n("MatMul", ["p", "v_r"], ["ctx"], name="context"),
             n("Transpose", ["ctx"], ["y"], name="ctx_t", perm=[0, 2, 1, 3])]
    inits = [("ax2", np.array([2], np.int64)), ("rep_vec", np.array([1, 1, rep, 1, 1], np.int64)),
             ("kv_rs", np.array([0, heads, -1, dim], np.int64)), ("c", np.array(scale, dtype))]
    return make(nodes, [("q", e, [batch, seq, heads, dim]), ("k", e, [batch, seq, kv_heads, dim]),
                        ("v", e, [batch, seq, kv_heads, dim])],
                [("y", e, [batch, seq, heads, dim])], inits, name="gqa")
