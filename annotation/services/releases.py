"""Freezing releases and exporting them byte for byte.

A release snapshots, in one transaction: the selection rule as used, every selected item's record and final
judgement, the composition report, its evaluation card (``CARD.md``, :mod:`annotation.services.release_card`), and
the SHA-256 manifest of every export format (computed by actually writing the files, the card included; they are
kept, see :mod:`annotation.services.release_files`). The checksum covers the ClinIQLink export's data files, not
the card, which states it. Nothing here updates a release:
there is no such function, and the database refuses it anyway.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd
from django.db import connection, transaction
from django.utils import timezone

from annotation.exporters import cliniqlink, manifest, tables
from annotation.models import Release
from annotation.qa_types import CLINIQLINK_TYPES
from annotation.selectors.releases import REVIEW_COUNT, composition_report
from annotation.services.release_card import (
    CARD_FILE,
    card_facts,
    card_items_of_entries,
    card_markdown,
    card_write,
    frozen_with_card,
    release_card,
)
from annotation.services.release_files import FreezeFiles, freeze_files, kept_files_copy
from annotation.services.release_nuggets import (
    NUGGETS_FILE,
    NUGGETS_FORMAT,
    nuggets_jsonl_write,
    release_nugget_snapshot,
)
from annotation.services.release_quality import items_wrong_estimate
from annotation.services.release_rules import SelectionRule
from annotation.services.release_snapshot import (
    release_entries,
    snapshot_entries,
    snapshot_item_ids,
    snapshot_set_nuggets,
    snapshot_store,
    snapshot_take,
)
from portal.actors import acting_user
from portal.audit import audit_record
from portal.errors import Conflict, DomainError, NotFound
from portal.models import User
from portal.numbers import whole_number
from portal.parallel import fork_map, processes_for

EXPORT_FORMATS = ("cliniqlink", "csv", "parquet", "jsonl")

# The release name rule, one home for the page, the API and the command. A name is part of the release's URL
# (NAME@VERSION), of its download file names and of the zip's folder, so it keeps to plain ASCII; spaces are
# allowed (the demo's "ClinIQLink demo"); "@" separates the version and "/" would split the URL.
RELEASE_NAME_MAX = 100
RELEASE_NAME_RULE = (
    f"1 to {RELEASE_NAME_MAX} characters: letters, digits, spaces and . _ - ( ), starting with a letter or digit"
)
_RELEASE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._()-]*")


def release_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a release (the rule in words), or None when it can."""
    if (
        not isinstance(name, str)
        or len(name) > RELEASE_NAME_MAX
        or name != name.strip()
        or "  " in name
        or not _RELEASE_NAME.fullmatch(name)
    ):
        return f"A release name has {RELEASE_NAME_RULE} (single spaces, none at either end)."
    return None


def release_next_label(name: str) -> str:
    """The label the next freeze of ``name`` will get (``NAME@1`` for a new name)."""
    latest = Release.objects.filter(name=name).order_by("-version").values_list("version", flat=True).first()
    return f"{name}@{(latest or 0) + 1}"


# Independent reviews of real items (gold answers are stored apart and never count).
TABLE_COLUMNS = [
    "position",
    "uid",
    "qa_type",
    "question",
    "answer",
    "correct_answer",
    "options",
    "false_answer",
    "incorrect_explanation",
    "reasoning",
    "incorrect_reasoning_step",
    "isbn",
    "page",
    "paragraph_id",
    "final_verdict",
    "final_relevance",
    "final_source",
    "review_count",
]


def release_get(label: str) -> Release:
    """``NAME`` (latest version) or ``NAME@VERSION``."""
    name, _, version = label.partition("@")
    releases = Release.objects.filter(name=name)
    if version:
        number = whole_number(version)
        if number is None or not version.isascii():
            raise NotFound(f"no release {label!r} (versions are numbers: NAME@2)")
        releases = releases.filter(version=number)
    release = releases.order_by("-version").first()
    if release is None:
        raise NotFound(f"no release {label!r}")
    return release


