"""Drafts of the review page kept on the server, per person and item, so that a reload or another device finds them.

Private to their owner: read and written only through the owner's own live lease; never exported; deleted when the
lease ends in a review, a dispute or a feedback note.
"""

from __future__ import annotations

from annotation.models import Assignment, ReviewDraft
from annotation.workflow import CANNOT_TELL_REASONS_TEXT, RELEVANCE_VALUES, VERDICTS_TEXT, CannotTellReason, Verdict
from portal.errors import Conflict, DomainError, NotFound
from portal.models import User

# What the review page keeps (see review.js). Text fields are capped; anything else is refused.
_TEXT_FIELDS = ("comment", "category", "disputeText", "quote", "feedback")
_TEXT_LIMIT = 20_000


def _own_assignment(*, reviewer: User, assignment_id: int) -> Assignment:
    assignment = Assignment.objects.filter(pk=assignment_id, reviewer=reviewer).first()
    if assignment is None:
        raise NotFound("No such lease of yours.")  # someone else's lease: not even its existence is told
    return assignment


def review_draft_clean(data: object) -> dict:
    """Check a draft's shape; returns the cleaned dict or raises :class:`DomainError` naming the field."""
    if not isinstance(data, dict):
        raise DomainError("the draft must be a JSON object", code="invalid_draft")
    unknown = set(data) - {"verdict", "reason", "relevance", "active", "saved", *_TEXT_FIELDS}
    if unknown:
        raise DomainError(f"unknown draft field: {sorted(unknown)[0]}", code="invalid_draft")
    clean: dict = {}
    verdict = data.get("verdict") or ""
    if verdict not in ("", *Verdict.values):
        raise DomainError(f"verdict must be {VERDICTS_TEXT}", code="invalid_draft")
    clean["verdict"] = verdict
    reason = data.get("reason") or ""  # why the reviewer cannot tell: a draft may hold one before the verdict
    if reason not in ("", *CannotTellReason.values):
        raise DomainError(f"reason must be {CANNOT_TELL_REASONS_TEXT}", code="invalid_draft")
    clean["reason"] = reason
    relevance = str(data.get("relevance") or "")
    if relevance not in ("", *map(str, RELEVANCE_VALUES)):
        raise DomainError("relevance must be a whole number from 1 to 5", code="invalid_draft")
    clean["relevance"] = relevance
    for name in _TEXT_FIELDS:
        value = data.get(name) or ""
        if not isinstance(value, str) or len(value) > _TEXT_LIMIT:
            raise DomainError(f"{name} must be text of at most {_TEXT_LIMIT} characters", code="invalid_draft")
        clean[name] = value
    for name in ("active", "saved"):
        value = data.get(name) or 0
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value < 1e15:
            raise DomainError(f"{name} must be a number", code="invalid_draft")
        clean[name] = value
    return clean


def review_draft_get(*, reviewer: User, assignment_id: int) -> dict | None:
    """The owner's draft for the lease's item, or ``None``."""
    assignment = _own_assignment(reviewer=reviewer, assignment_id=assignment_id)
    draft = ReviewDraft.objects.filter(reviewer=reviewer, item_id=assignment.item_id).first()
    return draft.data if draft else None


def review_draft_save(*, reviewer: User, assignment_id: int, data: object) -> dict:
    """Store the owner's draft for the lease's item (replacing the previous one). Refused once the lease ended, so a
    save arriving after the review was sent cannot bring the draft back."""
    clean = review_draft_clean(data)
    assignment = _own_assignment(reviewer=reviewer, assignment_id=assignment_id)
    if assignment.status != Assignment.Status.ACTIVE:
        raise Conflict("This lease has ended; the draft was not kept.", code="lease_ended")
    ReviewDraft.objects.update_or_create(reviewer=reviewer, item_id=assignment.item_id, defaults={"data": clean})
    return clean


def review_draft_clear(*, reviewer: User, assignment_id: int) -> None:
    """Drop the owner's draft for the lease's item (its review, dispute or feedback note was stored)."""
    item = Assignment.objects.filter(pk=assignment_id, reviewer=reviewer).values("item_id")
    ReviewDraft.objects.filter(reviewer=reviewer, item_id__in=item).delete()
