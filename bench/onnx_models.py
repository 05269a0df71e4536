"""The models of the ONNX GPU benchmark (bench/gpu_onnx.sh), built with onnx.helper:

- ``transformer``: a BERT-base encoder block with declared ``batch`` and ``seq`` (LayerNormalization,
  Q/K/V projections with bias, 12 heads of 64 by Reshape [0, 0, 12, 64] and Transpose, scaled scores,
  Softmax, context, output projection, residual, LayerNormalization, 768→3072 GELU (Erf, as exporters
  spell it) →768, residual); the issue's size is batch 8 × 512 tokens × 768;
- ``resnet``: a ResNet basic block with a declared ``batch`` (Conv 3×3 → BatchNormalization → Relu →
  Conv 3×3 → BatchNormalization → residual Add → Relu) on 64 channels of 56×56.

Every constant is an initializer made from a seed by numpy alone, so ``npz`` can remake a converted
model's weights file where onnx is not installed (the GPU machine may lack it).

    python bench/onnx_models.py build --model transformer --dtype float32 -o block.onnx [--dim 768]
    python bench/onnx_models.py npz --model transformer --dtype float32 -o OUT/block.npz
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def transformer_constants(dtype="float32", dim=768, heads=12, ff=3072, seed=0, **_) -> dict:
    rng = np.random.default_rng(seed)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(dtype)

    c = {"ln1_g": rng.uniform(0.5, 1.5, dim).astype(dtype), "ln1_b": (0.1 * rng.standard_normal(dim)).astype(dtype)}
    for p in ("q", "k", "v", "o"):
        c[f"w{p}"], c[f"b{p}"] = w(dim, dim), (0.1 * rng.standard_normal(dim)).astype(dtype)
    c.update({"ln2_g": rng.uniform(0.5, 1.5, dim).astype(dtype), "ln2_b": (0.1 * rng.standard_normal(dim)).astype(dtype),
              "w1": w(dim, ff), "b1": (0.1 * rng.standard_normal(ff)).astype(dtype),
              "w2": w(ff, dim), "b2": (0.1 * rng.standard_normal(dim)).astype(dtype),
              "heads_shape": np.array([0, 0, heads, dim // heads], np.int64),
              "merge_shape": np.array([0, 0, dim], np.int64),
              "inv_sqrt_d": np.array(1 / np.sqrt(dim // heads), dtype),
              "sqrt2": np.array(np.sqrt(2.0), dtype), "one": np.array(1.0, dtype), "half": np.array(0.5, dtype)})
    return c


def resnet_constants(dtype="float32", channels=64, seed=0, **_) -> dict:
    rng = np.random.default_rng(seed)
    c = {}
    for i in (1, 2):
        c[f"conv{i}_w"] = (rng.standard_normal((channels, channels, 3, 3)) / np.sqrt(9 * channels)).astype(dtype)
        c[f"bn{i}_scale"] = rng.uniform(0.5, 1.5, channels).astype(dtype)
        c[f"bn{i}_bias"] = (0.1 * rng.standard_normal(channels)).astype(dtype)
        c[f"bn{i}_mean"] = (0.1 * rng.standard_normal(channels)).astype(dtype)
        c[f"bn{i}_var"] = rng.uniform(0.5, 2.0, channels).astype(dtype)
    return c


def constants(model: str, dtype: str, **kw) -> dict:
    return transformer_constants(dtype, **kw) if model == "transformer" else resnet_constants(dtype, **kw)


def build(model: str, dtype: str = "float32", **kw):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    c = constants(model, dtype, **kw)
    elem = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16}[dtype]
    n = helper.make_node
    if model == "transformer":
        dim = c["wq"].shape[0]
        nodes = [n("LayerNormalization", ["x", "ln1_g", "ln1_b"], ["xn"], name="ln1", axis=-1, epsilon=1e-5)]
        for p in ("q", "k", "v"):
            nodes += [n("MatMul", ["xn", f"w{p}"], [f"{p}0"], name=f"{p}_proj"),
                      n("Add", [f"{p}0", f"b{p}"], [f"{p}1"], name=f"{p}_bias"),
                      n("Reshape", [f"{p}1", "heads_shape"], [f"{p}2"], name=f"{p}_heads")]
        nodes += [n("Transpose", ["q2"], ["qh"], name="q_t", perm=[0, 2, 1, 3]),
                  n("Transpose", ["k2"], ["kh"], name="k_t", perm=[0, 2, 3, 1]),
                  n("Transpose", ["v2"], ["vh"], name="v_t", perm=[0, 2, 1, 3]),
                  n("MatMul", ["qh", "kh"], ["s0"], name="scores"),
                  n("Mul", ["s0", "inv_sqrt_d"], ["s1"], name="scale"),
                  n("Softmax", ["s1"], ["p"], name="softmax", axis=-1),
                  n("MatMul", ["p", "vh"], ["ctx0"], name="context"),
                  n("Transpose", ["ctx0"], ["ctx1"], name="ctx_t", perm=[0, 2, 1, 3]),
                  n("Reshape", ["ctx1", "merge_shape"], ["ctx"], name="merge_heads"),
                  n("MatMul", ["ctx", "wo"], ["o0"], name="o_proj"),
                  n("Add", ["o0", "bo"], ["o1"], name="o_bias"),
                  n("Add", ["o1", "x"], ["h"], name="residual1"),
                  n("LayerNormalization", ["h", "ln2_g", "ln2_b"], ["hn"], name="ln2", axis=-1, epsilon=1e-5),
                  n("MatMul", ["hn", "w1"], ["f0"], name="fc1"),
                  n("Add", ["f0", "b1"], ["f1"], name="fc1_bias"),
                  n("Div", ["f1", "sqrt2"], ["g0"], name="gelu_div"),
                  n("Erf", ["g0"], ["g1"], name="gelu_erf"),
                  n("Add", ["g1", "one"], ["g2"], name="gelu_add"),
                  n("Mul", ["f1", "g2"], ["g3"], name="gelu_mul"),
                  n("Mul", ["g3", "half"], ["f2"], name="gelu_half"),
                  n("MatMul", ["f2", "w2"], ["f3"], name="fc2"),
                  n("Add", ["f3", "b2"], ["f4"], name="fc2_bias"),
                  n("Add", ["f4", "h"], ["y"], name="residual2")]
        io = ([helper.make_tensor_value_info("x", elem, ["batch", "seq", dim])],
              [helper.make_tensor_value_info("y", elem, ["batch", "seq", dim])])
    else:
        ch = c["conv1_w"].shape[0]
        nodes = [n("Conv", ["x", "conv1_w"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 n("BatchNormalization", ["c1", "bn1_scale", "bn1_bias", "bn1_mean", "bn1_var"], ["b1"], name="bn1"),
                 n("Relu", ["b1"], ["r1"], name="relu1"),
                 n("Conv", ["r1", "conv2_w"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 n("BatchNormalization", ["c2", "bn2_scale", "bn2_bias", "bn2_mean", "bn2_var"], ["b2"], name="bn2"),
                 n("Add", ["b2", "x"], ["s"], name="residual"),
                 n("Relu", ["s"], ["y"], name="relu2")]
        hw = kw.get("hw", 56)
        io = ([helper.make_tensor_value_info("x", elem, ["batch", ch, hw, hw])],
              [helper.make_tensor_value_info("y", elem, ["batch", ch, hw, hw])])
    graph = helper.make_graph(nodes, f"{model}_block", io[0], io[1],
                              initializer=[numpy_helper.from_array(a, k) for k, a in c.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("build", "npz"))
    ap.add_argument("--model", choices=("transformer", "resnet"), required=True)
    ap.add_argument("--dtype", choices=("float32", "float16"), default="float32")
    ap.add_argument("--dim", type=int, default=None, help="transformer width (768; heads of 64)")
    ap.add_argument("--channels", type=int, default=None, help="resnet channels (64)")
    ap.add_argument("--hw", type=int, default=None, help="resnet image side (56): declared in the model")
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args(argv)
    kw = {}
    if args.model == "transformer" and args.dim:
        kw = {"dim": args.dim, "heads": max(1, args.dim // 64), "ff": 4 * args.dim}
    if args.model == "resnet" and args.channels:
        kw["channels"] = args.channels
    if args.what == "npz":   # numpy alone: the weights file of a converted model, by its seed
        from migrate.onnx.names import py_names

        c = constants(args.model, args.dtype, **kw)
        names = py_names(c)
        np.savez(args.out, **{names[k]: np.ascontiguousarray(a) for k, a in c.items()})
        return 0
    import onnx

    if args.model == "resnet" and args.hw:
        kw["hw"] = args.hw
    onnx.save(build(args.model, args.dtype, **kw), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
