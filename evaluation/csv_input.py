"""Reading the CSV files of the pure commands (``vetting_reliability``, ``ppi_estimate``): the named columns of a
file read as the ``agreement`` command reads CSV (:func:`evaluation.agreement.read_csv`: columns found by name in any
order, others ignored, UTF-8 with an optional BOM, LF or CRLF, standard quoting), every refusal an
:class:`records.jsonl.InputFileError` naming the file, the line (the header is line 1) and the field."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from evaluation.agreement import StatsInputError, read_csv
from records.jsonl import InputFileError


def read_fields(path: str | Path, fields: tuple[str, ...]) -> pd.DataFrame:
    """Rows of a CSV with ``fields`` present and non-empty; other columns are left out."""
    display = str(path)
    try:
        rows = read_csv(path, fields)
    except StatsInputError as exc:
        raise _input_file_error(exc, display) from None
    if not isinstance(rows.index, pd.RangeIndex):
        # pandas takes the first column as the index when every row has one field more than the header
        raise InputFileError(display, f"{rows.shape[1] + 1} fields where the header has {rows.shape[1]}", line=2)
    if rows.empty:
        raise InputFileError(display, "a header and no rows", line=1)
    for field in fields:
        empty = (rows[field] == "").to_numpy()
        if empty.any():
            raise InputFileError(display, "is empty", line=data_line(int(empty.argmax())), field=field)
    return rows.loc[:, list(fields)]


def _input_file_error(exc: StatsInputError, display: str) -> InputFileError:
    """The CSV reader's refusal ("FILE: line N: why", or "FILE: why") with its line kept apart."""
    detail = str(exc).removeprefix(f"{display}: ")
    found = re.fullmatch(r"line (\d+)(?: \(header\))?: (.*)", detail, flags=re.DOTALL)
    if found:
        return InputFileError(display, found.group(2), line=int(found.group(1)))
    # an empty file has nothing past its first line
    return InputFileError(display, detail, line=1 if detail == "the file is empty" else None)


def data_line(pos: int) -> int:
    """The file line of the data row at ``pos`` (from 0): the header is line 1."""
    return pos + 2
