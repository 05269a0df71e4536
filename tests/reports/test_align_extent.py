"""report.html's ``cuda_extent`` (which jumps between the characters it looks at) gives the lines
a character-by-character scan gives: braces in comments, strings and character literals do
not count, a block comment may span lines, a declaration ends at its ``;``."""
from __future__ import annotations

from migrate.reports.align import cuda_extent

TEXT = r'''// a file header
#include <cstdio>

// the kernel's note
template <typename T>
__global__ void k(T* out, /* { not a brace */ int n) {
    const char* s = "}{ \" }";  // } in a comment
    char c = '}'; char d = '\'';
    /* a block comment { spanning
       two lines } */ if (n > 0) {
        out[0] = (T)(s[0] + c + d);
    }
#define BRACE }
#define MORE \
    }
}
__device__ float f(float x);
__device__ float g(float x) { return x / 2.f; } int after;
struct S { int a; };
'''


def _reference(lines, start):
    """cuda_extent's brace scan, one character at a time (its definition before the jumps)."""
    from migrate.reports import align
    n = len(lines)
    first = align.cuda_extent(lines, start)[0]  # the lines above: not what changed
    depth = paren = 0
    seen = in_block = continued = False
    for li in range(start - 1, min(n, start - 1 + 20000)):
        line = lines[li]
        if continued or (not in_block and line.lstrip().startswith("#")):
            continued = line.rstrip().endswith("\\")
            continue
        j, length = 0, len(line)
        while j < length:
            c = line[j]
            if in_block:
                if line.startswith("*/", j):
                    in_block, j = False, j + 2
                else:
                    j += 1
                continue
            if line.startswith("//", j):
                break
            if line.startswith("/*", j):
                in_block, j = True, j + 2
                continue
            if c in "\"'":
                j += 1
                while j < length and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                j += 1
                continue
            if c == "{":
                depth, seen = depth + 1, True
            elif c == "}":
                depth -= 1
                if seen and depth <= 0:
                    return first, li + 1
            elif c == "(":
                paren += 1
            elif c == ")":
                paren -= 1
            elif c == ";" and not seen and paren <= 0:
                return first, li + 1
            j += 1
    return first, min(n, start + 200)


def test_cuda_extent_matches_the_character_scan():
    lines = TEXT.split("\n")
    kernel = next(i for i, line in enumerate(lines, 1) if "__global__" in line)
    assert cuda_extent(lines, kernel) == (kernel - 2, kernel + 10)  # note and template above, to its brace
    decl = next(i for i, line in enumerate(lines, 1) if "float f(" in line)
    assert cuda_extent(lines, decl) == (decl, decl)  # a declaration: its ;
    for start in range(1, len(lines) + 1):
        assert cuda_extent(lines, start) == _reference(lines, start), start
