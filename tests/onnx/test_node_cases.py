"""The ONNX backend node test cases of the operators migrate onnx claims, converted, run on
TileLang's CPU target and compared with the cases' expected outputs (tests/onnx/node_cases.py).

By default one representative case per kernel kind runs (the suite's time budget: each case
compiles a kernel with g++); ``C2T_ONNX_NODE_CASES=all`` runs every case of every claimed
operator (``bench/onnx_node_tests.py`` prints the per-operator counts).
"""
from __future__ import annotations

import os

import pytest

pytest.importorskip("onnx")

from .node_cases import CLAIMED, case, cases, run_case  # noqa: E402

#: (operator, case): what the model tests (test_onnx.py) do not already cover: a broadcast map,
#: integer Div, Gemm with every attribute, a batch-broadcast MatMul, Softmax over axis 0,
#: LayerNormalization with its Mean and InvStdDev outputs, a strided Conv with asymmetric padding,
#: padded MaxPool and AveragePool, a Reshape view, a Concat over a middle axis
REPRESENTATIVE = [
    ("Add", "test_add_bcast"),
    ("Div", "test_div_uint8"),
    ("Gemm", "test_gemm_all_attributes"),
    ("MatMul", "test_matmul_bcast"),
    ("Softmax", "test_softmax_axis_0"),
    ("LayerNormalization", "test_layer_normalization_3d_axis1_epsilon"),
    ("Conv", "test_conv_with_strides_and_asymmetric_padding"),
    ("MaxPool", "test_maxpool_2d_pads"),
    ("AveragePool", "test_averagepool_2d_pads"),
    ("Reshape", "test_reshape_negative_extended_dims"),
    ("Concat", "test_concat_3d_axis_negative_2"),
    ("Expand", "test_expand_dim_changed"),
]


def _all():
    return [(op, c.name) for op in CLAIMED for c in cases(op)]


@pytest.mark.parametrize("op, name", _all() if os.environ.get("C2T_ONNX_NODE_CASES") == "all" else REPRESENTATIVE)
def test_node_case(op, name, tmp_path):
    r = run_case(case(name, op), tmp_path)
    assert r["status"] == "pass", r
    assert r["tilelang"], r          # every node of the case got a TileLang form (or is a view)
