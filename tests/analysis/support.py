"""Helpers of the analysis tests: a kernel source parsed to its unit, and the nodes of a function."""
from __future__ import annotations

import textwrap

from migrate.ir import model as m
from migrate.parse.frontend import parse_file


def unit(tmp_path, source: str):
    path = tmp_path / "k.cu"
    path.write_text("#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cooperative_groups.h>\n"
                    + textwrap.dedent(source))
    parsed = parse_file(path)
    assert not [d for d in parsed.diagnostics if d.severity.value == "error"], parsed.diagnostics
    return parsed.unit


def nodes(fn, cls):
    return [n for n in m.walk(fn.body) if isinstance(n, cls)]


def calls(fn):
    return [n.callee for n in nodes(fn, m.Call)]


#: A block reduction: a shared tree in a uniform loop, then a warp shuffle under a thread test.
PHASES = """
__global__ void k(const float* x, float* y, int n) {
    __shared__ float s[256];
    int t = threadIdx.x;
    int half = blockDim.x / 2;
    s[t] = x[t];
    __syncthreads();
    for (int st = half; st > 0; st >>= 1) {
        if (t < st) s[t] += s[t + st];
        __syncthreads();
    }
    if (t < 32) {
        float v = s[t];
        v += __shfl_xor_sync(0xffffffffu, v, 16);
        if (t == 0) y[blockIdx.x] = v;
    }
}
"""


def converted(tmp_path, source: str, spec: str | None = None, expect_ok: bool = True):
    """``source`` (and its spec) written to ``tmp_path`` as ``k.cu`` (``k.toml``) and converted,
    checked on the CPU when a spec is given: (the output folder, the report's kernel rows). With
    ``expect_ok``, the conversion must exit 0 (every check passed)."""
    import json

    from migrate.cli import main
    (tmp_path / "k.cu").write_text(source)
    if spec is not None:
        (tmp_path / "k.toml").write_text(spec)
    out = tmp_path / "out"
    status = main(["convert", str(tmp_path / "k.cu"), "-o", str(out), "-q"] + (["--check", "cpu"] if spec else []))
    if expect_ok:
        assert status == 0
    return out, json.loads((out / "report.json").read_text())["kernels"]


def program_converted(tmp_path, source: str, name: str, status: int = 0):
    """A whole program (with its ``main``) written to ``tmp_path/src/name`` and converted to
    ``tmp_path/out``, unchecked; the conversion must exit ``status``. The output folder."""
    from migrate.cli import main
    src = tmp_path / "src" / name
    src.parent.mkdir(exist_ok=True)
    src.write_text(source)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q"]) == status
    return out


def module_of(path):
    """The migrated module at ``path`` imported (its factories' defaults evaluated)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"migrated_{abs(hash(str(path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def checked(out, *options) -> tuple[int, dict]:
    """``migrate check --from out`` with ``options`` (``"--run", ""``): (its exit status, kernel
    name -> its check row)."""
    import json

    from migrate.cli import main
    report = out.parent / "c.json"
    status = main(["check", "--from", str(out), *options, "--json", str(report)])
    return status, {c["kernel"]: c for c in json.loads(report.read_text())}


# -- specs written in the tests: one [[kernel]] table and its [[kernel.args]] -------------------------
def spec_buffer(name, dtype, elements, role, lo=None, hi=None) -> str:
    """A buffer argument of a spec (``range`` where ``lo`` is given)."""
    text = f'[[kernel.args]]\nname = "{name}"\nbuffer = "{dtype}"\nelements = {elements}\nrole = "{role}"\n'
    return text + (f"range = [{lo}, {hi}]\n" if lo is not None else "")


def spec_scalar(name, dtype, value) -> str:
    """A scalar argument of a spec."""
    return f'[[kernel.args]]\nname = "{name}"\nscalar = "{dtype}"\nvalue = {value}\n'


def spec_kernel(name, grid, block, tolerance, *args, template=None) -> str:
    """A kernel of a spec with its arguments (``template``: one template argument)."""
    return (f'[[kernel]]\nname = "{name}"\ntolerance = "{tolerance}"\ngrid = {list(grid)}\nblock = {list(block)}\n'
            + (f'template = ["{template}"]\n' if template else "") + "".join(args) + "\n")
