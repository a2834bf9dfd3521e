"""The study report's prediction-powered pairwise win rates (issue #43): for each pair of model systems, the share of
questions on which physicians prefer the first, from the physicians' rankings alone, from an imported judge alone and
from both (PPI++), checked against ppi-python on outcomes worked out by hand here, and the page that shows them."""

from __future__ import annotations

import json
import re

import numpy as np
import ppi_py
import pytest
from django.urls import reverse
from django.utils import timezone

from analytics.judges.scores import judge_scores_import
from analytics.models import Report
from analytics.services.reports import report_study
from ranking.models import AnswerJudgement, RankingTask, StudyQuestion, System
from stats.ppi import design_mean_ci
from tests.analytics.judge_rows import ranked_study

pytestmark = pytest.mark.django_db

KW = {"n_resamples": 20, "seed": 7}
QUESTIONS = 12
RANKED = [f"q{i}" for i in range(1, 9)]  # q1..q8 ranked; q9..q12 ranked by nobody
UNRANKED = [f"q{i}" for i in range(9, QUESTIONS + 1)]
LETTER = {"A": "SYS-A", "B": "SYS-B", "C": "SYS-C", "R": "reference"}
HOSTILE = "<i>C</i>"

#: Each physician's order (best first) on q1..q8; physician 2 did not rank q8. A's and B's ranks summed over the
#: physicians who ranked both, and the outcome for "physicians prefer A" (1 / 0 / 0.5):
ORDERS = {
    "q1": ["ABCR", "BACR", "ABRC"],  # A 1+2+1=4, B 2+1+2=5: 1
    "q2": ["BACR", "BARC", "ABCR"],  # A 5, B 4: 0
    "q3": ["ABCR", "BCAR", "CABR"],  # A 1+3+2=6, B 2+1+3=6: 0.5
    "q4": ["ABCR", "ABCR", "ABCR"],  # A 3, B 6: 1
    "q5": ["BACR", "RBAC", "CBAR"],  # A 2+3+3=8, B 1+2+2=5: 0
    "q6": ["ACBR", "RABC", "BCAR"],  # A 1+2+3=6, B 3+3+1=7: 1
    "q7": ["CRBA", "BACR", "ABRC"],  # A 4+2+1=7, B 3+1+2=6: 0
    "q8": ["ABCR", "BACR"],  # A 1+2=3, B 2+1=3: 0.5
}
Y_AB = np.array([1, 0, 0.5, 1, 0, 1, 0, 0.5])

#: The judge's scores of A and B on every question, and of C on q1 and the unranked ones only.
SCORES = {
    "SYS-A": [0.8, 0.5, 0.6, 0.9, 0.4, 0.7, 0.6, 0.5, 0.8, 0.3, 0.7, 0.9],
    "SYS-B": [0.6, 0.7, 0.6, 0.3, 0.5, 0.4, 0.5, 0.6, 0.2, 0.6, 0.7, 0.4],
    "SYS-C": {"q1": 0.1, "q9": 0.9, "q10": 0.1, "q11": 0.2, "q12": 0.9},
}
# by score, higher better: on q1..q8, where the physicians ranked, and on q9..q12, where they did not
YHAT_AB = np.array([1, 0, 0.5, 1, 0, 1, 1, 0])
YHAT_U_AB = np.array([1, 0, 0.5, 1])
# A vs C on the questions the judge scored both (q1, q9..q12): 0.8>0.1, 0.8<0.9, 0.3>0.1, 0.7>0.2, 0.9=0.9
JUDGE_AC = np.array([1, 0, 1, 1, 0.5])


