"""migrate run's comparison of the original's and the rebuilt program's standard output
(migrate/dropin/compare_output.py): numbers under tolerance classes, integers exactly, lines of
time and speed ignored, verdicts and exit statuses compared apart."""
from __future__ import annotations

import pytest

from migrate.dropin.compare_output import (compare_outputs, dropin_counts, is_time_like, tolerance_class,
                                            verdicts, without_dropin_lines)

ORIGINAL = """\
Device: NVIDIA H200
n = 1048576, blocks = 4096
sum = 12345.678
max = 0.9876543
checksum 4294967295
kernel time: 0.123 ms
bandwidth 812.5 GB/s
Test PASSED
"""


def test_equal_outputs_are_equal():
    res = compare_outputs(ORIGINAL, ORIGINAL, "fp32")
    assert res.equal and res.mismatches == []
    assert res.verdicts == (("pass",), ("pass",))


def test_floats_within_the_class_pass_and_timing_lines_are_ignored():
    rebuilt = ORIGINAL.replace("12345.678", "12345.679").replace("0.123 ms", "0.051 ms") \
        .replace("812.5 GB/s", "2001.0 GB/s").replace("NVIDIA H200", "NVIDIA H100")
    res = compare_outputs(ORIGINAL, rebuilt, "fp32_accum")
    assert res.equal, res.mismatches
    assert res.lines_ignored == 3  # the device, the time and the bandwidth


def test_a_float_outside_the_class_is_a_mismatch():
    rebuilt = ORIGINAL.replace("12345.678", "12355.678")
    res = compare_outputs(ORIGINAL, rebuilt, "fp32_accum")
    assert not res.equal
    (m,) = res.mismatches
    assert m["line"] == 3 and "12345.678 != 12355.678" in m["why"]


def test_integers_compare_exactly():
    rebuilt = ORIGINAL.replace("4294967295", "4294967294")
    res = compare_outputs(ORIGINAL, rebuilt, "bf16")  # even the loosest class
    assert not res.equal and res.mismatches[0]["line"] == 5


def test_a_difference_in_the_last_printed_digit_passes():
    # %.1f of 2.45 and 2.4500001 may print 2.4 and 2.5: one unit of the last digit
    assert compare_outputs("mean 2.4\n", "mean 2.5\n", "fp32").equal
    assert not compare_outputs("mean 2.4\n", "mean 2.6\n", "fp32").equal


def test_small_errors_are_judged_against_the_outputs_scale():
    a = "value 1.5\nmax error 1.2e-07\n"
    b = "value 1.5\nmax error 3.4e-07\n"
    assert compare_outputs(a, b, "fp32").equal  # atol = 1e-6 * 1.5
    assert not compare_outputs(a, b, "exact").equal


def test_an_error_line_alone_is_judged_in_the_datas_units():
    # stencil1d prints only its largest difference from its CPU reference (H100, 2026-12-07):
    # float32 ulps of values near 2, 1.5 of them rebuilt against 1 originally
    a = "stencil1d5pt max abs error 2.38419e-07\n"
    b = "stencil1d5pt max abs error 3.57628e-07\n"
    assert compare_outputs(a, b, "fp32").equal
    # a wrong kernel's error is far outside the class's rtol
    assert not compare_outputs(a, "stencil1d5pt max abs error 0.25\n", "fp32").equal
    assert not compare_outputs(a, "stencil1d5pt max abs error 3.1e-05\n", "fp32").equal
    # a value that is not an error keeps the relative rule, and counts of errors compare exactly
    assert not compare_outputs("mean 2.38419e-07\n", "mean 3.57628e-07\n", "fp32").equal
    assert not compare_outputs("errors: 0\n", "errors: 3\n", "fp32").equal
    assert not compare_outputs(a, b, "exact").equal


def test_verdicts_and_exit_statuses_are_compared():
    res = compare_outputs("Test PASSED\n", "Test FAILED\n", "fp32")
    assert not res.equal and any(m["why"] == "verdict" for m in res.mismatches)
    res = compare_outputs("done\n", "done\n", "fp32", status=(0, 1))
    assert not res.equal and res.mismatches[0]["why"] == "exit status"


def test_text_and_line_count_differences_are_mismatches():
    assert not compare_outputs("a = 1\n", "b = 1\n").equal
    res = compare_outputs("a = 1\nb = 2\n", "a = 1\n")
    assert not res.equal and any(m["why"] == "number of lines compared" for m in res.mismatches)


def test_nan_and_inf():
    assert compare_outputs("x nan inf\n", "x nan inf\n").equal
    assert not compare_outputs("x nan\n", "x 1.0\n").equal
    assert not compare_outputs("x inf\n", "x -inf\n").equal


