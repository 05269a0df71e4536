"""The check can fail: deliberately wrong kernels (tests/fixtures/runtime/bugs.cu) are reported.

Wrong results show up as mismatches against the reference; out-of-bounds accesses name the
buffer; hangs end with a clear status; crashes too; a missing __syncthreads is caught by the
reverse and random schedules.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from migrate.runtime.api import check_original, run_original
from migrate.runtime.compare import compare_outputs
from migrate.runtime.cuda_cpu import compile_cpu
from migrate.runtime.spec import load_spec
from migrate.runtime.build import find_cxx
from tests.paths import FIXTURES

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")

FIX = FIXTURES / "runtime"
CU = FIX / "bugs.cu"
KERNELS = {k.id: k for k in load_spec(FIX / "bugs.toml")}


@pytest.fixture(scope="module", autouse=True)
def library():
    return compile_cpu(CU, list(KERNELS.values()))


def affine(args, symbols):
    return {"y": 2.0 * args["x"].astype(np.float64) + 1.0}


def neighbour_sum(args, symbols):
    x = args["x"].astype(np.float64)
    left = np.concatenate([[0.0], x[:-1]])
    left[::256] = 0.0
    return {"y": x + left}


def next_sum(args, symbols):
    x = args["x"].astype(np.float64)
    return {"y": x + np.concatenate([x[1:], [0.0]])}


def affine_and_square(args, symbols):
    x = args["x"].astype(np.float64)
    return {"y": 2.0 * x + 1.0, "z": x * x}


def check(kid, reference, schedule="forward", timeout=20.0):
    return check_original(CU, KERNELS[kid], reference, schedule=schedule, seed=3, timeout=timeout)


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random"])
def test_correct_kernels_pass(schedule):
    assert check("good_affine", affine, schedule).passed
    c = check("with_sync", neighbour_sum, schedule)
    assert c.passed, c.message


@pytest.mark.parametrize("kid,needle", [
    ("mutated_operator", "differ beyond fp32"),
    ("wrong_index", "differ beyond fp32"),
    ("wrong_bound", "never written"),
])
def test_wrong_results_are_mismatches(kid, needle):
    c = check(kid, affine)
    assert c.run.ok and not c.passed
    bad = [r for r in c.comparisons if not r.passed]
    assert bad and needle in bad[0].message, c.message
    if kid == "wrong_bound":
        assert bad[0].first_bad_index == 999 and bad[0].n_bad == 1


def test_unwritten_output_fails():
    c = check("unwritten_output", affine_and_square)
    y, z = c.comparisons
    assert y.passed and not z.passed
    assert z.n_unwritten == z.n == 1000 and "never written" in z.message


def test_missing_syncthreads_is_caught_by_other_schedules():
    # in ascending order every thread's left neighbour has already written: forward cannot see it
    assert check("missing_sync", neighbour_sum, "forward").passed
    for schedule in ("reverse", "random"):
        c = check("missing_sync", neighbour_sum, schedule)
        assert c.run.ok and not c.passed, schedule


def test_reading_unwritten_shared_memory_fails():
    c = check("uninitialised_shared", next_sum)
    assert c.run.ok and not c.passed
    bad = c.comparisons[0]
    assert bad.first_bad_index == 255          # the last thread of the first block reads s[256]


@pytest.mark.parametrize("kid,buffer,access,index", [
    ("oob_read", "x", "read", 1000),
    ("oob_write", "y", "write", 1000),
    ("oob_write_before", "y", "write", -1),
])
def test_out_of_bounds_names_the_buffer(kid, buffer, access, index):
    r = run_original(CU, KERNELS[kid], seed=1)
    assert r.status == "oob", r
    f = r.findings[0]
    assert f.kind == "oob" and f.buffer == buffer and f.access == access and f.index == index
    assert f"buffer '{buffer}'" in r.message
    if index >= 0:
        assert f.thread == (231, 0, 0) and f.block == (3, 0, 0)    # i = 999 reaches x[1000]


def test_out_of_bounds_dynamic_shared_memory():
    r = run_original(CU, KERNELS["oob_dynamic_shared"], seed=1)
    assert r.status == "oob"
    assert "dynamic shared memory" in r.message and "1024" in r.message


def test_deadlock_at_divergent_barrier():
    r = run_original(CU, KERNELS["divergent_barrier"], seed=1, timeout=20)
    assert r.status == "deadlock" and r.hung
    assert "128 thread(s) wait at __syncthreads()" in r.message
    assert r.findings and r.findings[0].kind == "deadlock"


@pytest.mark.parametrize("kid", ["infinite_loop", "spin_on_other_block"])
def test_hang_times_out(kid):
    r = run_original(CU, KERNELS[kid], seed=1, timeout=2)
    assert r.status == "timeout" and r.hung
    assert "did not finish within 2 s" in r.message


def test_spin_on_other_block_passes_only_by_luck_of_order():
    # block 1 raises the flag before block 0 spins when blocks run in reverse
    r = run_original(CU, KERNELS["spin_on_other_block"], schedule="reverse", seed=1, timeout=10)
    assert r.ok


@pytest.mark.parametrize("kid,needles", [
    ("null_deref", ["SIGSEGV", "null pointer", "thread (0,0,0) of block (0,0,0)"]),
    ("int_div_zero", ["SIGFPE", "division by zero"]),
    ("assert_fails", ["SIGABRT", "assert", "Assertion"]),
    ("stack_overflow", ["stack overflow", "C2T_STACK_KB"]),
])
def test_crash_is_a_clear_status(kid, needles):
    r = run_original(CU, KERNELS[kid], seed=1, timeout=20)
    assert r.status == "crash", r
    for n in needles:
        assert n in r.message, r.message


@pytest.mark.parametrize("kid,needle", [
    ("too_many_args", "takes 3 parameter(s) but the spec lists 4"),
    ("scalar_for_pointer", "parameter 0 has pointer type const float*, but the spec gives a scalar"),
])
def test_spec_that_does_not_fit_is_a_launch_error(kid, needle):
    r = run_original(CU, KERNELS[kid], seed=1)
    assert r.status == "launch_error" and needle in r.message


def test_pointer_element_type_mismatch_is_reported():
    r = run_original(CU, KERNELS["wrong_pointer_type"], seed=1)
    warn = [f for f in r.findings if f.kind == "spec_mismatch"]
    assert warn and "const double*" in warn[0].message and "float32" in warn[0].message


def test_compile_error_is_reported(tmp_path):
    cu = tmp_path / "broken.cu"
    cu.write_text("__global__ void k(float* y) { y[0] = undefined_thing; }\nint main() { return 0; }\n")
    (tmp_path / "broken.toml").write_text(
        '[[kernel]]\nname = "k"\ngrid = [1]\nblock = [1]\ntolerance = "fp32"\n'
        '[[kernel.args]]\nname = "y"\nbuffer = "float32"\nelements = 1\nrole = "out"\n')
    r = run_original(cu, "k", seed=1)
    assert r.status == "compile_error"
    assert "undefined_thing" in r.message and "broken.cu:1" in r.message


def test_kernel_missing_from_the_source_is_a_compile_error():
    r = run_original(CU, load_spec(FIX / "features.toml")[0], seed=1)
    assert r.status == "compile_error" and "warp_ops" in r.message
