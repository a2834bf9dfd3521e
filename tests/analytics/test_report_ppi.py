"""The study report's prediction-powered estimates (issue #43): each system's physician score from the physicians
alone, from an imported judge alone and from both (PPI++), checked against ppi-python on the values this test
assembles from the rows it made, and the page that shows them."""

from __future__ import annotations

import json
import math
import random
import re

import numpy as np
import ppi_py
import pytest
from django.urls import reverse
from django.utils import timezone
from scipy.stats import norm

from analytics.judges.ppi import tag_values
from analytics.judges.scores import judge_scores_import
from analytics.models import JudgeScore, Report
from analytics.services.reports import report_params_check, report_study
from portal.errors import DomainError
from ranking.models import AnswerJudgement, RankingTask
from tests.analytics.judge_rows import ranked_study

pytestmark = pytest.mark.django_db

KW = {"n_resamples": 20, "seed": 7}
QUESTIONS = 20
LABELLED = [f"q{i}" for i in range(1, 9)]  # ranked (tagged) by the three physicians; q9..q20 nobody ranked
UNLABELLED = [f"q{i}" for i in range(9, QUESTIONS + 1)]
MODELS = ["SYS-A", "SYS-B", "SYS-C"]
SCALE = ["good", "okay", "bad"]
VALUE = {"good": 1.0, "okay": 0.5, "bad": 0.0}  # the reading of the default scale
SYS_C_SCORED = ["q1", *UNLABELLED[:4]]  # the judge scored SYS-C on one tagged question only
HOSTILE = "<b>evil</b>"


#: The three physicians' tags (g, o, b: good, okay, bad) on each system's answer to q1..q8, by hand.
TAGS = {
    "SYS-A": ["ggg", "ggo", "gob", "ggg", "oob", "gog", "ggb", "goo"],
    "SYS-B": ["obb", "ooo", "gob", "bbb", "ogo", "obo", "gbb", "oob"],
    "SYS-C": ["bbb", "obb", "bob", "oob", "bbo", "bbb", "obo", "bbb"],
    "reference": ["ggg"] * len(LABELLED),
}
LETTERS = {"g": "good", "o": "okay", "b": "bad"}


def tag_of(question: int, physician: int, system: str) -> str:
    """The tag physician ``physician`` (0-2) gave ``system``'s answer to question ``question`` (1-8)."""
    return LETTERS[TAGS[system][question - 1][physician]]


@pytest.fixture
def made(make_user):
    """Twenty questions, the first eight ranked and tagged by three physicians (tags: :data:`TAGS`, the reference's
    too), the other twelve not ranked by anyone."""
    made = ranked_study(make_user, name="ppi study", questions=QUESTIONS)
    RankingTask.objects.filter(study=made.study, question__item__uid__in=UNLABELLED).delete()
    physicians = {user.pk: index for index, user in enumerate(made.physicians)}
    for judgement in AnswerJudgement.objects.filter(task__study=made.study).select_related(
        "task__question__item", "answer__system"
    ):
        question = int(judgement.task.question.item.uid.removeprefix("q"))
        judgement.tag = tag_of(question, physicians[judgement.task.ranker_id], judgement.answer.system.name)
        judgement.save(update_fields=["tag"])
    return made


def physician_means() -> dict[tuple[str, str], float]:
    """(question, system) → the mean of the three physicians' tag values, from the pattern (not the database)."""
    return {
        (uid, system): float(np.mean([VALUE[tag_of(int(uid[1:]), p, system)] for p in range(3)]))
        for uid in LABELLED
        for system in MODELS
    }


def judge_scores() -> dict[tuple[str, str], float]:
    """The judge "good": near the physicians' value where they tagged, anything elsewhere; SYS-C scored on
    :data:`SYS_C_SCORED` only; the reference answer too (the estimates leave it out)."""
    rng = random.Random(43)
    truth = physician_means()
    scores = {}
    for uid in LABELLED + UNLABELLED:
        for system in ("SYS-A", "SYS-B"):
            near = truth.get((uid, system), rng.uniform(0.2, 0.9))
            scores[uid, system] = round(min(1.0, max(0.0, near + rng.uniform(-0.3, 0.3))), 3)
        scores[uid, "reference"] = 0.99
    for uid in SYS_C_SCORED:
        scores[uid, "SYS-C"] = round(rng.uniform(0, 1), 3)
    return scores


