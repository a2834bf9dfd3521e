"""The judge card in the study report and on its page (issue #43): a judge's probabilities, family, declines and
pairwise verdicts imported through the real imports, the report's card figures worked out by hand here (the
physicians tag SYS-A and SYS-B "good" = 1 and SYS-C "bad" = 0 on every question, tests/analytics/judge_rows.py),
and the page an organizer reads."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from analytics.judges.scores import judge_scores_import
from analytics.judges.verdicts import judge_verdicts_import
from analytics.models import Report
from analytics.services.reports import report_study
from ranking.models import RankingTask, System
from tests.analytics.judge_rows import ranked_study

pytestmark = pytest.mark.django_db

KW = {"n_resamples": 50, "seed": 3}
QUESTIONS = 10
PROBABILITY = {"SYS-A": 0.9, "SYS-B": 0.7, "SYS-C": 0.2}
FAMILY = "<b>Fam</b> A"

#: (item, first shown, second shown, verdict): q1 consistent (A both times), q2 a flip to whichever came first,
#: q3 a tie in one order and a preference in the other (a flip), q4 consistent (B), q5 one order only.
VERDICTS = [
    ("q1", "SYS-A", "SYS-B", "first"),
    ("q1", "SYS-B", "SYS-A", "second"),
    ("q2", "SYS-A", "SYS-B", "first"),
    ("q2", "SYS-B", "SYS-A", "first"),
    ("q3", "SYS-A", "SYS-B", "tie"),
    ("q3", "SYS-B", "SYS-A", "second"),
    ("q4", "SYS-A", "SYS-B", "second"),
    ("q4", "SYS-B", "SYS-A", "first"),
    ("q5", "SYS-A", "SYS-C", "first"),
]


@pytest.fixture
def made(make_user):
    made = ranked_study(make_user, name="card study", questions=QUESTIONS)
    System.objects.filter(name="SYS-A").update(family=" <B>FAM</B> a")  # the judge's family, written otherwise
    System.objects.filter(name__in=["SYS-B", "SYS-C"]).update(family="Other")
    lines = []
    for index in range(1, QUESTIONS + 1):
        for system, probability in PROBABILITY.items():
            line = {"item_uid": f"q{index}", "system": system, "judge": "llm", "judge_family": FAMILY}
            if (index, system) == (QUESTIONS, "SYS-C"):
                line["label"] = "cannot judge"
            else:
                line |= {"score": probability * 10, "probability": probability}
            lines.append(line)
    judge_scores_import(
        study=made.study, source="\n".join(json.dumps(x) for x in lines).encode(), name="llm.jsonl", user=None
    )
    verdicts = [
        {"item_uid": item, "judge": "llm", "first": first, "second": second, "verdict": verdict}
        for item, first, second, verdict in VERDICTS
    ]
    judge_verdicts_import(
        study=made.study, source="\n".join(json.dumps(x) for x in verdicts).encode(), name="v.jsonl", user=None
    )
    # one physician put q10 aside before ranking it
    task = RankingTask.objects.filter(study=made.study, question__item__uid=f"q{QUESTIONS}").first()
    RankingTask.objects.filter(pk=task.pk).update(skipped_at=task.submitted_at)
    return made


def card_of(made) -> dict:
    return report_study(study_id=made.study.pk, **KW)["judge_cards"]["judges"]["llm"]


def test_the_card_figures_by_hand(made):
    card = card_of(made)
    assert card["family"] == FAMILY.strip() and card["value_source"] == "probability"
    # calibration over 29 answers (q10's SYS-C declined): bins 0.2 (9 answers, physicians 0), 0.7 (10, 1), 0.9 (10, 1)
    calibration = card["calibration"]
    assert calibration["n"] == 29
    assert calibration["ece"] == pytest.approx((9 * 0.2 + 10 * 0.3 + 10 * 0.1) / 29)
    assert calibration["brier"] == pytest.approx((9 * 0.04 + 10 * 0.09 + 10 * 0.01) / 29)
    assert [(b["n"], round(b["mean_prob"], 9), b["mean_outcome"]) for b in calibration["bins"]] == [
        (9, 0.2, 0.0),
        (10, 0.7, 1.0),
        (10, 0.9, 1.0),
    ]
    # bias: judge minus physicians, -0.1 on A, -0.3 on B, +0.2 on C, one QA type
    overall = card["bias"]["overall"]
    assert overall["n"] == 29 and overall["mean"] == pytest.approx((-1 - 3 + 1.8) / 29)
    assert list(card["bias"]["groups"]) == ["Short answer"]
    # position: 8 verdicts name a winner, 5 of them the first shown; 4 pairs in both orders, 2 flips, 1 to first
    first, flips = card["position"]["first_position"], card["position"]["flips"]
    assert (first["n"], first["count"], first["rate"]) == (8, 5, 5 / 8)
    assert (flips["n"], flips["rate"], flips["to_first"]) == (4, 0.5, 1)
    # self-preference: SYS-A is the judge's family (case and spaces ignored); residuals -0.1 against the others' mean
    preference = card["self_preference"]
    assert (preference["n_own"], preference["n_other"]) == (10, 19)
    assert preference["effect"] == pytest.approx(-0.1 - (10 * -0.3 + 9 * 0.2) / 19)
    # abstention: the judge declined 1 of 30 answers, the physicians put aside 1 of their 30 tasks
    overall = card["abstention"]["overall"]
    assert (overall["judge"]["count"], overall["judge"]["n"]) == (1, 30)
    assert (overall["physicians"]["count"], overall["physicians"]["n"]) == (1, 30)


def test_a_judge_without_probabilities_on_another_scale_says_why(made):
    lines = [
        {"item_uid": f"q{i}", "system": system, "judge": "plain", "score": score}
        for i in range(1, QUESTIONS + 1)
        for system, score in {"SYS-A": 9, "SYS-B": 7, "SYS-C": 2}.items()
    ]
    judge_scores_import(study=made.study, source="\n".join(map(json.dumps, lines)).encode(), name="p.jsonl", user=None)
    card = report_study(study_id=made.study.pk, **KW)["judge_cards"]["judges"]["plain"]
    assert card["calibration"]["undefined_reason"] == (
        "its scores run from 2 to 9, not 0 to 1, and its file gives no probabilities"
    )
    assert card["position"]["undefined_reason"] == "no pairwise verdicts were imported for this judge"
    assert card["self_preference"]["undefined_reason"] == card["calibration"]["undefined_reason"]
    assert card["abstention"]["overall"]["judge"]["count"] == 0


def test_the_card_page_reads_in_words_and_escapes(made, organizer, client):
    result = report_study(study_id=made.study.pk, **KW)
    report = Report.objects.create(kind="study", params={"study_id": made.study.pk}, result=result)
    client.force_login(organizer)
    body = client.get(reverse("report_detail", args=[report.pk])).content.decode()
    assert reverse("judge_card", args=[report.pk, "llm"]) in body  # the judges table links each judge to its card
    page = client.get(reverse("judge_card", args=[report.pk, "llm"]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "&lt;b&gt;Fam&lt;/b&gt; A" in html and "<b>Fam</b>" not in html
    assert "Expected calibration error" in html and f"{(9 * 0.2 + 10 * 0.3 + 10 * 0.1) / 29:.3f}" in html
    assert "62 %" in html  # 5 of 8 verdicts for the answer shown first (62.5 rounded half to even)
    assert "Of 4 pairs judged in both orders, the verdict changed with the order in 50 %" in html
    assert "no difference shown" in html  # -0.08 with an interval across 0
    # the permutation test does not back the narrow interval (every question alike): no direction is claimed
    assert "no preference for its own family shown" in html
    assert "cannot judge" in html
    for raw in ("undefined_reason", "first_position", "None", "nan"):
        assert raw not in html.replace("None of", ""), raw
    plot = client.get(reverse("judge_card_plot", args=[report.pk, "llm", "svg"]))
    assert plot.status_code == 200 and plot["Content-Type"] == "image/svg+xml"
    assert client.get(reverse("judge_card", args=[report.pk, "nobody"])).status_code == 404


def test_only_organizers_read_a_card(made, make_user, client):
    report = Report.objects.create(
        kind="study", params={"study_id": made.study.pk}, result=report_study(study_id=made.study.pk, **KW)
    )
    for role in ("reviewer", "ranker", "adjudicator"):
        client.force_login(make_user(role))
        assert client.get(reverse("judge_card", args=[report.pk, "llm"])).status_code == 403, role


def test_a_report_from_before_cards_says_to_start_a_new_one(made, organizer, client):
    result = report_study(study_id=made.study.pk, **KW)
    del result["judge_cards"]
    report = Report.objects.create(kind="study", params={"study_id": made.study.pk}, result=result)
    client.force_login(organizer)
    html = client.get(reverse("judge_card", args=[report.pk, "llm"])).content.decode()
    assert "computed before judge cards existed" in html
