"""The PromptCBLUE part of the demo: the official toy examples as items, two systems' answers to them, and each
system scored with the official PromptCBLUE evaluation, so that the PromptCBLUE leaderboard, a run's samples and
a sample's parse misses have content.

The two systems: "CBLUE demo model" answers as the recorded reference predictions do (some answers right, some
empty, cut or reordered: fixtures/promptcblue-reference/toy); "Free-form demo model" gives every gold answer, but
writes the entity lists of the two entity-recognition tasks as "类型 = 值" instead of the template's "类型实体：值",
so the official parser reads none of them: right answers that score 0 there, which the parse misses show.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from django.conf import settings

from analytics.models import ScoringRun
from analytics.services.requests import scoring_request
from annotation.services.imports import items_import
from ranking.models import System
from ranking.services.outputs import outputs_import

RECORDED = "CBLUE demo model"
FREE_FORM = "Free-form demo model"
#: The tasks whose answers the free-form model writes in its own format.
OWN_FORMAT_TASKS = ("CMeEE-V2", "IMCS-V2-NER")


def _toy() -> Path:
    return Path(settings.BASE_DIR) / "fixtures" / "promptcblue-reference" / "toy"


def free_form_answers(gold_lines: list[str]) -> list[dict]:
    """Each gold answer as the free-form model writes it: the template's "实体：" becomes " = " in the entity tasks."""
    answers = []
    for line in gold_lines:
        record = json.loads(line)
        target = record["target"]
        if record["task_dataset"] in OWN_FORMAT_TASKS:
            target = target.replace("实体：", " = ")
        answers.append({"sample_id": record["sample_id"], "target": target})
    return answers


def demo_promptcblue(users: dict) -> str:
    if ScoringRun.objects.filter(profile=ScoringRun.PROMPTCBLUE).exists():
        return ""
    toy = _toy()
    gold_lines = [line for line in (toy / "gold.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    imported = items_import(paths=[toy / "gold.jsonl"], fmt="promptcblue", batch_name="Demo: PromptCBLUE toy examples")
    outputs_import(system_name=RECORDED, paths=[toy / "predictions.jsonl"])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "free-form.jsonl"
        path.write_text(
            "".join(json.dumps(answer, ensure_ascii=False) + "\n" for answer in free_form_answers(gold_lines)),
            encoding="utf-8",
        )
        outputs_import(system_name=FREE_FORM, paths=[path])
    scored = []
    for name in (RECORDED, FREE_FORM):
        # Without a broker (make run) the job runs here and now; with one, a worker scores it shortly.
        run = scoring_request(
            system=System.objects.get(name=name), profile=ScoringRun.PROMPTCBLUE, user=users["organizer@demo.portal"]
        )
        run.refresh_from_db()
        scored.append(f"{name} {run.summary['score']:.1f}" if run.finished_at else f"{name} (queued)")
    return (
        f"PromptCBLUE: {imported.created + imported.existing} toy examples, two systems scored with the official "
        f"evaluation ({', '.join(scored)})."
    )