def import_judge(study) -> None:
    lines = [
        {"item_uid": uid, "system": system, "score": score, "judge": "good"}
        for (uid, system), score in judge_scores().items()
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    judge_scores_import(study=study, source=data, name="good.jsonl", user=None)


def add_hostile_judge(made) -> None:
    """A judge on a 0-10 scale whose name is markup, stored behind the import's back (the import refuses it)."""
    for position, uid in enumerate(LABELLED + UNLABELLED):
        for system in ("SYS-A", "SYS-B"):
            JudgeScore.objects.create(answer=made.answers[uid, system], judge=HOSTILE, score=float(position % 11))


def expected_system(system: str, halfwidth: float, alpha: float = 0.05) -> dict:
    """ppi-python's figures for the judge "good" on ``system``, on Y, Ŷ and Ŷu assembled here."""
    truth, scores = physician_means(), judge_scores()
    labelled = [uid for uid in LABELLED if (uid, system) in scores]
    y = np.array([truth[uid, system] for uid in labelled])
    yhat = np.array([scores[uid, system] for uid in labelled])
    unlabelled = np.array([scores[uid, system] for uid in UNLABELLED if (uid, system) in scores])
    everything = np.array([v for (uid, s), v in scores.items() if s == system])
    low, high = ppi_py.classical_mean_ci(y, alpha=alpha)
    judge_low, judge_high = ppi_py.classical_mean_ci(everything, alpha=alpha)
    ppi_low, ppi_high = (bound[0] for bound in ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=alpha))
    mean = ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled)[0]
    at_0, at_1 = (ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled, lam=lam)[0] for lam in (0, 1))
    n0 = math.ceil((norm.ppf(1 - alpha / 2) * y.std() / halfwidth) ** 2)
    n_max = y.size + unlabelled.size
    needed = ppi_py.ppi_mean_power(y, yhat, cost_Y=1, cost_Yhat=1e-9, effective_n=n0, n_max=n_max)["n"]
    return {
        "n_human": y.size,
        "n_judge_only": unlabelled.size,
        "classical": {"mean": y.mean(), "low": low, "high": high},
        "judge_only": {"mean": everything.mean(), "low": judge_low, "high": judge_high},
        "ppi": {"mean": mean, "low": ppi_low, "high": ppi_high, "lambda": (mean - at_0) / (at_1 - at_0)},
        "human_needed": needed,
        "more_needed": max(needed - y.size, 0),
        "target_met": (ppi_high - ppi_low) / 2 <= halfwidth,
        "reachable": n0 <= n_max,
    }


def test_tags_are_spread_evenly_from_one_to_zero():
    assert tag_values(SCALE) == VALUE
    assert tag_values(["a", "b", "c", "d"]) == pytest.approx({"a": 1.0, "b": 2 / 3, "c": 1 / 3, "d": 0.0})


def test_no_ppi_section_without_an_imported_judge(made):
    plain = report_study(study_id=made.study.pk, **KW)
    assert "ppi" not in plain
    import_judge(made.study)
    judged = report_study(study_id=made.study.pk, **KW)
    assert set(judged) == set(plain) | {"judges", "judge_cards", "ppi"}  # the report's other keys stay as they were


