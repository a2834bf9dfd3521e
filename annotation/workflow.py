"""The item status machine and the vetting decision rules. Pure: no database access here.

States and what they mean
-------------------------
- ``imported``: waiting for its primary review (also where an item returns when a hold on an unreviewed item ends).
- ``in_review``: a reviewer holds a primary-review lease. An expired lease makes the item available again
  (the queue treats it as free; the ``release`` move puts it back to ``imported`` when the sweeper runs).
- ``reviewed``: transient, the primary review was just stored; the same transaction routes it on (``route_*``).
- ``in_second_review``: selected for the independent second review (reproducible draw, see
  :func:`second_review_selected`); waiting for or holding a secondary lease.
- ``agreed``: transient, the two reviews agreed; the same transaction finalises it from the agreeing reviews.
- ``in_adjudication``: the reviews disagree (verdict differs, or GP relevance differs by at least the configured
  gap), or the only / agreed verdict was "cannot tell from the source": an adjudicator decides.
- ``verified``: final verdict ``correct``.  ``rejected``: final verdict ``incorrect`` or ``cannot_tell``.
- ``reviewed`` → ``imported`` / ``in_second_review`` → ``in_second_review`` (``return_to_queue``): the reviewer said
  "cannot tell: outside my field". Such a review judges nothing: it is stored set aside at once (as a review whose item
  was sent back to review), its lease ends, and the item waits for someone else (see :func:`counts_as_judgement`).
- ``in_adjudication`` → ``imported`` (``reassign``): no adjudicator may decide the item because each of them
  reviewed it; an organizer sends it back to review. Its reviews are kept but marked superseded, and it is
  reviewed again by people who were never given it.
- ``held``: an open dispute or feedback note exists. The item is excluded from queues and releases; the state it
  was held from is kept on the item and it returns there (``release_hold``) once every issue is closed, unless an
  adjudicator decides it first.

Final judgement (written on ``QAItem.final_verdict`` / ``final_relevance`` / ``final_source``):
- not selected for second review: the primary review (verdict and relevance), source ``primary``;
- agreed: the common verdict, relevance = mean of the two ratings, source ``agreement``
  (so "final relevance 5" means every reviewer rated 5);
- adjudicated: the adjudicator's verdict and relevance, source ``adjudication``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.db import models


class ItemStatus(models.TextChoices):
    IMPORTED = "imported", "Imported"
    IN_REVIEW = "in_review", "In review"
    REVIEWED = "reviewed", "Reviewed"
    IN_SECOND_REVIEW = "in_second_review", "In second review"
    AGREED = "agreed", "Agreed"
    IN_ADJUDICATION = "in_adjudication", "In adjudication"
    VERIFIED = "verified", "Verified"
    REJECTED = "rejected", "Rejected"
    HELD = "held", "Held"


class Action(models.TextChoices):
    ASSIGN = "assign", "Primary lease taken"
    RELEASE = "release", "Primary lease expired"
    SUBMIT_PRIMARY = "submit_primary", "Primary review submitted"
    ROUTE_SECOND = "route_second", "Selected for second review"
    ROUTE_VERIFY = "route_verify", "Final from primary: correct"
    ROUTE_REJECT = "route_reject", "Final from primary: incorrect"
    ROUTE_ADJUDICATE = "route_adjudicate", "Sent to adjudication"
    SUBMIT_AGREE = "submit_agree", "Second review agrees"
    SUBMIT_DISAGREE = "submit_disagree", "Second review disagrees"
    FINAL_VERIFY = "final_verify", "Final: verified"
    FINAL_REJECT = "final_reject", "Final: rejected"
    ADJUDICATE_VERIFY = "adjudicate_verify", "Adjudicated: correct"
    ADJUDICATE_REJECT = "adjudicate_reject", "Adjudicated: not correct"
    HOLD = "hold", "Held for an open issue"
    RELEASE_HOLD = "release_hold", "Hold released"
    REASSIGN = "reassign", "Sent back to review by fresh reviewers"
    REVISE_PRIMARY = "revise_primary", "Primary review changed by its author"
    RETURN_TO_QUEUE = "return_to_queue", "Back to the queue: outside the reviewer's field"


class Verdict(models.TextChoices):
    CORRECT = "correct", "Correct"
    INCORRECT = "incorrect", "Incorrect"
    CANNOT_TELL = "cannot_tell", "Cannot tell from the source"


class CannotTellReason(models.TextChoices):
    """Why a reviewer cannot tell (required with ``Verdict.CANNOT_TELL``, refused with any other verdict)."""

    EXCERPT = "excerpt", "The excerpt is missing or wrong"
    AMBIGUOUS = "ambiguous", "The question is ambiguous"
    OUTDATED = "outdated", "The medicine is outdated"
    OUTSIDE_FIELD = "outside_field", "Outside my field"


# The reasons an organizer can act on (mend the excerpt, reword the question, update the item): the vetting dashboard
# lists the items reviewers gave them for. "Outside my field" says something about the reviewer, not the item.
FIXABLE_REASONS = (CannotTellReason.EXCERPT, CannotTellReason.AMBIGUOUS, CannotTellReason.OUTDATED)
CANNOT_TELL_REASONS_TEXT = ", ".join(CannotTellReason.values[:-1]) + " or " + CannotTellReason.values[-1]


class Stage(models.TextChoices):
    PRIMARY = "primary", "Primary"
    SECONDARY = "secondary", "Secondary"
    GOLD = "gold", "Gold"  # never shown to the reviewer: a gold item looks like any other


RELEVANCE_SCALE = {
    1: "Not relevant: specialist or trivia, a GP would never need it",
    2: "Marginal: rarely useful in general practice",
    3: "Somewhat relevant: useful background for a GP",
    4: "Relevant: a GP meets this regularly",
    5: "Essential: core knowledge every GP must have",
}

# The GP relevance scale's ends and values, for checks and choices: derived from the scale, never written again.
RELEVANCE_VALUES = tuple(RELEVANCE_SCALE)
RELEVANCE_MIN, RELEVANCE_MAX = min(RELEVANCE_VALUES), max(RELEVANCE_VALUES)
RELEVANCE_RANGE_TEXT = f"a whole number from {RELEVANCE_MIN} to {RELEVANCE_MAX}"
# The organizer's vetting settings that are whole numbers, and their ranges (one home: the service checks them, the
# settings page and the API offer them). A relevance gap wider than the scale would never send a pair to adjudication;
# the gold-answer count (answers a reviewer gives before their gold accuracy is judged) is stored in a small integer
# column, and a threshold past a thousand would leave every reviewer unjudged for a whole benchmark.
RELEVANCE_GAP_MIN, RELEVANCE_GAP_MAX = 1, RELEVANCE_MAX - RELEVANCE_MIN
GOLD_MIN_ANSWERS_MIN, GOLD_MIN_ANSWERS_MAX = 1, 1000
VERDICTS_TEXT = ", ".join(Verdict.values[:-1]) + " or " + Verdict.values[-1]

S = ItemStatus
A = Action
# States a hold may be placed on (everything but a hold itself and the transient states).
_HOLDABLE = (S.IMPORTED, S.IN_REVIEW, S.IN_SECOND_REVIEW, S.IN_ADJUDICATION, S.VERIFIED, S.REJECTED)

TRANSITIONS: dict[tuple[str, str], str] = {
    (S.IMPORTED, A.ASSIGN): S.IN_REVIEW,
    (S.IN_REVIEW, A.ASSIGN): S.IN_REVIEW,  # an expired lease taken over by someone else
    (S.IN_REVIEW, A.RELEASE): S.IMPORTED,
    (S.IN_REVIEW, A.SUBMIT_PRIMARY): S.REVIEWED,
    (S.REVIEWED, A.ROUTE_SECOND): S.IN_SECOND_REVIEW,
    (S.REVIEWED, A.ROUTE_VERIFY): S.VERIFIED,
    (S.REVIEWED, A.ROUTE_REJECT): S.REJECTED,
    (S.REVIEWED, A.ROUTE_ADJUDICATE): S.IN_ADJUDICATION,
    (S.IN_SECOND_REVIEW, A.SUBMIT_AGREE): S.AGREED,
    (S.IN_SECOND_REVIEW, A.SUBMIT_DISAGREE): S.IN_ADJUDICATION,
    (S.AGREED, A.FINAL_VERIFY): S.VERIFIED,
    (S.AGREED, A.FINAL_REJECT): S.REJECTED,
    (S.AGREED, A.ROUTE_ADJUDICATE): S.IN_ADJUDICATION,  # both said "cannot tell"
    (S.IN_ADJUDICATION, A.ADJUDICATE_VERIFY): S.VERIFIED,
    (S.IN_ADJUDICATION, A.ADJUDICATE_REJECT): S.REJECTED,
    (S.HELD, A.ADJUDICATE_VERIFY): S.VERIFIED,
    (S.HELD, A.ADJUDICATE_REJECT): S.REJECTED,
    **{(state, A.HOLD): S.HELD for state in _HOLDABLE},
    (S.HELD, A.RELEASE_HOLD): "",  # back to the state it was held from, see hold_return_state
    # No adjudicator may decide the item (each reviewed it): an organizer starts its review over with fresh people.
    (S.IN_ADJUDICATION, A.REASSIGN): S.IMPORTED,
    # "Cannot tell: outside my field" judges nothing: the item waits again for the review it was handed out for.
    (S.REVIEWED, A.RETURN_TO_QUEUE): S.IMPORTED,
    (S.IN_SECOND_REVIEW, A.RETURN_TO_QUEUE): S.IN_SECOND_REVIEW,
    # The author changed their primary review while nothing later had happened (see review_edit_refusal): the
    # item goes back to "reviewed" and is routed again from the changed review, in the same transaction.
    (S.IN_SECOND_REVIEW, A.REVISE_PRIMARY): S.REVIEWED,
    (S.VERIFIED, A.REVISE_PRIMARY): S.REVIEWED,
    (S.REJECTED, A.REVISE_PRIMARY): S.REVIEWED,
}


# The states an adjudicator may decide an item from: those the table lets an adjudication leave.
ADJUDICABLE_STATES = frozenset(
    state for state, action in TRANSITIONS if action in (A.ADJUDICATE_VERIFY, A.ADJUDICATE_REJECT)
)


class IllegalTransition(Exception):
    """A move the table does not allow; services turn it into a ``Conflict``."""


def next_status(current: str, action: str, *, held_from: str = "") -> str:
    """The state after ``action`` from ``current``; raises :class:`IllegalTransition` if the move is not allowed."""
    try:
        target = TRANSITIONS[(ItemStatus(current), Action(action))]
    except (KeyError, ValueError):
        raise IllegalTransition(f"cannot {action!r} an item that is {current!r}") from None
    if target == "":
        return hold_return_state(held_from)
    return target


def hold_return_state(held_from: str) -> str:
    """Where a released hold goes: an unreviewed item leased when it was held goes back to the queue."""
    if held_from in ("", S.IN_REVIEW, S.REVIEWED):
        return S.IMPORTED
    if held_from == S.AGREED:
        return S.IN_ADJUDICATION
    return held_from


# --- decision rules ----------------------------------------------------------------------------------------


def second_review_selected(*, seed: str, uid: str, share: float) -> bool:
    """Reproducible draw: sha256(seed:uid) read as a number in [0, 1) is below ``share``.

    Stable per item and independent of order, so the organizer can re-derive the selection from the seed.
    """
    digest = hashlib.sha256(f"{seed}:{uid}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def needs_adjudication(*, first: tuple[str, int], second: tuple[str, int], relevance_gap: int) -> bool:
    """Two (verdict, relevance) reviews disagree when verdicts differ or relevance differs by >= the gap."""
    return first[0] != second[0] or abs(first[1] - second[1]) >= relevance_gap


@dataclass(frozen=True)
class Route:
    action: str
    final_verdict: str = ""
    final_relevance: float | None = None
    final_source: str = ""


def cannot_tell_reason_problem(*, verdict: str, reason: str) -> str:
    """``""`` when ``reason`` fits ``verdict`` (one of :class:`CannotTellReason` with "cannot tell", none with any
    other verdict), else the sentence to show."""
    if verdict != Verdict.CANNOT_TELL:
        if reason:
            return f"A reason is given only with “{Verdict.CANNOT_TELL.label}”: leave it out, or choose that verdict."
        return ""
    if not reason:
        return "Say why you cannot tell: " + "; ".join(str(label).lower() for label in CannotTellReason.labels) + "."
    if reason not in CannotTellReason.values:
        return f"The reason must be {CANNOT_TELL_REASONS_TEXT}."
    return ""


def counts_as_judgement(reason: str) -> bool:
    """Whether a review with this "cannot tell" reason judges its item. "Outside my field" does not: the review is
    kept (set aside at once), counts in no agreement figure, and the item goes back to the queue for someone else;
    the reviewer keeps their lease row, so the queue never hands them the item again (``review_barred_q``)."""
    return reason != CannotTellReason.OUTSIDE_FIELD


def route_after_primary(
    *, verdict: str, relevance: int, selected: bool, reason: str = "", straight_to_adjudication: bool = False
) -> Route:
    """What happens to an item once its primary review is stored (``reason``: why the reviewer cannot tell;
    ``straight_to_adjudication``: the adaptive second review picked the verdict for a second look and sends it to an adjudicator,
    ``annotation.second_review.choose``)."""
    if not counts_as_judgement(reason):
        return Route(A.RETURN_TO_QUEUE)
    if selected:
        return Route(A.ROUTE_SECOND)
    if verdict == Verdict.CANNOT_TELL or straight_to_adjudication:
        return Route(A.ROUTE_ADJUDICATE)
    action = A.ROUTE_VERIFY if verdict == Verdict.CORRECT else A.ROUTE_REJECT
    return Route(action, verdict, float(relevance), "primary")


def route_after_secondary(
    *, first: tuple[str, int], second: tuple[str, int], relevance_gap: int, reason: str = ""
) -> list[Route]:
    """The moves after the second review: disagreement → adjudication; agreement → final from both reviews; a second
    reviewer outside their field (``reason``) → the item waits for another second reviewer."""
    if not counts_as_judgement(reason):
        return [Route(A.RETURN_TO_QUEUE)]
    if needs_adjudication(first=first, second=second, relevance_gap=relevance_gap):
        return [Route(A.SUBMIT_DISAGREE)]
    verdict = first[0]
    if verdict == Verdict.CANNOT_TELL:
        return [Route(A.SUBMIT_AGREE), Route(A.ROUTE_ADJUDICATE)]
    final = A.FINAL_VERIFY if verdict == Verdict.CORRECT else A.FINAL_REJECT
    return [Route(A.SUBMIT_AGREE), Route(final, verdict, (first[1] + second[1]) / 2, "agreement")]


def adjudication_action(verdict: str) -> str:
    return A.ADJUDICATE_VERIFY if verdict == Verdict.CORRECT else A.ADJUDICATE_REJECT


class EditRefusal(models.TextChoices):
    """Why a reviewer may no longer change their own review (the code is for tests, the admin and the API)."""

    SECOND_STAGE = "second_stage", "second reviews are compared with the first review the moment they are sent"
    SECOND_REVIEWER = "second_reviewer", "a second reviewer has been given the item"
    ADJUDICATION = "adjudication", "the item went to an adjudicator"
    ISSUE = "issue", "a dispute or a feedback note was filed on the item"
    GOLD = "gold", "the item is used to check reviewers"
    RELEASE = "release", "the item is in a frozen release"
    MOVED_ON = "moved_on", "the item has moved on"
    SET_ASIDE = "set_aside", "the item was sent back to review and this review set aside"


# What a reviewer is told: blinding means one sentence for every later step (which step it was would tell them
# something about the other judgements of the item, e.g. that a second reviewer disagreed or that it is gold).
EDIT_REFUSED_MESSAGE = (
    "This review can no longer be changed: the item has moved on in vetting (a second review, an adjudication, "
    "a dispute or a release)."
)
EDIT_REFUSED_SECOND_MESSAGE = (
    "A second review can no longer be changed: it was compared with the first review the moment you sent it."
)


def review_edit_refusal(
    *,
    stage: str,
    item_status: str,
    final_source: str,
    second_review_assigned: bool,
    issue_filed: bool,
    is_gold: bool,
    in_release: bool,
    set_aside: bool = False,
) -> str:
    """The one rule saying whether a reviewer may still change their own review: ``""`` when they may, otherwise
    an :class:`EditRefusal` code.

    Only a primary review can be changed, and only while nothing has been built on it: the item waits for a second
    review nobody has been given yet (any secondary lease counts, even one that ran out: it may still turn into a
    late review), or the primary review alone made the item final. Never once a dispute or feedback note was filed
    (open or closed), the item went to adjudication, became gold or was frozen into a release.

    A second review is compared with the first the moment it is stored; letting its author change it only in some
    outcomes would tell them whether the first reviewer agreed (blinding), so second reviews are never changed.
    """
    if stage != Stage.PRIMARY:
        return EditRefusal.SECOND_STAGE
    if set_aside:  # its item went back to review; the new round's reviews route it now
        return EditRefusal.SET_ASIDE
    if is_gold:
        return EditRefusal.GOLD
    if in_release:
        return EditRefusal.RELEASE
    if issue_filed or item_status == S.HELD:
        return EditRefusal.ISSUE
    if second_review_assigned:
        return EditRefusal.SECOND_REVIEWER
    if item_status == S.IN_ADJUDICATION or final_source == "adjudication":
        return EditRefusal.ADJUDICATION
    if item_status == S.IN_SECOND_REVIEW:
        return ""
    if item_status in (S.VERIFIED, S.REJECTED) and final_source == "primary":
        return ""
    return EditRefusal.MOVED_ON


def edit_refusal_message(code: str) -> str:
    """The sentence a reviewer reads for a refusal code (see the blinding note at ``EDIT_REFUSED_MESSAGE``)."""
    return EDIT_REFUSED_SECOND_MESSAGE if code == EditRefusal.SECOND_STAGE else EDIT_REFUSED_MESSAGE


# --- review queue order ------------------------------------------------------------------------------------
# Items are served in a seeded random order per reviewer, not import order (order effects: fatigue and anchoring
# would otherwise fall on the same items for everyone). Each item has a fixed random key (``QAItem.queue_key``,
# computed by the database from the uid: the first 60 bits of md5(uid)); each reviewer walks the items by that key
# starting from their own point, ``queue_start(seed, reviewer)``, and wraps around. Same seed + same person = same
# order; another person (or another seed) starts elsewhere. An index on the key keeps "next" an index walk.

QUEUE_KEY_BITS = 60


def queue_key(uid: str) -> int:
    """The item's place in the random cycle (what the database computes into ``QAItem.queue_key``)."""
    return int(hashlib.md5(uid.encode()).hexdigest()[:15], 16)


def queue_start(*, seed: str, reviewer_id: int) -> int:
    """Where ``reviewer_id`` enters the cycle under ``seed``: sha256(seed:queue:reviewer) read as 60 bits."""
    digest = hashlib.sha256(f"{seed}:queue:{reviewer_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - QUEUE_KEY_BITS)


def queue_order(uids: list[str], *, seed: str, reviewer_id: int) -> list[str]:
    """Reference order (for tests and docs): keys from the reviewer's start upwards, then the ones below it."""
    start = queue_start(seed=seed, reviewer_id=reviewer_id)
    return sorted(uids, key=lambda uid: (queue_key(uid) < start, queue_key(uid), uid))


def offer_gold(*, draw: float, rate: float) -> bool:
    """Whether this "next" request should hand out a gold item (``draw`` uniform in [0, 1))."""
    return rate > 0 and draw < rate
