"""ONNX models to TileLang kernels (``migrate onnx``), one module per step:

1. :mod:`.graph` — import: onnx.load, onnx.checker, shape inference → a graph with static shapes;
2. :mod:`.claim`, :mod:`.group` — which nodes get a TileLang form, and their fusion into groups;
3. :mod:`.kernels` (the table :data:`~.kernels.EMITTERS`, per op kind, over :mod:`.ops`'s
   operator table) — one TileLang kernel factory per group; :mod:`.fallback` — torch for the rest;
4. :mod:`.module` — writes ``OUT/<model>.py`` (factories and a ``Model`` class) and its ``.npz``;
5. :mod:`.check` — runs it on TileLang's CPU target against onnxruntime, group by group;
6. :mod:`.report` — ``OUT/report.json``.

:mod:`.convert` runs them in order. Needs the ``onnx`` package (and ``onnxruntime`` for the check).
"""
