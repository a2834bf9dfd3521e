"""Nugget scores and agreement of a study, against values computed by hand.

The hand study (tests/analytics/nugget_rows.py): nuggets n1 vital, n2 okay, n3 avoid; physicians P1, P2:

    SYS-A  n1 S/S  n2 P/S  n3 N/N     P1 flags sentence 3 of 3, P2 none
    SYS-B  n1 N/P  n2 N/N  n3 S/S

Consensus (majority, a tie settled at the lower median): SYS-A S, P, N; SYS-B N, N, S.
Scores: consensus SYS-A all (1 + 0.5) / 2 = 0.75, vital 1, all_strict 0.5, completeness 1, avoid hits 0,
precision 2/3 (the sentence one of two physicians flagged counts as flagged); SYS-B all 0, avoid hits 1.
P1 on SYS-A: all 0.75, precision 2/3; P2 on SYS-A: all 1, precision 1.

Krippendorff's ordinal alpha over the six units: value counts N 5, P 2, S 5 (n = 12); disagreeing pairs N-P and
P-S, one unit each, with squared ordinal distance ((5 + 2) / 2)^2 = 12.25 (and N-S (12 - 5)^2 = 49):
D_o = 4 x 12.25 / 12 = 49/12, D_e = (2 x 5 x 2 x 12.25 x 2 + 2 x 5 x 5 x 49) / 132 = 2940/132, alpha = 49/60.

The lenient judge (SYS-A S, S, S; SYS-B S, P, N) against the consensus: agreement 1/6, chance
(4 x 2 + 1 x 1 + 1 x 3) / 36 = 1/3, kappa -0.25; F1 support 1/3 (precision 1/4, recall 1/2), partial 0,
not_support 0: macro-F1 1/9. Ceiling: P1 against P2 agree 4/6, chance 13/36, kappa 11/23.
"""

from __future__ import annotations

import pytest

from analytics.nuggets.board import item_labels, nugget_metric_scores, study_nugget_report
from analytics.nuggets.judge_labels import judge_labels_import
from tests.analytics.nugget_rows import hand_study

pytestmark = pytest.mark.django_db

LENIENT = {
    "SYS-A": {"n1": "support", "n2": "support", "n3": "support"},
    "SYS-B": {"n1": "support", "n2": "partial", "n3": "not_support"},
}


def _judge_lines(labels: dict, judge: str = "lenient-llm") -> list[bytes]:
    import json

    return [
        json.dumps({"item_uid": "q1", "system": s, "nugget_id": k, "label": v, "judge": judge}).encode()
        for s, by in labels.items()
        for k, v in by.items()
    ]


@pytest.fixture
def made(make_user):
    return hand_study(make_user)


def test_consensus_and_physician_scores_match_hand_values(made):
    report = study_nugget_report(made.study, n_resamples=50)
    p1, p2 = (u.pseudonym for u in made.physicians)
    a = report.summary["systems"]["SYS-A"]
    assert a["consensus"]["all"] == 0.75
    assert a["consensus"]["vital"] == 1.0
    assert a["consensus"]["all_strict"] == 0.5
    assert a["consensus"]["vital_strict"] == 1.0
    assert a["consensus"]["completeness"] == 1.0
    assert a["consensus"]["avoid_hits"] == 0
    assert a["consensus"]["precision"] == pytest.approx(2 / 3, abs=1e-4)
    assert a[p1]["all"] == 0.75 and a[p1]["precision"] == pytest.approx(2 / 3, abs=1e-4)
    assert a[p2]["all"] == 1.0 and a[p2]["precision"] == 1.0
    b = report.summary["systems"]["SYS-B"]["consensus"]
    assert b["all"] == 0.0 and b["avoid_hits"] == 1 and b["completeness"] == 0.0
    assert report.labellers == ["consensus", *sorted([p1, p2])]


