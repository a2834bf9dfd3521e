"""The JSON encoder of every JSON column that stores computed numbers (reports, scoring runs, job results,
release composition reports).

``json.dumps`` writes ``NaN`` / ``Infinity`` by default; PostgreSQL's ``jsonb`` refuses them, so a report with
one undefined statistic used to fail its whole job with a database error. Here such a value is refused before
the database with a ValueError saying what is wrong, so a slip shows up loudly in the tests; the builders
themselves store an undefined value as ``null`` with the reason beside it.
"""

from __future__ import annotations

import json


class FiniteJSONEncoder(json.JSONEncoder):
    """``json.JSONEncoder`` with ``allow_nan=False``, whatever the caller passes (Django passes the default)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["allow_nan"] = False
        super().__init__(*args, **kwargs)
