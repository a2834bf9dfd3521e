"""The rankings as pairwise preferences (JSON Lines of prompt / chosen / rejected, as DPO trainers read them): exact
records of a study built row by row with known ranks (majority, mean-rank tie-break, ties), the reference answer in
as in the other exports, user text as given, the download for organizers only and audited, the command, and the
file read back by ``datasets``."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from datetime import timedelta

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from annotation.models import ImportBatch, QAItem
from portal.errors import DomainError
from portal.models import AuditEntry
from ranking.models import AnswerJudgement, RankingTask, Study, StudyAnswer, StudyQuestion, System
from ranking.services.exports import preference_records, rankings_export, study_formats
from ranking.services.reference import reference_system

pytestmark = pytest.mark.django_db

#: Markup, quotes and a leading "=": JSON carries it as it is (no spreadsheet reads this file, so no CSV guard).
HOSTILE = '=HYPERLINK("http://evil.example","x") <b>bold</b> & "quoted"\nsecond line'
QUESTIONS = {"q1": "What is <i>sepsis</i>?", "q2": "How is it treated?", "q3": "Nobody ranked this one?"}
TEXTS = {
    "q1": {"SYS-A": "Plain answer A1.", "SYS-B": HOSTILE, "reference": "Gold answer 1."},
    "q2": {"SYS-A": "Answer A2.", "SYS-B": "Answer B2.", "reference": "Gold answer 2, dosé."},
    "q3": {"SYS-A": "Answer A3.", "SYS-B": "Answer B3.", "reference": "Gold answer 3."},
}
#: physician -> question -> system -> rank (1 = best). On q1 every pair's mean ranks are equal (a Latin square), so
#: the majority alone orders them; on q2 physicians tie answers (physician 2 ties all three).
RANKS = {
    0: {"q1": {"SYS-A": 1, "SYS-B": 2, "reference": 3}, "q2": {"SYS-A": 1, "reference": 2, "SYS-B": 3}},
    1: {"q1": {"reference": 1, "SYS-A": 2, "SYS-B": 3}, "q2": {"SYS-B": 1, "reference": 1, "SYS-A": 2}},
    2: {"q1": {"SYS-B": 1, "reference": 2, "SYS-A": 3}, "q2": {"SYS-A": 1, "SYS-B": 1, "reference": 1}},
}
#: A fourth physician's q1 task, leased and not submitted: it must not count.
UNSUBMITTED = {"q1": {"reference": 1, "SYS-B": 2, "SYS-A": 3}}


def _record(uid, chosen, rejected, prefer_chosen, prefer_rejected, tied, agreement, tie=False):
    return {
        "prompt": QUESTIONS[uid],
        "chosen": TEXTS[uid][chosen],
        "rejected": TEXTS[uid][rejected],
        "item_uid": uid,
        "chosen_system": chosen,
        "rejected_system": rejected,
        "n_physicians": prefer_chosen + prefer_rejected + tied,
        "n_prefer_chosen": prefer_chosen,
        "n_prefer_rejected": prefer_rejected,
        "n_tied": tied,
        "agreement": agreement,
        "tie": tie,
    }


#: Worked out by hand from RANKS, pairs in system-name order ("SYS-A" < "SYS-B" < "reference").
EXPECTED = [
    # q1: 2 of 3 each time, although the mean ranks are equal (6/3 against 6/3).
    _record("q1", "SYS-A", "SYS-B", 2, 1, 0, 0.666667),
    _record("q1", "reference", "SYS-A", 2, 1, 0, 0.666667),
    _record("q1", "SYS-B", "reference", 2, 1, 0, 0.666667),
    # q2, A against B: one each and one tie; the mean rank (4/3 against 5/3) decides.
    _record("q2", "SYS-A", "SYS-B", 1, 1, 1, 0.333333),
    # q2, A against the reference: one each, one tie, equal means (4/3): a tie, in name order; agreement = who tied.
    _record("q2", "SYS-A", "reference", 1, 1, 1, 0.333333, tie=True),
    # q2, B against the reference: one for the reference, two ties.
    _record("q2", "reference", "SYS-B", 1, 0, 2, 0.333333),
]


@dataclass
class RankedStudy:
    study: Study
    questions: dict[str, StudyQuestion] = field(default_factory=dict)
    answers: dict[tuple[str, str], StudyAnswer] = field(default_factory=dict)
    physicians: list = field(default_factory=list)
    unsubmitted: RankingTask | None = None


def _task(question: StudyQuestion, ranker, ranks: dict[str, int], answers, *, status, minutes: int) -> RankingTask:
    order = [answers[question.item.uid, system] for system in ranks]
    now = timezone.now() + timedelta(minutes=minutes)
    task = RankingTask.objects.create(
        study=question.study,
        question=question,
        ranker=ranker,
        seed="test",
        order=[a.pk for a in order],
        status=status,
        lease_expires_at=now,
        submitted_at=now if status == RankingTask.Status.SUBMITTED else None,
    )
    for position, answer in enumerate(order, start=1):
        AnswerJudgement.objects.create(
            task=task,
            answer=answer,
            slot="ABC"[position - 1],
            position=position,
            rank=ranks[answer.system.name],
            tag="good",
        )
    return task


@pytest.fixture
def ranked(make_user) -> RankedStudy:
    study = Study.objects.create(name="preference study", ties_allowed=True)
    made = RankedStudy(study=study)
    batch = ImportBatch.objects.create(name="preference batch", fmt="cliniqlink")
    systems = {name: System.objects.get_or_create(name=name)[0] for name in ("SYS-A", "SYS-B")}
    study.systems.add(*systems.values())
    systems["reference"] = reference_system()
    for position, (uid, question_text) in enumerate(QUESTIONS.items(), start=1):
        item = QAItem.objects.create(
            uid=uid, qa_type="short_answer", question=question_text, answer="-", raw={}, batch=batch
        )
        made.questions[uid] = StudyQuestion.objects.create(study=study, item=item, position=position)
        for system, text in TEXTS[uid].items():
            made.answers[uid, system] = StudyAnswer.objects.create(
                question=made.questions[uid], system=systems[system], text=text
            )
    made.physicians = [make_user("ranker") for _ in range(4)]
    submitted, leased = RankingTask.Status.SUBMITTED, RankingTask.Status.LEASED
    for index, by_question in RANKS.items():
        for uid, ranks in by_question.items():
            _task(made.questions[uid], made.physicians[index], ranks, made.answers, status=submitted, minutes=index)
    q1 = made.questions["q1"]
    made.unsubmitted = _task(q1, made.physicians[3], UNSUBMITTED["q1"], made.answers, status=leased, minutes=3)
    return made


def _lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def test_records_are_the_physicians_majorities(ranked):
    assert preference_records(study=ranked.study) == EXPECTED
    assert _lines(rankings_export(study=ranked.study, fmt="preferences")) == EXPECTED


def test_a_submitted_task_counts_and_can_turn_a_pair(ranked):
    """The fourth physician's q1 task, once submitted, splits A against B two to two: the mean rank (9/4 against
    8/4) then prefers B."""
    ranked.unsubmitted.status = RankingTask.Status.SUBMITTED
    ranked.unsubmitted.submitted_at = timezone.now()
    ranked.unsubmitted.save()
    first = preference_records(study=ranked.study)[0]
    assert first == _record("q1", "SYS-B", "SYS-A", 2, 2, 0, 0.5)


def test_the_reference_answer_is_in_as_in_the_other_exports(ranked):
    """The rankings file has the reference as system "reference"; so does this one, its text the gold answer."""
    rows = pd.read_csv(io.BytesIO(rankings_export(study=ranked.study, fmt="csv")))
    assert set(rows.loc[rows["is_reference"], "system"]) == {"reference"}
    records = preference_records(study=ranked.study)
    named = {r["chosen_system"] for r in records} | {r["rejected_system"] for r in records}
    assert named == set(rows["system"]) == {"SYS-A", "SYS-B", "reference"}
    by_reference = [r for r in records if r["chosen_system"] == "reference"]
    assert [r["chosen"] for r in by_reference] == ["Gold answer 1.", "Gold answer 2, dosé."]


def test_user_text_is_exported_as_given(ranked):
    data = rankings_export(study=ranked.study, fmt="preferences")
    records = _lines(data)
    assert records[0]["prompt"] == "What is <i>sepsis</i>?"
    assert records[0]["rejected"] == HOSTILE and records[2]["chosen"] == HOSTILE
    assert "'=HYPERLINK" not in data.decode("utf-8")  # no spreadsheet guard: this is JSON
    assert "dosé" in data.decode("utf-8")  # not escaped
    assert len(data.splitlines()) == len(EXPECTED)  # the newline inside the answer is escaped: one line per record


def test_offered_for_ranking_studies_only(ranked):
    assert ("preferences", "preference pairs (JSONL)") in study_formats(ranked.study)
    ranked.study.ask_ranking = False
    ranked.study.ask_spans = True
    ranked.study.save()
    assert "preferences" not in [fmt for fmt, _ in study_formats(ranked.study)]
    with pytest.raises(DomainError, match="did not ask for rankings"):
        rankings_export(study=ranked.study, fmt="preferences")


def test_identities_do_not_apply(ranked):
    with pytest.raises(DomainError, match="never names them"):
        rankings_export(study=ranked.study, fmt="preferences", identities=True)
    assert not AuditEntry.objects.filter(action="rankings_exported").exists()
    data = rankings_export(study=ranked.study, fmt="preferences").decode("utf-8")
    for physician in ranked.physicians:
        assert physician.email not in data and physician.pseudonym not in data


def test_download_is_for_organizers_and_audited(ranked, client, make_user):
    url = reverse("study_export", args=[ranked.study.pk, "preferences"])
    client.force_login(ranked.physicians[0])
    assert client.get(url).status_code == 403
    organizer = make_user("organizer")
    client.force_login(organizer)
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson"
    assert response["Content-Disposition"] == 'attachment; filename="preference-study-preferences.jsonl"'
    assert _lines(response.content) == EXPECTED
    entry = AuditEntry.objects.get(action="rankings_exported")
    assert (entry.actor, entry.after) == (organizer, {"format": "preferences", "identities": False})
    refused = client.get(url + "?identities=1")
    assert refused.status_code == 302 and AuditEntry.objects.filter(action="rankings_exported").count() == 1
    api = reverse("api_study_export", args=[ranked.study.pk])
    assert _lines(client.get(api, {"fmt": "preferences"}).content) == EXPECTED
    assert client.get(api, {"fmt": "preferences", "identities": "true"}).status_code == 400


def test_the_study_page_links_it_without_an_identified_variant(ranked, client, make_user):
    client.force_login(make_user("organizer"))
    page = client.get(reverse("study_detail", args=[ranked.study.pk])).content.decode()
    url = reverse("study_export", args=[ranked.study.pk, "preferences"])
    assert f'href="{url}"' in page
    assert f'href="{url}?identities=1"' not in page
    csv_url = reverse("study_export", args=[ranked.study.pk, "csv"])
    assert f'href="{csv_url}?identities=1"' in page


def test_command_writes_the_same_records(ranked, tmp_path):
    out = tmp_path / "preferences.jsonl"
    call_command("export_rankings", ranked.study.name, "--format", "preferences", "--out", str(out))
    assert _lines(out.read_bytes()) == EXPECTED
    entry = AuditEntry.objects.get(action="rankings_exported")
    assert (entry.actor, entry.after) == (None, {"format": "preferences", "identities": False})


def test_datasets_reads_the_three_columns(ranked, tmp_path):
    datasets = pytest.importorskip("datasets")
    path = tmp_path / "preferences.jsonl"
    path.write_bytes(rankings_export(study=ranked.study, fmt="preferences"))
    dataset = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
    assert dataset.num_rows == len(EXPECTED)
    assert dataset.column_names[:3] == ["prompt", "chosen", "rejected"]
    assert dataset["chosen"] == [r["chosen"] for r in EXPECTED]
    assert dataset["rejected"] == [r["rejected"] for r in EXPECTED]
    assert dataset["tie"] == [r["tie"] for r in EXPECTED]
    assert dataset.filter(lambda r: not r["tie"]).num_rows == len(EXPECTED) - 1
