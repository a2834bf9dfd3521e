"""The matcher job stores one label per answer × nugget, with evidence, and a re-run replaces its labels."""

from __future__ import annotations

import numpy as np
import pytest
from django.test import override_settings

from analytics.models import JudgeNuggetLabel
from analytics.nuggets.matching import nugget_matcher_request, nugget_matcher_run
from portal.errors import DomainError
from portal.models import AuditEntry, Job
from tests.analytics.nugget_rows import nugget_study

pytestmark = pytest.mark.django_db

ITEMS = {
    "q1": {
        # n1 verbatim, nothing else of the nuggets
        "SYS-A": "Aspirin inhibits platelet aggregation. It is cheap.",
        # nothing of the nuggets at all
        "SYS-B": "Drink water. Sleep well.",
    }
}


def fake_encode(texts):
    """Same text, same unit vector; different texts orthogonal (cosine 1 or 0): a verbatim nugget is support."""
    vocabulary: dict[str, int] = {}
    index = [vocabulary.setdefault(t, len(vocabulary)) for t in texts]
    vectors = np.zeros((len(texts), max(len(vocabulary), 1)), dtype=np.float32)
    vectors[np.arange(len(texts)), index] = 1.0
    return vectors


def _labels(study):
    return {
        (row.answer.system.name, row.nugget.key): row
        for row in JudgeNuggetLabel.objects.filter(answer__question__study=study).select_related(
            "answer__system", "nugget"
        )
    }


def test_matcher_labels_every_answer_and_nugget_with_evidence(organizer):
    made = nugget_study(items=ITEMS)
    result = nugget_matcher_run(study=made.study, support_threshold=0.75, partial_threshold=0.6, encode=fake_encode)
    labels = _labels(made.study)
    assert len(labels) == 6 and result["labels"] == 6 and result["answers"] == 2
    hit = labels["SYS-A", "n1"]
    assert (hit.label, hit.sentence_index, hit.evidence) == ("support", 0, "Aspirin inhibits platelet aggregation.")
    assert hit.similarity == pytest.approx(1.0)
    assert {labels["SYS-B", key].label for key in ("n1", "n2", "n3")} == {"not_support"}
    assert all(row.labeller == "matcher" and row.source == "matcher" for row in labels.values())
    assert result["support_threshold"] == 0.75 and result["support"] == 1


def test_rerun_replaces_the_matchers_labels_and_keeps_judges(organizer):
    made = nugget_study(items=ITEMS)
    answer = made.answers["q1", "SYS-A"]
    nugget = made.questions[0].nugget_set.nuggets.get(key="n2")
    JudgeNuggetLabel.objects.create(answer=answer, nugget=nugget, labeller="llm", source="import", label="support")
    nugget_matcher_run(study=made.study, support_threshold=0.75, partial_threshold=0.6, encode=fake_encode)
    # A stricter second run: the verbatim match is still support; nothing doubles up.
    result = nugget_matcher_run(study=made.study, support_threshold=1.0, partial_threshold=0.9, encode=fake_encode)
    assert result["replaced"] == 6
    assert JudgeNuggetLabel.objects.filter(labeller="matcher").count() == 6
    assert JudgeNuggetLabel.objects.filter(labeller="llm").count() == 1
    assert AuditEntry.objects.filter(action="nugget_matcher_run").count() == 2


def test_request_runs_the_job_with_the_settings_thresholds(organizer, monkeypatch, django_capture_on_commit_callbacks):
    import analytics.nuggets.matching as matching

    made = nugget_study(items=ITEMS)
    monkeypatch.setattr(matching, "sentence_encoder", lambda encoder: fake_encode)
    monkeypatch.setattr("analytics.nuggets.matching.settings_encoder", lambda: None)
    with (
        override_settings(NUGGET_SUPPORT_THRESHOLD=0.8, NUGGET_PARTIAL_THRESHOLD=0.5),
        django_capture_on_commit_callbacks(execute=True),
    ):
        job = nugget_matcher_request(study=made.study, user=organizer)
    job.refresh_from_db()
    assert job.params["support_threshold"] == 0.8 and job.params["partial_threshold"] == 0.5
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result["labels"] == 6 and job.result["support_threshold"] == 0.8
    assert JudgeNuggetLabel.objects.filter(labeller="matcher").count() == 6


def test_request_refuses_a_study_without_nuggets_and_bad_thresholds(organizer):
    from ranking.models import Study

    with pytest.raises(DomainError, match="no questions with validated nuggets"):
        nugget_matcher_request(study=Study.objects.create(name="plain"), user=organizer)
    made = nugget_study(items=ITEMS)
    with override_settings(NUGGET_SUPPORT_THRESHOLD=0.5, NUGGET_PARTIAL_THRESHOLD=0.7):
        with pytest.raises(DomainError, match="must not exceed"):
            nugget_matcher_request(study=made.study, user=organizer)
    assert not Job.objects.filter(kind="nugget_matcher").exists()


@pytest.mark.slow
def test_real_model_matches_a_verbatim_nugget_and_not_an_unrelated_answer(organizer):
    made = nugget_study(items=ITEMS)
    nugget_matcher_run(study=made.study, support_threshold=0.75, partial_threshold=0.6)
    labels = _labels(made.study)
    assert labels["SYS-A", "n1"].label == "support"
    assert labels["SYS-A", "n1"].evidence == "Aspirin inhibits platelet aggregation."
    assert labels["SYS-B", "n1"].label == "not_support"


def test_a_matcher_run_queues_the_nugget_board_and_its_job_stores_it(organizer, django_capture_on_commit_callbacks):
    from analytics.models import NuggetLeaderboard

    made = nugget_study(items=ITEMS)
    with django_capture_on_commit_callbacks(execute=True):
        nugget_matcher_run(study=made.study, support_threshold=0.75, partial_threshold=0.6, encode=fake_encode)
    stored = NuggetLeaderboard.objects.get(study=made.study)
    assert stored.job.kind == "nugget_leaderboard" and stored.job.status == Job.Status.SUCCEEDED
    assert stored.result["labellers"] == ["matcher"] and stored.inputs["labellers"]["matcher"][0] == 6
    assert stored.result["summary"]["systems"]["SYS-A"]["matcher"]["all"] == 0.5  # n1 of the vital/okay n1, n2
