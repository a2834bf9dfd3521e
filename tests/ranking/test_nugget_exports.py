"""Nugget study exports: labels as JSONL in the label format nugget_eval reads, labels and sentence marks as CSV
with guarded cells, organizers only; refused for studies that asked for no nugget labels."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command

from metrics.nugget_io import read_labels_jsonl
from portal.errors import DomainError
from ranking.services.exports import rankings_export
from ranking.services.queue import task_next
from ranking.services.studies import study_create
from ranking.services.submissions import task_slots, task_submit

from .conftest import SYSTEM_NAMES
from .nuggets import validated_nuggets

pytestmark = pytest.mark.django_db
FORMULA_NUGGETS = (("n1", '=HYPERLINK("http://evil.example","x")', "vital"), ("n2", "Plain fact.", "okay"))


@pytest.fixture
def assessed(systems_with_outputs, sample_items, organizer, make_user):
    validated_nuggets(sample_items[0], FORMULA_NUGGETS)
    study = study_create(
        name="export nuggets", systems=SYSTEM_NAMES, ask_nuggets=True, ask_ranking=False, overlap=1, user=organizer
    ).study
    ranker = make_user("ranker")
    task = task_next(study=study, ranker=ranker)
    labels = {slot: {"n1": "support", "n2": "partial"} for slot in task_slots(task)}
    task_submit(
        task_id=task.pk, ranker=ranker, answers={}, nugget_labels=labels, sentence_marks={"B": {"0": "unsupported"}}
    )
    return study, ranker, task


def test_jsonl_labels_use_the_label_format_nugget_eval_reads(assessed, tmp_path):
    study, ranker, _ = assessed
    data = rankings_export(study=study, fmt="nugget-labels")
    records = [json.loads(line) for line in data.decode().splitlines()]
    assert len(records) == 3 * 2
    assert all(set(r) == {"item_uid", "system", "nugget_id", "label", "labeller"} for r in records)
    assert {r["labeller"] for r in records} == {ranker.pseudonym}
    assert {r["system"] for r in records} == {*SYSTEM_NAMES, "reference"}
    path = tmp_path / "labels.jsonl"
    path.write_bytes(data)
    assert len(read_labels_jsonl(path)) == 6  # the pure reader of nugget_eval --labels takes it as it is


def test_csv_exports_guard_cells_and_count_marks(assessed):
    study, ranker, task = assessed
    labels = list(csv.DictReader(io.StringIO(rankings_export(study=study, fmt="nugget-csv").decode())))
    assert len(labels) == 6
    formula = next(r for r in labels if r["nugget_id"] == "n1")
    assert formula["nugget_text"].startswith("'=HYPERLINK") and formula["importance"] == "vital"
    marks = list(csv.DictReader(io.StringIO(rankings_export(study=study, fmt="sentence-marks").decode())))
    assert len(marks) == 3
    b = next(r for r in marks if r["slot"] == "B")
    assert (b["n_marked"], b["unsupported_sentences"], b["wrong_sentences"]) == ("1", "0", "")
    assert int(b["n_sentences"]) >= 1
    with_identities = rankings_export(study=study, fmt="nugget-csv", identities=True).decode()
    assert ranker.email in with_identities


def test_nugget_exports_are_for_nugget_studies_and_organizers_only(
    assessed, make_study, organizer_client, client, make_user, tmp_path
):
    study, _, _ = assessed
    with pytest.raises(DomainError, match="did not ask for nugget labels"):
        rankings_export(study=make_study(sample_size=1), fmt="nugget-labels")
    page = organizer_client.get(f"/organize/studies/{study.pk}/").content.decode()
    assert "nugget labels (JSONL)" in page and "sentence marks (CSV)" in page and ">Parquet<" not in page
    response = organizer_client.get(f"/organize/studies/{study.pk}/export/nugget-labels/")
    assert response.status_code == 200 and response["Content-Disposition"].endswith('-nugget-labels.jsonl"')
    assert organizer_client.get(f"/api/studies/{study.pk}/export/?fmt=sentence-marks").status_code == 200
    client.force_login(make_user("ranker"))
    assert client.get(f"/organize/studies/{study.pk}/export/nugget-labels/").status_code == 403
    out = tmp_path / "l.jsonl"
    call_command("export_rankings", str(study.pk), "--format", "nugget-labels", "--out", str(out))
    assert len(out.read_text().splitlines()) == 6


@pytest.mark.parametrize("fmt", ["nugget-labels", "nugget-csv", "sentence-marks"])
def test_written_a_few_rows_at_a_time_the_export_is_the_same(assessed, monkeypatch, fmt):
    """The nugget exports are read and written a batch at a time (a large study has a million labels); batches of
    one row give the very bytes of one batch for all (one header, the same cells)."""
    from ranking.services import nugget_exports

    study, _, _ = assessed
    whole = rankings_export(study=study, fmt=fmt)
    monkeypatch.setattr(nugget_exports, "EXPORT_CHUNK", 1)
    chunks = list(nugget_exports.nugget_export_chunks(study=study, fmt=fmt))
    assert len(chunks) >= 3 and b"".join(chunks) == whole
    if fmt != "nugget-labels":
        assert whole.decode().splitlines()[0].startswith("study,item_uid,")  # the header, once
        assert whole.count(b"study,item_uid,") == 1


def test_the_nugget_label_download_is_streamed_and_audited_before_its_first_byte(assessed, organizer_client):
    from portal.models import AuditEntry

    study, ranker, _ = assessed
    for url in (
        f"/organize/studies/{study.pk}/export/nugget-csv/",
        f"/api/studies/{study.pk}/export/?fmt=nugget-labels",
    ):
        response = organizer_client.get(url)
        assert response.status_code == 200 and response.streaming
        assert AuditEntry.objects.filter(action="rankings_exported").exists()
        body = b"".join(response.streaming_content).decode()
        assert ranker.pseudonym in body and ranker.email not in body
    # a format built whole is still sent whole, with its length
    whole = organizer_client.get(f"/api/studies/{study.pk}/export/?fmt=csv")
    assert not whole.streaming and int(whole["Content-Length"]) == len(whole.content)


def test_an_empty_nugget_study_exports_the_header_alone(systems_with_outputs, sample_items, organizer):
    validated_nuggets(sample_items[0], FORMULA_NUGGETS)
    study = study_create(
        name="nobody yet", systems=SYSTEM_NAMES, ask_nuggets=True, ask_ranking=False, overlap=1, user=organizer
    ).study
    assert rankings_export(study=study, fmt="nugget-csv").decode().splitlines() == [",".join(
        ["study", "item_uid", "system", "is_reference", "labeller", "slot", "nugget_id", "importance", "nugget_text",
         "label", "submitted_at"]
    )]  # fmt: skip
    assert rankings_export(study=study, fmt="nugget-labels") == b""
