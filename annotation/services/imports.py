"""Importing items and source passages: one service behind the CLI, the upload page, the API and Celery.

All-or-nothing: every file is parsed and validated before the first write, and the writes happen in one
transaction. Items already in the portal (same uid) are recognised and left alone, so re-importing a file
is idempotent. Concurrent imports are serialised by an advisory lock so two uploads of the same file
cannot race on the unique uid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.db import connection, transaction

from annotation.importers import ParsedItem, ParsedPassage, cliniqlink, promptcblue, sources
from annotation.models import ImportBatch, QAItem, SourcePassage
from annotation.qa_types import CLINIQLINK_FILES
from portal.actors import acting_user
from portal.audit import audit_record
from portal.bulk import copy_insert
from portal.importing import ImportProblem, Limits, require_fits
from portal.jobs import Progress, job_start
from portal.models import Job, User
from portal.uploads import upload_limits

FORMATS = ("cliniqlink", "promptcblue")
_IMPORT_LOCK = 734_211  # pg_advisory_xact_lock key shared by every import
_CHUNK = 2000


@dataclass
class ImportResult:
    batch_id: int | None
    created: int
    existing: int
    files: list[str] = field(default_factory=list)
    by_type: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "batch_id": self.batch_id,
            "created": self.created,
            "existing": self.existing,
            "files": self.files,
            "by_type": self.by_type,
        }


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
    if fmt not in FORMATS:
        raise ImportProblem("(upload)", f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    limits = limits or upload_limits()
    displays = displays or {}
    parser = cliniqlink.parse_file if fmt == "cliniqlink" else promptcblue.parse_file
    parsed: list[ParsedItem] = []
    seen: dict[str, ParsedItem] = {}
    for path in expand_item_paths(paths, fmt):
        for item in parser(path, limits, displays.get(path, path.name)):
            first = seen.get(item.uid)
            if first is not None:
                raise ImportProblem(
                    item.file,
                    f"duplicate uid {item.uid!r}: the same item is record {first.record} of {first.file}",
                    record=item.record,
                    field="uid",
                )
            seen[item.uid] = item
            parsed.append(item)
    if len(parsed) > limits.max_records:
        raise ImportProblem("(upload)", f"{len(parsed):,} records; the limit is {limits.max_records:,}")
    return parsed


def items_import(
    *,
    paths: list[Path],
    fmt: str = "cliniqlink",
    user: User | None = None,
    batch_name: str = "",
    progress: Progress | None = None,
    displays: dict[str, str] | None = None,
) -> ImportResult:
    """Validate then import items from ``paths`` (files or ClinIQLink folders) in one transaction."""
    require_fits(batch_name, ImportBatch, "name", "(upload)", None, field="batch_name")
    parsed = items_parse(paths, fmt=fmt, displays=displays)
    file_names = sorted({item.file for item in parsed})
    if progress is not None:
        progress.start(len(parsed), "importing items")
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_IMPORT_LOCK])
        existing = _existing_uids([item.uid for item in parsed])
        new_items = [item for item in parsed if item.uid not in existing]
        batch = None
        by_type: dict[str, int] = {}
        if new_items:
            batch = ImportBatch.objects.create(
                name=batch_name or ", ".join(file_names)[:200],
                fmt=fmt,
                files=file_names,
                created_by=acting_user(user),
                items_created=len(new_items),
                items_existing=len(existing),
            )
            passages = _passage_ids({item.fields.get("paragraph_id", "") for item in new_items})
            for start in range(0, len(new_items), _CHUNK):
                chunk = new_items[start : start + _CHUNK]
                copy_insert(QAItem, [_build_item(item, batch, passages) for item in chunk])
                if progress is not None:
                    progress.advance(len(chunk))
            for item in new_items:
                by_type[item.qa_type] = by_type.get(item.qa_type, 0) + 1
            audit_record(
                actor=user,
                obj=batch,
                action="items_imported",
                after={"created": len(new_items), "existing": len(existing), "files": file_names},
            )
        elif progress is not None:
            progress.advance(len(parsed))
    if len(new_items) >= 1000:
        # Fresh planner statistics at once: without them the queue's "next item" query sorts the whole table
        # until autovacuum catches up (measured: ~100 ms instead of 0.1 ms right after a 20,000-item import).
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE annotation_qaitem")
    return ImportResult(
        batch_id=batch.pk if batch else None,
        created=len(new_items),
        existing=len(existing),
        files=file_names,
        by_type=by_type,
    )


def _existing_uids(uids: list[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(uids), 10_000):
        found.update(QAItem.objects.filter(uid__in=uids[start : start + 10_000]).values_list("uid", flat=True))
    return found


def _passage_ids(paragraph_ids: set[str]) -> dict[str, int]:
    paragraph_ids.discard("")
    return dict(SourcePassage.objects.filter(paragraph_id__in=paragraph_ids).values_list("paragraph_id", "id"))


def _build_item(item: ParsedItem, batch: ImportBatch, passages: dict[str, int]) -> QAItem:
    fields = dict(item.fields)
    return QAItem(
        uid=item.uid,
        qa_type=item.qa_type,
        benchmark=item.benchmark,
        raw=item.raw,
        batch=batch,
        passage_id=passages.get(fields.get("paragraph_id", "")),
        **fields,
    )


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