def release_freeze(
    *, name: str, rule: dict | None = None, note: str = "", user: User | None = None, with_nuggets: bool = False
) -> Release:
    """Freeze a new version of release ``name`` from the items the rule selects.

    ``with_nuggets``: the items' validated nuggets are frozen with them (``ReleaseItem.nuggets``, None for an item
    without) and every export carries ``nuggets.jsonl``, hashed in each format's manifest.

    Refused (:class:`Conflict`) when the new version would be identical to the latest one of that name."""
    selection = SelectionRule.from_dict(rule)
    if problem := release_name_problem(name):
        raise DomainError(problem, code="release_name")
    with freeze_files() as files, transaction.atomic():
        # One freeze per name at a time: the version number is read and used inside the lock.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"release:{name}"])
        count = snapshot_take(selection.queryset().annotate(review_count=REVIEW_COUNT))
        if not count:
            raise DomainError("the selection rule selects no items; nothing was frozen", code="empty_release")
        if with_nuggets:
            snapshot_set_nuggets(release_nugget_snapshot(snapshot_item_ids()))
        entries = snapshot_entries()
        csv_cells = Release.CsvCells.GUARDED
        manifests = _manifests(entries, files, csv_cells=csv_cells, with_nuggets=with_nuggets)
        latest = Release.objects.filter(name=name).order_by("-version").first()
        # A version identical to the one before it (same rule, same items with the same content) would only
        # be a confusing duplicate: refused, naming the release that already holds exactly this. The cards are
        # left out of the comparison: each names its own version.
        if (
            latest is not None
            and latest.rule == selection.as_dict()
            and _data_files(latest.manifests) == _data_files(manifests)
        ):
            raise Conflict(
                f"Nothing changed since {latest.label}: the same rule selects the same {latest.item_count} items "
                f"with identical content (checksum {latest.checksum}). No new version was frozen.",
                code="identical_release",
            )
        version = (latest.version if latest else 0) + 1
        report = composition_report(included_ids={entry["item_id"] for entry in entries})
        report["card_facts"] = card_facts(card_items_of_entries(entries), at_freeze=True)
        # How many of the items are probably wrong, from every judgement as the reliability model reads them (None:
        # no judgement to read; the card says it could not be computed).
        report["quality"] = items_wrong_estimate([entry["item_id"] for entry in entries])
        release = Release(
            name=name,
            version=version,
            note=note,
            rule=selection.as_dict(),
            item_count=len(entries),
            manifests=manifests,
            csv_cells=csv_cells,
            with_nuggets=with_nuggets,
            checksum=manifest.combined_checksum(manifests["cliniqlink"]),
            report=report,
            created_by=acting_user(user),
        )
        # The card states the checksum, so the checksum cannot cover the card: it is taken over the data files
        # first, as for every release before cards, and the card is then hashed into each format's manifest.
        report["card"] = card_markdown(release, at=timezone.now())
        _card_keep(report["card"], files, manifests)
        release.save(force_insert=True)
        snapshot_store(release)
        files.keep(release)
        # From here on the database refuses any item for this release (and requires this before commit).
        Release.objects.filter(pk=release.pk).update(frozen=True)
        release.frozen = True
        audit_record(
            actor=user,
            obj=release,
            action="release_frozen",
            after={
                "items": len(entries),
                "rule": release.rule,
                "checksum": release.checksum,
                "with_nuggets": with_nuggets,
            },
        )
    return release


