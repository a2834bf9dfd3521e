"""Analytics reports end to end: a job computes the report from live judgements; pages, plots and downloads."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analytics.models import Report
from analytics.services.requests import report_request
from annotation.models import QAItem
from annotation.services.imports import items_import
from portal.models import Job
from stats.agreement import krippendorff_alpha
from tests.reviews import done_review

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)

# (item index, reviewer A, reviewer B): verdicts and relevance of two reviewers on six items.
JUDGEMENTS = [
    (0, ("correct", 5), ("correct", 5)),
    (1, ("correct", 4), ("correct", 5)),
    (2, ("incorrect", 2), ("incorrect", 1)),
    (3, ("correct", 5), ("incorrect", 3)),
    (4, ("cannot_tell", 3), ("cannot_tell", 3)),
    (5, ("correct", 5), ("correct", 4)),
]


@pytest.fixture
def double_reviewed(make_user):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    items = list(QAItem.objects.order_by("id"))
    a, b = make_user("reviewer"), make_user("reviewer")
    for index, first, second in JUDGEMENTS:
        item = items[index * 5]  # spread over QA types
        for who, stage, (verdict, relevance) in ((a, "primary", first), (b, "secondary", second)):
            done_review(item, who, stage, verdict, relevance, server_seconds=30)
    return a, b


def test_vetting_agreement_report_job_matches_the_statistics_on_the_same_data(double_reviewed, organizer):
    report = report_request(kind="vetting_agreement", params={"n_resamples": 200}, user=organizer)
    report.refresh_from_db()
    job = Job.objects.get(pk=report.job_id)
    assert job.status == "succeeded" and job.progress_done == job.progress_total > 0
    frame = pd.DataFrame(
        [(i, "a", v[0]) for i, v, _ in JUDGEMENTS] + [(i, "b", w[0]) for i, _, w in JUDGEMENTS],
        columns=["item", "annotator", "value"],
    )
    expected = krippendorff_alpha(frame, level="nominal", values=["correct", "incorrect", "cannot_tell"], n_resamples=0)
    overall = report.result["overall"]
    assert overall["verdict"]["krippendorff_alpha"]["value"] == pytest.approx(expected.value)
    assert overall["n_items"] == 6 and overall["n_reviews"] == 12
    assert len(report.result["pairs"]) == 1 and report.result["pairs"][0]["n_items"] == 6
    # One item per QA type: per-type alpha is undefined, with a reason, never a number.
    for block in report.result["by_type"].values():
        assert block["verdict"]["krippendorff_alpha"]["value"] is None
        assert block["verdict"]["krippendorff_alpha"]["undefined_reason"]
    assert report.result["library_versions"]["scipy"] != "not installed"


def test_report_pages_plots_and_downloads(double_reviewed, organizer, organizer_client):
    response = organizer_client.post("/analytics/", {"action": "vetting_agreement"})
    report = Report.objects.get()
    assert response["Location"] == f"/analytics/reports/{report.pk}/"
    page = organizer_client.get(response["Location"]).content.decode()
    # Leads with the reading of the headline numbers; statistics named for people, not by their keys. Six items
    # reviewed twice are too few to read (stats.bootstrap.MIN_UNITS_TO_READ): the reading says so, and how many more.
    reading = "Too early to read the reviewers&#x27; agreement: 6 items reviewed twice so far; at least 10 items"
    assert reading in page and "4 more." in page
    assert page.index("Too early to read") < page.index("All statistics")
    assert "Krippendorff&#x27;s α" in page and "krippendorff_alpha" not in page
    # The per-pair agreement the report promises: the pair, items in common, agreement and kappa.
    # Organizers read the reviewers' names there (pseudonyms stay in the stored result and the downloads).
    names = {u.pseudonym: str(u) for u in double_reviewed}
    a, b = sorted(names)
    assert "Agreement per reviewer pair" in page and f"{names[a]} &amp; {names[b]}" in page
    assert a not in page and b not in page
    png = organizer_client.get(f"/analytics/reports/{report.pk}/plots/verdict_alpha_by_type.png")
    assert png["Content-Type"] == "image/png" and png.content.startswith(b"\x89PNG")
    svg = organizer_client.get(f"/analytics/reports/{report.pk}/plots/relevance_alpha_by_type.svg")
    assert b"<svg" in svg.content
    data = json.loads(organizer_client.get(f"/analytics/reports/{report.pk}/download.json").content)
    assert data["overall"]["n_items"] == 6
    csv_text = organizer_client.get(f"/analytics/reports/{report.pk}/download.csv").content.decode()
    assert csv_text.splitlines()[0].startswith("section,statistic,value,ci_low,ci_high")
    assert sum(line.startswith("pairs,") for line in csv_text.splitlines()) == 3
    printable = organizer_client.get(f"/analytics/reports/{report.pk}/print/").content.decode()
    assert "Methods" in printable and "Library versions" in printable and ".svg" in printable


def test_reviewer_quality_report_lists_pace(double_reviewed, organizer):
    report = report_request(kind="reviewer_quality", user=organizer)
    report.refresh_from_db()
    rows = report.result["reviewers"]
    assert len(rows) == 2 and all(row["mean_seconds_per_review"] == 30.0 for row in rows)


def test_reviewer_quality_page_has_plots_and_says_why_a_column_is_empty(double_reviewed, organizer, organizer_client):
    report = report_request(kind="reviewer_quality", user=organizer)
    page = organizer_client.get(f"/analytics/reports/{report.pk}/").content.decode()
    assert "2 reviewers wrote 12 reviews" in page
    assert "no gold items reviewed by this person yet" in page
    # No one has a gold item or an adjudicated review yet: those plots would be all gaps, so the page says why.
    assert "No gold accuracy per reviewer plot: no gold items reviewed by any reviewer yet." in page
    assert "/plots/gold_accuracy.svg" not in page
    assert "/plots/pace.svg" in page
    svg = organizer_client.get(f"/analytics/reports/{report.pk}/plots/pace.svg")
    assert svg.status_code == 200 and b"viewBox" in svg.content


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_json_columns_of_computed_numbers_refuse_nan_and_infinity(value, organizer):
    """NaN / Infinity never reach the database: the encoder refuses them with a ValueError before the query
    (PostgreSQL's jsonb would refuse them with a database error that failed the whole job)."""
    from analytics.models import ScoringRun
    from annotation.models import Release
    from ranking.models import System

    system = System.objects.create(name="sys")
    writes = [
        lambda: Report.objects.create(kind="study", result={"leaderboard": [{"meteor": value}]}),
        lambda: ScoringRun.objects.create(system=system, summary={"avg_meteor": value}),
        lambda: ScoringRun.objects.create(system=system, run_record={"baseline": value}),
        lambda: Job.objects.create(kind="report:study", result={"overall": value}),
        lambda: Release.objects.create(
            name="r", version=1, rule={}, item_count=0, manifests={}, checksum="0" * 64, report={"share": value}
        ),
    ]
    for write in writes:
        with pytest.raises(ValueError, match="JSON compliant"):
            write()
    assert not Report.objects.exists() and not ScoringRun.objects.exists() and not Job.objects.exists()
    assert not Release.objects.exists()


@pytest.mark.django_db
def test_report_parameters_name_the_study_not_its_id(organizer_client):
    from ranking.models import Study

    study = Study.objects.create(name="Cardiology <pilot>", seed=1, overlap=2)
    Report.objects.create(kind="study", params={"study_id": study.pk, "profile": "cliniqlink-2025"})
    Report.objects.create(kind="study", params={"study_id": 987654})
    page = organizer_client.get("/analytics/").content.decode()
    assert "study “Cardiology &lt;pilot&gt;” · metric profile cliniqlink-2025" in page
    assert "study 987654 (deleted)" in page
    assert "study id" not in page


@pytest.mark.django_db
def test_the_report_list_names_its_studies_in_one_query_whatever_their_number(organizer_client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ranking.models import Study

    def queries_for_the_page() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert organizer_client.get("/analytics/").status_code == 200
        return len(captured)

    def add_reports(n: int) -> None:
        for i in range(n):
            study = Study.objects.create(name=f"Study {Study.objects.count()}", seed=i, overlap=2)
            Report.objects.create(kind="study", params={"study_id": study.pk})

    add_reports(2)
    queries_for_the_page()  # a session's first request also stamps its activity (the idle timeout)
    with_two = queries_for_the_page()
    add_reports(6)
    assert queries_for_the_page() == with_two
