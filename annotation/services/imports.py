"""Importing items and source passages: one service behind the CLI, the upload page, the API and Celery.

All-or-nothing: items are read, checked and written chunk by chunk inside one transaction (streamed, so a file of
a million items is never held whole), and the first refused record rolls back everything written before it.
Items already in the portal (same uid) are recognised and left alone, so re-importing a file is idempotent.
Concurrent imports are serialised by an advisory lock so two uploads of the same file cannot race on the unique
uid; the lock is held while the files are read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from django.db import connection, transaction

from annotation.importers import ParsedItem, ParsedPassage, cliniqlink, promptcblue, sources
from annotation.models import ImportBatch, SourcePassage
from annotation.qa_types import CLINIQLINK_FILES, CLINIQLINK_TYPES, QA_TYPE_LABELS, QAType
from annotation.services.import_rows import ImportResult, ItemWriter
from portal.audit import audit_record
from portal.importing import ImportProblem, Limits, require_fits
from portal.iterables import chunked
from portal.jobs import Progress, job_start
from portal.models import Job, User
from portal.uploads import upload_limits

FORMATS = ("cliniqlink", "promptcblue")
_IMPORT_LOCK = 734_211  # pg_advisory_xact_lock key shared by every import
_CHUNK = 2000  # records written per COPY and per "already there?" query


def by_type_phrase(by_type: dict[str, int]) -> str:
    """Counts per QA type as people read them: "5 of each of the seven types" for a whole ClinIQLink set,
    "5 true / false and 3 list" otherwise; empty when the types say nothing (other benchmarks only)."""
    values = {t.value for t in QAType}
    known = {QAType(t): n for t, n in by_type.items() if t in values and n}
    if not known or set(known) == {QAType.GENERIC}:
        return ""
    counts = set(known.values())
    if set(known) == set(CLINIQLINK_TYPES) and len(counts) == 1:
        return f"{counts.pop():,} of each of the seven types"
    parts = [f"{known[t]:,} {QA_TYPE_LABELS[t][:1].lower()}{QA_TYPE_LABELS[t][1:]}" for t in QAType if t in known]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def expand_item_paths(paths: list[Path], fmt: str) -> list[Path]:
    """Folders in the ClinIQLink layout become their dataset files; single files stay as they are."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            pattern = CLINIQLINK_FILES if fmt == "cliniqlink" else None
            found = (
                [path / name for name in pattern if (path / name).exists()] if pattern else sorted(path.glob("*.jsonl"))
            )
            if not found:
                expected = ", ".join(CLINIQLINK_FILES) if pattern else "*.jsonl"
                raise ImportProblem(str(path), f"folder holds none of the expected files ({expected})")
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise ImportProblem(str(path), "no such file or folder")
    return files


def items_parse(
    paths: list[Path], *, fmt: str, limits: Limits | None = None, displays: dict | None = None
) -> list[ParsedItem]:
    """Parse and validate every file; raise :class:`ImportProblem` on the first problem. Writes nothing."""
    return list(items_stream(paths, fmt=fmt, limits=limits, displays=displays))


def items_stream(
    paths: list[Path],
    *,
    fmt: str,
    limits: Limits | None = None,
    displays: dict | None = None,
    on_read: Callable[[int], None] | None = None,
) -> Iterator[ParsedItem]:
    """Each item of every file, parsed and checked, read record by record: :class:`ImportProblem` on the first
    problem (a uid given twice, in one file or in two, is one). Only the uids seen are kept. ``on_read`` is told
    the bytes of each block read."""
    if fmt not in FORMATS:
        raise ImportProblem("(upload)", f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    limits = limits or upload_limits()
    displays = displays or {}
    parser = cliniqlink.iter_file if fmt == "cliniqlink" else promptcblue.iter_file
    files = expand_item_paths(paths, fmt)
    # uid -> where it was first seen, packed into one int (file's place, record): a million uids stay small.
    seen: dict[str, int] = {}
    count = 0
    for place, path in enumerate(files):
        display = displays.get(path, path.name)
        for item in parser(path, limits, display, on_read=on_read):
            first = seen.setdefault(item.uid, place << 32 | item.record)
            if first >> 32 != place or first & 0xFFFFFFFF != item.record:
                raise ImportProblem(
                    item.file,
                    f"duplicate uid {item.uid!r}: the same item is record {first & 0xFFFFFFFF} of "
                    f"{displays.get(files[first >> 32], files[first >> 32].name)}",
                    record=item.record,
                    field="uid",
                )
            count += 1
            if count > limits.max_records:
                raise ImportProblem("(upload)", f"more than {limits.max_records:,} records; the limit is "
                                                f"{limits.max_records:,}")  # fmt: skip
            yield item


def items_import(
    *,
    paths: list[Path],
    fmt: str = "cliniqlink",
    user: User | None = None,
    batch_name: str = "",
    progress: Progress | None = None,
    displays: dict[str, str] | None = None,
) -> ImportResult:
    """Import items from ``paths`` (files or ClinIQLink folders), all or nothing, in one transaction.

    Streamed: records are read, checked and written by the thousand, so a file of a million items is never held
    whole; the first refused record rolls back everything written before it (nothing changes). Progress counts
    records; their total is estimated from the share of the files read, and exact at the end."""
    require_fits(batch_name, ImportBatch, "name", "(upload)", None, field="batch_name")
    files = expand_item_paths(paths, fmt) if fmt in FORMATS else []
    writer = ItemWriter(fmt=fmt, user=user, batch_name=batch_name, progress=progress)
    stream = items_stream(paths, fmt=fmt, displays=displays, on_read=writer.read)
    writer.start(sum(path.stat().st_size for path in files))
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_IMPORT_LOCK])
        for chunk in chunked(stream, _CHUNK):
            writer.write(chunk)
        result = writer.finish()
    if result.created >= 1000:
        # Fresh planner statistics at once: without them the queue's "next item" query, planned on the statistics
        # of the table before the import, sorts the whole table until autovacuum catches up.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE annotation_qaitem")
    return result


