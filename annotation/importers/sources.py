"""Source passages: JSON (an array of objects) or CSV, with ``paragraph_id``, ``isbn``, ``page``, ``text``."""

from __future__ import annotations

from pathlib import Path

from annotation.importers.base import ParsedPassage, page_number
from annotation.models import SourcePassage
from portal.importing import Limits, identifier, keyed_records, load_table, require_fits

REQUIRED = ("paragraph_id", "text")


def parse_file(path: Path, limits: Limits, display: str | None = None) -> list[ParsedPassage]:
    display = display or path.name
    records = load_table(path, limits, display, required=REQUIRED, key="passages")
    passages = []
    for number, record, pid in keyed_records(
        records, display, required=REQUIRED, model=SourcePassage, columns={"paragraph_id": "paragraph_id"}
    ):
        # An empty cell (CSV) or a missing / null value means "not given"; anything else must be valid.
        isbn, page = record.get("isbn"), record.get("page")
        if isbn not in (None, ""):
            isbn = require_fits(identifier(isbn, display, number, field="isbn"), SourcePassage, "isbn", display,
                                number, field="isbn")  # fmt: skip
        if page not in (None, ""):
            page = str(page_number(page, display, number, field="page"))
        passages.append(ParsedPassage(paragraph_id=pid, text=record["text"], isbn=isbn or "", page=page or ""))
    return passages
