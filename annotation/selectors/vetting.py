"""Read-side figures of the organizer's vetting dashboard that :func:`vetting_progress` does not give: progress
as shares (for the bars), the settings in words, the gold items' statistics and the items without an excerpt."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q
from django.db.models.functions import Length, Trim

from annotation.models import QAItem, SourcePassage
from annotation.models.review import Adjudication, GoldItem, Review, VettingConfig
from annotation.qa_types import qa_type_label
from annotation.selectors.review import conflict_of_interest_q
from annotation.workflow import ItemStatus, Stage

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
    reviews due), from :func:`annotation.selectors.review.vetting_progress` plus three counts."""

    def done(counts: dict) -> int:
        return sum(counts.get(s, 0) for s in DONE_STATUSES)

    real = QAItem.objects.filter(gold__isnull=True)
    total = real.count()
    primary_done = real.filter(reviews__stage=Stage.PRIMARY).values("pk").distinct().count()
    drawn = real.filter(second_review=True)
    second_done = drawn.filter(reviews__stage=Stage.SECONDARY).values("pk").distinct().count()
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


def config_explained(config: VettingConfig) -> dict[str, str]:
    """Each vetting setting in one sentence, with its current value."""
    return {
        "seed": "Which items get a second review is drawn as sha256(seed:uid) < share, so anyone with this seed "
        "can re-derive the draw; a new seed changes only the draws still to come.",
        "second_share": f"{config.second_share:.0%} of the items are drawn, at their first review, for an "
        "independent second review by someone else.",
        "relevance_gap": f"Two reviews that disagree on the verdict, or whose GP relevance differs by "
        f"{config.relevance_gap} or more, go to an adjudicator.",
        "gold_rate": f"{config.gold_rate:.0%} of the requests for a next item are answered with a gold item, to "
        "measure each reviewer's accuracy; gold answers never count as reviews.",
        "gold_min_accuracy": f"A reviewer who gets fewer than {config.gold_min_accuracy:.0%} of gold items right is "
        "flagged on this page.",
        "gold_min_answers": f"Nobody is flagged before {config.gold_min_answers} gold answers: fewer say too little.",
    }


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


def missing_excerpts(*, limit: int = 50) -> dict:
    """Items whose passage was never imported (reviewers cannot check them against the textbook) and passages
    imported with no text."""
    items = QAItem.objects.filter(passage__isnull=True, gold__isnull=True).order_by("id")
    empty = SourcePassage.objects.annotate(chars=Length(Trim("text"))).filter(chars=0).order_by("paragraph_id")
    return {
        "items": list(items.only("uid", "qa_type", "paragraph_id")[:limit]),
        "item_count": items.count(),
        "passages": list(empty[:limit]),
        "passage_count": empty.count(),
        "reviews_without_excerpt": Review.objects.filter(item__passage__isnull=True).count(),
    }