@pytest.mark.parametrize("line, timed", [
    ("Average kernel execution time 12.5 (us)", True),
    ("Elapsed: 3.2 s", True),
    ("Throughput = 1.2 GFLOP/s", True),
    ("sum = 42", False),
    ("PASS", False),
    # the forms pool programs printed on the H100 (2026-12-07)
    ("Lookups/s:             5,704,697", True),
    ("CPU speed : 50522.46 kB/s ", True),
    ("Total GByte/s (GPU memory)  = 181.065", True),
    ("Approximate memory usage = 746.992 MiB", True),
    ("0.346953004599 s", True),
    ("mean_vars: 2.733828    var_vars: 0.19089", False),
    ("Number of sites = 16^4", False),
    ("3 samples", False),
    ("dt = 0.646979", True),          # rtm8's wall time (H100, 2026-12-07)
    ("ndt = 4", False),
    # base64e's overlap of its streams, a share of its timings (H100, 2026-12-07)
    ("  Measured and (Acceptable) Avg Overlap\t= 27.1 % (0.0 %)  -> Measured Overlap is Acceptable", True),
    ("overlap count 12", False),
])
def test_time_like_lines(line, timed):
    assert is_time_like(line) is timed


def test_a_program_printing_its_own_path_reads_alike():
    """binomial and p2p print ``[argv[0]] - Starting...``: the original's and the rebuilt's paths
    differ, nothing else does."""
    a, b = "/tmp/x/prog/original", "/tmp/x/prog/rebuilt"
    expected, actual = f"[{a}] - Starting...\nsum = 3\n", f"[{b}] - Starting...\nsum = 3\n"
    assert not compare_outputs(expected, actual).equal
    assert compare_outputs(expected, actual, programs=(a, b)).equal
    assert not compare_outputs(expected, actual.replace("sum = 3", "sum = 4"), programs=(a, b)).equal


def test_verdict_words():
    assert verdicts("Result = PASS\nmax error 1e-3\nsome FAILED\n") == ("pass", "fail")


def test_the_rebuilt_programs_launch_counts():
    err = ("warning\ncuda2tile: scale 3 launches migrated, 0 original\n"
           "cuda2tile: total 3 launches migrated, 1 original\n")
    assert dropin_counts(err) == {"scale": (3, 0), "total": (3, 1)}
    assert without_dropin_lines(err) == "warning"


def test_the_tolerance_class_is_the_loosest_of_the_kernels():
    f32 = {"params": [{"type": "float*"}]}
    half = {"params": [{"type": "const float16*"}]}
    ints = {"params": [{"type": "int32*"}]}
    assert tolerance_class([ints]) == "exact"
    assert tolerance_class([ints, f32]) == "fp32_accum"
    assert tolerance_class([f32, half]) == "fp16"
    assert tolerance_class([{"tolerance": "tf32", "params": []}, f32]) == "tf32"


def test_a_control_run_marks_the_lines_that_vary_in_the_original():
    """The original's second run printed line 2 otherwise: that line is not compared (its words
    still are); line 3, the same in both of the original's runs, is."""
    original = "n = 4\nboxes 246760 of 300000\nsum = 1.5\nPASS\n"
    control = "n = 4\nboxes 242224 of 300000\nsum = 1.5\nPASS\n"
    res = compare_outputs(original, "n = 4\nboxes 239001 of 300000\nsum = 1.5\nPASS\n", control=control)
    assert res.equal and res.lines_varying == 1 and res.lines_compared == 3
    assert res.varying == [{"line": 2, "expected": "boxes 246760 of 300000", "control": "boxes 242224 of 300000",
                            "actual": "boxes 239001 of 300000"}]
    res = compare_outputs(original, "n = 4\nboxes 239001 of 300000\nsum = 1.75\nPASS\n", control=control)
    assert not res.equal and [m["line"] for m in res.mismatches] == [3]
    res = compare_outputs(original, "n = 4\nkeys 239001 of 300000\nsum = 1.5\nPASS\n", control=control)
    assert not res.equal and res.mismatches[0]["why"] == "text" and res.lines_varying == 0
    assert not compare_outputs(original, "n = 4\nboxes 239001 of 300000\nsum = 1.5\nPASS\n").equal


def test_a_varying_number_far_outside_the_originals_own_spread_is_a_mismatch():
    """pns on the H100 (2026-12-07): the original printed 2.723135 and 2.722208 in its two runs, the
    rebuilt program 1.990033: a difference, not the original's own variation. A clock time of day
    is a time line (lebesgue prints when it starts and ends)."""
    original = "petri N=22\nmean_vars: 2.723135    var_vars: 0.186738\n"
    control = "petri N=22\nmean_vars: 2.722208    var_vars: 0.187952\n"
    res = compare_outputs(original, "petri N=22\nmean_vars: 1.990033    var_vars: 0.038796\n", control=control)
    assert not res.equal and res.lines_varying == 0
    assert res.mismatches[0]["why"] == "number 1.990033 outside the original's own range (2.723135 and 2.722208 " \
                                       "in its two runs)"
    res = compare_outputs(original, "petri N=22\nmean_vars: 2.722900    var_vars: 0.187100\n", control=control)
    assert res.equal and res.lines_varying == 1
    # the number the two runs agree on (22) is compared as ever
    assert not compare_outputs(original, "petri N=23\nmean_vars: 2.722900    var_vars: 0.187100\n",
                               control=control).equal
    assert is_time_like("07 December 2026 03:49:15 AM") and not is_time_like("ratio 3:4")
