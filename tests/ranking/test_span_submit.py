"""Span studies: creating them, storing the spans on submit (item label derived), drafts, export, the API."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from portal.errors import DomainError
from portal.models import AuditEntry
from ranking.models import AnswerJudgement, HallucinationSpan, RankingDraft, StudyAnswer
from ranking.services.drafts import BadDraft, draft_save
from ranking.services.exports import shroom_records, study_formats
from ranking.services.queue import task_next
from ranking.services.submissions import IncompleteRanking, task_slots, task_submit

from .conftest import full_answers

TEXT = "患者😀服用阿司匹林100mg每日。"  # the marked words come after an emoji and Chinese characters


def span(start, end, kind="extrinsic", note=""):
    return {"start": start, "end": end, "kind": kind, "note": note}


@pytest.fixture
def span_task(make_study, make_user):
    def factory(**options):
        study = make_study(sample_size=1, ask_spans=True, **options)
        ranker = make_user("ranker")
        task = task_next(study=study, ranker=ranker)
        StudyAnswer.objects.filter(pk=task.order[0]).update(text=TEXT)
        return study, ranker, task

    return factory


@pytest.mark.django_db
def test_a_spans_only_study_can_be_created_and_nothing_asked_is_refused(make_study):
    study = make_study(sample_size=1, ask_ranking=False, ask_spans=True)
    assert study.ask_spans and not study.ask_ranking
    assert [fmt for fmt, _ in study_formats(study)] == ["shroom", "spans-jsonl", "spans-csv", "spans-parquet"]
    with pytest.raises(DomainError, match="mark hallucinated words"):
        make_study(sample_size=1, ask_ranking=False)


@pytest.mark.django_db
def test_touching_marks_of_different_kinds_are_refused_and_nothing_is_stored(span_task):
    _, ranker, task = span_task()
    spans = {"A": [span(3, 9), span(9, 14, "intrinsic")], "B": [], "C": []}
    with pytest.raises(IncompleteRanking, match="answer A, marks 1 and 2 overlap or touch"):
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), spans=spans)
    assert not HallucinationSpan.objects.exists() and not AnswerJudgement.objects.exists()
    task.refresh_from_db()
    assert task.status == "leased"


@pytest.mark.django_db
def test_offsets_point_at_the_exact_text_shown_and_the_label_is_the_widest_kind(span_task):
    _, ranker, task = span_task(ask_hallucination=True)
    spans = {"A": [span(3, 9, "extrinsic", " 剂量 "), span(12, 14, "extrinsic"), span(10, 11, "intrinsic")]}
    spans.update(B=[span(0, 2, "other")], C=[])
    answers = full_answers(task)
    answers["C"].update(hallucination=True, hallucination_kind="other")  # ignored: derived from the spans
    task_submit(task_id=task.pk, ranker=ranker, answers=answers, spans=spans)
    a = HallucinationSpan.objects.filter(task=task, answer_id=task.order[0]).order_by("start")
    assert [(s.start, s.end, s.kind, s.note) for s in a] == [
        (3, 9, "extrinsic", "剂量"),
        (10, 11, "intrinsic", ""),
        (12, 14, "extrinsic", ""),
    ]
    assert TEXT[3:9] == "服用阿司匹林" and TEXT[12:14] == "mg"
    labels = {j.slot: (j.hallucination, j.hallucination_kind) for j in AnswerJudgement.objects.filter(task=task)}
    assert labels == {"A": (True, "extrinsic"), "B": (True, "other"), "C": (False, "")}
    entry = AuditEntry.objects.get(action="ranking_submitted", object_id=str(task.pk))
    assert entry.after["spans"]["A"][0] == {"start": 3, "end": 9, "kind": "extrinsic", "note": "剂量"}
    assert entry.after["spans"]["C"] == []


@pytest.mark.django_db
def test_resubmitting_with_the_same_key_stores_nothing_twice(span_task):
    _, ranker, task = span_task()
    spans = {"A": [span(3, 9)], "B": [], "C": []}
    for _ in range(2):
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), spans=spans, idempotency_key="k")
    assert HallucinationSpan.objects.count() == 1


@pytest.mark.django_db
def test_an_answer_neither_marked_nor_confirmed_clean_is_refused(span_task):
    _, ranker, task = span_task()
    with pytest.raises(IncompleteRanking, match="answer B, C: mark the hallucinated words"):
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), spans={"A": [span(0, 2)]})


@pytest.mark.django_db
def test_spans_are_refused_in_a_study_not_asking_them(make_study, make_user):
    study = make_study(sample_size=1)
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    with pytest.raises(IncompleteRanking, match="does not ask for hallucination spans"):
        task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), spans={"A": [span(0, 2)]})
    assert not AnswerJudgement.objects.exists()


@pytest.mark.django_db
def test_a_spans_only_submission_has_no_judgement_rows_and_the_shroom_export_derives_from_spans(make_study, make_user):
    study = make_study(sample_size=1, ask_ranking=False, ask_spans=True)
    rankers = [make_user("ranker"), make_user("ranker")]
    for n, ranker in enumerate(rankers):
        task = task_next(study=study, ranker=ranker)
        spans = {slot: [] for slot in task_slots(task)}
        first = StudyAnswer.objects.select_related("system").get(pk=task.order[0])
        target = [slot for slot, pk in zip(task_slots(task), task.order, strict=True) if pk == first.pk][0]
        if n == 0:
            spans[target] = [span(0, 3, "other")]
        task_submit(task_id=task.pk, ranker=ranker, answers={}, spans=spans)
    assert not AnswerJudgement.objects.exists()
    assert HallucinationSpan.objects.count() == 1
    records = shroom_records(study=study)
    assert len(records) == 3 and all(r["n_annotators"] == 2 for r in records)
    marked = [r for r in records if r["p(Hallucination)"] > 0]
    assert len(marked) == 1 and marked[0]["p(Hallucination)"] == 0.5 and marked[0]["label"] == "Not Hallucination"
    assert sorted(v["kind"] or "" for v in marked[0]["annotations"]) == ["", "other"]


@pytest.mark.django_db
def test_drafts_keep_spans_and_refuse_bad_ones(span_task):
    _, _, task = span_task()
    draft_save(task=task, data={"fields": {"clean_B": True}, "spans": {"A": [span(3, 9)], "B": []}})
    data = RankingDraft.objects.get(task=task).data
    assert data["spans"] == {"A": [span(3, 9)]} and data["fields"] == {"clean_B": True}
    with pytest.raises(BadDraft, match="answer A, mark 1: the span 3-99"):
        draft_save(task=task, data={"spans": {"A": [span(3, 99)]}})


@pytest.mark.django_db
def test_the_page_posts_spans_as_json_and_the_api_takes_them(span_task, client, make_user):
    study, ranker, task = span_task(ask_ranking=False)
    client.force_login(ranker)
    url = reverse("ranking_task", args=[task.pk])
    page = client.get(url)
    assert page.status_code == 200 and b'id="span-texts"' in page.content and b"Submit marks" in page.content
    assert b"Mark hallucinated words" in page.content
    bad = client.post(url, {"spans": "{not json", "idempotency_key": "x"})
    assert bad.status_code == 400 and "spans must be an object" in bad.content.decode()
    client.post(url, {"spans": json.dumps({"A": [span(3, 9)], "B": [], "C": []}), "idempotency_key": "y"})
    assert list(HallucinationSpan.objects.values_list("start", "end")) == [(3, 9)]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("spans", "words"),
    [
        ('{"A": [], "A": [{"start": 3, "end": 9}], "B": [], "C": []}', "spans, A: is given twice in one object"),
        ('{"A": [{"start": 3, "end": 1e400}], "B": [], "C": []}', "answer A, mark 1, end: the number 1e400 is out"),
        ('{"A": [{"start": 3, "end": NaN}], "B": [], "C": []}', "answer A, mark 1, end: NaN is not a number"),
    ],
)
def test_the_pages_spans_are_read_by_the_one_json_parser(span_task, client, spans, words):
    """The page's spans field is JSON a person can send by hand: a key given twice (Python kept the last) or a
    number that is not finite is the ranking's problem, shown on the page, and nothing is stored."""
    _, ranker, task = span_task(ask_ranking=False)
    client.force_login(ranker)
    response = client.post(reverse("ranking_task", args=[task.pk]), {"spans": spans, "idempotency_key": "k"})
    assert response.status_code == 400 and words in response.content.decode()
    assert not HallucinationSpan.objects.exists()


