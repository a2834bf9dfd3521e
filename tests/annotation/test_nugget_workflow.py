"""The nugget workflow's rules: the state table, who may do what, the checks on a list (no database)."""

from __future__ import annotations

import pytest

from annotation.models import NuggetSet
from annotation.nugget_workflow import (
    NUGGET_TRANSITIONS,
    IllegalNuggetMove,
    NuggetAction,
    NuggetListError,
    SetStatus,
    item_needs_nuggets,
    may_adjudicate_nuggets,
    may_import_nuggets,
    may_validate_nuggets,
    may_write_nuggets,
    nugget_conflict_of_interest,
    nugget_list_clean,
    nugget_lists_equal,
    nugget_next_status,
)
from metrics.nuggets import Nugget


def test_states_are_the_models_states():
    assert SetStatus.values == NuggetSet.Status.values


@pytest.mark.parametrize(
    ("state", "action", "target"),
    [
        ("draft", "accept", "validated"),
        ("draft", "change", "disputed"),
        ("disputed", "pick", "validated"),
        ("disputed", "set_aside", "superseded"),
        ("validated", "supersede", "superseded"),
        ("draft", "supersede", "superseded"),
    ],
)
def test_allowed_moves(state, action, target):
    assert nugget_next_status(state, action) == target


def test_every_other_move_is_refused():
    for state in SetStatus.values:
        for action in NuggetAction.values:
            if (state, action) in NUGGET_TRANSITIONS:
                continue
            with pytest.raises(IllegalNuggetMove):
                nugget_next_status(state, action)
    # Nothing leaves "superseded"; a validated version is never validated again.
    assert not [key for key in NUGGET_TRANSITIONS if key[0] == "superseded"]
    with pytest.raises(IllegalNuggetMove):
        nugget_next_status("validated", "accept")
    with pytest.raises(IllegalNuggetMove):
        nugget_next_status("draft", "no-such-move")


def test_only_verified_free_text_items_need_nuggets():
    assert item_needs_nuggets(qa_type="short_answer", item_status="verified")
    assert item_needs_nuggets(qa_type="multi_hop_inverse", item_status="verified")
    assert item_needs_nuggets(qa_type="generic", item_status="verified")
    assert not item_needs_nuggets(qa_type="short_answer", item_status="imported")
    assert not item_needs_nuggets(qa_type="true_false", item_status="verified")
    assert not item_needs_nuggets(qa_type="multiple_choice", item_status="verified")


def test_roles():
    assert may_write_nuggets({"reviewer"}) and may_write_nuggets({"ranker"}) and may_write_nuggets({"adjudicator"})
    assert not may_write_nuggets({"organizer"}) and not may_write_nuggets(set())
    assert may_validate_nuggets({"reviewer"}, person_id=1, author_id=2)
    assert not may_validate_nuggets({"reviewer"}, person_id=1, author_id=1)  # never your own version
    assert not may_validate_nuggets({"organizer"}, person_id=1, author_id=2)
    assert may_adjudicate_nuggets({"adjudicator"}) and not may_adjudicate_nuggets({"reviewer", "ranker"})
    assert may_import_nuggets({"organizer"}) and not may_import_nuggets({"adjudicator"})


def test_conflict_of_interest_covers_both_versions():
    assert nugget_conflict_of_interest(person_id=3, participant_ids=[1, 3])
    assert nugget_conflict_of_interest(person_id=1, participant_ids=[1, 3])
    assert not nugget_conflict_of_interest(person_id=2, participant_ids=[1, 3, None])


def entry(text, importance="vital", id=""):
    return {"id": id, "text": text, "importance": importance}


def test_clean_trims_and_numbers_new_nuggets():
    result = nugget_list_clean([entry("  Aspirin\n inhibits   COX. ", id="n2"), entry("Take with food", "okay")])
    assert result == [Nugget("n2", "Aspirin inhibits COX.", "vital"), Nugget("n1", "Take with food", "okay")]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([], "at least one nugget"),
        ([entry(f"fact {i}") for i in range(31)], "at most 30"),
        ([entry("   ")], "nugget 1: the text is empty"),
        ([entry("x" * 2001)], "2,001 characters"),
        ([entry("Fact A"), entry("fact  a", "okay")], "nugget 2: the same text as nugget 1"),
        ([entry("Fact A", "okay")], "at least one nugget vital"),
        ([entry("Fact A", "important")], "importance must be one of vital, okay, avoid"),
        ([entry("A", id="n1"), entry("B", id="n1")], "the id 'n1' is used by nugget 1"),
        ([entry("A", id="bad id!")], "the id must be"),
    ],
)
def test_clean_refuses_each_broken_rule(entries, message):
    with pytest.raises(NuggetListError) as caught:
        nugget_list_clean(entries)
    assert message in str(caught.value)


def test_clean_reports_every_problem_at_once():
    with pytest.raises(NuggetListError) as caught:
        nugget_list_clean([entry("", "okay"), entry("B", "bad")])
    fields = [(p.entry, p.field) for p in caught.value.problems]
    assert (1, "text") in fields and (2, "importance") in fields and (None, "") in fields


def test_two_kilobyte_text_is_accepted():
    assert nugget_list_clean([entry("x" * 2000)])[0].text == "x" * 2000


def test_lists_equal_ignores_ids_only():
    a = [Nugget("n1", "A", "vital"), Nugget("n2", "B", "okay")]
    assert nugget_lists_equal(a, [Nugget("x", "A", "vital"), Nugget("y", "B", "okay")])
    assert not nugget_lists_equal(a, [Nugget("n1", "A", "vital"), Nugget("n2", "B", "avoid")])
    assert not nugget_lists_equal(a, list(reversed(a)))
