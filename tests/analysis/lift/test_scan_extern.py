"""Block scans over an ``extern __shared__`` array (analysis.lift.scan): the array holds the dynamic
shared memory the launches give; where every launch gives it as one constant the scan is proved
on that many cells (as the portable form sizes it), and lifts to ``T.cumsum``. A kernel whose
launches do not, or whose block is not 1-D, is refused with that reason (not the array's size).
"""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.analysis.lift.test_scan import HS, HS_SPEC, convert, factory, note
from tests.analysis.lift.support import refused_or_tiled

EXTERN = textwrap.dedent(HS).replace("__shared__ float s[128];", "extern __shared__ float s[];").replace(
    "scan<<<8, 128>>>", "scan<<<8, 128, 128 * sizeof(float)>>>")
EXTERN_SPEC = HS_SPEC.replace('block = [128, 1, 1]', 'block = [128, 1, 1]\n    shared_bytes = 512')


def test_an_extern_shared_scan_sized_by_its_launches_becomes_t_cumsum_and_agrees_on_cpu(tmp_path):
    assert "extern __shared__ float s[];" in EXTERN and "128 * sizeof(float)>>>" in EXTERN
    kernels, text = convert(tmp_path, EXTERN, "--check", "cpu", spec=EXTERN_SPEC)
    k = kernels["scan"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "scan")
    assert "T.cumsum(s_prefix[1:129], dim=0)" in body and "T.sync_threads" not in body, body


def test_an_extern_shared_scan_agrees_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, EXTERN)
    assert kernels["scan"]["form"] == "tile", note(kernels["scan"])
    n = 1000
    x = np.random.default_rng(2).uniform(-1.0, 1.0, size=n).astype(np.float32)
    incl, excl = (torch.full((n,), float("nan"), dtype=torch.float32) for _ in range(2))  # poisoned
    sums = torch.full((8,), float("nan"), dtype=torch.float32)
    load_module(tmp_path / "out" / "k.py").scan(torch.from_numpy(x), incl, excl, sums, n, grid=(8, 1, 1),
                                                block=(128, 1, 1), shared_bytes=512, target="c")
    seg = np.pad(x.astype(np.float64), (0, 1024 - n)).reshape(8, 128)
    want = np.cumsum(seg, axis=1)
    np.testing.assert_allclose(incl.numpy(), want.ravel()[:n], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(excl.numpy(), (want - seg).ravel()[:n], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sums.numpy(), want[:, -1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("old, new, reason", [
    # the dynamic shared memory given at run time
    ("int main() { scan<<<8, 128, 128 * sizeof(float)>>>", "int main(int argc, char**) { scan<<<8, 128, 128 * argc>>>",
     "the extern shared array 's' holds the launches' dynamic shared memory, which they do not give as one constant"),
    # the block size given at run time: the launch is what stops the proof, not the array
    ("int main() { scan<<<8, 128, 128 * sizeof(float)>>>",
     "int main(int argc, char**) { scan<<<8, 128 * argc, 128 * sizeof(float)>>>",
     "its launches do not give one constant block size"),
])
def test_extern_scans_it_must_refuse_with_the_reason(tmp_path, old, new, reason):
    assert old in EXTERN
    refused_or_tiled(tmp_path, EXTERN.replace(old, new), "scan", reason, EXTERN_SPEC)
