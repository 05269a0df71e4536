"""The import rules of docs/architecture.md, read off the code: no import circle inside migrate/,
the IR imports no pass, facts ask nothing of prepare or lift, the emitter imports no pass, and
nothing below the pipeline imports it."""
from __future__ import annotations

import ast

import pytest

from tests.paths import REPO

PACKAGE = REPO / "migrate"


def _module_of(path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports() -> dict[str, set[str]]:
    """module -> the migrate modules it imports (at any depth, lazily or not)."""
    files = {_module_of(p): p for p in PACKAGE.rglob("*.py")}
    out: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")
                target = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else [])) \
                    if node.level else (node.module or "")
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    found.add(full if full in files else target)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        out[name] = {m for m in found if m in files and m != name}
    return out


IMPORTS = _imports()


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    index, low, stack, on, out, count = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = count[0]
        count[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_rules_see_the_package():
    assert "migrate.pipeline" in IMPORTS and "migrate.emit.kernel" in IMPORTS
    assert "migrate.analysis.lift.map" in IMPORTS["migrate.pipeline"]


def test_no_import_circle():
    assert _circles(IMPORTS) == []


def test_a_circle_is_seen():  # the check itself can fail
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def _violations(source_prefix: str, allowed) -> list[str]:
    return sorted(f"{src} -> {dst}" for src, dsts in IMPORTS.items() if src.startswith(source_prefix)
                  for dst in dsts if not allowed(dst))


@pytest.mark.parametrize("prefix, allowed", [
    ("migrate.ir", lambda d: d.startswith("migrate.ir") or d == "migrate.dtypes"),
    ("migrate.analysis.facts", lambda d: d.startswith(("migrate.ir", "migrate.analysis.facts")) or d == "migrate.dtypes"),
    ("migrate.analysis.prepare", lambda d: not d.startswith(("migrate.analysis.lift", "migrate.emit", "migrate.pipeline"))
     and d != "migrate.analysis.phases"),
    ("migrate.analysis", lambda d: not d.startswith(("migrate.emit", "migrate.pipeline", "migrate.convert"))),
    ("migrate.emit", lambda d: not (d.startswith(("migrate.analysis.prepare", "migrate.pipeline", "migrate.convert"))
                                    or d == "migrate.analysis.phases"
                                    or (d.startswith("migrate.analysis.lift") and d != "migrate.analysis.lift.base"))),
    # ONNX conversion shares diagnostics, spans and the runtime's comparison, nothing of the CUDA path
    ("migrate.onnx", lambda d: not d.startswith(("migrate.parse", "migrate.analysis", "migrate.emit",
                                                 "migrate.pipeline", "migrate.convert", "migrate.compat"))),
])
def test_import_rules(prefix, allowed):
    assert _violations(prefix, allowed) == []


def test_only_the_driver_and_the_command_line_run_the_pipeline():
    users = sorted(src for src, dsts in IMPORTS.items() if "migrate.pipeline" in dsts)
    assert users == ["migrate.convert"]


def test_the_runtime_needs_no_libclang():
    runtime = REPO / "runtime"
    for path in runtime.rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {("migrate." if n.level == 2 else "") + (n.module or "") for n in ast.walk(tree)
                  if isinstance(n, ast.ImportFrom) and n.level != 1}
        assert not any(n.startswith(("clang", "migrate.parse", "migrate.analysis", "migrate.emit", "tests"))
                       for n in names), path


# -- what a project that only runs migrated modules imports (issue 16) --------------------------
#: the third-party packages a migrated module, the math shim and the launcher may need at run time
RUNTIME_PACKAGES = {"tilelang", "tvm", "numpy", "torch"}
#: what belongs to the converter: never reached from what emitted modules import
CONVERTER = ("clang", "jinja2", "rich", "migrate.parse", "migrate.analysis", "migrate.emit", "migrate.convert",
             "migrate.pipeline", "migrate.cli")


def _source_of(module: str):
    """The file of a cuda2tile module (``migrate.runtime`` is the top-level runtime/ folder), or None."""
    parts = module.split(".")
    if parts[0] != "migrate":
        return None
    base = REPO / "runtime" if parts[1:2] == ["runtime"] else REPO / "migrate"
    rest = parts[2:] if parts[1:2] == ["runtime"] else parts[1:]
    for path in (base.joinpath(*rest).with_suffix(".py") if rest else None, base.joinpath(*rest, "__init__.py")):
        if path is not None and path.is_file():
            return path
    return None


def _imported(package: str, source: str) -> set[str]:
    """Every module ``source`` (a module of ``package``) imports, at any depth (lazily too), by its
    full name; importing a module imports its packages, so they are listed too."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            target = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else (node.module or "")
            names.add(target)
            names |= {f"{target}.{a.name}" for a in node.names if _source_of(f"{target}.{a.name}")}
    parents = {".".join(n.split(".")[:i]) for n in names for i in range(1, n.count(".") + 1)}
    return names | parents


def _closure(roots) -> set[str]:
    """The modules importing ``roots`` may load: cuda2tile's followed through their imports,
    others (the standard library, third-party packages) listed as named."""
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _source_of(name)
        if path is not None:
            todo += _imported(name if path.name == "__init__.py" else name.rsplit(".", 1)[0], path.read_text())
    return seen


def _emitted_imports() -> set[str]:
    """The modules an emitted module imports (the emitter's module template) and the hand-written
    example imports."""
    template = (PACKAGE / "emit" / "templates" / "module.py.j2").read_text()
    lines = [line.split("{%")[0] for line in template.splitlines() if line.startswith(("import ", "from "))]
    example = (REPO / "examples" / "handwritten_math.py").read_text()
    return _imported("", "\n".join(lines)) | _imported("", example)


def test_emitted_modules_and_the_shim_need_nothing_of_the_converter():
    roots = _emitted_imports()
    assert {"migrate.compat.cuda_math", "migrate.runtime.tilelang_support", "tilelang.language"} <= roots
    closure = _closure(roots)
    assert {"migrate.runtime.c_schedule", "migrate.runtime.c_literals", "migrate.dtypes"} <= closure  # lazy ones too
    assert sorted(n for n in closure if n.startswith(CONVERTER)) == []
    import sys
    outside = {n.split(".")[0] for n in closure if _source_of(n) is None and n.split(".")[0] != "migrate"}
    assert sorted(outside - set(sys.stdlib_module_names) - RUNTIME_PACKAGES) == []


def test_the_closure_sees_the_converter():  # the check itself can fail
    closure = _closure({"migrate.convert"})
    assert any(n.startswith("migrate.parse") for n in closure)
    assert "clang" in {n.split(".")[0] for n in closure}
