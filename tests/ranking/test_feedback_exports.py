"""Reference answers judged poorly are flagged and sent to vetting; exports carry one row per ranker × answer."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from django.core.management import call_command

from analytics.services.reports import report_study
from portal.models import AuditEntry
from ranking.models import ReferenceFlag, StudyAnswer
from ranking.rules.rankings import bottom_half, reference_judged_poorly
from ranking.services.exports import COLUMNS, rankings_export, rankings_frame, shroom_records
from ranking.services.feedback import reference_flag_send, reference_flags_detect
from ranking.services.queue import task_next
from ranking.services.submissions import task_slots, task_submit

pytestmark = pytest.mark.django_db


def _rank(task, ranker, *, reference_rank: int, reference_tag: str = "good", hallucination=None):
    """Submit with the reference at ``reference_rank``; other answers fill the remaining ranks."""
    slots = task_slots(task)
    is_ref = {s: StudyAnswer.objects.get(pk=pk).system.is_reference for s, pk in zip(slots, task.order, strict=True)}
    others = iter(r for r in range(1, len(slots) + 1) if r != reference_rank)
    answers = {}
    for slot in slots:
        rank = reference_rank if is_ref[slot] else next(others)
        answers[slot] = {"rank": rank, "tag": reference_tag if is_ref[slot] else "okay"}
        if hallucination is not None:
            answers[slot]["hallucination"] = hallucination(slot)
            answers[slot]["hallucination_kind"] = "intrinsic" if hallucination(slot) else ""
    task_submit(task_id=task.pk, ranker=ranker, answers=answers, time_spent_ms=1000)
    return task


def test_bottom_half():
    assert [bottom_half(r, 4) for r in (1, 2, 3, 4)] == [False, False, True, True]
    assert [bottom_half(r, 3) for r in (1, 2, 3)] == [False, False, True]


@pytest.mark.parametrize(
    ("judgements", "flagged"),
    [
        ([(2, "good")] * 3, False),  # the middle of three answers is not the bottom half
        ([(3, "good"), (1, "good"), (1, "good")], False),  # one ranker of three is not a majority
        ([(3, "good"), (3, "good"), (1, "good")], True),  # two of three are
        ([(3, "good"), (1, "good")], False),  # one of two is not a majority either
        ([(1, "bad"), (1, "good"), (1, "good")], True),  # any worst tag flags on its own
        ([], False),
    ],
)
def test_reference_judged_poorly(judgements, flagged):
    assert bool(reference_judged_poorly(judgements, n_answers=3, worst_tag="bad")) is flagged


def test_study_report_counts_the_questions_the_study_page_flags(make_study, make_user):
    """Where the two copies of the rule disagreed: a reference ranked 2nd of 3 by everyone, and one ranked last by
    one ranker of three, are flagged by neither the page nor the report; two rankers of three flag in both."""
    study = make_study(sample_size=3, overlap=3)
    rankers = [make_user("ranker") for _ in range(3)]
    placements = {}  # question -> the reference rank each ranker gives, in ranker order
    plans = [[2, 2, 2], [3, 1, 1], [3, 3, 1]]
    for ranker_index, ranker in enumerate(rankers):
        for _ in range(3):
            task = task_next(study=study, ranker=ranker)
            if task.question_id not in placements:
                placements[task.question_id] = plans[len(placements)]
            plan = placements[task.question_id]
            _rank(task, ranker, reference_rank=plan[ranker_index])
    flagged_question = next(q for q, plan in placements.items() if plan == [3, 3, 1])

    flags = reference_flags_detect(study=study)
    reference = report_study(study_id=study.pk, n_resamples=10)["reference"]

    assert [f.question_id for f in flags] == [flagged_question]
    assert reference["questions_flagged"] == len(flags) == 1
    assert reference["share_in_bottom_half"] == pytest.approx(3 / 9)  # 0 + 1 + 2 of the nine judgements


def test_majority_bottom_half_or_any_bad_tag_flags_the_question(make_study, make_user, organizer):
    study = make_study(sample_size=2, overlap=3)
    rankers = [make_user("ranker") for _ in range(3)]
    first_question = None
    for i, ranker in enumerate(rankers):
        task = task_next(study=study, ranker=ranker)
        first_question = first_question or task.question_id
        assert task.question_id == first_question
        _rank(task, ranker, reference_rank=3 if i < 2 else 1)  # 2 of 3 put it last (of 3 answers)
    for i, ranker in enumerate(rankers):
        task = task_next(study=study, ranker=ranker)
        _rank(task, ranker, reference_rank=1, reference_tag="bad" if i == 0 else "good")
    flags = reference_flags_detect(study=study)
    assert len(flags) == 2
    by_question = {f.question_id: f for f in flags}
    assert by_question[first_question].reasons == ["ranked in the bottom half by 2 of 3 rankers"]
    other = next(f for q, f in by_question.items() if q != first_question)
    assert other.reasons == ["tagged 'bad' by 1 of 3 rankers"]

    sent = reference_flag_send(flag=other, user=organizer)
    assert sent.sent_at is not None and sent.sent_by == organizer
    assert sent.dispute.item_id == other.question.item_id and "reference answer" in sent.dispute.text
    assert (
        AuditEntry.objects.filter(action="reference_sent_to_vetting", object_id=str(other.question.item_id)).count()
        == 1
    )
    again = reference_flag_send(flag=other, user=organizer)
    assert again.sent_at == sent.sent_at
    assert AuditEntry.objects.filter(action="reference_sent_to_vetting").count() == 1


def test_good_reference_is_not_flagged(make_study, make_user):
    study = make_study(sample_size=1, overlap=2)
    for _ in range(2):
        ranker = make_user("ranker")
        _rank(task_next(study=study, ranker=ranker), ranker, reference_rank=1)
    assert reference_flags_detect(study=study) == [] and not ReferenceFlag.objects.exists()


def test_send_flag_page_and_api(make_study, make_user, organizer_client):
    study = make_study(sample_size=1, overlap=1)
    ranker = make_user("ranker")
    _rank(task_next(study=study, ranker=ranker), ranker, reference_rank=3, reference_tag="bad")
    page = organizer_client.get(f"/organize/studies/{study.pk}/").content.decode()
    assert "Send to vetting as a dispute" in page
    flag = ReferenceFlag.objects.get()
    response = organizer_client.post(f"/organize/studies/{study.pk}/flags/{flag.pk}/send/")
    assert response.status_code == 302
    assert organizer_client.get(f"/api/studies/{study.pk}/flags/").json()[0]["sent_at"] is not None


@pytest.fixture
def ranked_study(make_study, make_user):
    study = make_study(sample_size=2, overlap=2, ask_hallucination=True, ask_harm=True)
    rankers = [make_user("ranker") for _ in range(2)]
    for ranker in rankers:
        for _ in range(2):
            task = task_next(study=study, ranker=ranker)
            _rank(task, ranker, reference_rank=1, hallucination=lambda slot: slot == "A")
    return study, rankers


def test_csv_and_parquet_have_one_row_per_ranker_and_answer(ranked_study):
    study, rankers = ranked_study
    frame = rankings_frame(study=study)
    assert list(frame.columns) == COLUMNS and len(frame) == 2 * 2 * 3
    assert set(frame["ranker"]) == {r.pseudonym for r in rankers}
    assert frame["system"].isin(["SYSNAME-ALPHA-7B", "SYSNAME-BETA-13B", "reference"]).all()
    assert (frame.loc[frame["is_reference"], "rank"] == 1).all()
    assert (frame["time_spent_ms"] == 1000).all()
    csv = pd.read_csv(io.BytesIO(rankings_export(study=study, fmt="csv")))
    assert len(csv) == 12 and "@" not in "".join(csv["ranker"])
    parquet = pd.read_parquet(io.BytesIO(rankings_export(study=study, fmt="parquet", identities=True)))
    assert set(parquet["ranker"]) == {r.email for r in rankers}
    assert parquet["hallucination"].sum() == 4  # slot A of each of the 4 tasks


def test_shroom_json_has_labels_majority_and_share(ranked_study):
    study, _ = ranked_study
    records = shroom_records(study=study)
    assert len(records) == 2 * 3
    for record in records:
        assert record["n_annotators"] == 2 and len(record["annotations"]) == 2
        share = sum(a["label"] == "Hallucination" for a in record["annotations"]) / 2
        assert record["p(Hallucination)"] == share
        assert record["label"] == ("Hallucination" if share > 0.5 else "Not Hallucination")


def test_export_command_and_download_views(ranked_study, tmp_path, organizer_client, client, make_user):
    study, _ = ranked_study
    out = tmp_path / "s.json"
    call_command("export_rankings", str(study.pk), "--format", "shroom", "--out", str(out))
    assert len(json.loads(out.read_text())) == 6
    call_command("export_rankings", study.name, "--format", "csv", "--out", str(tmp_path / "r.csv"))
    assert len(pd.read_csv(tmp_path / "r.csv")) == 12
    for fmt in ("csv", "parquet", "shroom"):
        assert organizer_client.get(f"/organize/studies/{study.pk}/export/{fmt}/").status_code == 200
    assert organizer_client.get(f"/api/studies/{study.pk}/export/?fmt=parquet").status_code == 200
    client.force_login(make_user("ranker"))
    assert client.get(f"/organize/studies/{study.pk}/export/csv/").status_code == 403


def test_csv_guards_formula_like_text_and_keeps_numbers(make_study, make_user):
    """The study name is organizer-written text: a spreadsheet must not run it (portal/csv_cells.py)."""
    study = make_study(name='=HYPERLINK("http://evil.example","x")', sample_size=1, overlap=1)
    ranker = make_user("ranker")
    _rank(task_next(study=study, ranker=ranker), ranker, reference_rank=1)
    import csv

    rows = list(csv.DictReader(io.StringIO(rankings_export(study=study, fmt="csv").decode())))
    assert {row["study"] for row in rows} == {"'" + study.name}
    assert sorted(row["rank"] for row in rows) == ["1", "2", "3"]
