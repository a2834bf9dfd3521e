"""External judges' per-answer scores: stored all or nothing, each refusal naming the file, the line and the field."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from analytics.judges.scores import judge_scores_import, study_judge_scores
from analytics.models import JudgeScore
from portal.models import AuditEntry
from ranking.models import StudyAnswer, StudyQuestion
from records.jsonl import InputFileError
from tests.analytics.judge_rows import ranked_study, score_lines

pytestmark = pytest.mark.django_db


def jsonl(records) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


def good(**overrides) -> dict:
    return {"item_uid": "q1", "system": "SYS-A", "score": 0.9, "judge": "gpt-judge", **overrides}


@pytest.fixture
def made(make_user):
    return ranked_study(make_user)


def stored(study) -> dict[tuple[str, str, str], tuple[float, str]]:
    """What the study holds, read through each score's answer: (judge, item, system) -> (score, label)."""
    rows = JudgeScore.objects.filter(answer__question__study=study).values_list(
        "judge", "answer__question__item__uid", "answer__system__name", "score", "label"
    )
    found = {(judge, item, system): (score, label) for judge, item, system, score, label in rows}
    assert len(found) == len(rows)  # one score per judge and answer
    return found


def as_given(records) -> dict[tuple[str, str, str], tuple[float, str]]:
    """The scores lines with a number give, as they should be stored (no label)."""
    return {(r["judge"], r["item_uid"], r["system"]): (float(r["score"]), "") for r in records}


def test_import_stores_scores_and_audits(made, organizer):
    data = jsonl(score_lines("gpt-judge", {"SYS-A": 3, "SYS-B": 2, "SYS-C": 1}) + [good(judge="other", score=-1.5)])
    result = judge_scores_import(study=made.study, source=data, name="scores.jsonl", user=organizer)
    assert result.counts == {"gpt-judge": 18, "other": 1} and result.replaced == 0
    lines = score_lines("gpt-judge", {"SYS-A": 3, "SYS-B": 2, "SYS-C": 1}) + [good(judge="other", score=-1.5)]
    assert stored(made.study) == as_given(lines)
    for row in JudgeScore.objects.select_related("answer__question__item", "answer__system"):
        # each score sits on the study's own answer of that item and system, and says who brought it in
        assert row.answer == made.answers[row.answer.question.item.uid, row.answer.system.name]
        assert row.imported_by == organizer
    other = JudgeScore.objects.get(judge="other")
    assert (other.score, other.answer, other.imported_by) == (-1.5, made.answers["q1", "SYS-A"], organizer)
    entry = AuditEntry.objects.get(action="judge_scores_import")
    assert entry.actor == organizer and entry.after == {
        "file": "scores.jsonl",
        "scores": {"gpt-judge": 18, "other": 1},
        "replaced": 0,
    }
    frames = study_judge_scores(made.study)
    assert sorted(frames) == ["gpt-judge", "other"]
    assert list(frames["other"].itertuples(index=False, name=None)) == [("q1", "SYS-A", -1.5)]
    assert sorted(frames["gpt-judge"].itertuples(index=False, name=None)) == sorted(
        (f"q{i}", system, score) for i in range(1, 7) for system, score in (("SYS-A", 3), ("SYS-B", 2), ("SYS-C", 1))
    )
    assert list(study_judge_scores(made.study, judges=["other"])) == ["other"]


def test_a_csv_file_is_read_the_same_way(made):
    data = b"item_uid,system,score,judge\nq2,SYS-A,1.0,csv-judge\nq1,SYS-B,0.5,csv-judge\nq1,SYS-C,-2,csv-judge\n"
    result = judge_scores_import(study=made.study, source=data, name="scores.csv", user=None)
    assert result.counts == {"csv-judge": 3}
    expected = {
        ("csv-judge", "q2", "SYS-A"): (1.0, ""),
        ("csv-judge", "q1", "SYS-B"): (0.5, ""),
        ("csv-judge", "q1", "SYS-C"): (-2.0, ""),
    }
    assert stored(made.study) == expected
    # the same lines as JSON Lines store the same scores
    same = [
        good(item_uid=item, system=system, score=score, judge="json-judge")
        for (_, item, system), (score, _) in expected.items()
    ]
    judge_scores_import(study=made.study, source=jsonl(same), name="scores.jsonl", user=None)
    by_judge = stored(made.study)
    assert {key[1:]: value for key, value in by_judge.items() if key[0] == "json-judge"} == {
        key[1:]: value for key, value in expected.items()
    }


