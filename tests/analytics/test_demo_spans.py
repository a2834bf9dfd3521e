"""The demo study carries hallucination spans from both demo rankers (both kinds, some agreement, some not) and two
demo detectors, so the detector leaderboard, the report's span sections and the per-item view have content."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from analytics.models import Report, SpanDetector
from analytics.span_detectors import detector_leaderboard
from ranking.models import HallucinationSpan, Study
from ranking.span_selectors import study_span_labels

pytestmark = pytest.mark.django_db


def test_demo_has_spans_detectors_and_pages(client, capsys, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo")
    out = capsys.readouterr().out
    assert "Hallucination spans:" in out
    study = Study.objects.get(name="Demo study")
    assert study.ask_spans
    spans = HallucinationSpan.objects.filter(task__study=study)
    assert spans.values("task__ranker").distinct().count() == 2
    assert {"intrinsic", "extrinsic"} <= set(spans.values_list("kind", flat=True))
    labels = [a for a in study_span_labels(study) if a.n_annotators >= 2]
    marked_by_both = [a for a in labels if all(x.spans for x in a.annotations)]
    differing = [a for a in labels if len({tuple(x.spans) for x in a.annotations}) > 1]
    assert marked_by_both and differing
    for span in spans.select_related("answer")[:20]:  # spans lie on word boundaries of the answer
        text = span.answer.text
        assert text[span.start].isalnum() and text[span.end - 1].isalnum()
    assert SpanDetector.objects.filter(study=study).count() == 2
    board = detector_leaderboard(study, n_resamples=50)
    assert all(row["iou"].value is not None for row in board["detectors"])
    report = Report.objects.get(kind="study")
    assert report.result["spans"]["n_answers"] > 0
    organizer = study.created_by
    client.force_login(organizer)
    html = client.get(reverse("span_detectors", args=[study.pk])).content.decode()
    assert "Demo detector (careful)" in html and "data-computed" in html and "data-stale" not in html
    question = study.questions.order_by("position").first()
    html = client.get(reverse("span_item", args=[study.pk, question.pk])).content.decode()
    assert "Physician 1" in html
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo")
    assert "Hallucination spans:" not in capsys.readouterr().out  # once only
