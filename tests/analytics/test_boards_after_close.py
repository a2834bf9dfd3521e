"""Closing a study computes its stored boards again from its final judgements (ranking announces the close with
``ranking.signals.study_closed``; analytics, the layer above, listens)."""

from __future__ import annotations

import json

import pytest

from analytics.models import NuggetLeaderboard, SpanLeaderboard
from analytics.spans.detectors import span_detector_import
from portal.models import Job
from ranking.services.studies import study_state_set
from tests.analytics.nugget_rows import hand_study
from tests.span_rows import spanned_study

pytestmark = pytest.mark.django_db


def test_closing_a_nugget_study_computes_its_leaderboard_from_every_judgement(
    make_user, organizer, django_capture_on_commit_callbacks
):
    made = hand_study(make_user)
    with django_capture_on_commit_callbacks(execute=True):
        study_state_set(study=made.study, state="closed", user=organizer)
    stored = NuggetLeaderboard.objects.get(study=made.study)
    assert stored.job.status == Job.Status.SUCCEEDED and stored.job.created_by == organizer
    assert stored.result["summary"]["systems"]["SYS-A"]["consensus"]["all"] == 0.75
    assert stored.inputs["labels"]["submitted_tasks"] == 2


def test_only_closing_queues_and_only_the_boards_a_study_has(make_user, organizer, django_capture_on_commit_callbacks):
    made = hand_study(make_user)
    with django_capture_on_commit_callbacks(execute=True):
        study_state_set(study=made.study, state="open", user=organizer)  # already open: nothing happens
        made.study.ask_nuggets = False
        made.study.save(update_fields=["ask_nuggets"])
        study_state_set(study=made.study, state="closed", user=organizer)  # closed, but asks for no nuggets
    assert not NuggetLeaderboard.objects.exists() and not SpanLeaderboard.objects.exists()
    assert not Job.objects.filter(kind__in=["nugget_leaderboard", "span_leaderboard"]).exists()


def test_closing_a_span_study_with_a_detector_computes_its_detector_leaderboard(
    make_user, organizer, django_capture_on_commit_callbacks
):
    made = spanned_study(make_user)
    line = {"id": f"s1/{made.answers['s1', 'SPAN-A'].pk}", "soft_labels": []}
    span_detector_import(
        study=made.study, detector="Lookup", source=[json.dumps(line).encode()], name="p.jsonl", user=organizer
    )  # its own job is queued here and never run (no capture): closing queues none beside it
    with django_capture_on_commit_callbacks(execute=True):
        study_state_set(study=made.study, state="closed", user=organizer)
    assert Job.objects.filter(kind="span_leaderboard").count() == 1
    SpanLeaderboard.objects.update(job=None)  # that job gone: closing again computes the board
    with django_capture_on_commit_callbacks(execute=True):
        study_state_set(study=made.study, state="open", user=organizer)
        study_state_set(study=made.study, state="closed", user=organizer)
    stored = SpanLeaderboard.objects.get(study=made.study)
    assert stored.job.status == Job.Status.SUCCEEDED and stored.result["detectors"][0]["name"] == "Lookup"