@pytest.fixture
def made(make_user):
    """Twelve questions, q1..q8 ranked by the physicians as :data:`ORDERS` has it, q9..q12 by nobody; the judge
    "good" scored as :data:`SCORES`."""
    made = ranked_study(make_user, name="pairs study", questions=QUESTIONS)
    study = made.study
    RankingTask.objects.filter(study=study, question__item__uid__in=UNRANKED).delete()
    RankingTask.objects.filter(study=study, question__item__uid="q8", ranker=made.physicians[2]).delete()
    physicians = {user.pk: index for index, user in enumerate(made.physicians)}
    for judgement in AnswerJudgement.objects.filter(task__study=study).select_related(
        "task__question__item", "answer__system"
    ):
        order = ORDERS[judgement.task.question.item.uid][physicians[judgement.task.ranker_id]]
        ranks = {LETTER[letter]: position for position, letter in enumerate(order, start=1)}
        judgement.rank = ranks[judgement.answer.system.name]
        judgement.save(update_fields=["rank"])
    lines = [
        {"item_uid": f"q{index}", "system": system, "score": score, "judge": "good"}
        for system in ("SYS-A", "SYS-B")
        for index, score in enumerate(SCORES[system], start=1)
    ] + [
        {"item_uid": uid, "system": "SYS-C", "score": score, "judge": "good"} for uid, score in SCORES["SYS-C"].items()
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    judge_scores_import(study=study, source=data, name="good.jsonl", user=None)
    return made


def pairs_of(made) -> list[dict]:
    return report_study(study_id=made.study.pk, **KW)["ppi"]["judges"]["good"]["pairs"]


def expected_pair(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, alpha: float = 0.05) -> dict:
    """ppi-python's figures on the outcomes worked out by hand."""
    low, high = ppi_py.classical_mean_ci(y, alpha=alpha)
    everything = np.concatenate([yhat, yhat_u])
    judge_low, judge_high = ppi_py.classical_mean_ci(everything, alpha=alpha)
    ppi_low, ppi_high = (bound[0] for bound in ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=alpha))
    mean = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u)[0]
    at_0, at_1 = (ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=lam)[0] for lam in (0, 1))
    return {
        "classical": {"mean": y.mean(), "low": low, "high": high},
        "judge_only": {"mean": everything.mean(), "low": judge_low, "high": judge_high},
        "ppi": {"mean": mean, "low": ppi_low, "high": ppi_high, "lambda": (mean - at_0) / (at_1 - at_0)},
    }


def test_pair_estimates_are_ppi_pythons_on_outcomes_worked_out_by_hand(made):
    pairs = pairs_of(made)
    assert [(pair["first"], pair["second"]) for pair in pairs] == [
        ("SYS-A", "SYS-B"),
        ("SYS-A", "SYS-C"),
        ("SYS-B", "SYS-C"),
    ]  # the reference answer left out
    got, expected = pairs[0], expected_pair(Y_AB, YHAT_AB, YHAT_U_AB)
    assert (got["n_human"], got["n_judge_only"], got["n_ranked_unscored"]) == (8, 4, 0)
    for key in ("classical", "judge_only", "ppi"):
        assert got[key] == pytest.approx(expected[key], abs=1e-9), key
    assert got["classical"]["mean"] == pytest.approx(4 / 8)  # by hand: 1+0+.5+1+0+1+0+.5
    assert 0 < got["ppi"]["lambda"] <= 1  # the judge agrees on 6 of 8: PPI++ leans on it


def test_a_pair_with_one_ranked_question_is_undefined_with_the_reason(made):
    a_c = pairs_of(made)[1]
    # the physicians ranked A and C on q1..q8, the judge scored both on q1 and q9..q12 only
    assert (a_c["n_human"], a_c["n_judge_only"], a_c["n_ranked_unscored"]) == (1, 4, 7)
    assert a_c["undefined_reason"] == (
        "only 1 question where physicians ranked both answers and this judge scored both; at least 2 are needed"
    )
    assert "classical" not in a_c and "ppi" not in a_c
    low, high = ppi_py.classical_mean_ci(JUDGE_AC, alpha=0.05)
    assert a_c["judge_only"] == pytest.approx({"mean": 3.5 / 5, "low": low, "high": high}, abs=1e-9)


def test_no_pairs_where_the_study_does_not_rank(made):
    made.study.ask_ranking = False
    made.study.save(update_fields=["ask_ranking"])
    section = report_study(study_id=made.study.pk, **KW)["ppi"]
    assert "pairs" not in section["judges"]["good"] and "pairs_note" not in section


