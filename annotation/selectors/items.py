"""Read-side queries for items (pages, API and exports call these, never build querysets themselves)."""

from __future__ import annotations

from django.contrib.postgres.search import TrigramWordSimilarity
from django.db.models import Count, Q, QuerySet

from annotation.models import GoldItem, ImportBatch, QAItem
from annotation.qa_types import BENCHMARKS_WITHOUT_SOURCES
from annotation.selectors.review import reviews_visible_to
from annotation.workflow import ItemStatus


def missing_excerpt_q() -> Q:
    """Items that should have a source excerpt and have none (the query form of
    ``annotation.qa_types.expects_source_excerpt``): items of a benchmark written without sources lack nothing."""
    return Q(passage__isnull=True) & ~Q(benchmark__in=BENCHMARKS_WITHOUT_SOURCES)


def item_list(
    *, qa_type: str = "", status: str = "", batch: int | str | None = None, q: str = "", excerpt: str = ""
) -> QuerySet[QAItem]:
    """Items filtered by type, status, batch and excerpt ("missing" / "present"), and searched by ``q``: a
    substring of the question, the answer or the item id (case-insensitive; ``%`` and ``_`` are plain
    characters), an exact paragraph id, or a question that is close in wording (trigram similarity)."""
    items = QAItem.objects.select_related("batch", "passage")
    if excerpt == "missing":
        items = items.filter(missing_excerpt_q())
    elif excerpt == "present":
        items = items.filter(passage__isnull=False)
    if qa_type:
        items = items.filter(qa_type=qa_type)
    if status:
        items = items.filter(status=status)
    if batch:
        items = items.filter(batch_id=batch)
    if q:
        q = q.strip()
        text = (
            Q(uid__icontains=q)
            | Q(paragraph_id=q)
            | Q(question__icontains=q)
            | Q(answer__icontains=q)
            | Q(correct_answer__icontains=q)
        )
        items = items.filter(text) | items.annotate(similarity=TrigramWordSimilarity(q, "question")).filter(
            similarity__gt=0.6
        )
    return items.order_by("id").distinct()


def item_counts_by_status() -> dict[str, int]:
    """Items per status that has any, in the workflow's order (imported → … → verified, rejected, held)."""
    counts = dict(QAItem.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    return {status: counts[status] for status in ItemStatus.values if status in counts}


def batch_list() -> QuerySet[ImportBatch]:
    return ImportBatch.objects.order_by("-created_at")


def item_judgements(user, item: QAItem) -> dict:
    """What the organizers' item page shows beside the story: the reviews ``user`` may read (with their comments,
    through :func:`reviews_visible_to`, so blinding has one home), the gold marking with its answers' tally, and the
    item's disputes, oldest first. Callers have refused people conflicted on the item already."""
    gold = GoldItem.objects.filter(item=item).select_related("created_by").first()
    tally = gold.answers.aggregate(n=Count("id"), right=Count("id", filter=Q(is_correct=True))) if gold else None
    return {
        "reviews": reviews_visible_to(user, item).order_by("created_at", "id"),
        "gold": gold,
        "gold_tally": tally,
        "disputes": item.disputes.select_related("raised_by", "resolver").order_by("created_at", "id"),
    }