def test_physician_alpha_is_49_over_60(made):
    report = study_nugget_report(made.study, n_resamples=50)
    alpha = report.summary["agreement"]["human_alpha"]
    assert alpha["value"] == pytest.approx(49 / 60, abs=1e-4)
    assert alpha["n_units"] == 6


def test_judge_against_consensus_and_human_ceiling(made):
    judge_labels_import(study=made.study, source=_judge_lines(LENIENT), name="judge.jsonl", user=None)
    report = study_nugget_report(made.study, n_resamples=50)
    judge = report.summary["agreement"]["judges"]["lenient-llm"]
    assert judge["kappa"] == pytest.approx(-0.25, abs=1e-4)
    assert judge["macro_f1"] == pytest.approx(1 / 9, abs=1e-4)
    assert judge["f1"]["support"] == pytest.approx(1 / 3, abs=1e-4)
    assert judge["n"] == 6
    ceiling = report.summary["agreement"]["human_ceiling"]
    assert ceiling["kappa"]["mean"] == pytest.approx(11 / 23, abs=1e-4)
    # The judge's scores: SYS-A all 1, SYS-B all (1 + 0.5) / 2 = 0.75; judges give no sentence marks.
    assert report.summary["systems"]["SYS-A"]["lenient-llm"]["all"] == 1.0
    assert report.summary["systems"]["SYS-B"]["lenient-llm"]["all"] == 0.75
    assert "precision" not in report.summary["systems"]["SYS-A"]["lenient-llm"]
    assert report.labellers[-1] == "lenient-llm"


def test_nugget_metrics_for_the_correlation_report(made):
    judge_labels_import(study=made.study, source=_judge_lines(LENIENT), name="judge.jsonl", user=None)
    metrics = nugget_metric_scores(study_nugget_report(made.study, n_resamples=10))
    assert set(metrics) == {"nugget:consensus:all", "nugget:consensus:vital_strict", "nugget:lenient-llm:all"}
    consensus = metrics["nugget:consensus:all"].set_index("system")["score"].to_dict()
    assert consensus == {"SYS-A": 0.75, "SYS-B": 0.0}
    assert list(metrics["nugget:lenient-llm:all"].columns) == ["item", "system", "score"]
    # the study report's lighter path (the reference and the judges scored, no sentence marks) gives the same
    from analytics.nuggets.board import study_nugget_scores

    light = study_nugget_scores(made.study, metrics_only=True)
    assert set(light.per_answer["labeller"]) == {"consensus", "lenient-llm"} and light.data.marks == {}
    again = nugget_metric_scores(light)
    assert set(again) == set(metrics) and all(again[key].equals(metrics[key]) for key in metrics)


def test_item_labels_hold_the_consensus(made):
    labels = item_labels(study_nugget_report(made.study, n_resamples=10), "q1")
    assert labels["SYS-A", "consensus"] == {"n1": "support", "n2": "partial", "n3": "not_support"}
    assert labels["SYS-B", "consensus"]["n1"] == "not_support"


def test_the_stored_board_round_trips_through_json_with_the_reports_figures(made):
    import json

    from analytics.models import NuggetLeaderboard
    from analytics.nuggets.board import NuggetBoard, nugget_board, nugget_board_compute

    judge_labels_import(study=made.study, source=_judge_lines(LENIENT), name="judge.jsonl", user=None)
    board = study_nugget_report(made.study).board()
    assert board.labellers == ["consensus", *sorted(p.pseudonym for p in made.physicians), "lenient-llm"]
    assert (board.n_questions, board.n_answers, board.reference, board.judges) == (1, 2, "consensus", ["lenient-llm"])
    assert NuggetBoard.from_json(json.loads(json.dumps(board.to_json()))) == board
    nugget_board_compute(study_id=made.study.pk)
    assert nugget_board(made.study) == board  # the job stores the same figures (same seed, same resamples)
    assert NuggetLeaderboard.objects.get(study=made.study).inputs["labellers"]["lenient-llm"][0] == 6