def test_under_a_designed_sample_a_pair_is_design_weighted(made):
    # q1..q8 drawn and ranked (q1..q4 at a chance of 0.5, q5..q8 at 0.25); q9..q12 not drawn (0.3 each)
    chance = {f"q{i}": 0.5 if i <= 4 else 0.25 if i <= 8 else 0.3 for i in range(1, QUESTIONS + 1)}
    for question in StudyQuestion.objects.filter(study=made.study).select_related("item"):
        question.inclusion_probability = chance[question.item.uid]
        question.physician_sampled = question.item.uid in RANKED
        question.save(update_fields=["inclusion_probability", "physician_sampled"])
    made.study.physician_sample = {"design": "uniform", "number": 8, "questions": QUESTIONS, "seed": 1}
    made.study.save(update_fields=["physician_sample"])
    section = report_study(study_id=made.study.pk, **KW)["ppi"]
    a_b = next(p for p in section["judges"]["good"]["pairs"] if (p["first"], p["second"]) == ("SYS-A", "SYS-B"))

    pi = np.array([chance[f"q{i}"] for i in range(1, QUESTIONS + 1)])
    f = np.r_[YHAT_AB, YHAT_U_AB]
    # physicians only, by hand: the Horvitz-Thompson mean, each ranked question's outcome over its chance, over 12
    assert a_b["classical"]["mean"] == pytest.approx(float(np.sum(Y_AB / pi[:8])) / QUESTIONS, abs=1e-12)
    y = np.r_[Y_AB, np.full(len(UNRANKED), np.nan)]
    drawn = np.arange(QUESTIONS) < len(RANKED)
    alone, tuned = design_mean_ci(f, y, pi, drawn, lam=0), design_mean_ci(f, y, pi, drawn)
    assert a_b["classical"] == pytest.approx({"mean": alone.mean, "low": alone.low, "high": alone.high}, abs=1e-12)
    assert a_b["ppi"] == pytest.approx(
        {"mean": tuned.mean, "low": tuned.low, "high": tuned.high, "lambda": tuned.lam}, abs=1e-12
    )
    assert (a_b["n_human"], a_b["n_judge_only"]) == (len(RANKED), len(UNRANKED))
    # A vs C: one question both ranked and scored, as without a design
    a_c = next(p for p in section["judges"]["good"]["pairs"] if (p["first"], p["second"]) == ("SYS-A", "SYS-C"))
    assert a_c["undefined_reason"].startswith("only 1 question where physicians ranked both answers")
    assert "pairs_note" not in section


def shown(figures: dict) -> str:
    return f"{figures['mean']:.2f} [{figures['low']:.2f}, {figures['high']:.2f}]"


@pytest.mark.parametrize("view", ["report_detail", "report_print"])
def test_report_page_shows_the_pairs_table_rounded_and_escaped(made, organizer, client, view):
    System.objects.filter(name="SYS-C").update(name=HOSTILE)  # markup as a system's name; sorts first
    report = Report.objects.create(
        kind="study",
        params={"study_id": made.study.pk},
        result=report_study(study_id=made.study.pk, **KW),
        created_by=organizer,
        finished_at=timezone.now(),
    )
    client.force_login(organizer)
    page = client.get(reverse(view, args=[report.pk])).content.decode()
    section = re.search(r'<section class="card" id="ppi">.*?</section>', page, flags=re.S).group(0)
    heading = "Pairwise: share of questions where physicians prefer the first system"
    assert heading in section
    pairs = section.split(heading)[1].split("</table>")[0]
    row = re.search(r"<tr><td>SYS-A vs SYS-B</td>.*?</tr>", pairs, flags=re.S).group(0)
    expected = expected_pair(Y_AB, YHAT_AB, YHAT_U_AB)
    assert '<td class="num">8</td><td class="num">4</td>' in row
    for key in ("classical", "judge_only", "ppi"):
        assert shown(expected[key]) in row, key
    assert f'<td class="num">{expected["ppi"]["lambda"]:.2f}</td>' in row
    assert "&lt;i&gt;C&lt;/i&gt; vs SYS-A" in pairs and HOSTILE not in section
    assert "not defined: only 1 question where physicians ranked both answers" in pairs
    assert "An interval wholly above 0.5 means physicians would prefer A" in section
    text = re.sub(r"<[^>]+>", " ", pairs)
    assert not re.search(r"\d\.\d{3,}", text), "a raw float on the page"
