"""The demo data loads once and again without duplicating anything, with a user for every role, and shows the
product at work: vetting half done (first and second reviews, a disagreement, disputes, adjudications), a frozen
release, two scored systems, a study ranked by both demo rankers and every report computed."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from analytics.models import AnswerScore, Report, ScoringRun
from annotation.models import Adjudication, Assignment, Dispute, GoldAnswer, QAItem, Release, Review
from annotation.workflow import ItemStatus, Stage
from portal.jobs import Job
from portal.models import User
from portal.roles import Role
from ranking.models import AnswerJudgement, RankingTask, Study, SystemOutput

pytestmark = pytest.mark.django_db

COUNTED = [QAItem, User, SystemOutput, Study, Review, GoldAnswer, Dispute, Adjudication, Release, RankingTask,
           AnswerJudgement, ScoringRun, AnswerScore, Report, Job]  # fmt: skip


def _counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in COUNTED}


@pytest.fixture
def demo(capsys, django_capture_on_commit_callbacks):
    # Jobs start once their transaction commits; the test's transaction never does, so run them as they queue.
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo")
    return capsys.readouterr().out


def test_load_demo_is_idempotent_and_covers_every_role(demo, capsys, django_capture_on_commit_callbacks):
    counts = _counts()
    statuses = sorted(QAItem.objects.values_list("uid", "status"))
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo")
    again = capsys.readouterr().out
    assert _counts() == counts
    assert sorted(QAItem.objects.values_list("uid", "status")) == statuses
    assert (
        counts["QAItem"] == 38 + 89 and counts["Study"] == 2
    )  # ClinIQLink and PromptCBLUE samples, the toy set  # the demo study and the demo nugget study
    for role in Role:
        assert User.objects.filter(groups__name=role.value).exists(), role
    assert "freeze-and-export-25" in demo and "freeze-and-export-25" in again
    assert "Vetting:" in demo and "Vetting:" not in again  # the activity ran once
    assert User.objects.get(email="organizer@demo.portal").check_password("freeze-and-export-25")


def test_vetting_is_half_done_and_obeys_the_rules(demo):
    statuses = set(QAItem.objects.values_list("status", flat=True))
    # Something for every role to do, and finished work to look at.
    assert {ItemStatus.IMPORTED, ItemStatus.IN_SECOND_REVIEW, ItemStatus.IN_ADJUDICATION, ItemStatus.HELD} <= statuses
    assert {ItemStatus.VERIFIED, ItemStatus.REJECTED} <= statuses
    assert Review.objects.filter(stage=Stage.SECONDARY).exists()
    assert GoldAnswer.objects.exists()
    assert Dispute.objects.filter(status=Dispute.Status.OPEN).exists()
    assert Dispute.objects.filter(status=Dispute.Status.UPHELD).exists()
    assert Adjudication.objects.count() >= 2
    # A second review is never by the primary reviewer; an adjudicator never decided an item they were given.
    for review in Review.objects.filter(stage=Stage.SECONDARY):
        assert not Review.objects.filter(item=review.item, stage=Stage.PRIMARY, reviewer=review.reviewer).exists()
    for adjudication in Adjudication.objects.all():
        assert not Assignment.objects.filter(item=adjudication.item, reviewer=adjudication.adjudicator).exists()
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists()  # no lease left hanging


def test_release_scores_rankings_and_reports_exist(demo):
    release = Release.objects.get(name="ClinIQLink demo")
    assert release.frozen and release.item_count > 5
    runs = ScoringRun.objects.filter(release=release, finished_at__isnull=False)
    assert sorted(runs.values_list("system__name", flat=True)) == ["Demo model A", "Demo model B"]
    assert all(run.n_items > 0 and run.scores.exists() for run in runs)
    study = Study.objects.get(name="Demo study")
    rankers = set(
        RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED).values_list(
            "ranker__email", flat=True
        )
    )
    assert rankers == {"ranker1@demo.portal", "ranker2@demo.portal"}
    assert RankingTask.objects.filter(study=study).count() < 2 * study.questions.count()  # questions left to rank
    for kind in Report.Kind.values:
        report = Report.objects.get(kind=kind)
        assert report.finished_at is not None and report.result, kind
        assert "undefined_reason" not in report.result, (kind, report.result.get("undefined_reason"))
    study_report = Report.objects.get(kind="study").result
    assert len(study_report["human_leaderboard"]) == 3  # two systems and the reference answer
    assert Job.objects.exclude(status="succeeded").count() == 0


def test_the_demo_leaves_a_database_that_people_already_vet_alone(monkeypatch, capsys):
    """Someone ran an older demo and reviewed an item themselves: ``make run`` adds no fake reviews to their
    work, and a release that nothing qualifies for yet is reported, not a crash."""
    from demo.management.commands import load_demo
    from tests.reviews import done_review

    monkeypatch.setattr(load_demo, "demo_activity", lambda **kwargs: [])
    call_command("load_demo")  # users and items only, as the demo was before
    monkeypatch.undo()
    item = QAItem.objects.filter(qa_type="short_answer").first()
    done_review(item, User.objects.get(email="reviewer1@demo.portal"), "primary", "incorrect", 2)
    capsys.readouterr()
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "Vetting:" not in out and "No demo release: the selection rule selects no items" in out
    assert Review.objects.count() == 1 and not Release.objects.exists()


def test_nugget_study_has_assessments_from_both_rankers_and_work_left(demo):
    from ranking.models import NuggetJudgement, SentenceFlag
    from ranking.selectors.studies import study_nugget_labels

    study = Study.objects.get(name="Demo nugget study")
    assert study.ask_nuggets and study.ask_ranking and study.overlap == 2
    assert not study.questions.filter(nugget_set__isnull=True).exists()
    submitted = RankingTask.objects.filter(study=study, status=RankingTask.Status.SUBMITTED)
    assert set(submitted.values_list("ranker__email", flat=True)) == {"ranker1@demo.portal", "ranker2@demo.portal"}
    assert submitted.count() < 2 * study.questions.count()  # questions left to assess
    assert NuggetJudgement.objects.filter(task__study=study).exists() and SentenceFlag.objects.exists()
    labels = list(study_nugget_labels(study))
    vital = {
        system: [r["label"] == "support" for r in labels if r["system"] == system and r["importance"] == "vital"]
        for system in ("Demo model A", "Demo model B")
    }
    share = {system: sum(hits) / len(hits) for system, hits in vital.items()}
    assert share["Demo model A"] > share["Demo model B"]