@pytest.mark.django_db
def test_api_submit_accepts_spans_and_reports_problems(make_study, make_user, client):
    study = make_study(sample_size=1, ask_ranking=False, ask_spans=True)
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    client.force_login(ranker)
    url = f"/api/ranking/tasks/{task.pk}/submit/"
    bad = client.post(url, {"spans": {"A": [span(0, 100000)], "B": [], "C": []}}, content_type="application/json")
    assert bad.status_code == 400 and any("answer A, mark 1" in p for p in bad.json()["problems"])
    ok = client.post(url, {"spans": {"A": [span(0, 2, "other")], "B": [], "C": []}}, content_type="application/json")
    assert ok.status_code == 200, ok.content
    assert HallucinationSpan.objects.get().kind == "other"
    detail = client.get(f"/api/ranking/tasks/{task.pk}/")
    assert detail.status_code == 200 and detail.json()["study"]["ask_spans"] is True


@pytest.mark.django_db
def test_the_span_labels_list_every_rater_with_no_spans_for_clean_answers(span_task):
    """What the ranker submitted is what the one reading of spans (study_span_labels) returns: merged, sorted,
    and an answer without marks counted as read by that ranker."""
    from ranking.selectors.spans import study_span_labels

    study, ranker, task = span_task()
    spans = {"A": [span(12, 14, "other"), span(3, 9)], "B": [], "C": []}
    task_submit(task_id=task.pk, ranker=ranker, answers=full_answers(task), spans=spans)
    result = {a.answer_id: a.annotations for a in study_span_labels(study)}
    assert {
        pk: [(n.ranker_id, [(s.start, s.end, s.kind) for s in n.spans]) for n in result[pk]] for pk in task.order
    } == {
        task.order[0]: [(ranker.pk, [(3, 9, "extrinsic"), (12, 14, "other")])],
        task.order[1]: [(ranker.pk, [])],
        task.order[2]: [(ranker.pk, [])],
    }


