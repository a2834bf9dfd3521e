"""A release's Parquet export loads with Hugging Face ``datasets`` as its card says: one row per item, the columns
of the CSV in the same order, lists of text as lists, whole numbers as integers, and a column mixing text and lists
as the JSON text the CSV holds."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import datasets
import pytest

from annotation.models import QAItem
from annotation.services.imports import items_import
from annotation.services.releases import TABLE_COLUMNS, release_export, release_freeze

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def release(sample_items):
    """Every sample item of both benchmarks verified: all seven ClinIQLink types and PromptCBLUE side by side."""
    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    QAItem.objects.update(status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary")
    return release_freeze(name="tables")


@pytest.fixture
def loaded(release, tmp_path):
    release_export(release=release, fmt="parquet", out_dir=tmp_path / "parquet")
    release_export(release=release, fmt="csv", out_dir=tmp_path / "csv")
    table = datasets.load_dataset(
        "parquet",
        data_files={"test": str(tmp_path / "parquet" / "items.parquet")},
        split="test",
        cache_dir=str(tmp_path / "hf-cache"),
    )
    with (tmp_path / "csv" / "items.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return table, rows


def _records(release) -> dict[str, dict]:
    return dict(release.items.values_list("uid", "record"))


def test_one_row_per_item_with_the_columns_of_the_csv(release, loaded):
    table, csv_rows = loaded
    assert table.num_rows == release.item_count == len(csv_rows) == QAItem.objects.count()
    assert table.column_names == list(csv_rows[0]) == TABLE_COLUMNS
    assert table["uid"] == [row["uid"] for row in csv_rows]
    assert table["question"] == [row["question"] for row in csv_rows]


def test_lists_of_text_are_lists_and_whole_numbers_integers(release, loaded):
    table, _ = loaded
    records = _records(release)
    assert isinstance(table.features["options"], datasets.List)
    assert isinstance(table.features["reasoning"], datasets.List)
    kinds = set()
    for row in table:
        record = records[row["uid"]]
        expected = record.get("answer_choices") if row["qa_type"] == "generic" else record.get("options")
        assert row["options"] == expected
        assert row["reasoning"] == record.get("reasoning")
        if row["options"] is not None:
            kinds.add(row["qa_type"])
        source_page = (record.get("source") or {}).get("page")
        assert row["page"] == source_page and type(row["page"]) is type(source_page)
    assert {"multiple_choice", "list", "generic"} <= kinds  # every kind of options was read as a list
    assert table.features["page"].dtype == "int64" and table.features["position"].dtype == "int64"


def test_a_column_mixing_text_and_lists_is_the_json_text_of_the_csv(release, loaded):
    table, csv_rows = loaded
    records = _records(release)
    by_uid = {row["uid"]: row for row in csv_rows}
    for row in table:
        assert isinstance(row["answer"], str)
        assert row["answer"] == by_uid[row["uid"]]["answer"]
        expected = records[row["uid"]].get("target" if row["qa_type"] == "generic" else "answer")
        assert json.loads(row["answer"]) == expected
    assert any(isinstance(json.loads(answer), list) for answer in table["answer"])  # a list question's answer
