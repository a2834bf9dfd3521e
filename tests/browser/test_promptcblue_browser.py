"""PromptCBLUE as a new organizer meets it, in real Chromium at desktop and phone width: the repository's toy
examples imported as items, a system's official predictions file uploaded on the import page, the system scored
from the analytics page, then the leaderboard (each task with its Chinese name, n and interval; the plots, their
task names in Chinese glyphs) and a sample's parse misses beside both parsed structures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analytics.models import PromptCblueScore, ScoringRun
from annotation.services.imports import items_import
from annotation.services.releases import release_freeze
from tests.browser.layout import assert_page_fits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "fixtures" / "promptcblue-reference" / "toy"
WIDTHS = ((1280, 900), (390, 844))


def test_an_organizer_imports_scores_and_reads_promptcblue_in_the_browser(open_page, organizer, tmp_path):
    items_import(paths=[TOY / "gold.jsonl"], fmt="promptcblue")
    release = release_freeze(
        name="PromptCBLUE toy", rule={"statuses": [], "final_verdict": None, "min_relevance": None}
    )
    # the official predictions file, as the PromptCBLUE scripts name it (JSON Lines despite the suffix), with one
    # entity answer written in a format the parser does not read
    records = [json.loads(line) for line in TOY.joinpath("predictions.jsonl").read_text().splitlines() if line]
    gold = {g["sample_id"]: g for g in map(json.loads, TOY.joinpath("gold.jsonl").read_text().splitlines())}
    own = next(r for r in records if gold[r["sample_id"]]["task_dataset"] == "CMeEE-V2")
    own["target"] = gold[own["sample_id"]]["target"].replace("实体：", " = ")
    upload = tmp_path / "test_predictions.json"
    upload.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")

    page = open_page(organizer, viewport={"width": 1280, "height": 900})
    page.goto("/organize/outputs/import/")
    page.fill("input[name=system]", "Toy model")
    page.set_input_files("input[type=file]", str(upload))
    page.click("main button[type=submit]")
    page.wait_for_url("**/jobs/**")
    page.wait_for_selector("[data-status=succeeded]")

    page.goto("/analytics/")
    page.select_option("select[name=system]", label="Toy model")
    page.select_option("select[name=release]", label=str(release))
    page.select_option("select[name=profile]", "promptcblue")
    page.click("form:has(input[value=scoring]) button")
    page.wait_for_url("**/jobs/**")
    page.wait_for_selector("[data-status=succeeded]")
    assert "89 PromptCBLUE samples of “Toy model” scored." in page.inner_text("#job-summary")
    run = ScoringRun.objects.get(profile=ScoringRun.PROMPTCBLUE)

    for width, height in WIDTHS:
        page.set_viewport_size({"width": width, "height": height})
        page.goto("/analytics/promptcblue/")
        main = page.inner_text("main")
        assert "CMeEE-V2 医学实体识别" in main and "Text2DT 诊疗决策树抽取" in main
        assert f"{run.summary['score']:.0f}" in main.replace(",", "")
        row = page.locator("tr", has_text="CMeEE-V2").first.inner_text()
        assert f"n = {run.run_record['tasks']['CMeEE-V2']['n']}" in row and "–" in row  # its interval
        # every resample of a task the system got wholly right is the same: said so, not shown as certainty
        row = page.locator("tr", has_text="CHIP-CTC").first.inner_text()
        assert "not estimable from 5 samples" in row
        assert page.locator("img.plot").count() == 2  # the systems' scores, and the toy model per task
        assert_page_fits(page, width, "promptcblue-leaderboard", plots_fit=True)

    missed = PromptCblueScore.objects.get(run=run, sample_id=own["sample_id"])
    assert missed.n_parse_misses > 0
    for width, height in WIDTHS:
        page.set_viewport_size({"width": width, "height": height})
        page.goto("/analytics/promptcblue/")
        page.locator("tr", has_text="CMeEE-V2").last.locator("a").first.click()  # the parse-miss count
        page.wait_for_url(f"**/runs/{run.pk}/?task=CMeEE-V2&misses=1")
        assert_page_fits(page, width, "promptcblue-run")
        page.click(f"text={own['sample_id']}")
        main = page.inner_text("main")
        assert "Parse misses" in main and "As the official parser reads them" in main
        assert main.count("missed") >= 1  # gold entities the answer did not give in a readable form
        first_miss = missed.parse_misses[0].strip()
        assert page.locator("ul.parse-misses code").first.inner_text().strip() == first_miss
        assert_page_fits(page, width, "promptcblue-sample")