@pytest.mark.django_db
def test_organizer_creates_a_spans_only_study_on_the_form_and_its_page_says_so(organizer_client, systems_with_outputs):
    from ranking.models import Study

    form = organizer_client.get(reverse("study_create"))
    assert "Rankers mark hallucinated words" in form.content.decode()
    response = organizer_client.post(
        reverse("study_create"),
        {
            "name": "Spans only",
            "systems": [s.pk for s in _systems()],
            "seed": 0,
            "overlap": 2,
            "tag_scale": "good, bad",
            "unblinding_rate": 0,
            "ask_spans": "on",
            "include_reference": "on",
        },
    )
    study = Study.objects.get(name="Spans only")
    assert response.status_code == 302 and study.ask_spans and not study.ask_ranking
    page = organizer_client.get(reverse("study_detail", args=[study.pk])).content.decode()
    assert "mark each answer&#x27;s hallucinated words" in page or "mark each answer's hallucinated words" in page


def _systems():
    from ranking.models import System

    return System.objects.filter(is_reference=False)


@pytest.mark.django_db
def test_a_study_may_ask_for_marks_by_character_instead_of_whole_words(span_task, client, make_user):
    """Whole words by default (spans.js grows a selection to them); a study that asks for characters says so to the
    page, through the form, the API and the command alike."""
    study, ranker, task = span_task(ask_ranking=False)
    client.force_login(ranker)
    assert b"data-span-unit" not in client.get(reverse("ranking_task", args=[task.pk])).content
    exact, other, exact_task = span_task(ask_ranking=False, spans_by_character=True)
    client.force_login(other)
    page = client.get(reverse("ranking_task", args=[exact_task.pk])).content.decode()
    assert 'data-span-unit="characters"' in page and exact.spans_by_character


@pytest.mark.django_db
def test_the_study_form_api_and_command_take_marks_by_character(systems_with_outputs, organizer, client):
    from django.core.management import call_command

    from ranking.models import Study

    client.force_login(organizer)
    base = {"systems": list(systems_with_outputs), "overlap": 1, "ask_spans": True, "ask_ranking": False}
    response = client.post(reverse("api_study_list"), {**base, "name": "by API", "spans_by_character": True},
                           content_type="application/json")  # fmt: skip
    assert response.status_code == 201, response.content
    assert Study.objects.get(name="by API").spans_by_character
    call_command("create_study", "by command", "--system", systems_with_outputs[0], "--spans",
                 "--no-ranking", "--span-characters", "--no-reference")  # fmt: skip
    assert Study.objects.get(name="by command").spans_by_character
    form_page = client.get(reverse("study_create")).content.decode()
    assert 'name="spans_by_character"' in form_page and "Marks by character" in form_page
