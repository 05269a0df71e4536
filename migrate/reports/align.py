"""Side-by-side alignment of a CUDA kernel and its TileLang, through the provenance comments.

Every statement the emitter prints ends with ``# L<n>`` (line n of the CUDA file; ``# f.cuh:L<n>``
for a line of another file). A kernel's view shows the CUDA lines of the kernel (and of the
device functions its TileLang calls as ``@T.macro``) in order, each with the TileLang lines tagged
with it beside it; a TileLang line without a tag stays with the tagged line before it, so a
statement's continuation lines and the factory's set-up code keep their place. A CUDA line with
several TileLang lines gets extra rows with an empty CUDA partner, and one with none an empty
TileLang partner.

Rows are ``[cuda_line, tilelang_line]`` (0 = no partner) or a string: a section heading.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

KERNEL_HEADER = re.compile(r"^# -- (?P<name>\w+): (?P<form>\w+) -*$")
MACRO_DEF = re.compile(r"^def (?P<name>\w+)\(")
SECTION_END = re.compile(r"^(KERNELS = \{|@T\.macro$|# -- \w+: \w+ -*$)")

_CONTEXT_ABOVE = 8  # at most this many comment lines right above a kernel are shown with it


@dataclass
class ModuleMap:
    """Where each kernel's section and each ``@T.macro`` lies in a module (1-based, inclusive),
    and each line's provenance tag (``tags[i]``: :func:`tag_of` line ``i + 1``), read once for
    all the kernels of the module."""
    lines: list[str]
    kernels: dict[str, tuple[int, int]] = field(default_factory=dict)
    macros: dict[str, tuple[int, int]] = field(default_factory=dict)
    tags: list[int | None] = field(default_factory=list)


def tag_of(line: str) -> int | None:
    """The CUDA line of a TileLang line's provenance tag (main file only), or None."""
    # the tag ends the line and holds no blank, so it follows the line's last "  # L" (a tag of
    # another file's line, "  # f.cuh:L<n>", leaves no number there); a plain string search, as
    # most lines are read once for each of the module's kernels
    if not line[-1:].isdecimal():
        return None
    _, tag, number = line.rpartition("  # L")
    return int(number) if tag and number.isdecimal() else None


def map_module(text: str) -> ModuleMap:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    mod = ModuleMap(lines, tags=[tag_of(line) for line in lines])
    starts: list[tuple[str, str, int]] = []
    for i, line in enumerate(lines, 1):
        m = KERNEL_HEADER.match(line)
        if m:
            starts.append(("kernel", m.group("name"), i))
        elif line == "@T.macro" and i < len(lines):
            d = MACRO_DEF.match(lines[i])
            if d:
                starts.append(("macro", d.group("name"), i))
    for kind, name, start in starts:
        end = start
        for j in range(start + 1, len(lines) + 1):
            if SECTION_END.match(lines[j - 1]):
                break
            end = j
        while end > start and not lines[end - 1].strip():
            end -= 1
        (mod.kernels if kind == "kernel" else mod.macros).setdefault(name, (start, end))
    return mod


#: the characters cuda_extent looks at: comments, literals, braces, parentheses, semicolons
_STRUCTURE = re.compile(r"[/\"'{}();]")


def cuda_extent(lines: list[str], start: int) -> tuple[int, int]:
    """The lines of the function defined at ``start`` (1-based): from its ``template`` line and
    a short comment right above it to its closing brace (or the ``;`` of a declaration)."""
    n = len(lines)
    if not 1 <= start <= n:
        return start, start
    first = start
    while first > 1 and lines[first - 2].lstrip().startswith(("template", "__launch_bounds__")):
        first -= 1
    above = first
    while above > 1 and first - above < _CONTEXT_ABOVE and lines[above - 2].lstrip().startswith("//"):
        above -= 1
    if above > 1 and lines[above - 2].lstrip().startswith("//"):
        above = first  # a longer comment block: a file header, not the kernel's own note
    first = above

    depth = paren = 0
    seen = in_block = continued = False
    for li in range(start - 1, min(n, start - 1 + 20000)):
        line = lines[li]
        if continued or (not in_block and line.lstrip().startswith("#")):
            continued = line.rstrip().endswith("\\")
            continue
        j, length = 0, len(line)
        while j < length:
            if in_block:
                k = line.find("*/", j)
                if k < 0:
                    break
                in_block = False
                j = k + 2
                continue
            found = _STRUCTURE.search(line, j)  # every other character is passed over
            if found is None:
                break
            j = found.start()
            c = line[j]
            if line.startswith("//", j):
                break
            if line.startswith("/*", j):
                in_block = True
                j += 2
                continue
            if c in "\"'":
                j += 1
                while j < length and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                j += 1
                continue
            if c == "{":
                depth += 1
                seen = True
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


