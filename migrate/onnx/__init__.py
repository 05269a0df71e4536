"""ONNX models to TileLang kernels (``migrate onnx``), one module per step:

1. :mod:`.graph` — import: onnx.load, onnx.checker, shape inference → a graph whose shapes hold
   numbers and the dimensions the model declares by name (:mod:`.dims`: symbolic extents);
2. :mod:`.claim`, :mod:`.attention`, :mod:`.group` — which nodes get a TileLang form, the
   attention patterns fused whole, and the fusion of the rest into groups;
3. :mod:`.kernels` (the table :data:`~.kernels.EMITTERS`, per op kind, over :mod:`.ops`'s
   operator table) — one TileLang kernel factory per group; :mod:`.fallback` — torch for the rest;
   :mod:`.specialise` — groups whose kernel needs a declared dimension's value, emitted per value;
4. :mod:`.module` — writes ``OUT/<model>.py`` (factories and a ``Model`` class) and its ``.npz``;
5. :mod:`.check` — runs it on TileLang's CPU target against onnxruntime, group by group;
6. :mod:`.report` — ``OUT/report.json``; :mod:`.page` — ``OUT/report.html`` (convert's page).

:mod:`.bench` is ``migrate bench --onnx OUT`` (the module's ``Model`` against its ``Eager`` baseline
on a GPU); :mod:`.tune` its ``--tune`` (tile sizes timed per kernel, kept in ``<model>.tiles.json``).

:mod:`.convert` runs them in order. Needs the ``onnx`` package (and ``onnxruntime`` for the check).
"""
