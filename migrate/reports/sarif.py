"""``report.sarif``: the diagnostics as SARIF 2.1.0, for CI systems and code-scanning UIs.

Every code of :mod:`migrate.codes` is a rule (title, meaning, fix, default level); every
diagnostic a result at its source line. Locations are relative to the folder ``migrate`` ran in
(``%SRCROOT%``) when the file lies under it, which is what code-scanning uploads expect when the
tool runs from the repository root; other files get an absolute ``file://`` URI.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .. import __version__
from ..codes import CODES
from .core import all_diagnostics

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFO_URI = "https://github.com/tile-ai/tilelang"
_LEVEL = {"error": "error", "warning": "warning", "note": "note"}


def _artifact(path: str, root: Path) -> dict:
    p = Path(path)
    if not p.is_absolute():
        return {"uri": p.as_posix(), "uriBaseId": "SRCROOT"}
    try:
        rel = p.resolve().relative_to(root)
    except ValueError:
        return {"uri": p.resolve().as_uri()}
    return {"uri": rel.as_posix(), "uriBaseId": "SRCROOT"}


def sarif_dict(data: dict, root: Path | None = None) -> dict:
    root = (root or Path(os.getcwd())).resolve()
    codes = sorted(CODES)
    index = {c: i for i, c in enumerate(codes)}
    rules = []
    for c in codes:
        entry = CODES[c]
        rules.append({
            "id": c,
            "name": "".join(w.capitalize() for w in entry.title.replace("-", " ").split() if w.isalnum()) or c,
            "shortDescription": {"text": entry.title},
            "fullDescription": {"text": entry.explanation},
            "help": {"text": f"{entry.explanation}\n\nFix: {entry.fix}",
                     "markdown": f"{entry.explanation}\n\n**Fix:** {entry.fix}"},
            "defaultConfiguration": {"level": _LEVEL[entry.severity.value]},
            "properties": {"tags": ["cuda2tile", c[:2] + "xxx"]},
        })
    results = []
    artifacts: dict[str, dict] = {}  # a file's location, resolved once for all its diagnostics
    for f, k, d in all_diagnostics(data):
        region = {"startLine": max(1, int(d.get("line") or 1))}
        if d.get("col"):
            region["startColumn"] = max(1, int(d["col"]))
        path = d.get("file") or f["source"]
        if path not in artifacts:
            artifacts[path] = _artifact(path, root)
        location = {"physicalLocation": {"artifactLocation": dict(artifacts[path]), "region": region}}
        if k is not None:
            location["logicalLocations"] = [{"name": k["kernel"], "kind": "function"}]
        result = {
            "ruleId": d["code"],
            "level": _LEVEL.get(d["severity"], "warning"),
            "message": {"text": d["message"]},
            "locations": [location],
            "properties": {"file": f["file"]},
        }
        if d["code"] in index:
            result["ruleIndex"] = index[d["code"]]
        if k is not None:
            result["properties"].update({"kernel": k["kernel"], "form": k["form"]})
        results.append(result)
    run = {
        "tool": {"driver": {"name": "cuda2tile", "version": __version__,
                            "semanticVersion": __version__, "informationUri": INFO_URI,
                            "rules": rules}},
        "originalUriBaseIds": {"SRCROOT": {"uri": root.as_uri() + "/"}},
        "invocations": [{"executionSuccessful": True}],
        "results": results,
    }
    suppressed = data["summary"].get("suppressed")
    if suppressed:
        run["properties"] = {"suppressed": suppressed}
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def write_sarif(data: dict, path: Path, root: Path | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sarif_dict(data, root), indent=2) + "\n")