def _other_study_scored_by(judge: str, made) -> StudyAnswer:
    """A second study asking q1 with SYS-A's answer, which ``judge`` has scored 0.7."""
    from ranking.models import Study

    q1 = made.answers["q1", "SYS-A"]
    other = Study.objects.create(name="other study")
    question = StudyQuestion.objects.create(study=other, item=q1.question.item, position=1)
    answer = StudyAnswer.objects.create(question=question, system=q1.system, text=q1.text)
    judge_scores_import(study=other, source=jsonl([good(judge=judge, score=0.7)]), name="o.jsonl", user=None)
    return answer


def test_importing_a_judge_again_replaces_its_scores_only(made):
    elsewhere = _other_study_scored_by("gpt-judge", made)
    judge_scores_import(study=made.study, source=jsonl([good(), good(system="SYS-B")]), name="a.jsonl", user=None)
    judge_scores_import(study=made.study, source=jsonl([good(judge="keep")]), name="k.jsonl", user=None)
    result = judge_scores_import(study=made.study, source=jsonl([good(score=0.1)]), name="b.jsonl", user=None)
    # replaced: the judge's two earlier scores in this study, not its score in the other study nor keep's
    assert result.replaced == 2 and "2 earlier scores of these judges replaced" in result.summary
    assert result.counts == {"gpt-judge": 1}
    # the file's scores take the judge's place: SYS-B, missing from the new file, is gone, not kept
    assert stored(made.study) == {("gpt-judge", "q1", "SYS-A"): (0.1, ""), ("keep", "q1", "SYS-A"): (0.9, "")}
    assert list(JudgeScore.objects.filter(answer=elsewhere).values_list("judge", "score")) == [("gpt-judge", 0.7)]
    entry = AuditEntry.objects.filter(action="judge_scores_import", object_id=str(made.study.pk)).latest("id")
    assert entry.after == {"file": "b.jsonl", "scores": {"gpt-judge": 1}, "replaced": 2}


def test_replaced_counts_the_earlier_scores_of_every_judge_in_the_file(made):
    judge_scores_import(
        study=made.study, source=jsonl(score_lines("gpt-judge", {"SYS-A": 1, "SYS-B": 0})), name="a.jsonl", user=None
    )
    assert stored(made.study) == as_given(score_lines("gpt-judge", {"SYS-A": 1, "SYS-B": 0}))
    again = score_lines("gpt-judge", {"SYS-C": 5}) + [good(judge="new-judge", score=2.5)]
    result = judge_scores_import(study=made.study, source=jsonl(again), name="b.jsonl", user=None)
    assert (result.counts, result.replaced) == ({"gpt-judge": 6, "new-judge": 1}, 12)  # 6 questions x 2 systems
    assert result.summary.endswith("; 12 earlier scores of these judges replaced")
    assert stored(made.study) == as_given(again)
    first_time = judge_scores_import(study=made.study, source=jsonl([good(judge="third")]), name="c.jsonl", user=None)
    assert first_time.replaced == 0 and "replaced" not in first_time.summary


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [
        (good(item_uid="q9"), "item_uid", "not a question of this study"),
        (good(system="SYS-Z"), "system", "has no answer to item 'q1'"),
        (good(score="high"), "score", "must be a number"),
        (good(judge="semantic"), "judge", "reserved"),
        (good(judge="BLEU"), "judge", "reserved"),
        (good(judge="consensus"), "judge", "reserved"),
        (good(judge="annotator-1a2b3c4d"), "judge", "pseudonym"),
        (good(judge="a/b"), "judge", "letters, digits"),
        (good(judge=""), "judge", "empty"),
        (good(), "judge", "a second score from judge 'gpt-judge'"),
    ],
)
def test_each_bad_line_refuses_the_whole_file(made, bad, field, words):
    with pytest.raises(InputFileError) as caught:
        judge_scores_import(study=made.study, source=jsonl([good(), bad]), name="s.jsonl", user=None)
    message = str(caught.value)
    assert message.startswith("s.jsonl") and "line 2" in message and f"field '{field}'" in message
    assert words in message
    assert not JudgeScore.objects.exists() and not AuditEntry.objects.filter(action="judge_scores_import").exists()


