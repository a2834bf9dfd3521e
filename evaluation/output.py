"""How every report of this package is written for a terminal or a program: one JSON document per report."""

from __future__ import annotations

import json


def to_json(report: dict) -> str:
    """The report as one line of JSON ending in a newline. Text stays as written (names in any script), and NaN or
    infinity are refused: an undefined figure can only appear as ``null``."""
    return json.dumps(report, ensure_ascii=False, allow_nan=False) + "\n"
