"""The IRs at the pipeline's boundaries: ``model.py`` (the kernel model the frontend builds) and
``loops.py`` (the loop IR the analysis hands the emitter), with the helpers every pass shares
(``exprs.py``, ``visit.py``, ``names.py``, ``span.py``)."""
