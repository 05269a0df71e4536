"""What a conversion run tells: kept for existing imports; the code lives in :mod:`migrate.reports`."""
from __future__ import annotations

from .reports.core import FORMS, report_dict, summary, write_json  # noqa: F401
from .reports.terminal import print_summary  # noqa: F401
