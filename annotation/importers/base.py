"""What the item importers share beyond the kernel's reading (``portal.importing``): the parsed records and the
ClinIQLink page-number rule."""

from __future__ import annotations

from dataclasses import dataclass, field

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
