"""``migrate convert`` report options: --examine writes no TileLang, --suppress hides codes from
every report, the summary is plain text off a terminal, and report.html renders hostile source
text as text (no script runs, nothing is injected, nothing loads from outside)."""
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.cli import main
from tests.paths import FIXTURES as ALL_FIXTURES

FIXTURES = ALL_FIXTURES / "reports"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

GOOD = """\
__global__ void scale(float* y, const float* x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"""
PTX = """\
__global__ void ptx(int* out)
{
    int v;
    asm("mov.u32 %0, 7;" : "=r"(v));
    out[threadIdx.x] = v;
}
"""
HEADER_MISSING = """\
#include "not_there.h"
__global__ void copy(float* y, const float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"""


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "src"
    (src / "ops").mkdir(parents=True)
    (src / "ops" / "scale.cu").write_text(GOOD)
    (src / "ops" / "ptx.cu").write_text(PTX)
    (src / "copy.cu").write_text(HEADER_MISSING)
    (src / "empty.cuh").write_text("// nothing here\n")
    return src


def test_examine_writes_no_tilelang_and_tells_what_blocks(tree, tmp_path, capsys):
    out = tmp_path / "out"
    status = main(["convert", str(tree), "-o", str(out), "--examine", "--jobs", "1"])
    assert status == 1  # the asm kernel would not convert
    assert sorted(p.name for p in out.iterdir()) == [".cuda2tile-manifest.json", "examine.json"]  # + what it wrote
    ex = json.loads((out / "examine.json").read_text())
    s = ex["summary"]
    assert (s["files"], s["kernels"], s["convertible"], s["blocked"]) == (4, 3, 2, 1)
    assert s["kernel_lines_manual"] == 6 and s["kernel_lines_auto"] == 10
    assert [b["code"] for b in ex["blockers"]] == ["M1201"] and ex["blockers"][0]["fix"]
    files = {f["file"]: f for f in ex["files"]}
    assert files["ops/ptx.cu"]["blocked"][0]["kernel"] == "ptx"
    assert files["ops/ptx.cu"]["blocking_codes"] == {"M1201": 1}
    assert files["ops/scale.cu"]["convertible"] == 1 and not files["ops/scale.cu"]["blocked"]
    text = capsys.readouterr().out
    assert "cuda2tile examine: 4 files, 3 kernels: 2 would convert, 1 blocked" in text
    assert "M1201" in text and "inline PTX assembly" in text and "examine.json" in text


def test_suppress_hides_codes_from_every_report(tree, tmp_path, capsys):
    full, quiet = tmp_path / "full", tmp_path / "quiet"
    s_full = main(["convert", str(tree), "-o", str(full), "--jobs", "1"])
    capsys.readouterr()
    s_quiet = main(["convert", str(tree), "-o", str(quiet), "--jobs", "1", "--suppress", "M1003,M1005-M1006",
                    "--suppress", "M1201,M3008"])
    captured = capsys.readouterr()
    assert s_full == s_quiet == 1  # suppression never changes the outcome
    a = json.loads((full / "report.json").read_text())
    b = json.loads((quiet / "report.json").read_text())
    assert {"M1003", "M1005", "M1201"} <= set(a["summary"]["diagnostics"])
    assert b["summary"]["diagnostics"] == {}
    assert b["summary"]["suppressed"] == {c: n for c, n in a["summary"]["diagnostics"].items()}
    assert [k["form"] for k in a["kernels"]] == [k["form"] for k in b["kernels"]]
    sarif = json.loads((quiet / "report.sarif").read_text())
    assert sarif["runs"][0]["results"] == []
    with open(quiet / "stats.csv", newline="") as fh:
        assert all(r["diagnostics"] == "0" for r in csv.DictReader(fh))
    assert "M1201" not in captured.err and "M1005" not in captured.err
    assert "suppressed: M1003 1, M1005 1, M1201 1, M3008 1" in captured.out


