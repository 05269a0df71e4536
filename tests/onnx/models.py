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
