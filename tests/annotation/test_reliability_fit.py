"""The reliability model of the vetting labels in the portal: which judgements it reads, what a fit stores, the
refit trigger and job, the drift rule, and the organizers' page. Known answers: crowd-kit's Dawid–Skene on the same
labels (the reference library the pure fit is held to) and expected counts computed here by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from django.test import Client, override_settings

from annotation.models import QAItem, Review
from annotation.models.reliability import ReliabilityFit, ReviewerReliability
from annotation.services.adjudication import item_adjudicate
from annotation.services.gold import gold_mark
from annotation.services.queue import assignment_next
from annotation.services.reliability import (
    LABELS,
    reliability_fit,
    reliability_fit_request,
    reliability_refit_due,
    vetting_labels,
)
from portal.models import Job, TrainingLevel

pytestmark = pytest.mark.django_db


def _vet(reviewers, review, *, verdict_of, rounds: int) -> list[Review]:
    """Each reviewer in turn takes the next item and gives ``verdict_of(reviewer, item)``."""
    stored = []
    for turn in range(rounds):
        reviewer = reviewers[turn % len(reviewers)]
        lease = assignment_next(reviewer=reviewer)
        if lease is None:
            continue
        verdict = verdict_of(reviewer, lease.item)
        reason = "excerpt" if verdict == "cannot_tell" else ""
        stored.append(review(lease, verdict, 5 if verdict == "correct" else 3, cannot_tell_reason=reason))
    return stored


def test_the_model_reads_reviews_adjudications_and_gold_answers_but_not_outside_my_field(
    sample_items, config, make_user, review, organizer
):
    config.second_share, config.gold_rate = 1.0, 0.0
    config.save()
    gold_item = sample_items[0]
    gold_mark(item=gold_item, expected_verdict="incorrect", by=organizer, planted_error=True)
    first, second, outsider = make_user("reviewer"), make_user("reviewer"), make_user("reviewer")
    lease = assignment_next(reviewer=outsider)
    review(lease, "cannot_tell", 3, cannot_tell_reason="outside_field")  # judges nothing
    a = assignment_next(reviewer=first)
    review(a, "correct", 5)
    b = assignment_next(reviewer=second)
    assert b.item_id == a.item_id  # the second review of the same item
    review(b, "incorrect", 2)
    adjudicator = make_user("adjudicator")
    item_adjudicate(item=QAItem.objects.get(pk=a.item_id), adjudicator=adjudicator, verdict="incorrect",
                    relevance=2, reason="The source says otherwise.")  # fmt: skip
    config.gold_rate = 1.0
    config.save()
    gold_lease = assignment_next(reviewer=first)
    assert gold_lease.item_id == gold_item.pk
    review(gold_lease, "correct", 5)  # a gold answer: wrong, as it happens

    data = vetting_labels()
    rows = {
        (data.item_ids[item], data.worker_keys[worker], LABELS[label])
        for item, worker, label in zip(data.items, data.workers, data.labels, strict=True)
    }
    assert rows == {
        (a.item_id, (first.pk, False), "correct"),
        (a.item_id, (second.pk, False), "incorrect"),
        (a.item_id, (adjudicator.pk, True), "incorrect"),
        (gold_item.pk, (first.pk, False), "correct"),
    }
    assert data.gold == {data.item_ids.index(gold_item.pk): LABELS.index("incorrect")}
    assert list(data.primary) == [True, False, False, False]  # time order: first review, second, adjudication, gold


def test_a_fit_stores_what_crowd_kit_finds_and_the_expected_counts(sample_items, config, make_user, review):
    from crowdkit.aggregation import DawidSkene

    config.second_share, config.gold_rate = 1.0, 0.0
    config.save()
    reviewers = [make_user("reviewer") for _ in range(3)]
    wrong = {item.pk for item in sample_items[::4]}
    careless = reviewers[2]

    def verdict_of(reviewer, item):
        truth = "incorrect" if item.pk in wrong else "correct"
        return "correct" if reviewer == careless else truth

    _vet(reviewers, review, verdict_of=verdict_of, rounds=60)
    fitted = reliability_fit()
    assert fitted is not None and ReliabilityFit.objects.count() == 1
    data = vetting_labels()
    frame = pd.DataFrame({"task": data.items, "worker": data.workers, "label": [LABELS[code] for code in data.labels]})
    reference = DawidSkene(n_iter=100, tol=1e-5).fit(frame)
    priors = reference.priors_.reindex(LABELS).fillna(0.0)
    assert fitted.prior == pytest.approx(dict(priors), abs=1e-4)
    posteriors = reference.probas_.reindex(columns=list(LABELS)).fillna(0.0).sort_index().to_numpy()
    for person in reviewers:
        stored = ReviewerReliability.objects.get(fit=fitted, person=person, qa_type="", as_adjudicator=False)
        worker = data.worker_keys.index((person.pk, False))
        mine = data.workers == worker
        cells = np.zeros((3, 3))
        for item, label in zip(data.items[mine], data.labels[mine], strict=True):
            cells[:, label] += posteriors[item]
        for k, truth in enumerate(LABELS):
            if cells[k].sum() > 1e-9:
                for g, given in enumerate(LABELS):
                    assert stored.confusion[truth][given] == pytest.approx(cells[k, g] / cells[k].sum(), abs=1e-4)
        right = posteriors[data.items[mine], data.labels[mine]]
        assert stored.accuracy == pytest.approx(right.mean(), abs=1e-4)
        assert stored.accuracy_low <= stored.accuracy <= stored.accuracy_high
        assert stored.n_labels == int(mine.sum())
    careless_row = ReviewerReliability.objects.get(fit=fitted, person=careless, qa_type="")
    careful_row = ReviewerReliability.objects.get(fit=fitted, person=reviewers[0], qa_type="")
    assert careless_row.confusion["incorrect"]["correct"] > careful_row.confusion["incorrect"]["correct"]
    # per QA type, each type's labels only
    types = ReviewerReliability.objects.filter(fit=fitted, person=reviewers[0]).exclude(qa_type="")
    assert sum(row.n_labels for row in types) == careful_row.n_labels
    assert set(fitted.prior_by_type) == {item.qa_type for item in QAItem.objects.filter(reviews__isnull=False)}


@override_settings(RELIABILITY_WINDOW=5)
def test_a_reviewer_whose_latest_window_drops_below_their_record_is_prompted(
    sample_items, config, make_user, review, client
):
    config.second_share, config.gold_rate = 1.0, 0.0
    config.save()
    steady, slipping = make_user("reviewer"), make_user("reviewer")
    slipping.training_level = TrainingLevel.STUDENT_3
    slipping.save(update_fields=["training_level"])
    counts = {steady.pk: 0, slipping.pk: 0}

    def verdict_of(reviewer, item):
        counts[reviewer.pk] += 1
        if reviewer == slipping and counts[reviewer.pk] > 24:
            return "incorrect"  # their last judgements go against everything the others say
        return "correct"

    _vet([steady, slipping], review, verdict_of=verdict_of, rounds=70)
    adjudicator = make_user("adjudicator")
    for item in QAItem.objects.filter(status="in_adjudication"):  # a senior reading settles each disagreement
        item_adjudicate(
            item=item, adjudicator=adjudicator, verdict="correct", relevance=5, reason="As the source says."
        )
    fitted = reliability_fit()
    assert ReviewerReliability.objects.get(fit=fitted, person=slipping, qa_type="").drift
    assert not ReviewerReliability.objects.get(fit=fitted, person=steady, qa_type="").drift
    windows = ReviewerReliability.objects.get(fit=fitted, person=slipping, qa_type="").windows
    assert [w["n"] for w in windows][:2] == [5, 5] and windows[-1]["accuracy"] < windows[0]["accuracy"]
    client.force_login(slipping)
    assert 'id="recalibrate"' in client.get("/").content.decode()
    client.force_login(steady)
    assert 'id="recalibrate"' not in client.get("/").content.decode()


def test_the_refit_is_due_after_a_batch_and_runs_as_a_job(
    sample_items, config, make_user, review, organizer, django_capture_on_commit_callbacks
):
    assert not reliability_refit_due()  # nothing stored yet
    reviewer = make_user("reviewer")
    _vet([reviewer], review, verdict_of=lambda r, i: "correct", rounds=3)
    assert reliability_refit_due()  # no fit yet, and reviews exist
    with django_capture_on_commit_callbacks(execute=True):
        job = reliability_fit_request(user=organizer)
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result["fit_id"] == ReliabilityFit.objects.get().pk
    with override_settings(RELIABILITY_REFIT_EVERY=2):
        assert not reliability_refit_due()
        _vet([reviewer], review, verdict_of=lambda r, i: "correct", rounds=2)
        assert reliability_refit_due()


def test_the_reliability_page_groups_reviewers_by_training_level_for_organizers_only(
    sample_items, config, make_user, review, organizer, django_capture_on_commit_callbacks
):
    resident, unstated = make_user("reviewer"), make_user("reviewer")
    resident.training_level, resident.specialty = TrainingLevel.RESIDENT, "Cardiology <b>"
    resident.save(update_fields=["training_level", "specialty"])
    _vet([resident, unstated], review, verdict_of=lambda r, i: "correct", rounds=8)
    client = Client()
    client.force_login(organizer)
    assert "No fit yet" in client.get("/organize/vetting/reliability/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/organize/vetting/reliability/")
    assert response.status_code == 302 and "/jobs/" in response["Location"]
    page = client.get("/organize/vetting/reliability/").content.decode()
    assert page.index("Resident") < page.index("Training level not stated")
    assert "Cardiology &lt;b&gt;" in page and "Cardiology <b>" not in page
    assert "Calls a wrong item correct" in page
    client.force_login(resident)
    assert client.get("/organize/vetting/reliability/").status_code == 403


def test_an_empty_database_fits_nothing():
    assert reliability_fit() is None
    assert not ReliabilityFit.objects.exists()


def test_a_second_request_while_a_fit_waits_is_the_same_job(organizer, make_user):
    """Two tabs (or a double click) on "Fit again now" start one fit: it reads every judgement either way."""
    first = reliability_fit_request(user=organizer)  # queued: its transaction's commit never runs here
    assert reliability_fit_request(user=make_user("organizer")).pk == first.pk
    assert Job.objects.filter(kind="reliability_fit").count() == 1
