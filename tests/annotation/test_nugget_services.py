"""Nugget services: leases, writing, validation, adjudication, conflict of interest, audit."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import NuggetSet, NuggetTask, QAItem
from annotation.nugget_workflow import NUGGET_QA_TYPES
from annotation.selectors.nuggets import nugget_facts, validated_nugget_facts, validated_nuggets
from annotation.services.nugget_versions import NuggetListInvalid
from annotation.services.nuggets import (
    nugget_adjudicate,
    nugget_next,
    nugget_submit_draft,
    nugget_task_release,
    nugget_tasks_expire,
    nugget_validate,
)
from metrics.nuggets import Nugget
from portal.errors import Conflict, DomainError, NotAllowed
from portal.models import AuditEntry

LIST = [
    {"text": "Metformin is first-line for type 2 diabetes.", "importance": "vital"},
    {"text": "It can cause lactic acidosis.", "importance": "okay"},
    {"text": "Metformin causes hypoglycaemia on its own.", "importance": "avoid"},
]


@pytest.fixture
def verified(sample_items):
    """The sample items of the free-text types, verified (the writing queue offers only those)."""
    QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).update(status="verified")
    return list(QAItem.objects.filter(qa_type__in=NUGGET_QA_TYPES).order_by("pk"))


def write(person, nuggets=LIST):
    task = nugget_next(person=person, stage="write")
    return nugget_submit_draft(task_id=task.pk, person=person, nuggets=nuggets)


def test_writer_gets_verified_free_text_item_and_same_lease_again(verified, reviewer):
    task = nugget_next(person=reviewer)
    assert task.stage == "write" and task.item in verified
    assert nugget_next(person=reviewer).pk == task.pk


def test_organizer_without_expert_role_is_refused(verified, organizer):
    with pytest.raises(NotAllowed):
        nugget_next(person=organizer)


def test_draft_then_accept_validates_and_selector_returns_it(verified, make_user):
    writer, validator = make_user("reviewer"), make_user("ranker")
    draft = write(writer)
    assert draft.status == "draft" and draft.origin == "authored" and draft.version == 1
    assert [n.key for n in draft.nuggets.all()] == ["n1", "n2", "n3"]
    task = nugget_next(person=validator)
    assert task.stage == "validate" and task.nugget_set_id == draft.pk
    result = nugget_validate(task_id=task.pk, person=validator)
    assert result.pk == draft.pk and result.status == "validated" and result.validated_by == validator
    found = validated_nuggets([draft.item_id, verified[-1].pk])
    assert list(found) == [draft.item_id]
    assert nugget_facts(found[draft.item_id])[0] == Nugget("n1", LIST[0]["text"], "vital")
    assert validated_nugget_facts([draft.item_id])[draft.item_id][2].importance == "avoid"
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {"nugget_task_taken", "nugget_version_created", "nugget_version_accept"} <= actions


def test_writer_never_validates_own_draft(verified, make_user):
    writer = make_user("reviewer")
    draft = write(writer)
    task = nugget_next(person=writer)
    # The writer is offered another item to write, never their own draft to validate.
    assert task is None or (task.stage == "write" and task.item_id != draft.item_id)


def test_changed_list_disputes_and_adjudicator_picks(verified, make_user):
    writer, validator, adjudicator = make_user("reviewer"), make_user("reviewer"), make_user("adjudicator")
    draft = write(writer)
    task = nugget_next(person=validator)
    changed = [LIST[0], {"text": "It may cause lactic acidosis in renal failure.", "importance": "okay"}]
    other = nugget_validate(task_id=task.pk, person=validator, nuggets=changed, note="merged and sharpened")
    draft.refresh_from_db()
    assert (draft.status, other.status, other.origin, other.based_on_id) == (
        "disputed",
        "disputed",
        "validation",
        draft.pk,
    )
    with pytest.raises(DomainError):
        nugget_adjudicate(item=draft.item, adjudicator=adjudicator, pick_version=2, note="  ")
    with pytest.raises(NotAllowed):
        nugget_adjudicate(item=draft.item, adjudicator=validator, pick_version=2, note="mine")
    final = nugget_adjudicate(item=draft.item, adjudicator=adjudicator, pick_version=2, note="the merge is right")
    draft.refresh_from_db()
    assert final.pk == other.pk and final.status == "validated" and draft.status == "superseded"
    with pytest.raises(Conflict):
        nugget_adjudicate(item=draft.item, adjudicator=adjudicator, pick_version=1, note="again")


def test_adjudicator_writes_final_version(verified, make_user):
    writer, validator, adjudicator = make_user("reviewer"), make_user("reviewer"), make_user("adjudicator")
    draft = write(writer)
    task = nugget_next(person=validator)
    nugget_validate(task_id=task.pk, person=validator, nuggets=LIST[:1])
    final = nugget_adjudicate(
        item=draft.item, adjudicator=adjudicator, pick_version=1, note="keep both", nuggets=LIST[:2]
    )
    assert (final.version, final.origin, final.status, final.based_on_id) == (3, "adjudication", "validated", draft.pk)
    assert set(NuggetSet.objects.filter(item=draft.item).values_list("version", "status")) == {
        (1, "superseded"),
        (2, "superseded"),
        (3, "validated"),
    }


def test_adjudicator_who_wrote_a_version_is_conflicted(verified, make_user):
    writer = make_user("adjudicator", "reviewer")
    validator = make_user("reviewer")
    draft = write(writer)
    task = nugget_next(person=validator)
    nugget_validate(task_id=task.pk, person=validator, nuggets=LIST[:2])
    with pytest.raises(NotAllowed) as caught:
        nugget_adjudicate(item=draft.item, adjudicator=writer, pick_version=1, note="mine is right")
    assert caught.value.code == "conflict_of_interest"


def test_accepting_an_unchanged_list_is_accept(verified, make_user):
    writer, validator = make_user("reviewer"), make_user("reviewer")
    draft = write(writer)
    task = nugget_next(person=validator)
    same = [{"id": f"x{i}", **n} for i, n in enumerate(LIST)]
    assert nugget_validate(task_id=task.pk, person=validator, nuggets=same).pk == draft.pk


def test_refused_list_names_the_problem_and_keeps_lease(verified, reviewer):
    task = nugget_next(person=reviewer)
    with pytest.raises(NuggetListInvalid) as caught:
        nugget_submit_draft(task_id=task.pk, person=reviewer, nuggets=[{"text": "x", "importance": "okay"}])
    assert "vital" in str(caught.value)
    task.refresh_from_db()
    assert task.status == "active" and not NuggetSet.objects.exists()


def test_someone_elses_task_is_refused(verified, make_user):
    one, two = make_user("reviewer"), make_user("reviewer")
    task = nugget_next(person=one)
    with pytest.raises(DomainError):
        nugget_submit_draft(task_id=task.pk, person=two, nuggets=LIST)


def test_two_validators_get_different_drafts_and_expiry_frees_item(verified, make_user):
    writers = [make_user("reviewer") for _ in range(2)]
    drafts = [write(w) for w in writers]
    a, b, c = make_user("ranker"), make_user("ranker"), make_user("ranker")
    ta, tb = nugget_next(person=a), nugget_next(person=b)
    assert {ta.nugget_set_id, tb.nugget_set_id} == {d.pk for d in drafts}
    # c finds no draft free: it is given writing instead.
    assert nugget_next(person=c).stage == "write"
    NuggetTask.objects.filter(pk=ta.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert nugget_tasks_expire() == 1
    d = make_user("ranker")
    assert nugget_next(person=d).nugget_set_id == ta.nugget_set_id
    # a's lease ran out and d took the item: a's late submission is refused, d's counts.
    with pytest.raises(Conflict):
        nugget_validate(task_id=ta.pk, person=a)


def test_late_validation_counts_when_nobody_took_item(verified, make_user):
    write(make_user("reviewer"))
    validator = make_user("reviewer")
    task = nugget_next(person=validator)
    NuggetTask.objects.filter(pk=task.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert nugget_validate(task_id=task.pk, person=validator).status == "validated"


def test_released_item_is_not_offered_again_to_the_same_person(verified, reviewer):
    first = nugget_next(person=reviewer)
    nugget_task_release(task_id=first.pk, person=reviewer)
    second = nugget_next(person=reviewer)
    assert second.item_id != first.item_id


def test_submitting_twice_is_refused(verified, reviewer):
    task = nugget_next(person=reviewer)
    nugget_submit_draft(task_id=task.pk, person=reviewer, nuggets=LIST)
    with pytest.raises(Conflict):
        nugget_submit_draft(task_id=task.pk, person=reviewer, nuggets=LIST)


def test_new_validated_version_supersedes_old(verified, make_user, organizer):
    from annotation.services.nugget_files import nuggets_import

    writer, v1, v2 = make_user("reviewer"), make_user("reviewer"), make_user("reviewer")
    draft = write(writer)
    nugget_validate(task_id=nugget_next(person=v1).pk, person=v1)
    line = json.dumps(
        {"item_uid": draft.item.uid, "nuggets": [{"id": "n1", "text": "Only this.", "importance": "vital"}]}
    )
    nuggets_import(source=[line], name="new.jsonl", actor=organizer)
    # The validated version stays the one in use until the imported draft is validated.
    assert validated_nuggets([draft.item_id])[draft.item_id].pk == draft.pk
    task = nugget_next(person=v2)
    assert task.stage == "validate"
    newer = nugget_validate(task_id=task.pk, person=v2)
    draft.refresh_from_db()
    assert draft.status == "superseded" and validated_nuggets([draft.item_id])[draft.item_id].pk == newer.pk


def test_organizer_settles_only_when_every_adjudicator_took_part(verified, make_user, organizer):
    only_adjudicator = make_user("adjudicator", "reviewer")
    writer = make_user("reviewer")
    draft = write(writer)
    task = nugget_next(person=only_adjudicator, stage="validate")
    nugget_validate(task_id=task.pk, person=only_adjudicator, nuggets=LIST[:1])
    # The only adjudicator validated it: an organizer settles it, nothing is stuck.
    settled = nugget_adjudicate(item=draft.item, adjudicator=organizer, pick_version=1, note="all took part")
    assert settled.status == "validated"


def test_organizer_is_refused_while_a_free_adjudicator_exists(verified, make_user, organizer):
    make_user("adjudicator")
    writer, validator = make_user("reviewer"), make_user("reviewer")
    draft = write(writer)
    nugget_validate(task_id=nugget_next(person=validator).pk, person=validator, nuggets=LIST[:1])
    with pytest.raises(NotAllowed) as caught:
        nugget_adjudicate(item=draft.item, adjudicator=organizer, pick_version=1, note="x")
    assert caught.value.code == "adjudicator_available"


def test_asking_to_write_while_validating_puts_the_validation_back_and_writes(verified, make_user):
    """Usability F23: ``w`` with a validation lease open used to reopen that validation, so a new nugget typed
    there edited the draft. Now asking for writing gives an item to write; the validation goes back to the queue."""
    writer, validator = make_user("reviewer"), make_user("ranker")
    write(writer)
    validating = nugget_next(person=validator, stage="validate")
    assert validating.stage == "validate"
    writing = nugget_next(person=validator, stage="write")
    assert writing.stage == "write" and writing.item_id != validating.item_id
    validating.refresh_from_db()
    assert validating.status == "released"
    assert nugget_next(person=validator, stage="write").pk == writing.pk  # the new lease is the one held now


def test_asking_for_other_work_when_none_waits_keeps_the_lease(verified, make_user):
    writer, validator = make_user("reviewer"), make_user("ranker")
    write(writer)
    validating = nugget_next(person=validator, stage="validate")
    QAItem.objects.exclude(pk=validating.item_id).update(status="in_review")  # nothing left to write
    assert nugget_next(person=validator, stage="write") is None
    validating.refresh_from_db()
    assert validating.status == "active"
    assert nugget_next(person=validator).pk == validating.pk
