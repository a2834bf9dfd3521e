"""The study report's judge section, style-controlled leaderboard, harm rates and the leaderboard without the
judgements whose ranker recognised the reference answer."""

from __future__ import annotations

import json

import pytest

from analytics.judges.scores import judge_scores_import, study_judge_scores
from analytics.selectors import study_rankings
from analytics.services.reports import report_study
from stats.judges import judge_meta_evaluation
from tests.analytics.judge_rows import ranked_study, score_lines
from tests.report_rows import stored_study_report

pytestmark = pytest.mark.django_db
KW = {"n_resamples": 50, "seed": 7}


def import_judges(study):
    """good tracks the physicians (A > B > C); lengthy prefers the longest answer (B > A > C)."""
    questions = study.questions.count()
    lines = score_lines("good", {"SYS-A": 0.9, "SYS-B": 0.6, "SYS-C": 0.1}, questions=questions)
    lines += score_lines("lengthy", {"SYS-A": 0.2, "SYS-B": 0.9, "SYS-C": 0.1}, questions=questions)
    data = "\n".join(json.dumps(line) for line in lines).encode()
    judge_scores_import(study=study, source=data, name="judges.jsonl", user=None)


@pytest.fixture
def made(make_user):
    return ranked_study(make_user)


@pytest.fixture
def readable(make_user):
    """The study with four more questions ranked A > B > C by every physician: ten, enough for the report to read
    its judges (stats.bootstrap.MIN_UNITS_TO_READ); the figures of ``made`` are the same on it (2/3 for lengthy)."""
    return ranked_study(make_user, questions=10)


def test_no_judge_section_without_imported_judges(made):
    assert "judges" not in report_study(study_id=made.study.pk, **KW)


def test_judge_figures_equal_the_meta_evaluation_on_the_same_data(made):
    import_judges(made.study)
    result = report_study(study_id=made.study.pk, **KW)
    section = result["judges"]
    assert section["imported"] == ["good", "lengthy"] and set(section["judges"]) == {"good", "lengthy"}
    ranks = study_rankings(made.study)
    ranks = ranks[~ranks["is_reference"]][["item", "annotator", "answer", "rank", "system"]]
    expected = judge_meta_evaluation(ranks, study_judge_scores(made.study), tie_calibrate=True, **KW)
    for name, figures in expected.judges.items():
        stored = section["judges"][name]
        assert stored["acc_eq"] == pytest.approx(figures.acc_eq.value)
        assert stored["acc_eq_ci"] == pytest.approx(list(figures.acc_eq.ci))
        assert stored["acc_eq_calibrated"] == pytest.approx(figures.acc_eq_calibrated)
        assert stored["epsilon"] == pytest.approx(figures.epsilon)
        assert stored["segment_tau_b"] == pytest.approx(figures.segment_tau_b.value)
        assert stored["cluster"] == figures.cluster
        assert stored["percentile_among_physicians"] == pytest.approx(figures.ceiling.percentile)
    # Known answer: the physicians' mean ranks put A before B before C on every question (on q1 and q2 A has
    # ranks 1, 1, 3 and B 3, 3, 1), three pairs a question: "good" gets all 18 pairs, "lengthy" misses A-B on each.
    assert section["judges"]["good"]["acc_eq"] == pytest.approx(1.0)
    assert section["judges"]["lengthy"]["acc_eq"] == pytest.approx(12 / 18)
    assert section["clusters"] == [["good"], ["lengthy"]]
    assert section["human_ceiling"]["low"] <= section["human_ceiling"]["high"]


def stored_report(made, organizer):
    return stored_study_report(made.study, created_by=organizer, **KW)


