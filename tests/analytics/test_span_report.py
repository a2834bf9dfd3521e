"""The study report's span sections, known answers by hand (tests/span_rows.py): agreement between physicians
(pairwise character IoU, Krippendorff's alpha over characters), hallucination rate, hallucinated share and kind
mix per system and QA type; the page and its plots read well."""

from __future__ import annotations

import pytest
from django.urls import reverse

from analytics.services.reports import report_study
from stats.rates import wilson_interval
from tests.report_rows import stored_study_report
from tests.span_rows import spanned_study

pytestmark = pytest.mark.django_db
KW = {"n_resamples": 200, "seed": 3}


@pytest.fixture
def made(make_user):
    return spanned_study(make_user)


@pytest.fixture
def spans(made):
    return report_study(study_id=made.study.pk, **KW)["spans"]


def test_agreement_known_answers(spans):
    overall = spans["agreement"]["overall"]
    # answers read twice: s1 A 6/12, s1 B 1 (both empty), s2 A 4/6, s2 B 0/2; s3 (one physician) left out
    assert overall["pairwise_iou"]["value"] == pytest.approx((0.5 + 1 + 4 / 6 + 0) / 4)
    assert overall["pairwise_iou"]["n_items"] == 4
    assert "2 answers with fewer than two annotators left out" in overall["pairwise_iou"]["notes"]
    # 60 characters x 2 physicians; 10 characters disagree; 30 of the 120 values are "marked":
    # alpha = 1 - (n - 1) * 2 * 10 / (2 * 90 * 30)
    assert overall["krippendorff_alpha"]["value"] == pytest.approx(1 - 119 * 20 / (2 * 90 * 30))
    by_system = spans["agreement"]["by_system"]
    assert by_system["SPAN-A"]["pairwise_iou"]["value"] == pytest.approx((0.5 + 4 / 6) / 2)
    assert by_system["SPAN-B"]["pairwise_iou"]["value"] == pytest.approx(0.5)


def test_agreement_undefined_with_one_physician(made, make_user):
    from ranking.models import RankingTask

    RankingTask.objects.filter(ranker=made.physicians[1]).delete()
    spans = report_study(study_id=made.study.pk, **KW)["spans"]
    iou = spans["agreement"]["overall"]["pairwise_iou"]
    assert iou["value"] is None and iou["undefined_reason"] == "no answer was marked by two or more physicians"


def test_analysis_known_answers(spans):
    overall = spans["analysis"]["overall"]
    assert overall["n_answers"] == 6
    rate = overall["hallucination_rate"]
    assert rate["value"] == pytest.approx(3 / 6)  # s1 A, s2 A, s3 A have a majority span
    assert (rate["ci_low"], rate["ci_high"]) == pytest.approx(wilson_interval(3, 6))
    share = overall["span_share"]
    assert share["value"] == pytest.approx((6 / 21 + 4 / 11 + 4 / 15) / 6)
    assert share["ci_low"] <= share["value"] <= share["ci_high"]
    mix = overall["kind_mix"]
    assert mix["characters"] == 34
    assert mix["shares"] == pytest.approx({"extrinsic": 16 / 34, "intrinsic": 16 / 34, "other": 2 / 34})
    by_type = spans["analysis"]["by_qa_type"]
    assert by_type["generic"]["hallucination_rate"]["value"] == pytest.approx(1 / 2)
    assert by_type["short_answer"]["n_answers"] == 4
    assert spans["analysis"]["by_system"]["SPAN-B"]["hallucination_rate"]["value"] == 0


def _stored(made, organizer):
    return stored_study_report(made.study, created_by=organizer, **KW)


def test_report_page_shows_the_span_sections(made, client, organizer):
    report = _stored(made, organizer)
    client.force_login(organizer)
    html = client.get(reverse("report_detail", args=[report.pk])).content.decode()
    assert "Hallucination spans: agreement between physicians" in html
    assert "0.542" in html  # pairwise IoU over all systems
    assert "50.0 %" in html and "Short answer" in html and "Contradicts the source or reference: 47 %" in html
    for dev in ("None", "{'", "by_qa_type", "Span share", "nan"):
        assert dev not in html
    for name in ("span_rate", "span_share", "span_kinds"):
        for fmt in ("svg", "png"):
            response = client.get(reverse("report_plot", args=[report.pk, name, fmt]))
            assert response.status_code == 200 and len(response.content) > 1000


def test_other_studies_have_no_span_section(made, organizer):
    made.study.ask_spans = False
    made.study.save()
    assert "spans" not in report_study(study_id=made.study.pk, **KW)
