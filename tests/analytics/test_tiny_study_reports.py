"""The study report on the smallest studies (usability F16, F17): one or two rankings, a system that wins or loses
every comparison, ties everywhere, a single system, a single question. Every plot the report offers is drawn (no
500), and the headline reads no more into the rankings than they hold."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from analytics.presentation.charts import available_plots
from analytics.presentation.headlines import headline
from tests.tiny_studies import STRICT, study_report, tiny_study

pytestmark = [pytest.mark.django_db(transaction=True)]

CASES = {
    "one ranking": {"rankers": [0], "questions": 1},
    "two physicians, a question each": {"rankers": [0, 1], "questions": 2, "overlap": 1},
    "one question, two physicians": {"rankers": [0, 1], "questions": 1},
    "one physician, two questions": {"rankers": [0, 0], "questions": 2},
    "ties everywhere": {"rankers": [0, 1], "questions": 2, "overlap": 1, "ties": True, "rank_of": lambda _: 1},
    "a single system": {"rankers": [0, 1], "questions": 2, "overlap": 1, "systems": ("MODEL-A",)},
    "spans too": {"rankers": [0, 1], "questions": 2, "overlap": 1, "spans": True},
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_plot_of_a_tiny_study_report_is_drawn(case, tmp_path, make_user, organizer):
    study = tiny_study(tmp_path, make_user, organizer, **CASES[case])
    report = study_report(study, organizer)
    names = available_plots("study", report.result)
    assert {"human_leaderboard", "metric_correlation", "judges"} <= set(names)
    if case == "spans too":
        assert {"span_rate", "span_share", "span_kinds"} <= set(names)
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("report_detail", args=[report.pk]))
    assert page.status_code == 200
    reading = headline("study", report.result)["reading"]
    n = report.result["n_questions"]
    assert reading.startswith(f"Too early to read: {n} question{'s' if n > 1 else ''} ranked so far.")
    assert f"{10 - n} more to rank" in reading and reading in page.content.decode()
    for name in names:
        for fmt in ("svg", "png"):
            response = client.get(reverse("report_plot", args=[report.pk, name, fmt]))
            assert response.status_code == 200, (case, name, fmt)
            assert len(response.content) > 1000
    for row in report.result["human_leaderboard"]:  # every interval contains its estimate
        if row["strength_ci"]:
            low, high = row["strength_ci"]
            assert low <= row["strength"] <= high, (case, row)


def test_the_leaderboard_plot_of_f16_is_drawn(tmp_path, make_user, organizer):
    """F16 as reported: three systems and the reference, one question ranked by each of two physicians, the best
    system always first and the worst always last: the plot was a 500."""
    study = tiny_study(tmp_path, make_user, organizer, rankers=[0, 1], questions=2, overlap=1, rank_of=STRICT.get)
    report = study_report(study, organizer)
    client = Client()
    client.force_login(organizer)
    for fmt in ("svg", "png"):
        assert client.get(reverse("report_plot", args=[report.pk, "human_leaderboard", fmt])).status_code == 200
    # the stored result is also the JSON download: full precision (MODEL-B's BLEU is 1/3/2 on every answer)
    automatic = {row["system"]: row for row in report.result["automatic_leaderboard"]}
    assert automatic["MODEL-B"]["bleu"] == 1 / 3 / 2 == 0.16666666666666666
    download = client.get(reverse("report_download", args=[report.pk, "json"])).json()
    assert {row["system"]: row for row in download["automatic_leaderboard"]}["MODEL-B"]["bleu"] == 1 / 3 / 2