def test_style_harm_and_recognised_reference_sections(made):
    result = report_study(study_id=made.study.pk, **KW)
    style = result["style_control"]
    assert set(style["plain_strengths"]) == {"SYS-A", "SYS-B", "SYS-C", "reference"}
    # no answer has markdown: those coefficients are undefined, not a confident 0
    assert style["style_coefficients"]["headers"] == {"value": None, "ci": None}
    assert style["style_coefficients"]["length"]["value"] is not None
    harm = {row["system"]: row for row in result["harm_rates"]}
    assert (harm["SYS-C"]["flagged"], harm["SYS-C"]["n_judgements"], harm["SYS-C"]["rate"]) == (9, 18, 0.5)
    assert harm["SYS-A"]["rate_ci"] == [0.0, pytest.approx(0.1759, abs=1e-4)]  # Wilson, 0 of 18
    board = result["unblinded_leaderboard"]
    assert board["n_dropped"] == 1 and board["order_changed"] is False
    assert [r["system"] for r in board["rows"]] == [r["system"] for r in result["human_leaderboard"]]
    assert sum(r["n_questions"] for r in board["rows"]) <= sum(r["n_questions"] for r in result["human_leaderboard"])


def test_sentences_and_rows_say_what_the_figures_say(readable):
    from analytics.presentation.judges import judge_rows, judge_sentence, style_sentence, unblinded_sentence

    made = readable

    import_judges(made.study)
    result = report_study(study_id=made.study.pk, **KW)
    rows = judge_rows(result)
    assert [r["label"] for r in rows] == ["good", "lengthy"]
    assert rows[0]["cluster_label"] == "best cluster" and rows[1]["cluster_label"] == "second cluster"
    sentence = judge_sentence(result)
    assert sentence.startswith("good is in the best cluster and agrees with the physicians' consensus better than")
    assert "lengthy does significantly worse than the best cluster (p < 0.05)." in sentence
    assert "check that it did not see the reference answers" in sentence  # good beats all three physicians
    assert style_sentence(result).startswith("At equal quality, longer answers lose: coefficient -")
    assert unblinded_sentence(result).endswith("the order of the systems stays the same.")


def test_a_study_too_small_to_read_says_so_instead_of_ranking_the_judges(made):
    """Usability F17, for the judges: six questions are too few to name the judge that follows the physicians best,
    or a style effect (stats.bootstrap.MIN_UNITS_TO_READ); the sentences say how many more questions are needed."""
    from analytics.presentation.judges import judge_sentence, style_sentence

    import_judges(made.study)
    result = report_study(study_id=made.study.pk, **KW)
    assert judge_sentence(result) == (
        "Too early to compare the judges with the physicians: 6 questions ranked so far; at least 10 ranked "
        "questions are needed, 4 more."
    )
    assert style_sentence(result).startswith("Too early to read a style effect: 6 questions ranked so far;")


def test_report_page_shows_the_judges_to_organizers_only(readable, organizer, make_user, client):
    import re

    made = readable

    from django.urls import reverse

    from analytics.models import JudgeScore

    import_judges(made.study)
    # a hostile name stored behind the import's back: the page escapes it
    JudgeScore.objects.create(answer=made.answers["q1", "SYS-A"], judge="<b>evil</b>", score=0.0)
    JudgeScore.objects.create(answer=made.answers["q1", "SYS-B"], judge="<b>evil</b>", score=1.0)
    report = stored_report(made, organizer)
    url = reverse("report_detail", args=[report.pk])
    for role in ("reviewer", "ranker"):
        client.force_login(make_user(role))
        assert client.get(url).status_code == 403
        assert client.get(reverse("report_plot", args=[report.pk, "judges", "svg"])).status_code == 403
        assert client.get(reverse("judge_scores_import", args=[made.study.pk])).status_code == 403
    client.force_login(organizer)
    page = client.get(url).content.decode()
    assert "Automatic judges against the physicians" in page and "good is in the best cluster" in page
    assert "&lt;b&gt;evil&lt;/b&gt;" in page and "<b>evil</b>" not in page
    assert "Leaderboard controlled for answer style" in page and "Potential patient harm" in page
    assert "not defined: no two compared answers differ in it" in page
    body = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    assert "None" not in body and "acc_eq_ci" not in body and "{'" not in body
    assert not re.search(r"\d\.\d{4,}", body)  # every figure rounded
    svg = client.get(reverse("report_plot", args=[report.pk, "judges", "svg"]))
    assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    download = client.get(reverse("report_download", args=[report.pk, "json"])).json()
    assert download["judges"]["judges"]["lengthy"]["acc_eq"] == 12 / 18  # full precision


