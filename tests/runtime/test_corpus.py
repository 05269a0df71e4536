"""Every corpus kernel runs on the CPU executor and matches its numpy reference.

Parametrised over every ``[[kernel]]`` of ``corpus/**/*.toml``, under the forward schedule and
again under a random one (threads of a block in a seeded random order between barriers). All
corpus programs are compiled once, in parallel, before the first test (the library cache makes
later sessions fast).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from migrate.runtime.build import BuildError
from migrate.runtime.compare import compare_outputs
from migrate.runtime.cuda_cpu import compile_many, run_cpu
from migrate.runtime.inputs import DEFAULT_SEED, make_inputs
from migrate.runtime.spec import SpecError, load_spec
from migrate.runtime.build import find_cxx

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")

from tests.paths import CORPUS, REPO as ROOT
from tests.references import REFERENCES

# Kernels whose CUDA and reference disagree, with who is wrong (the corpus authors own both).
KNOWN_DISAGREEMENTS: dict[str, str] = {}


def _cases():
    cases = []
    for toml in sorted(CORPUS.glob("**/*.toml")):
        try:
            kernels = load_spec(toml)
        except SpecError:
            continue          # test_runtime_spec.py reports malformed specs
        for k in kernels:
            cases.append((toml, k))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def libraries():
    tomls = sorted({toml for toml, _ in CASES})
    jobs = [(t.with_suffix(".cu"), load_spec(t)) for t in tomls]
    built = compile_many(jobs, max_workers=max(2, os.cpu_count() or 2))
    return dict(zip(tomls, built))


@pytest.mark.parametrize("schedule", ["forward", "random"])
@pytest.mark.parametrize("toml,kernel", CASES, ids=[k.reference_key(CORPUS) for _, k in CASES])
def test_corpus_kernel_matches_reference(libraries, toml, kernel, schedule):
    key = kernel.reference_key(CORPUS)
    if key in KNOWN_DISAGREEMENTS:
        pytest.xfail(KNOWN_DISAGREEMENTS[key])
    lib = libraries[toml]
    if isinstance(lib, BuildError):
        pytest.fail(f"{toml.with_suffix('.cu').relative_to(ROOT)} does not compile on the CPU:\n{lib}")
    ref = REFERENCES.get(key)
    if ref is None:
        pytest.skip(f"no reference for {key} in tests/references yet")
    inp = make_inputs(kernel, DEFAULT_SEED)
    res = run_cpu(lib, kernel, inp.args, inp.symbols, schedule=schedule, seed=7, timeout=120)
    assert res.ok, f"{key} [{schedule}]: {res}\n{res.stderr[-2000:]}"
    warnings = [f.message for f in res.findings if f.kind == "spec_mismatch"]
    assert not warnings, f"{key}: the spec does not fit the kernel: {warnings}"
    expected = ref(inp.copy().args, {k: v.copy() for k, v in inp.symbols.items()})
    results = compare_outputs(kernel, expected, res.outputs)
    bad = [r.message for r in results if not r.passed]
    assert not bad, f"{key} [{schedule}, seed {inp.seed}]: " + "; ".join(bad)


def test_corpus_is_not_empty():
    assert CASES, "no corpus specs found"
