"""The streamed import: records are read, checked and written chunk by chunk inside one transaction, so a file is
never held whole, and the behaviour is the one of an import that checked everything first: a refused record
anywhere (the very last one of a many-chunk file included) changes nothing, re-imports skip what is there across
chunk boundaries, a uid given twice is refused wherever the two are, and the stored rows are the ones a model
instance would have written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import annotation.services.imports as imports
import portal.json_stream as json_stream
from annotation.models import ImportBatch, QAItem, SourcePassage
from annotation.services.imports import items_import, items_parse, sources_import
from portal.importing import ImportProblem, Limits, load_json
from portal.jobs import Progress
from portal.json_stream import iter_array_records
from portal.models import AuditEntry

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"
GOOD_TF = json.loads((SAMPLE / "TF.json").read_text())[0]

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    """Three records a chunk and 64 characters a read: every test below spans many chunks and blocks."""
    monkeypatch.setattr(imports, "_CHUNK", 3)
    monkeypatch.setattr(json_stream, "_BLOCK", 64)


def _tf(number: int, **changes) -> dict:
    return {**GOOD_TF, "question": f"Is statement {number} true?", **changes}


def _write(path: Path, records: list) -> Path:
    path.write_text(json.dumps(records, ensure_ascii=False))
    return path


def test_a_bad_record_at_the_very_end_of_a_many_chunk_file_changes_nothing(tmp_path):
    records = [_tf(n) for n in range(1, 20)] + [_tf(20, answer="maybe")]
    path = _write(tmp_path / "TF.json", records)
    audits = AuditEntry.objects.count()
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[path])
    assert (caught.value.file, caught.value.record, caught.value.field) == ("TF.json", 20, "answer")
    assert str(caught.value) == "TF.json, record 20, field 'answer': must be 'True' or 'False', not 'maybe'"
    assert not QAItem.objects.exists() and not ImportBatch.objects.exists()
    assert AuditEntry.objects.count() == audits


def test_malformed_json_after_many_written_chunks_changes_nothing_and_keeps_its_message(tmp_path):
    path = tmp_path / "TF.json"
    text = json.dumps([_tf(n) for n in range(1, 12)])
    path.write_text(text[:-1] + ', {"type": "true_false"')  # cut short: the array never closes
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[path])
    with pytest.raises(ImportProblem) as whole:
        load_json(path, Limits(), "TF.json")
    assert str(caught.value) == str(whole.value)
    assert "malformed JSON at line 1" in str(caught.value)
    assert not QAItem.objects.exists()


def test_a_bad_line_at_the_end_of_a_jsonl_file_changes_nothing(tmp_path):
    lines = [{"sample_id": f"s{n}", "input": f"问题 {n}", "target": "答"} for n in range(1, 11)]
    lines.append({"sample_id": "s11", "input": ""})
    path = tmp_path / "cblue.jsonl"
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n")
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[path], fmt="promptcblue")
    assert (caught.value.file, caught.value.record, caught.value.field) == ("cblue.jsonl", 11, "input")
    assert not QAItem.objects.exists()


def test_a_reimport_across_chunk_boundaries_adds_only_the_new_items(tmp_path):
    first = items_import(paths=[_write(tmp_path / "TF.json", [_tf(n) for n in range(1, 6)])])
    assert (first.created, first.existing) == (5, 0)
    again = items_import(paths=[_write(tmp_path / "TF.json", [_tf(n) for n in range(1, 13)])])
    assert (again.created, again.existing) == (7, 5)
    batch = ImportBatch.objects.get(pk=again.batch_id)
    assert (batch.items_created, batch.items_existing, batch.files, batch.name) == (7, 5, ["TF.json"], "TF.json")
    assert QAItem.objects.filter(batch=batch).count() == 7
    nothing_new = items_import(paths=[tmp_path / "TF.json"])
    assert (nothing_new.batch_id, nothing_new.created, nothing_new.existing) == (None, 0, 12)
    assert QAItem.objects.count() == 12


def test_a_uid_repeated_chunks_apart_is_refused_naming_the_first(tmp_path):
    records = [_tf(n) for n in range(1, 11)] + [_tf(2)]
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[_write(tmp_path / "TF.json", records)])
    assert (caught.value.record, caught.value.field) == (11, "uid")
    assert "the same item is record 2 of TF.json" in caught.value.detail
    assert not QAItem.objects.exists()


def test_a_uid_repeated_in_another_file_is_refused_naming_the_first(tmp_path):
    _write(tmp_path / "TF.json", [_tf(n) for n in range(1, 8)])
    short = json.loads((SAMPLE / "short.json").read_text())
    _write(tmp_path / "short.json", short + [{**short[0], "uid": "twice"}, {**short[1], "uid": "twice"}])
    with pytest.raises(ImportProblem) as caught:
        items_import(paths=[tmp_path])
    assert (caught.value.file, caught.value.record) == ("short.json", len(short) + 2)
    assert f"the same item is record {len(short) + 1} of short.json" in caught.value.detail
    assert not QAItem.objects.exists()


def test_the_record_limit_counts_every_file_as_it_reads(tmp_path, settings):
    settings.PORTAL_UPLOAD_MAX_RECORDS = 8
    _write(tmp_path / "TF.json", [_tf(n) for n in range(1, 6)])
    _write(tmp_path / "short.json", json.loads((SAMPLE / "short.json").read_text()))
    with pytest.raises(ImportProblem, match="more than 8 records; the limit is 8"):
        items_import(paths=[tmp_path])
    assert not QAItem.objects.exists()


def test_the_file_is_read_as_the_records_are_used_not_first(tmp_path):
    path = _write(tmp_path / "TF.json", [_tf(n) for n in range(1, 200)])
    read: list[int] = []
    records = iter_array_records(path, Limits(), "TF.json", on_read=read.append)
    number, record = next(records)
    assert (number, record["question"]) == (1, "Is statement 1 true?")
    assert sum(read) < path.stat().st_size / 10


def test_streamed_records_equal_the_whole_file_parsed(tmp_path):
    """Records cut by block ends anywhere (64 characters a read), nested groups, text beyond ASCII and U+2028."""
    records = [_tf(n, question=f"Énoncé {n}\u2028 «vrai» ? 😀" * (n % 4 + 1)) for n in range(1, 30)]
    grouped = [records[:2], *records[2:10], [], records[10:]]
    path = tmp_path / "TF.json"
    path.write_text("\ufeff \n" + json.dumps(grouped, ensure_ascii=False, indent=2) + "\n")
    streamed = [record for _, record in iter_array_records(path, Limits(), "TF.json", flatten=True)]
    assert streamed == records
    numbers = [number for number, _ in iter_array_records(path, Limits(), "TF.json", flatten=True)]
    assert numbers == list(range(1, 30))


def test_a_document_that_is_not_an_array_keeps_its_message(tmp_path):
    path = tmp_path / "TF.json"
    path.write_text(json.dumps({"items": [GOOD_TF]}))
    with pytest.raises(ImportProblem, match="TF.json: expected a JSON array of items, found a JSON dict"):
        items_import(paths=[path])


def test_progress_counts_records_with_a_total_estimated_from_the_bytes_read(tmp_path):
    path = _write(tmp_path / "TF.json", [_tf(n) for n in range(1, 40)])
    seen: list[tuple[int, int]] = []

    class Recording(Progress):
        def advance(self, n: int = 1, message: str = "") -> None:
            super().advance(n, message)
            seen.append((self.done, self.total))

    items_import(paths=[path], progress=Recording())
    assert seen[0][0] == 3 and 3 < seen[0][1] <= 60  # the first chunk: three records, the total estimated
    assert [done for done, _ in seen[:-1]] == list(range(3, 40, 3))
    assert seen[-1] == (39, 39)


def test_stored_rows_are_the_ones_model_instances_would_hold():
    """COPY rows are written without building model instances: every stored value equals the value of the
    instance the parsed record makes (what save() or bulk_create would write)."""
    sources_import(paths=[ROOT / "fixtures" / "demo-sources.csv"])
    paths = [SAMPLE, ROOT / "fixtures" / "promptcblue-sample.jsonl"]
    items_import(paths=[SAMPLE])
    items_import(paths=[paths[1]], fmt="promptcblue")
    parsed = items_parse([SAMPLE], fmt="cliniqlink") + items_parse([paths[1]], fmt="promptcblue")
    compared = [f.attname for f in QAItem._meta.concrete_fields if f.attname not in ("id", "created_at", "batch_id")]
    compared.remove("queue_key")
    stored = {item.uid: item for item in QAItem.objects.all()}
    assert len(stored) == len(parsed)
    linked = 0
    for item in parsed:
        expected = QAItem(uid=item.uid, qa_type=item.qa_type, benchmark=item.benchmark, raw=item.raw, **item.fields)
        passage = SourcePassage.objects.filter(paragraph_id=item.fields.get("paragraph_id", "")).first()
        expected.passage_id = passage.pk if passage else None
        linked += passage is not None
        row = stored[item.uid]
        expected.raw = json.loads(json.dumps(expected.raw))  # as jsonb returns it
        assert {name: getattr(row, name) for name in compared} == {name: getattr(expected, name) for name in compared}
    assert linked  # the demo sources cite some sample items: their passages were looked up and set