def test_a_judge_with_a_stored_infinite_score_is_left_out_by_name_and_the_others_compared(readable, organizer, client):
    """A score stored before the import refused non-finite numbers (the December security review, finding 4): it
    removed every judge from the report ("score np.float64(inf) at row 0 is not a finite number")."""
    made = readable
    from django.urls import reverse

    from analytics.models import JudgeScore

    import_judges(made.study)
    JudgeScore.objects.filter(judge="lengthy", answer=made.answers["q2", "SYS-B"]).update(score=float("inf"))
    section = report_study(study_id=made.study.pk, **KW)["judges"]
    why = "its score of system 'SYS-B' on item 'q2' is inf, not a finite number; import this judge's file again"
    assert section["left_out"] == {"lengthy": why}
    assert set(section["judges"]) == {"good"} and section["judges"]["good"]["acc_eq"] == pytest.approx(1.0)
    assert "undefined_reason" not in section and section["imported"] == ["good", "lengthy"]
    client.force_login(organizer)
    page = client.get(reverse("report_detail", args=[stored_report(made, organizer).pk])).content.decode()
    assert (
        "Left out of this comparison: lengthy: its score of system &#x27;SYS-B&#x27; on item &#x27;q2&#x27; is inf"
        in page
    )
    assert "good is in the best cluster" in page

    # Every imported judge unusable (and no metric scored): the section says why instead of comparing nothing.
    JudgeScore.objects.filter(judge="good", answer=made.answers["q1", "SYS-A"]).update(score=float("-inf"))
    section = report_study(study_id=made.study.pk, **KW)["judges"]
    assert set(section["left_out"]) == {"good", "lengthy"} and section["undefined_reason"]
    page = client.get(reverse("report_detail", args=[stored_report(made, organizer).pk])).content.decode()
    assert (
        "Not available: " in page
        and "good: its score of system &#x27;SYS-A&#x27; on item &#x27;q1&#x27; is -inf" in page
    )


def test_judges_plot_draws_each_judge_against_the_physicians_band(made):
    from analytics.presentation.charts import available_plots, report_chart
    from stats import plots

    import_judges(made.study)
    result = report_study(study_id=made.study.pk, **KW)
    assert "judges" in available_plots("study", result)
    chart = report_chart("study", result, "judges")
    ceiling = result["judges"]["human_ceiling"]
    assert chart.band == (ceiling["low"], ceiling["high"]) and chart.band_label == "physicians' range"
    assert [b.label for b in chart.bars] == ["good", "lengthy"] and chart.style == "dot" and chart.full_scale
    assert chart.bars[0].highlight and "Red: above every physician" in chart.caption
    assert chart.bars[1].value == pytest.approx(12 / 18) and chart.bars[1].ci is not None
    svg = plots.draw(chart, "svg").decode()
    assert "physicians' range" in svg and "0–1" in svg


def test_upload_page_imports_and_refuses_naming_line_and_field(made, organizer_client):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    url = reverse("judge_scores_import", args=[made.study.pk])
    assert organizer_client.get(url).status_code == 200
    bad = SimpleUploadedFile("s.csv", b"item_uid,system,score,judge\nq1,SYS-A,1,j\nq1,SYS-A,nan,j\n")
    response = organizer_client.post(url, {"file": bad})
    page = response.content.decode()
    assert response.status_code == 400 and "Nothing was imported" in page and "line 3" in page and "score" in page
    good = SimpleUploadedFile("s.csv", b"item_uid,system,score,judge\nq1,SYS-A,1,my judge\n")
    response = organizer_client.post(url, {"file": good}, follow=True)
    assert "Imported 1 score from s.csv: my judge (1 score)" in response.content.decode()


def test_csv_download_lists_each_judge_with_its_cluster(made):
    from analytics.presentation.tables import report_csv

    import_judges(made.study)
    csv = report_csv(report_study(study_id=made.study.pk, **KW))
    lines = [line for line in csv.splitlines() if line.startswith("judges,")]
    assert len(lines) == 2 and any("acc_eq:lengthy,0.666" in line and "cluster 2" in line for line in lines)


