"""Disputes and feedback notes: filing one holds the item; closing the last open one releases the hold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from uuid import UUID

from django.db import transaction
from django.utils import timezone
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString

from annotation.models import Assignment, Dispute, DisputeComment, FeedbackNote, QAItem
from annotation.selectors.disputes import item_has_open_issue, open_issues
from annotation.selectors.review import conflict_of_interest_refuse
from annotation.services.review import assignment_lock_own
from annotation.services.transitions import item_transition
from annotation.workflow import Action, ItemStatus, Verdict
from portal.audit import audit_record
from portal.errors import Conflict, DomainError, NotAllowed
from portal.models import User
from portal.roles import can_adjudicate, can_organize


def _can_resolve(user: User) -> bool:
    return can_adjudicate(user) or can_organize(user)


def _resolver_check(user: User, item_id: int, refusal: str) -> None:
    """Adjudicators and organizers close issues, but not on an item they are conflicted on (they reviewed it or
    were given it to review): someone who has not judged the item decides."""
    if not _can_resolve(user):
        raise NotAllowed(refusal)
    conflict_of_interest_refuse(user, QAItem.objects.only("pk", "uid").get(pk=item_id))


def may_resolve_issues(user: User, item: QAItem) -> bool:
    """Whether ``user`` may close disputes and feedback notes on ``item`` (the rule of :func:`_resolver_check`)."""
    try:
        _resolver_check(user, item.pk, "")
    except NotAllowed:
        return False
    return True


def item_hold(*, item: QAItem, actor: User, note: str) -> None:
    """Hold the item for an open issue (no-op if it is already held)."""
    locked = QAItem.objects.select_for_update().get(pk=item.pk)
    if locked.status != ItemStatus.HELD:
        item_transition(item=item, action=Action.HOLD, actor=actor, note=note)


def item_release_if_clear(*, item: QAItem, actor: User, note: str) -> bool:
    """Release the hold once no dispute or feedback note on the item is open. Returns True if released."""
    locked = QAItem.objects.select_for_update().get(pk=item.pk)
    if locked.status != ItemStatus.HELD:
        return False
    if item_has_open_issue(locked):
        return False
    item_transition(item=item, action=Action.RELEASE_HOLD, actor=actor, note=note)
    return True


def _end_lease(*, assignment_id: int, reviewer: User, idempotency_key: str | UUID | None) -> Assignment:
    assignment = assignment_lock_own(assignment_id=assignment_id, reviewer=reviewer, idempotency_key=idempotency_key)
    if assignment.status != Assignment.Status.ACTIVE:
        raise Conflict("Your lease on this item has ended; take the next item.", code="lease_ended")
    assignment.status, assignment.finished_at = Assignment.Status.RELEASED, timezone.now()
    assignment.save(update_fields=["status", "finished_at"])
    return assignment


def _quote(item: QAItem, quote_text: str, start: int | None, end: int | None) -> tuple[str, int | None, int | None]:
    """Resolve the quoted span against the excerpt: by offsets, or by finding the quoted text."""
    text = item.passage.text if item.passage is not None else ""
    if start is not None and end is not None:
        if not text or not 0 <= start < end <= len(text):
            raise DomainError("the quoted span lies outside the source excerpt", code="invalid_quote")
        return text[start:end], start, end
    quote_text = (quote_text or "").strip()
    if not quote_text:
        return "", None, None
    pos = text.find(quote_text) if text else -1
    if pos < 0:
        raise DomainError("the quoted text does not occur in the source excerpt", code="invalid_quote")
    return quote_text, pos, pos + len(quote_text)


def quote_marked(text: str, quote: str, start: int | None = None, end: int | None = None) -> tuple[SafeString, bool]:
    """The excerpt as HTML with the quoted span in ``<mark>``, and whether the span was found.

    The span is located on the plain text (the stored offsets when they still cover the quote, else its first
    occurrence, as :func:`_quote` found it when the dispute was filed) and every piece is escaped on its own, so a
    quote or an excerpt holding markup stays text. Not found (the excerpt changed, or the quote was never in it):
    the escaped excerpt without a mark, and ``False``."""
    text = text or ""
    quote = quote or ""
    if not quote:
        return escape(text), False
    if start is not None and end is not None and 0 <= start < end <= len(text) and text[start:end] == quote:
        pos = start
    else:
        pos = text.find(quote)
    if pos < 0:
        return escape(text), False
    stop = pos + len(quote)
    return format_html('{}<mark id="quoted-span">{}</mark>{}', text[:pos], text[pos:stop], text[stop:]), True


def dispute_file(
    *,
    raised_by: User,
    category: str,
    text: str,
    item: QAItem | None = None,
    assignment_id: int | None = None,
    idempotency_key: str | UUID | None = None,
    quote_text: str = "",
    quote_start: int | None = None,
    quote_end: int | None = None,
) -> Dispute:
    """File a formal dispute. A reviewer files it instead of a review on their lease (the lease ends);
    adjudicators and organizers may dispute any item. The item is held until the dispute is resolved."""
    if category not in Dispute.Category.values:
        raise DomainError(f"category must be one of {', '.join(Dispute.Category.values)}", code="invalid_category")
    if not (text or "").strip():
        raise DomainError("say what is wrong with the item", code="empty_text")
    with transaction.atomic():
        assignment = None
        if assignment_id is not None:
            assignment = _end_lease(assignment_id=assignment_id, reviewer=raised_by, idempotency_key=idempotency_key)
            item = assignment.item
        elif item is None or not _can_resolve(raised_by):
            raise NotAllowed("Reviewers file disputes from their review page.")
        quote, start, end = _quote(item, quote_text, quote_start, quote_end)
        dispute = Dispute.objects.create(
            item=item,
            assignment=assignment,
            raised_by=raised_by,
            category=category,
            text=text.strip(),
            quote_text=quote,
            quote_start=start,
            quote_end=end,
        )
        audit_record(
            actor=raised_by,
            obj=dispute,
            action="dispute_filed",
            after={"item": item.uid, "category": category, "text": dispute.text, "quote": quote},
        )
        item_hold(item=item, actor=raised_by, note=f"dispute {dispute.pk}")
    return dispute


def dispute_comment_add(*, dispute: Dispute, author: User, text: str) -> DisputeComment:
    """Add to a dispute's thread: its author, adjudicators and organizers take part."""
    if dispute.raised_by_id != author.pk:
        _resolver_check(
            author, dispute.item_id, "Only the person who filed the dispute, adjudicators and organizers may comment."
        )
    if not (text or "").strip():
        raise DomainError("the comment is empty", code="empty_text")
    comment = DisputeComment.objects.create(dispute=dispute, author=author, text=text.strip())
    audit_record(
        actor=author, obj=dispute, action="dispute_commented", after={"comment": comment.pk, "text": comment.text}
    )
    return comment


