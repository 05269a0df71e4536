"""The block-scan lift (analysis.lift_scan): shared-memory prefix sums become ``T.cumsum``.

The pass proves a scan by executing the kernel over every thread with each shared cell holding
the segment positions summed into it. Small kernels written for the purpose check what it lifts
(and that the lifted kernel agrees with the CUDA on the CPU), and what it must refuse, with the
reason it gives: a missing barrier, a skipped element, another combine than +, data-dependent
indices, a block size that is not a constant, a thread count other than the one proved.
"""
from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from migrate.cli import main
from tests.paths import REPO



def convert(tmp_path: Path, source: str, *flags, spec: str | None = None) -> tuple[dict, str]:
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(source))
    if spec is not None:
        (tmp_path / "k.toml").write_text(textwrap.dedent(spec))
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", *flags])
    report = json.loads((out / "report.json").read_text())
    return {k["kernel"]: k for k in report["kernels"]}, (out / "k.py").read_text()


def factory(text: str, kernel: str) -> str:
    start = text.index(f"def make_{kernel}(")
    return text[start:text.index(f"return {kernel}", start)]


def note(kernel: dict) -> str:
    return " ".join(d["message"] for d in kernel["diagnostics"] if d["code"] == "M3003")


# A single-buffer Hillis-Steele scan (two barriers a round), its exclusive result read by shifting,
# and the segment total; 128 threads per 128-element segment.
HS = """
    __global__ void scan(const float* __restrict__ x, float* __restrict__ incl, float* __restrict__ excl,
                         float* __restrict__ sums, int n) {
        __shared__ float s[128];
        int tid = threadIdx.x;
        int i = blockIdx.x * 128 + tid;
        s[tid] = i < n ? x[i] : 0.0f;
        __syncthreads();
        for (int off = 1; off < 128; off *= 2) {
            float v = tid >= off ? s[tid - off] : 0.0f;
            __syncthreads();
            s[tid] += v;
            __syncthreads();
        }
        if (i < n) {
            incl[i] = s[tid];
            excl[i] = tid > 0 ? s[tid - 1] : 0.0f;
        }
        if (tid == 0) sums[blockIdx.x] = s[127];
    }
    int main() { scan<<<8, 128>>>(nullptr, nullptr, nullptr, nullptr, 1000); }
"""

HS_SPEC = """
    [[kernel]]
    name = "scan"
    grid = [8, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 1000
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "incl"
    buffer = "float32"
    elements = 1000
    role = "out"
    [[kernel.args]]
    name = "excl"
    buffer = "float32"
    elements = 1000
    role = "out"
    [[kernel.args]]
    name = "sums"
    buffer = "float32"
    elements = 8
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 1000
"""


