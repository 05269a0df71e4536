"""Helpers and kernels shared by the lifting tests.

:func:`convert` runs ``migrate convert`` on a kernel written for the purpose (with its spec for
``--check cpu``) and returns the report's kernels and the emitted module; :func:`factory` cuts a
kernel's factory out of the module, :func:`note` the reasons a lift was refused (M3003) and
:func:`refused` converts a kernel that must stay portable and returns them; :func:`load` and
:func:`module_from_text` import an emitted module. The kernels and specs at the end are used by
more than one test file.
"""
from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

from migrate.cli import main


def convert(tmp_path: Path, source: str, *flags, spec: str | None = None, name: str = "k") -> tuple[dict, str]:
    src = tmp_path / f"{name}.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(source))
    if spec is not None:
        (tmp_path / f"{name}.toml").write_text(textwrap.dedent(spec))
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", *flags])
    report = json.loads((out / "report.json").read_text())
    return {k["kernel"]: k for k in report["kernels"]}, (out / f"{name}.py").read_text()


def factory(text: str, kernel: str) -> str:
    start = text.index(f"def make_{kernel}(")
    return text[start:text.index(f"return {kernel}", start)]


def note(kernel: dict) -> str:
    return " ".join(d["message"] for d in kernel["diagnostics"] if d["code"] == "M3003")


def refused(tmp_path, source: str) -> str:
    kernels, _ = convert(tmp_path, source)
    k = next(iter(kernels.values()))
    assert k["form"] == "portable", k
    return note(k)


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"rows_{path.parent.parent.name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def module_from_text(tmp_path, text: str):
    path = tmp_path / "gemm_module.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("gemm_module", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# -- kernels shared by several test files ---------------------------------------------------------

#: One warp tree per warp, lane 0's atomicMax (test_warp.py; test_reduce.py makes the block 2-D).
WARP_MAX = """
    #include <climits>
    __global__ void wmax(const int* __restrict__ x, int* __restrict__ out, int n) {
        int v = INT_MIN;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v = max(v, x[i]);
        for (int off = 16; off > 0; off /= 2) {
            int other = __shfl_xor_sync(0xffffffff, v, off);
            v = (other > v) ? other : v;
        }
        if ((threadIdx.x & 31) == 0) atomicMax(out, v);
    }
"""

#: A two-level warp tree whose total a shared scalar broadcasts (test_warp.py; test_reduce.py
#: declares the scalar outside the kernel).
ROW_NORMALIZE = """
    __device__ float block_sum(float v) {
        __shared__ float parts[32];
        __shared__ float total;
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
        if (lane == 0) parts[warp] = v;
        __syncthreads();
        if (warp == 0) {
            v = lane < blockDim.x / 32 ? parts[lane] : 0.0f;
            for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
            if (lane == 0) total = v;
        }
        __syncthreads();
        return total;
    }
    __global__ void normalize(const float* __restrict__ x, float* __restrict__ y, int cols) {
        const float* xr = x + blockIdx.x * cols;
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) s += fabsf(xr[c]);
        const float inv = 1.0f / block_sum(s);
        for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = xr[c] * inv;
    }
"""

#: The spec of test_warp_rows.ROW_DOT: 14 rows of 75, one warp per row, 4 per block (test_warp.py
#: adapts it to its online softmax).
ROW_DOT_SPEC = """
    [[kernel]]
    name = "row_dot"
    grid = [4, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "a"
    buffer = "float32"
    elements = 1050
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 75
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "y"
    buffer = "float32"
    elements = 14
    role = "out"
    [[kernel.args]]
    name = "rows"
    scalar = "int32"
    value = 14
    [[kernel.args]]
    name = "cols"
    scalar = "int32"
    value = 75
"""

#: The spec of test_forward_shared.STENCIL (tests/test_check.py adapts it to a map).
STENCIL_SPEC = """
    [[kernel]]
    name = "blur"
    grid = [16, 1, 1]
    block = [64, 1, 1]
    tolerance = "fp32"
    [[kernel.args]]
    name = "in"
    buffer = "float32"
    elements = 1000
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 1000
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 1000
"""


TILED_LOOPS = "its barriers separate map phases"


def refused_or_tiled(tmp_path, source: str, kernel: str, reason: str, spec: str) -> dict:
    """Convert ``source`` with a CPU check: the kernel is not lifted by the pass under test. It
    either stays portable with ``reason`` in its note, or its barrier-separated phases lift as
    tiled loops (analysis.lift.tile_loops, the last lift tried) and agree with the CUDA."""
    kernels, _ = convert(tmp_path, source, "--check", "cpu", spec=spec)
    k = kernels[kernel]
    if k["form"] == "tile":
        assert k["reason"].startswith(TILED_LOOPS), k["reason"]
        assert k["check"]["status"] == "pass", k["check"]
    else:
        assert k["form"] == "portable" and reason in note(k), note(k)
    return k


def spec_text(name, grid, block, args, tolerance="exact", template=None) -> str:
    """A spec of one kernel: ``args`` as :func:`buffer_arg` dicts or scalars' ``{"name", "value"}``."""
    lines = ["[[kernel]]", f'name = "{name}"', f"grid = {list(grid)}", f"block = {list(block)}",
             f'tolerance = "{tolerance}"']
    if template:
        lines.append(f"template = {template!r}".replace("'", '"'))
    for arg in args:
        lines.append("[[kernel.args]]")
        lines += [f"{k} = {v!r}".replace("'", '"') for k, v in arg.items()]
    return "\n".join(lines) + "\n"


def buffer_arg(name, dtype, n, role, rng) -> dict:
    out = {"name": name, "buffer": dtype, "elements": n, "role": role}
    if role != "out":
        out["range"] = list(rng)
    return out
