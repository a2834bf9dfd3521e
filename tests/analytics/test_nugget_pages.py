"""The organizer's nugget pages: content without developer output, organizers only."""

from __future__ import annotations

import json
import re
from html import unescape
from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from analytics.models import JudgeNuggetLabel, NuggetLeaderboard
from analytics.nuggets.board import nugget_board_compute
from analytics.nuggets.judge_labels import judge_labels_import
from portal.models import Job
from tests.analytics.nugget_rows import hand_study

pytestmark = pytest.mark.django_db

JUDGE = [
    {"item_uid": "q1", "system": "SYS-A", "nugget_id": "n1", "label": "support", "judge": "lenient-llm"},
    {"item_uid": "q1", "system": "SYS-B", "nugget_id": "n1", "label": "partial", "judge": "lenient-llm"},
]


@pytest.fixture
def made(make_user, django_capture_on_commit_callbacks):
    made = hand_study(make_user)
    lines = [json.dumps(r).encode() for r in JUDGE]
    with django_capture_on_commit_callbacks(execute=True):
        judge_labels_import(study=made.study, source=lines, name="judge.jsonl", user=None)  # its job computes the board
    answer = made.answers["q1", "SYS-A"]
    nugget = made.questions[0].nugget_set.nuggets.get(key="n1")
    JudgeNuggetLabel.objects.create(
        answer=answer, nugget=nugget, labeller="matcher", source="matcher", label="support",
        sentence_index=0, evidence="Aspirin inhibits platelet aggregation.", similarity=0.912345,
    )  # fmt: skip
    nugget_board_compute(study_id=made.study.pk)  # as the matcher's own run would have queued it
    return made


def urls(made) -> list[str]:
    pk = made.study.pk
    return [
        reverse("nugget_leaderboard", args=[pk]),
        reverse("nugget_plot", args=[pk, "svg"]),
        reverse("nugget_item", args=[pk, made.questions[0].pk]),
        reverse("judge_import", args=[pk]),
    ]


def assert_no_developer_output(html: str) -> None:
    text = re.sub(r"<[^>]+>", " ", html)
    assert "None" not in text
    assert "{'" not in text and "['" not in text
    assert not re.search(r"\b(not_support|vital_strict|all_strict|avoid_hits|n_answers|kappa_ci)\b", text)
    assert not re.search(r"\d\.\d{4,}", text), re.search(r".{40}\d\.\d{4,}.{20}", text)


def test_leaderboard_shows_scores_agreement_and_items(client, organizer, made):
    client.force_login(organizer)
    page = client.get(reverse("nugget_leaderboard", args=[made.study.pk]))
    html = unescape(page.content.decode())
    assert page.status_code == 200
    assert "SYS-A" in html and "SYS-B" in html
    assert "Physicians' consensus" in html and "Judge lenient-llm" in html and "Matcher" in html
    assert "0.75" in html  # consensus nugget score of SYS-A
    assert "0.82" in html  # physicians' alpha 49/60
    assert "Krippendorff" in html and "Human ceiling" in html
    assert reverse("nugget_item", args=[made.study.pk, made.questions[0].pk]) in html
    assert_no_developer_output(html)


def test_labeller_selector_switches_the_table(client, organizer, made):
    client.force_login(organizer)
    html = client.get(reverse("nugget_leaderboard", args=[made.study.pk]), {"labeller": "lenient-llm"}).content
    html = html.decode()
    assert 'value="lenient-llm" selected' in html
    assert "labelled by judge lenient-llm" in html
    assert "Sentence precision" not in html  # judges give no sentence marks
    unknown = client.get(reverse("nugget_leaderboard", args=[made.study.pk]), {"labeller": "nobody"})
    assert 'value="consensus" selected' in unknown.content.decode()


def test_plot_is_an_svg(client, organizer, made):
    client.force_login(organizer)
    response = client.get(reverse("nugget_plot", args=[made.study.pk, "svg"]), {"labeller": "consensus"})
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert b"<svg" in response.content
    assert client.get(reverse("nugget_plot", args=[made.study.pk, "gif"])).status_code == 404


def test_item_page_names_systems_and_shows_evidence(client, organizer, made):
    client.force_login(organizer)
    html = unescape(client.get(reverse("nugget_item", args=[made.study.pk, made.questions[0].pk])).content.decode())
    assert "SYS-A" in html and "SYS-B" in html
    assert "Aspirin inhibits platelet aggregation." in html
    assert "cosine 0.91" in html
    assert "Must not appear" in html and "Partly supported" in html
    assert "marked wrong or unsupported by 1 of 2 physicians" in html  # P1 flagged SYS-A's third sentence
    assert_no_developer_output(html)