@pytest.mark.parametrize("spec", ["M12345", "M1999", "M1006-M1005", "warnings"])
def test_bad_suppress_is_a_usage_error(tree, tmp_path, spec, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["convert", str(tree), "-o", str(tmp_path / "out"), "--suppress", spec])
    assert exc.value.code == 2
    assert "--suppress" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_summary_is_plain_text_when_stdout_is_not_a_terminal(tree, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "migrate", "convert", str(tree), "-o", str(tmp_path / "out"),
                           "-q", "--jobs", "1"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "100"})
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "cuda2tile convert: 4 files, 3 kernels, 2 converted" in out
    assert "M1201" in out and "report.html" in out and "report.sarif" in out and "stats.csv" in out
    assert not any(ch in out for ch in "\x1b\u2500\u2501\u2503\u250f\u2502")  # no colours, no boxes


# ---- hostile source in the browser ------------------------------------------------------------

@pytest.fixture(scope="module")
def browser():
    path = os.environ.get("CUDA2TILE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not Path(path).exists():
        why = "chromium is not installed (apt-get install chromium; pip install playwright)"
        if os.environ.get("CI"):
            pytest.fail(f"{why}: CI must have it, .ci/run installs it")
        pytest.skip(why)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


HOSTILE_NAME = "<img src=x onerror=window.__pwned='name'>.cu"


def test_hostile_source_renders_as_text_and_runs_no_script(browser, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(FIXTURES / "hostile.cu", src / HOSTILE_NAME)
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", "--jobs", "1"])
    report = json.loads((out / "report.json").read_text())
    assert {k["kernel"] for k in report["kernels"]} == {"scale_hostile", "broken_hostile"}
    assert any("</script>" in d["message"] for k in report["kernels"] for d in k["diagnostics"])

    url = (out / "report.html").as_uri()
    context = browser.new_context()
    # records any script the page did not mean to run and any markup the CSP had to block
    context.add_init_script("""
        window.__violations = [];
        document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
    """)
    page = context.new_page()
    dialogs, requests, errors = [], [], []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("body[data-ready]")
    seen_text = page.inner_text("body")
    for i, _ in enumerate(report["kernels"]):
        page.evaluate(f"location.hash = '#k/{i}'")
        page.wait_for_selector(f'#kernel-view[data-kernel="{i}"] #sbs')
        page.click('.toolbar button[data-mode="order"]')
        page.click('.toolbar button[data-mode="aligned"]')
        seen_text += page.inner_text("#kernel-view")
    page.evaluate("location.hash = '#f/0'")
    page.wait_for_selector("#file-view:not(.hidden)")
    seen_text += page.inner_text("#file-view")

    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("window.__violations") == []  # nothing was even injected
    assert page.evaluate("document.querySelectorAll('img, svg, iframe, object, embed').length") == 0
    assert dialogs == [] and errors == []
    assert all(u.split("#")[0] == url for u in requests), requests
    # the text is shown as text
    assert HOSTILE_NAME in seen_text
    assert "// \"</script><script>window.__pwned='tail'</script>\"" in seen_text
    assert "<svg onload=\"window.__pwned='svg'\">" in seen_text
    assert "</script><script>window.__pwned='diag'</script>" in seen_text  # the diagnostic message
    context.close()


def test_diagnostic_is_shown_under_its_cuda_line(browser, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(FIXTURES / "hostile.cu", src / "hostile.cu")
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", "--jobs", "1"])
    report = json.loads((out / "report.json").read_text())
    i, k = next((i, k) for i, k in enumerate(report["kernels"]) if k["kernel"] == "broken_hostile")
    # (M3008/M3009: whether it is kept as CUDA, and why)
    (d,) = [d for d in k["diagnostics"] if d["code"] not in ("M3008", "M3009")]
    page = browser.new_page()
    page.goto((out / "report.html").as_uri() + f"#k/{i}")
    page.wait_for_selector("#sbs")
    rows = page.eval_on_selector_all("#sbs tr", "rows => rows.map(r => [r.className, r.dataset.c || '', r.innerText])")
    at = next(n for n, r in enumerate(rows) if r[1] == str(d["line"]))
    assert "diag" in rows[at + 1][0] and d["code"] in rows[at + 1][2] and d["message"] in rows[at + 1][2]
    assert "static_assert" in rows[at][2]
    page.close()
