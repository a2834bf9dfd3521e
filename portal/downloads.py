"""The names of downloaded files, for every app: what the file holds, in words a person finds in a folder of
downloads, and the header that carries the name (RFC 6266).

A name is the slug of what it is about (a study's name), what it holds, the variant that sets it apart from its
siblings (``identified`` beside the pseudonymised file, so the second download never becomes "(1)") and the
extension: ``demo-study-rankings.csv``, ``demo-study-rankings-spans-identified.parquet``. No raw ids, no format
said twice.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import quote

from django.utils.text import slugify


def download_name(subject: str, what: str, extension: str, *, variants: Iterable[str] = ()) -> str:
    """``subject-what[-variant…].extension``: the subject (a study's name, kept in its own letters: "Étude 1" is
    "étude-1") and the other parts slugified, empty parts left out; "download" if nothing is left."""
    parts = [slugify(subject, allow_unicode=True), slugify(what), *(slugify(v) for v in variants)]
    stem = "-".join(part for part in parts if part) or "download"
    return f"{stem}.{extension.lstrip('.')}"


def ascii_name(name: str) -> str:
    """``name`` in ASCII, for clients that read only ``filename=``: accents dropped ("étude" is "etude"), other
    letters left out; "download" for a stem with nothing left."""
    if re.fullmatch(r"[A-Za-z0-9._-]+", name):  # already plain: kept whole (a "shroom.json" keeps its dots)
        return name
    stem, dot, extension = name.rpartition(".")
    if not dot:
        stem, extension = name, ""
    folded = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode()
    ascii_stem = "-".join(part for part in slugify(folded).split("-") if part) or "download"
    return f"{ascii_stem}.{extension}" if extension else ascii_stem


def attachment_header(name: str) -> str:
    """The Content-Disposition of a download called ``name``: ``filename`` alone for an ASCII name; otherwise an
    ASCII ``filename`` for old clients and the name itself in ``filename*`` (UTF-8, percent-encoded), which
    clients that know it prefer (RFC 6266, section 4.3)."""
    fallback = ascii_name(name)
    if fallback == name:
        return f'attachment; filename="{name}"'
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