@pytest.mark.parametrize("halfwidth", [0.05, 0.3])
def test_estimates_are_ppi_pythons_on_the_physicians_and_the_judge(made, halfwidth):
    import_judge(made.study)
    section = report_study(study_id=made.study.pk, ppi_halfwidth=halfwidth, **KW)["ppi"]
    assert section["target_halfwidth"] == halfwidth and section["alpha"] == 0.05
    assert section["tag_values"] == [{"tag": tag, "value": value} for tag, value in VALUE.items()]
    judge = section["judges"]["good"]
    assert list(judge["systems"]) == MODELS  # the reference answer left out
    assert judge["unit_scale"] is True
    for system in ("SYS-A", "SYS-B"):
        got, expected = judge["systems"][system], expected_system(system, halfwidth)
        assert (got["n_human"], got["n_judge_only"]) == (8, 12)
        for key in ("classical", "judge_only", "ppi"):
            assert got[key] == pytest.approx(expected[key], abs=1e-9), (system, key)
        for key in ("human_needed", "more_needed", "target_met", "reachable"):
            assert got[key] == expected[key], (system, key)
    # the judge helps where it tracks the physicians: λ strictly between 0 and 1 (power tuning at work)
    assert 0 < judge["systems"]["SYS-A"]["ppi"]["lambda"] < 1


def test_power_figure_at_a_reachable_target(made):
    """At ±0.3 the physicians' spread needs a few questions only: the figure is a number of questions to label, not
    "unreachable" (a fixture check as much as a code check: the page test reads this sentence)."""
    import_judge(made.study)
    got = report_study(study_id=made.study.pk, ppi_halfwidth=0.3, **KW)["ppi"]["judges"]["good"]["systems"]
    expected = expected_system("SYS-A", 0.3)
    assert got["SYS-A"]["reachable"] and expected["reachable"]
    assert got["SYS-A"]["more_needed"] == expected["more_needed"]


def test_a_system_with_one_labelled_question_is_undefined_with_the_reason(made):
    import_judge(made.study)
    sys_c = report_study(study_id=made.study.pk, **KW)["ppi"]["judges"]["good"]["systems"]["SYS-C"]
    assert (sys_c["n_human"], sys_c["n_judge_only"], sys_c["n_labelled_unscored"]) == (1, 4, 7)
    assert sys_c["undefined_reason"] == (
        "only 1 question has both a physician's tag and this judge's score; at least 2 are needed"
    )
    assert "classical" not in sys_c and "ppi" not in sys_c
    scores = [v for (_, s), v in judge_scores().items() if s == "SYS-C"]
    assert sys_c["judge_only"]["mean"] == pytest.approx(np.mean(scores))


def test_a_judge_with_a_score_that_is_not_a_number_is_left_out(made):
    import_judge(made.study)
    JudgeScore.objects.create(answer=made.answers["q1", "SYS-A"], judge="broken", score=float("nan"))
    section = report_study(study_id=made.study.pk, **KW)["ppi"]
    assert list(section["judges"]) == ["good"]
    assert "'SYS-A' on item 'q1' is nan" in section["left_out"]["broken"]


def test_the_target_half_width_is_a_checked_report_parameter(made):
    params = {"study_id": made.study.pk, "ppi_halfwidth": 0.1}
    assert report_params_check(kind="study", params=params) == params
    for bad, message in (
        ("0.1", "must be a number"),
        (True, "must be a number"),
        (float("nan"), "must be a number"),
        (0, "must be between"),
        (0.9, "must be between"),
    ):
        with pytest.raises(DomainError, match=f"params.ppi_halfwidth: {message}"):
            report_params_check(kind="study", params={"study_id": made.study.pk, "ppi_halfwidth": bad})


def ppi_html(page: str) -> str:
    found = re.search(r'<section class="card" id="ppi">.*?</section>', page, flags=re.S)
    assert found, "no prediction-powered section on the page"
    return found.group(0)


def stored_report(made, organizer, halfwidth: float) -> Report:
    return Report.objects.create(
        kind="study",
        params={"study_id": made.study.pk, "ppi_halfwidth": halfwidth},
        result=report_study(study_id=made.study.pk, ppi_halfwidth=halfwidth, **KW),
        created_by=organizer,
        finished_at=timezone.now(),
    )


def shown(figures: dict) -> str:
    return f"{figures['mean']:.2f} [{figures['low']:.2f}, {figures['high']:.2f}]"