def _data_files(manifests: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """The manifests without the card: the files that hold the release's items (and nuggets)."""
    return {
        fmt: {name: digest for name, digest in files.items() if name != CARD_FILE} for fmt, files in manifests.items()
    }


def _card_keep(card: str, files: FreezeFiles, manifests: dict[str, dict[str, str]]) -> None:
    """Write the card into every format's folder of the freeze and add its SHA-256 to that format's manifest."""
    for fmt in EXPORT_FORMATS:
        folder = files.folder / fmt
        manifests[fmt][CARD_FILE] = manifest.sha256_file(card_write(card, folder))


#: The formats hashed together in one process: the three tables share their rows, CSV and Parquet their frame.
_MANIFEST_GROUPS = (("cliniqlink", "jsonl"), ("csv", "parquet"))


def _manifests(
    entries: list[dict], files: FreezeFiles, *, csv_cells: str, with_nuggets: bool
) -> dict[str, dict[str, str]]:
    """Each format's manifest, by writing the export exactly as :func:`release_export` will (into ``files``, where
    it is kept) and hashing the files.

    The formats are written in parallel processes (:func:`portal.parallel.fork_map`): at 50,000 items this was half
    of the freeze's time on one core. The table's rows are built once, before the processes start."""
    table = _Table(entries)
    table.rows  # noqa: B018 (built here, shared by the forked processes)

    def group_manifests(formats: tuple[str, ...]) -> dict[str, dict[str, str]]:
        result = {}
        for fmt in formats:
            folder = files.folder / fmt
            paths = _write(
                fmt, entries, folder, csv_cells=csv_cells, with_nuggets=with_nuggets, typed_parquet=True, table=table
            )
            result[fmt] = manifest.build(paths, folder)
        return result

    manifests: dict[str, dict[str, str]] = {}
    for group in fork_map(group_manifests, _MANIFEST_GROUPS, processes=processes_for(len(entries))):
        manifests.update(group)
    return {fmt: manifests[fmt] for fmt in EXPORT_FORMATS}


class _Table:
    """The release as a table (rows, then the frame the CSV and Parquet writers take), each built on first use."""

    def __init__(self, entries: Sequence[Mapping[str, Any]]):
        self.entries = entries

    @cached_property
    def rows(self) -> list[dict]:
        return [_table_row(entry) for entry in self.entries]

    @cached_property
    def frame(self) -> pd.DataFrame:
        return tables.table_frame(self.rows, TABLE_COLUMNS)

    @cached_property
    def typed_frame(self) -> pd.DataFrame:
        """The Parquet's frame since releases carry a card: lists of text as lists, whole numbers as integers."""
        return tables.table_frame(self.rows, TABLE_COLUMNS, typed=True)


def release_export(*, release: Release, fmt: str, out_dir: Path) -> list[Path]:
    """Write the release in ``fmt`` to ``out_dir``; the bytes always match the manifest recorded at freeze.

    The files the freeze wrote are copied when they still match the manifest; otherwise the export is written
    afresh from the frozen records (:mod:`annotation.services.release_files`).

    ``fmt`` ``nuggets``: only ``nuggets.jsonl`` of a release frozen with nuggets."""
    if fmt not in (*EXPORT_FORMATS, NUGGETS_FORMAT):
        raise DomainError(f"unknown format {fmt!r}; use one of {', '.join((*EXPORT_FORMATS, NUGGETS_FORMAT))}")
    if fmt == NUGGETS_FORMAT and not release.with_nuggets:
        raise DomainError(f"{release.label} was frozen without nuggets", code="no_nuggets")
    kept_format = "jsonl" if fmt == NUGGETS_FORMAT else fmt  # every format's folder holds the same nuggets file
    names = [NUGGETS_FILE] if fmt == NUGGETS_FORMAT else sorted(release.manifests.get(fmt, {}))
    kept = kept_files_copy(release, kept_format, out_dir, names)
    if kept is not None:
        return kept
    entries = release_entries(release, records_as_text=fmt == "cliniqlink")
    if fmt == NUGGETS_FORMAT:
        out_dir.mkdir(parents=True, exist_ok=True)
        return [nuggets_jsonl_write(entries, out_dir)]
    with_card = frozen_with_card(release)
    paths = _write(
        fmt,
        entries,
        out_dir,
        csv_cells=release.csv_cells,
        with_nuggets=release.with_nuggets,
        typed_parquet=with_card,
    )
    # The card stored at freeze time, byte for byte (a release frozen before cards has none in its manifest).
    return paths + [card_write(release_card(release), out_dir)] if with_card else paths


def _write(
    fmt: str,
    entries: Sequence[Mapping[str, Any]],
    out_dir: Path,
    *,
    csv_cells: str,
    with_nuggets: bool = False,
    typed_parquet: bool = False,
    table: _Table | None = None,
) -> list[Path]:
    """The release's data files in ``fmt`` (the card is written apart: it is the same text in every format).

    ``typed_parquet``: the Parquet of releases frozen with a card (``release_card.frozen_with_card``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    nuggets = [nuggets_jsonl_write(entries, out_dir)] if with_nuggets else []
    table = table or _Table(entries)
    return _write_items(fmt, entries, out_dir, csv_cells=csv_cells, typed_parquet=typed_parquet, table=table) + nuggets


def _write_items(
    fmt: str,
    entries: Sequence[Mapping[str, Any]],
    out_dir: Path,
    *,
    csv_cells: str,
    typed_parquet: bool,
    table: _Table,
) -> list[Path]:
    if fmt == "cliniqlink":
        by_type: dict[str, list] = {}  # records, or their JSON text (a ClinIQLink export)
        for entry in entries:
            if entry["qa_type"] in CLINIQLINK_TYPES:
                by_type.setdefault(entry["qa_type"], []).append(entry["record"])
        return cliniqlink.write(by_type, out_dir)
    if fmt == "csv":
        guard = csv_cells == Release.CsvCells.GUARDED
        return [tables.write_csv(table.frame, out_dir / "items.csv", guard_formulas=guard)]
    if fmt == "parquet":
        frame = table.typed_frame if typed_parquet else table.frame
        return [tables.write_parquet(frame, out_dir / "items.parquet")]
    return [tables.write_jsonl(table.rows, TABLE_COLUMNS, out_dir / f"items.{fmt}")]


def _table_row(entry: Mapping[str, Any]) -> dict:
    record = entry["record"]
    source = record.get("source") or {}
    row = {column: record.get(column) for column in TABLE_COLUMNS}
    if entry["qa_type"] == "generic":  # PromptCBLUE: input / target / answer_choices
        row.update(question=record.get("input"), answer=record.get("target"), options=record.get("answer_choices"))
    row.update(
        position=entry["position"],
        uid=entry["uid"],
        qa_type=entry["qa_type"],
        isbn=source.get("isbn"),
        page=source.get("page"),
        paragraph_id=source.get("paragraph_id"),
        final_verdict=entry["final_verdict"],
        final_relevance=entry["final_relevance"],
        final_source=entry["final_source"],
        review_count=entry["review_count"],
    )
    return row


def release_verify(*, release: Release, folder: Path, fmt: str | None = None) -> list[str]:
    """Problems found comparing ``folder`` with the release's manifest (the format is guessed from the files)."""
    if fmt == NUGGETS_FORMAT:
        recorded = release.manifests.get("jsonl", {}).get(NUGGETS_FILE)
        if recorded is None:
            return [f"{release.label} was frozen without nuggets"]
        return manifest.verify({NUGGETS_FILE: recorded}, folder)
    formats = (
        [fmt] if fmt else [f for f, files in release.manifests.items() if all((folder / n).exists() for n in files)]
    )
    if not formats:
        return [f"{folder}: holds the files of no export format of {release.label}"]
    return manifest.verify(release.manifests[formats[0]], folder)