def sources_parse(paths: list[Path], *, displays: dict | None = None) -> list[ParsedPassage]:
    """Parse and validate every passage file; a paragraph_id given twice, in one file or in two, is refused."""
    displays = displays or {}
    parsed: list[ParsedPassage] = []
    seen: dict[str, tuple[str, int]] = {}
    for path in paths:
        display = displays.get(str(path), path.name)
        if not path.is_file():
            raise ImportProblem(display, "no such file")
        for number, passage in enumerate(sources.parse_file(path, upload_limits(), display), start=1):
            first = seen.setdefault(passage.paragraph_id, (display, number))
            if first != (display, number):
                raise ImportProblem(
                    display,
                    f"duplicate paragraph_id {passage.paragraph_id!r}: also record {first[1]} of {first[0]}",
                    record=number,
                    field="paragraph_id",
                )
            parsed.append(passage)
    return parsed


def sources_import(*, paths: list[Path], user: User | None = None, displays: dict | None = None) -> dict:
    """Create or update passages by ``paragraph_id`` from every file in ``paths`` (all files or none) and link
    every item that cites them."""
    if not paths:
        raise ImportProblem("(upload)", "no file was uploaded")
    displays = displays or {}
    passages = sources_parse(paths, displays=displays)
    names = [displays.get(str(path), path.name) for path in paths]
    with transaction.atomic():
        existing = set(
            SourcePassage.objects.filter(paragraph_id__in=[p.paragraph_id for p in passages]).values_list(
                "paragraph_id", flat=True
            )
        )
        for start in range(0, len(passages), _CHUNK):
            SourcePassage.objects.bulk_create(
                [
                    SourcePassage(paragraph_id=p.paragraph_id, text=p.text, isbn=p.isbn, page=p.page)
                    for p in passages[start : start + _CHUNK]
                ],
                update_conflicts=True,
                unique_fields=["paragraph_id"],
                update_fields=["text", "isbn", "page"],
            )
        linked = _link_items_to_passages()
        result = {"created": len(passages) - len(existing), "updated": len(existing), "items_linked": linked}
        audit_record(
            actor=user,
            obj=("annotation.sourcepassage", ", ".join(names)[:200]),
            action="sources_imported",
            after=result | {"files": names},
        )
    return result


def _link_items_to_passages() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            UPDATE annotation_qaitem AS i SET passage_id = p.id
            FROM annotation_sourcepassage AS p
            WHERE i.paragraph_id = p.paragraph_id AND i.passage_id IS DISTINCT FROM p.id
            """
        )
        return cursor.rowcount


def import_request(
    *,
    kind: str,
    paths: list[Path],
    displays: dict[str, str],
    fmt: str = "cliniqlink",
    batch_name: str = "",
    user: User | None = None,
) -> Job:
    """Queue the import of uploaded files (``kind`` "items" or "sources") as a job; returns the job.

    The upload page and the API both call this; the job runs :func:`items_import` / :func:`sources_import`.
    """
    if kind == "sources":
        return job_start(
            kind="import_sources", params={"paths": [str(p) for p in paths], "displays": displays}, user=user
        )
    params = {"paths": [str(p) for p in paths], "displays": displays, "format": fmt, "batch_name": batch_name}
    return job_start(kind="import_items", params=params, user=user)
