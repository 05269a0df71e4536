"""The passes between the kernel model and the printed TileLang, in three families (the order
they run in is ``migrate/pipeline.py``'s): ``prepare/`` normalises the model, ``facts/`` answers
questions about it, ``phases.py`` splits a kernel at its barriers into the loop IR, and ``lift/``
builds tile-form plans where it proves them."""
