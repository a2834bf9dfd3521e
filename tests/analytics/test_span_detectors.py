"""Detector predictions imported from Mu-SHROOM JSON Lines (refusals naming file, line and field; nothing stored
then), scored against the physicians' spans by hand-computed IoU / Spearman, and the detector pages: organizers
only, no developer output, per-item view escaped and highlighted with classes."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from analytics.models import SpanDetector, SpanPrediction
from analytics.spans.detectors import detector_leaderboard, span_detector_import
from records.jsonl import InputFileError
from tests.span_rows import spanned_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def made(make_user):
    return spanned_study(make_user)


def _lines(records) -> list[bytes]:
    return [json.dumps(r, ensure_ascii=False).encode() for r in records]


def _key(made, uid, system):
    return f"{uid}/{made.answers[uid, system].pk}"


def _perfect_and_silent(made):
    """Predicts s1/SPAN-A exactly as the physicians, marks nothing elsewhere (s2/SPAN-A: hard [[6,10]] missed)."""
    perfect = {
        "id": _key(made, "s1", "SPAN-A"),
        "soft_labels": [{"start": 8, "end": 14, "prob": 0.5}, {"start": 14, "end": 20, "prob": 1.0}],
    }
    silent = [{"id": _key(made, uid, s), "soft_labels": []} for uid, s in made.answers if (uid, s) != ("s1", "SPAN-A")]
    return [perfect, *silent]


def test_import_stores_predictions_and_replaces_them(made, organizer):
    result = span_detector_import(
        study=made.study, detector="Lookup 1", source=_lines(_perfect_and_silent(made)), name="p.jsonl", user=organizer
    )
    assert (result.detector, result.predictions, result.replaced) == ("Lookup 1", 6, 0)
    again = span_detector_import(
        study=made.study,
        detector="Lookup 1",
        source=_lines(_perfect_and_silent(made)[:2]),
        name="p.jsonl",
        user=organizer,
    )
    assert again.replaced == 6 and SpanPrediction.objects.count() == 2


def test_scores_are_the_hand_computed_means(made, organizer):
    span_detector_import(
        study=made.study, detector="Lookup 1", source=_lines(_perfect_and_silent(made)), name="p.jsonl", user=organizer
    )
    board = detector_leaderboard(made.study, n_resamples=200)
    assert board["n_answers"] == 6
    row = board["detectors"][0]
    # IoU per answer: s1 A 1 (exact); s1 B 1 (both empty); s2 A 0 (missed [6,10)); s2 B 1 (no hard label, none
    # predicted); s3 A 0 (missed [0,4)); s3 B 1  -> 4/6
    assert row["iou"].value == pytest.approx(4 / 6)
    # Spearman: s1 A 1 (same vector); constant vectors: s1 B 1, s2 A 0 (physicians vary, detector constant),
    # s2 B 0, s3 A 0, s3 B 1 -> 3/6
    assert row["cor"].value == pytest.approx(3 / 6)
    assert row["n"] == 6 and row["missing"] == 0
    assert row["iou"].ci_low is not None and row["iou"].ci_low <= 4 / 6 <= row["iou"].ci_high
    by_system = {s["system"]: s for s in row["systems"]}
    assert by_system["SPAN-A"]["iou"].value == pytest.approx(1 / 3)
    assert by_system["SPAN-B"]["iou"].value == pytest.approx(1.0)


def test_a_file_with_hard_labels_only_is_imported_with_each_span_at_probability_one(made, organizer):
    """The official Mu-SHROOM scorer accepts a prediction file without soft_labels and infers them, each hard span
    at probability 1 (Helsinki-NLP/mu-shroom, participant_kit/scorer.py: infer_soft_labels); it was refused here."""
    hit = {"id": _key(made, "s1", "SPAN-A"), "hard_labels": [[14, 20]]}
    rest = [{"id": _key(made, uid, s), "hard_labels": []} for uid, s in made.answers if (uid, s) != ("s1", "SPAN-A")]
    span_detector_import(study=made.study, detector="Hard", source=_lines([hit, *rest]), name="h.jsonl", user=organizer)
    stored = SpanPrediction.objects.get(answer=made.answers["s1", "SPAN-A"])
    assert stored.hard_labels == [[14, 20]] and stored.soft_labels == [{"start": 14, "end": 20, "prob": 1.0}]
    row = detector_leaderboard(made.study, n_resamples=50)["detectors"][0]
    # IoU as in test_scores_are_the_hand_computed_means: the physicians' hard labels of s1/SPAN-A are [14, 20)
    # (one of two marked 8-14), matched exactly; s2/SPAN-A and s3/SPAN-A missed; the SPAN-B answers both empty
    assert row["iou"].value == pytest.approx(4 / 6)


@pytest.mark.parametrize(
    ("records", "line", "field", "detail"),
    [
        ([{"id": "nope", "soft_labels": []}], 1, "id", "no answer of this study"),
        ([{"id": "KEY", "soft_labels": [{"start": 0, "end": 99, "prob": 1}]}], 1, "soft_labels (entry 1)", "after"),
        ([{"id": "KEY", "soft_labels": [], "hard_labels": [[3, 2]]}], 1, "hard_labels (entry 1)", "empty"),
        ([{"id": "KEY", "soft_labels": []}, {"id": "KEY", "soft_labels": []}], 2, "id", "already given"),
        ([{"id": "KEY"}], 1, "soft_labels", "missing"),
        ([{"id": "KEY", "soft_labels": [], "model_output_text": "other"}], 1, "model_output_text", "not the text"),
    ],
)
def test_bad_files_are_refused_naming_line_and_field(made, organizer, records, line, field, detail):
    key = _key(made, "s1", "SPAN-A")
    records = [{k: (key if v == "KEY" else v) for k, v in r.items()} for r in records]
    with pytest.raises(InputFileError) as caught:
        span_detector_import(study=made.study, detector="d", source=_lines(records), name="bad.jsonl", user=organizer)
    assert (caught.value.file, caught.value.line, caught.value.field) == ("bad.jsonl", line, field)
    assert detail in caught.value.detail
    assert not SpanDetector.objects.exists()


def test_detector_names_follow_the_judge_rule(made, organizer):
    for bad in ("a/b", made.physicians[0].pseudonym, "physicians"):
        with pytest.raises(InputFileError) as caught:
            span_detector_import(
                study=made.study, detector=bad, source=_lines(_perfect_and_silent(made)), name="p.jsonl", user=organizer
            )
        assert caught.value.field == "detector name"
    assert not SpanDetector.objects.exists()


def _imported(made, organizer, capture, detector="Lookup 1", records=None):
    """Import a detector's predictions and run what the import queued (the leaderboard job) as a worker would."""
    with capture(execute=True):
        return span_detector_import(
            study=made.study,
            detector=detector,
            source=_lines(records or _perfect_and_silent(made)),
            name="p.jsonl",
            user=organizer,
        )