def _macros_used(mod: ModuleMap, section: tuple[int, int]) -> list[str]:
    """The ``@T.macro`` names called from ``section``, transitively, in module order."""
    used: set[str] = set()
    todo = [section] if mod.macros else []
    while todo:
        a, b = todo.pop()
        text = "\n".join(mod.lines[a - 1:b])
        for name, rng in mod.macros.items():
            # the plain substring first: most names are not in most sections
            if name not in used and name + "(" in text and re.search(rf"(?<![\w.]){re.escape(name)}\(", text):
                used.add(name)
                todo.append(rng)
    return [name for name in mod.macros if name in used]


def _split(mod: ModuleMap, rng: tuple[int, int]):
    """(lines before the first tag, {cuda line: tilelang lines}, lines after the last tag)."""
    a, b = rng
    tags = mod.tags
    tagged = [t for t in range(a, b + 1) if tags[t - 1] is not None]
    if not tagged:
        return list(range(a, b + 1)), {}, []
    groups: dict[int, list[int]] = {}
    current = None
    for t in range(tagged[0], tagged[-1] + 1):
        line = tags[t - 1]
        if line is not None:
            current = line
        groups.setdefault(current, []).append(t)
    return list(range(a, tagged[0])), groups, list(range(tagged[-1] + 1, b + 1))


def _strip_blank(mod: ModuleMap, ts: list[int]) -> list[int]:
    while ts and not mod.lines[ts[0] - 1].strip():
        ts = ts[1:]
    while ts and not mod.lines[ts[-1] - 1].strip():
        ts = ts[:-1]
    return ts


def align_kernel(cuda_lines: list[str], mod: ModuleMap, name: str, line: int, source: str = "CUDA") -> list:
    """The rows of kernel ``name`` (defined at CUDA ``line``) beside its TileLang section
    (``source`` names the left side in headings: ``ONNX`` for a model's graph listing)."""
    top: list[int] = []
    bottom: list[int] = []
    groups: dict[int, list[int]] = {}
    ranges: list[tuple[int, int, str]] = []

    def add_groups(new: dict[int, list[int]]) -> None:
        for k, ts in new.items():
            groups.setdefault(k, []).extend(ts)

    section = mod.kernels.get(name)
    if section is None and not mod.kernels and mod.lines:
        section = (1, len(mod.lines))  # no kernel sections (a placeholder): the whole module
    ranges.append((*cuda_extent(cuda_lines, line), f"kernel {name}"))
    if section is not None:
        for macro in _macros_used(mod, section):
            pro, g, epi = _split(mod, mod.macros[macro])
            if g:
                first_tag = min(g, key=lambda k: g[k][0])
                g[first_tag] = pro + g[first_tag]
                last_tag = max(g, key=lambda k: g[k][-1])
                g[last_tag] = g[last_tag] + _strip_blank(mod, epi)
                add_groups(g)
                ranges.append((*cuda_extent(cuda_lines, first_tag), f"device function {macro}"))
            else:
                top.extend(_strip_blank(mod, pro))
        pro, g, epi = _split(mod, section)
        top.extend(_strip_blank(mod, pro))
        add_groups(g)
        bottom = _strip_blank(mod, epi)
    extents = list(ranges)  # each tagged line outside them is a range of its own
    for k in groups:
        if not any(a <= k <= b for a, b, _ in extents):
            ranges.append((k, k, ""))

    ranges.sort()
    merged: list[list] = []
    for a, b, label in ranges:
        if merged and a <= merged[-1][1] + 3:
            last = merged[-1]
            last[1] = max(last[1], b)
            if label and label not in last[2]:
                last[2].append(label)
        else:
            merged.append([a, b, [label] if label else []])

    rows: list = []
    if top:
        rows.append("TileLang only")
        rows.extend([0, t] for t in top)
    for a, b, labels in merged:
        where = f"{source} lines {a}\u2013{b}" if a != b else f"{source} line {a}"
        rows.append(" \u00b7 ".join(labels + [where]))
        for n in range(a, b + 1):
            ts = groups.get(n, [])
            # untagged lines that precede the group's first tagged line (a macro's decorator)
            # go above it, so that the tagged line stands beside its CUDA line
            lead = next((j for j, t in enumerate(ts) if mod.tags[t - 1] == n), 0)
            rows.extend([0, t] for t in ts[:lead])
            rows.append([n, ts[lead] if ts else 0])
            rows.extend([0, t] for t in ts[lead + 1:])
    if bottom:
        rows.append("TileLang only: signature and launcher")
        rows.extend([0, t] for t in bottom)
    return rows
