"""Reports, piece by piece: alignment through provenance tags, kernel extents, --suppress specs,
the script-safe JSON of report.html, the plain-text summary."""
import json
import re

import pytest

from migrate.reports import plain_summary
from migrate.reports.align import align_kernel, cuda_extent, map_module, tag_of
from migrate.reports.html import _json_for_script
from migrate.reports.suppress import SuppressError, matcher, parse_ranges

CUDA = """\
// helpers
#include <cstdio>

__device__ float twice(float v)
{
    return 2.0f * v;
}

// Scales x into y.
template <int B>
__global__ void scale(const float* x, float* y, int n)
{
    const char* s = "}{";  /* } */
    int i = blockIdx.x * B + threadIdx.x;  // }
    if (i < n) {
        y[i] = twice(x[i]);
    }
}

int main() { return 0; }
"""

MODULE = '''"""TileLang migration of k.cu."""
import tilelang.language as T


@T.macro
def twice(v):  # L4
    return 2.0 * v  # L6


# -- scale: portable ---------------------------------------------------------
# barriers are uniform


def make_scale(grid, block, B=None):  # L11
    """doc"""
    grid_x, = grid

    @T.prim_func
    def scale(x, y, n: T.int32):
        with T.Kernel(grid_x, threads=block) as bx:  # L11
            for tx in T.Parallel(block):  # L14
                i = bx * B + tx  # L14
                if i < n:  # L15
                    y[i] = twice(x[i])  # L16
    return scale


SCALE = Signature(name="scale")


KERNELS = {
    "scale": SCALE,
}
'''


def test_tag_of_reads_main_file_tags_only():
    assert tag_of("    x = 1  # L12") == 12
    assert tag_of("    x = 1  # other.cuh:L12") is None
    assert tag_of("    x = '# L12'") is None
    # the tag is the end of the line: only the last "  # " counts, and a number must follow its L
    assert tag_of("    x = '  # L3'  # L12") == 12
    assert tag_of("    x = '  # L3'  # f.cuh:L12") is None
    assert tag_of("    x = 1  # L12 ") is None
    assert tag_of("    x = 1  # L") is None
    assert tag_of("    x = 1  # Lx12") is None


def test_module_map_tags_each_line():
    mod = map_module(MODULE)
    assert mod.tags == [tag_of(line) for line in mod.lines]


def test_module_map_finds_kernel_and_macro_sections():
    mod = map_module(MODULE)
    (ka, kb), = mod.kernels.values()
    assert mod.lines[ka - 1].startswith("# -- scale: portable")
    assert mod.lines[kb - 1].startswith("def scale") is False and "SCALE = Signature" in mod.lines[kb - 1]
    ma, mb = mod.macros["twice"]
    assert mod.lines[ma - 1] == "@T.macro" and mod.lines[mb - 1].endswith("# L6")


def test_cuda_extent_skips_braces_in_strings_and_comments_and_takes_template_and_note():
    lines = CUDA.split("\n")
    assert cuda_extent(lines, 11) == (9, 18)   # "// Scales..." and "template <int B>" up to the "}"
    assert cuda_extent(lines, 4) == (4, 7)
    assert cuda_extent(["__global__ void k(int n);"], 1) == (1, 1)  # a declaration


def test_alignment_puts_each_tileLang_line_beside_its_cuda_line():
    lines = CUDA.split("\n")
    mod = map_module(MODULE)
    rows = align_kernel(lines, mod, "scale", 11)
    pairs = [r for r in rows if not isinstance(r, str)]
    headings = [r for r in rows if isinstance(r, str)]
    assert any("kernel scale" in h for h in headings) and any("device function twice" in h for h in headings)
    # every CUDA line of the kernel and of the device function appears once, in order
    shown = [c for c, _ in pairs if c]
    assert shown == sorted(shown) and len(shown) == len(set(shown))
    assert set(range(9, 19)) <= set(shown) and set(range(4, 8)) <= set(shown)
    # every tagged TileLang line sits under the CUDA line of its tag
    last_c = 0
    seen_t = []
    for c, t in pairs:
        last_c = c or last_c
        if t:
            seen_t.append(t)
            tag = tag_of(mod.lines[t - 1])
            if tag is not None:
                assert tag == last_c, (c, t, mod.lines[t - 1])
    # a tagged line stands beside its CUDA line, the macro's decorator above it
    ma, mb = mod.macros["twice"]
    assert [4, ma + 1] in pairs and pairs[pairs.index([4, ma + 1]) - 1] == [0, ma]
    # every line of the kernel's section and of its macro is shown once
    ka, kb = mod.kernels["scale"]
    ma, mb = mod.macros["twice"]
    expected = {t for t in range(ka, kb + 1) if mod.lines[t - 1].strip()} | set(range(ma, mb + 1))
    assert expected <= set(seen_t) and len(seen_t) == len(set(seen_t))
    # the factory's set-up lines (no tag) stay after the line tagged L11, in module order
    first = next(t for t in range(ka, kb + 1) if tag_of(mod.lines[t - 1]) == 11)
    after11 = [t for c, t in pairs if t and t >= first and tag_of(mod.lines[t - 1]) in (None, 11)]
    assert after11[:2] == [first, first + 1]
    assert after11 == sorted(after11)


def test_alignment_of_an_unsupported_kernel_shows_its_cuda_and_the_note():
    text = MODULE.replace("# -- scale: portable", "# -- other: unsupported")
    text += "\n# -- scale: unsupported -----\n# Not migrated: M1201: asm\n"
    rows = align_kernel(CUDA.split("\n"), map_module(text), "scale", 11)
    assert rows[0] == "TileLang only"
    assert [c for r in rows if not isinstance(r, str) for c in [r[0]] if c] == list(range(9, 19))


@pytest.mark.parametrize("spec, yes, no", [
    ("M1003", ["M1003"], ["M1004", "M3001"]),
    ("m1005-m1006,M3001", ["M1005", "M1006", "M3001"], ["M1004", "M1007"]),
    (" M1000-M1999 ", ["M1003", "M1201"], ["M3001", "M9001"]),
])
def test_suppress_specs(spec, yes, no):
    hidden = matcher(spec)
    assert all(hidden(c) for c in yes) and not any(hidden(c) for c in no)


@pytest.mark.parametrize("spec", ["M99999", "M1999", "foo", "M1006-M1005", ""])
def test_bad_suppress_specs_are_refused(spec):
    with pytest.raises(SuppressError):
        parse_ranges(spec)


def test_json_for_script_cannot_close_the_element():
    payload = {"s": "</script><script>alert(1)</script><!-- & \u2028"}
    text = _json_for_script(payload)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == payload


def test_plain_summary_is_plain_text():
    data = {"summary": {"files": 2, "kernels": 3, "converted": 2, "seconds": 1.25,
                        "forms": {"tile": 0, "portable": 2, "simt": 0, "hybrid": 0, "unsupported": 1},
                        "diagnostics": {"M1201": 1}, "suppressed": {"M1003": 2}},
            "kernels": [{"check": {"status": "skipped"}}] * 3}
    text = "\n".join(plain_summary(data))
    assert "2 files, 3 kernels, 2 converted in 1.2 s" in text or "in 1.3 s" in text
    assert "portable 2, unsupported 1" in text and "M1201" in text and "suppressed: M1003 2" in text
    assert not re.search(r"[\u2500-\u257f\x1b]", text)  # no box drawing, no escape codes