@pytest.mark.parametrize("view", ["report_detail", "report_print"])
def test_report_page_shows_the_three_estimates_and_the_power_sentence(made, organizer, client, view):
    import_judge(made.study)
    add_hostile_judge(made)
    report = stored_report(made, organizer, 0.1)
    client.force_login(organizer)
    section = ppi_html(client.get(reverse(view, args=[report.pk])).content.decode())
    for heading in ("Physicians only", "Judge only", "PPI++", "λ"):
        assert f"{heading}</th>" in section
    assert "good = 1, okay = 0.5, bad = 0" in section
    for system in ("SYS-A", "SYS-B"):
        expected = expected_system(system, 0.1)
        good_table = section.split("<h3>Judge: good</h3>")[1].split("</table>")[0]
        row = re.search(rf"<tr><td>{system}</td>.*?</tr>", good_table, flags=re.S).group(0)
        for key in ("classical", "judge_only", "ppi"):
            assert shown(expected[key]) in row, (system, key)
        assert f'<td class="num">{expected["ppi"]["lambda"]:.2f}</td>' in row
        more = expected["more_needed"]  # by hand at ±0.1: 8 for SYS-A, 3 for SYS-B
        assert more > 1
        assert (
            f"With this judge, about {more} more physician-labelled questions would bring {system}&#x27;s interval "
            "to ±0.1." in section
        )
    assert "not defined: only 1 question has both a physician&#x27;s tag and this judge&#x27;s score" in section
    assert "which is not 0 to 1 (its scores run from 0.00 to 10.00)" in section  # the hostile judge's scale
    assert "&lt;b&gt;evil&lt;/b&gt;" in section and HOSTILE not in section
    text = re.sub(r"<[^>]+>", " ", section)
    assert not re.search(r"\d\.\d{3,}", text), "a raw float on the page"
    assert "None" not in text and "_" not in text


@pytest.mark.parametrize(
    ("halfwidth", "sentence"),
    [
        # at ±0.08 both need more questions than the study has; at ±0.12 SYS-B's interval (±0.11) is already there
        # and SYS-A's (±0.124) nearly, 6 labelled questions by the power calculation, which it has
        (0.08, "Even with all 20 questions this judge scored labelled by physicians, SYS-A&#x27;s interval would stay "
         "wider than ±0.08: it takes more questions, not only more labels."),
        (0.12, "SYS-B&#x27;s PPI++ interval is already within ±0.12 (±0.11 now)."),
        (0.12, "By the power calculation, SYS-A&#x27;s 8 physician-labelled questions should about do for ±0.12 with "
         "this judge, though its interval is still a little wider: a few more would make sure."),
    ],
)  # fmt: skip
def test_the_power_sentence_when_no_number_of_labels_is_the_answer(made, organizer, client, halfwidth, sentence):
    import_judge(made.study)
    figures = {system: expected_system(system, halfwidth) for system in ("SYS-A", "SYS-B")}
    if halfwidth == 0.08:
        assert not figures["SYS-A"]["reachable"]
    else:
        assert figures["SYS-B"]["target_met"] and not figures["SYS-A"]["target_met"]
        assert figures["SYS-A"]["more_needed"] == 0 and figures["SYS-A"]["human_needed"] == 6
    report = stored_report(made, organizer, halfwidth)
    client.force_login(organizer)
    assert sentence in ppi_html(client.get(reverse("report_detail", args=[report.pk])).content.decode())


def test_values_all_alike_read_as_no_interval_rather_than_certainty():
    """Ten questions every physician tagged "good": the normal interval has no width; the page must not read it as
    a system known to ±0.00 that needs no more labels."""
    from analytics.presentation.ppi import estimate_text, power_sentence

    flat = {"mean": 1.0, "low": 1.0, "high": 1.0}
    assert estimate_text(flat) == "1.00 (all values alike: no interval)"
    assert estimate_text({"mean": 0.5, "low": 0.4, "high": 0.6}) == "0.50 [0.40, 0.60]"
    figures = {"n_human": 10, "n_judge_only": 0, "more_needed": 0, "target_met": True, "reachable": True,
               "halfwidth": 0.0}  # fmt: skip
    sentence = power_sentence("SYS-A", figures, 0.05)
    assert "no interval can be estimated" in sentence and "already within" not in sentence