@pytest.mark.parametrize("text", ["NaN", "Infinity"])
def test_non_finite_scores_are_refused(made, text):
    data = b'{"item_uid": "q1", "system": "SYS-A", "score": 1, "judge": "j"}\n' + (
        b'{"item_uid": "q1", "system": "SYS-B", "score": %s, "judge": "j"}' % text.encode()
    )
    with pytest.raises(InputFileError, match=r"s\.jsonl, line 2, field 'score'"):
        judge_scores_import(study=made.study, source=data, name="s.jsonl", user=None)
    csv = b"item_uid,system,score,judge\nq1,SYS-A,inf,j\n"
    with pytest.raises(InputFileError, match=r"s\.csv, line 2, field 'score': 'inf' is not a finite number"):
        judge_scores_import(study=made.study, source=csv, name="s.csv", user=None)
    assert not JudgeScore.objects.exists()


SECOND_LINE = b'{"item_uid": "q1", "system": "SYS-B", "score": 1, "judge": "j", "EXTRA": 1}'


@pytest.mark.parametrize(
    ("name", "second", "field", "words"),
    [
        # A number too large for a float was read as infinity and stored (the December security review, finding 4).
        ("s.jsonl", SECOND_LINE.replace(b'"score": 1', b'"score": 1e400'), "score", "the number 1e400 is out of range"),
        ("s.jsonl", SECOND_LINE.replace(b'"score": 1', b'"score": -1e400'), "score", "-1e400 is out of range"),
        ("s.jsonl", SECOND_LINE.replace(b'"EXTRA": 1', b'"confidence": 1e400'), "confidence", "out of range"),
        ("s.jsonl", SECOND_LINE.replace(b'"EXTRA": 1', b'"score": 2'), "score", "is given twice in one object"),
        ("s.jsonl", SECOND_LINE.replace(b'"EXTRA": 1', b'"judge": "k"'), "judge", "is given twice in one object"),
        ("s.jsonl", SECOND_LINE.replace(b'"score": 1', b'"score": true'), "score", "must be a number, not true/false"),
        ("s.jsonl", SECOND_LINE.replace(b'"score": 1', b'"score": "1"'), "score", "must be a number, not a string"),
        ("s.csv", b"q1,SYS-B,1e400,j", "score", "'1e400' is not a finite number"),
        ("s.csv", b"q1,SYS-B,-1e400,j", "score", "'-1e400' is not a finite number"),
        ("s.csv", b"q1,SYS-B,-inf,j", "score", "'-inf' is not a finite number"),
        ("s.csv", b"q1,SYS-B,nan,j", "score", "'nan' is not a finite number"),
    ],
)
def test_non_finite_repeated_and_mistyped_values_refuse_the_file_and_store_nothing(made, name, second, field, words):
    judge_scores_import(study=made.study, source=jsonl([good(judge="kept")]), name="first.jsonl", user=None)
    first = b"item_uid,system,score,judge\nq1,SYS-A,1,j\n" if name.endswith(".csv") else jsonl([good(judge="j")])
    with pytest.raises(InputFileError) as caught:
        judge_scores_import(study=made.study, source=first + b"\n" + second, name=name, user=None)
    error = caught.value
    line = 3 if name.endswith(".csv") else 2
    assert (error.file, error.line, error.field) == (name, line, field)
    assert words in error.detail
    assert list(JudgeScore.objects.values_list("judge", "score")) == [("kept", 0.9)]


def test_a_physicians_own_pseudonym_is_refused(made):
    pseudonym = made.physicians[0].pseudonym
    with pytest.raises(InputFileError, match="pseudonym"):
        judge_scores_import(study=made.study, source=jsonl([good(judge=pseudonym)]), name="s.jsonl", user=None)


def test_empty_and_headerless_files_are_refused(made):
    with pytest.raises(InputFileError, match="no records"):
        judge_scores_import(study=made.study, source=b"\n", name="s.jsonl", user=None)
    with pytest.raises(InputFileError, match="has no scores"):
        judge_scores_import(study=made.study, source=b"item_uid,system,score,judge\n", name="s.csv", user=None)
    with pytest.raises(InputFileError, match=r"line 1: missing column"):
        judge_scores_import(study=made.study, source=b"item,system,score\nq1,SYS-A,1\n", name="s.csv", user=None)


