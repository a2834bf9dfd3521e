"""Judgement exports: one row per judgement with pseudonyms, and SHROOM-style JSON per item."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from annotation.models import Adjudication, Dispute, QAItem
from annotation.services.imports import items_import
from annotation.services.judgement_exports import judgements_export
from portal.models import AuditEntry
from tests.reviews import done_review

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(make_user):
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample" / "TF.json"])
    a, b, c = (make_user("reviewer") for _ in range(3))
    first, second = QAItem.objects.order_by("id")[:2]
    done_review(first, a, "primary", "correct", 5)
    done_review(first, b, "secondary", "incorrect", 4)
    Adjudication.objects.create(
        item=first, adjudicator=c, verdict="incorrect", relevance=4, reason="source says otherwise"
    )
    done_review(second, a, "primary", "correct", 5)
    Dispute.objects.create(item=second, raised_by=b, category="ambiguous", text="two answers fit")
    return {"first": first, "second": second, "users": (a, b, c)}


def test_csv_has_one_row_per_judgement_with_pseudonyms(judged, tmp_path):
    paths = judgements_export(fmt="csv", out_dir=tmp_path)
    table = pd.read_csv(paths[0])
    assert list(table["stage"]) == ["primary", "secondary", "adjudication", "primary"]
    a, b, c = judged["users"]
    assert set(table["annotator"]) == {a.pseudonym, b.pseudonym, c.pseudonym}
    assert not any("@" in str(v) for v in table["annotator"])
    disputes = pd.read_csv(paths[1])
    assert list(disputes["category"]) == ["ambiguous"] and disputes["raised_by"][0] == b.pseudonym


def test_identities_only_when_asked(judged, tmp_path):
    table = pd.read_parquet(judgements_export(fmt="parquet", out_dir=tmp_path, identities=True)[0])
    assert judged["users"][0].email in set(table["annotator"])


def test_every_judgement_export_is_audited_saying_whether_it_carried_identities(judged, tmp_path, make_user):
    organizer = make_user("organizer")
    judgements_export(fmt="csv", out_dir=tmp_path, identities=True, user=organizer)
    judgements_export(fmt="shroom", out_dir=tmp_path)
    entries = AuditEntry.objects.filter(action="judgements_exported").order_by("id")
    assert [(e.actor, e.after) for e in entries] == [
        (organizer, {"format": "csv", "identities": True}),
        (None, {"format": "shroom", "identities": False}),
    ]


def test_shroom_json_gives_labels_majority_and_incorrect_share(judged, tmp_path):
    records = {r["item_uid"]: r for r in json.loads(judgements_export(fmt="shroom", out_dir=tmp_path)[0].read_text())}
    first = records[judged["first"].uid]
    assert sorted(first["labels"].values()) == ["correct", "incorrect"]
    assert first["majority_label"] is None  # one against one: no majority
    assert first["incorrect_share"] == 0.5 and first["adjudication"] == "incorrect"
    second = records[judged["second"].uid]
    assert second["majority_label"] == "correct" and second["incorrect_share"] == 0.0
