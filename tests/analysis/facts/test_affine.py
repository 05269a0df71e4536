"""Affine forms of index math (analysis.facts.affine): equal up to integer arithmetic, linear forms."""
from __future__ import annotations

from migrate.analysis.facts import affine
from migrate.ir import model as m
from migrate.parse.frontend import parse_file


def _expr(tmp_path, text: str) -> m.Expr:
    (tmp_path / "e.cu").write_text(f"__global__ void f(int a, int b, int* o) {{ o[0] = {text}; }}")
    pf = parse_file(str(tmp_path / "e.cu"))
    (assign,) = [n for n in m.walk(pf.unit.kernels[0].body) if isinstance(n, m.Assign)]
    return assign.value


def test_affine_forms_compare_up_to_integer_arithmetic(tmp_path):
    assert affine.same_value(_expr(tmp_path, "(a * 32 + (b - 3)) + 3"), _expr(tmp_path, "b + 32 * a"))
    assert not affine.same_value(_expr(tmp_path, "a * 32 + b"), _expr(tmp_path, "b + 31 * a"))
    terms, const = affine.linear_form(_expr(tmp_path, "2 * (a - 4) + a"))
    assert const == -8 and sorted(c for c, _ in terms.values()) == [3]
