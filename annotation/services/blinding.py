"""Remembering what a page showed a person of an item (``annotation.models.ItemExposure``), and the doors of the
pages that show an item's other reviews and its answer: each refuses by the rules, then records what it shows.

The rule that reads the records is ``annotation.selectors.blinding``. Recording happens before the page is built and
is kept even if the page then fails: a person who may have seen something is treated as having seen it.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils import timezone

from annotation.models import Dispute, ItemExposure, QAItem
from annotation.selectors.adjudication import item_for_adjudication
from annotation.selectors.blinding import REFERENCE, REVIEWS
from annotation.selectors.review import item_unblinded_for
from portal.models import User

# A page that shows an item's reviews, history or disputes shows its question and answer too.
REVIEWS_AND_ANSWER = (REVIEWS, REFERENCE)


def exposure_record(*, person: User, item: QAItem, kinds: Iterable[str], where: str) -> None:
    """Remember that ``person`` was shown ``kinds`` of ``item`` on ``where`` (a page or endpoint, in words); only
    the first time counts (``INSERT … ON CONFLICT DO NOTHING``), so a page may call it on every request."""
    now = timezone.now()
    rows = [ItemExposure(person=person, item=item, kind=kind, first_at=now, where=where[:40]) for kind in kinds]
    ItemExposure.objects.bulk_create(rows, ignore_conflicts=True)


def adjudication_item_open(*, user: User, uid: str, where: str) -> QAItem:
    """The item of the adjudication page or API (any method): refused unless it waits for adjudication and ``user``
    is not conflicted on it (``item_for_adjudication``); what the page shows (the reviews compared, the item's
    history and answer) is remembered."""
    item = item_for_adjudication(user, uid)
    exposure_record(person=user, item=item, kinds=REVIEWS_AND_ANSWER, where=where)
    return item


def item_page_open(*, user: User, uid: str, where: str) -> QAItem:
    """The item of the organizers' item page or API (any state): refused to a person conflicted on it; its story,
    status and answer shown are remembered."""
    item = item_unblinded_for(user, uid)
    exposure_record(person=user, item=item, kinds=REVIEWS_AND_ANSWER, where=where)
    return item


def dispute_shown_record(*, user: User, dispute: Dispute, with_answer: bool, where: str) -> None:
    """A dispute's page or API showed ``user`` someone else's judgement of the item (the dispute's text and thread),
    and the page its answer too (``with_answer``). One's own dispute adds nothing: its author was given the item."""
    if dispute.raised_by_id == user.pk:
        return
    kinds = REVIEWS_AND_ANSWER if with_answer else (REVIEWS,)
    exposure_record(person=user, item=dispute.item, kinds=kinds, where=where)
