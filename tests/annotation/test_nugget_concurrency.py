"""Nugget leases and decisions under real concurrency: threads with their own PostgreSQL connections."""

from __future__ import annotations

import json
from functools import partial

import pytest

from annotation.models import NuggetSet, NuggetTask, QAItem
from annotation.services.nugget_files import nuggets_import
from annotation.services.nuggets import nugget_adjudicate, nugget_next, nugget_validate
from portal.errors import Conflict
from tests.concurrency import at_once

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _drafts(organizer, items):
    lines = [
        json.dumps({"item_uid": i.uid, "nuggets": [{"id": "n1", "text": "A fact.", "importance": "vital"}]})
        for i in items
    ]
    nuggets_import(source=lines, name="drafts.jsonl", actor=organizer)


def test_two_validators_at_once_never_share_a_draft(sample_items, organizer, make_user):
    _drafts(organizer, sample_items[:1])
    one, two = make_user("reviewer"), make_user("ranker")
    results = at_once(*(partial(nugget_next, person=p, stage="validate") for p in (one, two)))
    assert not [r for r in results if isinstance(r, Exception)], results
    assert sorted(r is None for r in results) == [False, True]
    assert NuggetTask.objects.filter(status="active", stage="validate").count() == 1


def test_many_experts_at_once_get_distinct_items(sample_items, organizer, make_user):
    _drafts(organizer, sample_items[:5])
    people = [make_user("reviewer") for _ in range(8)]
    results = at_once(*(partial(nugget_next, person=p, stage="validate") for p in people))
    given = [r.item_id for r in results if r is not None and not isinstance(r, Exception)]
    assert len(given) == 5 and len(set(given)) == 5


def test_double_click_gets_one_lease(sample_items, organizer, make_user):
    _drafts(organizer, sample_items[:3])
    person = make_user("reviewer")
    results = at_once(*(partial(nugget_next, person=person, stage="validate") for _ in range(3)))
    assert len({r.pk for r in results}) == 1


def test_two_adjudicators_at_once_settle_once(sample_items, organizer, make_user):
    QAItem.objects.filter(pk=sample_items[0].pk).update(status="verified")
    _drafts(organizer, sample_items[:1])
    validator = make_user("reviewer")
    task = nugget_next(person=validator, stage="validate")
    nugget_validate(task_id=task.pk, person=validator, nuggets=[{"text": "Changed.", "importance": "vital"}])
    a, b = make_user("adjudicator"), make_user("adjudicator")
    item = sample_items[0]
    results = at_once(
        partial(nugget_adjudicate, item=item, adjudicator=a, pick_version=1, note="first"),
        partial(nugget_adjudicate, item=item, adjudicator=b, pick_version=2, note="second"),
    )
    assert sum(isinstance(r, Conflict) for r in results) == 1
    assert NuggetSet.objects.filter(item=item, status="validated").count() == 1
