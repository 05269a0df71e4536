"""Mixed-radix indices (analysis.facts.radix): a flat element index taken apart into digits and
put back is the element itself, whatever spelling the digits take; anything that only looks like
it is not."""
from __future__ import annotations

import pytest

from migrate.analysis.facts.radix import injective
from migrate.analysis.lift.map import expand_locals
from migrate.analysis.prepare.global_index import fold_global_indices
from migrate.ir import model as m
from tests.analysis.support import nodes, unit


def _store_index(tmp_path, digits: str, store: str):
    fn = unit(tmp_path, f"""
        __global__ void k(const int N, const int S, const unsigned int P, float* out) {{
            int idx = blockIdx.x * blockDim.x + threadIdx.x;
            {digits}
            out[{store}] = 1.0f;
        }}
    """).kernel("k")
    fn, _ = fold_global_indices(fn)
    store = nodes(fn, m.Assign)[-1]
    return expand_locals(store.target.index, fn.body.stmts)


@pytest.mark.parametrize("digits, store", [
    ("int i = idx % N; int j = idx / N;", "i + j * N"),                                   # two digits
    ("int i = idx / S / N; int j = idx / N % S; int k = idx % N;", "i * (S * N) + j * N + k"),  # three
    ("const int off = N * S; int i = idx / (S * N), j = (idx / N) % S, k = idx % N;",
     "k + N * j + off * i"),                                                              # other orders
    ("int k = idx % N; int j = (idx - k) / N % S; int i = (idx - N * j - k) / (S * N);",
     "S * N * i + N * j + k"),                                                            # digits peeled
    ("int i = idx % P; int j = idx / P;", "(i + j * P) * 4 + 3"),                        # unsigned, scaled
    ("int i = idx % 32; int j = idx / 32;", "2 * N + i + 32 * j"),                       # constant radix
])
def test_digits_put_back_are_the_element(tmp_path, digits, store):
    assert injective(_store_index(tmp_path, digits, store), "x")


@pytest.mark.parametrize("digits, store", [
    ("int i = idx % N; int j = idx / N;", "i * N + j"),          # a transpose: a bijection it cannot prove
    ("int i = idx % N; int j = idx / N;", "i + j"),              # digits added: not injective
    ("int i = idx % N; int j = idx / S;", "i + j * N"),          # radices that do not match
    ("int i = idx % N; int j = idx / N;", "i + j * N + i"),      # a digit twice
    ("int i = idx % N; int j = idx / N;", "i + j * (N + 1)"),    # a stride past the radix
    ("int i = idx / N;", "i"),                                   # a quotient alone: N elements share it
])
def test_what_is_not_digits_put_back_is_not_proven(tmp_path, digits, store):
    # (the transpose and the wider stride are injective, but not by putting digits back: the
    # proof refuses them and the kernel stays portable)
    assert not injective(_store_index(tmp_path, digits, store), "x")


def _unsigned_store_index(tmp_path, digits: str, store: str):
    fn = unit(tmp_path, f"""
        __global__ void k(const size_t rows, const size_t cols, const int S, float* out) {{
            size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
            {digits}
            out[{store}] = 1.0f;
        }}
    """).kernel("k")
    fn, _ = fold_global_indices(fn)
    store = nodes(fn, m.Assign)[-1]
    return expand_locals(store.target.index, fn.body.stmts)


@pytest.mark.parametrize("store", [
    "id % (rows * (cols - 1)) + id / (rows * (cols - 1)) * (rows * cols)",  # a row's last column skipped
    "id % (rows - 2) + id / (rows - 2) * rows + 1",                          # two cells of each column
    "id % rows + id / rows * (rows + 3)",                                    # a stride past the radix
    "2 * (id % rows) + id / rows * (2 * rows)",                              # a scaled remainder
])
def test_a_remainder_below_its_quotients_step_tells_elements_apart(tmp_path, store):
    assert injective(_unsigned_store_index(tmp_path, "", store), "x")


@pytest.mark.parametrize("store", [
    "id % rows + id / rows * (rows * cols)",          # cols could be 0: the step may fall below the radix
    "id % (rows + 1) + id / (rows + 1) * rows",       # a step below the radix: neighbours meet
    "id % rows + id / rows * (S + rows)",             # S signed: its sign is unknown
    "id % rows + id / cols * (rows + 1)",             # the quotient of another radix
    "3 * (id % rows) + id / rows * (2 * rows)",       # the scaled remainder overruns the step
])
def test_a_remainder_that_may_reach_its_quotients_step_is_not_proven(tmp_path, store):
    assert not injective(_unsigned_store_index(tmp_path, "", store), "x")


@pytest.mark.parametrize("a, b, expected", [
    ("2 * (id % rows + id / rows * (rows + 1))", "2 * (id % rows + id / rows * (rows + 1)) + 1", True),
    ("4 * (id / rows * cols) + 1", "4 * (id / rows * cols) + 3", True),   # lanes 1 and 3 of four
    ("4 * (id / rows * cols) + 1", "4 * (id / rows * cols) + 5", False),  # the next element's lane 1
    ("2 * (id % rows) + id", "2 * (id % rows) + id + 1", False),           # a term of stride 1
    ("2 * (id / rows)", "2 * (id / cols) + 1", False),                     # not one index and a constant
])
def test_lanes_of_one_place_are_apart_whatever_the_place(tmp_path, a, b, expected):
    from migrate.analysis.facts.radix import apart
    fn = unit(tmp_path, f"""
        __global__ void k(const size_t rows, const size_t cols, float* out) {{
            size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
            out[{a}] = 1.0f;
            out[{b}] = 2.0f;
        }}
    """).kernel("k")
    fn, _ = fold_global_indices(fn)
    ia, ib = (expand_locals(s.target.index, fn.body.stmts) for s in nodes(fn, m.Assign)[-2:])
    assert apart(ia, ib) is expected
