"""``report.html``: one self-contained page to review a migration, kernel by kernel.

The page has no external resources and a Content-Security-Policy that allows only its own inline
script (by hash) and styles, so nothing in it can load from the network and injected markup could
not run. All data travel as JSON inside ``<script type="application/json">`` elements with ``<``,
``>`` and ``&`` written as ``\\u003c``/``\\u003e``/``\\u0026``, so source text can never close
the element; the script writes every string into the page escaped.

Layout of the data: one index blob (files, kernels, forms, check results, diagnostics: parsed
on load, about 0.3 kB a kernel) and one blob per source file (its CUDA text, its TileLang module
and each kernel's alignment rows), parsed only when one of its kernels is opened; syntax
highlighting is done in the page, per file, on first open. So the page opens as fast for
a thousand kernels as for ten.
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from importlib import resources
from pathlib import Path

from ..codes import CODES
from .align import align_kernel, map_module

_MAX_TEXT = 4 * 1024 * 1024  # larger sources are not embedded (the convert driver skips them too)


def _json_for_script(obj) -> str:
    """JSON that is safe inside a ``<script>`` element whatever strings it holds."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _template(name: str) -> str:
    return resources.files("migrate.reports").joinpath("templates", name).read_text(encoding="utf-8")


def _read(path: Path | None) -> tuple[str | None, str | None]:
    if path is None:
        return None, "no output written"
    try:
        if path.stat().st_size > _MAX_TEXT:
            return None, f"{path.name} is larger than {_MAX_TEXT // (1024 * 1024)} MiB: not embedded"
        return path.read_bytes().decode("utf-8", errors="replace"), None
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc}"


def _diag(d: dict, source: str, root: str) -> dict:
    file = d.get("file") or source
    here = file == source
    shown = file
    if not here and root and file.startswith(root):
        shown = file[len(root):]
    return {"code": d["code"], "severity": d["severity"], "line": d.get("line"), "col": d.get("col"),
            "message": d["message"], "here": here, "where": None if here else shown}


def build_data(data: dict, out_dir: Path) -> tuple[dict, list[dict]]:
    """The page's index blob and its per-file blobs."""
    files_idx, blobs, kernels_idx = [], [], []
    label = data.get("source_label", "CUDA")   # `migrate onnx`: "ONNX", its sources are graph listings
    by_file: dict[str, list[int]] = {}
    for i, k in enumerate(data["kernels"]):
        by_file.setdefault(k["file"], []).append(i)
    used_codes: set[str] = set()
    for fi, f in enumerate(data["files"]):
        source = f["source"]
        root = source[: -len(f["file"])] if source.endswith(f["file"]) else ""
        original = out_dir / f["original"] if f.get("original") else None
        cuda, cuda_err = _read(original if original is not None and original.is_file() else Path(source))
        tl, tl_err = _read(out_dir / f["output"] if f.get("output") else None)
        cuda_lines = cuda.split("\n") if cuda is not None else []
        mod = map_module(tl or "")
        views = {}
        kidx = by_file.get(f["file"], [])
        for i in kidx:
            k = data["kernels"][i]
            views[str(i)] = align_kernel(cuda_lines, mod, k["kernel"], int(k.get("line") or 1), label)
            diags = [_diag(d, source, root) for d in k["diagnostics"]]
            used_codes.update(d["code"] for d in diags)
            counts = {s: sum(1 for d in diags if d["severity"] == s) for s in ("error", "warning", "note")}
            kernels_idx.append({
                "i": i, "f": fi, "kernel": k["kernel"], "line": k.get("line"), "form": k["form"],
                "reason": k.get("reason", ""), "check": k.get("check") or {}, "diags": diags,
                "n": [counts["error"], counts["warning"], counts["note"]],
                "launches": k.get("launches", []), "instances": k.get("template_instances", []),
                "params": k.get("params", []),
            })
        fdiags = [_diag(d, source, root) for d in f["diagnostics"]]
        used_codes.update(d["code"] for d in fdiags)
        files_idx.append({"file": f["file"], "output": f.get("output"), "kernels": kidx, "diags": fdiags,
                          "lines_in": f.get("lines_in"), "lines_out": f.get("lines_out"),
                          "seconds": f.get("seconds")})
        blobs.append({"cuda": cuda, "cudaError": cuda_err, "tl": tl, "tlError": tl_err, "views": views})
    kernels_idx.sort(key=lambda k: k["i"])
    codes = {c: {"title": CODES[c].title, "severity": CODES[c].severity.value, "fix": CODES[c].fix}
             for c in sorted(used_codes) if c in CODES}
    index = {"tool": data.get("tool", "cuda2tile"), "version": data.get("version", ""),
             "output": data.get("output", ""), "generated": time.strftime("%Y-%m-%d %H:%M:%S"),
             "summary": data["summary"], "codes": codes, "files": files_idx, "kernels": kernels_idx,
             **({"source": label, "forms": data["forms"]} if "forms" in data else {})}
    return index, blobs


def render_html(data: dict, out_dir: Path) -> str:
    index, blobs = build_data(data, out_dir)
    script = _template("report.js")
    style = _template("report.css")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    parts = [f'<script type="application/json" id="c2t-index">{_json_for_script(index)}</script>']
    for n, blob in enumerate(blobs):
        parts.append(f'<script type="application/json" id="c2t-file-{n}">{_json_for_script(blob)}</script>')
    title = f"cuda2tile report: {data['summary']['kernels']} kernels in {data['summary']['files']} files"
    values = {"DATA": "\n".join(parts), "SCRIPT": script, "STYLE": style, "CSP": csp, "TITLE": title}
    # one pass over the template: text inserted for one marker is never scanned for another
    return re.sub(r"@@([A-Z]+)@@", lambda m: values[m.group(1)], _template("report.html"))


def write_html(data: dict, out_dir: Path, path: Path | None = None) -> Path:
    path = path or out_dir / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(data, out_dir), encoding="utf-8")
    return path
