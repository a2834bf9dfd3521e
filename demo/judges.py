"""The demo's automatic judges: two judges' per-answer scores of the demo study and their pairwise verdicts, imported
through the services a lab's files go through (:func:`analytics.judges.scores.judge_scores_import`,
:func:`analytics.judges.verdicts.judge_verdicts_import`)."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings

from analytics.judges.scores import judge_scores_import
from analytics.judges.verdicts import judge_verdicts_import
from analytics.models import JudgeScore
from ranking.models import RankingTask, Study, StudyAnswer

JUDGE_SCORES_FILE = "judges/demo-judge-scores.jsonl"
JUDGE_VERDICTS_FILE = "judges/demo-judge-verdicts.jsonl"


def demo_judge_scores(users: dict, study_name: str) -> str:
    """Two judges' scores of the demo study's answers imported (made once from the demo answers by
    ``scripts/demo_judge_scores.py``): "demo-judge-careful" tracks the physicians' preference, "demo-judge-verbose"
    scores mostly by length, so the study report shows a cluster split and the style table a length effect.
    Skipped without rankings, and once the study has judge scores."""
    study = Study.objects.filter(name=study_name).first()
    if study is None or not RankingTask.objects.filter(study=study).exists():
        return ""
    if JudgeScore.objects.filter(answer__question__study=study).exists():
        return ""
    answers = set(StudyAnswer.objects.filter(question__study=study).values_list("question__item__uid", "system__name"))
    # Only the lines for this study's answers (the files cover every demo answer): the imports themselves refuse a
    # file with anything else, as they should for a lab's file.
    lines = [
        line
        for line in _lines(JUDGE_SCORES_FILE)
        if (json.loads(line)["item_uid"], json.loads(line)["system"]) in answers
    ]
    if not lines:
        return ""
    organizer = users["organizer@demo.portal"]
    result = judge_scores_import(study=study, source="\n".join(lines).encode(), name=JUDGE_SCORES_FILE, user=organizer)
    verdicts = [
        line
        for line in _lines(JUDGE_VERDICTS_FILE)
        if {(json.loads(line)["item_uid"], json.loads(line)[side]) for side in ("first", "second")} <= answers
    ]
    judged = judge_verdicts_import(
        study=study, source="\n".join(verdicts).encode(), name=JUDGE_VERDICTS_FILE, user=organizer
    )
    return f"Judges' scores imported into “{study.name}”: {result.summary}; pairwise verdicts: {judged.summary}."


def _lines(name: str) -> list[str]:
    return [
        line
        for line in (Path(settings.BASE_DIR) / "fixtures" / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