def test_pages_for_organizers_only(made, client, make_user, organizer, django_capture_on_commit_callbacks):
    _imported(made, organizer, django_capture_on_commit_callbacks)
    urls = [
        reverse("span_detectors", args=[made.study.pk]),
        reverse("span_plot", args=[made.study.pk, "svg"]),
        reverse("span_item", args=[made.study.pk, made.questions["s1"].pk]),
    ]
    for role in ("ranker", "reviewer"):
        client.force_login(make_user(role))
        for url in urls:
            assert client.get(url).status_code in (403, 404), (role, url)
    client.force_login(organizer)
    for url in urls:
        assert client.get(url).status_code == 200, url


def test_leaderboard_page_reads_well(made, client, organizer, django_capture_on_commit_callbacks):
    _imported(made, organizer, django_capture_on_commit_callbacks)
    client.force_login(organizer)
    html = client.get(reverse("span_detectors", args=[made.study.pk])).content.decode()
    assert "Lookup 1" in html and "0.667" in html and "SPAN-A" in html
    for dev in ("None", "{'", "n_answers", "0.6666"):
        assert dev not in html


def test_upload_refusal_is_shown_and_stores_nothing(made, client, organizer):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(organizer)
    upload = SimpleUploadedFile("bad.jsonl", b'{"id": "nope", "soft_labels": []}\n')
    response = client.post(reverse("span_detectors", args=[made.study.pk]), {"detector": "d1", "file": upload})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was imported" in html and "line 1" in html and "“id”" in html
    assert not SpanDetector.objects.exists()


