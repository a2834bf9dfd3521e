"""The study report's metric-vs-physician correlation gains the nugget scores where the study has nuggets."""

from __future__ import annotations

import pytest

from analytics.nuggets.judge_labels import judge_labels_import
from analytics.presentation.charts import available_plots, plot_title
from analytics.presentation.tables import human_label
from analytics.services.reports import report_study
from tests.analytics.nugget_rows import nugget_study, rank_answers, submit_nugget_task

pytestmark = pytest.mark.django_db

SYSTEMS = ["SYS-A", "SYS-B", "SYS-C"]
TEXT = {
    "SYS-A": "Aspirin inhibits platelet aggregation. Low-dose aspirin lowers the risk of a second stroke.",
    "SYS-B": "Aspirin inhibits platelet aggregation.",
    "SYS-C": "Rest helps.",
}
LABELS = {  # the physicians' labels follow their ranking: A > B > C
    "SYS-A": {"n1": "support", "n2": "support", "n3": "not_support"},
    "SYS-B": {"n1": "support", "n2": "not_support", "n3": "not_support"},
    "SYS-C": {"n1": "not_support", "n2": "not_support", "n3": "not_support"},
}


def test_correlation_includes_consensus_and_judge_nugget_scores(make_user, client, organizer):
    made = nugget_study(items={f"q{i}": dict(TEXT) for i in range(1, 4)}, ask_ranking=True)
    for _ in range(2):
        physician = make_user("ranker")
        for question in made.questions:
            task = submit_nugget_task(made, physician, question.item.uid, LABELS)
            rank_answers(made, task, {"SYS-A": 1, "SYS-B": 2, "SYS-C": 3})
    lines = [
        f'{{"item_uid": "{q.item.uid}", "system": "{s}", "nugget_id": "n1", "label": "support", "judge": "llm"}}'
        for q in made.questions
        for s in SYSTEMS
    ]
    judge_labels_import(study=made.study, source=lines, name="judge.jsonl", user=None)
    result = report_study(study_id=made.study.pk, n_resamples=20)
    correlation = result["correlation"]
    assert {"semantic", "bleu", "rouge", "meteor"} <= set(correlation)
    nuggets = {"nugget:consensus:all", "nugget:consensus:vital_strict", "nugget:llm:all"}
    assert nuggets <= set(correlation)
    # The consensus score orders the systems exactly as the physicians ranked them.
    assert correlation["nugget:consensus:all"]["system_spearman"]["value"] == pytest.approx(1.0)
    assert result["scatter"]["nugget:consensus:all"]["systems"] == SYSTEMS
    assert "scatter_nugget:consensus:all" in available_plots("study", result)
    assert plot_title("scatter_nugget:llm:all") == "Systems: physicians vs Nugget score (judge llm)"
    assert human_label("nugget:consensus:vital_strict") == "Nugget strict vital recall (physicians' consensus)"
    # The leaderboard page's correlation table: the consensus follows the ranking exactly.
    from analytics.nuggets.board import study_nugget_report
    from analytics.presentation.nuggets import correlation_note, correlation_rows

    rows = correlation_rows(study_nugget_report(made.study, n_resamples=10))
    consensus = next(r for r in rows if r["labeller"] == "Physicians' consensus" and r["score"] == "All nuggets")
    assert consensus["vs_rankings"] == "1.00" and consensus["n"] == 3
    assert correlation_note(rows) == ""

    # The report page names them in words and links the nugget leaderboard.
    from html import unescape

    from django.urls import reverse
    from django.utils import timezone

    from analytics.models import Report

    report = Report.objects.create(
        kind="study", params={"study_id": made.study.pk}, result=result, finished_at=timezone.now()
    )
    client.force_login(organizer)
    html = unescape(client.get(reverse("report_detail", args=[report.pk])).content.decode())
    assert "Nugget score (physicians' consensus)" in html and "Nugget score (judge llm)" in html
    assert "nugget:" not in html.replace("scatter_nugget:", "")  # keys only inside plot URLs
    assert reverse("nugget_leaderboard", args=[made.study.pk]) in html


def test_a_study_without_nuggets_has_no_nugget_metrics(make_user):
    made = nugget_study(items={"q1": dict(TEXT)}, ask_ranking=True)
    made.study.ask_nuggets = False
    made.study.save()
    physician = make_user("ranker")
    task = submit_nugget_task(made, physician, "q1", {})
    rank_answers(made, task, {"SYS-A": 1, "SYS-B": 2, "SYS-C": 3})
    result = report_study(study_id=made.study.pk, n_resamples=20)
    assert not [key for key in result["correlation"] if key.startswith("nugget:")]
