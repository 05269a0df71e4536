"""`migrate bench --onnx OUT`: its argument handling (exit 2 without a GPU), the timing harness on
TileLang's C target at tiny sizes, the Eager baseline, and the benchmark models of
bench/gpu_onnx.sh (bench/onnx_models.py) converted and checked on the CPU."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from migrate.cli import main  # noqa: E402
from migrate.onnx.bench import BenchError, bench_onnx, dim_values, evaluate  # noqa: E402
from migrate.onnx.convert import convert  # noqa: E402

from . import models  # noqa: E402
from .test_dynamic import _declare  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mlp_out(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench")
    path = tmp / "mlp.onnx"
    onnx.save(_declare(models.mlp(), {"x": {0: "batch"}, "probs": {0: "batch"}}), str(path))
    out = tmp / "out"
    assert main(["onnx", str(path), "-o", str(out), "-q"]) == 0
    return out


def test_arguments_and_exit_2_without_a_gpu(mlp_out, tmp_path, capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cases = [
        (["bench"], "give one of --from OUT"),
        (["bench", "--onnx", str(mlp_out), "--from", str(mlp_out)], "give one of --from OUT"),
        (["bench", "--onnx", str(tmp_path)], "has no report.json"),
        (["bench", "--onnx", str(mlp_out)], "the model declares batch: give each a value (--dim batch=N)"),
        (["bench", "--onnx", str(mlp_out), "--dim", "batch=0"], "--dim batch=0: write NAME=N"),
        (["bench", "--onnx", str(mlp_out), "--dim", "batch=4", "--dim", "seq=3"], "declares no dimension 'seq'"),
        (["bench", "--onnx", str(mlp_out), "--dim", "batch=4"], "needs a CUDA GPU"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        assert message in capsys.readouterr().err, argv


def test_extents_evaluate_from_the_report():
    report = {"dims": {"batch": {}, "seq": {}}, "derived": {"seq_minus_1": "(seq - 1)"}}
    values = dim_values(report, {"batch": 8, "seq": 512})
    assert values == {"batch": 8, "seq": 512, "seq_minus_1": 511}
    assert evaluate("(batch * seq_minus_1 * 4 + 64)", values) == 8 * 511 * 4 + 64 and evaluate(12, values) == 12
    with pytest.raises(BenchError):
        evaluate("__import__('os')", values)


def test_harness_on_the_c_target_times_each_group_and_compares(mlp_out):
    res = bench_onnx(mlp_out, {"batch": 3}, target="c", reps=2, rounds=2)
    assert res["dims"] == {"batch": 3} and res["target"] == "c"
    assert res["fp32_gemms"].startswith("exact fp32 on both sides")
    assert res["agreement"]["eager"]["passed"] and res["agreement"]["onnxruntime"]["passed"]
    e2e = res["end_to_end"]
    assert len(e2e["samples"]["tilelang"]) == 2 and e2e["tilelang_ms"] > 0 and e2e["eager_ms"] > 0
    rows = {g["kernel"]: g for g in res["groups"]}
    assert list(rows) == ["k0_matmul_add_relu", "k1_matmul_add", "k2_softmax"]
    for g in rows.values():
        assert len(g["samples"]["tilelang"]) == 2 and g["tilelang_ms"] > 0 and g["eager_ms"] > 0
    # least bytes (x, w1, b1 read, h2 written) and 2·M·N·K FLOPs at batch 3, in float32
    k0 = rows["k0_matmul_add_relu"]
    assert k0["bytes"] == 4 * (3 * 24 + 24 * 40 + 40 + 3 * 40) and k0["flops"] == 2 * 3 * 40 * 24
    assert k0["gbs"] == pytest.approx(k0["bytes"] / k0["tilelang_ms"] / 1e6)
    assert k0["tflops"] == pytest.approx(k0["flops"] / k0["tilelang_ms"] / 1e9)
    assert rows["k2_softmax"]["flops"] == 0 and rows["k2_softmax"]["tflops"] is None


def test_eager_baseline_matches_onnxruntime_on_its_own(mlp_out):
    """The Eager class (the benchmark's baseline) is the model node by node in torch."""
    import onnxruntime as ort
    import torch

    from migrate.onnx.check import load_module

    mod = load_module(mlp_out / "mlp.py")
    x = np.random.default_rng(4).standard_normal((6, 24)).astype(np.float32)
    want = ort.InferenceSession(str(mlp_out.parent / "mlp.onnx"), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    seen = []
    got = mod.Eager(device="cpu")(torch.from_numpy(x), hook=seen.append)
    assert np.allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    assert seen == ["k0_matmul_add_relu", "k1_matmul_add", "k2_softmax"]


def _bench_models():
    spec = importlib.util.spec_from_file_location("onnx_models", ROOT / "bench" / "onnx_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_benchmark_transformer_block_converts_with_symbolic_batch_and_seq(tmp_path):
    """bench/onnx_models.py's BERT-style block (12 heads at full size; one head of 64 here):
    every node in TileLang, every group symbolic in batch and seq, equal to onnxruntime at two sizes;
    its weights remade from the seed with numpy alone equal the converted model's."""
    bm = _bench_models()
    path = tmp_path / "block.onnx"
    onnx.save(bm.build("transformer", "float32", dim=64, heads=1, ff=256), str(path))
    res = convert(path, tmp_path / "out", check="cpu")
    assert res.ok and res.check["passed"], [str(d) for d in res.diagnostics] + [res.check]
    assert all(n["fallback"] is False and n["kernel"] for n in res.report["nodes"])
    assert set(res.report["dims"]) == {"batch", "seq"} and not res.special
    assert len(res.check["sizes"]) == 2
    made = np.load(tmp_path / "out" / "block.npz")
    assert bm.main(["npz", "--model", "transformer", "--dim", "64", "-o", str(tmp_path / "again.npz")]) == 0
    again = np.load(tmp_path / "again.npz")
    assert sorted(made.files) == sorted(again.files) and all((made[k] == again[k]).all() for k in made.files)
    report = json.loads(json.dumps(res.report))
    fc1 = next(g for g in report["groups"] if g["nodes"][0] == "fc1")
    assert evaluate(fc1["flops"], {"batch": 8, "seq": 512}) == 2 * 8 * 512 * 64 * 256


def test_command_prints_groups_end_to_end_and_writes_json(mlp_out, tmp_path, capsys, monkeypatch):
    """The command's own output and --json, its harness moved to the C target (no GPU here)."""
    import torch

    import migrate.onnx.bench as bench

    real = bench.bench_onnx
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(bench, "bench_onnx", lambda *a, **kw: real(*a, **{**kw, "target": "c"}))
    rc = main(["bench", "--onnx", str(mlp_out), "--dim", "batch=2", "--reps", "1", "--rounds", "1",
               "--json", str(tmp_path / "b.json")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "k0_matmul_add_relu" in out and "TFLOP/s" in out and "GB/s" in out
    assert "end to end (cpu (TileLang C target); batch=2): TileLang" in out
    assert "fp32 GEMMs: exact fp32 on both sides" in out
    assert "outputs against eager: agree" in out and "outputs against onnxruntime: agree" in out
    rec = json.loads((tmp_path / "b.json").read_text())
    assert rec["dims"] == {"batch": 2} and len(rec["groups"]) == 3