def test_item_view_highlights_with_classes_and_escapes(made, client, organizer):
    from ranking.models import StudyAnswer

    StudyAnswer.objects.filter(pk=made.answers["s1", "SPAN-B"].pk).update(text="<script>x</script> daily.")
    client.force_login(organizer)
    html = client.get(reverse("span_item", args=[made.study.pk, made.questions["s1"].pk])).content.decode()
    assert '<mark class="shade-2">cures </mark><mark class="shade-4 hard">cancer</mark>' in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>x" not in html
    # organizers read the physicians' names (the name a person has everywhere in the portal), never a number
    assert str(made.physicians[0]) in html and str(made.physicians[1]) in html and "Physician 1" not in html
    assert made.physicians[0].pseudonym not in html and "style=" not in html
    assert "“cancer” (characters 15–20" in html
    assert 'rel="next"' in html and 'rel="prev"' not in html


def test_linked_from_the_analytics_home(made, client, organizer):
    client.force_login(organizer)
    html = client.get(reverse("analytics_home")).content.decode()
    assert reverse("span_detectors", args=[made.study.pk]) in html


def test_item_view_reads_only_its_question(made, client, organizer, make_user):
    """The page's work does not grow with the rest of the study; s3 was read by the first physician only."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.span_rows import submitted_task

    client.force_login(organizer)
    url = reverse("span_item", args=[made.study.pk, made.questions["s3"].pk])
    client.get(url)  # a session's first request also stamps its activity (the idle timeout): not the page's work
    with CaptureQueriesContext(connection) as before:
        html = client.get(url).content.decode()
    assert str(made.physicians[0]) in html and str(made.physicians[1]) not in html
    for _ in range(3):  # more physicians marking another question
        submitted_task(made.questions["s1"], make_user("ranker"), {made.answers["s1", "SPAN-A"]: [(0, 7, "other")]})
    with CaptureQueriesContext(connection) as after:
        client.get(url)
    assert len(after.captured_queries) == len(before.captured_queries)
    rows = [q["sql"] for q in after.captured_queries if "ranking_hallucinationspan" in q["sql"]]
    assert rows and all(str(made.questions["s3"].pk) in sql for sql in rows)


def test_the_import_queues_the_leaderboard_job_and_the_page_reads_what_it_stored(
    made, client, organizer, monkeypatch, django_capture_on_commit_callbacks
):
    """At a large study's size the leaderboard takes seconds: the job computes it once, the page only reads it."""
    from analytics.models import SpanLeaderboard
    from analytics.spans import detectors as span_detectors

    _imported(made, organizer, django_capture_on_commit_callbacks)
    stored = SpanLeaderboard.objects.get(study=made.study)
    assert stored.job.status == "succeeded" and stored.job.progress_done == stored.job.progress_total == 2
    assert stored.job.result == {"detectors": 1, "answers_read": 6}
    row = stored.result["detectors"][0]
    assert row["iou"]["value"] == pytest.approx(4 / 6) and row["cor"]["value"] == pytest.approx(3 / 6)
    assert row["iou"]["ci_low"] <= 4 / 6 <= row["iou"]["ci_high"]

    def refuse(*args, **kwargs):
        raise AssertionError("the page computed the leaderboard")

    monkeypatch.setattr(span_detectors, "detector_rows", refuse)
    client.force_login(organizer)
    html = client.get(reverse("span_detectors", args=[made.study.pk])).content.decode()
    assert "Lookup 1" in html and "0.667" in html and "data-computed" in html and "data-stale" not in html
    assert client.get(reverse("span_plot", args=[made.study.pk, "svg"])).status_code == 200