def test_command_imports_and_refuses_naming_the_line(made, tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_bytes(jsonl([good(), good(system="SYS-B")]))
    call_command("import_judge_scores", "--study", str(made.study.pk), str(path))
    assert stored(made.study) == as_given([good(), good(system="SYS-B")])
    bad = tmp_path / "bad.csv"
    bad.write_text("item_uid,system,score,judge\nq1,SYS-A,1,j\nq7,SYS-A,1,j\n")
    with pytest.raises(CommandError, match=r"bad\.csv, line 3, field 'item_uid'"):
        call_command("import_judge_scores", "--study", str(made.study.pk), str(bad))
    with pytest.raises(CommandError, match="no such study"):
        call_command("import_judge_scores", "--study", "999999", str(path))
    assert stored(made.study) == as_given([good(), good(system="SYS-B")])  # the refused file changed nothing


def test_refusals_keep_the_line_and_field_apart_for_the_page(made):
    with pytest.raises(InputFileError) as caught:
        judge_scores_import(
            study=made.study, source=b"item_uid,system,score,judge\nq1,SYS-A,x,j\n", name="s.csv", user=None
        )
    error = caught.value
    assert (error.file, error.line, error.field) == (
        "s.csv",
        2,
        "score",
    ) and error.detail == "'x' is not a finite number"
    with pytest.raises(InputFileError) as caught:
        judge_scores_import(study=made.study, source=b'{"item_uid": "q1"}', name="s.jsonl", user=None)
    assert (caught.value.line, caught.value.field) == (1, "system") and "s.jsonl, line 1" in str(caught.value)


def test_a_spreadsheets_csv_with_a_byte_order_mark_is_read(made):
    data = "\ufeffitem_uid,system,score,judge\nq1,SYS-A,1.0,csv-judge\n".encode()
    assert judge_scores_import(study=made.study, source=data, name="s.csv", user=None).counts == {"csv-judge": 1}
    assert stored(made.study) == {("csv-judge", "q1", "SYS-A"): (1.0, "")}


def test_only_organizers_may_upload(made, make_user, client):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    url = reverse("judge_scores_import", args=[made.study.pk])
    for role in ("reviewer", "ranker", "adjudicator"):
        client.force_login(make_user(role))
        upload = SimpleUploadedFile("s.csv", b"item_uid,system,score,judge\nq1,SYS-A,1,j\n")
        assert client.post(url, {"file": upload}).status_code == 403
    assert not JudgeScore.objects.exists()


def test_an_oversized_judge_file_is_refused_before_it_is_read(client, organizer, settings):
    """Both judge upload pages share the kernel's size rule (portal.uploads.upload_too_large)."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from ranking.models import Study

    study = Study.objects.create(name="size check", seed=1, overlap=2)
    settings.PORTAL_UPLOAD_MAX_BYTES = 10
    client.force_login(organizer)
    for url in (f"/analytics/studies/{study.pk}/judges/scores/", f"/analytics/studies/{study.pk}/nuggets/judges/"):
        big = SimpleUploadedFile("big.jsonl", b'{"item_uid": "x"}\n' * 5)
        page = client.post(url, {"file": big}, follow=True).content.decode()
        assert "Nothing was imported: big.jsonl is 90 bytes; the limit is 10." in page, url


def test_labels_score_by_their_place_on_the_studys_tag_scale(made):
    """Tag scale good, okay, bad (best first): good 2, okay 1, bad 0; capitals do not matter; the label is kept."""
    lines = [
        {"item_uid": "q1", "system": "SYS-A", "label": "Good", "judge": "label-llm"},
        {"item_uid": "q1", "system": "SYS-B", "label": "okay", "judge": "label-llm"},
        {"item_uid": "q1", "system": "SYS-C", "label": "bad", "judge": "label-llm"},
        {"item_uid": "q2", "system": "SYS-A", "label": "bad", "score": 7.5, "judge": "label-llm"},
    ]
    assert list(made.study.tag_scale) == ["good", "okay", "bad"]
    judge_scores_import(study=made.study, source=jsonl(lines), name="labels.jsonl", user=None)
    stored = sorted(
        JudgeScore.objects.values_list("answer__question__item__uid", "answer__system__name", "score", "label")
    )
    assert stored == [
        ("q1", "SYS-A", 2.0, "Good"),
        ("q1", "SYS-B", 1.0, "okay"),
        ("q1", "SYS-C", 0.0, "bad"),
        ("q2", "SYS-A", 7.5, "bad"),  # a line with both counts its score
    ]


def test_a_given_scale_replaces_the_tag_scale_and_off_scale_labels_are_refused(made):
    data = b"item_uid,system,judge,label\nq1,SYS-A,j,A\nq1,SYS-B,j,D\n"
    judge_scores_import(study=made.study, source=data, name="l.csv", user=None, scale=["A", "B", "C", "D"])
    expected = {("j", "q1", "SYS-A"): (3.0, "A"), ("j", "q1", "SYS-B"): (0.0, "D")}
    assert stored(made.study) == expected
    with pytest.raises(InputFileError) as caught:
        judge_scores_import(study=made.study, source=data, name="l.csv", user=None)
    assert (caught.value.line, caught.value.field) == (2, "label")
    assert caught.value.detail == "'A' is not on the scale good, okay, bad (best first)"
    assert stored(made.study) == expected  # nothing changed


def test_a_line_with_neither_score_nor_label_is_refused(made):
    with pytest.raises(InputFileError) as caught:
        judge_scores_import(
            study=made.study, source=jsonl([good(), {**good(system="SYS-B"), "score": None}]), name="s.jsonl", user=None
        )
    assert (caught.value.line, caught.value.field, caught.value.detail) == (2, "score", "give a score or a label")


def test_the_page_takes_a_label_scale(made, organizer, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    url = f"/analytics/studies/{made.study.pk}/judges/scores/"
    client.force_login(organizer)
    assert "Label scale, best first" in client.get(url).content.decode()
    upload = SimpleUploadedFile("l.csv", b"item_uid,system,judge,label\nq1,SYS-A,j,pass\nq1,SYS-B,j,fail\n")
    page = client.post(url, {"file": upload, "scale": "pass, fail"}, follow=True).content.decode()
    assert "Imported 2 scores from l.csv" in page
    assert dict(JudgeScore.objects.values_list("label", "score")) == {"pass": 1.0, "fail": 0.0}
    upload = SimpleUploadedFile("l.csv", b"item_uid,system,judge,label\nq1,SYS-A,j,pass\n")
    page = client.post(url, {"file": upload, "scale": "pass, Pass"}, follow=True).content.decode()
    assert "Nothing was imported: the label scale pass, Pass names a label twice." in page


def test_command_takes_a_scale(made, tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(jsonl([{"item_uid": "q1", "system": "SYS-A", "label": "high", "judge": "j"}]))
    call_command("import_judge_scores", "--study", str(made.study.pk), "--scale", "high,low", str(path))
    assert stored(made.study) == {("j", "q1", "SYS-A"): (1.0, "high")}
    with pytest.raises(CommandError, match="--scale: the label scale a, a names a label twice"):
        call_command("import_judge_scores", "--study", str(made.study.pk), "--scale", "a,a", str(path))


def test_a_score_without_label_keeps_an_empty_label(made):
    judge_scores_import(
        study=made.study, source=jsonl([good(), good(system="SYS-B", label="fine")]), name="s.jsonl", user=None
    )
    assert stored(made.study) == {
        ("gpt-judge", "q1", "SYS-A"): (0.9, ""),
        ("gpt-judge", "q1", "SYS-B"): (0.9, "fine"),  # a label beside a score is kept; the score counts
    }


def test_a_csv_cell_the_database_cannot_store_is_refused_by_line_and_field(made):
    """A label is stored beside its score: a NUL in it was a 500 (PostgreSQL text cannot hold NUL) before."""
    data = b"item_uid,system,judge,score,label\nq1,SYS-A,j,1,fine\nq1,SYS-B,j,1,a\x00b\n"
    with pytest.raises(InputFileError) as caught:
        judge_scores_import(study=made.study, source=data, name="s.csv", user=None)
    assert (caught.value.line, caught.value.field) == (3, "label") and "NUL character" in caught.value.detail
    assert not JudgeScore.objects.exists()


def test_a_label_scale_with_a_nul_is_refused_naming_the_field(made, organizer, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    url = f"/analytics/studies/{made.study.pk}/judges/scores/"
    client.force_login(organizer)
    upload = SimpleUploadedFile("l.csv", b"item_uid,system,judge,label\nq1,SYS-A,j,pass\nq1,SYS-B,j,fail\n")
    response = client.post(url, {"file": upload, "scale": "pass\x00, fail"}, follow=True)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Nothing was imported: the label scale: a label contains a NUL character" in page
    assert "\x00" not in page
    assert not JudgeScore.objects.exists()


def test_an_import_summary_counts_one_score_in_the_singular():
    from analytics.labellers import JudgeImport

    summary = JudgeImport(file="f.jsonl", counts={"good-llm": 1, "lengthy": 3}, replaced=1, unit="scores").summary
    assert summary == "good-llm (1 score), lengthy (3 scores); 1 earlier score of these judges replaced"
    assert JudgeImport(file="f", counts={"j": 1_200}, replaced=0).summary == "j (1,200 labels)"