def test_the_lean_label_reading_equals_the_export_selectors(made):
    """The report reads ids and maps them (a million labels at 10x); the export reads every label with its item,
    system and key joined in. The same labels, in the same order (the order numbers the bootstrap's units)."""
    from analytics.nuggets.selectors import study_nuggets
    from ranking.selectors.studies import study_nugget_labels

    judge_labels_import(study=made.study, source=_judge_lines(LENIENT), name="judge.jsonl", user=None)
    data = study_nuggets(made.study)
    physicians = data.frame[data.frame["labeller"].isin(data.humans)]
    exported = [
        (r["item_uid"], r["system"], r["nugget_id"], r["label"], r["labeller"]) for r in study_nugget_labels(made.study)
    ]
    assert len(exported) == 12 and list(physicians.itertuples(index=False, name=None)) == exported
    judge = data.frame[data.frame["labeller"] == "lenient-llm"]
    assert [(s, k, v) for _, s, k, v, _ in judge.itertuples(index=False, name=None)] == [
        (s, k, v) for s, by in LENIENT.items() for k, v in by.items()
    ]
    one = study_nuggets(made.study, question_ids=[made.questions[0].pk])
    assert one.frame.equals(data.frame) and one.marks == data.marks and one.answers == data.answers


def test_words_for_what_changed_since_a_board_was_computed():
    from analytics.boards import labeller_changes, submission_changes

    then = {"submitted_tasks": 3, "last_submitted": "2026-11-01T10:00:00+00:00"}
    assert submission_changes(then, {"submitted_tasks": 4, "last_submitted": "x"}) == [
        "1 more physician judgement submitted"
    ]
    assert submission_changes(then, {"submitted_tasks": 1, "last_submitted": "x"}) == ["2 physician judgements removed"]
    assert submission_changes(then, {**then, "last_submitted": "y"}) == ["physicians' judgements changed"]
    assert submission_changes(then, dict(then)) == []
    assert submission_changes({}, {"submitted_tasks": 2, "last_submitted": "x"}) == [
        "2 more physician judgements submitted"
    ]
    noun = lambda name: f"“{name}”"  # noqa: E731
    assert labeller_changes({"a": [3, 10], "b": [1, 2]}, {"a": [3, 14], "c": [1, 15]}, noun=noun) == [
        "“a” imported again",
        "“c” imported",
        "“b” removed",
    ]
    assert labeller_changes({"a": [3, 10]}, {"a": [3, 10]}, noun=noun, verb=lambda name: "run") == []


def test_the_lean_reading_keeps_the_export_order_across_questions_and_submissions(make_user):
    """Question position first, then submission time, then system and nugget position: the second question's
    labels, submitted first, still come after the first question's."""
    from ranking.selectors.studies import study_nugget_judgements, study_nugget_labels
    from tests.analytics.nugget_rows import ANSWERS, PHYSICIAN_LABELS, nugget_study, submit_nugget_task

    made = nugget_study(items={"q1": dict(ANSWERS), "q2": dict(ANSWERS)}, name="two questions")
    first, second = make_user("ranker"), make_user("ranker")
    submit_nugget_task(made, second, "q2", PHYSICIAN_LABELS[1])
    submit_nugget_task(made, first, "q1", PHYSICIAN_LABELS[0])
    submit_nugget_task(made, second, "q1", PHYSICIAN_LABELS[1])
    submit_nugget_task(made, first, "q2", PHYSICIAN_LABELS[0])
    answers = {a.pk: key for key, a in made.answers.items()}
    keys = {n.pk: n.key for q in made.questions for n in q.nugget_set.nuggets.all()}
    lean = [(*answers[a], keys[n], label, who) for who, a, n, label in study_nugget_judgements(made.study)]
    exported = [
        (r["item_uid"], r["system"], r["nugget_id"], r["label"], r["labeller"]) for r in study_nugget_labels(made.study)
    ]
    assert len(lean) == 24 and lean == exported
    assert [row[0] for row in lean[:12]] == ["q1"] * 12 and lean[0][4] == first.pseudonym
