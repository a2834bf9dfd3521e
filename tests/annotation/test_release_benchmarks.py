"""Releases scoped by benchmark: the freeze form takes one benchmark by default, the preview lists what a rule
takes, the release page and every download say which items an export cannot hold, "in release" counts are right
right after a freeze, and releases frozen before the filter existed still read "all benchmarks"."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from annotation.models import QAItem, Release
from annotation.services.imports import items_import
from annotation.services.release_contents import release_coverage
from annotation.services.release_rules import SelectionRule, rule_description
from annotation.services.releases import release_freeze

ROOT = Path(__file__).resolve().parents[2]
FORM = {"name": "cliniqlink", "min_relevance": 5, "final_verdict": "correct", "exclude_open_issues": "on"}

pytestmark = pytest.mark.django_db


@pytest.fixture
def both_benchmarks():
    """20 verified items: 17 ClinIQLink and 3 PromptCBLUE, all passing the default rule."""
    items_import(paths=[ROOT / "fixtures" / "cliniqlink-sample"])
    items_import(paths=[ROOT / "fixtures" / "promptcblue-sample.jsonl"], fmt="promptcblue")
    keep = list(QAItem.objects.filter(benchmark="cliniqlink").order_by("id").values_list("pk", flat=True)[:17])
    keep += list(QAItem.objects.filter(benchmark="promptcblue").order_by("id").values_list("pk", flat=True)[:3])
    QAItem.objects.filter(pk__in=keep).update(
        status="verified", final_verdict="correct", final_relevance=5.0, final_source="primary"
    )
    return keep


def test_freeze_form_takes_only_the_default_benchmark(both_benchmarks, organizer_client):
    page = organizer_client.get("/releases/")
    assert b'<option value="cliniqlink" selected>ClinIQLink</option>' in page.content
    response = organizer_client.post("/releases/", FORM | {"benchmark": "cliniqlink"})
    assert response.status_code == 302
    release = Release.objects.get(name="cliniqlink")
    assert release.item_count == 17 and release.rule["benchmark"] == "cliniqlink"
    assert set(release.items.values_list("item__benchmark", flat=True)) == {"cliniqlink"}


def test_a_post_without_the_benchmark_field_still_gets_the_default(both_benchmarks, organizer_client):
    organizer_client.post("/releases/", FORM)
    assert Release.objects.get(name="cliniqlink").item_count == 17


def test_all_benchmarks_is_a_choice_and_the_page_and_zip_say_what_the_cliniqlink_export_leaves_out(
    both_benchmarks, organizer_client
):
    organizer_client.post("/releases/", FORM | {"name": "everything", "benchmark": ""})
    release = Release.objects.get(name="everything")
    assert release.item_count == 20 and release.rule["benchmark"] is None
    sentence = (
        "The ClinIQLink export holds 17 of the 20 items; 3 PromptCBLUE items are only in the CSV, Parquet "
        "and JSONL exports"
    )
    page = organizer_client.get(f"/releases/{release.label}/").content.decode()
    assert sentence in page and "all benchmarks" in page
    assert "The CSV export holds all 20 items" in page
    archive = zipfile.ZipFile(
        io.BytesIO(organizer_client.get(f"/releases/{release.label}/download/cliniqlink/").content)
    )
    readme = archive.read("everything-v1-cliniqlink/README.txt").decode()
    assert sentence in readme and "all benchmarks" in readme
    # The seven files hold the 17 ClinIQLink items only, with the release's card: the README is not in the manifest.
    sums = archive.read("everything-v1-cliniqlink/SHA256SUMS").decode()
    assert "README.txt" not in sums and len(sums.splitlines()) == 8 and "CARD.md" in sums


def test_coverage_of_a_one_benchmark_release_is_complete(both_benchmarks):
    release = release_freeze(name="c", rule={"benchmark": "cliniqlink"})
    assert all(c.complete for c in release_coverage(release))
    assert release_coverage(release)[0].sentence() == "The ClinIQLink export holds all 17 items of the release."


def test_old_rules_without_the_benchmark_filter_read_all_benchmarks():
    old_rule = {"statuses": ["verified"], "final_verdict": "correct", "min_relevance": 5.0,
                "exclude_open_issues": True, "qa_types": []}  # fmt: skip
    assert rule_description(old_rule).startswith("all benchmarks;")
    assert SelectionRule.from_dict(old_rule).benchmark is None
    assert rule_description(old_rule | {"benchmark": "promptcblue"}).startswith("benchmark PromptCBLUE only;")


def test_preview_lists_the_matching_items_with_counts_per_type(both_benchmarks, organizer_client):
    page = organizer_client.get("/releases/", {"benchmark": "promptcblue", "min_relevance": 5,
                                               "final_verdict": "correct", "exclude_open_issues": "on"})  # fmt: skip
    html = page.content.decode()
    assert page.status_code == 200 and "This field is required" not in html
    assert "<strong data-preview-count>3</strong>" in html and "3 PromptCBLUE" in html
    assert "<td>Other benchmark</td><td>3</td>" in html
    for uid in QAItem.objects.filter(benchmark="promptcblue", pk__in=both_benchmarks).values_list("uid", flat=True):
        assert uid in html
    default = organizer_client.get("/releases/").content.decode()
    assert "<strong data-preview-count>17</strong>" in default


def test_in_release_counts_are_right_right_after_a_freeze(both_benchmarks, organizer_client):
    before = organizer_client.get("/releases/").content.decode()
    assert 'data-in-release="total">0<' in before
    organizer_client.post("/releases/", FORM | {"benchmark": "cliniqlink"})
    after = organizer_client.get("/releases/").content.decode()
    assert 'data-in-release="total">17<' in after and "In cliniqlink v1" in after
    detail = organizer_client.get("/releases/cliniqlink@1/").content.decode()
    assert 'data-in-release="total">17<' in detail


def test_study_form_offers_releases_by_name(both_benchmarks, organizer_client):
    release = release_freeze(name="bench", rule={"benchmark": "cliniqlink"})
    page = organizer_client.get("/organize/studies/new/").content.decode()
    assert f'<option value="{release.pk}">bench v1 (17 items' in page
