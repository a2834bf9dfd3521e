"""Read side of the reviewer guidelines: which version is current, the current set, history, acknowledgements."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, QuerySet, prefetch_related_objects
from django.utils import timezone

from annotation.models import Assignment, GuidelineAcknowledgement, GuidelineVersion, QAItem
from annotation.models.guidelines import BENCHMARK_LABELS
from annotation.qa_types import QAType, qa_type_label

_TYPE_ORDER = {t.value: i for i, t in enumerate(QAType)}


def type_label(qa_type: str) -> str:
    """The type as organizers read it beside a benchmark name ("All tasks" for a benchmark without ClinIQLink types)."""
    if qa_type == QAType.GENERIC:
        return "All tasks"
    return qa_type_label(qa_type)


def guideline_current_sql(*, benchmark: str, qa_type: str, at: str) -> str:
    """THE rule for "the current guideline of (benchmark, type)", as a subquery over three SQL expressions: the
    highest-numbered version stored at or before ``at``; no row when the pair has no guideline yet.

    Written as SQL so that the review queue's lease (``annotation.services.queue``) reads the guideline in the same
    statement that picks the item; :func:`guideline_current` runs the same text on its own."""
    table = GuidelineVersion._meta.db_table
    columns = ", ".join(f"g.{f.column}" for f in GuidelineVersion._meta.concrete_fields)
    return f"""SELECT {columns} FROM {table} g
        WHERE g.benchmark = {benchmark} AND g.qa_type = {qa_type} AND g.created_at <= {at}
        ORDER BY g.number DESC LIMIT 1"""


def guideline_current(*, benchmark: str, qa_type: str, at: datetime | None = None) -> GuidelineVersion | None:
    """The current guideline of (benchmark, type) at ``at`` (default: now), with its author; None when the pair has
    no guideline yet (the rule: :func:`guideline_current_sql`).

    Every page and service asks this rule, so the version shown beside an item is the version its review records
    (both ask with the lease's start as ``at``)."""
    sql = guideline_current_sql(benchmark="%s", qa_type="%s", at="%s")
    version = next(iter(GuidelineVersion.objects.raw(sql, [benchmark, qa_type, at or timezone.now()])), None)
    if version is not None:
        prefetch_related_objects([version], "author")
    return version


def guideline_for_assignment(assignment: Assignment) -> GuidelineVersion | None:
    """The guideline a lease is reviewed under: the one current when the item was handed out, recorded on the lease
    then (:func:`guideline_of_new_lease`). A version saved during the 30-minute hold applies from the reviewer's
    next item on, so what the page showed and what the review records never differ."""
    return assignment.guideline


def guideline_of_new_lease(item: QAItem, at: datetime) -> GuidelineVersion | None:
    """The guideline to record on a lease of ``item`` handed out at ``at``."""
    return guideline_current(benchmark=item.benchmark, qa_type=item.qa_type, at=at)


def guidelines_current_set() -> list[GuidelineVersion]:
    """The current version of every (benchmark, type) that has a guideline, benchmark by benchmark in type order."""
    latest = (
        GuidelineVersion.objects.select_related("author")
        .order_by("benchmark", "qa_type", "-number")
        .distinct("benchmark", "qa_type")
    )
    return sorted(latest, key=lambda v: (v.benchmark != "cliniqlink", v.benchmark, _TYPE_ORDER.get(v.qa_type, 99)))


def guideline_set_signature(versions: Iterable[GuidelineVersion]) -> str:
    """A short digest naming a set of versions: a reviewer acknowledges this, and is asked again when it changes."""
    ids = ",".join(str(pk) for pk in sorted(v.pk for v in versions))
    return hashlib.sha256(ids.encode()).hexdigest()[:32]


def guideline_acknowledgement_due(user, versions: list[GuidelineVersion] | None = None) -> bool:
    """True while ``user`` has not confirmed reading the current set of guidelines (never when there are none)."""
    versions = guidelines_current_set() if versions is None else versions
    if not versions:
        return False
    signature = guideline_set_signature(versions)
    return not GuidelineAcknowledgement.objects.filter(reviewer=user, signature=signature).exists()


def guideline_version_ids_read(user) -> set[int]:
    """Ids of every guideline version ``user`` has confirmed reading (in any acknowledged set)."""
    through = GuidelineAcknowledgement.versions.through
    return set(
        through.objects.filter(guidelineacknowledgement__reviewer=user).values_list("guidelineversion_id", flat=True)
    )


def guideline_history(*, benchmark: str, qa_type: str) -> QuerySet[GuidelineVersion]:
    """Every version of one guideline, newest first."""
    return (
        GuidelineVersion.objects.filter(benchmark=benchmark, qa_type=qa_type)
        .select_related("author")
        .order_by("-number")
    )


@dataclass(frozen=True)
class GuidelineRow:
    benchmark: str
    benchmark_label: str
    qa_type: str
    type_label: str
    current: GuidelineVersion | None
    versions: int
    items: int


def guideline_overview() -> list[GuidelineRow]:
    """For organizers: every (benchmark, type) that has a guideline or items, its current version and item count."""
    current = {(v.benchmark, v.qa_type): v for v in guidelines_current_set()}
    counts = dict(
        ((row["benchmark"], row["qa_type"]), row["n"])
        for row in GuidelineVersion.objects.values("benchmark", "qa_type").annotate(n=Count("id"))
    )
    items = dict(
        ((row["benchmark"], row["qa_type"]), row["n"])
        for row in QAItem.objects.values("benchmark", "qa_type").annotate(n=Count("id")).order_by()
    )
    pairs = sorted(set(current) | set(items), key=lambda p: (p[0] != "cliniqlink", p[0], _TYPE_ORDER.get(p[1], 99)))
    return [
        GuidelineRow(
            benchmark=b,
            benchmark_label=BENCHMARK_LABELS.get(b, b),
            qa_type=t,
            type_label=type_label(t),
            current=current.get((b, t)),
            versions=counts.get((b, t), 0),
            items=items.get((b, t), 0),
        )
        for b, t in pairs
    ]


def guideline_benchmarks() -> list[str]:
    """Benchmarks an organizer may write guidelines for: those with items or guidelines."""
    names = set(QAItem.objects.values_list("benchmark", flat=True).distinct().order_by())
    names |= set(GuidelineVersion.objects.values_list("benchmark", flat=True).distinct().order_by())
    return sorted(names, key=lambda b: (b != "cliniqlink", b))
