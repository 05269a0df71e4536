"""cub::BlockScan's scans over a thread's items with an operator (``InclusiveScan(items, items,
op)``, ``ExclusiveScan(items, items, init, op)``), as a selective-scan kernel calls them: the
prelude declares those overloads as CUB does, so the call resolves (no clang error, M1001) and the
CUB lowering answers for it with its own coded refusal where it does not model the scan."""
from __future__ import annotations

import json
import textwrap

import pytest

from migrate.cli import main
from migrate.parse.frontend import parse_file

KERNEL = """
#include <cub/cub.cuh>
struct MaxOp { __device__ float operator()(float a, float b) const { return a > b ? a : b; } };
template <int BLOCK, int ITEMS>
__global__ void running_max(const float* __restrict__ x, float* __restrict__ y, int n) {
  typedef cub::BlockScan<float, BLOCK> Scan;
  __shared__ typename Scan::TempStorage temp;
  float items[ITEMS];
  for (int k = 0; k < ITEMS; k++) {
    int i = blockIdx.x * BLOCK * ITEMS + threadIdx.x * ITEMS + k;
    items[k] = i < n ? x[i] : -1e30f;
  }
  float total;
  SCAN_CALL;
  for (int k = 0; k < ITEMS; k++) {
    int i = blockIdx.x * BLOCK * ITEMS + threadIdx.x * ITEMS + k;
    if (i < n) y[i] = items[k];
  }
}
int main() { float *x, *y; running_max<64, 4><<<2, 64>>>(x, y, 500); return 0; }
"""

CALLS = {
    "inclusive": "Scan(temp).InclusiveScan(items, items, MaxOp())",
    "inclusive_aggregate": "Scan(temp).InclusiveScan(items, items, MaxOp(), total)",
    "exclusive": "Scan(temp).ExclusiveScan(items, items, -1e30f, MaxOp())",
    "exclusive_aggregate": "Scan(temp).ExclusiveScan(items, items, -1e30f, MaxOp(), total)",
}


@pytest.mark.parametrize("call", CALLS)
def test_item_scans_with_an_operator_resolve(tmp_path, call):
    path = tmp_path / "scan.cu"
    path.write_text(textwrap.dedent(KERNEL).replace("SCAN_CALL", CALLS[call]))
    parsed = parse_file(path)
    assert [d for d in parsed.diagnostics if d.code.startswith("M1")] == []


def test_unmodelled_item_scan_is_a_coded_refusal(tmp_path):
    path = tmp_path / "scan.cu"
    path.write_text(textwrap.dedent(KERNEL).replace("SCAN_CALL", CALLS["inclusive"]))
    out = tmp_path / "out"
    main(["convert", str(path), "-o", str(out), "-q"])
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] in ("hybrid", "unsupported")
    assert [(d["code"], d["message"]) for d in k["diagnostics"] if d["code"] != "M3008"] == [
        ("M3001", "cub::BlockScan::InclusiveScan with the operator 'MaxOp'")]
