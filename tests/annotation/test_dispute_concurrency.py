"""An adjudicator decides an item while someone else rejects its dispute (or closes its feedback) at the same moment.

Both paths lock the item row first, so one waits for the other and then sees its outcome (a clear Conflict), instead
of the two holding each other's lock until PostgreSQL aborts one with a deadlock error.
"""

from __future__ import annotations

from functools import partial

import pytest

from annotation.models import Dispute, QAItem
from annotation.services.adjudication import item_adjudicate
from annotation.services.disputes import dispute_file, dispute_reject, feedback_close, feedback_file
from annotation.services.queue import assignment_next
from annotation.workflow import ItemStatus
from portal.errors import Conflict
from tests.concurrency import at_once

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROUNDS = 6


def test_adjudication_racing_a_dispute_rejection_never_deadlocks(sample_items, config, make_user):
    alice, judge, other_judge = make_user("reviewer"), make_user("adjudicator"), make_user("adjudicator")
    for _ in range(ROUNDS):
        lease = assignment_next(reviewer=alice)
        dispute = dispute_file(
            raised_by=alice, assignment_id=lease.pk, idempotency_key=lease.idempotency_key,
            category="factual_error", text="Contradicts the excerpt.",
        )  # fmt: skip
        adjudicate = partial(
            item_adjudicate, item=lease.item, adjudicator=judge, verdict="incorrect", relevance=3, reason="Wrong."
        )
        reject = partial(dispute_reject, dispute=dispute, resolver=other_judge, note="Fine.")
        outcomes = at_once(adjudicate, reject)
        failures = [o for o in outcomes if isinstance(o, Exception)]
        assert len(failures) == 1 and isinstance(failures[0], Conflict), outcomes  # one wins, the other is told why
        dispute.refresh_from_db()
        item = QAItem.objects.get(pk=lease.item_id)
        if isinstance(outcomes[0], Exception):  # the rejection won: the item is back in the queue
            assert (dispute.status, item.status) == (Dispute.Status.REJECTED, ItemStatus.IMPORTED)
        else:  # the adjudication won and upheld the dispute
            assert (dispute.status, item.status) == (Dispute.Status.UPHELD, ItemStatus.REJECTED)


def test_adjudication_racing_a_feedback_close_never_deadlocks(sample_items, config, make_user):
    alice, judge, organizer = make_user("reviewer"), make_user("adjudicator"), make_user("organizer")
    for _ in range(ROUNDS):
        lease = assignment_next(reviewer=alice)
        note = feedback_file(
            author=alice, text="Typo in the answer.", assignment_id=lease.pk, idempotency_key=lease.idempotency_key
        )
        adjudicate = partial(
            item_adjudicate, item=lease.item, adjudicator=judge, verdict="correct", relevance=5, reason="Fine as is."
        )
        close = partial(feedback_close, note=note, actor=organizer, response="Fixed.")
        outcomes = at_once(adjudicate, close)
        errors = [o for o in outcomes if isinstance(o, Exception)]
        assert all(isinstance(e, Conflict) for e in errors), outcomes
        note.refresh_from_db()
        assert note.status == "closed"
