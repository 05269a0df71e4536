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


def signature_name(kernel: str) -> str:
    """The module constant holding a kernel's Signature: its name in capitals, unless that is the
    kernel's own name (slu's kernel ``RL``), which its launcher function takes."""
    upper = kernel.upper()
    return upper if upper != kernel else f"{kernel}_SIGNATURE"


_ENV.filters["signature_name"] = signature_name


def _keep_binds() -> str:
    from .signature import KEEP_BINDS
    return f'("{KEEP_BINDS[0]}", {KEEP_BINDS[1]!r})'


_ENV.globals["keep_binds"] = _keep_binds()


def render(template: str, **context) -> str:
    return _ENV.get_template(template).render(**context)