def dispute_close(*, dispute: Dispute, resolver: User, outcome: str, note: str = "") -> Dispute:
    """Mark one dispute upheld or rejected (no item move; callers release the hold)."""
    _resolver_check(resolver, dispute.item_id, "Only adjudicators and organizers resolve disputes.")
    if outcome not in (Dispute.Status.UPHELD, Dispute.Status.REJECTED):
        raise DomainError("outcome must be 'upheld' or 'rejected'", code="invalid_outcome")
    _lock_item_first(dispute.item_id)
    locked = Dispute.objects.select_for_update().get(pk=dispute.pk)
    if locked.status != Dispute.Status.OPEN:
        raise Conflict(f"dispute {locked.pk} is already {locked.status}", code="already_resolved")
    before = {"status": locked.status}
    locked.status, locked.resolver, locked.resolved_at = outcome, resolver, timezone.now()
    locked.resolution_note = note.strip()
    locked.save(update_fields=["status", "resolver", "resolved_at", "resolution_note"])
    audit_record(
        actor=resolver,
        obj=locked,
        action="dispute_resolved",
        before=before,
        after={"status": outcome, "note": locked.resolution_note},
    )
    return locked


# What a final verdict says about each kind of dispute (usability F1). Every dispute objects to the item as it stands
# ("wrong or ambiguous", the review page's words); the guidelines define the verdicts on the item as it stands: Correct
# = a careful examiner accepts it unchanged, Incorrect = it does not stand (a factual error, two defensible answers, a
# wrong format or options: "every other field on the page" counts), Cannot tell = the excerpt neither supports nor
# contradicts it. So Correct rejects every dispute; Incorrect upholds each dispute that names a way the item is wrong,
# and Cannot tell the one that says exactly that (not supported by the source). None: the verdict does not settle it
# (an "other" dispute says nothing the verdict can answer; Cannot tell neither confirms nor refutes a factual error,
# an ambiguity or a format), so the adjudicator says which. One table; the pages and the API only present it.
_UPHELD, _REJECTED = Dispute.Status.UPHELD.value, Dispute.Status.REJECTED.value
_C = Dispute.Category
DISPUTE_OUTCOME_BY_VERDICT: dict[str, dict[str, str | None]] = {
    Verdict.CORRECT: dict.fromkeys(_C.values, _REJECTED),
    Verdict.INCORRECT: {
        _C.FACTUAL_ERROR: _UPHELD,
        _C.NOT_IN_SOURCE: _UPHELD,
        _C.AMBIGUOUS: _UPHELD,
        _C.WRONG_FORMAT: _UPHELD,
        _C.OTHER: None,
    },
    Verdict.CANNOT_TELL: {**dict.fromkeys(_C.values, None), _C.NOT_IN_SOURCE: _UPHELD},
}
# Why, in the words of the refusal and of the pages.
_WHY = {
    Verdict.CORRECT: "Correct accepts the item unchanged",
    Verdict.INCORRECT: "Incorrect says the item does not stand as it is",
    Verdict.CANNOT_TELL: "Cannot tell says the source does not support the answer",
}


