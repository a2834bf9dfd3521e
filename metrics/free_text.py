"""Text metrics for items of other benchmarks (PromptCBLUE): reference vs response, no ClinIQLink semantic score.

The ClinIQLink metric is defined per ClinIQLink QA type (docs/metric.md), so a PromptCBLUE answer gets only BLEU /
ROUGE (/ METEOR for English text) against its ``target``. The language is read from the text: a pair with a
Chinese character on either side is scored by characters (:mod:`.text_metrics`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .normalise import clean_response
from .text_metrics import METEOR_NOT_FOR_CHINESE, TextMetrics, has_cjk, shared_text_metrics


@dataclass
class FreeTextScore:
    rows: list[dict[str, Any]]  # per pair: index, language, bleu, rouge, meteor
    summary: dict[str, Any]  # answers, bleu, rouge, meteor (means over the pairs that have the metric), notes


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def score_free_text(pairs: Sequence[tuple[str, str]], *, text_metrics: TextMetrics | None = None) -> FreeTextScore:
    """Score ``(reference, response)`` pairs; a response of ``None`` (no answer) scores 0 on every metric.

    Responses are cleaned as the ClinIQLink scorer cleans them (``<think>…</think>`` blocks removed, stripped)."""
    metrics = text_metrics or shared_text_metrics()
    rows = []
    for index, (reference, response) in enumerate(pairs):
        response = clean_response(response or "")
        language = "zh" if has_cjk(reference) or has_cjk(response) else "en"
        rows.append({"index": index, "language": language, **metrics.score(reference, response, language=language)})
    notes = []
    if any(r["language"] == "zh" for r in rows):
        notes.append(f"Chinese answers: BLEU and ROUGE by characters; {METEOR_NOT_FOR_CHINESE}.")
    notes += [f"{name}: {reason}" for name, reason in metrics.reasons.items()]
    summary = {
        "answers": len(rows),
        "chinese_answers": sum(r["language"] == "zh" for r in rows),
        **{name: _mean([r[name] for r in rows]) for name in ("bleu", "rouge", "meteor")},
        "notes": notes,
    }
    return FreeTextScore(rows=rows, summary=summary)
