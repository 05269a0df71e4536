"""Emitter: writes the TileLang module of each converted file from jinja2 templates."""
from __future__ import annotations

import jinja2

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("migrate.emit", "templates"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=False,
)
_ENV.filters["pyrepr"] = repr  # a Python literal: tuples stay tuples


def render(template: str, **context) -> str:
    return _ENV.get_template(template).render(**context)
