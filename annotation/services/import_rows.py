"""Writing imported items: parsed records become COPY rows, chunk by chunk, inside the import's transaction.

The import service (:mod:`annotation.services.imports`) reads and checks the records; this module turns each
chunk into rows without building model instances (one query for the chunk's uids already in the portal, one for
the passages it cites, one COPY), creates the batch when the first new item comes, and states the result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db import connection

from annotation.importers import ParsedItem
from annotation.models import ImportBatch, QAItem
from portal.actors import acting_user
from portal.audit import audit_record
from portal.bulk import copy_insert_rows
from portal.jobs import Progress
from portal.models import User

# The columns an import writes (every other column takes its default); the JSON ones are written as JSON text.
_TEXT = (
    "question",
    "answer",
    "correct_answer",
    "false_answer",
    "incorrect_explanation",
    "isbn",
    "page",
    "paragraph_id",
)
_JSON = ("answer_list", "options", "reasoning", "incorrect_reasoning_step", "extra")
_COLUMNS = ("uid", "qa_type", "benchmark", "batch_id", "passage_id", "raw", *_TEXT, *_JSON)
_JSON_DEFAULTS = {f.name: json.dumps(f.get_default()) for f in QAItem._meta.concrete_fields if f.name in _JSON}


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


class ItemWriter:
    """Writes the chunks of one import (in the caller's transaction) and keeps its counts."""

    def __init__(self, *, fmt: str, user: User | None, batch_name: str, progress: Progress | None):
        self.fmt, self.user, self.batch_name, self.progress = fmt, user, batch_name, progress
        self.batch: ImportBatch | None = None
        self.files: dict[str, None] = {}  # in the order first seen
        self.created = self.existing = 0
        self.by_type: dict[str, int] = {}
        self._bytes_read = 0
        self._bytes_total = 0

    def start(self, total_bytes: int) -> None:
        """Progress is counted in records; their number is estimated from the bytes read until the end."""
        self._bytes_total = total_bytes
        if self.progress is not None:
            self.progress.start(0, "importing items")

    def read(self, size: int) -> None:
        """Told by the readers how many bytes they read."""
        self._bytes_read += size

    def write(self, chunk: list[ParsedItem]) -> None:
        for item in chunk:
            self.files.setdefault(item.file)
        existing = _existing_uids([item.uid for item in chunk])
        new_items = [item for item in chunk if item.uid not in existing]
        self.existing += len(existing)
        if new_items:
            if self.batch is None:
                # Named and counted at the end (finish): the files and totals are known only then.
                self.batch = ImportBatch.objects.create(name=self.batch_name, fmt=self.fmt, files=[],
                                                        created_by=acting_user(self.user))  # fmt: skip
            passages = _passage_ids({item.fields.get("paragraph_id", "") for item in new_items})
            copy_insert_rows(QAItem, _COLUMNS, (_row(item, self.batch.pk, passages) for item in new_items))
            self.created += len(new_items)
            for item in new_items:
                self.by_type[item.qa_type] = self.by_type.get(item.qa_type, 0) + 1
        if self.progress is not None:
            records = self.created + self.existing
            share = self._bytes_read / self._bytes_total if self._bytes_total else 1.0
            self.progress.estimate(max(records, round(records / share)) if share else records)
            self.progress.advance(len(chunk))

    def finish(self) -> ImportResult:
        file_names = sorted(self.files)
        if self.batch is not None:
            self.batch.name = self.batch_name or ", ".join(file_names)[:200]
            self.batch.files = file_names
            self.batch.items_created, self.batch.items_existing = self.created, self.existing
            self.batch.save(update_fields=["name", "files", "items_created", "items_existing"])
            audit_record(
                actor=self.user,
                obj=self.batch,
                action="items_imported",
                after={"created": self.created, "existing": self.existing, "files": file_names},
            )
        if self.progress is not None:
            self.progress.estimate(self.created + self.existing)
            self.progress.advance(0)  # done == total: written at once
        return ImportResult(
            batch_id=self.batch.pk if self.batch else None,
            created=self.created,
            existing=self.existing,
            files=file_names,
            by_type=self.by_type,
        )


def _row(item: ParsedItem, batch_id: int, passages: dict[str, int]) -> tuple:
    fields = item.fields
    return (
        item.uid,
        item.qa_type,
        item.benchmark,
        batch_id,
        passages.get(fields.get("paragraph_id", "")),
        json.dumps(item.raw, ensure_ascii=False),  # text the checks found free of NUL and lone surrogates
        *(fields.get(name, "") for name in _TEXT),
        *(json.dumps(fields[name], ensure_ascii=False) if name in fields else _JSON_DEFAULTS[name] for name in _JSON),
    )


def _existing_uids(uids: list[str]) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT uid FROM annotation_qaitem WHERE uid = ANY(%s)", [uids])
        return {uid for (uid,) in cursor.fetchall()}


def _passage_ids(paragraph_ids: set[str]) -> dict[str, int]:
    paragraph_ids.discard("")
    if not paragraph_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT paragraph_id, id FROM annotation_sourcepassage WHERE paragraph_id = ANY(%s)", [list(paragraph_ids)]
        )
        return dict(cursor.fetchall())
