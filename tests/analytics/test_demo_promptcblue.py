"""The demo's PromptCBLUE systems: each scored with the official evaluation, the recorded one exactly as the official
scripts scored the same answers, the free-form one right everywhere but in the two entity tasks, whose answers the
parser cannot read (the parse misses the pages show)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from analytics.models import PromptCblueScore, ScoringRun
from demo.promptcblue import FREE_FORM, OWN_FORMAT_TASKS, RECORDED

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "fixtures" / "promptcblue-reference"

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", verbosity=0)
    found = {run.system.name: run for run in ScoringRun.objects.filter(profile=ScoringRun.PROMPTCBLUE)}
    assert set(found) == {RECORDED, FREE_FORM} and all(run.finished_at for run in found.values())
    return found


def test_the_recorded_demo_system_scores_as_the_official_scripts(runs):
    official = json.loads((TOY / "toy" / "official.json").read_text())
    assert runs[RECORDED].summary["score"] == pytest.approx(official["score"], abs=1e-6)
    assert runs[RECORDED].run_record["official_overall"] is True


def test_the_free_form_demo_system_loses_exactly_the_tasks_it_writes_in_its_own_format(runs):
    # the gold as its own answer scores what the official scripts gave the toy set scored against itself
    self_scored = json.loads((TOY / "toy-self" / "official.json").read_text())["scoreJson"]
    figures = runs[FREE_FORM].summary["scoreJson"]
    for key, value in self_scored.items():
        if key == "score":
            continue
        if any(key.startswith(name + "-") for name in OWN_FORMAT_TASKS):
            assert figures[key] == 0.0, key
        else:
            assert figures[key] == pytest.approx(value, abs=1e-6), key
    gold = [json.loads(line) for line in (TOY / "toy" / "gold.jsonl").read_text().splitlines() if line.strip()]
    for name in OWN_FORMAT_TASKS:
        # every entity line (after the header) the template would have read is now a parse miss
        entity_lines = [
            [line for line in g["target"].splitlines()[1:] if "实体：" in line]
            for g in gold
            if g["task_dataset"] == name
        ]
        stored = runs[FREE_FORM].run_record["tasks"][name]
        assert stored["parse_misses"] == sum(len(lines) for lines in entity_lines) > 0
        assert stored["samples_with_misses"] == sum(1 for lines in entity_lines if lines)
        missed = PromptCblueScore.objects.filter(run=runs[FREE_FORM], task=name, n_parse_misses__gt=0)
        assert missed.count() == stored["samples_with_misses"]
