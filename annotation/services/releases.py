"""Freezing releases and exporting them byte for byte.

A release snapshots, in one transaction: the selection rule as used, every selected item's record and final
judgement, the composition report, and the SHA-256 manifest of every export format (computed by actually
writing the files; they are kept, see :mod:`annotation.services.release_files`). Nothing here updates a release:
there is no such function, and the database refuses it anyway.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd
from django.db import connection, transaction
from django.db.models import QuerySet

from annotation.exporters import cliniqlink, manifest, tables
from annotation.models import QAItem, Release
from annotation.qa_types import CLINIQLINK_TYPES, QA_TYPE_LABELS, QAType, benchmark_label
from annotation.selectors.disputes import open_issue_q
from annotation.selectors.releases import REVIEW_COUNT, composition_report
from annotation.services.release_files import FreezeFiles, freeze_files, kept_files_copy
from annotation.services.release_nuggets import (
    NUGGETS_FILE,
    NUGGETS_FORMAT,
    nuggets_jsonl_write,
    release_nugget_snapshot,
)
from annotation.services.release_snapshot import (
    release_entries,
    snapshot_entries,
    snapshot_item_ids,
    snapshot_set_nuggets,
    snapshot_store,
    snapshot_take,
)
from annotation.workflow import RELEVANCE_MAX, RELEVANCE_MIN, ItemStatus, Verdict
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


class RuleError(DomainError):
    """A selection rule parameter that is unknown or has a wrong value; ``field`` names it."""

    code = "invalid_rule"

    def __init__(self, field: str, reason: str):
        super().__init__(f"selection rule, field '{field}': {reason}")
        self.field = field
        self.reason = reason


def _shown(value: object) -> str:
    """A submitted value as the person wrote it (JSON), shortened for a message."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _choices_list(field: str, value: object, allowed: list[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleError(field, f"must be a list of names, not {_shown(value)}")
    unknown = [v for v in value if v not in allowed]
    if unknown:
        raise RuleError(field, f"unknown value {_shown(unknown[0])}; use any of {', '.join(allowed)}")
    return list(value)


def _check_statuses(value: object) -> list[str]:
    return _choices_list("statuses", value, list(ItemStatus.values))


def _check_final_verdict(value: object) -> str | None:
    if value is None or (isinstance(value, str) and value in Verdict.values):
        return value
    raise RuleError("final_verdict", f"must be null (any) or one of {', '.join(Verdict.values)}, not {_shown(value)}")


def _check_min_relevance(value: object) -> float | None:
    if value is None:
        return None
    # bool is an int in Python: `true` must not silently mean a minimum relevance of 1.
    if isinstance(value, bool) or not isinstance(value, int | float) or not RELEVANCE_MIN <= value <= RELEVANCE_MAX:
        raise RuleError(
            "min_relevance",
            f"must be null (any) or a number from {RELEVANCE_MIN} to {RELEVANCE_MAX}, not {_shown(value)}",
        )
    return float(value)


def _check_exclude_open_issues(value: object) -> bool:
    if not isinstance(value, bool):
        raise RuleError("exclude_open_issues", f"must be true or false, not {_shown(value)}")
    return value


def _check_qa_types(value: object) -> list[str]:
    return _choices_list("qa_types", value, [t.value for t in QAType])


def _check_benchmark(value: object) -> str | None:
    if value is None or (isinstance(value, str) and 0 < len(value) <= 40):
        return value
    raise RuleError("benchmark", f"must be null (any) or a benchmark name (1 to 40 characters), not {_shown(value)}")


