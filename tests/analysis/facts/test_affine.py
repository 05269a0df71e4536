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


def test_a_memo_gives_the_same_forms_and_each_caller_its_own_terms(tmp_path):
    e = _expr(tmp_path, "((a + 1) + (b - 2)) + 3 * (a - b)")
    memo: dict = {}
    sums = [n for n in m.walk(e) if isinstance(n, m.Binary)]
    for n in sums:  # every subexpression, as a pass asks of a tree (the sums under e from the memo)
        assert affine.linear_form(n, memo) == affine.linear_form(n)
    assert all(memo[id(n)][0] is n for n in sums)  # the node is held: its id cannot name another
    terms, _const = affine.linear_form(e, memo)
    terms.clear()  # a caller that changes its terms (global_index's fold) changes no later answer
    assert affine.linear_form(e, memo) == affine.linear_form(e) and affine.linear_form(e)[0]
