"""One representation per imported value: pages are whole numbers, ids and ISBNs text, true/false answers
"True"/"False". A freeze over items imported with integer and string pages works (it answered 500), rows stored
before the normalisation are migrated, and frozen releases keep their bytes."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from django.apps import apps

from annotation.models import QAItem
from annotation.services.imports import items_import
from annotation.services.releases import release_export, release_freeze, release_verify

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"
TF = json.loads((SAMPLE / "TF.json").read_text())

pytestmark = pytest.mark.django_db

migration = importlib.import_module("annotation.migrations.0007_normalise_imported_values")


def _with_page(record: dict, page) -> dict:
    return {**record, "source": {**record["source"], "page": page}}


def _finalize_all() -> None:
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary")


def test_freeze_with_integer_and_string_pages_succeeds(tmp_path):
    (tmp_path / "a").mkdir()
    integers = tmp_path / "a" / "TF.json"
    integers.write_text(json.dumps(TF[:2]))  # page 0, as in the public sample
    strings = tmp_path / "TF.json"
    strings.write_text(json.dumps([_with_page(record, "12") for record in TF[2:]]))
    items_import(paths=[integers, strings])
    _finalize_all()
    release = release_freeze(name="mixed-pages")
    assert release.item_count == 5
    assert sorted(entry["source"]["page"] for entry in release.items.values_list("record", flat=True)) == [
        0, 0, 12, 12, 12,
    ]  # fmt: skip
    assert set(QAItem.objects.values_list("page", flat=True)) == {"0", "12"}


def test_values_get_one_representation_and_the_content_uid_stays_that_of_the_file(tmp_path):
    path = tmp_path / "TF.json"
    written = [
        {**_with_page(TF[0], "7"), "answer": " true "},
        {**TF[1], "uid": 42, "source": {**TF[1]["source"], "isbn": 9780000000000}},
    ]
    path.write_text(json.dumps(written))
    items_import(paths=[path])
    first, second = QAItem.objects.order_by("id")
    assert first.raw["source"]["page"] == 7 and first.page == "7"
    assert first.raw["answer"] == first.answer == "True"
    assert second.uid == second.raw["uid"] == "42"
    assert second.raw["source"]["isbn"] == second.isbn == "9780000000000"
    # The same file again is recognised: the uid is taken from the record as written.
    assert items_import(paths=[path]).existing == 2


def test_migration_normalises_stored_items_and_leaves_frozen_releases_alone(tmp_path):
    items_import(paths=[SAMPLE / "TF.json"])
    items = list(QAItem.objects.order_by("id"))
    # Rows as the old importer stored them: a string page, an integer uid, a lower-case answer, and a page
    # with no numeric form.
    QAItem.objects.filter(pk=items[0].pk).update(raw=_with_page(TF[0], "12"), page="12")
    QAItem.objects.filter(pk=items[1].pk).update(raw={**TF[1], "uid": 7, "answer": "true"}, answer="true")
    QAItem.objects.filter(pk=items[2].pk).update(raw=_with_page(TF[2], "xii"), page="xii")
    _finalize_all()
    # A release frozen from those rows (the mix of 12 / "12" / "xii" pages is written as text in tables).
    before = release_freeze(name="before-migration")
    frozen = list(before.items.order_by("position").values_list("record", flat=True))

    migration.normalise(apps, None)

    first, second, third = (QAItem.objects.get(pk=item.pk) for item in items[:3])
    assert first.raw["source"]["page"] == 12 and first.page == "12"
    assert second.raw["uid"] == "7" and second.raw["answer"] == second.answer == "True"
    assert third.raw["source"]["page"] == "xii" and third.page == "xii"  # nothing else it could be
    assert list(before.items.order_by("position").values_list("record", flat=True)) == frozen
    for fmt in ("cliniqlink", "csv", "parquet", "jsonl"):
        release_export(release=before, fmt=fmt, out_dir=tmp_path / fmt)
        assert release_verify(release=before, folder=tmp_path / fmt, fmt=fmt) == []
    assert release_freeze(name="after-migration").item_count == 5
