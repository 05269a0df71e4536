"""report.html of `migrate onnx`: convert's page (migrate.reports.html) over the model's graph
listing, one entry per fused group, the TileLang aligned with the nodes by provenance tags."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from migrate.cli import main  # noqa: E402

from . import models  # noqa: E402


def _blobs(html: str) -> tuple[dict, list[dict]]:
    """The page's index and per-file data (the JSON its script reads)."""
    def load(ident):
        m = re.search(rf'<script type="application/json" id="{ident}">(.*?)</script>', html, re.S)
        return json.loads(m.group(1))
    return load("c2t-index"), [load("c2t-file-0")]


def test_page_lists_each_group_with_its_nodes_and_aligned_tilelang(tmp_path):
    rng = np.random.default_rng(2)
    f = np.float32
    model = models.make(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
         helper.make_node("Relu", ["h"], ["r"], name="act"),
         helper.make_node("Sin", ["r"], ["s"], name="sine"),            # no TileLang form: torch
         helper.make_node("Reshape", ["s", "shape"], ["y"], name="flat")],
        [("x", TensorProto.FLOAT, ["batch", 6])], [("y", TensorProto.FLOAT, ["n"])],
        [("w", rng.standard_normal((6, 4)).astype(f)), ("shape", np.array([-1], np.int64))], name="page")
    path = tmp_path / "page.onnx"
    onnx.save(model, str(path))
    out = tmp_path / "out"
    assert main(["onnx", str(path), "-o", str(out), "--check", "cpu", "-q"]) == 1   # a node in torch
    listing = (out / "page.graph.txt").read_text().split("\n")
    assert listing[0] == "h = MatMul(x, w);  // mm" and listing[2] == "s = Sin(r);  // sine"
    assert "// graph input x: FLOAT[batch, 6]" in listing
    html = (out / "report.html").read_text()
    index, (blob,) = _blobs(html)
    assert index["source"] == "ONNX" and index["forms"] == ["tile", "view", "torch"]
    ks = {k["kernel"]: k for k in index["kernels"]}
    assert list(ks) == ["k0_matmul_relu", "k1_sin", "k2_reshape"]
    assert [ks[k]["form"] for k in ks] == ["tile", "torch", "view"]
    assert ks["k1_sin"]["reason"] == "Sin 'sine': runs in torch (no TileLang form for Sin yet)"
    assert [d["code"] for d in ks["k1_sin"]["diags"]] == ["M5003"]
    assert ks["k0_matmul_relu"]["check"]["status"] == "pass" and ks["k0_matmul_relu"]["line"] == 1
    assert index["summary"]["converted"] == 1 and index["summary"]["forms"] == {"tile": 1, "torch": 1, "view": 1}
    # the GEMM's epilogue line (tagged L2, the Relu node) stands beside node 2 of the listing
    tl = blob["tl"].split("\n")
    rows = [r for r in blob["views"]["0"] if isinstance(r, list)]
    beside = {c: tl[t - 1] for c, t in rows if c and t}
    assert "# Relu 'act'  # L2" in beside[2] and "T.max(" in beside[2]
    assert blob["cuda"].split("\n")[1] == "r = Relu(h);  // act"
    assert "aligned by ' + esc(SOURCE) + ' line" in html     # the page names the left side ONNX, not CUDA


def test_page_of_a_model_that_cannot_be_read(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    assert main(["onnx", str(bad), "-o", str(tmp_path / "out"), "-q"]) == 1
    index, (blob,) = _blobs((tmp_path / "out" / "report.html").read_text())
    assert index["kernels"] == [] and [d["code"] for d in index["files"][0]["diags"]] == ["M5001"]
    assert not (tmp_path / "out" / "bad.graph.txt").exists()
