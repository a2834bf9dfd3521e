"""Read side of the organizers' vetting oversight: the dashboard's progress figures, reviewer quality and dispute
resolution times, progress as shares (for the bars), the settings in words, the gold items' statistics, the items
without an excerpt and the items reviewers could not judge for a reason an organizer can fix."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Avg, Count, Exists, F, OuterRef, Q
from django.db.models.functions import Length, Trim
from django.utils import timezone

from annotation.models import (
    Adjudication,
    Assignment,
    Dispute,
    FeedbackNote,
    GoldAnswer,
    GoldItem,
    ImportBatch,
    QAItem,
    Review,
    SourcePassage,
    VettingConfig,
)
from annotation.qa_types import qa_type_label
from annotation.selectors.adjudication import adjudication_blocked
from annotation.selectors.items import missing_excerpt_q
from annotation.selectors.review import JUDGING_REVIEW, conflict_of_interest_q
from annotation.workflow import FIXABLE_REASONS, CannotTellReason, ItemStatus, Stage

User = get_user_model()

# An item is done when its final verdict is settled: verified or rejected.
DONE_STATUSES = (ItemStatus.VERIFIED.value, ItemStatus.REJECTED.value)


@dataclass(frozen=True)
class Bar:
    """One progress bar: ``done`` of ``total``, with the percentage as text beside the <meter>."""

    label: str
    done: int
    total: int
    note: str = ""

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def progress_bars(progress: dict) -> dict[str, list[Bar]]:
    """Bars per batch, per QA type (items with a final decision of all items) and per stage (reviews done of
    reviews due), from :func:`vetting_progress` plus three counts."""

    def done(counts: dict) -> int:
        return sum(counts.get(s, 0) for s in DONE_STATUSES)

    real = QAItem.objects.filter(gold__isnull=True)
    total = real.count()
    primary_done = real.filter(_judged_at(Stage.PRIMARY)).count()
    drawn = real.filter(second_review=True)
    second_done = drawn.filter(_judged_at(Stage.SECONDARY)).count()
    adjudicated = Adjudication.objects.values("item_id").distinct().count()
    waiting = real.filter(status=ItemStatus.IN_ADJUDICATION).count()
    return {
        "batches": [
            Bar(b["name"] + (" (paused)" if b["paused"] else ""), done(b["counts"]), b["total"])
            for b in progress["batches"]
        ],
        "types": [Bar(qa_type_label(t["qa_type"]), done(t["counts"]), t["total"]) for t in progress["types"]],
        "stages": [
            Bar("Primary review", primary_done, total, "items with a first review, of all items"),
            Bar("Second review", second_done, drawn.count(), "items drawn for a second review that have one"),
            Bar("Adjudication", adjudicated, adjudicated + waiting, "disagreements decided, of all sent"),
        ],
    }


def _judged_at(stage: str) -> Q:
    """``Q`` true for items with a review that judges them at ``stage``."""
    return Q(Exists(Review.objects.filter(JUDGING_REVIEW, item=OuterRef("pk"), stage=stage)))


def config_explained(config: VettingConfig) -> dict[str, str]:
    """Each vetting setting in one sentence, with its current value."""
    return {
        "seed": "Which items get a second review is drawn as sha256(seed:uid) < share, so anyone with this seed "
        "can re-derive the draw; a new seed changes only the draws still to come.",
        "second_share": f"{config.second_share:.0%} of the items are drawn, at their first review, for an "
        "independent second review by someone else (the adaptive policy uses at most as many judgements).",
        "second_review_policy": "Uniform: that share at random, whoever reviewed first. Adaptive: a random slice "
        "(below) and, beyond it, the items whose first verdict the reliability model finds most likely wrong, "
        "within the same number of judgements (those go to an adjudicator or a second reviewer, below); a decisive "
        "verdict needs no second reading.",
        "uniform_share": f"Under the adaptive policy, {config.uniform_share:.0%} of the items are still drawn at "
        "random for a second review; agreement between reviewers is measured on those.",
        "adjudicate_above": _adjudicate_above_explained(config.adjudicate_above),
        "relevance_gap": f"Two reviews that disagree on the verdict, or whose GP relevance differs by "
        f"{config.relevance_gap} or more, go to an adjudicator.",
        "gold_rate": f"{config.gold_rate:.0%} of the requests for a next item are answered with a gold item, to "
        "measure each reviewer's accuracy; gold answers never count as reviews.",
        "gold_min_accuracy": f"A reviewer who gets fewer than {config.gold_min_accuracy:.0%} of gold items right is "
        "flagged on this page.",
        "gold_min_answers": f"Nobody is flagged before {config.gold_min_answers} gold answers: fewer say too little.",
    }


def _adjudicate_above_explained(value: float) -> str:
    if value <= 0:
        who = "every item the model picks goes straight to an adjudicator"
    elif value > 1 - 1e-9:
        who = "the items the model picks go to a second reviewer, never straight to an adjudicator"
    else:
        who = (
            f"an item the model picks goes straight to an adjudicator when its first verdict is at least {value:.0%} "
            "likely wrong, else to a second reviewer"
        )
    return (
        f"Under the adaptive policy, {who}. One adjudication catches more wrong verdicts than a second review, which "
        "needs an adjudication as well whenever it disagrees; raise it when adjudicators are few."
    )


def gold_flag_rule(config: VettingConfig | None = None) -> str:
    """The rule that flags a reviewer, with today's values, for the pages that show the flag (usability F24: the
    reviewer tables said "flagged" or "—" without the threshold that decided it)."""
    config = config or VettingConfig.load()
    return (
        f"A reviewer is flagged when fewer than {config.gold_min_accuracy:.0%} of their gold answers are right, "
        f"once they have given at least {config.gold_min_answers} gold answers (fewer say too little)."
    )


def gold_statistics(user) -> dict:
    """The gold items now: how many (handed out or stopped), per type and expected verdict, and per item how
    often reviewers agreed with its expected verdict. An organizer who also reviews is not shown the gold items
    they were given (they would learn which of their items were gold)."""
    golds = GoldItem.objects.exclude(conflict_of_interest_q(user, "item__"))
    per_type = golds.values("item__qa_type").annotate(
        n=Count("id"), active=Count("id", filter=Q(active=True)), planted=Count("id", filter=Q(planted_error=True))
    )
    rows = (
        golds.select_related("item")
        .annotate(answers_n=Count("answers"), right=Count("answers", filter=Q(answers__is_correct=True)))
        .order_by("-active", "-created_at")[:100]
    )
    items = []
    for gold in rows:
        gold.agreement = round(100 * gold.right / gold.answers_n) if gold.answers_n else None
        items.append(gold)
    answers = sum(g.answers_n for g in items)
    right = sum(g.right for g in items)
    return {
        "count": golds.count(),
        "active": golds.filter(active=True).count(),
        "per_type": [
            {"label": qa_type_label(row["item__qa_type"]), **row}
            for row in sorted(per_type, key=lambda r: r["item__qa_type"])
        ],
        "items": items,
        "answers": answers,
        "agreement": round(100 * right / answers) if answers else None,
    }


def items_missing_excerpt():
    """Items that should have a source excerpt and have none: the queryset form of
    ``annotation.qa_types.expects_source_excerpt`` (items of a benchmark written without sources lack nothing)."""
    return QAItem.objects.filter(missing_excerpt_q())


def missing_excerpts(*, limit: int = 50) -> dict:
    """Items whose passage was never imported (reviewers cannot check them against the textbook) and passages
    imported with no text."""
    items = items_missing_excerpt().filter(gold__isnull=True).order_by("id")
    empty = SourcePassage.objects.annotate(chars=Length(Trim("text"))).filter(chars=0).order_by("paragraph_id")
    return {
        "items": list(items.only("uid", "qa_type", "paragraph_id")[:limit]),
        "item_count": items.count(),
        "passages": list(empty[:limit]),
        "passage_count": empty.count(),
        "reviews_without_excerpt": Review.objects.filter(item__in=items_missing_excerpt()).count(),
    }


@dataclass(frozen=True)
class RepairItem:
    """An item of the repair list: how many reviewers gave each fixable reason for not being able to tell."""

    item: QAItem
    reasons: tuple[tuple[str, int], ...]  # (the reason in words, how many reviewers gave it), most given first

    @property
    def reviewers(self) -> int:
        return sum(n for _, n in self.reasons)


def repair_list(user, *, limit: int = 50) -> dict:
    """The items reviewers could not judge for a reason an organizer can fix (``annotation.workflow.FIXABLE_REASONS``:
    the excerpt, the question's wording, outdated medicine), most reviewers first, with how many gave each reason.

    Every review counts, set-aside ones too (what they say of the item still holds). Items ``user`` was given to
    review are left out: the list tells what other reviewers answered (blinding, as ``gold_statistics``)."""
    fixable = Review.objects.filter(cannot_tell_reason__in=FIXABLE_REASONS).exclude(
        conflict_of_interest_q(user, "item__")
    )
    per_item = fixable.values("item_id").annotate(n=Count("reviewer", distinct=True)).order_by("-n", "item_id")
    top = [row["item_id"] for row in per_item[:limit]]
    counts: dict[int, list[tuple[str, int]]] = {pk: [] for pk in top}
    per_reason = fixable.filter(item_id__in=top).values("item_id", "cannot_tell_reason")
    for row in per_reason.annotate(n=Count("reviewer", distinct=True)).order_by("-n", "cannot_tell_reason"):
        counts[row["item_id"]].append((str(CannotTellReason(row["cannot_tell_reason"]).label), row["n"]))
    items = QAItem.objects.only("uid", "qa_type", "status", "question").in_bulk(top)
    return {
        "items": [RepairItem(item=items[pk], reasons=tuple(counts[pk])) for pk in top],
        "item_count": per_item.count(),
    }


def _count_map(rows, key: str) -> dict:
    out: dict = {}
    for row in rows:
        out.setdefault(row[key], {})[row["status"]] = row["n"]
    return out


def dispute_resolution_hours() -> dict:
    resolved = Dispute.objects.exclude(resolved_at=None).annotate(took=F("resolved_at") - F("created_at"))
    hours = [r.took.total_seconds() / 3600 for r in resolved.only("created_at", "resolved_at")]
    return {
        "resolved": len(hours),
        "mean_hours": round(statistics.fmean(hours), 2) if hours else None,
        "median_hours": round(statistics.median(hours), 2) if hours else None,
    }


def reviewer_quality() -> list[dict]:
    """Per reviewer: real reviews, gold accuracy (flagged below the threshold), adjudication overturn rate."""
    config = VettingConfig.load()
    people: dict[int, dict] = {}

    def row(pk, email):
        return people.setdefault(
            pk,
            {
                "reviewer_id": pk,
                "email": email,
                "reviews": 0,
                "primary": 0,
                "secondary": 0,
                "gold_answers": 0,
                "gold_correct": 0,
                "adjudicated": 0,
                "overturned": 0,
            },
        )

    for r in Review.objects.values("reviewer_id", "reviewer__email", "stage").annotate(n=Count("id")):
        entry = row(r["reviewer_id"], r["reviewer__email"])
        entry["reviews"] += r["n"]
        entry[r["stage"]] += r["n"]
    for g in GoldAnswer.objects.values("reviewer_id", "reviewer__email").annotate(
        n=Count("id"), ok=Count("id", filter=Q(is_correct=True))
    ):
        entry = row(g["reviewer_id"], g["reviewer__email"])
        entry["gold_answers"], entry["gold_correct"] = g["n"], g["ok"]
    adjudicated = Review.objects.filter(item__final_source="adjudication")
    for a in adjudicated.values("reviewer_id", "reviewer__email").annotate(
        n=Count("id"), over=Count("id", filter=~Q(verdict=F("item__final_verdict")))
    ):
        entry = row(a["reviewer_id"], a["reviewer__email"])
        entry["adjudicated"], entry["overturned"] = a["n"], a["over"]
    for entry in people.values():
        answers = entry["gold_answers"]
        entry["gold_accuracy"] = round(entry["gold_correct"] / answers, 3) if answers else None
        entry["flagged"] = answers >= config.gold_min_answers and entry["gold_accuracy"] < config.gold_min_accuracy
        entry["overturn_rate"] = round(entry["overturned"] / entry["adjudicated"], 3) if entry["adjudicated"] else None
    # people are shown by name (their e-mail when they gave none); the e-mail stays for downloads and look-ups
    for person in User.objects.filter(pk__in=people).only("first_name", "last_name", "email"):
        people[person.pk]["name"] = str(person)
    return sorted(people.values(), key=lambda e: (e.get("name", e["email"]).casefold(), e["email"]))


def vetting_progress() -> dict:
    """Organizer overview: items by status per batch and type, work per stage, double-review share, issues."""
    now = timezone.now()
    statuses = [s.value for s in ItemStatus]
    real = QAItem.objects.filter(gold__isnull=True)
    by_batch = _count_map(real.values("batch_id", "status").annotate(n=Count("id")), "batch_id")
    batches = [
        {
            "id": b.pk,
            "name": b.name,
            "paused": b.paused,
            "priority": b.priority,
            "counts": by_batch.get(b.pk, {}),
            "total": sum(by_batch.get(b.pk, {}).values()),
            "cells": [by_batch.get(b.pk, {}).get(s, 0) for s in statuses],
        }
        for b in ImportBatch.objects.order_by("-priority", "-created_at")
    ]
    by_type = _count_map(real.values("qa_type", "status").annotate(n=Count("id")), "qa_type")
    primary_done = Review.objects.filter(JUDGING_REVIEW, stage=Stage.PRIMARY).count()
    drawn = real.filter(second_review=True).count()
    return {
        "statuses": statuses,
        "batches": batches,
        "types": [
            {"qa_type": t, "counts": c, "total": sum(c.values()), "cells": [c.get(s, 0) for s in statuses]}
            for t, c in sorted(by_type.items())
        ],
        "stages": {
            "primary_reviews": primary_done,
            "secondary_reviews": Review.objects.filter(JUDGING_REVIEW, stage=Stage.SECONDARY).count(),
            "adjudications": Adjudication.objects.count(),
            "live_leases": Assignment.objects.filter(status=Assignment.Status.ACTIVE, expires_at__gt=now).count(),
        },
        "double_review_share": round(drawn / primary_done, 3) if primary_done else None,
        "second_share_target": VettingConfig.load().second_share,
        "open_disputes": Dispute.objects.filter(status=Dispute.Status.OPEN).count(),
        "adjudication_blocked": list(adjudication_blocked().values_list("uid", flat=True)[:50]),
        # of those, the ones held for an open issue: decided, never sent back to review
        "adjudication_blocked_held": list(
            adjudication_blocked().filter(status=ItemStatus.HELD).values_list("uid", flat=True)[:50]
        ),
        "open_feedback": FeedbackNote.objects.filter(status=FeedbackNote.Status.OPEN).count(),
        "dispute_resolution": dispute_resolution_hours(),
        "people": reviewer_quality(),
        "gold_flag_rule": gold_flag_rule(),
        "avg_review_seconds": Review.objects.aggregate(v=Avg("server_seconds"))["v"],
    }
