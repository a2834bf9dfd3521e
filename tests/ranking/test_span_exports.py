"""Span labels per answer from the stored spans (English and Chinese text), and the span exports: Mu-SHROOM JSON
Lines read back by the strict reader and scored against itself, CSV with guarded cells, Parquet, identities and
blinded systems, organizers only."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse

from evaluation.spans import span_score_report
from metrics.span_io import read_spans_jsonl
from portal.errors import DomainError
from ranking.selectors.spans import study_span_labels
from ranking.services.exports import rankings_export, study_formats
from tests.span_rows import spanned_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def made(make_user):
    return spanned_study(make_user)


def _by_key(labels):
    return {(a.item_uid, a.system): a for a in labels}


def test_labels_per_answer_are_the_physicians_shares(made):
    labels = _by_key(study_span_labels(made.study))
    a = labels["s1", "SPAN-A"]
    assert a.n_annotators == 2
    assert a.soft_labels == [{"start": 8, "end": 14, "prob": 0.5}, {"start": 14, "end": 20, "prob": 1.0}]
    assert a.hard_labels == [[14, 20]]
    assert a.text[14:20] == "cancer"
    b = labels["s1", "SPAN-B"]
    assert (b.n_annotators, b.soft_labels, b.hard_labels) == (2, [], [])  # read by both, nothing marked
    assert labels["s3", "SPAN-A"].n_annotators == 1
    assert labels["s3", "SPAN-A"].hard_labels == [[0, 4]]


def test_chinese_offsets_are_characters(made):
    labels = _by_key(study_span_labels(made.study))
    a = labels["s2", "SPAN-A"]
    assert a.lang == "ZH"
    assert a.soft_labels == [{"start": 4, "end": 6, "prob": 0.5}, {"start": 6, "end": 10, "prob": 1.0}]
    assert a.text[6:10] == "治愈癌症"
    assert labels["s2", "SPAN-B"].hard_labels == []  # one of two is not a majority


def test_unsubmitted_tasks_do_not_count(made):
    from ranking.models import RankingTask

    RankingTask.objects.filter(ranker=made.physicians[1]).update(status=RankingTask.Status.LEASED)
    a = _by_key(study_span_labels(made.study))["s1", "SPAN-A"]
    assert a.n_annotators == 1 and a.hard_labels == [[8, 20]]


def test_jsonl_export_has_the_mu_shroom_shape(made):
    lines = rankings_export(study=made.study, fmt="spans-jsonl").decode().splitlines()
    assert len(lines) == 6
    first = json.loads(lines[0])
    answer = made.answers["s1", "SPAN-A"]
    assert first == {
        "id": f"s1/{answer.pk}",
        "lang": "EN",
        "model_input": "Question s1?",
        "model_output_text": "Aspirin cures cancer.",
        "soft_labels": [{"start": 8, "end": 14, "prob": 0.5}, {"start": 14, "end": 20, "prob": 1.0}],
        "hard_labels": [[14, 20]],
        "system": "SPAN-A",
        "is_reference": False,
        "annotations": [
            {
                "annotator": made.physicians[0].pseudonym,
                "spans": [{"start": 8, "end": 20, "kind": "extrinsic", "note": "no such evidence"}],
            },
            {
                "annotator": made.physicians[1].pseudonym,
                "spans": [{"start": 14, "end": 20, "kind": "intrinsic", "note": ""}],
            },
        ],
    }
    assert "阿司匹林" in lines[2]  # not escaped


def test_jsonl_round_trip_scores_one_against_itself(made, tmp_path):
    path = tmp_path / "spans.jsonl"
    path.write_bytes(rankings_export(study=made.study, fmt="spans-jsonl"))
    assert len(read_spans_jsonl(path)) == 6
    summary, rows = span_score_report(str(path), str(path), n_resamples=0)
    assert (summary["iou"], summary["cor"], summary["n"]) == (1.0, 1.0, 6)


def test_identities_and_blinded_systems(made):
    records = [
        json.loads(x) for x in rankings_export(study=made.study, fmt="spans-jsonl", identities=True).splitlines()
    ]
    assert records[0]["annotations"][0]["annotator"] == made.physicians[0].email
    blind = rankings_export(study=made.study, fmt="spans-jsonl", blind_systems=True).decode()
    assert "SPAN-A" not in blind and "is_reference" not in blind
    assert {json.loads(x)["system"] for x in blind.splitlines()} == {"system 1", "system 2"}


def test_csv_has_one_guarded_row_per_span(made):
    from ranking.models import HallucinationSpan

    HallucinationSpan.objects.filter(note="no such evidence").update(note="=HYPERLINK(1)")
    rows = list(csv.DictReader(io.StringIO(rankings_export(study=made.study, fmt="spans-csv").decode())))
    assert len(rows) == 6
    first = rows[0]
    assert (first["item_uid"], first["start"], first["end"], first["marked_text"]) == ("s1", "8", "20", "cures cancer")
    assert first["note"].startswith("'=")
    frame = pd.read_parquet(io.BytesIO(rankings_export(study=made.study, fmt="spans-parquet")))
    assert len(frame) == 6 and list(frame["marked_text"])[3] == "治愈癌症"


def test_offered_only_for_span_studies(made, make_user):
    assert ("spans-jsonl", "hallucination spans (Mu-SHROOM JSONL)") in study_formats(made.study)
    made.study.ask_spans = False
    made.study.save()
    assert not any(fmt.startswith("spans") for fmt, _ in study_formats(made.study))
    with pytest.raises(DomainError, match="did not ask for hallucination spans"):
        rankings_export(study=made.study, fmt="spans-csv")


def test_export_page_is_for_organizers_and_audited(made, client, make_user):
    from portal.models import AuditEntry

    url = reverse("study_export", args=[made.study.pk, "spans-jsonl"])
    client.force_login(made.physicians[0])
    assert client.get(url).status_code in (302, 403)
    client.force_login(make_user("organizer"))
    response = client.get(url)
    assert response.status_code == 200 and b"Aspirin cures cancer." in response.content
    assert AuditEntry.objects.filter(action="rankings_exported").exists()


def test_command_writes_the_jsonl(made, tmp_path):
    out = tmp_path / "out.jsonl"
    call_command("export_rankings", str(made.study.pk), "--format", "spans-jsonl", "--blind-systems", "--out", str(out))
    assert len(out.read_text().splitlines()) == 6


def test_api_blinds_systems_on_request(made, client, make_user):
    client.force_login(make_user("organizer"))
    url = reverse("api_study_export", args=[made.study.pk])
    named = client.get(url, {"fmt": "spans-jsonl"}).content.decode()
    blind = client.get(url, {"fmt": "spans-jsonl", "blind_systems": "true"}).content.decode()
    assert "SPAN-A" in named and "SPAN-A" not in blind and '"system 1"' in blind


def test_the_study_page_offers_span_files_with_systems_pseudonymised(made, client, make_user):
    client.force_login(make_user("organizer"))
    page = client.get(reverse("study_detail", args=[made.study.pk])).content.decode()
    url = reverse("study_export", args=[made.study.pk, "spans-jsonl"]) + "?blind_systems=1"
    assert "Spans with the systems pseudonymised too" in page and f'href="{url}"' in page
    blind = client.get(url).content.decode()
    assert "SPAN-A" not in blind and '"system 1"' in blind
    assert "SPAN-A" in client.get(reverse("study_export", args=[made.study.pk, "spans-jsonl"])).content.decode()
