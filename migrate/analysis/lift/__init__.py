"""Lifts from the portable plan to the tile form, one per file; each proves its pattern or raises
a :class:`~.base.NotLiftable` saying why (note M3003). ``base.py`` holds the refusal family and the
table of reduction operations they share."""