def dispute_outcome_implied(*, category: str, verdict: str) -> str | None:
    """The outcome (``upheld`` / ``rejected``) that the final ``verdict`` gives a dispute of ``category``, or None
    where the verdict does not settle it and the adjudicator chooses (:data:`DISPUTE_OUTCOME_BY_VERDICT`)."""
    return DISPUTE_OUTCOME_BY_VERDICT.get(verdict, {}).get(category)


def dispute_outcomes_by_verdict(category: str) -> dict[str, str | None]:
    """For one dispute's page: each verdict (its value) and the outcome it gives this dispute (None: chosen)."""
    return {verdict: dispute_outcome_implied(category=category, verdict=verdict) for verdict in Verdict.values}


def dispute_outcomes_settle(
    *,
    disputes: Iterable[Dispute],
    verdict: str,
    chosen: Mapping[int, str] | None = None,
    chosen_for_all: str | None = None,
) -> dict[int, str]:
    """The outcome of each open dispute of an item decided with ``verdict``: the one the verdict implies, or the
    adjudicator's choice where it implies none. ``chosen``: outcomes by dispute id; ``chosen_for_all``: one outcome
    for every dispute (the API's shorthand). Refused (:class:`DomainError`, nothing is changed by the caller):
    a choice that contradicts the verdict, a missing choice where the verdict settles nothing, an unknown outcome,
    and a choice for a dispute that is not among ``disputes`` (resolved meanwhile, or another item's)."""
    disputes = list(disputes)
    chosen = dict(chosen or {})
    open_ids = {d.pk for d in disputes}
    stray = sorted(pk for pk in chosen if pk not in open_ids)
    if stray:
        raise DomainError(
            f"dispute {stray[0]} is not open on this item (resolved meanwhile, or not this item's): look at the "
            "item again",
            code="dispute_not_open",
        )
    verdict_name = Verdict(verdict).label if verdict in Verdict.values else verdict
    outcomes: dict[int, str] = {}
    for dispute in disputes:
        choice = chosen.get(dispute.pk) or chosen_for_all or None
        if choice is not None and choice not in (_UPHELD, _REJECTED):
            raise DomainError("a dispute's outcome is 'upheld' or 'rejected'", code="invalid_outcome")
        implied = dispute_outcome_implied(category=dispute.category, verdict=verdict)
        named = f"Dispute {dispute.pk} ({dispute.get_category_display()})"
        if implied is not None and choice is not None and choice != implied:
            raise DomainError(
                f"{named} cannot be {choice} with the final verdict {verdict_name}: {_WHY[Verdict(verdict)]}, "
                f"which {'upholds' if implied == _UPHELD else 'rejects'} the dispute. Leave its outcome to the "
                "verdict, or choose another verdict.",
                code="dispute_outcome_contradicts",
            )
        outcome = implied or choice
        if outcome is None:
            raise DomainError(
                f"Say whether {named[0].lower()}{named[1:]} is upheld or rejected: the final verdict {verdict_name} "
                "does not settle it.",
                code="dispute_outcome_missing",
            )
        outcomes[dispute.pk] = outcome
    return outcomes


