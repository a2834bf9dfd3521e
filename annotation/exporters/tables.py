"""Tables (CSV, Parquet, JSONL) written with stable bytes: fixed column order, rows in the order given,
``\\n`` line endings, UTF-8, no index, no timestamps in Parquet metadata."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from portal.csv_cells import guard_frame


def table_frame(rows: list[dict], columns: list[str], *, typed: bool = False) -> pd.DataFrame:
    """The rows as the frame the CSV and Parquet writers take: lists and mappings as JSON text, a column mixing text
    and numbers as text. Build it once when writing both.

    ``typed`` (a release's Parquet since releases carry a card): a column of lists of text stays a list column and
    a column of whole numbers with gaps stays whole numbers (not floats), so that pandas and Hugging Face
    ``datasets`` read lists and integers. A column mixing text and lists stays JSON text, as in the CSV: one Parquet
    column has one type."""
    frame = pd.DataFrame(rows, columns=columns)
    for column in columns:
        kind = pd.api.types.infer_dtype(frame[column], skipna=True)
        if typed and kind == "floating" and _whole_numbers(row.get(column) for row in rows):
            frame[column] = pd.array([row.get(column) for row in rows], dtype="Int64")
            continue
        if kind in _ONE_SCALAR_KIND:
            continue  # no list or mapping, no text beside numbers: pandas' own scan (C) says so at once
        if typed and _text_lists(frame[column]):
            continue
        if frame[column].map(lambda v: isinstance(v, list | dict)).any():
            frame[column] = frame[column].map(_CELL_JSON.encode)
        elif _mixes_text_and_numbers(frame[column]):
            # Parquet columns have one type: a page stored as 12 in one record and "xii" in another (rows imported
            # before pages were normalised) is written as text. Columns of one type keep their bytes.
            frame[column] = frame[column].map(lambda v: v if _null(v) or isinstance(v, str) else str(v))
    return frame


# One encoder for every cell (json.dumps with options builds a new one per call).
_CELL_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
_ROW_JSON = json.JSONEncoder(ensure_ascii=False)

#: What ``pandas.api.types.infer_dtype`` calls a column of text only, numbers only or booleans only (nulls skipped).
_ONE_SCALAR_KIND = frozenset({"string", "integer", "floating", "mixed-integer-float", "decimal", "boolean", "empty"})


def _null(value) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value))


def _whole_numbers(values: Iterable[object]) -> bool:
    """Whether every value is a whole number (an ``int``, not a bool) or missing: pandas made such a column floats."""
    return all(value is None or (isinstance(value, int) and not isinstance(value, bool)) for value in values)


def _text_lists(values: pd.Series) -> bool:
    """Whether every value is a list of text or missing (a Parquet ``list<string>`` column)."""
    return all(_null(v) or (isinstance(v, list) and all(isinstance(element, str) for element in v)) for v in values)


def _mixes_text_and_numbers(values: pd.Series) -> bool:
    return {isinstance(v, str) for v in values if not _null(v)} == {True, False}


def write_csv(frame: pd.DataFrame, path: Path, *, guard_formulas: bool = True) -> Path:
    """``frame`` from :func:`table_frame`. ``guard_formulas=False`` only re-creates the bytes of releases frozen
    before text cells were guarded."""
    if guard_formulas:
        frame = guard_frame(frame)
    frame.to_csv(path, index=False, lineterminator="\n", encoding="utf-8")
    return path


def write_parquet(frame: pd.DataFrame, path: Path) -> Path:
    """``frame`` from :func:`table_frame`."""
    frame.to_parquet(path, index=False, engine="pyarrow", compression="zstd")
    return path


def write_jsonl(rows: list[dict], columns: list[str], path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for row in rows:
            out.write(_ROW_JSON.encode({c: row.get(c) for c in columns}) + "\n")
    return path


def write_table(fmt: str, rows: list[dict], columns: list[str], path: Path) -> Path:
    """Rows written as ``fmt`` (csv, with formula guard; parquet; jsonl)."""
    if fmt == "jsonl":
        return write_jsonl(rows, columns, path)
    frame = table_frame(rows, columns)
    return write_csv(frame, path) if fmt == "csv" else write_parquet(frame, path)