@dataclass
class SelectionRule:
    """Which items a release takes. The defaults are the benchmark's rule: verified correct, final GP
    relevance 5 (after adjudication), no open feedback or dispute. Gold items are never released.

    ``benchmark`` None means every benchmark: that is what rules stored before the filter existed meant, so the
    default stays None here (old releases keep their meaning); the releases page preselects one benchmark.

    :meth:`from_dict` is the one validation of a rule, whatever the door (releases page, API, command line):
    a wrong type, an unknown key or an out-of-range value is a :class:`RuleError` naming the field."""

    statuses: list[str] = field(default_factory=lambda: [ItemStatus.VERIFIED.value])
    final_verdict: str | None = Verdict.CORRECT.value
    min_relevance: float | None = 5.0
    exclude_open_issues: bool = True
    qa_types: list[str] = field(default_factory=list)
    benchmark: str | None = None

    @classmethod
    def from_dict(cls, data: dict | None) -> SelectionRule:
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise RuleError("rule", f"must be an object of parameters, not {_shown(data)}")
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise RuleError(unknown[0], f"unknown parameter; the parameters are {', '.join(cls.__dataclass_fields__)}")
        return cls(**{name: _CHECKS[name](value) for name, value in data.items()})

    def describe(self) -> str:
        """The rule in words, for pages."""
        parts = [
            # Always said, either way: a release of one benchmark must not read like one of all of them.
            f"benchmark {benchmark_label(self.benchmark)} only" if self.benchmark else "all benchmarks",
            "status " + " or ".join(ItemStatus(s).label.lower() for s in self.statuses)
            if self.statuses
            else "any status",
            f"final verdict {Verdict(self.final_verdict).label.lower()}" if self.final_verdict else "any verdict",
            f"final GP relevance at least {self.min_relevance:g}"
            if self.min_relevance is not None
            else "any GP relevance",
            "items with open feedback or disputes held out"
            if self.exclude_open_issues
            else "items with open feedback or disputes included",
            "QA types " + ", ".join(QA_TYPE_LABELS[QAType(t)] for t in self.qa_types)
            if self.qa_types
            else "all QA types",
        ]
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def queryset(self) -> QuerySet[QAItem]:
        items = QAItem.objects.filter(gold__isnull=True)
        if self.statuses:
            items = items.filter(status__in=self.statuses)
        if self.final_verdict:
            items = items.filter(final_verdict=self.final_verdict)
        if self.min_relevance is not None:
            items = items.filter(final_relevance__gte=self.min_relevance)
        if self.qa_types:
            items = items.filter(qa_type__in=self.qa_types)
        if self.benchmark:
            items = items.filter(benchmark=self.benchmark)
        if self.exclude_open_issues:
            items = items.exclude(open_issue_q())
        return items.order_by("id")


# Each parameter's check: takes the stored JSON value, returns the checked one or raises RuleError.
_CHECKS: dict[str, Callable[[object], Any]] = {
    "statuses": _check_statuses,
    "final_verdict": _check_final_verdict,
    "min_relevance": _check_min_relevance,
    "exclude_open_issues": _check_exclude_open_issues,
    "qa_types": _check_qa_types,
    "benchmark": _check_benchmark,
}


def rule_description(rule: dict) -> str:
    """A stored rule in words; one stored before rules were checked, and no longer valid, is shown as stored."""
    try:
        return SelectionRule.from_dict(rule).describe()
    except RuleError:
        return f"as stored: {_shown(rule)}"


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
        # be a confusing duplicate: refused, naming the release that already holds exactly this.
        if latest is not None and latest.rule == selection.as_dict() and latest.manifests == manifests:
            raise Conflict(
                f"Nothing changed since {latest.label}: the same rule selects the same {latest.item_count} items "
                f"with identical content (checksum {latest.checksum}). No new version was frozen.",
                code="identical_release",
            )
        version = (latest.version if latest else 0) + 1
        release = Release.objects.create(
            name=name,
            version=version,
            note=note,
            rule=selection.as_dict(),
            item_count=len(entries),
            manifests=manifests,
            csv_cells=csv_cells,
            with_nuggets=with_nuggets,
            checksum=manifest.combined_checksum(manifests["cliniqlink"]),
            report=composition_report(included_ids={entry["item_id"] for entry in entries}),
            created_by=acting_user(user),
        )
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
            paths = _write(fmt, entries, folder, csv_cells=csv_cells, with_nuggets=with_nuggets, table=table)
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
    return _write(fmt, entries, out_dir, csv_cells=release.csv_cells, with_nuggets=release.with_nuggets)


def _write(
    fmt: str,
    entries: Sequence[Mapping[str, Any]],
    out_dir: Path,
    *,
    csv_cells: str,
    with_nuggets: bool = False,
    table: _Table | None = None,
) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    nuggets = [nuggets_jsonl_write(entries, out_dir)] if with_nuggets else []
    return _write_items(fmt, entries, out_dir, csv_cells=csv_cells, table=table or _Table(entries)) + nuggets


def _write_items(
    fmt: str, entries: Sequence[Mapping[str, Any]], out_dir: Path, *, csv_cells: str, table: _Table
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
        return [tables.write_parquet(table.frame, out_dir / "items.parquet")]
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