def test_the_page_says_what_changed_since_and_computes_again_on_request(
    made, client, organizer, make_user, django_capture_on_commit_callbacks
):
    from analytics.models import SpanLeaderboard
    from tests.span_rows import submitted_task

    _imported(made, organizer, django_capture_on_commit_callbacks)
    url = reverse("span_detectors", args=[made.study.pk])
    client.force_login(organizer)
    submitted_task(made.questions["s3"], make_user("ranker"), {made.answers["s3", "SPAN-B"]: [(0, 3, "other")]})
    html = client.get(url).content.decode()
    assert "data-stale" in html and "1 more physician judgement submitted" in html
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"action": "recompute"})
    assert response.status_code == 302
    html = client.get(url).content.decode()
    assert "data-stale" not in html
    # s3/SPAN-B is now marked by one of two physicians: its hard label is empty, its soft label is not
    stored = SpanLeaderboard.objects.get(study=made.study)
    assert stored.result["detectors"][0]["cor"]["value"] == pytest.approx(2 / 6)
    # a second detector whose job has not run yet: the page shows the job's progress above the stored board
    span_detector_import(
        study=made.study, detector="Lookup 2", source=_lines(_perfect_and_silent(made)), name="q.jsonl", user=organizer
    )
    html = client.get(url).content.decode()
    assert "Computing the leaderboard" in html and 'id="job-progress"' in html and "Lookup 1" in html
    assert "data-stale" not in html


def test_one_job_at_a_time_and_a_failed_one_is_shown_with_a_way_to_run_it_again(
    made, client, organizer, django_capture_on_commit_callbacks
):
    from analytics.models import SpanLeaderboard
    from analytics.spans.detectors import span_leaderboard_refresh
    from portal.models import Job

    span_detector_import(
        study=made.study, detector="Lookup 1", source=_lines(_perfect_and_silent(made)), name="p.jsonl", user=organizer
    )
    first = SpanLeaderboard.objects.get(study=made.study).job
    assert span_leaderboard_refresh(study=made.study, user=organizer).job == first  # still queued: no second job
    assert Job.objects.filter(kind="span_leaderboard").count() == 1
    client.force_login(organizer)
    url = reverse("span_detectors", args=[made.study.pk])
    assert client.get(reverse("span_plot", args=[made.study.pk, "png"])).status_code == 404  # nothing computed yet
    Job.objects.filter(pk=first.pk).update(status="failed", error="The worker ran out of memory.")
    html = client.get(url).content.decode()
    assert "The last computation failed" in html and "The worker ran out of memory." in html
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"action": "recompute"})
    stored = SpanLeaderboard.objects.get(study=made.study)
    assert stored.job != first and stored.job.status == "succeeded"
    assert "The last computation failed" not in client.get(url).content.decode()


def test_detectors_without_a_leaderboard_get_a_button_to_compute_it(
    made, client, organizer, django_capture_on_commit_callbacks
):
    from analytics.models import SpanLeaderboard

    _imported(made, organizer, django_capture_on_commit_callbacks)
    SpanLeaderboard.objects.all().delete()  # a database restored from before the leaderboard was stored
    client.force_login(organizer)
    url = reverse("span_detectors", args=[made.study.pk])
    html = client.get(url).content.decode()
    assert "1 detector imported; the leaderboard has not been computed yet" in html
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"action": "recompute"})
    assert "0.667" in client.get(url).content.decode()


def test_the_stored_leaderboard_reads_back_as_computed(made, organizer):
    from analytics.spans.detectors import board_from_json, board_json

    span_detector_import(
        study=made.study, detector="Lookup 1", source=_lines(_perfect_and_silent(made)), name="p.jsonl", user=organizer
    )
    board = detector_leaderboard(made.study, n_resamples=50)
    assert board_from_json(json.loads(json.dumps(board_json(board)))) == board
