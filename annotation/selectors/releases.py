"""What the vetted benchmark is made of, per QA type (the paper's Table 1 from live data): shown before a freeze and
recorded in every release."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Dispute, FeedbackNote, QAItem
from annotation.qa_types import CLINIQLINK_TYPES
from annotation.selectors.review import judging_reviews
from annotation.workflow import ItemStatus

#: How many independent reviews (first and second, not gold answers) an item has: "double reviewed" is two.
#: Counted per item through the reviews' item index: a join with GROUP BY and COUNT(DISTINCT) sorted every review of
#: every selected item on disk at 50,000 items.
REVIEW_COUNT = Coalesce(
    Subquery(
        judging_reviews().filter(item=OuterRef("pk")).order_by().values("item").annotate(n=Count("pk")).values("n"),
        output_field=IntegerField(),
    ),
    0,
)


def composition_report(*, included_ids: set[int] | None = None) -> dict:
    """The paper's Table 1 from live data: per QA type, vetted items rated high (GP relevance 5) and low (<5),
    the subset with two independent reviews, the share double reviewed; plus feedback, disputes, held items."""

    vetted = QAItem.objects.filter(final_relevance__isnull=False, gold__isnull=True).annotate(n_reviews=REVIEW_COUNT)
    rows: dict[str, dict[str, Any]] = {}
    for qa_type, relevance, n_reviews, pk in vetted.values_list("qa_type", "final_relevance", "n_reviews", "pk"):
        row = rows.setdefault(
            qa_type,
            dict.fromkeys(["high", "low", "total", "double_high", "double_low", "double_total", "in_release"], 0),
        )
        assert relevance is not None  # vetted: filtered on final_relevance__isnull=False
        level = "high" if relevance >= 5 else "low"
        row[level] += 1
        row["total"] += 1
        if n_reviews >= 2:
            row[f"double_{level}"] += 1
            row["double_total"] += 1
        if included_ids is not None and pk in included_ids:
            row["in_release"] += 1
    ordered = {t.value: rows[t.value] for t in CLINIQLINK_TYPES if t.value in rows} | {
        k: v for k, v in rows.items() if k not in {t.value for t in CLINIQLINK_TYPES}
    }
    totals: dict[str, Any] = dict.fromkeys(
        ["high", "low", "total", "double_high", "double_low", "double_total", "in_release"], 0
    )
    for row in ordered.values():
        row["pct_double"] = round(100 * row["double_total"] / row["total"], 1) if row["total"] else None
        for key in totals:
            totals[key] += row[key]
    totals["pct_double"] = round(100 * totals["double_total"] / totals["total"], 1) if totals["total"] else None
    return {
        "by_type": ordered,
        "totals": totals,
        "feedback_notes": FeedbackNote.objects.count(),
        "open_feedback_notes": FeedbackNote.objects.filter(status=FeedbackNote.Status.OPEN).count(),
        "disputes": Dispute.objects.count(),
        "open_disputes": Dispute.objects.filter(status=Dispute.Status.OPEN).count(),
        "held_items": QAItem.objects.filter(status=ItemStatus.HELD).count(),
    }


REPORT_COLUMNS = [
    "qa_type",
    "high",
    "low",
    "total",
    "double_high",
    "double_low",
    "double_total",
    "pct_double",
    "in_release",
]


def report_rows(report: dict) -> list[dict]:
    rows = [{"qa_type": qa_type, **row} for qa_type, row in report["by_type"].items()]
    return rows + [{"qa_type": "total", **report["totals"]}]
