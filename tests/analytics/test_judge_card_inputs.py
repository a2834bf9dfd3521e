"""What a judge file may say for the judge card (issue #43): a probability, a model family and "cannot judge" beside
each score, and a second file of pairwise verdicts in the order shown. Each read through the real import, all or
nothing, every refusal naming the file, the line and the field."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from analytics.judges.scores import judge_answer_rows, judge_scores_import, study_judge_scores
from analytics.judges.verdicts import judge_verdicts_import, study_judge_verdicts
from analytics.models import JudgeAbstention, JudgeScore, JudgeVerdict
from evaluation.agreement import StatsInputError
from evaluation.judges import parse_label_scale, read_judge_rows, read_judges
from portal.models import AuditEntry
from records.jsonl import InputFileError
from tests.analytics.judge_rows import ranked_study

pytestmark = pytest.mark.django_db


def jsonl(records) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


def line(**overrides) -> dict:
    return {"item_uid": "q1", "system": "SYS-A", "score": 0.9, "judge": "gpt-judge", **overrides}


def verdict(**overrides) -> dict:
    return {
        "item_uid": "q1",
        "judge": "pair-judge",
        "first": "SYS-A",
        "second": "SYS-B",
        "verdict": "first",
        **overrides,
    }


@pytest.fixture
def made(make_user):
    return ranked_study(make_user)


def scores_stored(study) -> dict[tuple[str, str, str], tuple[float, float | None, str]]:
    """(judge, item, system) -> (score, probability, judge_family) as the study holds them."""
    rows = JudgeScore.objects.filter(answer__question__study=study).values_list(
        "judge", "answer__question__item__uid", "answer__system__name", "score", "probability", "judge_family"
    )
    return {(j, i, s): (score, p, f) for j, i, s, score, p, f in rows}


def abstentions_stored(study) -> set[tuple[str, str, str]]:
    rows = JudgeAbstention.objects.filter(answer__question__study=study).values_list(
        "judge", "answer__question__item__uid", "answer__system__name"
    )
    return set(rows)


def verdicts_stored(study) -> set[tuple[str, str, str, str, str]]:
    rows = JudgeVerdict.objects.filter(question__study=study).values_list(
        "judge", "question__item__uid", "first__system__name", "second__system__name", "verdict"
    )
    return set(rows)


# --- the scores file's new fields ---------------------------------------------------------------------------------


def test_probability_and_family_are_stored_beside_each_score(made, organizer):
    data = (
        b"item_uid,system,judge,score,probability,judge_family\n"
        b"q1,SYS-A,gpt-judge,3,0.8,gpt\n"
        b"q1,SYS-B,gpt-judge,1,,gpt\n"
        b"q2,SYS-A,llama-judge,2,0,\n"
        b"q2,SYS-B,llama-judge,5,1,\n"
    )
    result = judge_scores_import(study=made.study, source=data, name="card.csv", user=organizer)
    assert result.counts == {"gpt-judge": 2, "llama-judge": 2}
    assert scores_stored(made.study) == {
        ("gpt-judge", "q1", "SYS-A"): (3.0, 0.8, "gpt"),
        ("gpt-judge", "q1", "SYS-B"): (1.0, None, "gpt"),  # an empty probability is "not given"
        ("llama-judge", "q2", "SYS-A"): (2.0, 0.0, ""),  # 0 and 1 are probabilities too
        ("llama-judge", "q2", "SYS-B"): (5.0, 1.0, ""),
    }
    # the same through JSON Lines, a null probability meaning "not given"
    lines = [
        line(judge="json-judge", probability=0.25, judge_family="claude"),
        line(judge="json-judge", system="SYS-B", probability=None, judge_family="claude"),
    ]
    judge_scores_import(study=made.study, source=jsonl(lines), name="card.jsonl", user=None)
    stored = scores_stored(made.study)
    assert stored["json-judge", "q1", "SYS-A"] == (0.9, 0.25, "claude")
    assert stored["json-judge", "q1", "SYS-B"] == (0.9, None, "claude")


def test_cannot_judge_is_an_abstention_stored_apart_from_the_scores(made, organizer, tmp_path):
    lines = [
        line(),
        line(system="SYS-B", score=None, label="cannot judge"),
        {"item_uid": "q2", "system": "SYS-C", "label": "  Cannot JUDGE ", "judge": "gpt-judge"},  # case, spaces
        line(judge="other", system="SYS-C", score=0.5, label="bad"),
    ]
    result = judge_scores_import(study=made.study, source=jsonl(lines), name="a.jsonl", user=organizer)
    assert result.counts == {"gpt-judge": 1, "other": 1}
    assert result.abstentions == {"gpt-judge": 2}
    assert set(scores_stored(made.study)) == {("gpt-judge", "q1", "SYS-A"), ("other", "q1", "SYS-C")}
    assert abstentions_stored(made.study) == {("gpt-judge", "q1", "SYS-B"), ("gpt-judge", "q2", "SYS-C")}
    assert set(JudgeAbstention.objects.values_list("imported_by", flat=True)) == {organizer.pk}
    # the readers of scores never see an abstention
    frames = study_judge_scores(made.study)
    assert list(frames["gpt-judge"].itertuples(index=False, name=None)) == [("q1", "SYS-A", 0.9)]
    entry = AuditEntry.objects.get(action="judge_scores_import")
    assert entry.after == {
        "file": "a.jsonl",
        "scores": {"gpt-judge": 1, "other": 1},
        "replaced": 0,
        "abstentions": {"gpt-judge": 2},
        "abstentions_replaced": 0,
    }
    # the pure reader: abstentions flagged (score NaN) by read_judge_rows, left out by read_judges
    path = tmp_path / "judges.jsonl"
    path.write_bytes(jsonl(lines))
    rows = read_judge_rows(path)
    assert list(rows["abstained"]) == [False, True, True, False]
    assert rows["score"].iloc[0] == 0.9 and math.isnan(rows["score"].iloc[1]) and math.isnan(rows["score"].iloc[2])
    judges = read_judges(path, scale=["good", "bad"])
    assert list(judges["gpt-judge"].itertuples(index=False, name=None)) == [("q1", "SYS-A", 0.9)]
    assert list(judges["other"].itertuples(index=False, name=None)) == [("q1", "SYS-C", 0.5)]


def test_a_judge_that_only_declines_is_not_among_the_scored_judges(made, tmp_path):
    lines = [line(), {"item_uid": "q1", "system": "SYS-B", "label": "cannot judge", "judge": "shy"}]
    path = tmp_path / "judges.jsonl"
    path.write_bytes(jsonl(lines))
    assert list(read_judges(path)) == ["gpt-judge"]  # no scale needed: "cannot judge" is not a label
    judge_scores_import(study=made.study, source=jsonl(lines), name="a.jsonl", user=None)
    assert list(study_judge_scores(made.study)) == ["gpt-judge"]
    assert abstentions_stored(made.study) == {("shy", "q1", "SYS-B")}


def test_judge_answer_rows_gives_one_row_per_judge_and_answer(made):
    lines = [
        line(item_uid="q2", score=2.0, probability=0.7, judge_family="gpt"),
        line(system="SYS-B", score=None, label="cannot judge", judge_family="gpt"),
        line(score=1.0, judge_family="gpt"),
        line(judge="bare", system="SYS-C", score=-1.0),
    ]
    judge_scores_import(study=made.study, source=jsonl(lines), name="a.jsonl", user=None)
    rows = judge_answer_rows(made.study)
    assert list(rows.columns) == ["judge", "item", "system", "score", "probability", "abstained", "judge_family"]
    expected = [
        ("bare", "q1", "SYS-C", -1.0, math.nan, False, ""),
        ("gpt-judge", "q1", "SYS-A", 1.0, math.nan, False, "gpt"),
        ("gpt-judge", "q1", "SYS-B", math.nan, math.nan, True, "gpt"),
        ("gpt-judge", "q2", "SYS-A", 2.0, 0.7, False, "gpt"),
    ]
    got = list(rows.itertuples(index=False, name=None))
    assert len(got) == len(expected)
    for row, want in zip(got, expected, strict=True):
        assert row[:3] == want[:3] and row[5:] == want[5:]
        for value, wanted in zip(row[3:5], want[3:5], strict=True):
            assert (math.isnan(value) and math.isnan(wanted)) or value == wanted
    assert rows["abstained"].dtype == bool and rows["score"].dtype == float
    empty = judge_answer_rows(ranked_study_without_judges(made))
    assert empty.empty and list(empty.columns) == list(rows.columns)


def ranked_study_without_judges(made):
    from ranking.models import Study

    return Study.objects.create(name="nobody judged")


def test_a_score_with_cannot_judge_is_refused(made):
    judge_scores_import(study=made.study, source=jsonl([line(judge="kept")]), name="first.jsonl", user=None)
    bad = [line(), line(system="SYS-B", label="cannot judge")]
    with pytest.raises(InputFileError) as caught:
        judge_scores_import(study=made.study, source=jsonl(bad), name="s.jsonl", user=None)
    assert (caught.value.file, caught.value.line, caught.value.field) == ("s.jsonl", 2, "label")
    assert "gives one" in caught.value.detail
    csv = b"item_uid,system,judge,score,label\nq1,SYS-A,j,1,CANNOT JUDGE\n"
    with pytest.raises(InputFileError, match=r"s\.csv, line 2, field 'label'"):
        judge_scores_import(study=made.study, source=csv, name="s.csv", user=None)
    probability = [line(score=None, label="cannot judge", probability=0.4)]
    with pytest.raises(InputFileError, match=r"s\.jsonl, line 1, field 'probability'"):
        judge_scores_import(study=made.study, source=jsonl(probability), name="s.jsonl", user=None)
    assert set(scores_stored(made.study)) == {("kept", "q1", "SYS-A")} and not JudgeAbstention.objects.exists()


def test_cannot_judge_is_never_a_step_of_a_label_scale(made):
    # a scale naming it is refused where it is typed (page and command) ...
    with pytest.raises(StatsInputError, match="'cannot judge' is a judge declining"):
        parse_label_scale("good, Cannot judge, bad")
    # ... and a study whose tag scale holds it still reads the label as an abstention
    lines = [{"item_uid": "q1", "system": "SYS-A", "label": "cannot judge", "judge": "j"}]
    judge_scores_import(study=made.study, source=jsonl(lines), name="a.jsonl", user=None, scale=["cannot judge", "x"])
    assert not JudgeScore.objects.exists() and abstentions_stored(made.study) == {("j", "q1", "SYS-A")}


@pytest.mark.parametrize(
    ("name", "second", "words"),
    [
        ("p.csv", b"q1,SYS-B,j,1,1.5", "1.5 is not a probability (from 0 to 1)"),
        ("p.csv", b"q1,SYS-B,j,1,-0.1", "-0.1 is not a probability (from 0 to 1)"),
        ("p.csv", b"q1,SYS-B,j,1,nan", "'nan' is not a finite number"),
        ("p.csv", b"q1,SYS-B,j,1,x", "'x' is not a finite number"),
        ("p.jsonl", {"probability": 1.5}, "1.5 is not a probability (from 0 to 1)"),
        ("p.jsonl", {"probability": "x"}, "must be a number, not a string"),
        ("p.jsonl", b'{"item_uid": "q1", "system": "SYS-B", "judge": "j", "score": 1, "probability": NaN}', ""),
    ],
)
def test_a_bad_probability_refuses_the_file_naming_line_and_field(made, name, second, words):
    judge_scores_import(study=made.study, source=jsonl([line(judge="kept")]), name="first.jsonl", user=None)
    if name.endswith(".csv"):
        data = b"item_uid,system,judge,score,probability\nq1,SYS-A,j,1,0.5\n" + second + b"\n"
        where = 3
    else:
        data = jsonl([line(judge="j", probability=0.5)]) + b"\n"
        data += second if isinstance(second, bytes) else jsonl([line(judge="j", system="SYS-B", **second)])
        where = 2
    with pytest.raises(InputFileError) as caught:
        judge_scores_import(study=made.study, source=data, name=name, user=None)
    error = caught.value
    assert (error.file, error.line, error.field) == (name, where, "probability")
    assert words in error.detail
    assert scores_stored(made.study) == {("kept", "q1", "SYS-A"): (0.9, None, "")}  # the earlier import stays


def test_a_judge_family_differing_between_a_judges_lines_is_refused(made):
    judge_scores_import(study=made.study, source=jsonl([line(judge="kept")]), name="first.jsonl", user=None)
    lines = [
        line(judge_family="gpt"),
        line(judge="other", system="SYS-B", judge_family="llama"),  # another judge may name another family
        line(system="SYS-B", judge_family="gpt"),
        line(system="SYS-C", judge_family="GPT-4"),
    ]
    with pytest.raises(InputFileError) as caught:
        judge_scores_import(study=made.study, source=jsonl(lines), name="f.jsonl", user=None)
    assert (caught.value.line, caught.value.field) == (4, "judge_family")
    assert "'GPT-4' differs from the family 'gpt'" in caught.value.detail
    # a line leaving the family out differs from lines naming it
    csv = b"item_uid,system,judge,score,judge_family\nq1,SYS-A,j,1,gpt\nq1,SYS-B,j,1,\n"
    with pytest.raises(InputFileError, match=r"f\.csv, line 3, field 'judge_family'"):
        judge_scores_import(study=made.study, source=csv, name="f.csv", user=None)
    too_long = [line(judge_family="g" * 101)]
    with pytest.raises(InputFileError, match=r"line 1, field 'judge_family': a family of 101 characters"):
        judge_scores_import(study=made.study, source=jsonl(too_long), name="f.jsonl", user=None)
    assert scores_stored(made.study) == {("kept", "q1", "SYS-A"): (0.9, None, "")}


def test_importing_a_judge_again_replaces_its_scores_and_abstentions(made):
    first = [
        line(),
        line(system="SYS-B", score=None, label="cannot judge"),
        line(system="SYS-C", score=None, label="cannot judge"),
    ]
    judge_scores_import(study=made.study, source=jsonl(first), name="a.jsonl", user=None)
    judge_scores_import(
        study=made.study,
        source=jsonl([line(judge="keep", score=None, label="cannot judge")]),
        name="k.jsonl",
        user=None,
    )
    again = [line(item_uid="q2", score=None, label="cannot judge"), line(item_uid="q3", score=0.1)]
    result = judge_scores_import(study=made.study, source=jsonl(again), name="b.jsonl", user=None)
    assert (result.replaced, result.abstentions_replaced) == (1, 2)
    assert scores_stored(made.study) == {("gpt-judge", "q3", "SYS-A"): (0.1, None, "")}
    assert abstentions_stored(made.study) == {("gpt-judge", "q2", "SYS-A"), ("keep", "q1", "SYS-A")}
    entry = AuditEntry.objects.filter(action="judge_scores_import").latest("id")
    assert entry.after == {
        "file": "b.jsonl",
        "scores": {"gpt-judge": 1},
        "replaced": 1,
        "abstentions": {"gpt-judge": 1},
        "abstentions_replaced": 2,
    }
    # a judge's new file without abstentions removes its earlier ones too
    judge_scores_import(study=made.study, source=jsonl([line()]), name="c.jsonl", user=None)
    assert abstentions_stored(made.study) == {("keep", "q1", "SYS-A")}


# --- pairwise verdicts --------------------------------------------------------------------------------------------


def test_verdicts_are_stored_in_the_order_shown_and_audited(made, organizer):
    lines = [
        verdict(),
        verdict(first="SYS-B", second="SYS-A", verdict="FIRST"),  # the swapped order is its own line
        verdict(item_uid="q2", first="SYS-C", second="SYS-A", verdict=" Tie "),
        verdict(judge="other", second="SYS-C", verdict="second"),
    ]
    result = judge_verdicts_import(study=made.study, source=jsonl(lines), name="v.jsonl", user=organizer)
    assert (result.counts, result.replaced, result.unit) == ({"other": 1, "pair-judge": 3}, 0, "verdicts")
    assert verdicts_stored(made.study) == {
        ("pair-judge", "q1", "SYS-A", "SYS-B", "first"),
        ("pair-judge", "q1", "SYS-B", "SYS-A", "first"),
        ("pair-judge", "q2", "SYS-C", "SYS-A", "tie"),
        ("other", "q1", "SYS-A", "SYS-C", "second"),
    }
    for row in JudgeVerdict.objects.select_related("first__question", "second__question"):
        # both answers are the study's answers to the verdict's own question
        assert row.first.question_id == row.second.question_id == row.question_id
        assert row.question.study_id == made.study.pk and row.imported_by == organizer
    entry = AuditEntry.objects.get(action="judge_verdicts_import")
    assert entry.actor == organizer
    assert entry.after == {"file": "v.jsonl", "verdicts": {"other": 1, "pair-judge": 3}, "replaced": 0}
    frames = study_judge_verdicts(made.study)
    assert sorted(frames) == ["other", "pair-judge"]
    assert list(frames["pair-judge"].columns) == ["item", "first", "second", "verdict"]
    assert list(frames["pair-judge"].itertuples(index=False, name=None)) == [
        ("q1", "SYS-A", "SYS-B", "first"),
        ("q1", "SYS-B", "SYS-A", "first"),
        ("q2", "SYS-C", "SYS-A", "tie"),
    ]
    assert study_judge_verdicts(ranked_study_without_judges(made)) == {}


def test_a_csv_of_verdicts_is_read_the_same_way(made):
    data = b"item_uid,judge,first,second,verdict\nq3,csv judge,SYS-B,SYS-C,second\nq3,csv judge,SYS-C,SYS-B,tie\n"
    judge_verdicts_import(study=made.study, source=data, name="v.csv", user=None)
    assert verdicts_stored(made.study) == {
        ("csv judge", "q3", "SYS-B", "SYS-C", "second"),
        ("csv judge", "q3", "SYS-C", "SYS-B", "tie"),
    }


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [
        ({k: v for k, v in verdict().items() if k != "verdict"}, "verdict", "is missing"),
        (verdict(first=""), "first", "empty"),
        (verdict(item_uid="q9"), "item_uid", "item 'q9' is not a question of this study"),
        (verdict(first="SYS-Z"), "first", "system 'SYS-Z' has no answer to item 'q1'"),
        (verdict(second="SYS-Z"), "second", "system 'SYS-Z' has no answer to item 'q1'"),
        (verdict(second="SYS-A"), "second", "system 'SYS-A' is paired with itself"),
        (verdict(first="reference"), "first", "'reference' is the reference answer"),
        (verdict(second="reference"), "second", "'reference' is the reference answer"),
        (verdict(item_uid="q2", verdict="first"), "judge", "a second verdict from judge 'pair-judge' on item 'q2'"),
        (verdict(verdict="both"), "verdict", "'both' is not one of first, second, tie"),
        (verdict(verdict="1"), "verdict", "'1' is not one of first, second, tie"),
        (verdict(judge="semantic"), "judge", "reserved"),
        (verdict(judge="Semantic"), "judge", "reserved"),
        (verdict(judge="consensus"), "judge", "reserved"),
        (verdict(judge="annotator-1a2b3c4d"), "judge", "pseudonym"),
        (verdict(judge="a/b"), "judge", "letters, digits"),
    ],
)
def test_each_bad_verdict_line_refuses_the_whole_file(made, bad, field, words):
    earlier = [verdict(judge="kept"), verdict(item_uid="q2")]
    judge_verdicts_import(study=made.study, source=jsonl(earlier), name="first.jsonl", user=None)
    before = verdicts_stored(made.study)
    lines = [verdict(item_uid="q2", first="SYS-C"), verdict(item_uid="q2", verdict="second"), bad]
    with pytest.raises(InputFileError) as caught:
        judge_verdicts_import(study=made.study, source=jsonl(lines), name="v.jsonl", user=None)
    error = caught.value
    assert str(error).startswith("v.jsonl") and (error.file, error.line, error.field) == ("v.jsonl", 3, field)
    assert words in error.detail
    assert verdicts_stored(made.study) == before  # nothing stored, and the earlier import stays
    assert AuditEntry.objects.filter(action="judge_verdicts_import").count() == 1


def test_a_physicians_pseudonym_and_an_empty_file_are_refused_as_verdicts(made):
    pseudonym = made.physicians[0].pseudonym
    with pytest.raises(InputFileError, match=r"line 1, field 'judge'.*pseudonym"):
        judge_verdicts_import(study=made.study, source=jsonl([verdict(judge=pseudonym)]), name="v.jsonl", user=None)
    with pytest.raises(InputFileError, match="has no verdicts"):
        judge_verdicts_import(
            study=made.study, source=b"item_uid,judge,first,second,verdict\n", name="v.csv", user=None
        )
    with pytest.raises(InputFileError, match=r"v\.csv, line 1: missing column"):
        judge_verdicts_import(
            study=made.study, source=b"item_uid,judge,first,second\nq1,j,SYS-A,SYS-B\n", name="v.csv", user=None
        )
    csv = b"item_uid,judge,first,second,verdict\nq1,j,SYS-A,SYS-B,first\nq2,j,SYS-A,,first\n"
    with pytest.raises(InputFileError) as caught:
        judge_verdicts_import(study=made.study, source=csv, name="v.csv", user=None)
    assert (caught.value.line, caught.value.field) == (3, "second")  # a CSV's header is line 1
    assert not JudgeVerdict.objects.exists()


def test_importing_a_judges_verdicts_again_replaces_them_in_this_study_only(made):
    from ranking.models import Study, StudyAnswer, StudyQuestion

    other = Study.objects.create(name="other study")
    question = StudyQuestion.objects.create(study=other, item=made.answers["q1", "SYS-A"].question.item, position=1)
    for system in ("SYS-A", "SYS-B"):
        StudyAnswer.objects.create(question=question, system=made.answers["q1", system].system, text="x")
    judge_verdicts_import(study=other, source=jsonl([verdict()]), name="o.jsonl", user=None)
    judge_verdicts_import(
        study=made.study, source=jsonl([verdict(), verdict(item_uid="q2")]), name="a.jsonl", user=None
    )
    judge_verdicts_import(study=made.study, source=jsonl([verdict(judge="keep")]), name="k.jsonl", user=None)
    result = judge_verdicts_import(
        study=made.study, source=jsonl([verdict(item_uid="q3", verdict="tie")]), name="b.jsonl", user=None
    )
    assert (result.counts, result.replaced) == ({"pair-judge": 1}, 2)
    assert verdicts_stored(made.study) == {
        ("pair-judge", "q3", "SYS-A", "SYS-B", "tie"),
        ("keep", "q1", "SYS-A", "SYS-B", "first"),
    }
    assert verdicts_stored(other) == {("pair-judge", "q1", "SYS-A", "SYS-B", "first")}


# --- the page and the command -------------------------------------------------------------------------------------


def test_the_page_takes_pairwise_verdicts_in_a_second_form(made, organizer, client):
    url = reverse("judge_scores_import", args=[made.study.pk])
    client.force_login(organizer)
    page = client.get(url).content.decode()
    assert 'name="verdicts_file"' in page and "Pairwise verdicts" in page
    assert "probability" in page and "judge_family" in page and "cannot judge" in page
    upload = SimpleUploadedFile("v.csv", b"item_uid,judge,first,second,verdict\nq1,j,SYS-A,SYS-B,first\n")
    page = client.post(url, {"verdicts_file": upload}, follow=True).content.decode()
    assert "Imported 1 verdict from v.csv: j (1 verdict)." in page
    assert verdicts_stored(made.study) == {("j", "q1", "SYS-A", "SYS-B", "first")}
    bad = SimpleUploadedFile(
        "bad.csv", b"item_uid,judge,first,second,verdict\nq1,k,SYS-A,SYS-B,first\nq1,k,SYS-A,SYS-B,maybe\n"
    )
    response = client.post(url, {"verdicts_file": bad})
    page = response.content.decode()
    assert response.status_code == 400 and "Nothing was imported" in page and "line 3" in page and "verdict" in page
    assert verdicts_stored(made.study) == {("j", "q1", "SYS-A", "SYS-B", "first")}
    # the scores form still posts scores
    scores = [line(judge="j"), line(judge="j", system="SYS-B", score=None, label="cannot judge")]
    page = client.post(url, {"file": SimpleUploadedFile("s.jsonl", jsonl(scores))}, follow=True).content.decode()
    assert "Imported 1 score from s.jsonl" in page and "The judges declined 1 answer." in page
    assert 'j <span class="small muted">(1 score, 1 abstention, 1 verdict)</span>' in page
    page = client.post(url, {"form": "verdicts"}, follow=True).content.decode()
    assert "Nothing was imported: choose a CSV or JSONL file first." in page


def test_only_organizers_may_upload_verdicts(made, make_user, client):
    url = reverse("judge_scores_import", args=[made.study.pk])
    for role in ("reviewer", "ranker", "adjudicator"):
        client.force_login(make_user(role))
        upload = SimpleUploadedFile("v.csv", b"item_uid,judge,first,second,verdict\nq1,j,SYS-A,SYS-B,first\n")
        assert client.post(url, {"verdicts_file": upload}).status_code == 403
    assert not JudgeVerdict.objects.exists()


def test_the_command_imports_verdicts_and_exits_non_zero_on_a_bad_file(made, tmp_path, capsys):
    path = tmp_path / "v.jsonl"
    path.write_bytes(jsonl([verdict(), verdict(first="SYS-B", second="SYS-A")]))
    call_command("import_judge_verdicts", "--study", str(made.study.pk), str(path))
    assert "Imported 2 verdicts" in capsys.readouterr().out
    bad = tmp_path / "bad.csv"
    bad.write_text("item_uid,judge,first,second,verdict\nq1,j,SYS-A,SYS-B,first\nq1,j,SYS-A,SYS-C,worse\n")
    with pytest.raises(CommandError, match=r"Nothing was imported: .*bad\.csv, line 3, field 'verdict'") as caught:
        call_command("import_judge_verdicts", "--study", str(made.study.pk), str(bad))
    assert caught.value.returncode == 1  # manage.py prints the message and exits with it
    with pytest.raises(CommandError, match="no such study"):
        call_command("import_judge_verdicts", "--study", "999999", str(path))
    assert verdicts_stored(made.study) == {
        ("pair-judge", "q1", "SYS-A", "SYS-B", "first"),
        ("pair-judge", "q1", "SYS-B", "SYS-A", "first"),
    }


def test_read_judge_rows_gives_the_card_columns(tmp_path):
    path = tmp_path / "j.csv"
    path.write_text("item_uid,system,judge,score\nq1,A,j,1\n")
    rows = read_judge_rows(path)
    # files without the new fields read as before, with the card's columns empty
    assert rows["probability"].isna().all() and list(rows["judge_family"]) == [None]
    assert list(rows["abstained"]) == [False] and rows["score"].tolist() == [1.0]
    assert isinstance(rows, pd.DataFrame)