def test_hillis_steele_scan_becomes_t_cumsum_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, HS, "--check", "cpu", spec=HS_SPEC)
    k = kernels["scan"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    body = factory(text, "scan")
    assert "T.cumsum(s_prefix[1:129], dim=0)" in body
    assert "s_prefix = T.alloc_shared((129,), T.float32)" in body
    assert 'assert block_x == 128' in body
    # inclusive: the prefix of length tid + 1; exclusive: of length tid (kept under its ternary);
    # the total: all 128
    assert "incl[i] = s_prefix[lane + 1]" in body
    assert "T.if_then_else(tid > 0, s_prefix[lane], T.float32(0.0))" in body
    assert "sums[bx] = s_prefix[128]" in body
    assert "T.sync_threads" not in body and not re.search(r"\btx\b|threadIdx", body)
    assert "off" not in body  # the rounds are gone


@pytest.mark.parametrize("old, new, reason", [
    # the barrier between reading the neighbour and updating the cell removed
    ("0.0f;\n        __syncthreads();", "0.0f;", "thread 1 reads 's[0]' while thread 0 writes it, with no barrier "
     "between (a race)"),
    # > instead of >=: the element `off` before each cell is skipped
    ("tid >= off ? s[tid - off]", "tid > off ? s[tid - off]", "skips element"),
    # max instead of +
    ("s[tid] += v;", "s[tid] = fmaxf(s[tid], v);", "combines the shared values with fmaxf"),
    # a product is not a sum
    ("s[tid] += v;", "s[tid] *= v;", "combines the shared values with '*'"),
    # an element counted twice
    ("s[tid] += v;", "s[tid] += v + v;", "adds element 0 twice"),
    # the neighbour chosen by the data
    ("float v = tid >= off ? s[tid - off] : 0.0f;", "float v = tid >= off ? s[(int)x[tid] % 128] : 0.0f;",
     "indexes 's' with a value that depends on data"),
    # a constant where a sum belongs
    ("s[tid] += v;", "s[tid] = 1.0f;", "a value that is not a sum of its cells"),
    # two threads store one cell in one phase
    ("s[tid] += v;", "s[tid / 2] += v;", "both write 's[0]' between two barriers (a race)"),
    # the block size given at run time
    ("int main() { scan<<<8, 128>>>", "int main(int argc, char**) { scan<<<8, 128 * argc>>>",
     "its launches do not give one constant block size"),
    # a round count that depends on data
    ("off < 128;", "off < n;", "runs a number of times that depends on data"),
    # the scan repeated thousands of times (a benchmark's loop): too long to follow, refused at once
    ("for (int off = 1; off < 128; off *= 2) {", "for (int rep = 0; rep < 4096; rep++) "
     "for (int off = 1; off < 128; off *= 2) {", "runs past 131072 statements"),
    # a block size TileLang's CUDA T.cumsum does not take
    ("scan<<<8, 128>>>", "scan<<<8, 96>>>", "it runs on 96 threads; T.cumsum runs on a power of two"),
])
def test_scans_it_must_refuse(tmp_path, old, new, reason):
    """No T.cumsum: the kernel stays portable with the scan pass's reason, or, where its rounds are
    faithful lane phases (another combine than +), it lifts as tiled loops and agrees on the CPU."""
    source = textwrap.dedent(HS)
    assert old in source
    kernels, text = convert(tmp_path, source.replace(old, new), "--check", "cpu", spec=HS_SPEC)
    k = kernels["scan"]
    assert "T.cumsum" not in text
    if k["form"] == "tile":
        assert k["reason"].startswith("its barriers separate map phases"), k["reason"]
        assert k["check"]["status"] == "pass", k["check"]
    else:
        assert k["form"] == "portable"
        assert reason in note(k), note(k)


# An exclusive Blelloch scan of two elements per thread written with a per-thread stride, and
# a store of each element's prefix into an in-place buffer.
BLELLOCH = """
    __global__ void escan(unsigned int* __restrict__ data, int n) {
        __shared__ unsigned int t[64];
        const int tid = threadIdx.x;
        const int base = blockIdx.x * 64;
        t[2 * tid] = base + 2 * tid < n ? data[base + 2 * tid] : 0u;
        t[2 * tid + 1] = base + 2 * tid + 1 < n ? data[base + 2 * tid + 1] : 0u;
        int stride = 1;
        for (int d = 32; d > 0; d >>= 1) {
            __syncthreads();
            if (tid < d) t[stride * (2 * tid + 2) - 1] += t[stride * (2 * tid + 1) - 1];
            stride *= 2;
        }
        if (tid == 0) t[63] = 0u;
        for (int d = 1; d < 64; d *= 2) {
            stride >>= 1;
            __syncthreads();
            if (tid < d) {
                unsigned int a = t[stride * (2 * tid + 1) - 1];
                t[stride * (2 * tid + 1) - 1] = t[stride * (2 * tid + 2) - 1];
                t[stride * (2 * tid + 2) - 1] += a;
            }
        }
        __syncthreads();
        if (base + 2 * tid < n) data[base + 2 * tid] = t[2 * tid];
        if (base + 2 * tid + 1 < n) data[base + 2 * tid + 1] = t[2 * tid + 1];
    }
    int main() { escan<<<5, 32>>>(nullptr, 300); }
"""

BLELLOCH_SPEC = """
    [[kernel]]
    name = "escan"
    grid = [5, 1, 1]
    block = [32, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "data"
    buffer = "uint32"
    elements = 300
    role = "inout"
    range = [0, 1000]
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 300
"""


def test_blelloch_scan_with_interleaved_elements_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, BLELLOCH, "--check", "cpu", spec=BLELLOCH_SPEC)
    k = kernels["escan"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    body = factory(text, "escan")
    # thread tid loads elements 2 tid and 2 tid + 1; the exclusive prefixes have those lengths
    assert "t_prefix[2 * lane + 1] = " in body and "t_prefix[2 * lane + 2] = " in body
    assert "data[base + 2 * tid] = t_prefix[2 * lane]" in body
    assert "data[base + 2 * tid + 1] = t_prefix[2 * lane + 1]" in body
    assert "stride" not in body and "T.cumsum(t_prefix[1:65], dim=0)" in body


@pytest.mark.parametrize("old, new, reason", [
    # the root not cleared: the down-sweep adds the total into every prefix
    ("if (tid == 0) t[63] = 0u;", "", "the read of 't' at line 26 adds element 0 twice"),
    # a cell written again after the last barrier (by the thread that read it: no race)
    ("data[base + 2 * tid + 1] = t[2 * tid + 1];", "data[base + 2 * tid + 1] = t[2 * tid + 1];\n    t[2 * tid] = 0u;",
     "it stores into 't' after the last barrier"),
    # the root cleared or not by the data
    ("if (tid == 0) t[63] = 0u;", "if (data[0] != 3u) t[63] = 0u;",
     "after the first barrier it stores into 't' under a condition on data"),
    # the total stored among the rounds into the buffer the final stores write: the barrier that
    # ordered the two stores cannot be kept
    ("if (tid == 0) t[63] = 0u;", "if (tid == 0) { data[base] = t[63]; t[63] = 0u; }",
     "it stores into 'data' among the scan's rounds and uses it after them"),
    # a store inside the rounds' loops cannot move after the scan
    ("stride *= 2;", "stride *= 2; if (tid == 0) data[base] = t[0];", "stores to memory inside the scan's loops"),
    # a store ordered by the CUDA barriers before another thread's read of the same buffer
    ("if (base + 2 * tid < n) data", "if (base + 2 * tid < n && data[base] != 7u) data",
     "reads 'data' after the scan, which the kernel also writes"),
    # the final store reads a buffer the kernel also writes
    ("data[base + 2 * tid] = t[2 * tid];", "data[base + 2 * tid] = t[2 * tid] + data[base];",
     "combines the shared values with '+'"),
])
def test_blelloch_variants_it_must_refuse(tmp_path, old, new, reason):
    source = textwrap.dedent(BLELLOCH)
    assert old in source
    kernels, _ = convert(tmp_path, source.replace(old, new))
    k = kernels["escan"]
    assert k["form"] == "portable"
    assert reason in note(k), note(k)


def test_launch_with_another_block_size_is_refused_by_the_factory(tmp_path):
    """The proof holds for the launches' block size; the factory says so for any other."""
    _, text = convert(tmp_path, HS)
    namespace: dict = {}
    exec(compile(text, "k.py", "exec"), namespace)
    with pytest.raises(AssertionError, match="proved for 128 threads"):
        namespace["make_scan"]((8, 1, 1), (256, 1, 1), 0, target="c")


def test_corpus_scans_are_lifted_and_agree_on_cpu(tmp_path):
    out = tmp_path / "out"
    main(["convert", str(REPO / "corpus" / "scan"), "-o", str(out), "-q", "--check", "cpu"])
    report = json.loads((out / "report.json").read_text())
    kernels = {k["kernel"]: k for k in report["kernels"]}
    for name in ("blockScanInclusiveHS", "blockScanExclusiveBlelloch"):
        assert kernels[name]["form"] == "tile", kernels[name]["reason"]
        assert kernels[name]["check"]["status"] == "pass", kernels[name]["check"]
    text = (out / "block_scan.py").read_text()
    assert "T.cumsum(buf_prefix[1:257], dim=0)" in factory(text, "blockScanInclusiveHS")
    assert "T.cumsum(temp_prefix[1:257], dim=0)" in factory(text, "blockScanExclusiveBlelloch")
