#!/usr/bin/env python
"""Write fixtures/judges/demo-judge-scores.jsonl: two demo judges' scores of the demo study's answers (run once).

Usage: PORTAL_PGDATA=... python scripts/demo_judge_scores.py   (after ``manage.py load_demo`` in a scratch database)

"demo-judge-careful" scores like a good LLM judge: the exact answers high, the reference answer close behind, the
wrong answers low, with a little seeded noise that never reverses a model pair. "demo-judge-verbose" is length-biased:
it gives one point per 12 tokens of answer (stats.style.answer_style) on a 1–10 scale, whatever the answer says, so it
cannot tell two short answers apart and puts long ones first. The careful judge's scores have one decimal.

For the judge card, the careful judge also gives a probability (its score / 10) and its model family ("Demo A", the
family of Demo model A), and declines ("cannot judge") every seventh of its answers from the fourth; and both judges
give pairwise verdicts on Demo model A against Demo model B in both orders (fixtures/judges/demo-judge-verdicts.jsonl):
the careful judge by its scores, the verbose one by its scores too but choosing the answer shown first when they tie
(a position bias the card shows).
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from demo.activity import STUDY_NAME  # noqa: E402
from demo.judges import JUDGE_SCORES_FILE, JUDGE_VERDICTS_FILE  # noqa: E402
from ranking.models import StudyAnswer  # noqa: E402
from stats.style import answer_style  # noqa: E402

QUALITY = {"Demo model A": 8.5, "reference": 7.5, "Demo model B": 2.5}


def main() -> int:
    rng = random.Random("demo-judges-2025")
    answers = (
        StudyAnswer.objects.filter(question__study__name=STUDY_NAME)
        .select_related("question__item", "system")
        .order_by("question__position", "system__name")
    )
    lines = []
    for answer in answers:
        system = "reference" if answer.system.is_reference else answer.system.name
        base = {"item_uid": answer.question.item.uid, "system": answer.system.name}
        careful = QUALITY.get(system, 5.0) + rng.uniform(-0.9, 0.9)
        tokens = answer_style(answer.text)["length"]
        verbose = min(10, 1 + tokens // 12)
        lines.append({**base, "score": round(min(max(careful, 1.0), 10.0), 1), "judge": "demo-judge-careful"})
        lines.append({**base, "score": verbose, "judge": "demo-judge-verbose"})
    verdicts = pairwise_verdicts(lines)
    path = ROOT / "fixtures" / JUDGE_SCORES_FILE
    path.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in card_fields(lines)), encoding="utf-8"
    )
    print(f"{path}: {len(lines)} scores of {len(lines) // 2} answers")
    path = ROOT / "fixtures" / JUDGE_VERDICTS_FILE
    path.write_text("".join(json.dumps(line) + "\n" for line in verdicts), encoding="utf-8")
    print(f"{path}: {len(verdicts)} verdicts")
    return 0


def card_fields(lines: list[dict]) -> list[dict]:
    """The careful judge's probability and family, and its declines (module docstring)."""
    out, careful = [], 0
    for line in lines:
        if line["judge"] == "demo-judge-careful":
            line = {**line, "probability": round(line["score"] / 10, 2), "judge_family": "Demo A"}
            if careful % 7 == 3:
                line = {key: value for key, value in line.items() if key not in ("score", "probability")}
                line["label"] = "cannot judge"
            careful += 1
        out.append(line)
    return out


def pairwise_verdicts(lines: list[dict]) -> list[dict]:
    """Each judge's verdict on Demo model A against Demo model B, in both orders, per question (module docstring)."""
    score = {(line["judge"], line["item_uid"], line["system"]): line["score"] for line in lines}
    items = list(dict.fromkeys(line["item_uid"] for line in lines))
    verdicts = []
    for judge in ("demo-judge-careful", "demo-judge-verbose"):
        for item in items:
            for first, second in (("Demo model A", "Demo model B"), ("Demo model B", "Demo model A")):
                a, b = score[judge, item, first], score[judge, item, second]
                if a == b:
                    verdict = "first" if judge == "demo-judge-verbose" else "tie"
                else:
                    verdict = "first" if a > b else "second"
                verdicts.append(
                    {"item_uid": item, "judge": judge, "first": first, "second": second, "verdict": verdict}
                )
    return verdicts


if __name__ == "__main__":
    raise SystemExit(main())
