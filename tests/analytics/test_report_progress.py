"""A report job says which stage it is in while it runs, and the report page shows that while it polls."""

from __future__ import annotations

import pytest

from analytics.models import Report
from analytics.services.reports import report_study, report_vetting_agreement
from portal.jobs import Progress
from portal.models import Job
from tests.analytics.test_reports import double_reviewed  # noqa: F401 - the fixture
from tests.analytics.test_study_report import _ranked_fixture_study

pytestmark = pytest.mark.django_db(transaction=True)


class ProgressRecorder(Progress):
    """Records every stage named and the count done when it was named, as a job's page would have shown them."""

    def __init__(self) -> None:
        super().__init__()
        self.stages: list[tuple[int, str]] = []

    def note(self, message: str) -> None:
        super().note(message)
        self.stages.append((self.done, message))


def test_vetting_report_names_each_stage_as_it_starts(double_reviewed):  # noqa: F811
    progress = ProgressRecorder()
    result = report_vetting_agreement(n_resamples=20, progress=progress)
    n_types = len(result["by_type"])
    messages = [message for _, message in progress.stages]
    assert messages[0] == "agreement: all 6 items"
    assert messages[1 : 1 + n_types] == [
        f"agreement: type {n} of {n_types} ({qa_type})" for n, qa_type in enumerate(result["by_type"], 1)
    ]
    assert messages[-1] == "agreement per pair of reviewers (2 reviewers)"
    assert [done for done, _ in progress.stages] == list(range(n_types + 2))  # each stage named before it is done
    assert progress.done == progress.total


def test_study_report_names_each_stage_as_it_starts(tmp_path, make_user, organizer):
    study = _ranked_fixture_study(tmp_path, make_user, organizer)
    progress = ProgressRecorder()
    report_study(study_id=study.pk, n_resamples=20, progress=progress)
    messages = [message for _, message in progress.stages]
    assert messages[:3] == [
        "ranking agreement: Kendall's W, tau-b between rankers, tag alpha",
        "human leaderboard (Bradley-Terry)",
        "style-controlled leaderboard",
    ]
    assert "metric correlation 1 of 4 (Semantic)" in messages and "metric correlation 4 of 4 (METEOR)" in messages
    assert progress.done == progress.total


def test_a_running_report_page_shows_its_stage_and_keeps_polling(organizer, organizer_client):
    job = Job.objects.create(
        kind="report:study", status="running", progress_done=3, progress_total=8, message="style-controlled leaderboard"
    )
    report = Report.objects.create(kind="study", params={}, job=job, created_by=organizer)
    page = organizer_client.get(f"/analytics/reports/{report.pk}/").content.decode()
    assert "style-controlled leaderboard" in page and "3 of 8 steps" in page
    assert 'hx-trigger="every 2s"' in page  # the page refreshes itself until the report is done
