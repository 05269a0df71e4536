"""emit.nesting: the block depth TileLang's parse gives a printed kernel, against TileLang itself
(a prim_func nested one block past Python's 20 fails to parse with "too many statically nested
blocks"), and a kernel nested that deep refused with the depth rather than converted into a
module that never builds (the pool's stsg)."""
from __future__ import annotations

import importlib.util

import pytest

from migrate.emit.nesting import PYTHON_BLOCKS, block_depth, depth_bound
from migrate.emit.printer import Line
from tests.analysis.support import converted


def _levels(kind: str, k: int) -> list[Line]:
    """A prim_func with ``k`` nested levels of one construct inside T.Kernel and T.Parallel."""
    lines = [Line(0, "@T.prim_func", ""), Line(0, "def f(a: T.Tensor((64,), T.int32)):", ""),
             Line(1, "with T.Kernel(1, threads=64) as bx:", ""), Line(2, "for tx in T.Parallel(64):", "")]
    ind = 3
    for i in range(k):
        if kind == "if":
            lines.append(Line(ind, f"if a[{i}] > {i}:", ""))
        elif kind == "for":
            lines.append(Line(ind, f"for i{i} in T.serial(2):", ""))
        elif kind == "for_break":
            lines += [Line(ind, f"for i{i} in T.serial(2):", ""), Line(ind + 1, f"if a[{i}] > 100:", ""),
                      Line(ind + 2, "break", "")]
        elif kind == "while_break":
            lines += [Line(ind, f"v{i} = T.alloc_var(T.int32)", ""), Line(ind, f"v{i} = 0", ""),
                      Line(ind, f"while v{i} < 2:", ""), Line(ind + 1, f"v{i} = v{i} + 1", ""),
                      Line(ind + 1, f"if a[{i}] > 100:", ""), Line(ind + 2, "break", "")]
        ind += 1
    return lines + [Line(ind, "a[tx] = 2", "")]


def _parses(lines, tmp_path) -> bool:
    path = tmp_path / "deep.py"
    path.write_text("import tilelang.language as T\n" + "\n".join("    " * ln.indent + ln.text for ln in lines) + "\n")
    spec = importlib.util.spec_from_file_location("deep", path)
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except Exception as exc:  # noqa: BLE001 - TileLang wraps Python's SyntaxError
        assert "too many statically nested blocks" in str(exc)
        return False
    return True


@pytest.mark.parametrize("kind,deepest_ok", [("if", 9), ("for", 18), ("for_break", 5), ("while_break", 8)])
def test_the_depth_matches_what_tilelang_parses(kind, deepest_ok, tmp_path):
    for k in (deepest_ok, deepest_ok + 1):
        lines = _levels(kind, k)
        assert (block_depth(lines) <= PYTHON_BLOCKS) == _parses(lines, tmp_path) == (k == deepest_ok), (kind, k)


def _chain(k: int, comment: str) -> list[Line]:
    """A prim_func with an if/elif chain of ``k`` arms and an else, each arm holding a loop whose
    line ends in ``comment`` and a condition in it."""
    lines = [Line(0, "@T.prim_func", ""), Line(0, "def f(a: T.Tensor((64,), T.int32)):", ""),
             Line(1, "with T.Kernel(1, threads=64) as bx:", ""), Line(2, "for tx in T.Parallel(64):", "")]
    for i in range(k):
        lines.append(Line(3, f"{'if' if i == 0 else 'elif'} a[tx] == {i}:{comment}", ""))
        lines += [Line(4, f"for j in T.serial(2):{comment}", ""), Line(5, "if a[j] > 0:", ""),
                  Line(6, f"a[tx] = {i}", "")]
    return lines + [Line(3, "else:", ""), Line(4, "a[tx] = 9", "")]


@pytest.mark.parametrize("comment", ["", "  # a comment the line ends in:  not a colon's"])
@pytest.mark.parametrize("k", [1, 3, 6])
def test_the_bound_read_off_the_lines_is_never_below_the_parsed_depth(k, comment):
    """The printed kernel is parsed only where the bound passes the limit: the bound must hold
    for elif chains (each an if inside the last one's else) and lines that end in a comment."""
    for lines in (_chain(k, comment), *(_levels(kind, 4) for kind in ("if", "for", "for_break", "while_break"))):
        assert depth_bound(lines) >= block_depth(lines) > 0
    deep = _chain(k, comment)
    assert block_depth(deep) == 1 + 1 + 2 * k + 1 + 2  # with, for (no jump: 1), the chain, for, if
    assert depth_bound(deep) <= block_depth(deep) + 4  # (loops counted 3 where they do not jump)


#: Ten nested conditions inside a search loop that breaks: past Python's blocks in every form.
DEEP = """
__global__ void deep(const int* __restrict__ a, int* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < n; k++) {
    if (a[k] == i) break;
    if (i > 0) if (i > 1) if (i > 2) if (i > 3) if (i > 4) if (i > 5) if (i > 6) if (i > 7)
      if (i > 8) if (i > 9) out[i] = k;
  }
}
"""


def test_a_kernel_nested_past_the_limit_is_refused_with_its_depth(tmp_path):
    out, (k,) = converted(tmp_path, DEEP, expect_ok=False)
    assert k["form"] in ("hybrid", "unsupported"), k["form"]
    assert any("blocks deep as TileLang parses them" in d["message"] for d in k["diagnostics"]), k["diagnostics"]
