"""The one rule for text cells in the CSV files the portal writes: no cell may start a spreadsheet formula.

Reviewer comments, dispute text, item text and system names are user-written. A cell starting with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return is run as a formula by Excel / LibreOffice / Sheets when an organizer
opens the file (CSV injection: ``=HYPERLINK(...)`` exfiltration, DDE). Such a *text* cell is written with a
leading ``'`` (OWASP's advice), which spreadsheets show as text and never evaluate. Number cells are never
touched: a relevance of ``-0.5`` stays a number (quoting it would break every analysis of the file). Code that
reads the files back in Python sees the ``'`` and can strip it (``value[1:]`` when ``value[:2]`` is ``'`` + one
of the characters above).
"""

from __future__ import annotations

import csv

import pandas as pd

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def guard_cell(value):
    """``value`` with a leading ``'`` when it is text a spreadsheet would run; anything else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value


def guard_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells are guarded; numeric, boolean and date columns are left as they are."""
    guarded = frame.copy()
    for column in guarded.columns:
        series = guarded[column]
        if pd.api.types.is_object_dtype(series.dtype):  # anything may be in it: cell by cell
            guarded[column] = series.map(guard_cell)
        elif pd.api.types.is_string_dtype(series.dtype):  # pandas' own text column: the same rule, vectorised
            starts = series.str.startswith(FORMULA_TRIGGERS, na=False)
            if starts.any():
                guarded[column] = series.mask(starts, "'" + series)
    return guarded


class DictWriter(csv.DictWriter):
    """``csv.DictWriter`` whose text cells are guarded (the header too: column names are text)."""

    def writerow(self, rowdict):
        return super().writerow({key: guard_cell(value) for key, value in rowdict.items()})

    def writerows(self, rowdicts):
        for rowdict in rowdicts:
            self.writerow(rowdict)