def test_a_judge_that_scored_one_answer_per_question_is_said_undefined(made):
    from analytics.presentation.judges import judge_rows, judge_sentence, judges_chart

    lines = score_lines("lonely", {"SYS-A": 1.0})
    judge_scores_import(
        study=made.study, source="\n".join(json.dumps(x) for x in lines).encode(), name="l.jsonl", user=None
    )
    result = report_study(study_id=made.study.pk, **KW)
    rows = judge_rows(result)
    lonely = next(r for r in rows if r["name"] == "lonely")
    assert lonely["acc_eq"] is None and lonely["cluster_label"] == "—"
    assert "lonely" not in judge_sentence(result).split(".")[0]
    bar = next(b for b in judges_chart(result).bars if b.label == "lonely")
    assert bar.value is None and bar.note == "no question with two ranked answers it scored"


@pytest.mark.parametrize(
    ("judge", "short", "words"),
    [
        (0.9, "above all 3: check it", "better than every one of the 3 physicians"),
        (0.8, "better than 2 of 3", "better than 2 of 3 physicians"),
        (0.7, "better than 1 and as well as 1 of 3", "better than 1 and as well as 1 of 3 physicians"),
        (0.5, "below all 3", "less well than any of the 3 physicians"),
    ],
)
def test_a_judge_is_placed_among_the_physicians_in_words(judge, short, words):
    from analytics.presentation.judges import _among

    physicians = [0.6, 0.7, 0.85]
    figures = {"acc_eq_leave_one_out": judge}
    assert _among(figures, physicians) == short and _among(figures, physicians, short=False) == words
    assert _among(figures, [0.7, 0.7]) == ("as well as all 2" if judge == 0.7 else _among(figures, [0.7, 0.7]))


def test_the_harm_rate_stands_beside_every_leaderboard(made, organizer, client):
    """SYS-C was flagged in 9 of 18 judgements: 50 % with its Wilson interval, in each leaderboard's own row."""
    import re

    from django.urls import reverse

    from analytics.presentation.judges import harm_by_system

    report = stored_report(made, organizer)
    cells = harm_by_system(report.result["harm_rates"])
    assert cells["SYS-C"] == "50 % (29 % – 71 %)" and cells["SYS-A"] == "0 % (0 % – 18 %)"
    client.force_login(organizer)
    page = client.get(reverse("report_detail", args=[report.pk])).content.decode()
    tables = re.findall(r"<table.*?</table>", page, flags=re.S)
    boards = [t for t in tables if "Flagged harmful (95 % interval)" in t]
    assert len(boards) == 3  # human, style-controlled, without recognised reference
    for table in boards:
        row = re.search(r"<tr><td>SYS-C.*?</tr>", table, flags=re.S).group(0)
        assert "50 % (29 % – 71 %)" in row


def test_no_harm_column_when_the_study_did_not_ask(made, organizer, client):
    from django.urls import reverse

    from ranking.models import AnswerJudgement

    AnswerJudgement.objects.update(harm=None)
    report = stored_report(made, organizer)
    client.force_login(organizer)
    page = client.get(reverse("report_detail", args=[report.pk])).content.decode()
    assert "Flagged harmful" not in page and "Potential patient harm" not in page


def test_a_tau_over_few_questions_says_over_how_many(made, organizer, client):
    """A label judge that tells the answers apart on q1 only: its τ is defined on 1 of the 6 questions, and the
    table says so under the figure rather than showing a lone 1.00 beside a low acc_eq."""
    from django.urls import reverse

    lines = [
        {"item_uid": f"q{q}", "system": s, "judge": "coarse", "label": label if q == 1 else "good"}
        for q in range(1, 7)
        for s, label in (("SYS-A", "good"), ("SYS-B", "okay"), ("SYS-C", "bad"))
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    judge_scores_import(study=made.study, source=data, name="coarse.jsonl", user=None)
    report = stored_report(made, organizer)
    figures = report.result["judges"]["judges"]["coarse"]
    assert (figures["segment_tau_b"], figures["segment_tau_n_items"], figures["n_items"]) == (1.0, 1, 6)
    assert figures["acc_eq"] == pytest.approx(3 / 18)
    client.force_login(organizer)
    page = client.get(reverse("report_detail", args=[report.pk])).content.decode()
    assert "1 of 6 questions" in page
