"""External judge labels: stored all or nothing; each refusal names the file, the line and the field."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from analytics.models import JudgeNuggetLabel
from analytics.nuggets.judge_labels import judge_labels_import
from metrics.nugget_io import NuggetInputError
from portal.models import AuditEntry
from tests.analytics.nugget_rows import hand_study

pytestmark = pytest.mark.django_db


def line(**overrides) -> bytes:
    record = {"item_uid": "q1", "system": "SYS-A", "nugget_id": "n1", "label": "support", "judge": "gpt-judge"}
    record.update(overrides)
    return json.dumps({k: v for k, v in record.items() if v is not None}).encode()


@pytest.fixture
def made(make_user):
    return hand_study(make_user)


def test_import_stores_labels_and_audits(made, organizer):
    lines = [line(), line(system="SYS-B", label="partial"), line(nugget_id="n2", judge="other judge")]
    result = judge_labels_import(study=made.study, source=lines, name="labels.jsonl", user=organizer)
    assert result.counts == {"gpt-judge": 2, "other judge": 1} and result.replaced == 0
    stored = JudgeNuggetLabel.objects.get(labeller="gpt-judge", answer__system__name="SYS-B")
    assert (stored.label, stored.source, stored.nugget.key) == ("partial", "import", "n1")
    entry = AuditEntry.objects.get(action="nugget_judge_labels_import")
    assert entry.actor == organizer and entry.after["labels"] == {"gpt-judge": 2, "other judge": 1}


def test_importing_a_judge_again_replaces_its_labels(made):
    judge_labels_import(study=made.study, source=[line(), line(nugget_id="n2")], name="a.jsonl", user=None)
    result = judge_labels_import(study=made.study, source=[line(label="not_support")], name="b.jsonl", user=None)
    assert result.replaced == 2
    assert list(JudgeNuggetLabel.objects.values_list("label", flat=True)) == ["not_support"]


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [
        (line(item_uid="q9"), "item_uid", "not a nugget question of this study"),
        (line(system="SYS-Z"), "system", "has no answer to item"),
        (line(nugget_id="n9"), "nugget_id", "has no nugget 'n9'"),
        (line(label="maybe"), "label", "maybe"),
        (line(), "judge", "already labelled"),  # the same line twice
        (line(judge="matcher"), "judge", "reserved"),
        (line(judge="consensus"), "judge", "reserved"),
        (line(judge="annotator-0badc0de"), "judge", "pseudonym"),
        (line(judge="a/b"), "judge", "only letters"),
        (b"{not json", None, "JSON"),
    ],
)
def test_each_bad_line_refuses_the_whole_file(made, bad, field, words):
    with pytest.raises(NuggetInputError) as refused:
        judge_labels_import(study=made.study, source=[line(), bad], name="bad.jsonl", user=None)
    error = refused.value
    assert (error.file, error.line) == ("bad.jsonl", 2)
    if field:
        assert error.field == field
    assert words in str(error)
    assert not JudgeNuggetLabel.objects.exists()


@pytest.mark.parametrize(
    ("bad", "field", "words"),
    [
        (line()[:-1] + b', "confidence": 1e400}', "confidence", "the number 1e400 is out of range"),
        (line()[:-1] + b', "confidence": [-1e400]}', "confidence (entry 1)", "the number -1e400 is out of range"),
        (line()[:-1] + b', "label": "not_support"}', "label", "is given twice in one object"),
        (line()[:-1] + b', "judge": "other"}', "judge", "is given twice in one object"),
        (line(label=True), "label", "must be a string, not true/false"),
        (line(nugget_id=1), "nugget_id", "must be a string, not a number"),
    ],
)
def test_non_finite_repeated_and_mistyped_values_refuse_the_file_and_store_nothing(made, bad, field, words):
    judge_labels_import(study=made.study, source=[line(judge="kept")], name="first.jsonl", user=None)
    with pytest.raises(NuggetInputError) as refused:
        judge_labels_import(study=made.study, source=[line(system="SYS-B"), b"", bad], name="bad.jsonl", user=None)
    error = refused.value
    assert (error.file, error.line, error.field) == ("bad.jsonl", 3, field)
    assert words in error.detail
    assert list(JudgeNuggetLabel.objects.values_list("labeller", flat=True)) == ["kept"]


def test_a_physicians_own_pseudonym_is_refused(made):
    name = made.physicians[0].pseudonym
    with pytest.raises(NuggetInputError, match="pseudonym"):
        judge_labels_import(study=made.study, source=[line(judge=name)], name="x.jsonl", user=None)


def test_command_imports_and_refuses_naming_the_line(made, tmp_path):
    good = tmp_path / "judge.jsonl"
    good.write_bytes(line() + b"\n" + line(nugget_id="n3", label="not_support") + b"\n")
    call_command("import_judge_labels", "--study", str(made.study.pk), str(good))
    assert JudgeNuggetLabel.objects.count() == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(line() + b"\n\n" + line(item_uid="nope") + b"\n")
    with pytest.raises(CommandError, match=r"bad.jsonl, line 3, field 'item_uid'"):
        call_command("import_judge_labels", "--study", str(made.study.pk), str(bad))
    with pytest.raises(CommandError, match="no such study"):
        call_command("import_judge_labels", "--study", "999999", str(good))