def dispute_reject(*, dispute: Dispute, resolver: User, note: str = "") -> Dispute:
    """Reject a dispute without judging the item: the item goes back where it was once nothing else is open.

    Upholding a dispute takes a final judgement of the item (``annotation.services.adjudication.item_adjudicate``),
    which resolves its open disputes as the verdict implies (:func:`dispute_outcomes_settle`).
    """
    with transaction.atomic():
        closed = dispute_close(dispute=dispute, resolver=resolver, outcome=Dispute.Status.REJECTED, note=note)
        item_release_if_clear(item=closed.item, actor=resolver, note=f"dispute {closed.pk} rejected")
    return closed


def item_issues_reject(*, item: QAItem, resolver: User, note: str = "") -> tuple[int, int]:
    """Close every open issue of ``item`` without judging it: its open disputes rejected and its open feedback notes
    closed, with ``note`` as the resolution; the item goes back where it was. Returns (disputes, notes) closed.

    One transaction, item locked first (the order :func:`_lock_item_first` explains), then the issues: a dispute
    filed meanwhile either waits and is closed too, or comes after and holds the item again; never half of the
    issues closed. Each closing is audited like a single one. Adjudicators and organizers only, and not on an item
    they are conflicted on."""
    _resolver_check(resolver, item.pk, "Only adjudicators and organizers close disputes and feedback notes.")
    with transaction.atomic():
        _lock_item_first(item.pk)
        open_disputes, open_notes = open_issues(item)
        disputes = list(open_disputes.select_for_update().order_by("pk"))
        notes = list(open_notes.select_for_update().order_by("pk"))
        for dispute in disputes:
            dispute_close(dispute=dispute, resolver=resolver, outcome=Dispute.Status.REJECTED, note=note)
        for feedback in notes:
            feedback_close(note=feedback, actor=resolver, response=note, release=False)
        item_release_if_clear(item=item, actor=resolver, note="open issues closed")
    return len(disputes), len(notes)


def _lock_item_first(item_id: int) -> None:
    """Race: an adjudicator decides the item while someone closes its dispute or feedback note. Adjudication locks
    the item and then its disputes and notes; closing one alone must take the locks in the same order (item
    first), or each transaction would hold the lock the other waits for and PostgreSQL would abort one."""
    QAItem.objects.select_for_update().filter(pk=item_id).values_list("pk", flat=True).first()


def feedback_file(
    *,
    author: User,
    text: str,
    item: QAItem | None = None,
    assignment_id: int | None = None,
    idempotency_key: str | UUID | None = None,
) -> FeedbackNote:
    """Leave a feedback note instead of a review (the lease ends); the item is held until it is closed."""
    if not (text or "").strip():
        raise DomainError("the feedback note is empty", code="empty_text")
    with transaction.atomic():
        assignment = None
        if assignment_id is not None:
            assignment = _end_lease(assignment_id=assignment_id, reviewer=author, idempotency_key=idempotency_key)
            item = assignment.item
        elif item is None or not _can_resolve(author):
            raise NotAllowed("Reviewers leave feedback from their review page.")
        note = FeedbackNote.objects.create(item=item, assignment=assignment, author=author, text=text.strip())
        audit_record(actor=author, obj=note, action="feedback_filed", after={"item": item.uid, "text": note.text})
        item_hold(item=item, actor=author, note=f"feedback {note.pk}")
    return note


def feedback_close(*, note: FeedbackNote, actor: User, response: str = "", release: bool = True) -> FeedbackNote:
    """Close a feedback note with an optional response; releases the hold if nothing else is open."""
    _resolver_check(actor, note.item_id, "Only adjudicators and organizers close feedback notes.")
    with transaction.atomic():
        _lock_item_first(note.item_id)
        locked = FeedbackNote.objects.select_for_update().get(pk=note.pk)
        if locked.status != FeedbackNote.Status.OPEN:
            raise Conflict("this feedback note is already closed", code="already_closed")
        locked.status, locked.closed_by, locked.closed_at = FeedbackNote.Status.CLOSED, actor, timezone.now()
        locked.response = response.strip()
        locked.save(update_fields=["status", "closed_by", "closed_at", "response"])
        audit_record(
            actor=actor,
            obj=locked,
            action="feedback_closed",
            before={"status": "open"},
            after={"status": "closed", "response": locked.response},
        )
        if release:
            item_release_if_clear(item=locked.item, actor=actor, note=f"feedback {locked.pk} closed")
    return locked
