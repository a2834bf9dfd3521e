"""What the item importers share beyond the kernel's reading (``portal.importing``): the parsed records and the
ClinIQLink page-number rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from portal.importing import ImportProblem, shown
from records.json_values import MAX_INT_DIGITS


@dataclass
class ParsedItem:
    uid: str
    qa_type: str
    fields: dict
    raw: dict
    benchmark: str = "cliniqlink"
    file: str = ""
    record: int = 0


@dataclass
class ParsedPassage:
    paragraph_id: str
    text: str
    isbn: str = ""
    page: str = ""
    extra: dict = field(default_factory=dict)


def page_number(value, display: str, record: int, *, field: str) -> int:
    """A page as the ClinIQLink files write it: a whole number. A string of digits (CSV cells, hand-made files) is
    the same page and becomes that number, so every stored record has one representation: mixing ``12`` and
    ``"12"`` made the release's table exports fail."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if (
        isinstance(value, str)
        and value.strip().isascii()
        and value.strip().isdigit()
        and len(value.strip()) <= MAX_INT_DIGITS
    ):
        return int(value.strip())
    raise ImportProblem(display, f"must be a page number (a whole number such as 12), not {shown(value)}",
                        record=record, field=field)  # fmt: skip


def require_json_start(path: Path, display: str, *, benchmark: str, expected: str, starts: str) -> None:
    """Refuse a file whose first character cannot begin what the format holds (a CSV, a spreadsheet, a text
    given as ClinIQLink items), naming the format the file must be in: the JSON reader's own message ("malformed
    JSON at line 1, column 1") does not say that the file is of the wrong kind. A file that does not start as text
    is left to the reader, which names what is wrong with its bytes."""
    with path.open("rb") as file:
        head = file.read(4096).decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not head or head[0] in starts or head[0] == "\ufffd" or not head[0].isprintable():
        return
    kind = " (this one looks like CSV)" if path.suffix.lower() == ".csv" or display.lower().endswith(".csv") else ""
    raise ImportProblem(display, f"{benchmark} items must be a JSON file, {expected}{kind}")
