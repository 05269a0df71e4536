"""Step 6b, ``OUT/report.html`` of an ONNX conversion, drawn by ``convert``'s page
(:mod:`migrate.reports.html`): the model is its one "file", each fused group one "kernel".

The page shows a kernel's source beside its TileLang, aligned by the ``# L<n>`` provenance tags.
The source of an ONNX model is :func:`graph_listing`, written to ``OUT/<model>.graph.txt``: line
n is the model's n-th node (``outputs = OpType(inputs) {attributes};  // name``), the line its
span and the emitted code's tags name. Forms: ``tile`` (a TileLang kernel; one specialised per
value says so in its reason), ``view`` (a torch view, no kernel) and ``torch`` (a fallback, with
its reason). The check's per-group record becomes the kernel's check box.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..reports.html import write_html

FORMS = ["tile", "view", "torch"]


def _attr(v) -> str:
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return f"<{v.dtype}{list(v.shape)}>"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def graph_listing(model_path: str) -> str:
    """One line per node of the model (Constant nodes too: a node's line is its place in the graph),
    then its inputs and outputs."""
    import onnx

    model = onnx.load(model_path, load_external_data=False)
    lines = []
    for n in model.graph.node:
        attrs = ", ".join(f"{a.name}={_attr(onnx.helper.get_attribute_value(a))}" for a in n.attribute)
        lines.append(f"{', '.join(o or '_' for o in n.output)} = {n.op_type}({', '.join(i or '_' for i in n.input)})"
                     + (f" {{{attrs}}}" if attrs else "") + f";  // {n.name}")
    lines.append("")
    for kind, vis in (("input", model.graph.input), ("output", model.graph.output)):
        for vi in vis:
            dims = [d.dim_param or str(d.dim_value) for d in vi.type.tensor_type.shape.dim]
            lines.append(f"// graph {kind} {vi.name}: {onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type)}"
                         f"[{', '.join(dims)}]")
    return "\n".join(lines) + "\n"


def page_data(report: dict, out_dir: Path, listing: str | None) -> dict:
    """The ONNX report in the schema :func:`~migrate.reports.html.build_data` reads."""
    model = Path(report["model"]).name
    module = Path(report["module"]).name if report.get("module") else None
    diags = report["diagnostics"]
    check = report.get("check") or {}
    per_group: dict[str, list] = {}
    for r in check.get("groups", []):
        per_group.setdefault(r["group"], []).append(r)
    kernels = []
    for g in report["groups"]:
        kind = g["kind"]
        form = "view" if kind == "view" else "torch" if kind == "torch" else "tile"
        nodes = [n for n in report["nodes"] if n["name"] in g["nodes"]]
        reason = _reason(g, nodes)
        recs = per_group.get(g["kernel"], [])
        kcheck = {}
        if recs:
            bad = [r for r in recs if not r["passed"]]
            worst = bad[0] if bad else max(recs, key=lambda r: r["max_abs_err"])
            given = "the --inputs file" if check.get("seed") is None else f"seeded random inputs (seed {check['seed']})"
            sizes = "; at " + " and ".join(", ".join(f"{k}={v}" for k, v in s["dims"].items())
                                          for s in check["sizes"]) if check.get("sizes") else ""
            kcheck = {"status": "fail" if bad else "pass", "inputs": f"onnxruntime (CPU) on {given}{sizes}",
                      "tolerance": worst["tolerance"], "max_abs_err": worst["max_abs_err"],
                      "max_rel_err": worst["max_rel_err"], "tensors": ", ".join(dict.fromkeys(r["tensor"] for r in recs))}
            if worst["message"]:
                kcheck["message"] = worst["message"]
        kernels.append({
            "file": model, "kernel": g["kernel"], "line": (g.get("lines") or [1])[0], "form": form,
            "reason": reason, "check": kcheck, "diagnostics": [d for d in diags if _about(d, g)],
            "launches": [], "template_instances": [], "params": []})
    model_diags = [d for d in diags if not any(d in k["diagnostics"] for k in kernels)]
    forms = Counter(k["form"] for k in kernels)
    summary = {"files": 1, "kernels": len(kernels), "converted": forms["tile"], "forms": dict(forms),
               "diagnostics": report["summary"]["diagnostics"]}
    return {"tool": report["tool"], "version": report["version"], "output": report["output"],
            "source_label": "ONNX", "forms": FORMS, "summary": summary,
            "files": [{"file": model, "source": report["model"],
                       "original": Path(listing).name if listing else None, "output": module,
                       "diagnostics": model_diags, "lines_in": len(report["nodes"]), "lines_out": None,
                       "seconds": None}],
            "kernels": kernels}


def _about(d: dict, group: dict) -> bool:
    """Whether diagnostic ``d`` is about ``group`` (its messages name the node or the group)."""
    msg = d["message"]
    if f"group {group['kernel']} " in msg:
        return True
    return d.get("line") in group.get("lines", ()) and any(
        f"'{n}'" in msg or f"({n})" in msg for n in group["nodes"])


def _reason(group: dict, nodes: list[dict]) -> str:
    ops = " → ".join(f"{n['op_type']} '{n['name']}'" for n in nodes)
    if group["kind"] == "torch":
        return f"{ops}: runs in torch ({nodes[0]['fallback']})"
    if group["kind"] == "view":
        return f"{ops}: a view of its input (a torch reshape, no kernel)"
    if group.get("specialised"):
        return (f"{ops}: one TileLang kernel, emitted and compiled on the first call with each value of "
                f"{', '.join(group['specialised'])} (its text is not in the module)")
    return f"{ops}: one TileLang kernel ({group.get('shape', group['kind'])})"


def write_page(report: dict, out_dir: Path, stem: str) -> Path:
    """Write ``OUT/<stem>.graph.txt`` and ``OUT/report.html``."""
    listing = None
    if report.get("model") and Path(report["model"]).is_file():
        try:
            text = graph_listing(report["model"])
        except Exception:   # an unreadable model (M5001): the page shows no source
            text = None
        if text is not None:
            listing = out_dir / f"{stem}.graph.txt"
            listing.write_text(text)
    return write_html(page_data(report, out_dir, str(listing) if listing else None), out_dir)
