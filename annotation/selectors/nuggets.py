"""Read side of nuggets: the validated lists studies and releases use, an item's versions, the overview counts."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from django.db.models import Count, Exists, OuterRef, Prefetch, QuerySet
from django.utils import timezone

from annotation.models import Nugget, NuggetSet, NuggetTask, QAItem
from annotation.nugget_workflow import NUGGET_QA_TYPES, OPEN_STATES
from metrics.nuggets import Nugget as NuggetFact
from portal.roles import can_adjudicate


def _with_nuggets(sets: QuerySet[NuggetSet]) -> QuerySet[NuggetSet]:
    return sets.prefetch_related(Prefetch("nuggets", queryset=Nugget.objects.order_by("position")))


def validated_nuggets(item_ids: Iterable[int]) -> dict[int, NuggetSet]:
    """``{item_id: its validated NuggetSet}`` for the items that have one (``set.nuggets.all()`` is prefetched, in
    order). The version studies, the matcher and releases use; items without a validated list are left out."""
    sets = _with_nuggets(NuggetSet.objects.filter(item_id__in=list(item_ids), status=NuggetSet.Status.VALIDATED))
    return {nugget_set.item_id: nugget_set for nugget_set in sets}


def nugget_facts(nugget_set: NuggetSet) -> list[NuggetFact]:
    """A version's nuggets as the pure ``metrics.nuggets.Nugget`` the scores and the matcher take."""
    return [NuggetFact(n.key, n.text, n.importance) for n in nugget_set.nuggets.all()]


def validated_nugget_facts(item_ids: Iterable[int]) -> dict[int, list[NuggetFact]]:
    """``{item_id: [Nugget, …]}``: :func:`validated_nuggets` as plain facts."""
    return {item_id: nugget_facts(s) for item_id, s in validated_nuggets(item_ids).items()}


def nugget_set_as_json(nugget_set: NuggetSet) -> list[dict[str, str]]:
    """The list as the files write it: ``[{"id", "text", "importance"}]``."""
    return [{"id": n.key, "text": n.text, "importance": n.importance} for n in nugget_set.nuggets.all()]


def item_nugget_versions(item: QAItem) -> list[NuggetSet]:
    """Every version of the item's nuggets, newest first, with their nuggets and people."""
    return list(
        _with_nuggets(NuggetSet.objects.filter(item=item))
        .select_related("created_by", "validated_by", "based_on")
        .order_by("-version")
    )


def open_versions(item: QAItem) -> list[NuggetSet]:
    """The versions of the item's current round (a draft, or the two disputed ones), oldest first."""
    return list(
        _with_nuggets(NuggetSet.objects.filter(item=item, status__in=OPEN_STATES))
        .select_related("created_by", "item")
        .order_by("version")
    )


def disputed_items() -> QuerySet[QAItem]:
    """Items whose nuggets wait for an adjudicator, oldest disagreement first."""
    disputed = NuggetSet.objects.filter(item=OuterRef("pk"), status=NuggetSet.Status.DISPUTED)
    return QAItem.objects.filter(Exists(disputed)).order_by("pk")


def items_needing_nuggets() -> QuerySet[QAItem]:
    """Verified items of the free-text types that have no nugget version at all."""
    return QAItem.objects.filter(status="verified", qa_type__in=NUGGET_QA_TYPES).exclude(
        Exists(NuggetSet.objects.filter(item=OuterRef("pk")))
    )


