"""In Chromium, at desktop and phone width: the import page names its formats and the other kind of import; an
import's job page tells what happened in a sentence, a failed one shows its error and no progress bar; the
ranker's Guidelines link opens the study's guidelines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from ranking.models import RankingTask

from .layout import assert_page_fits

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "cliniqlink-sample"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 390])
def test_import_page_then_job_page_in_words(page, login, make_user, tmp_path, width):
    page.set_viewport_size({"width": width, "height": 900})
    login(make_user("organizer"))
    page.goto("/organize/import/")
    assert page.locator("select[name=format] option").all_inner_texts() == ["ClinIQLink", "PromptCBLUE"]
    expect(page.locator("#outputs-import-link")).to_be_visible()
    assert "named after its files" in page.inner_text("main")
    assert_page_fits(page, width, "import-page")

    page.set_input_files("input[name=files]", [str(SAMPLE / "TF.json"), str(SAMPLE / "list.json")])
    page.fill("input[name=batch_name]", "Browser batch")
    with page.expect_navigation():
        page.click("button:has-text('Upload and import')")
    summary = page.locator("#job-summary")
    expect(summary).to_be_visible()
    tf, lists = (len(json.loads((SAMPLE / name).read_text())) for name in ("TF.json", "list.json"))
    assert f"{tf + lists} items imported ({tf} true / false and {lists} list)." in summary.inner_text()
    assert "They form the batch “Browser batch”." in summary.inner_text()
    assert page.locator("[role=progressbar]").count() == 0
    assert_page_fits(page, width, "job-imported")

    csv = tmp_path / "items.csv"
    csv.write_text("question,answer\nIs water wet?,True\n")
    page.goto("/organize/import/")
    page.set_input_files("input[name=files]", str(csv))
    with page.expect_navigation():
        page.click("button:has-text('Upload and import')")
    error = page.locator(".error-box")
    expect(error).to_be_visible()
    assert "ClinIQLink items must be a JSON file" in error.inner_text()
    assert page.locator("[role=progressbar]").count() == 0 and "0 / 0" not in page.inner_text("main")
    assert_page_fits(page, width, "job-failed")


@pytest.mark.parametrize("width", [1280, 390])
def test_the_guidelines_link_opens_the_guidelines(page, login, make_user, make_study, width):
    study = make_study(guidelines="Put the answer a physician would trust first.")
    page.set_viewport_size({"width": width, "height": 900})
    ranker = make_user("ranker")
    login(ranker)
    page.goto("/rank/")
    with page.expect_navigation():
        page.click("a:has-text('Guidelines')")
    assert page.url.endswith(f"/rank/studies/{study.pk}/guidelines/")
    expect(page.locator(".guidelines")).to_contain_text("Put the answer a physician would trust first.")
    assert not RankingTask.objects.filter(ranker=ranker).exists()
    assert_page_fits(page, width, "ranker-guidelines")