@pytest.mark.parametrize("role", ["ranker", "reviewer", "adjudicator"])
def test_other_roles_are_refused(client, make_user, made, role):
    client.force_login(make_user(role))
    for url in urls(made):
        assert client.get(url).status_code == 403, url
    assert client.post(reverse("nugget_leaderboard", args=[made.study.pk])).status_code == 403


def test_anonymous_goes_to_login(client, made):
    for url in urls(made):
        response = client.get(url)
        assert response.status_code == 302 and "login" in response["Location"]


def test_judge_upload_refusal_names_file_line_and_field(client, organizer, made):
    client.force_login(organizer)
    body = json.dumps({**JUDGE[0], "judge": "second"}) + "\n" + json.dumps({**JUDGE[0], "judge": "matcher"}) + "\n"
    upload = SimpleUploadedFile("bad<labels>.jsonl", body.encode(), content_type="application/json")
    response = client.post(reverse("judge_import", args=[made.study.pk]), {"file": upload})
    html = response.content.decode()
    assert response.status_code == 400
    assert "Nothing was imported" in html and "line 2" in html and "field “judge”" in html
    assert "bad&lt;labels&gt;.jsonl" in html
    assert not JudgeNuggetLabel.objects.filter(labeller="second").exists()


def test_judge_upload_imports_and_returns_to_the_leaderboard(client, organizer, made):
    client.force_login(organizer)
    body = json.dumps({**JUDGE[0], "judge": "second"}) + "\n"
    upload = SimpleUploadedFile("labels.jsonl", body.encode())
    response = client.post(reverse("judge_import", args=[made.study.pk]), {"file": upload}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("nugget_leaderboard", args=[made.study.pk])
    assert "Imported 1 label from labels.jsonl: second (1 label)." in unescape(response.content.decode())


def test_matcher_button_starts_a_job(client, organizer, made, monkeypatch):
    import analytics.views.nuggets as views

    started = {}

    def fake_request(*, study, user):
        from portal.jobs import job_create

        started["study"] = study
        return job_create(kind="nugget_matcher", params={"study_id": study.pk}, user=user)

    monkeypatch.setattr(views, "nugget_matcher_request", fake_request)
    client.force_login(organizer)
    response = client.post(reverse("nugget_leaderboard", args=[made.study.pk]))
    assert response.status_code == 302 and "/jobs/" in response["Location"]
    assert started["study"] == made.study


def test_numbers_read_without_negative_zero_and_reading_names_the_gap():
    from analytics.presentation.nuggets import number

    assert number(-0.0001) == "0.00" and number(None) == "—" and number(0.4567) == "0.46"


def test_reading_says_whether_a_judge_reaches_the_physicians(made):
    from analytics.nuggets.board import study_nugget_report
    from analytics.presentation.nuggets import agreement_reading

    report = study_nugget_report(made.study, n_resamples=10).board()
    # usability F17: a study of a few questions is too small to say how far a judge can be trusted
    assert agreement_reading(report) == (
        "Too early to read how far the automatic labels can be trusted: 1 question with nuggets so far; at least 10 "
        "questions with nuggets are needed, 9 more."
    )
    report.n_questions = 10  # the same figures, read as if the study were large enough
    reading = agreement_reading(report)
    assert reading.startswith("Every automatic labeller agrees with the physicians' consensus less")
    assert "screen answers" in reading
    judges = report.summary["agreement"]["judges"]
    judges["matcher"]["kappa"] = 0.9
    assert "as well as the physicians agree with each other" in agreement_reading(report)
    # physicians who barely agree with each other cannot vouch for anyone, however well a judge matches them
    ceiling = report.summary["agreement"]["human_ceiling"]["kappa"]
    ceiling.update({"min": 0.02, "max": 0.05, "mean": 0.03})
    weak = agreement_reading(report)
    assert weak.startswith("The physicians agree only weakly") and "cannot show" in weak


def test_csv_has_every_labeller_and_score_with_intervals(client, organizer, made):
    import csv
    import io

    client.force_login(organizer)
    response = client.get(reverse("nugget_leaderboard", args=[made.study.pk]), {"format": "csv"})
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    consensus_all = next(
        r for r in rows if r["system"] == "SYS-A" and r["labeller"] == "consensus" and r["score"] == "all"
    )
    assert float(consensus_all["mean"]) == 0.75 and consensus_all["n_answers"] == "1"
    assert {r["labeller"] for r in rows} >= {"consensus", "matcher", "lenient-llm"}


def test_the_nugget_leaderboard_shows_the_harm_rate_when_the_study_asked(client, organizer, make_user):
    """Two physicians rank q1; one flags SYS-B as harmful: SYS-B 50 % (1 of 2), SYS-A 0 %."""
    from ranking.models import AnswerJudgement
    from tests.analytics.nugget_rows import ANSWERS, PHYSICIAN_LABELS, nugget_study, rank_answers, submit_nugget_task

    made = nugget_study(items={"q1": dict(ANSWERS)}, name="harm study", ask_ranking=True)
    for n in (0, 1):
        task = submit_nugget_task(made, make_user("ranker"), "q1", PHYSICIAN_LABELS[n])
        rank_answers(made, task, {"SYS-A": 1, "SYS-B": 2})
        AnswerJudgement.objects.filter(task=task).update(harm=False)
        if n == 1:
            AnswerJudgement.objects.filter(task=task, answer__system__name="SYS-B").update(harm=True)
    nugget_board_compute(study_id=made.study.pk)
    client.force_login(organizer)
    url = reverse("nugget_leaderboard", args=[made.study.pk])
    assert "Flagged harmful" not in client.get(url).content.decode()  # the study did not ask
    made.study.ask_harm = True
    made.study.save(update_fields=["ask_harm"])
    html = unescape(client.get(url).content.decode())
    row = re.search(r"<tr><td>SYS-B</td>.*?</tr>", html, flags=re.S).group(0)
    assert "50 % (9 % – 91 %)" in row
    assert "0 % (0 % – 66 %)" in re.search(r"<tr><td>SYS-A</td>.*?</tr>", html, flags=re.S).group(0)
    # read from the stored board (computed with the rankings by the job), not from every ranking on each view
    stored = {
        r["system"]: (r["flagged"], r["n_judgements"]) for r in NuggetLeaderboard.objects.get().result["harm_rates"]
    }
    assert stored == {"SYS-A": (0, 2), "SYS-B": (1, 2)}


def test_the_first_view_queues_one_job_and_shows_its_progress(client, organizer, make_user):
    made = hand_study(make_user)
    client.force_login(organizer)
    url = reverse("nugget_leaderboard", args=[made.study.pk])
    html = client.get(url).content.decode()
    assert "data-computing" in html and "Computing the nugget leaderboard" in html
    assert "Scores per system" not in html  # nothing stored yet: no empty table
    client.get(url)  # a second look while it runs queues no second job
    assert list(Job.objects.filter(kind="nugget_leaderboard").values_list("params", flat=True)) == [
        {"study_id": made.study.pk}
    ]
    assert client.get(url, {"format": "csv"}).status_code == 404
    assert client.get(reverse("nugget_plot", args=[made.study.pk, "svg"])).status_code == 404
    nugget_board_compute(study_id=made.study.pk)
    Job.objects.filter(kind="nugget_leaderboard").update(status=Job.Status.SUCCEEDED)
    html = unescape(client.get(url).content.decode())
    assert "data-computing" not in html and "Computed " in html and "0.75" in html
    assert "data-stale" not in html


def test_a_change_since_is_named_and_computing_again_is_one_click(client, organizer, made, make_user):
    from tests.analytics.nugget_rows import PHYSICIAN_LABELS, submit_nugget_task

    client.force_login(organizer)
    url = reverse("nugget_leaderboard", args=[made.study.pk])
    assert "data-stale" not in client.get(url).content.decode()
    JudgeNuggetLabel.objects.filter(labeller="lenient-llm").first().delete()  # a judge imported again, smaller
    JudgeNuggetLabel.objects.create(
        answer=made.answers["q1", "SYS-B"], nugget=made.questions[0].nugget_set.nuggets.get(key="n2"),
        labeller="strict-llm", source="import", label="partial",
    )  # fmt: skip
    submit_nugget_task(made, make_user("ranker"), "q1", PHYSICIAN_LABELS[0])
    html = unescape(client.get(url).content.decode())
    assert "data-stale" in html
    html = re.sub(r"</?strong>", "", html)
    assert "Changed since: 1 more physician judgement submitted; judge “lenient-llm” imported again; " \
        "judge “strict-llm” imported." in html  # fmt: skip
    assert "0.75" in html  # the stored figures stay until the new ones are computed
    response = client.post(url, {"action": "recompute"})
    assert response.status_code == 302 and response["Location"] == url
    stored = NuggetLeaderboard.objects.get(study=made.study)
    assert stored.job.kind == "nugget_leaderboard" and not stored.job.finished
    assert "data-computing" in client.get(url).content.decode()


def test_the_item_page_shows_labels_given_after_the_board_was_computed(client, organizer, made):
    client.force_login(organizer)
    JudgeNuggetLabel.objects.create(
        answer=made.answers["q1", "SYS-B"], nugget=made.questions[0].nugget_set.nuggets.get(key="n2"),
        labeller="strict-llm", source="import", label="partial", evidence="Partly there.",
    )  # fmt: skip
    html = unescape(client.get(reverse("nugget_item", args=[made.study.pk, made.questions[0].pk])).content.decode())
    assert "Judge strict-llm" in html and "Partly there." in html
    assert "Physicians' consensus" in html  # the study's physicians, as on the leaderboard


def test_the_question_list_is_paged(client, organizer, monkeypatch):
    import analytics.views.nuggets as views
    from tests.analytics.nugget_rows import ANSWERS, nugget_study

    made = nugget_study(items={"q1": dict(ANSWERS), "q2": dict(ANSWERS)}, name="two questions")
    monkeypatch.setattr(views, "QUESTIONS_PER_PAGE", 1)
    client.force_login(organizer)
    url = reverse("nugget_leaderboard", args=[made.study.pk])
    first = unescape(client.get(url).content.decode())
    second = unescape(client.get(url, {"page": 2}).content.decode())
    one, two = (reverse("nugget_item", args=[made.study.pk, q.pk]) + '"' for q in made.questions)
    assert one in first and two not in first and "questions 1–1 of 2" in first
    assert two in second and one not in second and 'rel="prev"' in second
    assert client.get(url, {"page": "<script>"}).status_code == 200  # a bad page number shows the first


def test_a_board_stored_in_another_shape_is_computed_again_not_a_500(client, organizer, made, caplog):
    """A board stored by an older version of the portal (other fields) cannot be read: the page shows none, says a
    job is computing it, and the plot answers 404, rather than any of them failing."""
    NuggetLeaderboard.objects.filter(study=made.study).update(result={"systems": {}})
    Job.objects.filter(kind="nugget_leaderboard").update(status=Job.Status.SUCCEEDED)
    client.force_login(organizer)
    response = client.get(reverse("nugget_leaderboard", args=[made.study.pk]))
    assert response.status_code == 200 and "data-computing" in response.content.decode()
    assert NuggetLeaderboard.objects.get(study=made.study).job.status == Job.Status.QUEUED
    assert client.get(reverse("nugget_plot", args=[made.study.pk, "svg"])).status_code == 404
    assert "cannot be read" in caplog.text


@pytest.mark.parametrize("value", ["\x00", "9" * 40, "-1", "1.5", "<b>x</b>", "[]"])
def test_hostile_page_and_labeller_values_are_answered_not_failed(client, organizer, made, value):
    """Huge or negative numbers, wrong types and markup in the query: the first page or the consensus, never an
    error, nothing of the value echoed as markup. A NUL byte is refused before the view, naming the field."""
    client.force_login(organizer)
    url = reverse("nugget_leaderboard", args=[made.study.pk])
    plot = reverse("nugget_plot", args=[made.study.pk, "svg"])
    for params in ({"page": value}, {"labeller": value}):
        response = client.get(url, params)
        html = response.content.decode()
        if value == "\x00":
            assert response.status_code == 400 and next(iter(params)) in html, params
            continue
        assert response.status_code == 200, params
        assert "<b>x</b>" not in html and 'value="consensus" selected' in html
    assert client.get(plot, {"labeller": value}).status_code == (400 if value == "\x00" else 200)
    # anything but "recompute" starts the matcher, as the button always did (a form's multipart body reaches the
    # view as it is); a NUL in a urlencoded body is refused before the view
    assert client.post(url, {"action": value}).status_code == 302
    urlencoded = client.post(url, f"action={quote(value)}", content_type="application/x-www-form-urlencoded")
    assert urlencoded.status_code == (400 if value == "\x00" else 302)