def nugget_overview() -> dict:
    """Counts for the organizers' overview: versions per status, items needing work, live leases."""
    by_status = dict(NuggetSet.objects.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    now = timezone.now()
    live = NuggetTask.objects.filter(status=NuggetTask.Status.ACTIVE, expires_at__gt=now)
    return {
        "statuses": [(label, by_status.get(value, 0)) for value, label in NuggetSet.Status.choices],
        "items_validated": by_status.get(NuggetSet.Status.VALIDATED, 0),
        "items_to_write": items_needing_nuggets().count(),
        "items_to_validate": NuggetSet.objects.filter(status=NuggetSet.Status.DRAFT).count(),
        "items_to_adjudicate": disputed_items().count(),
        "leases_writing": live.filter(stage=NuggetTask.Stage.WRITE).count(),
        "leases_validating": live.filter(stage=NuggetTask.Stage.VALIDATE).count(),
    }


@dataclass(frozen=True)
class TextPiece:
    """A run of words in a compared nugget text: ``kind`` "same", "added" (only in the right version) or "removed"
    (only in the left one). The template escapes ``text``; no markup is built here."""

    kind: str
    text: str


def text_pieces(left: str, right: str) -> tuple[list[TextPiece], list[TextPiece]]:
    """Word-level difference of two nugget texts, as the pieces of each side: the left side's removed words and
    the right side's added words are marked, so an appended sentence or a changed dose stands out."""
    left_words, right_words = left.split(), right.split()
    left_pieces: list[TextPiece] = []
    right_pieces: list[TextPiece] = []
    matcher = difflib.SequenceMatcher(a=left_words, b=right_words, autojunk=False)
    for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if tag == "equal":
            left_pieces.append(TextPiece("same", " ".join(left_words[a_start:a_end])))
            right_pieces.append(TextPiece("same", " ".join(right_words[b_start:b_end])))
            continue
        if a_end > a_start:
            left_pieces.append(TextPiece("removed", " ".join(left_words[a_start:a_end])))
        if b_end > b_start:
            right_pieces.append(TextPiece("added", " ".join(right_words[b_start:b_end])))
    return left_pieces, right_pieces


@dataclass(frozen=True)
class NuggetComparison:
    """One row of two versions side by side, matched by nugget id. ``moved``: its place among the nuggets both
    versions share changed (a nugget added or dropped above it does not move it)."""

    key: str
    left: Nugget | None
    right: Nugget | None
    moved: bool = False

    @property
    def changes(self) -> list[str]:
        """What differs, each in a few words (empty when nothing)."""
        if self.left is None:
            return ["added"]
        if self.right is None:
            return ["dropped"]
        changes = []
        if self.left.text != self.right.text:
            changes.append("text changed")
        if self.left.importance != self.right.importance:
            changes.append("importance changed")
        if self.moved:
            changes.append("moved")
        return changes

    @property
    def change(self) -> str:
        """What differs, in words ("" when nothing)."""
        return ", ".join(self.changes)

    @cached_property
    def pieces(self) -> tuple[list[TextPiece], list[TextPiece]]:
        """Each side's text in pieces, the differing words marked (one unmarked piece where a side is alone)."""
        if self.right is None:
            return ([TextPiece("same", self.left.text)] if self.left else []), []
        if self.left is None:
            return [], [TextPiece("same", self.right.text)]
        return text_pieces(self.left.text, self.right.text)

    @property
    def left_pieces(self) -> list[TextPiece]:
        return self.pieces[0]

    @property
    def right_pieces(self) -> list[TextPiece]:
        return self.pieces[1]


def nuggets_compared(left: NuggetSet, right: NuggetSet) -> list[NuggetComparison]:
    """The two versions' nuggets matched by id, in the left version's order, then the right's additions."""
    left_nuggets = list(left.nuggets.all())
    right_nuggets = list(right.nuggets.all())
    right_by_key = {n.key: n for n in right_nuggets}
    # Order among the shared nuggets only: inserting a nugget above n2 shifts n2's position, not its place.
    shared = set(right_by_key) & {n.key for n in left_nuggets}
    left_rank = {key: rank for rank, key in enumerate(n.key for n in left_nuggets if n.key in shared)}
    right_rank = {key: rank for rank, key in enumerate(n.key for n in right_nuggets if n.key in shared)}
    rows = [
        NuggetComparison(
            n.key, n, right_by_key.pop(n.key, None), moved=n.key in shared and left_rank[n.key] != right_rank[n.key]
        )
        for n in left_nuggets
    ]
    rows += [NuggetComparison(key, None, n) for key, n in right_by_key.items()]
    return rows


def nugget_work_waiting(user) -> dict[str, int]:
    """The nugget work waiting for one expert (the home page's next step): drafts by others to validate, items
    without nuggets to write, and for adjudicators the disagreements."""
    waiting = {
        "to_validate": NuggetSet.objects.filter(status=NuggetSet.Status.DRAFT).exclude(created_by=user).count(),
        "to_write": items_needing_nuggets().count(),
    }
    if can_adjudicate(user):
        waiting["to_settle"] = disputed_items().count()
    return waiting
