"""Cooperative fills of shared memory (analysis.lift.coop_fills): a slab load of the register-blocked
GEMM that does not step by the block's threads is refused (tests/analysis/lift/test_micro_tiles.py
lifts the kernel whole, its fills included).
"""
from __future__ import annotations

from tests.analysis.lift.support import refused
from tests.paths import CORPUS as ALL_CORPUS

CORPUS = ALL_CORPUS / "matmul"


def test_cooperative_loads_that_do_not_step_by_the_block_are_refused(tmp_path):
    source = (CORPUS / "matmul_regblock.cu").read_text()
    source = source[:source.index("int main()")].replace("e += nthreads) {\n            const int r = e / BK",
                                                        "e += 128) {\n            const int r = e / BK")
    assert "e += 128" in source
    why = refused(tmp_path, source)
    assert "steps by 128, not by the block's 256 threads" in why
