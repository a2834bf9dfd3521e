"""Blinding per item and per person, whatever roles the person holds: the one rule every queue asks.

Three questions, each about one person and one item, answered from what the portal showed that person of the item:

- **conflict of interest** (``annotation.selectors.review.conflict_of_interest_q``): they were given the item to
  review, so they may not adjudicate it, read its other reviews or settle its issues;
- **barred from reviewing it** (:func:`review_barred_q`, and :func:`review_free_sql` for the review queue's
  hand-written statement): they were given it to review before (nobody reviews an item twice), or they read its
  other reviews (on the adjudication page or API, the organizers' item page or API, a dispute's page), so a review
  of theirs would not be independent;
- **seen its reference answer** (:func:`reference_seen_q`): any page showed them the item's answer, which is the
  reference answer of every preference study (``metrics.gold.gold_text``): a review lease of any stage (gold
  included), nugget work on the item (a writing, validating or settling lease, a version they wrote, validated or
  decided), an adjudication, and the pages that leave no other record (``ItemExposure``). Such a person would
  recognise the reference among the answers, so a study that includes it never hands them the question
  (``ranking.services.queue``).

What already has a record is read from it (leases, nugget tasks and versions, adjudications), so the review path
writes nothing new; what does not is an :class:`~annotation.models.ItemExposure` row, written by
``annotation.services.blinding.exposure_record`` from the pages that show it.

``user`` may be a user, a user's id or an ``OuterRef`` to one (a query over many people, e.g. a study's rankers).
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from annotation.models import Adjudication, Assignment, ItemExposure, NuggetSet, NuggetTask, QAItem
from annotation.selectors.review import conflict_of_interest_q

REVIEWS, REFERENCE = ItemExposure.Kind.REVIEWS.value, ItemExposure.Kind.REFERENCE.value


def _exposures(user, kind: str, prefix: str):
    return ItemExposure.objects.filter(person=user, kind=kind, item=OuterRef(f"{prefix}pk"))


def review_barred_q(user, prefix: str = "") -> Q:
    """``Q`` true for items ``user`` must not be given to review (``prefix`` for related lookups, e.g.
    ``"item__"``): they were given it before (any stage, gold included), or they read its other reviews."""
    return conflict_of_interest_q(user, prefix) | Q(Exists(_exposures(user, REVIEWS, prefix)))


def review_free_sql(*, item: str, person: str) -> str:
    """:func:`review_barred_q` negated, as SQL for the review queue's hand-written candidate statement (``item``:
    the item id's expression, ``person``: the reviewer's). Each look-up is by the item's id through an index and
    stays a per-item subplan (``OFFSET 0``: PostgreSQL does not turn such a subquery into a join; why that matters is
    in ``annotation.services.queue._sql`` and tests/annotation/test_queue_plan.py)."""
    assignment, exposure = Assignment._meta.db_table, ItemExposure._meta.db_table
    return (
        f"NOT EXISTS (SELECT 1 FROM {assignment} m WHERE m.item_id = {item} AND m.reviewer_id = {person} OFFSET 0)"
        f" AND NOT EXISTS (SELECT 1 FROM {exposure} x WHERE x.item_id = {item} AND x.person_id = {person}"
        f" AND x.kind = '{REVIEWS}' OFFSET 0)"
    )


def reference_seen_q(user, prefix: str = "") -> Q:
    """``Q`` true for items whose answer (the reference of every study) some page showed ``user``."""
    item = OuterRef(f"{prefix}pk")
    nugget_versions = NuggetSet.objects.filter(item=item).filter(Q(created_by=user) | Q(validated_by=user))
    return (
        Q(Exists(Assignment.objects.filter(reviewer=user, item=item)))
        | Q(Exists(NuggetTask.objects.filter(person=user, item=item)))
        | Q(Exists(nugget_versions))
        | Q(Exists(Adjudication.objects.filter(adjudicator=user, item=item)))
        | Q(Exists(_exposures(user, REFERENCE, prefix)))
    )


def has_seen_reference(user, item: QAItem) -> bool:
    return QAItem.objects.filter(pk=item.pk).filter(reference_seen_q(user)).exists()
